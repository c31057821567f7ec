//! A lossy link for tests and experiments: a UDP relay between two endpoints that drops the
//! datagrams a loss rule refuses.
//!
//! # Overview
//! The relay has two loopback sockets, `near` and `far`. What arrives at `near` goes on to the
//! far peer from `far`, and what arrives at `far` goes to the near peer from `near`: each
//! forwarder's UDP face points at one end, and sees the other forwarder's datagrams come from
//! it. Each direction has its own thread and its own loss rule (a closure deciding on each
//! datagram; [`random_loss`] is the usual one), and counts what it dropped. The sockets' receive
//! buffers are 4 MiB, so the relay loses by its rule, not by overflow.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Decides whether a datagram passes (true) or is lost.
pub type LossRule = Box<dyn FnMut(&[u8]) -> bool + Send>;

/// A running relay; stopped when dropped.
#[derive(Debug)]
pub struct LossyLink {
    /// The end the near peer sends to.
    pub near: SocketAddr,
    /// The end the far peer sends to.
    pub far: SocketAddr,
    lost: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// Each datagram lost with probability `p`, independently (a fixed `seed` makes a run repeatable).
pub fn random_loss(p: f64, seed: u64) -> LossRule {
    let mut state = seed | 1;
    Box::new(move |_| {
        // xorshift64*: plenty for a coin per datagram.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let x = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 53) as f64 >= p
    })
}

impl LossyLink {
    /// Relays between `near_peer` and `far_peer`, losing toward the far peer by `to_far` and
    /// toward the near peer by `to_near`.
    ///
    /// # Errors
    /// A socket that cannot be made.
    pub fn start(near_peer: SocketAddr, far_peer: SocketAddr, to_far: LossRule, to_near: LossRule) -> io::Result<LossyLink> {
        let near = UdpSocket::bind("127.0.0.1:0")?;
        let far = UdpSocket::bind("127.0.0.1:0")?;
        for s in [&near, &far] {
            socket2::SockRef::from(s).set_recv_buffer_size(4 << 20)?;
            s.set_read_timeout(Some(Duration::from_millis(20)))?;
        }
        let lost = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for (from, to, peer, mut keep) in [(&near, &far, far_peer, to_far), (&far, &near, near_peer, to_near)] {
            let (from, to) = (from.try_clone()?, to.try_clone()?);
            let (lost, stop) = (lost.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 9000];
                while !stop.load(Ordering::Relaxed) {
                    let Ok(n) = from.recv(&mut buf) else { continue };
                    if keep(&buf[..n]) {
                        let _ = to.send_to(&buf[..n], peer);
                    } else {
                        lost.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
        Ok(LossyLink { near: near.local_addr()?, far: far.local_addr()?, lost, stop, threads })
    }

    /// Datagrams lost so far, both ways.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }
}

impl Drop for LossyLink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_loss_loses_about_its_share() {
        let mut rule = random_loss(0.05, 7);
        let kept = (0..100_000).filter(|_| rule(&[])).count();
        assert!((94_000..=96_000).contains(&kept), "{kept}");
        let mut none = random_loss(0.0, 7);
        assert!((0..1000).all(|_| none(&[])));
    }

    #[test]
    fn datagrams_cross_both_ways_and_the_lost_are_counted() {
        let (a, b) = (UdpSocket::bind("127.0.0.1:0").unwrap(), UdpSocket::bind("127.0.0.1:0").unwrap());
        for s in [&a, &b] {
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        }
        let mut n = 0;
        let every_other: LossRule = Box::new(move |_| {
            n += 1;
            n % 2 == 1
        });
        let link = LossyLink::start(a.local_addr().unwrap(), b.local_addr().unwrap(), every_other, Box::new(|_| true)).unwrap();
        let mut buf = [0u8; 16];
        a.send_to(b"one", link.near).unwrap();
        assert_eq!(b.recv_from(&mut buf).map(|(n, from)| (buf[..n].to_vec(), from)).unwrap(), (b"one".to_vec(), link.far));
        a.send_to(b"lost", link.near).unwrap();
        b.send_to(b"back", link.far).unwrap();
        assert_eq!(a.recv_from(&mut buf).map(|(n, from)| (buf[..n].to_vec(), from)).unwrap(), (b"back".to_vec(), link.near));
        // (The two directions are two threads: the lost one may still be on its way.)
        let t0 = std::time::Instant::now();
        while link.lost() == 0 && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(link.lost(), 1);
    }
}
