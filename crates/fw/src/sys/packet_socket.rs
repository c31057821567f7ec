//! The `AF_PACKET` socket of an interface, shared by the Ethernet faces on it (the frame format
//! is `crate::face::ether`'s).
//!
//! # Overview
//! A raw packet socket (which needs `CAP_NET_RAW`) bound to the interface and to NDN's
//! EtherType, a member of the group when there is one (`PACKET_ADD_MEMBERSHIP`). It sends
//! whole frames; the payload's MTU is the interface's, and the runtime cuts larger packets into
//! NDNLPv2 fragments to fit. The runtime receives frames in batches (`recvmmsg`,
//! [`crate::sys::udp_batch::RecvBatch`]) and hands each to [`EtherPort::take`].

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::face::ether::{parse_frame, put_header, Frame, Mac, Received, HEADER_BYTES, NDN_ETHERTYPE};
use crate::face::MAX_PACKET_BYTES;

/// One interface's Ethernet socket, shared by the Ethernet faces on it.
#[derive(Debug)]
pub struct EtherPort {
    fd: OwnedFd,
    interface: String,
    /// The interface's index: an interface made again under its name gets another.
    index: u32,
    own: Mac,
    group: Option<Mac>,
    mtu: usize,
}

/// The `sockaddr_ll` of interface `index` for NDN's EtherType.
fn link_address(index: u32) -> io::Result<libc::sockaddr_ll> {
    // SAFETY: sockaddr_ll is plain data, valid all zeros.
    let mut a: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    a.sll_family = libc::AF_PACKET as u16;
    a.sll_protocol = NDN_ETHERTYPE.to_be();
    a.sll_ifindex = i32::try_from(index).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface index out of range"))?;
    Ok(a)
}

/// -1 from a libc call as the error it set.
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl EtherPort {
    /// Opens the port of the interface named `interface`, of index `index` and address `own`,
    /// joining `group` if there is one.
    ///
    /// # Errors
    /// A group that is not a multicast address; the socket call that failed (`EPERM` without
    /// `CAP_NET_RAW`, `ENODEV` for an interface that went away); an MTU too small to carry a
    /// fragment.
    pub fn open(interface: &str, index: u32, own: Mac, group: Option<Mac>) -> io::Result<EtherPort> {
        if let Some(group) = group.filter(|g| !g.is_multicast()) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{group} is not a multicast address")));
        }
        let kind = libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
        // SAFETY: socket takes no pointers; a non-negative result is a new descriptor we own.
        let fd = check(unsafe { libc::socket(libc::AF_PACKET, kind, i32::from(NDN_ETHERTYPE.to_be())) })?;
        // SAFETY: `fd` was just returned by socket and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mtu = interface_mtu(fd.as_raw_fd(), interface)?;
        if mtu < crate::lp::fragmentation::MIN_MTU {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{interface}'s MTU of {mtu} is too small for NDN")));
        }
        let address = link_address(index)?;
        // SAFETY: the pointer and length describe `address`, a live sockaddr_ll.
        check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&raw const address).cast::<libc::sockaddr>(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        if let Some(group) = group {
            // SAFETY: packet_mreq is plain data, valid all zeros.
            let mut membership: libc::packet_mreq = unsafe { std::mem::zeroed() };
            membership.mr_ifindex = address.sll_ifindex;
            membership.mr_type = libc::PACKET_MR_MULTICAST as u16;
            membership.mr_alen = 6;
            membership.mr_address[..6].copy_from_slice(&group.0);
            // SAFETY: the pointer and length describe `membership`, a live packet_mreq.
            check(unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    libc::PACKET_ADD_MEMBERSHIP,
                    (&raw const membership).cast::<libc::c_void>(),
                    std::mem::size_of::<libc::packet_mreq>() as libc::socklen_t,
                )
            })?;
        }
        crate::sys::udp_batch::set_socket_buffers(fd.as_raw_fd(), crate::sys::udp_batch::SOCKET_BUFFER_BYTES);
        Ok(EtherPort { fd, interface: interface.to_string(), index, own, group, mtu })
    }

    /// The interface's name.
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// The interface's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The multicast group it joined, if any.
    pub fn group(&self) -> Option<Mac> {
        self.group
    }

    /// The largest packet one frame carries (the interface's MTU).
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// The LocalUri of its faces, as NFD shows it: `dev://<interface>`.
    pub fn local_uri(&self) -> String {
        format!("dev://{}", self.interface)
    }

    /// The socket, for the poll.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// What a frame the port's socket received is to it (`None`: not its, [`Frame::NotOurs`]);
    /// `cut_short` says the frame was longer than the buffer it was received into (which holds
    /// more than any packet). A packet over the packet limit, or in a frame cut short, is
    /// [`Received::Oversize`].
    pub fn take(&self, frame: &[u8], cut_short: bool) -> Option<Received> {
        Some(match parse_frame(frame, self.own, self.group) {
            Frame::NotOurs => return None,
            _ if cut_short => Received::Oversize,
            Frame::Packet { packet, .. } if packet.len() > MAX_PACKET_BYTES => Received::Oversize,
            Frame::Packet { from, to, packet } => Received::Packet { at: HEADER_BYTES..HEADER_BYTES + packet.len(), from, to },
            Frame::Malformed => Received::Malformed,
        })
    }

    /// Sends `packet` (at most [`EtherPort::mtu`] bytes) to `to` (the group or a peer) in one
    /// frame.
    ///
    /// # Errors
    /// The send error (would-block when the socket's buffer is full).
    pub fn send(&self, to: Mac, packet: &[u8]) -> io::Result<()> {
        let mut header = [0u8; HEADER_BYTES];
        put_header(&mut header, to, self.own);
        let parts = [
            libc::iovec { iov_base: header.as_mut_ptr().cast(), iov_len: HEADER_BYTES },
            libc::iovec { iov_base: packet.as_ptr().cast_mut().cast(), iov_len: packet.len() },
        ];
        // SAFETY: both iovecs describe live buffers of their lengths, which writev only reads.
        let n = unsafe { libc::writev(self.fd.as_raw_fd(), parts.as_ptr(), 2) };
        check(n as libc::c_int).map(|_| ())
    }
}

/// The MTU of the interface named `interface`, asked of the kernel through socket `fd`
/// (`SIOCGIFMTU`): the interface of the socket's network namespace, which sysfs, mounted for
/// another, may not show.
fn interface_mtu(fd: RawFd, interface: &str) -> io::Result<usize> {
    let name = interface.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{interface:?} is not an interface name")));
    }
    // SAFETY: ifreq is plain data, valid all zeros.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, &b) in request.ifr_name.iter_mut().zip(name) {
        *to = b as libc::c_char;
    }
    // SAFETY: SIOCGIFMTU reads the name from, and writes the MTU into, the live ifreq the
    // pointer names.
    check(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &raw mut request) })?;
    // SAFETY: a successful SIOCGIFMTU wrote the union's MTU member.
    let mtu = unsafe { request.ifr_ifru.ifru_mtu };
    usize::try_from(mtu).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{interface}'s MTU: {mtu}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel answers for an interface there is; a name too long, with a NUL, empty or of
    /// no interface is an error.
    #[test]
    fn an_interface_mtu_is_asked_of_the_kernel() {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let fd = socket.as_raw_fd();
        assert!(interface_mtu(fd, "lo").unwrap() >= 1500);
        for bad in ["", "a\0b", "sixteen-bytes-xx", "../../etc", "nx-no-such-if"] {
            assert!(interface_mtu(fd, bad).is_err(), "{bad:?}");
        }
    }
}
