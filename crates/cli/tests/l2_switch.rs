//! `nexthop run` as a Concise switch (`[switch]`), for real: three Linux hosts on three of its
//! interfaces, in network namespaces this test makes. The hosts file knows h1; h2 and h3 are
//! learned from their first frames. The hosts resolve each other by ARP (flooded) and `ping`
//! across, the log says how many frames the switch forwarded and which hosts it learned, and a
//! hosts file with a bad line stops `nexthop run` at start, naming the line.

use std::path::Path;
use std::process::Child;

use common::{eventually, namespaces, nexthop_in, run_in as run, stop, Running};
use nexthop_io::netns::{veth, Netns};

mod common;

/// `nexthop run` in namespace `ns`, switching on `interfaces` from the hosts file `hosts`
/// (written next to its configuration in `dir`), its log in `dir/<ns>.log`.
fn switch_in(ns: &Netns, dir: &Path, interfaces: &[&str], hosts: &str) -> Child {
    let name = ns.name();
    std::fs::write(dir.join(format!("{name}.hosts")), hosts).unwrap();
    nexthop_in(ns, dir, &format!("[switch]\ninterfaces = {interfaces:?}\nhosts_file = \"{name}.hosts\"\n"))
}

#[test]
fn hosts_learned_and_known_ping_across_the_switch() {
    let Some(ns) = namespaces("sw", &["h1", "h2", "h3", "s"]) else { return };
    let [h1, h2, h3, s] = &ns[..] else { unreachable!() };
    for (i, h) in [h1, h2, h3].into_iter().enumerate() {
        veth(h, "eth0", s, &format!("s{}", i + 1), 1).unwrap();
        h.ip(&["link", "set", "eth0", "address", &format!("02:00:00:5d:00:0{}", i + 1)]).unwrap();
        h.ip(&["addr", "add", &format!("10.8.0.{}/24", i + 1), "dev", "eth0"]).unwrap();
        run(h, &["ethtool", "-K", "eth0", "tx", "off"]);
    }
    let scratch = tempfile::Builder::new().prefix("nexthop-switch-").tempdir().unwrap();
    let dir = scratch.path();
    let mut sw = Running(switch_in(s, dir, &["s1", "s2", "s3"], "# h1\n02:00:00:5d:00:01 s1\n"));
    let log = || std::fs::read_to_string(dir.join(format!("{}.log", s.name()))).unwrap();
    assert!(eventually(|| log().contains("nexthop: switching on s1, s2, s3 (1 hosts, learning)")), "{}", log());

    for (h, to) in [(h1, "10.8.0.2"), (h2, "10.8.0.3"), (h3, "10.8.0.1")] {
        let ping = run(h, &["ping", "-c", "3", "-i", "0.2", "-W", "2", to]);
        assert!(ping.contains(" 0% packet loss"), "{} → {to}: {ping}", h.name());
    }
    let status = stop(&mut sw.0);
    let text = log();
    assert!(status.success(), "{status}: {text}");
    for learned in ["host 02:00:00:5d:00:02 on s2", "host 02:00:00:5d:00:03 on s3"] {
        assert!(text.contains(learned), "{learned}: {text}");
    }
    let forwarded: u64 = text
        .split("the switch forwarded ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(forwarded >= 18, "three pings of three requests and replies: {forwarded}: {text}");
}

#[test]
fn a_bad_hosts_file_stops_the_start_naming_the_line() {
    let Some(ns) = namespaces("sb", &["s"]) else { return };
    let s = &ns[0];
    s.ip(&["link", "add", "s1", "type", "veth", "peer", "name", "s2"]).unwrap();
    let scratch = tempfile::Builder::new().prefix("nexthop-switch-").tempdir().unwrap();
    let dir = scratch.path();
    let mut fw = switch_in(s, dir, &["s1", "s2"], "02:00:00:00:00:01 s1\n02:00:00:00:00:02 s9\n");
    let status = fw.wait().unwrap();
    let text = std::fs::read_to_string(dir.join(format!("{}.log", s.name()))).unwrap();
    assert!(!status.success(), "{text}");
    assert!(text.contains("line 2") && text.contains("\"s9\" is not one of the switch's interfaces"), "{text}");
}
