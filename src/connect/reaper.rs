//! Process groups of live stdio children, so that nothing outlives the Node process.
//!
//! Every stdio child is started as the leader of its own process group; the group id is recorded
//! here, with the JavaScript environment that asked for it, until its teardown finished. When an
//! environment goes away (Node exiting without close(), or a worker thread ending) its cleanup
//! hook kills that environment's groups; an `atexit` handler kills every group on
//! `process.exit()`.

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// Live process groups and the environment that owns each.
static GROUPS: Mutex<Option<HashMap<i32, u64>>> = Mutex::new(None);
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

tokio::task_local! {
    static OWNER: u64;
}

thread_local! {
    /// The owner id of the JavaScript environment running on this thread (main or worker).
    static THREAD_OWNER: Cell<u64> = const { Cell::new(0) };
}

/// Gives the JavaScript environment on this thread its owner id (at module init).
pub fn adopt_thread() -> u64 {
    let id = NEXT_OWNER.fetch_add(1, Ordering::Relaxed);
    THREAD_OWNER.with(|owner| owner.set(id));
    id
}

/// The owner id of the environment on this (JavaScript) thread.
pub fn thread_owner() -> u64 {
    THREAD_OWNER.with(Cell::get)
}

/// Runs `work` so that the children it spawns belong to `owner`.
pub fn owned<F: Future>(owner: u64, work: F) -> impl Future<Output = F::Output> {
    OWNER.scope(owner, work)
}

/// The owner of the task running now (0 outside any owned work).
pub fn current_owner() -> u64 {
    OWNER.try_with(|owner| *owner).unwrap_or(0)
}

pub fn register(pgid: i32) {
    install_atexit();
    GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(pgid, current_owner());
}

pub fn unregister(pgid: i32) {
    if let Some(groups) = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        groups.remove(&pgid);
    }
}

/// How firmly to end a group.
#[derive(Clone, Copy)]
pub enum Signal {
    /// Ask it to exit (SIGTERM).
    Term,
    /// End it now (SIGKILL).
    Kill,
}

/// Sends `signal` to every process in the group. Errors (the group is already gone) are ignored.
#[cfg(unix)]
pub fn signal_group(pgid: i32, signal: Signal) {
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid addresses a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Windows has no process groups to signal: the child's whole tree is ended with taskkill
/// (console programs have no SIGTERM to honour either, so both signals end it).
#[cfg(windows)]
pub fn signal_group(pid: i32, _signal: Signal) {
    if pid > 0 {
        let _ = std::process::Command::new("taskkill")
            .args(["/T", "/F", "/PID", &pid.to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[cfg(not(unix))]
pub fn group_has_live_members(_pgid: i32) -> bool {
    false
}

/// Whether any process of the group is still alive (zombies waiting for their reaper don't
/// count: they run nothing and hold nothing). Without /proc (macOS), existence is enough.
#[cfg(unix)]
pub fn group_has_live_members(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if pgid <= 1 || unsafe { libc::kill(-pgid, 0) } != 0 {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().take(3).collect();
        fields.len() == 3 && fields[0] != "Z" && fields[2] == pgid.to_string()
    })
}

/// Kills the groups of one environment (`Some`) or of all (`None`).
fn kill(owner: Option<u64>) {
    let groups: Vec<i32> = GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .map(|groups| {
            let doomed: Vec<i32> = groups
                .iter()
                .filter(|(_, o)| owner.is_none_or(|owner| **o == owner))
                .map(|(pgid, _)| *pgid)
                .collect();
            for pgid in &doomed {
                groups.remove(pgid);
            }
            doomed
        })
        .unwrap_or_default();
    for pgid in groups {
        signal_group(pgid, Signal::Kill);
    }
}

/// Kills every group started for `owner`. Called when that environment goes away.
pub fn kill_owned(owner: u64) {
    kill(Some(owner));
}

extern "C" fn kill_all_at_exit() {
    kill(None);
}

fn install_atexit() {
    static ONCE: Once = Once::new();
    #[cfg(unix)]
    ONCE.call_once(|| {
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(kill_all_at_exit);
        }
    });
}
