//! The IP router between real Linux hosts: namespaces h1 — r — h2 joined by veth pairs, the
//! router on r's two interfaces (AF_XDP ports, the kernel's tables mirrored, TAPs for what the
//! kernel answers). `ping` and `ping -6` cross it (and reach the router itself: IPv6 neighbour
//! discovery stays with the kernel), `traceroute` shows its hop (ICMP time exceeded from the
//! kernel path), `iperf3` moves data through it; then the pipeline's counters say the traffic
//! went through the fast path.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_io::netns::{veth, Netns};
use nexthop_router::ip::ports::{IoCounters, PortRouter, RouterConfig};
use nexthop_router::ip::{Counters, Punt};

fn namespaces(tag: &str) -> Option<[Netns; 3]> {
    let id = std::process::id() % 100_000;
    let mut v = Vec::new();
    for role in ["h1", "r", "h2"] {
        v.push(Netns::for_test(&format!("nh{tag}{role}{id}"))?);
    }
    v.try_into().ok()
}

fn run(ns: &Netns, cmd: &[&str]) -> String {
    let out = ns.exec(cmd).unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{cmd:?} in {}: {text}{}", ns.name(), String::from_utf8_lossy(&out.stderr));
    text
}

/// The router running on `interfaces` of namespace `ns`, in a thread of its own.
struct RunningRouter {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(Counters, IoCounters)>,
}

impl RunningRouter {
    /// Starts it and waits for the first dump of the kernel's tables.
    fn start(ns: &Netns, interfaces: &[&str]) -> RunningRouter {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready, started) = std::sync::mpsc::channel();
        let (name, stopping) = (ns.name().to_string(), stop.clone());
        let config = RouterConfig { interfaces: interfaces.iter().map(|s| s.to_string()).collect(), xdp_mode: None };
        let thread = std::thread::spawn(move || {
            nexthop_io::netns::enter(&name).unwrap();
            let mut router = PortRouter::open(&config).unwrap();
            while router.syncing() {
                router.sync().unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
            ready.send(()).unwrap();
            router.run(&stopping).unwrap();
            for (name, c) in router.port_counters() {
                eprintln!("port {name}: {c:?}");
            }
            (router.counters().clone(), router.io_counters().clone())
        });
        started.recv_timeout(Duration::from_secs(10)).expect("the router starts");
        RunningRouter { stop, thread }
    }

