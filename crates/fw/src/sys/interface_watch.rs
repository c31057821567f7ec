//! The kernel's notices that the host's network interfaces changed, as NFD's network monitor
//! takes them: what lets multicast faces follow interfaces that come and go after the
//! forwarder started (the runtime's `multicast_faces`).
//!
//! # Overview
//! - [`InterfaceWatch`] is a non-blocking `NETLINK_ROUTE` socket bound to the groups of link
//!   and address notices (`RTMGRP_LINK`, `RTMGRP_IPV4_IFADDR`, `RTMGRP_IPV6_IFADDR`): an
//!   interface added, removed, brought up or down, an address added or removed.
//! - The notices are not parsed. Any of them means "look at the interfaces again", and looking
//!   again reads the whole list ([`crate::sys::interfaces::interface_addresses`]), so one lost or
//!   misread notice changes nothing. [`InterfaceWatch::drain`] reads all that are waiting and
//!   says whether there were any; a notice queue the kernel overflowed (`ENOBUFS`) counts as
//!   one.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A socket that hears the kernel's interface and address notices.
#[derive(Debug)]
pub struct InterfaceWatch {
    fd: OwnedFd,
}

impl InterfaceWatch {
    /// Subscribes to the notices.
    ///
    /// # Errors
    /// The socket or bind call that failed (a kernel without netlink, a sandbox that refuses
    /// it).
    pub fn open() -> io::Result<Self> {
        // SAFETY: socket(2) with constant arguments; the result is checked before use.
        let raw = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor just opened, owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_nl is plain old data, for which all zeroes is a valid value.
        let mut address: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        address.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        address.nl_groups = (libc::RTMGRP_LINK | libc::RTMGRP_IPV4_IFADDR | libc::RTMGRP_IPV6_IFADDR) as u32;
        // SAFETY: `address` is a valid sockaddr_nl that outlives the call, and its size is the
        // length passed.
        let bound = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&address as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if bound < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(InterfaceWatch { fd })
    }

    /// Reads every notice waiting; whether there was any (or the kernel dropped some).
    pub fn drain(&self) -> bool {
        let mut buf = [0u8; 8192];
        let mut any = false;
        loop {
            // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the whole call.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n > 0 {
                any = true;
                continue;
            }
            if n == 0 {
                return any;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // Notices were lost: what they said is read from the list anyway.
                Some(libc::ENOBUFS) => any = true,
                Some(libc::EAGAIN) => return any,
                _ => {
                    tracing::debug!("reading interface notices: {e}");
                    return any;
                }
            }
        }
    }
}

impl AsRawFd for InterfaceWatch {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new link (a veth pair, which needs CAP_NET_ADMIN) is noticed; reading with nothing
    /// waiting returns at once.
    #[test]
    fn a_new_interface_is_noticed() {
        let watch = InterfaceWatch::open().expect("a netlink socket");
        let _ = watch.drain(); // (what other tests' interfaces made meanwhile)
        let name = format!("nxwatch{}", std::process::id() % 100_000);
        let made = std::process::Command::new("ip")
            .args(["link", "add", &name, "type", "veth", "peer", "name", &format!("{name}p")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !made {
            eprintln!("no veth pair (needs CAP_NET_ADMIN): skipped");
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut heard = false;
        while !heard && std::time::Instant::now() < deadline {
            heard = watch.drain();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = std::process::Command::new("ip").args(["link", "del", &name]).output();
        assert!(heard, "the new link was noticed");
    }
}
