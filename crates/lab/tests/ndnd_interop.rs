//! nexthop beside NDNd, the Go NDN forwarder (built by `scripts/setup.sh`), joined by UDP faces
//! over loopback. Both cut packets above a 1420-byte UDP MTU (NDNd's default, and nexthop's)
//! into NDNLPv2 fragments, so 6000-byte Data cross the link as five fragments each: NDNd's
//! fragments must be put back together by nexthop, and nexthop's by NDNd. Consumers on each side
//! fetch from a producer on the other; every Data must arrive with the producer's content
//! (a datagram lost on the way is tolerated, up to 1% of the Interests).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_fw::conf::config::{Config, StaticRoute};
use nexthop_fw::counters::DropReason;
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_fw::runtime::Runtime;
use nexthop_lab::peers::forwarder::{Forwarder, Setup};
use nexthop_tools::client::Client;
use nexthop_tools::traffic;
use nexthop_wire::Name;

const PAYLOAD: usize = 6000;
const MTU: usize = 1420;

#[test]
fn large_data_cross_between_nexthop_and_ndnd_as_fragments() {
    let scratch = tempfile::Builder::new().prefix("nexthop-ndnd-interop-").tempdir().unwrap();
    let dir = scratch.path();
    let setup = Setup {
        threads: 1,
        cs_capacity: 64,
        route_file: None,
        pit_max: (1 << 16, 1 << 14),
        udp_mtu: MTU,
        ssd: None,
        ether_interface: None,
    };
    let ndnd = Forwarder::ndnd(dir, &setup).expect("NDNd starts (scripts/setup.sh builds it)");
    let FaceUri::Udp(ndnd_udp) = ndnd.udp else { unreachable!() };

    let mut cfg = Config::default();
    cfg.faces.unix = dir.join("nexthop.sock").to_string_lossy().into_owned();
    cfg.faces.tcp = String::new();
    cfg.faces.udp = "127.0.0.1:0".into();
    cfg.faces.udp_mtu = MTU;
    cfg.route.push(StaticRoute { prefix: "/at-ndnd".into(), face: FaceUri::Udp(ndnd_udp).to_string(), cost: 0 });
    let mut rt = Runtime::new(cfg.clone()).unwrap();
    let nexthop_udp = rt.listening().udp.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let nexthop = std::thread::spawn(move || {
        rt.run(&s).unwrap();
        rt
    });
    let nexthop_unix = FaceUri::Unix(cfg.faces.unix.clone());

    // NDNd's way to nexthop: a UDP face made through its management, and a route over it.
    let mut ctl = Client::connect(&ndnd.unix).unwrap();
    let made = ctl
        .command("faces", "create", &ControlParameters { uri: Some(FaceUri::Udp(nexthop_udp).to_string()), ..Default::default() })
        .unwrap();
    let face_id = made.body.and_then(|b| b.face_id).unwrap_or_else(|| panic!("faces/create: {} {}", made.code, made.text));
    let route = ControlParameters { name: Some(Name::from_uri("/at-nexthop").unwrap()), face_id: Some(face_id), ..Default::default() };
    assert_eq!(ctl.command("rib", "register", &route).unwrap().code, 200);

    // Data NDNd → nexthop, then nexthop → NDNd.
    for (producer_at, consumer_at, prefix) in
        [(&ndnd.unix, &nexthop_unix, "/at-ndnd/object"), (&nexthop_unix, &ndnd.unix, "/at-nexthop/object")]
    {
        let prefix = Name::from_uri(prefix).unwrap();
        let pstop = Arc::new(AtomicBool::new(false));
        let producer = traffic::start_producer(producer_at, producer_at, &prefix, PAYLOAD, pstop.clone()).unwrap();
        let r = traffic::run_consumer(consumer_at, &prefix, 8, PAYLOAD, Duration::from_millis(700)).unwrap();
        pstop.store(true, Ordering::Relaxed);
        producer.join().unwrap();
        let seen = (r.satisfied, r.nacks, r.lost, r.mismatches);
        // UDP may lose a datagram to a busy peer; a lost fragment loses its packet (the consumer
        // counts it), but no Data may arrive altered and no Interest may be refused.
        assert!(r.satisfied > 50 && r.lost * 100 <= r.satisfied, "{prefix}: satisfied, nacks, lost, mismatches = {seen:?}");
        assert_eq!((r.nacks, r.mismatches), (0, 0), "{prefix}: satisfied, nacks, lost, mismatches = {seen:?}");
        assert_eq!(r.content_bytes, r.satisfied * PAYLOAD as u64);
    }

    stop.store(true, Ordering::Relaxed);
    let rt = nexthop.join().unwrap();
    for why in [DropReason::Fragment, DropReason::ReassemblyBad, DropReason::ReassemblyFull, DropReason::ReassemblyTimeout] {
        assert_eq!(rt.io_drops().get(why), 0, "{why:?}");
    }
    drop(ndnd);
}

