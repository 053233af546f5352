//! Stdio children: spawned as process-group leaders, stderr always drained into a bounded tail,
//! and the whole group killed on teardown so `npx`-style grandchildren die too.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::reaper;

/// How much of a child's stderr is kept for failure reasons.
const STDERR_TAIL_BYTES: usize = 4096;
/// How much of that tail is quoted in a failure reason.
const STDERR_QUOTE_CHARS: usize = 1200;
/// How long a child gets to exit on its own after end of input, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_millis(100);

pub struct StdioProcess {
    child: Child,
    pgid: i32,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
}

/// Starts `command` with the given environment overrides. The error is a short human reason.
pub fn spawn(
    command: &[String],
    environment: &[(String, String)],
    cwd: Option<&str>,
) -> Result<(StdioProcess, ChildStdout, ChildStdin), String> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| "command is empty".to_string())?;
    if let Some(dir) = cwd
        && !std::path::Path::new(dir).is_dir()
    {
        return Err(format!("working directory {dir:?} does not exist"));
    }
    let mut cmd = command_for(program, args);
    cmd.envs(environment.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so the whole tree can be ended at once.
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    cmd.creation_flags(0x0000_0200); // CREATE_NEW_PROCESS_GROUP
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; it only asks the kernel to kill the child if the
    // spawning thread dies (a runtime worker thread, which lives as long as the process).
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let pgid = child.id().map(|id| id as i32).unwrap_or(0);
    reaper::register(pgid);
    let stdout = child.stdout.take().expect("piped stdout");
    let stdin = child.stdin.take().expect("piped stdin");
    let stderr = child.stderr.take().expect("piped stderr");
    let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
    let tail = stderr_tail.clone();
    let stderr_done = tokio::spawn(async move {
        let mut stderr = stderr;
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
            tail.extend(&buf[..n]);
            let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
            tail.drain(..excess);
        }
    });
    Ok((
        StdioProcess {
            child,
            pgid,
            stderr_tail,
            stderr_done: Some(stderr_done),
        },
        stdout,
        stdin,
    ))
}

/// The command to run. On Windows, `npx`, `uvx` and the like are `.cmd` scripts that
/// CreateProcess cannot start by name, so anything that is not an `.exe` runs through `cmd /c`,
/// as other MCP clients do.
fn command_for(program: &str, args: &[String]) -> Command {
    #[cfg(windows)]
    if !program.to_ascii_lowercase().ends_with(".exe") {
        let mut cmd = Command::new("cmd");
        cmd.args(["/d", "/s", "/c", program]).args(args);
        return cmd;
    }
    let mut cmd = Command::new(program);
    cmd.args(args);
    cmd
}

impl StdioProcess {
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// "exited (code 3)" once the child has exited (waiting at most `wait`), else None.
    pub async fn exit_description(&mut self, wait: Duration) -> Option<String> {
        let status = tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()?;
        // stderr reaches EOF when the child (and anything sharing the pipe) is gone; once the
        // drain has finished its handle is spent, so it is awaited at most once.
        if let Some(done) = self.stderr_done.as_mut()
            && tokio::time::timeout(Duration::from_millis(50), done)
                .await
                .is_ok()
        {
            self.stderr_done = None;
        }
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal: Option<i32> = None;
        Some(match (status.code(), signal) {
            (Some(code), _) => format!("exited (code {code})"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            _ => "exited".to_string(),
        })
    }

    /// The last part of what the child wrote to stderr, trimmed, or "" if nothing.
    pub fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let count = text.chars().count();
        if count > STDERR_QUOTE_CHARS {
            let skip = count - STDERR_QUOTE_CHARS;
            format!("…{}", text.chars().skip(skip).collect::<String>())
        } else {
            text.to_string()
        }
    }

    /// Ends the child and its whole process group. With `graceful`, the child (whose stdin the
    /// caller has already closed) first gets a short grace to exit, then SIGTERM; in every case
    /// the group is SIGKILLed at the end so no grandchild survives, and the leader is reaped.
    pub async fn shutdown(mut self, graceful: bool) {
        if graceful
            && tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .is_err()
        {
            reaper::signal_group(self.pgid, reaper::Signal::Term);
            let _ = tokio::time::timeout(EXIT_GRACE, self.child.wait()).await;
        }
        reaper::signal_group(self.pgid, reaper::Signal::Kill);
        let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        // Grandchildren are not ours to reap; wait until the kernel has finished them off.
        let give_up = tokio::time::Instant::now() + Duration::from_secs(2);
        while reaper::group_has_live_members(self.pgid) && tokio::time::Instant::now() < give_up {
            reaper::signal_group(self.pgid, reaper::Signal::Kill);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        reaper::unregister(self.pgid);
        self.pgid = 0;
    }
}

impl Drop for StdioProcess {
    /// A teardown that never ran (a dropped future) still leaves nothing behind.
    fn drop(&mut self) {
        if self.pgid > 0 {
            reaper::signal_group(self.pgid, reaper::Signal::Kill);
            reaper::unregister(self.pgid);
        }
        if let Some(done) = self.stderr_done.take() {
            done.abort();
        }
    }
}
