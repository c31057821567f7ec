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

/// Hosts h1..h3 on the switch's interfaces s1..s3: MAC 02:00:00:5d:0N:0i, address 10.8.N.i/24
/// (N = `net`), their checksums computed as a NIC would.
fn hosts_on(s: &Netns, hosts: [&Netns; 3], net: u8) {
    for (i, h) in hosts.into_iter().enumerate() {
        veth(h, "eth0", s, &format!("s{}", i + 1), 1).unwrap();
        h.ip(&["link", "set", "eth0", "address", &format!("02:00:00:5d:0{net}:0{}", i + 1)]).unwrap();
        h.ip(&["addr", "add", &format!("10.8.{net}.{}/24", i + 1), "dev", "eth0"]).unwrap();
        run(h, &["ethtool", "-K", "eth0", "tx", "off"]);
    }
}

#[test]
fn hosts_learned_and_known_ping_across_the_switch() {
    let Some(ns) = namespaces("sw", &["h1", "h2", "h3", "s"]) else { return };
    let [h1, h2, h3, s] = &ns[..] else { unreachable!() };
    hosts_on(s, [h1, h2, h3], 0);
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

/// The switch's control channel from Python's `grpcio` (a client nexthop did not write, its
/// stubs generated from the repository's `.proto`): it reads the switch, writes two hosts that
/// then ping each other, streams the packet-in of a third host's first frame, reads counters,
/// and sees bad writes and deltas refused, typed, and a delta its client abandons halfway
/// change nothing, while forwarding goes on.
#[test]
fn a_python_grpc_client_drives_the_switch() {
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv-grpc/bin/python");
    let Some(ns) = namespaces("sg", &["h1", "h2", "h3", "s"]) else { return };
    let [h1, h2, h3, s] = &ns[..] else { unreachable!() };
    hosts_on(s, [h1, h2, h3], 1);
    let scratch = tempfile::Builder::new().prefix("nexthop-switch-").tempdir().unwrap();
    let dir = scratch.path();
    let socket = dir.join("s.control");
    let section =
        format!("[switch]\ninterfaces = [\"s1\", \"s2\", \"s3\"]\nlearn = false\nname = \"s\"\ncontrol = \"unix:{}\"\n", socket.display());
    let _sw = Running(nexthop_in(s, dir, &section));
    let log = || std::fs::read_to_string(dir.join(format!("{}.log", s.name()))).unwrap();
    assert!(eventually(|| log().contains("nexthop: switching on s1, s2, s3 (0 hosts, control unix:")), "{}", log());

    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/../control/proto");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/switch_client.py");
    let address = format!("unix:{}", socket.display());
    let out = std::process::Command::new(python)
        .args([script, proto, &address, h1.name(), h2.name(), h3.name()])
        .output()
        .expect("the venv's python runs (scripts/setup.sh installs grpcio in .venv-grpc)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}\n{}", String::from_utf8_lossy(&out.stderr), log());
    let r: serde_json::Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(r["ports"], serde_json::json!(["s1", "s2", "s3"]), "{r}");
    assert_eq!((r["cell_bits"].as_u64(), r["port_bits"].as_u64(), r["checksum_bits"].as_u64()), (Some(16), Some(6), Some(10)), "{r}");
    assert_eq!(r["hosts"], 2, "{r}");
    assert_eq!((r["h1_h2"].as_bool(), r["h2_h1_after"].as_bool()), (Some(true), Some(true)), "pings across: {r}\n{}", log());
    assert_eq!(r["h3_reported"], true, "{r}");
    assert!(r["packet_ins"].as_array().unwrap().contains(&serde_json::json!(["02:00:00:5d:01:03", 2])), "{r}");
    let refusals = serde_json::json!({
        "short_mac": "INVALID_ARGUMENT",
        "no_such_port": "INVALID_ARGUMENT",
        "stale_patch": "FAILED_PRECONDITION",
        "foreign_patch": "FAILED_PRECONDITION",
        "corrupt_structure": "INVALID_ARGUMENT",
        "empty_delta": "INVALID_ARGUMENT",
    });
    assert_eq!(r["refusals"], refusals, "{r}");
    assert_eq!(r["cut_short_changed_nothing"], true, "{r}");
    assert!(r["forwarded"].as_u64().unwrap() >= 12, "two pings of three requests and replies: {r}");
    assert!(r["drops"]["unknown-name"].as_u64().unwrap() >= 1, "h1's answer to h3, whom the FIB lacks: {r}");
    assert_eq!((r["deltas_applied"].as_u64(), r["deltas_refused"].as_u64()), (Some(1), Some(4)), "{r}");
}
