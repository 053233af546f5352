//! A stdio server's whole process tree: finding every process that belongs to it, and ending them.
//!
//! Parent links alone do not find them all: a grandchild that calls `setsid` leaves the server's
//! process group, and a double-forked daemon is re-parented to init as soon as its intermediate
//! parent exits. So on Linux a server's tree is, among the processes started no earlier than the
//! server itself:
//! - its process group (the server is the group leader, so the id is its pid);
//! - every process whose environment carries the server's marker ([`MARKER_VAR`]), which is
//!   inherited through every fork, exec, `setsid` and re-parenting — only a process that scrubs
//!   its own environment loses it;
//! - and, repeatedly, the children of those and the members of groups and sessions they lead.
//!
//! Elsewhere on Unix (no /proc) the tree is the process group.

use super::marker::Tree;

/// How long [`end`] keeps killing before it gives up on processes that will not die (stopped in
/// uninterruptible sleep, say).
use crate::bounds::TREE_END_BOUND as END_BOUND;

/// Sends `signal` to every live process of each tree, found in one look at the process table.
pub(crate) fn signal(trees: &[&Tree], signal: libc::c_int) {
    for pid in members(trees) {
        // SAFETY: kill(2) on one pid (a negative one: a process group); no memory is touched.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Kills every process of `tree` and returns once none is left alive, re-scanning for processes
/// forked while it was being ended. Bounded by [`END_BOUND`].
pub(crate) async fn end(tree: &Tree) {
    let give_up = tokio::time::Instant::now() + END_BOUND;
    loop {
        let left = members(&[tree]);
        if left.is_empty() || tokio::time::Instant::now() >= give_up {
            return;
        }
        for pid in &left {
            // SAFETY: kill(2) on one pid; no memory is touched.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        while left.iter().any(|pid| is_alive(*pid)) && tokio::time::Instant::now() < give_up {
            tokio::time::sleep(crate::bounds::TREE_POLL_INTERVAL).await;
        }
    }
}

/// The start time of `pid` (clock ticks since boot), recorded when a server is spawned; 0 when
/// unknown, which makes every process a candidate.
#[cfg(target_os = "linux")]
pub(crate) fn start_time(pid: i32) -> u64 {
    linux::stat(pid).map(|p| p.started).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn start_time(_pid: i32) -> u64 {
    0
}

/// Live processes of the given trees (see the module doc), never this process or an ancestor.
#[cfg(target_os = "linux")]
pub(crate) fn members(trees: &[&Tree]) -> Vec<i32> {
    linux::members(trees)
}

/// Without /proc a tree is its process group: it is "left" while the group has a member.
#[cfg(not(target_os = "linux"))]
pub(crate) fn members(trees: &[&Tree]) -> Vec<i32> {
    trees
        .iter()
        // SAFETY: signal 0 only checks for existence.
        .filter(|t| t.leader > 1 && unsafe { libc::kill(-t.leader, 0) } == 0)
        .map(|t| -t.leader)
        .collect()
}

/// Whether `pid` still runs (a zombie waiting for its reaper runs nothing and holds nothing).
/// A negative `pid` stands for a process group.
#[cfg(target_os = "linux")]
fn is_alive(pid: i32) -> bool {
    if pid < 0 {
        // SAFETY: signal 0 only checks for existence.
        return unsafe { libc::kill(pid, 0) } == 0;
    }
    linux::stat(pid).is_some_and(|p| !p.zombie)
}

#[cfg(not(target_os = "linux"))]
fn is_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashSet;

    use super::super::marker::{MARKER_VAR, Tree};

    pub(crate) struct Proc {
        pub(crate) pid: i32,
        pub(super) ppid: i32,
        pub(super) group: i32,
        pub(super) session: i32,
        pub(crate) zombie: bool,
        pub(crate) started: u64,
    }

    /// `/proc/<pid>/stat`, or None once the process is gone.
    pub(crate) fn stat(pid: i32) -> Option<Proc> {
        let raw = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(pid, &raw)
    }

    /// "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    /// utime stime cutime cstime priority nice num_threads itrealvalue starttime ...": comm may
    /// hold spaces and parentheses, so fields are counted from the last ')'.
    pub(super) fn parse_stat(pid: i32, raw: &str) -> Option<Proc> {
        let rest = &raw[raw.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
        if fields.len() < 20 {
            return None;
        }
        Some(Proc {
            pid,
            zombie: fields[0] == "Z" || fields[0] == "X",
            ppid: fields[1].parse().ok()?,
            group: fields[2].parse().ok()?,
            session: fields[3].parse().ok()?,
            started: fields[19].parse().ok()?,
        })
    }

    fn snapshot() -> Vec<Proc> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(stat)
            .collect()
    }

    /// Whether the environment of `pid` lists `marker` in [`MARKER_VAR`] (a space-separated list,
    /// so that servers of a toolnexus that is itself a server carry their host's marker too).
    pub(super) fn carries(environ: &[u8], marker: &str) -> bool {
        let prefix = format!("{MARKER_VAR}=");
        environ
            .split(|b| *b == 0)
            .filter_map(|entry| entry.strip_prefix(prefix.as_bytes()))
            .any(|value| value.split(|b| *b == b' ').any(|m| m == marker.as_bytes()))
    }

    fn has_marker(pid: i32, marker: &str) -> bool {
        std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| carries(&env, marker))
    }

    pub(crate) fn members(trees: &[&Tree]) -> Vec<i32> {
        let procs = snapshot();
        let protected = this_process_and_ancestors(&procs);
        let mut doomed: HashSet<i32> = HashSet::new();
        for tree in trees {
            // Nothing that started before the server can descend from it: this cheap test keeps
            // the environment reads to the few processes started since.
            let candidates: Vec<&Proc> = procs
                .iter()
                .filter(|p| p.started >= tree.started && p.pid > 1 && !protected.contains(&p.pid))
                .collect();
            // Once the server is reaped its pid may be reused; then the process with that pid
            // (and the group it leads) is someone else's. The start time tells them apart.
            let reused = tree.started != 0
                && procs
                    .iter()
                    .any(|p| p.pid == tree.leader && p.started != tree.started);
            let mut found: HashSet<i32> = candidates
                .iter()
                .filter(|p| {
                    (!reused && (p.pid == tree.leader || p.group == tree.leader))
                        || (!p.zombie && has_marker(p.pid, &tree.marker))
                })
                .map(|p| p.pid)
                .collect();
            loop {
                let before = found.len();
                for p in &candidates {
                    if found.contains(&p.ppid)
                        || found.contains(&p.group)
                        || found.contains(&p.session)
                    {
                        found.insert(p.pid);
                    }
                }
                if found.len() == before {
                    break;
                }
            }
            doomed.extend(found);
        }
        let mut live: Vec<i32> = procs
            .iter()
            .filter(|p| doomed.contains(&p.pid) && !p.zombie)
            .map(|p| p.pid)
            .collect();
        live.sort_unstable();
        live
    }

    fn this_process_and_ancestors(procs: &[Proc]) -> HashSet<i32> {
        let mut out = HashSet::new();
        let mut pid = std::process::id() as i32;
        while pid > 0 && out.insert(pid) {
            pid = procs.iter().find(|p| p.pid == pid).map_or(0, |p| p.ppid);
        }
        out
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::unix::process::CommandExt;

    use super::linux::{carries, parse_stat};
    use super::*;
    use std::time::Duration;

    fn cmdline(pid: i32) -> String {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default()
    }

    /// A real tree: a group leader, a child that calls setsid, and a double-forked daemon that
    /// leads its own session and is re-parented away — all found, all ended.
    #[tokio::test]
    async fn setsid_children_and_double_forked_daemons_are_found_and_ended() {
        let marker = format!("{}.tree-test", super::super::marker::host_token());
        let mut leader = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg("setsid sleep 300 & (setsid sleep 301 &); sleep 302; :")
            .env(super::super::marker::MARKER_VAR, &marker)
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = leader.id() as i32;
        let tree = Tree {
            leader: pid,
            marker,
            started: start_time(pid),
        };
        let names = |pids: &[i32]| -> Vec<String> {
            let mut names: Vec<String> = pids.iter().map(|p| cmdline(*p)).collect();
            names.sort();
            names
        };
        let want = ["sleep 300 ", "sleep 301 ", "sleep 302 "];
        let give_up = std::time::Instant::now() + Duration::from_secs(10);
        let found = loop {
            let found = members(&[&tree]);
            if want.iter().all(|w| names(&found).iter().any(|n| n == w)) {
                break found;
            }
            assert!(
                std::time::Instant::now() < give_up,
                "tree never came up: {:?}",
                names(&found)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(found.contains(&pid));
        end(&tree).await;
        let _ = leader.wait();
        assert_eq!(members(&[&tree]), Vec::<i32>::new());
        assert!(found.iter().all(|p| !is_alive(*p)));
    }

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let raw = "4242 (a) b) (c) S 17 4242 99 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 777 1000 \
                   10 18446744073709551615";
        let p = parse_stat(4242, raw).unwrap();
        assert_eq!((p.ppid, p.group, p.session, p.started), (17, 4242, 99, 777));
        assert!(!p.zombie);
        let z = parse_stat(1, "1 (x) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0").unwrap();
        assert!(z.zombie);
        assert!(parse_stat(1, "1 (x) S 0 1").is_none());
    }

    #[test]
    fn the_marker_is_one_whole_entry_of_the_list() {
        let env = b"A=1\0TOOLNEXUS_TREE=outer.3 host.12\0B=2\0";
        assert!(carries(env, "host.12"));
        assert!(carries(env, "outer.3"));
        assert!(!carries(env, "host.1"));
        assert!(!carries(b"X=TOOLNEXUS_TREE=host.12\0", "host.12"));
        assert!(!carries(b"", "host.12"));
    }
}
