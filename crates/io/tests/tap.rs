//! A TAP interface for real, in a namespace the test makes: a ping written into it reaches the
//! kernel's stack, and the kernel's echo reply comes back out of it.

use std::time::{Duration, Instant};

use nexthop_io::netns::Netns;
use nexthop_io::Tap;

const TAP_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x7a, 0x01];
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x7a, 0x02];

/// The one's-complement checksum of `b`.
fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 = b.chunks(2).map(|w| u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An ICMP echo request from 10.9.0.2 to 10.9.0.1, in an Ethernet frame to the TAP.
fn echo_request() -> Vec<u8> {
    let mut f = vec![0u8; 14 + 20 + 8];
    f[0..6].copy_from_slice(&TAP_MAC);
    f[6..12].copy_from_slice(&PEER_MAC);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&28u16.to_be_bytes());
    ip[8] = 64;
    ip[9] = 1;
    ip[12..16].copy_from_slice(&[10, 9, 0, 2]);
    ip[16..20].copy_from_slice(&[10, 9, 0, 1]);
    let c = checksum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let icmp = &mut f[34..];
    icmp[0] = 8;
    icmp[4..8].copy_from_slice(&[0x12, 0x34, 0, 1]);
    let c = checksum(icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    f
}

#[test]
fn a_frame_written_to_a_tap_is_answered_by_the_kernel() {
    let Some(ns) = Netns::for_test(&format!("nxtap{}", std::process::id() % 100_000)) else { return };
    let name = ns.name().to_string();
    let (ready, go) = std::sync::mpsc::channel();
    let (configured, wait) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        nexthop_io::netns::enter(&name).unwrap();
        let tap = Tap::open("nxtap0", TAP_MAC).unwrap();
        tap.up().unwrap();
        ready.send(()).unwrap();
        wait.recv().unwrap();
        tap.send(&echo_request()).unwrap();
        let mut buf = vec![0u8; 2048];
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            match tap.receive(&mut buf).unwrap() {
                // The echo reply: to the peer, from the TAP's address, ICMP type 0.
                Some(n) if n >= 42 && buf[12..14] == [0x08, 0x00] && buf[14 + 9] == 1 && buf[34] == 0 => {
                    assert_eq!((&buf[0..6], &buf[6..12]), (&PEER_MAC[..], &TAP_MAC[..]));
                    assert_eq!(&buf[26..34], &[10, 9, 0, 1, 10, 9, 0, 2]);
                    return;
                }
                Some(_) => {} // IPv6 router solicitations and the like.
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        panic!("no echo reply out of the TAP");
    });
    go.recv().unwrap();
    ns.ip(&["addr", "add", "10.9.0.1/24", "dev", "nxtap0"]).unwrap();
    ns.ip(&["neigh", "add", "10.9.0.2", "lladdr", "02:00:00:00:7a:02", "dev", "nxtap0", "nud", "permanent"]).unwrap();
    configured.send(()).unwrap();
    t.join().unwrap();
}