/// NDNd's management tools (`ndnd fw …`, an operator's nfdc) against nexthop: each command's
/// answer decodes in NDNd's own management types, and what it changed shows in the datasets
/// the next command lists. And NDNd's `ping` against its `pingserver`.
#[test]
fn ndnds_management_tools_manage_nexthop() {
    let scratch = tempfile::Builder::new().prefix("nexthop-ndnd-tools-").tempdir().unwrap();
    let dir = scratch.path();
    let mut cfg = Config::default();
    cfg.faces.unix = dir.join("nexthop.sock").to_string_lossy().into_owned();
    cfg.faces.tcp = String::new();
    cfg.faces.udp = "127.0.0.1:0".into();
    let mut rt = Runtime::new(cfg.clone()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let t = std::thread::spawn(move || rt.run(&s).unwrap());
    let fw = |args: &[&str]| -> String {
        let out = std::process::Command::new(nexthop_lab::peers::forwarder::ndnd_binary())
            .arg("fw")
            .args(args)
            .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", cfg.faces.unix))
            .output()
            .expect("ndnd runs (scripts/setup.sh builds it)");
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "ndnd fw {args:?}: {said}");
        said
    };
    assert!(fw(&["status"]).contains("version=nexthop"));
    // NDNd's ping tools through it too: a ping server registers its prefix, pings come back.
    let mut server = std::process::Command::new(nexthop_lab::peers::forwarder::ndnd_binary())
        .args(["pingserver", "/tools/ping"])
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", cfg.faces.unix))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("ndnd runs");
    let started = std::time::Instant::now();
    while !fw(&["fib-list"]).contains("/tools/ping") {
        assert!(started.elapsed() < Duration::from_secs(20), "the ping server did not register");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pings = std::process::Command::new(nexthop_lab::peers::forwarder::ndnd_binary())
        .args(["ping", "/tools/ping", "-c", "5", "-i", "50"])
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", cfg.faces.unix))
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let said = String::from_utf8_lossy(&pings.stdout);
    assert!(said.contains("5 interests transmitted, 5 received, 0% lost"), "{said}");
    let made = fw(&["face-create", "remote=udp4://127.0.0.1:9", "persistency=permanent"]);
    assert!(made.contains("Status=200") && made.contains("FacePersistency=permanent"), "{made}");
    let id = made.lines().find_map(|l| l.trim().strip_prefix("FaceId=")).expect("a FaceId").to_string();
    let faces = fw(&["face-list"]);
    assert!(faces.contains(&format!("faceid={id} remote=udp4://127.0.0.1:9")), "{faces}");
    assert!(faces.contains("base-marking-interval=100ms default-threshold=65536B"), "{faces}");
    assert!(fw(&["route-add", "prefix=/tools", &format!("face={id}"), "cost=5"]).contains("Status=200"));
    assert!(fw(&["route-list"]).contains(&format!("prefix=/tools nexthop={id} origin=static cost=5")));
    assert!(fw(&["fib-list"]).contains(&format!("/tools nexthops={{faceid={id} (cost=5)}}")));
    assert!(fw(&["strategy-set", "prefix=/tools", "strategy=/localhost/nfd/strategy/multicast"]).contains("Status=200"));
    assert!(fw(&["strategy-list"]).contains("prefix=/tools strategy=/localhost/nfd/strategy/multicast"));
    let asf = "/localhost/nfd/strategy/asf/v=5/probing-interval~30000/max-timeouts~2";
    assert!(fw(&["strategy-set", "prefix=/tools", &format!("strategy={asf}")]).contains("Status=200"));
    assert!(fw(&["strategy-list"]).contains(&format!("prefix=/tools strategy={asf}")));
    assert!(fw(&["strategy-unset", "prefix=/tools"]).contains("Status=200"));
    let cs = fw(&["cs-info"]);
    assert!(cs.contains("capacity=16384") && cs.contains("admit=true") && cs.contains("serve=true"), "{cs}");
    assert!(fw(&["route-remove", "prefix=/tools", &format!("face={id}")]).contains("Status=200"));
    assert!(!fw(&["fib-list"]).contains("/tools"));
    assert!(fw(&["face-destroy", &format!("face={id}")]).contains("Status=200"));
    assert!(!fw(&["face-list"]).contains("udp4://127.0.0.1:9"));
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
}
