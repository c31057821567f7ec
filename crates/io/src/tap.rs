//! A TAP interface: the way a pipeline hands the kernel a frame the fast path does not handle
//! (for the router itself, a TTL to answer, a neighbour to resolve), as VPP's linux-cp does.
//!
//! # Overview
//! [`Tap::open`] makes (or takes) TAP interface `name` in the calling thread's network namespace,
//! with the Ethernet address of the port it stands beside, so that a frame addressed to the
//! port is addressed to it; [`Tap::up`] brings it up (once its settings are made). A frame written ([`Tap::send`]) enters the
//! kernel's stack as received on the TAP; what the kernel sends out of it can be read
//! ([`Tap::receive`]). The descriptor is non-blocking.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::error::PortError;
use crate::interface::{ioctl, request, set_mac, set_up};

/// A TAP interface's descriptor.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
}

impl Tap {
    /// TAP interface `name` (made if it does not exist), Ethernet address `mac`, still down.
    ///
    /// # Errors
    /// No `/dev/net/tun`, a name that cannot be an interface's, or the kernel refused (no
    /// CAP_NET_ADMIN).
    pub fn open(name: &str, mac: [u8; 6]) -> Result<Tap, PortError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| PortError::os("opening /dev/net/tun", e))?;
        let mut r = request(name)?;
        r.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
        ioctl(&file, libc::TUNSETIFF as libc::c_ulong, &mut r).map_err(|e| PortError::os(format!("making TAP {name}"), e))?;
        set_mac(name, mac)?;
        Ok(Tap { file, name: name.to_string() })
    }

    /// Brings the interface up.
    ///
    /// # Errors
    /// The kernel refused.
    pub fn up(&self) -> Result<(), PortError> {
        set_up(&self.name)
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The descriptor, to poll for frames the kernel sent.
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Hands `frame` to the kernel's stack.
    ///
    /// # Errors
    /// The TAP's queue is full (`WouldBlock`), or the interface is down or gone.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        (&self.file).write(frame).map(drop)
    }

    /// Reads one frame the kernel sent out of the TAP into `buf`: its length, or `None` when
    /// there is none.
    ///
    /// # Errors
    /// The descriptor failed.
    pub fn receive(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}
