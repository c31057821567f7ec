//! Scratch: generator TX rate alone.
use std::time::{Duration, Instant};
use nexthop_io::netns::{veth, Netns};
use nexthop_io::{Backend, PortConfig, PortSet};
fn main() {
    let a = Netns::new("blasta").unwrap();
    let b = Netns::new("blastb").unwrap();
    veth(&a, "ba0", &b, "bb0", 1).unwrap();
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "xdp" {
        // An XDP program on the peer that passes everything (a port taking an EtherType no one sends).
        let bn = b.name().to_string();
        std::thread::spawn(move || {
            nexthop_io::netns::enter(&bn).unwrap();
            let mut set = PortSet::new(4096).unwrap();
            let _p = set.open(PortConfig { ethertypes: vec![0x1234], ..PortConfig::new("bb0") }).unwrap();
            std::thread::sleep(Duration::from_secs(5));
        });
        std::thread::sleep(Duration::from_millis(300));
    }
    a.enter().unwrap();
    let mut set = PortSet::new(16384).unwrap();
    let be = if mode == "packet" { Backend::AfPacket } else { Backend::AfXdp };
    let p = set.open(PortConfig { backend: Some(be), ..PortConfig::new("ba0") }).unwrap();
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed() < Duration::from_secs(1) {
        for _ in 0..64 {
            let Some(f) = set.pool().alloc() else { break };
            let mut f = f;
            set.pool().set_len(&mut f, 64).unwrap();
            set.pool().bytes_mut(&mut f)[12] = 0x88; 
            set.transmit(p, f);
            n += 1;
        }
        set.flush();
    }
    let c = set.counters(p);
    println!("{mode}: attempted {n} tx {} in 1s; drops {}; free {}", c.tx_frames, c.dropped_total(), set.pool_ref().free_count());
}
