//! Waiting for any of a set's ports to have frames: `poll(2)` on their sockets, for a thread
//! that would otherwise spin on empty rings (and take the core from the kernel work that fills
//! them).

use std::os::fd::RawFd;
use std::time::Duration;

/// Waits until one of `fds` is readable or `timeout` passes; whether one is.
pub fn readable(fds: &[RawFd], timeout: Duration) -> bool {
    let mut polls: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `polls` is a live array of `polls.len()` pollfd structures, which the kernel
    // reads and writes (`revents`) for the call only.
    let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
    n > 0
}
