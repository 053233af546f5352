//! The watchdog: a tiny `/bin/sh` process that ends every stdio server's tree when this process
//! dies in a way no code of ours sees — SIGKILL, a SIGTERM or SIGINT it has no handler for, a
//! crash.
//!
//! Started on the first registration, it holds one end of a socket pair whose other end only
//! this process holds (close-on-exec, so no server inherits it). It reads `+ <pgid>` / `- <pgid>`
//! lines while servers come and go; end of file means this process is gone, whatever ended it.
//! Then it kills the process groups still registered and, where there is a /proc, every process
//! whose environment carries this process's token ([`super::host_token`]) — so `setsid`
//! grandchildren and double-forked daemons too.
//!
//! Why a shell rather than a fork of this process: after fork() a multithreaded process may only
//! run async-signal-safe code until it execs, and a fork that never execs would keep a
//! copy-on-write image of the whole Node heap alive. `sh` is tiny and on every Unix; it ignores
//! the terminal's and a process group's signals, runs in its own group, and is re-parented away
//! from this process (it is started in the background by a shell that exits at once) so that it
//! never appears as — or is killed as — one of this process's children.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// `$1`: this process's token; `$2`: its pid (for `ps`). Kept to POSIX sh, `kill` and `grep`.
const SCRIPT: &str = r#"
trap '' HUP INT QUIT TERM PIPE TSTP TTIN TTOU
token=$1
# A background list's stdin is /dev/null unless redirected from another descriptor.
exec 3<&0
{
  groups=' '
  while read -r op id; do
    case $id in ''|*[!0-9]*) continue ;; esac
    case $op in
      +) groups="$groups$id " ;;
      -) case $groups in *" $id "*) groups="${groups%% $id *} ${groups#* $id }" ;; esac ;;
    esac
  done
  for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
  if [ -r /proc/self/environ ]; then
    n=0
    while [ "$n" -lt 20 ]; do
      found=$(grep -l -F -e "$token." /proc/[0-9]*/environ 2>/dev/null)
      [ -n "$found" ] || break
      for f in $found; do f=${f#/proc/}; kill -s KILL -- "${f%/environ}" 2>/dev/null; done
      n=$((n + 1))
    done
  fi
} <&3 3<&- >/dev/null 2>&1 &
"#;

struct State {
    link: Option<UnixStream>,
    /// Groups registered now, replayed to a restarted watchdog.
    watched: BTreeSet<i32>,
    /// Set when the watchdog cannot be started (no /bin/sh): not retried for every server.
    unavailable: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    link: None,
    watched: BTreeSet::new(),
    unavailable: false,
});

/// Tells the watchdog about a new server's process group (starting the watchdog if need be).
pub(crate) fn watch(pgid: i32) {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if state.watched.insert(pgid) {
        tell(&mut state, &format!("+ {pgid}\n"));
    }
}

/// Tells the watchdog a server's group is gone.
pub(crate) fn forget(pgid: i32) {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if state.watched.remove(&pgid) {
        tell(&mut state, &format!("- {pgid}\n"));
    }
}

fn tell(state: &mut State, line: &str) {
    if let Some(link) = state.link.as_mut() {
        match link.write(line.as_bytes()) {
            Ok(n) if n == line.len() => return,
            // The watchdog is not reading (stopped?): drop the line rather than block. Its
            // marker sweep does not depend on the group list.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            // Gone (killed by someone) or a short write: start a fresh one below.
            _ => state.link = None,
        }
    }
    // Nothing to watch: no need for a watchdog until the next server.
    if state.unavailable || state.watched.is_empty() {
        return;
    }
    match start() {
        Ok(mut link) => {
            let replay: String = state.watched.iter().map(|g| format!("+ {g}\n")).collect();
            if link.write_all(replay.as_bytes()).is_ok() {
                state.link = Some(link);
            }
        }
        Err(_) => state.unavailable = true,
    }
}

fn start() -> std::io::Result<UnixStream> {
    let (ours, theirs) = UnixStream::pair()?;
    let path = match std::env::var("PATH") {
        Ok(path) if !path.is_empty() => format!("{path}:/usr/bin:/bin"),
        _ => "/usr/bin:/bin".to_string(),
    };
    // The outer shell puts the watchdog in the background and exits: waiting for it is brief.
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(SCRIPT)
        .arg("toolnexus-watchdog")
        .arg(super::marker::host_token())
        .arg(std::process::id().to_string())
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_clear()
        .env("PATH", path)
        .env("LC_ALL", "C")
        .current_dir("/")
        .process_group(0)
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other("the watchdog shell failed"));
    }
    ours.set_nonblocking(true)?;
    Ok(ours)
}
