//! What the CLI's tests of `nexthop run` share: the forwarder they started (killed if a test
//! fails before stopping it), signals to it, and its clean stop. (Each test file uses part of
//! it, hence `dead_code` allowed.)
#![allow(dead_code)]

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// A `nexthop run` a test started: killed when dropped still running (a failed assertion would
/// otherwise leave it behind).
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Sends `signal` to the forwarder `fw`.
pub fn signal(fw: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(fw.id()).unwrap();
    // SAFETY: kill(2) on the child this test started and has not yet waited for; no memory is
    // involved.
    #[allow(unsafe_code)]
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0);
}

/// Stops `fw` with SIGTERM (what a service manager sends), waiting at most 10 s: its exit status.
pub fn stop(fw: &mut Child) -> ExitStatus {
    signal(fw, libc::SIGTERM);
    let t0 = Instant::now();
    loop {
        if let Some(s) = fw.try_wait().unwrap() {
            return s;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "nexthop run did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}
