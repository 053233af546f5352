//! Every live stdio server's process tree, so that nothing outlives the Node process.
//!
//! Each stdio server is registered here (its [`Tree`]) with the JavaScript environment that
//! started it, until its teardown has finished. Trees that no teardown ended are ended by:
//! - the environment's cleanup hook (Node exiting without close(), a worker thread ending), for
//!   that environment's trees only;
//! - an `atexit` handler, for every tree, on `process.exit()`;
//! - on Unix, the [`watchdog`] process, for every tree, when this process dies without running
//!   either (SIGKILL, a signal it has no handler for, a crash).
//!
//! On Windows every server runs in a job object that is killed when its last handle closes —
//! which the kernel does when this process dies, however it dies (see `stdio.rs`).

mod marker;
#[cfg(unix)]
pub(crate) mod tree;
#[cfg(unix)]
mod watchdog;

pub(crate) use marker::{MARKER_VAR, Tree, host_token};

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
#[cfg(unix)]
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// Live trees and the environment that owns each, by leader pid.
static TREES: Mutex<Option<HashMap<i32, (Tree, u64)>>> = Mutex::new(None);
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);
static NEXT_TREE: AtomicU64 = AtomicU64::new(1);

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
pub(crate) fn current_owner() -> u64 {
    OWNER.try_with(|owner| *owner).unwrap_or(0)
}

/// A fresh marker for the next server.
pub(crate) fn new_marker() -> String {
    format!(
        "{}.{}",
        host_token(),
        NEXT_TREE.fetch_add(1, Ordering::Relaxed)
    )
}

/// The value of [`MARKER_VAR`] to give a server with `marker`: the list this process inherited
/// (when it is itself a server of another toolnexus, whose teardown must reach our servers too)
/// followed by `marker`.
pub(crate) fn marker_value(marker: &str) -> String {
    match std::env::var(MARKER_VAR) {
        Ok(inherited) if !inherited.trim().is_empty() => format!("{} {marker}", inherited.trim()),
        _ => marker.to_string(),
    }
}

pub(crate) fn register(tree: Tree) {
    install_atexit();
    #[cfg(unix)]
    watchdog::watch(tree.leader);
    TREES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(tree.leader, (tree, current_owner()));
}

pub(crate) fn unregister(leader: i32) {
    if let Some(trees) = TREES.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        trees.remove(&leader);
    }
    #[cfg(unix)]
    watchdog::forget(leader);
}

/// Ends the trees of one environment (`Some`) or of all (`None`), without waiting.
fn kill(owner: Option<u64>) {
    let doomed: Vec<Tree> = TREES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .map(|trees| {
            let leaders: Vec<i32> = trees
                .iter()
                .filter(|(_, (_, o))| owner.is_none_or(|owner| *o == owner))
                .map(|(leader, _)| *leader)
                .collect();
            leaders
                .iter()
                .filter_map(|leader| trees.remove(leader).map(|(tree, _)| tree))
                .collect()
        })
        .unwrap_or_default();
    if doomed.is_empty() {
        return;
    }
    #[cfg(unix)]
    {
        let trees: Vec<&Tree> = doomed.iter().collect();
        // A second look finds what was forked while the first was being killed.
        tree::signal(&trees, libc::SIGKILL);
        tree::signal(&trees, libc::SIGKILL);
        for tree in &doomed {
            watchdog::forget(tree.leader);
        }
    }
    #[cfg(windows)]
    for tree in &doomed {
        end_windows_tree(tree.leader);
    }
}

/// Ends a server and what still hangs below it. Its job object ends the rest when the job's
/// handle closes (when the server's `StdioProcess` is dropped, or this process exits).
#[cfg(windows)]
pub(crate) fn end_windows_tree(pid: i32) {
    if pid > 0 {
        let _ = std::process::Command::new("taskkill")
            .args(["/T", "/F", "/PID", &pid.to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Kills every tree started for `owner`. Called when that environment goes away.
pub fn kill_owned(owner: u64) {
    kill(Some(owner));
}

#[cfg(unix)]
extern "C" fn kill_all_at_exit() {
    kill(None);
}

fn install_atexit() {
    // On Windows the job object ends every tree when this process goes, however it goes.
    #[cfg(unix)]
    static ONCE: Once = Once::new();
    #[cfg(unix)]
    ONCE.call_once(|| {
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(kill_all_at_exit);
        }
    });
}
