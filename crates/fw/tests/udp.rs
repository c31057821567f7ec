//! UDP faces over real sockets: the traffic generator's producer (a face made by `faces/create`)
//! and consumer (an on-demand face) exchange Interests and Data through a running nexthop with
//! batched socket I/O, and datagrams that are too long or not NDN are counted, not forwarded.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_fw::conf::config::Config;
use nexthop_fw::counters::DropReason;
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::runtime::Runtime;
use nexthop_tools::traffic;
use nexthop_wire::Name;

#[test]
fn producer_and_consumer_over_udp_and_bad_datagrams_counted() {
    let scratch = tempfile::Builder::new().prefix("nexthop-udp-").tempdir().unwrap();
    let dir = scratch.path();
    let fw = run(config(dir, "u.sock", 1420));
    let udp = fw.udp;

    let control = FaceUri::Unix(fw.cfg.faces.unix.clone());
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
    fw.stop.store(true, Ordering::Relaxed);
    let rt = fw.thread.join().unwrap();
    assert_eq!(rt.io_drops().get(DropReason::Oversize), 1);
    let all: u64 = rt.io_drops().snapshot().iter().map(|(_, n)| n).sum();
    assert!(all >= 2, "{all} drops");
}

/// A running in-process forwarder: its config, the thread, and the flag that stops it.
struct Running {
    cfg: Config,
    udp: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Runtime>,
}

fn run(cfg: Config) -> Running {
    let mut rt = Runtime::new(cfg.clone()).unwrap();
    let udp = rt.listening().udp.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::spawn(move || {
        rt.run(&s).unwrap();
        rt
    });
    Running { cfg, udp, stop, thread }
}

fn config(dir: &std::path::Path, name: &str, udp_mtu: usize) -> Config {
    let mut cfg = Config::default();
    cfg.faces.unix = dir.join(name).to_string_lossy().into_owned();
    cfg.faces.tcp = String::new();
    cfg.faces.udp = "127.0.0.1:0".into();
    cfg.faces.udp_mtu = udp_mtu;
    cfg
}

/// Two forwarders joined by a UDP face: 6000-byte Data cross it as NDNLPv2 fragments of at most
/// 1420 bytes (the producer's forwarder cuts them, the consumer's puts them back together), and
/// reach a UDP consumer cut again, where the client reassembles them. Every Data arrives intact.
#[test]
fn large_data_cross_udp_faces_as_fragments() {
    let scratch = tempfile::Builder::new().prefix("nexthop-frag-").tempdir().unwrap();
    let dir = scratch.path();
    let near_producer = run(config(dir, "p.sock", 1420));
    let mut cfg = config(dir, "c.sock", 1420);
    cfg.route.push(nexthop_fw::conf::config::StaticRoute {
        prefix: "/big".into(),
        face: FaceUri::Udp(near_producer.udp).to_string(),
        cost: 0,
    });
    let near_consumer = run(cfg);

    let prefix = Name::from_uri("/big/object").unwrap();
    let pstop = Arc::new(AtomicBool::new(false));
    let unix = |r: &Running| FaceUri::Unix(r.cfg.faces.unix.clone());
    let producer = traffic::start_producer(&unix(&near_producer), &unix(&near_producer), &prefix, 6000, pstop.clone()).unwrap();
    let over_unix = traffic::run_consumer(&unix(&near_consumer), &prefix, 16, 6000, Duration::from_millis(500)).unwrap();
    let over_udp = traffic::run_consumer(&FaceUri::Udp(near_consumer.udp), &prefix, 16, 6000, Duration::from_millis(500)).unwrap();
    pstop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    for r in [&over_unix, &over_udp] {
        assert!(r.satisfied > 100, "{r:?}");
        assert_eq!((r.nacks, r.lost, r.mismatches), (0, 0, 0), "{r:?}");
        assert_eq!(r.content_bytes, r.satisfied * 6000);
    }
    for r in [near_consumer, near_producer] {
        r.stop.store(true, Ordering::Relaxed);
        let rt = r.thread.join().unwrap();
        let drops = rt.io_drops();
        for why in [
            DropReason::Fragment,
            DropReason::ReassemblyBad,
            DropReason::ReassemblyFull,
            DropReason::ReassemblyTimeout,
            DropReason::Oversize,
        ] {
            assert_eq!(drops.get(why), 0, "{why:?}");
        }
    }
}
