//! `nexthop run` as an IP router (`[router]`), for real: two of them in a chain between two
//! Linux hosts, in network namespaces this test makes — h1 — ra — rb — h2 — each router's
//! remote routes coming from its route file. `ping` crosses both, `traceroute` shows both hops,
//! and each router's log says its fast path forwarded. A route file with a bad line stops
//! `nexthop run` at start, naming the line, with none of the file's routes written.

use std::path::Path;
use std::process::Child;

use common::{eventually, namespaces, nexthop_in, run_in as run, stop, Running};
use nexthop_io::netns::{veth, Netns};

mod common;

/// `nexthop run` in namespace `ns`, routing on `interfaces` with the routes of `routes` (a
/// file written next to its configuration in `dir`), its log in `dir/<ns>.log`.
fn router_in(ns: &Netns, dir: &Path, interfaces: &[&str], routes: &str) -> Child {
    let name = ns.name();
    std::fs::write(dir.join(format!("{name}.routes")), routes).unwrap();
    nexthop_in(ns, dir, &format!("[router]\ninterfaces = {interfaces:?}\nroute_file = \"{name}.routes\"\n"))
}

#[test]
fn two_nexthop_routers_in_a_chain_carry_ping_and_traceroute() {
    let Some(ns) = namespaces("ch", &["h1", "ra", "rb", "h2"]) else { return };
    let [h1, ra, rb, h2] = &ns[..] else { unreachable!() };
    veth(h1, "eth0", ra, "a0", 1).unwrap();
    veth(ra, "a1", rb, "b0", 1).unwrap();
    veth(rb, "b1", h2, "eth0", 1).unwrap();
    for (n, args) in [
        (h1, &["addr", "add", "10.0.1.2/24", "dev", "eth0"][..]),
        (h1, &["route", "add", "default", "via", "10.0.1.1"]),
        (ra, &["addr", "add", "10.0.1.1/24", "dev", "a0"]),
        (ra, &["addr", "add", "10.0.12.1/24", "dev", "a1"]),
        (rb, &["addr", "add", "10.0.12.2/24", "dev", "b0"]),
        (rb, &["addr", "add", "10.0.2.1/24", "dev", "b1"]),
        (h2, &["addr", "add", "10.0.2.2/24", "dev", "eth0"]),
        (h2, &["addr", "add", "198.51.100.1/32", "dev", "lo"]),
        (h2, &["route", "add", "default", "via", "10.0.2.1"]),
    ] {
        n.ip(args).unwrap();
    }
    for r in [ra, rb] {
        run(r, &["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    }
    for h in [h1, h2] {
        run(h, &["ethtool", "-K", "eth0", "tx", "off"]);
    }
    let scratch = tempfile::Builder::new().prefix("nexthop-router-").tempdir().unwrap();
    let dir = scratch.path();
    let mut a =
        Running(router_in(ra, dir, &["a0", "a1"], "# h2's networks, through rb\n10.0.2.0/24 10.0.12.2\n198.51.100.0/24 10.0.12.2\n"));
    let mut b = Running(router_in(rb, dir, &["b0", "b1"], "10.0.1.0/24 10.0.12.1\n198.51.100.0/24 10.0.2.2\n"));
    let log = |r: &Netns| std::fs::read_to_string(dir.join(format!("{}.log", r.name()))).unwrap();
    for r in [ra, rb] {
        assert!(eventually(|| log(r).contains("nexthop: routing IP on")), "{}: {}", r.name(), log(r));
    }

    let ping = run(h1, &["ping", "-c", "5", "-i", "0.2", "-W", "2", "10.0.2.2"]);
    assert!(ping.contains(" 0% packet loss"), "{ping}");
    let ping = run(h1, &["ping", "-c", "5", "-i", "0.2", "-W", "2", "198.51.100.1"]);
    assert!(ping.contains(" 0% packet loss"), "a route of the file: {ping}");
    let trace = run(h1, &["traceroute", "-n", "-q", "1", "-w", "2", "198.51.100.1"]);
    let hops: Vec<&str> = trace.lines().skip(1).filter_map(|l| l.split_whitespace().nth(1)).collect();
    assert_eq!(hops, ["10.0.1.1", "10.0.12.2", "198.51.100.1"], "{trace}");

    for (r, fw) in [(ra, &mut a), (rb, &mut b)] {
        let status = stop(&mut fw.0);
        assert!(status.success(), "{}: {status}: {}", r.name(), log(r));
        let text = log(r);
        let forwarded: u64 = text
            .split("the IP router forwarded ")
            .nth(1)
            .and_then(|s| s.split(';').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: {text}", r.name()));
        assert!(forwarded >= 10, "{}'s fast path forwarded {forwarded}: {text}", r.name());
    }
}

#[test]
fn a_bad_route_file_stops_the_start_naming_the_line() {
    let Some(ns) = namespaces("bf", &["r"]) else { return };
    let r = &ns[0];
    for args in [
        &["link", "add", "r0", "type", "veth", "peer", "name", "r1"][..],
        &["link", "set", "r0", "up"],
        &["addr", "add", "10.0.1.1/24", "dev", "r0"],
    ] {
        r.ip(args).unwrap();
    }
    let scratch = tempfile::Builder::new().prefix("nexthop-router-").tempdir().unwrap();
    let dir = scratch.path();
    let mut fw = router_in(r, dir, &["r0", "r1"], "192.0.2.0/24 10.0.1.2\n198.51.100.1/24 10.0.1.2\n");
    let status = fw.wait().unwrap();
    let text = std::fs::read_to_string(dir.join(format!("{}.log", r.name()))).unwrap();
    assert!(!status.success(), "{text}");
    assert!(text.contains("line 2") && text.contains("host bits"), "{text}");
    let routes = run(r, &["ip", "route", "show"]);
    assert!(!routes.contains("192.0.2.0/24"), "nothing of the file was written: {routes}");
}
