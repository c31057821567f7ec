//! UDP faces over real sockets: the traffic generator's producer (a face made by `faces/create`)
//! and consumer (an on-demand face) exchange Interests and Data through a running nexthop with
//! batched socket I/O, and datagrams that are too long or not NDN are counted, not forwarded.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_fw::config::Config;
use nexthop_fw::counters::Drop;
use nexthop_fw::face::FaceUri;
use nexthop_fw::runtime::Runtime;
use nexthop_fw::traffic;
use nexthop_wire::Name;

#[test]
fn producer_and_consumer_over_udp_and_bad_datagrams_counted() {
    let dir = std::env::temp_dir().join(format!("nexthop-udp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cfg = Config::default();
    cfg.faces.unix = dir.join("u.sock").to_string_lossy().into_owned();
    cfg.faces.tcp = String::new();
    cfg.faces.udp = "127.0.0.1:0".into();
    let mut rt = Runtime::new(cfg.clone()).unwrap();
    let udp = rt.listening().udp.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let drops = std::thread::spawn(move || {
        rt.run(&s).unwrap();
        (rt.io_drops().get(Drop::Oversize), rt.io_drops().snapshot().iter().map(|(_, n)| n).sum::<u64>())
    });

    let control = FaceUri::Unix(cfg.faces.unix.clone());
    let prefix = Name::from_uri("/udp/test").unwrap();
    let pstop = Arc::new(AtomicBool::new(false));
    let producer = traffic::start_producer(&FaceUri::Udp(udp), &control, &prefix, 1000, pstop.clone()).unwrap();
    let r = traffic::run_consumer(&FaceUri::Udp(udp), &prefix, 64, 1000, Duration::from_millis(500)).unwrap();
    pstop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    assert!(r.satisfied > 1000, "{r:?}");
    assert_eq!((r.nacks, r.lost, r.mismatches), (0, 0, 0));
    assert_eq!(r.content_bytes, r.satisfied * 1000);

    // One datagram longer than any NDN packet, one of junk bytes.
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    junk.send_to(&[0x05; 9500], udp).unwrap();
    junk.send_to(&[0xff, 0x00, 0x01], udp).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (oversize, all) = drops.join().unwrap();
    assert_eq!(oversize, 1);
    assert!(all >= 2, "{all} drops");
    let _ = std::fs::remove_dir_all(&dir);
}
