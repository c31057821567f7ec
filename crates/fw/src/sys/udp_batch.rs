//! Batched UDP I/O: many datagrams per system call with Linux `recvmmsg` / `sendmmsg`.
//!
//! Overview:
//! - [`RecvBatch`] owns [`BATCH`] receive slots of [`SLOT_BYTES`] each, reused across calls;
//!   [`RecvBatch::recv`] fills as many as the socket has ready (waiting for the first one only
//!   if the socket blocks) and [`RecvBatch::get`] hands each out with its source address and
//!   whether it was cut short (a datagram longer than a slot).
//! - [`SendBatch`] collects outgoing datagrams (bytes appended to one buffer, a destination
//!   each, or none on a connected socket); [`SendBatch::flush`] sends them with as few
//!   `sendmmsg` calls as the kernel allows and reports how many could not be sent.
//!
//! The message headers point into the batch's own buffers, so they are built on the stack for
//! each call rather than stored (a batch stays movable and `Send`).

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;

/// Datagrams per system call.
pub const BATCH: usize = 64;

/// Bytes per receive slot: an NDN packet is at most 8800 bytes, plus room to see a longer one
/// as cut short.
pub const SLOT_BYTES: usize = 9000;

/// Receive slots for one `recvmmsg` call.
pub struct RecvBatch {
    data: Vec<u8>,
    lens: [usize; BATCH],
    truncated: [bool; BATCH],
    from: [Option<SocketAddr>; BATCH],
    n: usize,
}

impl std::fmt::Debug for RecvBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvBatch").field("n", &self.n).finish_non_exhaustive()
    }
}

impl Default for RecvBatch {
    fn default() -> Self {
        RecvBatch { data: vec![0; BATCH * SLOT_BYTES], lens: [0; BATCH], truncated: [false; BATCH], from: [None; BATCH], n: 0 }
    }
}

impl RecvBatch {
    /// Receives up to [`BATCH`] datagrams from `fd`: those ready now, after waiting for the
    /// first if the socket blocks (its receive timeout applies). Returns how many.
    ///
    /// # Errors
    /// The socket's error (`WouldBlock` when a non-blocking socket has nothing).
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        self.n = 0;
        // SAFETY: all-zero bytes are a valid value of these plain C structs.
        let mut addrs: [libc::sockaddr_storage; BATCH] = unsafe { zeroed() };
        // SAFETY: as above.
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
        let mut iovs: [libc::iovec; BATCH] = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; BATCH];
        for (i, chunk) in self.data.chunks_exact_mut(SLOT_BYTES).enumerate() {
            iovs[i] = libc::iovec { iov_base: chunk.as_mut_ptr().cast(), iov_len: SLOT_BYTES };
        }
        for i in 0..BATCH {
            let h = &mut msgs[i].msg_hdr;
            h.msg_name = (&raw mut addrs[i]).cast();
            h.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &raw mut iovs[i];
            h.msg_iovlen = 1;
        }
        // SAFETY: `msgs` holds BATCH headers whose name and iovec pointers point at `addrs`,
        // `iovs` and `self.data`, all alive and exclusively borrowed for the whole call; the
        // kernel writes at most the lengths given. A null timeout is allowed.
        let got = unsafe { libc::recvmmsg(fd, msgs.as_mut_ptr(), BATCH as libc::c_uint, libc::MSG_WAITFORONE, std::ptr::null_mut()) };
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = got as usize;
        for i in 0..got {
            self.lens[i] = (msgs[i].msg_len as usize).min(SLOT_BYTES);
            self.truncated[i] = msgs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            self.from[i] = from_storage(&addrs[i], msgs[i].msg_hdr.msg_namelen);
        }
        self.n = got;
        Ok(got)
    }

    /// Datagrams received by the last [`recv`](Self::recv).
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the last receive got nothing.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Datagram `i` of the last receive: its bytes, its source, and whether it was longer than
    /// a slot (then the bytes are only its start).
    pub fn get(&self, i: usize) -> (&[u8], Option<SocketAddr>, bool) {
        let at = i * SLOT_BYTES;
        (&self.data[at..at + self.lens[i]], self.from[i], self.truncated[i])
    }
}

/// Outgoing datagrams waiting for one `sendmmsg` flush.
#[derive(Debug, Default)]
pub struct SendBatch {
    bytes: Vec<u8>,
    items: Vec<(usize, usize, Option<SocketAddr>)>,
}

impl SendBatch {
    /// Queues one datagram for `to` (`None` on a connected socket).
    pub fn push(&mut self, datagram: &[u8], to: Option<SocketAddr>) {
        self.items.push((self.bytes.len(), datagram.len(), to));
        self.bytes.extend_from_slice(datagram);
    }

