//! Giving freed heap memory back to the system. glibc keeps freed blocks in its per-thread
//! arenas, so after a burst (big requests, a wide listing, thousands of sessions) the process
//! would stay at its peak. Trimming takes a while on a big heap, so it runs on a thread of its
//! own, never on the caller's (the JavaScript thread, a runtime worker).

/// Trims the heap in the background (glibc on Linux; elsewhere nothing).
pub(crate) fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let _ = std::thread::Builder::new()
            .name("toolnexus-trim".into())
            .spawn(|| {
                // SAFETY: malloc_trim only returns free heap memory to the kernel.
                unsafe {
                    libc::malloc_trim(0);
                }
            });
    }
}
