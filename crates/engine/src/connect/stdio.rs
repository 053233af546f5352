//! Stdio children: spawned as process-group leaders (on Windows, in a kill-on-close job object)
//! that carry their tree's marker, stderr always drained into a bounded tail, stdout read through
//! [`framing`], stdin written through the one [`writer`], tool calls sent as [`direct`] requests
//! beside rmcp, and the whole tree — `npx` grandchildren, `setsid` ones, double-forked daemons —
//! ended on teardown.

pub(crate) mod direct;
pub(crate) mod framing;
#[cfg(unix)]
pub mod handoff;
mod pending;
pub(crate) mod screen;
pub(crate) mod writer;

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout, Command};

use super::error::{ConnectError, Exit};
use super::reaper::{self, Tree};
use crate::bounds::{
    EXIT_GRACE, REAP_BOUND, STDERR_DRAIN_WAIT, STDERR_QUOTE_CHARS, STDERR_TAIL_BYTES,
};
pub(crate) use framing::LineTransport;
use framing::StdoutReport;

/// The one handle a stdio connection keeps to its transport's fast path, taken from the
/// [`LineTransport`] before rmcp's service gets the transport (the service never reaches into
/// it): the direct requests (the transport's pending table and writer; calls and listings take
/// them in the handshake era, see [`crate::connect::road::Road::of`]), and (on Unix) the
/// way to ask for its stdout ([`handoff`]). A `LiveServer` holds this one handle beside its peer.
#[derive(Clone)]
pub(crate) struct Fast {
    pub(crate) direct: direct::Direct,
    #[cfg(unix)]
    pub(crate) stdout: Arc<handoff::Handoff>,
}

impl Fast {
    pub(crate) fn of<R>(transport: &LineTransport<R>) -> Self
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        Self {
            direct: transport.direct(),
            #[cfg(unix)]
            stdout: transport.handoff(),
        }
    }
}

pub(crate) struct StdioProcess {
    child: Box<dyn ChildWrapper>,
    tree: Tree,
    /// Until teardown has ended the tree (then dropping has nothing left to do).
    live: bool,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    stdout: Arc<StdoutReport>,
}

/// Starts `command` with the given environment overrides. The error says why in words.
pub(crate) fn spawn(
    command: &[String],
    environment: &[(String, String)],
    cwd: Option<&str>,
) -> Result<(StdioProcess, ChildStdout, ChildStdin), ConnectError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| ConnectError::Start("command is empty".to_string()))?;
    if let Some(dir) = cwd
        && !std::path::Path::new(dir).is_dir()
    {
        return Err(ConnectError::Start(format!(
            "working directory {} does not exist",
            crate::config::quote::quote(dir, crate::config::quote::QUOTE_CHARS)
        )));
    }
    let marker = reaper::new_marker();
    let mut cmd = command_for(program, args, environment, cwd);
    cmd.envs(environment.iter().map(|(k, v)| (k, v)))
        .env(reaper::MARKER_VAR, reaper::marker_value(&marker))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    let mut cmd = CommandWrap::from(cmd);
    // Its own process group, so the group can be signalled at once.
    #[cfg(unix)]
    cmd.wrap(process_wrap::tokio::ProcessGroup::leader());
    // A job object that kills every process in it when its last handle closes: at teardown, or
    // when this process dies however it dies. A new process group keeps Ctrl-C in the console
    // from reaching the server before Node has decided what to do about it.
    #[cfg(windows)]
    cmd.wrap(process_wrap::tokio::CreationFlags(
        windows::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP,
    ))
    .wrap(process_wrap::tokio::JobObject);
    cmd.wrap(KillOnDrop);
    let mut child = cmd.spawn().map_err(|e| {
        let program = crate::config::quote::quote(program, crate::config::quote::QUOTE_CHARS);
        ConnectError::Start(format!("cannot start {program}: {e}"))
    })?;
    let leader = child.id().map(|id| id as i32).unwrap_or(0);
    #[cfg(unix)]
    let started = reaper::tree::start_time(leader);
    #[cfg(not(unix))]
    let started = 0;
    let tree = Tree {
        leader,
        marker,
        started,
    };
    reaper::register(tree.clone());
    let stdout = child.stdout().take().expect("piped stdout");
    let stdin = child.stdin().take().expect("piped stdin");
    let stderr = child.stderr().take().expect("piped stderr");
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
            tree,
            live: true,
            stderr_tail,
            stderr_done: Some(stderr_done),
            stdout: Arc::new(StdoutReport::default()),
        },
        stdout,
        stdin,
    ))
}