    /// Datagrams queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Bytes queued (the datagrams' payloads).
    pub fn bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Sends everything queued and empties the batch. Returns how many datagrams could not be
    /// sent: a full socket buffer on a non-blocking socket drops the rest, and a datagram the
    /// kernel refuses (e.g. a remote's ICMP error reported back) is skipped.
    pub fn flush(&mut self, fd: RawFd) -> usize {
        let mut failed = 0;
        let mut at = 0;
        while at < self.items.len() {
            let chunk = &self.items[at..(at + BATCH).min(self.items.len())];
            // SAFETY: all-zero bytes are a valid value of these plain C structs.
            let mut addrs: [libc::sockaddr_storage; BATCH] = unsafe { zeroed() };
            // SAFETY: as above.
            let mut msgs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
            let mut iovs: [libc::iovec; BATCH] = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; BATCH];
            for (i, &(start, len, to)) in chunk.iter().enumerate() {
                iovs[i] = libc::iovec { iov_base: self.bytes[start..].as_ptr() as *mut libc::c_void, iov_len: len };
                let h = &mut msgs[i].msg_hdr;
                if let Some(to) = to {
                    h.msg_name = (&raw mut addrs[i]).cast();
                    h.msg_namelen = to_storage(to, &mut addrs[i]);
                }
                h.msg_iov = &raw mut iovs[i];
                h.msg_iovlen = 1;
            }
            // SAFETY: the first `chunk.len()` headers point at `addrs`, `iovs` and
            // `self.bytes`, alive and unchanged for the call; the kernel only reads the data.
            let sent = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), chunk.len() as libc::c_uint, 0) };
            if sent > 0 {
                at += sent as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => {
                    failed += self.items.len() - at;
                    break;
                }
                _ => {
                    failed += 1;
                    at += 1;
                }
            }
        }
        self.items.clear();
        self.bytes.clear();
        failed
    }
}

/// Bytes asked for each UDP socket's kernel send and receive buffers: a window of 256 Data of
/// 1000 bytes arriving at once overflows Linux's default of 208 KiB.
pub const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// Sets `fd`'s send and receive buffers to `bytes`: beyond the system's `rmem_max`/`wmem_max`
/// where the process may (`SO_RCVBUFFORCE`, with CAP_NET_ADMIN), else as far as they allow.
/// Best effort: a smaller buffer only means earlier drops under bursts.
pub fn set_socket_buffers(fd: RawFd, bytes: usize) {
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for (force, plain) in [(libc::SO_RCVBUFFORCE, libc::SO_RCVBUF), (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)] {
        for opt in [force, plain] {
            // SAFETY: `v` is a live c_int and the length given is its size; the kernel only reads it.
            let r =
                unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, opt, (&raw const v).cast(), size_of::<libc::c_int>() as libc::socklen_t) };
            if r == 0 {
                break;
            }
        }
    }
}

fn to_storage(addr: SocketAddr, storage: &mut libc::sockaddr_storage) -> libc::socklen_t {
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for every sockaddr type.
            unsafe { std::ptr::write((storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>(), sin) };
            size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write((storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>(), sin6) };
            size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

fn from_storage(storage: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
    match storage.ss_family as libc::c_int {
        libc::AF_INET if len as usize >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: the family says the storage holds a sockaddr_in, and it is large enough.
            let sin = unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 if len as usize >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(ip, u16::from_be(sin6.sin6_port), sin6.sin6_flowinfo, sin6.sin6_scope_id)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn addresses_round_trip() {
        for a in ["127.0.0.1:6363", "[::1]:9", "[fe80::1%2]:65535", "10.1.2.3:0"] {
            let a: SocketAddr = a.parse().unwrap();
            // SAFETY: all-zero is a valid sockaddr_storage.
            let mut s: libc::sockaddr_storage = unsafe { zeroed() };
            let len = to_storage(a, &mut s);
            assert_eq!(from_storage(&s, len), Some(a));
        }
    }

    #[test]
    fn many_datagrams_each_way_in_few_calls() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        // 100 small datagrams (more than one sendmmsg call) and one longer than a slot.
        let size = |i: u32| if i == 100 { SLOT_BYTES + 100 } else { 1 + (i as usize % 20) * 10 };
        let mut out = SendBatch::default();
        for i in 0..=100u32 {
            out.push(&vec![(i % 251) as u8; size(i)], Some(to));
        }
        assert_eq!(out.flush(tx.as_raw_fd()), 0);
        assert!(out.is_empty());
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        let mut batch = RecvBatch::default();
        let mut seen = 0u32;
        while seen <= 100 {
            let n = batch.recv(rx.as_raw_fd()).unwrap();
            assert!((1..=BATCH).contains(&n));
            for i in 0..n {
                let (bytes, from, cut) = batch.get(i);
                assert_eq!(from, Some(tx.local_addr().unwrap()));
                assert_eq!(cut, seen == 100);
                assert_eq!(bytes.len(), size(seen).min(SLOT_BYTES));
                assert!(bytes.iter().all(|&b| b == (seen % 251) as u8));
                seen += 1;
            }
        }
    }

    #[test]
    fn socket_buffers_grow() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let get = |opt| {
            let mut v: libc::c_int = 0;
            let mut len = size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: `v` and `len` are live and sized as the kernel expects.
            assert_eq!(unsafe { libc::getsockopt(s.as_raw_fd(), libc::SOL_SOCKET, opt, (&raw mut v).cast(), &mut len) }, 0);
            v as usize
        };
        set_socket_buffers(s.as_raw_fd(), SOCKET_BUFFER_BYTES);
        // Without privilege the kernel grants at most rmem_max/wmem_max (and reports double).
        let max = |f: &str| std::fs::read_to_string(f).ok().and_then(|v| v.trim().parse::<usize>().ok()).unwrap_or(0);
        assert!(get(libc::SO_RCVBUF) >= SOCKET_BUFFER_BYTES.min(max("/proc/sys/net/core/rmem_max")));
        assert!(get(libc::SO_SNDBUF) >= SOCKET_BUFFER_BYTES.min(max("/proc/sys/net/core/wmem_max")));
    }

    #[test]
    fn nothing_ready_is_would_block() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_nonblocking(true).unwrap();
        let e = RecvBatch::default().recv(rx.as_raw_fd()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }
}
