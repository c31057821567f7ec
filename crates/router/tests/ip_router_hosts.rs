//! The IP router between real Linux hosts: namespaces h1 — r — h2 joined by veth pairs, the
//! router on r's two interfaces (AF_XDP ports, the kernel's tables mirrored, TAPs for what the
//! kernel answers). `ping` crosses it (and reaches the router itself), `traceroute` shows its
//! hop (ICMP time exceeded from the kernel path), `iperf3` moves data through it; then the
//! pipeline's counters say the traffic went through the fast path.

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
        match Netns::new(&format!("nh{tag}{role}{id}")) {
            Ok(ns) => v.push(ns),
            Err(e) => {
                let skip = std::env::var("NEXTHOP_SKIP_NET_ADMIN").is_ok_and(|v| v == "1");
                assert!(skip, "making a network namespace (needs CAP_SYS_ADMIN; NEXTHOP_SKIP_NET_ADMIN=1 skips): {e}");
                return None;
            }
        }
    }
    v.try_into().ok()
}

fn run(ns: &Netns, cmd: &[&str]) -> String {
    let out = ns.exec(cmd).unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{cmd:?} in {}: {text}{}", ns.name(), String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn hosts_ping_traceroute_and_iperf3_through_the_router() {
    let Some([h1, r, h2]) = namespaces("rt") else { return };
    veth(&h1, "eth0", &r, "r0", 1).unwrap();
    veth(&r, "r1", &h2, "eth0", 1).unwrap();
    for (ns, args) in [
        (&h1, &["addr", "add", "10.0.1.2/24", "dev", "eth0"][..]),
        (&h1, &["route", "add", "default", "via", "10.0.1.1"]),
        (&r, &["addr", "add", "10.0.1.1/24", "dev", "r0"]),
        (&r, &["addr", "add", "10.0.2.1/24", "dev", "r1"]),
        (&h2, &["addr", "add", "10.0.2.2/24", "dev", "eth0"]),
        (&h2, &["route", "add", "default", "via", "10.0.2.1"]),
    ] {
        ns.ip(args).unwrap();
    }
    run(&r, &["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    // A host's veth end leaves checksums to "the NIC" (the skb carries the partial sum, which
    // only a kernel receiver completes); a frame on a wire has them filled in: so do these.
    for h in [&h1, &h2] {
        run(h, &["ethtool", "-K", "eth0", "tx", "off"]);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let (ready, started) = std::sync::mpsc::channel();
    let name = r.name().to_string();
    let stopping = stop.clone();
    let router = std::thread::spawn(move || -> (Counters, IoCounters) {
        nexthop_io::netns::enter(&name).unwrap();
        let config = RouterConfig { interfaces: vec!["r0".into(), "r1".into()], backend: None, xdp_mode: None };
        let mut router = PortRouter::open(&config).unwrap();
        while router.syncing() {
            router.sync().unwrap();
            std::thread::sleep(Duration::from_millis(1));
        }
        ready.send(()).unwrap();
        router.run(&stopping).unwrap();
        (router.counters().clone(), router.io_counters().clone())
    });
    started.recv_timeout(Duration::from_secs(10)).expect("the router starts");

    let ping = run(&h1, &["ping", "-c", "5", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    assert!(ping.contains(" 0% packet loss"), "{ping}");
    let ping = run(&h1, &["ping", "-c", "2", "-i", "0.2", "-W", "2", "10.0.1.1"]);
    assert!(ping.contains(" 0% packet loss"), "the router itself: {ping}");
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

    stop.store(true, Ordering::Relaxed);
    let (counters, io) = router.join().unwrap();
    eprintln!("router: {counters:?} {io:?}; iperf3 received {received} bytes");
    assert!(counters.forwarded > 1000, "the fast path forwarded {} frames", counters.forwarded);
    assert!(counters.punted(Punt::TtlExpired) >= 1, "traceroute's first hop went to the kernel");
    assert!(counters.punted(Punt::ForUs) >= 2, "the pings to the router went to the kernel");
}
