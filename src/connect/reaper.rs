//! Process groups of live stdio children, so that nothing outlives the Node process.
//!
//! Every stdio child is started as the leader of its own process group; the group id is recorded
//! here until its teardown finished. The napi environment cleanup hook (and an `atexit` handler
//! for `process.exit()`) kills every group still recorded.

use std::collections::HashSet;
use std::sync::{Mutex, Once};

static GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

pub fn register(pgid: i32) {
    install_atexit();
    GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(pgid);
}

pub fn unregister(pgid: i32) {
    if let Some(set) = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        set.remove(&pgid);
    }
}

/// Sends `signal` to every process in the group. Errors (the group is already gone) are ignored.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid addresses a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether any process of the group is still alive (zombies waiting for their reaper don't
/// count: they run nothing and hold nothing).
pub fn group_has_live_members(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if pgid <= 1 || unsafe { libc::kill(-pgid, 0) } != 0 {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
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

/// Kills every recorded group. Called when the JavaScript environment goes away.
pub fn kill_all() {
    let groups: Vec<i32> = GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .map(|set| set.drain().collect())
        .unwrap_or_default();
    for pgid in groups {
        signal_group(pgid, libc::SIGKILL);
    }
}

extern "C" fn kill_all_at_exit() {
    kill_all();
}

fn install_atexit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(kill_all_at_exit);
        }
    });
}