/// The command to run. On Windows, `npx`, `uvx` and the like are `.cmd` scripts that
/// CreateProcess cannot start by name: the program is found as Windows MCP clients find it, on
/// the PATH the server gets (its own `env` first) with each PATHEXT extension, relative to its
/// `cwd`. A `.cmd` or `.bat` found so is started by its path, through which the standard library
/// runs it with `cmd.exe`, escaping the arguments for it (and refusing arguments it cannot
/// escape safely). Found nowhere: started by name, so the error says it was not found.
#[cfg_attr(not(windows), allow(unused_variables))]
fn command_for(
    program: &str,
    args: &[String],
    environment: &[(String, String)],
    cwd: Option<&str>,
) -> Command {
    #[cfg(windows)]
    {
        let path = environment
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case("PATH"))
            .map(|(_, v)| std::ffi::OsString::from(v))
            .or_else(|| std::env::var_os("PATH"));
        let dir = match cwd {
            Some(dir) => Some(std::path::PathBuf::from(dir)),
            None => std::env::current_dir().ok(),
        };
        if let Some(dir) = dir
            && let Ok(found) = which::which_in(program, path, dir)
        {
            let mut cmd = Command::new(found);
            cmd.args(args);
            return cmd;
        }
    }
    let mut cmd = Command::new(program);
    cmd.args(args);
    cmd
}

impl StdioProcess {
    /// The rmcp transport over this server's pipes; what it finds wrong is reported here. On
    /// Unix, writes to stdin are tried in place on its (non-blocking) pipe first.
    pub(crate) fn transport(
        &self,
        stdout: ChildStdout,
        stdin: ChildStdin,
    ) -> LineTransport<ChildStdout> {
        #[cfg(unix)]
        let writer = {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&stdin);
            writer::StdinWriter::new(stdin, Some(fd))
        };
        #[cfg(not(unix))]
        let writer = writer::StdinWriter::new(stdin);
        let transport = LineTransport::with_writer(stdout, writer, self.stdout.clone());
        #[cfg(unix)]
        let transport = transport.handing_off(ChildStdout::into_owned_fd);
        transport
    }

    /// "sent an invalid message: …" once the server broke the stdio framing.
    pub(crate) fn protocol_violation(&self) -> Option<String> {
        self.stdout.violation()
    }

    /// The broken framing as a failure, once the server broke it.
    pub(crate) fn violation(&self) -> Option<ConnectError> {
        self.stdout.detail().map(ConnectError::Violation)
    }

    /// What the server printed to stdout that was not a message (quoted, bounded), or "".
    pub(crate) fn stdout_noise(&self) -> String {
        self.stdout.noise()
    }

    /// How the child exited, once it has (waiting at most `wait`), else None.
    pub(crate) async fn exit(&mut self, wait: Duration) -> Option<Exit> {
        // A server that broke the protocol is most likely still running: that is the reason,
        // so don't wait for an exit that won't come.
        let wait = if self.stdout.violation().is_some() {
            Duration::ZERO
        } else {
            wait
        };
        let status = tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()?;
        // stderr reaches EOF when the child (and anything sharing the pipe) is gone; once the
        // drain has finished its handle is spent, so it is awaited at most once.
        if let Some(done) = self.stderr_done.as_mut()
            && tokio::time::timeout(STDERR_DRAIN_WAIT, done).await.is_ok()
        {
            self.stderr_done = None;
        }
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal: Option<i32> = None;
        Some(match (status.code(), signal) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(sig)) => Exit::Signal(sig),
            _ => Exit::Unknown,
        })
    }

    /// The last part of what the child wrote to stderr, trimmed, or "" if nothing.
    pub(crate) fn stderr_tail(&self) -> String {
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

    /// Ends the child and its whole tree. With `graceful`, the child (whose stdin the caller has
    /// already closed) first gets a short grace to exit, then SIGTERM; in every case the tree is
    /// SIGKILLed at the end so no descendant survives, and the server is reaped.
    pub(crate) async fn shutdown(mut self, graceful: bool) {
        if graceful
            && tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .is_err()
        {
            #[cfg(unix)]
            reaper::tree::signal(&[&self.tree], libc::SIGTERM);
            let _ = tokio::time::timeout(EXIT_GRACE, self.child.wait()).await;
        }
        self.end_tree().await;
        reaper::unregister(self.tree.leader);
        self.live = false;
    }

    #[cfg(unix)]
    async fn end_tree(&mut self) {
        reaper::tree::signal(&[&self.tree], libc::SIGKILL);
        let _ = tokio::time::timeout(REAP_BOUND, self.child.wait()).await;
        // Descendants are not ours to reap; wait until the kernel has finished them off, and
        // end what was forked meanwhile.
        reaper::tree::end(&self.tree).await;
    }

    /// Terminating the job object ends every process in it, descendants of descendants too.
    #[cfg(windows)]
    async fn end_tree(&mut self) {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(REAP_BOUND, self.child.wait()).await;
    }
}

impl Drop for StdioProcess {
    /// A teardown that never ran (a dropped future) still leaves nothing behind.
    fn drop(&mut self) {
        if self.live {
            #[cfg(unix)]
            reaper::tree::signal(&[&self.tree], libc::SIGKILL);
            #[cfg(windows)]
            let _ = self.child.start_kill();
            reaper::unregister(self.tree.leader);
        }
        if let Some(done) = self.stderr_done.take() {
            done.abort();
        }
    }
}