    /// Stops it: what it counted.
    fn stop(self) -> (Counters, IoCounters) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Runs each `ip` command in its namespace, in order.
fn ip_all(steps: &[(&Netns, &[&str])]) {
    for (ns, args) in steps {
        ns.ip(args).unwrap();
    }
}

/// Packets interface `dev` of `ns` has sent.
fn tx_packets(ns: &Netns, dev: &str) -> u64 {
    run(ns, &["cat", &format!("/sys/class/net/{dev}/statistics/tx_packets")]).trim().parse().unwrap()
}

#[test]
fn hosts_ping_traceroute_and_iperf3_through_the_router() {
    let Some([h1, r, h2]) = namespaces("rt") else { return };
    veth(&h1, "eth0", &r, "r0", 1).unwrap();
    veth(&r, "r1", &h2, "eth0", 1).unwrap();
    for (ns, dev) in [(&h1, "eth0"), (&r, "r0"), (&r, "r1"), (&h2, "eth0")] {
        run(ns, &["sysctl", "-qw", &format!("net.ipv6.conf.{dev}.disable_ipv6=0")]);
    }
    ip_all(&[
        (&h1, &["addr", "add", "10.0.1.2/24", "dev", "eth0"][..]),
        (&h1, &["route", "add", "default", "via", "10.0.1.1"]),
        (&r, &["addr", "add", "10.0.1.1/24", "dev", "r0"]),
        (&r, &["addr", "add", "10.0.2.1/24", "dev", "r1"]),
        (&h2, &["addr", "add", "10.0.2.2/24", "dev", "eth0"]),
        (&h2, &["route", "add", "default", "via", "10.0.2.1"]),
        (&h1, &["addr", "add", "2001:db8:1::2/64", "dev", "eth0", "nodad"]),
        (&h1, &["-6", "route", "add", "default", "via", "2001:db8:1::1"]),
        (&r, &["addr", "add", "2001:db8:1::1/64", "dev", "r0", "nodad"]),
        (&r, &["addr", "add", "2001:db8:2::1/64", "dev", "r1", "nodad"]),
        (&h2, &["addr", "add", "2001:db8:2::2/64", "dev", "eth0", "nodad"]),
        (&h2, &["-6", "route", "add", "default", "via", "2001:db8:2::1"]),
    ]);
    run(&r, &["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    run(&r, &["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"]);
    // A host's veth end leaves checksums to "the NIC" (the skb carries the partial sum, which
    // only a kernel receiver completes); a frame on a wire has them filled in: so do these.
    for h in [&h1, &h2] {
        run(h, &["ethtool", "-K", "eth0", "tx", "off"]);
    }

    let router = RunningRouter::start(&r, &["r0", "r1"]);

    let ping = run(&h1, &["ping", "-c", "5", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    assert!(ping.contains(" 0% packet loss"), "{ping}");
    let ping = run(&h1, &["ping", "-c", "2", "-i", "0.2", "-W", "2", "10.0.1.1"]);
    assert!(ping.contains(" 0% packet loss"), "the router itself: {ping}");
    let ping = run(&h1, &["ping", "-6", "-c", "5", "-i", "0.2", "-W", "2", "2001:db8:2::2"]);
    assert!(ping.contains(" 0% packet loss"), "IPv6: {ping}");
    let ping = run(&h1, &["ping", "-6", "-c", "2", "-i", "0.2", "-W", "2", "2001:db8:1::1"]);
    assert!(ping.contains(" 0% packet loss"), "IPv6, the router itself: {ping}");
    let trace = run(&h1, &["traceroute", "-n", "-q", "1", "-w", "2", "10.0.2.2"]);
    let hops: Vec<&str> = trace.lines().skip(1).filter_map(|l| l.split_whitespace().nth(1)).collect();
    assert_eq!(hops, ["10.0.1.1", "10.0.2.2"], "{trace}");

    let mut server = Command::new("ip")
        .args(["netns", "exec", h2.name(), "iperf3", "-s", "-1", "-B", "10.0.2.2"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let report = run(&h1, &["iperf3", "-c", "10.0.2.2", "-t", "2", "-J"]);
    let _ = server.wait();
    let received: f64 = report
        .split("\"sum_received\"")
        .nth(1)
        .and_then(|s| s.split("\"bytes\":").nth(1))
        .and_then(|s| s.split([',', '\n']).next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("iperf3's report: {report}"));
    assert!(received > 1e6, "iperf3 moved {received} bytes");

    let (counters, io) = router.stop();
    eprintln!("router: {counters:?} {io:?}; iperf3 received {received} bytes");
    assert!(counters.forwarded > 1000, "the fast path forwarded {} frames", counters.forwarded);
    assert!(counters.punted(Punt::TtlExpired) >= 1, "traceroute's first hop went to the kernel");
    assert!(counters.punted(Punt::ForUs) >= 2, "the pings to the router went to the kernel");
}

/// h1 — r — h2 with two links between r and h2, and 192.0.2.1 on h2's loopback: BIRD 2
/// announces 192.0.2.0/24 via the first into r's kernel table and the router forwards on it;
/// then the route is replaced by one via the second link under a ping flood, and the traffic
/// moves to it.
#[test]
fn bird_routes_and_a_route_replaced_under_a_ping_flood() {
    let Some([h1, r, h2]) = namespaces("bd") else { return };
    veth(&h1, "eth0", &r, "r0", 1).unwrap();
    veth(&r, "r1", &h2, "eth0", 1).unwrap();
    veth(&r, "r2", &h2, "eth1", 1).unwrap();
    ip_all(&[
        (&h1, &["addr", "add", "10.0.1.2/24", "dev", "eth0"][..]),
        (&h1, &["route", "add", "default", "via", "10.0.1.1"]),
        (&r, &["addr", "add", "10.0.1.1/24", "dev", "r0"]),
        (&r, &["addr", "add", "10.0.2.1/24", "dev", "r1"]),
        (&r, &["addr", "add", "10.0.3.1/24", "dev", "r2"]),
        (&h2, &["addr", "add", "10.0.2.2/24", "dev", "eth0"]),
        (&h2, &["addr", "add", "10.0.3.2/24", "dev", "eth1"]),
        (&h2, &["addr", "add", "192.0.2.1/32", "dev", "lo"]),
        (&h2, &["route", "add", "default", "via", "10.0.2.1"]),
    ]);
    run(&r, &["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    // h2 answers on whichever link a request came in (no reverse-path check against its default).
    run(&h2, &["sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0"]);
    for (h, dev) in [(&h1, "eth0"), (&h2, "eth0"), (&h2, "eth1")] {
        run(h, &["ethtool", "-K", dev, "tx", "off"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("bird.conf");
    std::fs::write(
        &conf,
        "router id 10.0.1.1;\nprotocol device {}\nprotocol kernel { ipv4 { export all; }; }\n\
         protocol static { ipv4; route 192.0.2.0/24 via 10.0.2.2; }\n",
    )
    .unwrap();
    let socket = dir.path().join("bird.ctl");
    let mut bird = Command::new("ip")
        .args(["netns", "exec", r.name(), "bird", "-f", "-c"])
        .arg(&conf)
        .arg("-s")
        .arg(&socket)
        .stdout(Stdio::null())
        .spawn()
        .expect("bird (scripts/setup.sh installs bird2)");
    let start = std::time::Instant::now();
    while !run(&r, &["ip", "route", "show", "192.0.2.0/24"]).contains("proto bird") {
        assert!(start.elapsed() < Duration::from_secs(10), "BIRD's route never reached the kernel");
        std::thread::sleep(Duration::from_millis(50));
    }
    let router = RunningRouter::start(&r, &["r0", "r1", "r2"]);
    let ping = run(&h1, &["ping", "-c", "5", "-i", "0.2", "-W", "2", "192.0.2.1"]);
    assert!(ping.contains(" 0% packet loss"), "on BIRD's route: {ping}");

    // The flood runs while the route moves to the second link.
    let (r1_before, r2_before) = (tx_packets(&r, "r1"), tx_packets(&r, "r2"));
    let flood = Command::new("ip")
        .args(["netns", "exec", h1.name(), "ping", "-f", "-c", "20000", "-W", "1", "192.0.2.1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    run(&r, &["ip", "route", "replace", "192.0.2.0/24", "via", "10.0.3.2", "proto", "static"]);
    let out = flood.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    let (r1_after, r2_after) = (tx_packets(&r, "r1"), tx_packets(&r, "r2"));
    let _ = bird.kill();
    let _ = bird.wait();
    let (counters, _) = router.stop();
    let received: u64 = report
        .split(" packets transmitted, ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("ping's report: {report}"));
    assert!(received >= 19_800, "the flood lost more than 1% over the change: {report}");
    assert!(r1_after - r1_before > 1000, "the flood went by the first link before the change");
    assert!(r2_after - r2_before > 1000, "and by the second after it ({} frames)", r2_after - r2_before);
    assert_eq!(counters.punted(Punt::NoRoute), 0, "every route was in the FIB: {counters:?}");
    // Until the new gateway's address is resolved, its frames go to the kernel (which resolves
    // it and forwards them meanwhile): a few, when the route moves before any ARP for it.
    let waited = counters.punted(Punt::NoNeighbour);
    assert!(waited <= 100, "frames waiting for the new gateway's address: {counters:?}");
    assert!(counters.forwarded + waited > 40_000, "the fast path forwarded the flood and its replies: {counters:?}");
}
