//! The TCP, WebSocket and UDP listeners' sockets, and the addresses their peers are named by.
//!
//! # Overview
//! NFD listens on IPv4 and on IPv6 (`face_system.tcp` and `udp` enable both). A listener on
//! the IPv6 unspecified address (`[::]:6363`, the default) does the same with one socket: it is
//! opened dual-stack (`IPV6_V6ONLY` off, whatever the host's default), so IPv4 peers reach it
//! too and the kernel shows them as IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`). Where the
//! host has no IPv6 at all, that listener falls back to `0.0.0.0` on the same port, with a
//! warning. Any other address is bound as given (`0.0.0.0:6363`: IPv4 only; `[::1]:6363`:
//! IPv6 only).
//!
//! Faces name a peer the way NFD does, by its own family: [`canonical`] turns an IPv4-mapped
//! address back into IPv4, so an IPv4 peer's face is `udp4://a.b.c.d:port` (and a TCP peer on
//! loopback is local in scope) whichever listener it came through. The UDP socket is shared by its
//! unicast faces, so a face keeps its peer in the socket's own form ([`Dual::socket_form`]),
//! which is what `sendmmsg` is given and what a received datagram's sender is looked up by.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV6};

use socket2::{Domain, Protocol, Socket, Type};

/// Pending connections a TCP listener queues (as std's `TcpListener::bind`).
const BACKLOG: i32 = 1024;

/// `a` named by its own family: an IPv4-mapped IPv6 address becomes the IPv4 address it carries.
pub fn canonical(a: SocketAddr) -> SocketAddr {
    match a {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), v6.port()),
            None => a,
        },
        SocketAddr::V4(_) => a,
    }
}

/// Whether a socket bound to `local` is dual-stack: the IPv6 unspecified address (opened with
/// `IPV6_V6ONLY` off by [`bind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dual(pub bool);

impl Dual {
    /// For a socket bound to `local`.
    pub fn of(local: SocketAddr) -> Dual {
        Dual(matches!(local, SocketAddr::V6(a) if a.ip().is_unspecified()))
    }

    /// Whether this socket can reach `peer`: its own family, or IPv4 through a dual-stack one.
    pub fn reaches(self, local: SocketAddr, peer: SocketAddr) -> bool {
        local.is_ipv4() == peer.is_ipv4() || (self.0 && peer.is_ipv4())
    }

    /// `peer` as the socket addresses it: IPv4-mapped on a dual-stack socket.
    pub fn socket_form(self, peer: SocketAddr) -> SocketAddr {
        match peer {
            SocketAddr::V4(v4) if self.0 => SocketAddr::V6(SocketAddrV6::new(v4.ip().to_ipv6_mapped(), v4.port(), 0, 0)),
            _ => peer,
        }
    }

    /// The listener's own address as a face with `peer` shows it: `0.0.0.0:port` for an IPv4
    /// peer of a dual-stack listener.
    pub fn local_for(self, local: SocketAddr, peer: SocketAddr) -> SocketAddr {
        if self.0 && peer.is_ipv4() {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), local.port())
        } else {
            local
        }
    }
}

/// Which listener a socket is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A TCP (or WebSocket) listener.
    Tcp,
    /// The UDP socket.
    Udp,
}

/// A non-blocking socket of `kind` bound to `addr` (and listening, for TCP); see the module
/// overview for `[::]`.
///
/// # Errors
/// What the socket calls return (for `[::]` without IPv6: what binding `0.0.0.0` returns).
pub fn bind(addr: SocketAddr, kind: Kind) -> io::Result<Socket> {
    match open(addr, kind) {
        Err(e) if Dual::of(addr).0 && no_ipv6(&e) => {
            let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), addr.port());
            tracing::warn!("no IPv6 on this host ({e}): listening on {v4} instead of {addr}");
            open(v4, kind)
        }
        r => r,
    }
}

/// Whether `e` says the host has no IPv6.
fn no_ipv6(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL | libc::EPROTONOSUPPORT))
}

fn open(addr: SocketAddr, kind: Kind) -> io::Result<Socket> {
    let (ty, protocol) = match kind {
        Kind::Tcp => (Type::STREAM, Protocol::TCP),
        Kind::Udp => (Type::DGRAM, Protocol::UDP),
    };
    let s = Socket::new(Domain::for_address(addr), ty, Some(protocol))?;
    if Dual::of(addr).0 {
        s.set_only_v6(false)?;
    }
    if kind == Kind::Tcp {
        s.set_reuse_address(true)?;
    }
    s.bind(&addr.into())?;
    if kind == Kind::Tcp {
        s.listen(BACKLOG)?;
    }
    s.set_nonblocking(true)?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn mapped_addresses_are_named_by_their_own_family() {
        assert_eq!(canonical(a("[::ffff:127.0.0.1]:6363")), a("127.0.0.1:6363"));
        assert_eq!(canonical(a("[::1]:9")), a("[::1]:9"));
        assert_eq!(canonical(a("10.0.0.1:1")), a("10.0.0.1:1"));
        let dual = Dual::of(a("[::]:6363"));
        assert_eq!(dual, Dual(true));
        assert_eq!(Dual::of(a("[::1]:6363")), Dual(false));
        assert_eq!(Dual::of(a("0.0.0.0:6363")), Dual(false));
        assert_eq!(dual.socket_form(a("10.0.0.1:5")), a("[::ffff:10.0.0.1]:5"));
        assert_eq!(canonical(dual.socket_form(a("10.0.0.1:5"))), a("10.0.0.1:5"));
        assert_eq!(dual.socket_form(a("[::1]:5")), a("[::1]:5"));
        assert_eq!(Dual(false).socket_form(a("10.0.0.1:5")), a("10.0.0.1:5"));
        assert!(dual.reaches(a("[::]:6363"), a("10.0.0.1:5")));
        assert!(!Dual(false).reaches(a("[::1]:6363"), a("10.0.0.1:5")));
        assert!(!Dual(false).reaches(a("0.0.0.0:6363"), a("[::1]:5")));
        assert_eq!(dual.local_for(a("[::]:6363"), a("10.0.0.1:5")), a("0.0.0.0:6363"));
        assert_eq!(dual.local_for(a("[::]:6363"), a("[::1]:5")), a("[::]:6363"));
    }

    #[test]
    fn a_dual_stack_udp_socket_hears_both_families() {
        let s = bind(a("[::]:0"), Kind::Udp).unwrap();
        let local = s.local_addr().unwrap().as_socket().unwrap();
        if !local.is_ipv6() {
            return; // This host has no IPv6: the fallback above was taken.
        }
        let port = local.port();
        let v4 = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        v4.send_to(b"four", ("127.0.0.1", port)).unwrap();
        let v6 = std::net::UdpSocket::bind("[::1]:0").unwrap();
        v6.send_to(b"six", ("::1", port)).unwrap();
        let s: std::net::UdpSocket = s.into();
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 16];
        for _ in 0..2 {
            let (n, from) = s.recv_from(&mut buf).unwrap();
            got.push((buf[..n].to_vec(), canonical(from)));
        }
        got.sort();
        assert_eq!(got, vec![(b"four".to_vec(), v4.local_addr().unwrap()), (b"six".to_vec(), v6.local_addr().unwrap())]);
        // An IPv4 peer is answered through the same socket, at its mapped address.
        s.send_to(b"back", Dual(true).socket_form(v4.local_addr().unwrap())).unwrap();
        v4.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let (n, _) = v4.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"back");
    }
}
