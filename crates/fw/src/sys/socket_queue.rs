//! How many bytes a socket's kernel send queue holds (`SIOCOUTQ`), for congestion marking
//! ([`crate::lp::congestion`]): a face's send queue is what the forwarder holds for it plus this.

use std::os::fd::RawFd;

/// Bytes written to the socket `fd` that the kernel has not sent (TCP: not yet acknowledged;
/// Unix stream: not yet read by the peer); `None` when the kernel does not say.
pub fn unsent_bytes(fd: RawFd) -> Option<u64> {
    let mut queued: libc::c_int = 0;
    // SAFETY: SIOCOUTQ (TIOCOUTQ) writes one c_int through the pointer, which points at a live
    // local of that type; a bad or closed fd makes ioctl fail with EBADF, touching nothing.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut queued as *mut libc::c_int) };
    (rc == 0).then(|| u64::try_from(queued).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use super::*;

    #[test]
    fn counts_what_the_peer_has_not_read() {
        let (mut a, b) = UnixStream::pair().unwrap();
        assert_eq!(unsent_bytes(a.as_raw_fd()), Some(0));
        a.write_all(&[7; 1000]).unwrap();
        assert!(unsent_bytes(a.as_raw_fd()).is_some_and(|n| n >= 1000), "{:?}", unsent_bytes(a.as_raw_fd()));
        drop(b);
        assert_eq!(unsent_bytes(-1), None);
    }
}
