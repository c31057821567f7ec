//! Multicast group memberships of an interface, held while a port is open.
//!
//! # Overview
//! A NIC drops frames to a group address it was not told of before any XDP program or socket
//! sees them, so a port that receives a group's frames has the interface join the group. The
//! membership is taken with `PACKET_ADD_MEMBERSHIP` on an AF_PACKET socket of protocol 0 (one
//! that receives nothing): the kernel counts it against the interface and drops it when the
//! socket closes, so however the port ends (closed, dropped, the process killed) the interface
//! leaves the group.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::sockopt::{self, check};

/// Memberships of one interface in some groups, held until dropped.
#[derive(Debug)]
pub(crate) struct Membership {
    _socket: OwnedFd,
}

impl Membership {
    /// Has interface `index` join every address of `groups` (each a multicast address).
    pub(crate) fn join(index: u32, groups: &[[u8; 6]]) -> io::Result<Membership> {
        if let Some(g) = groups.iter().find(|g| g[0] & 1 == 0) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{g:02x?} is not a multicast address")));
        }
        // SAFETY: plain socket creation; the descriptor is owned right after.
        let raw = check(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: a new descriptor that nothing else owns.
        let socket = unsafe { OwnedFd::from_raw_fd(raw) };
        let ifindex = i32::try_from(index).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface index out of range"))?;
        for group in groups {
            let mut address = [0u8; 8];
            address[..6].copy_from_slice(group);
            let request =
                libc::packet_mreq { mr_ifindex: ifindex, mr_type: libc::PACKET_MR_MULTICAST as u16, mr_alen: 6, mr_address: address };
            sockopt::set(&socket, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &request)?;
        }
        Ok(Membership { _socket: socket })
    }
}
