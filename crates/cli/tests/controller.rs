//! `nexthop controller` and three `nexthop run` switches, for real, in network namespaces this
//! test makes: s1 — s2 — s3 in a line, hosts h1 on s1 (known from the topology file), h2 on s2,
//! h3 and h4 on s3 (learned from their first frames). Each switch runs in its own namespace;
//! the controller reaches them on Unix sockets.
//!
//! - Every host pings every other across the switches, and `iperf3` moves data h1 → h4.
//! - A frame to a MAC address outside the FIB is dropped at the first switch, and counted there.
//! - h1 moves to s3 (its MAC and address now on a port there): it is reachable again within
//!   100 ms of its first frame there; the controller logs the move.
//! - s2 restarts with an empty FIB: the controller gives it the FIB back, and pings cross it.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{eventually, namespaces, nexthop_in, run_in as run, stop, Running};
use nexthop_control::address::ControlAddress;
use nexthop_control::blocking::BlockingSwitch;
use nexthop_io::netns::{veth, Netns};

mod common;

fn mac(i: u8) -> String {
    format!("02:00:00:5d:02:0{i}")
}

fn ip(i: u8) -> String {
    format!("10.8.2.{i}")
}

/// Switch `sN` in its namespace, its control channel at `dir/sN.control`.
fn switch_in(ns: &Netns, dir: &Path, n: usize, interfaces: &[&str]) -> Child {
    let control = dir.join(format!("s{n}.control"));
    let section =
        format!("[switch]\ninterfaces = {interfaces:?}\nlearn = false\nname = \"s{n}\"\ncontrol = \"unix:{}\"\n", control.display());
    nexthop_in(ns, dir, &section)
}

/// The icmp_seq of the first reply in `ping` output.
fn first_reply(ping: &str) -> Option<u32> {
    ping.lines().find(|l| l.contains("bytes from"))?.split("icmp_seq=").nth(1)?.split_whitespace().next()?.parse().ok()
}

#[test]
fn three_switches_under_the_controller_carry_hosts_that_move_and_survive_a_restart() {
    let Some(ns) = namespaces("ct", &["h1", "h2", "h3", "h4", "s1", "s2", "s3"]) else { return };
    let [h1, h2, h3, h4, s1, s2, s3] = &ns[..] else { unreachable!() };
    veth(s1, "s1s2", s2, "s2s1", 1).unwrap();
    veth(s2, "s2s3", s3, "s3s2", 1).unwrap();
    for (i, (h, s, port)) in [(h1, s1, "s1h1"), (h2, s2, "s2h2"), (h3, s3, "s3h3"), (h4, s3, "s3h4")].into_iter().enumerate() {
        let i = i as u8 + 1;
        veth(h, "eth0", s, port, 1).unwrap();
        h.ip(&["link", "set", "eth0", "address", &mac(i)]).unwrap();
        h.ip(&["addr", "add", &format!("{}/24", ip(i)), "dev", "eth0"]).unwrap();
        run(h, &["ethtool", "-K", "eth0", "tx", "off"]);
    }
    // h1's second interface, on s3, down until it moves there: same MAC.
    veth(h1, "eth1", s3, "s3h1", 1).unwrap();
    h1.ip(&["link", "set", "eth1", "down"]).unwrap();
    h1.ip(&["link", "set", "eth1", "address", &mac(1)]).unwrap();
    run(h1, &["ethtool", "-K", "eth1", "tx", "off"]);

    let scratch = tempfile::Builder::new().prefix("nexthop-controller-").tempdir().unwrap();
    let dir = scratch.path();
    let ports: [&[&str]; 3] = [&["s1h1", "s1s2"], &["s2s1", "s2h2", "s2s3"], &["s3s2", "s3h3", "s3h4", "s3h1"]];
    let mut switches: Vec<Running> = [s1, s2, s3].iter().enumerate().map(|(i, s)| Running(switch_in(s, dir, i + 1, ports[i]))).collect();
    let log_of = |ns: &Netns| std::fs::read_to_string(dir.join(format!("{}.log", ns.name()))).unwrap_or_default();
    for s in [s1, s2, s3] {
        assert!(eventually(|| log_of(s).contains("nexthop: switching on")), "{}", log_of(s));
    }
    let control = |n: usize| format!("unix:{}", dir.join(format!("s{n}.control")).display());
    let topology = format!(
        "[[switch]]\nname = \"s1\"\ncontrol = \"{}\"\n[[switch]]\nname = \"s2\"\ncontrol = \"{}\"\n[[switch]]\nname = \"s3\"\ncontrol = \"{}\"\n\
         [[link]]\na = \"s1:s1s2\"\nb = \"s2:s2s1\"\n[[link]]\na = \"s2:s2s3\"\nb = \"s3:s3s2\"\n\
         [[host]]\nmac = \"{}\"\nat = \"s1:s1h1\"\n",
        control(1),
        control(2),
        control(3),
        mac(1)
    );
    std::fs::write(dir.join("topology.toml"), topology).unwrap();
    let controller_log = dir.join("controller.log");
    let mut controller = Running(
        Command::new(env!("CARGO_BIN_EXE_nexthop"))
            .args(["controller", "-t"])
            .arg(dir.join("topology.toml"))
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&controller_log).unwrap())
            .spawn()
            .unwrap(),
    );
    let log = || std::fs::read_to_string(&controller_log).unwrap();
    for s in ["s1", "s2", "s3"] {
        assert!(eventually(|| log().contains(&format!("controller: {s} connected"))), "{}", log());
    }

    // Each host's first frame (an ARP request, flooded) makes its switch report it.
    for h in [h2, h3, h4] {
        let _ = h.exec(&["ping", "-c", "1", "-W", "0.2", "10.8.2.254"]);
    }
    for (i, at) in [(2, "s2:s2h2"), (3, "s3:s3h3"), (4, "s3:s3h4")] {
        assert!(eventually(|| log().contains(&format!("host {} at {at}", mac(i)))), "{}", log());
    }
    let hosts = [h1, h2, h3, h4];
    for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (3, 0)] {
        let ping = run(hosts[a], &["ping", "-c", "3", "-i", "0.2", "-W", "2", &ip(b as u8 + 1)]);
        assert!(ping.contains(" 0% packet loss"), "h{} → h{}: {ping}\n{}", a + 1, b + 1, log());
    }
    let mut server =
        Command::new("ip").args(["netns", "exec", h4.name(), "iperf3", "-s", "-1", "-B", &ip(4)]).stdout(Stdio::null()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let report = run(h1, &["iperf3", "-c", &ip(4), "-t", "1", "-J"]);
    let _ = server.wait();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let bytes = report["end"]["sum_received"]["bytes"].as_f64().unwrap_or_else(|| panic!("iperf3's report: {report}"));
    assert!(bytes > 1e6, "iperf3 moved {bytes} bytes across three switches");

    // A frame to a MAC outside the FIB stops at s1, counted; s2 never sees it.
    let address = |n: usize| control(n).parse::<ControlAddress>().unwrap();
    let (mut c1, mut c2) = (BlockingSwitch::new(&address(1)).unwrap(), BlockingSwitch::new(&address(2)).unwrap());
    let (before1, before2) = (c1.counters().unwrap(), c2.counters().unwrap());
    h1.ip(&["neigh", "replace", "10.8.2.99", "lladdr", "02:00:00:5e:99:99", "dev", "eth0", "nud", "permanent"]).unwrap();
    let _ = h1.exec(&["ping", "-c", "5", "-i", "0.05", "-W", "0.2", "10.8.2.99"]);
    let (after1, after2) = (c1.counters().unwrap(), c2.counters().unwrap());
    assert!(after1.dropped("unknown-name") >= before1.dropped("unknown-name") + 5, "{before1:?} {after1:?}");
    assert_eq!(after2.dropped("unknown-name"), before2.dropped("unknown-name"), "{after2:?}");
    assert!(c1.info().unwrap().controlled);

    // h1 moves to s3: the same MAC and address on its port s3h1. Its first frame there is
    // reported; the controller moves it in every FIB. A ping every 2 ms from then on tells
    // when h2's replies reach it again.
    h1.ip(&["link", "set", "eth0", "down"]).unwrap();
    h1.ip(&["addr", "flush", "dev", "eth0"]).unwrap();
    h1.ip(&["addr", "add", &format!("{}/24", ip(1)), "dev", "eth1"]).unwrap();
    h1.ip(&["neigh", "replace", &ip(2), "lladdr", &mac(2), "dev", "eth1", "nud", "permanent"]).unwrap();
    h1.ip(&["link", "set", "eth1", "up"]).unwrap();
    let ping = run_any(h1, &["ping", "-i", "0.002", "-c", "100", "-W", "1", &ip(2)]);
    let seq = first_reply(&ping).unwrap_or_else(|| panic!("no reply after the move: {ping}\n{}", log()));
    let move_ms = (seq - 1) * 2;
    eprintln!("h1 reachable again {move_ms} ms after its first frame on s3 (icmp_seq {seq})");
    assert!(move_ms <= 100, "{move_ms} ms: {ping}\n{}", log());
    assert!(log().contains(&format!("host {} moved to s3:s3h1 (was s1:s1h1)", mac(1))), "{}", log());

    // s2 restarts with nothing: the controller sends it its FIB again.
    let status = stop(&mut switches[1].0);
    assert!(status.success(), "{status}: {}", log_of(s2));
    switches[1] = Running(switch_in(s2, dir, 2, ports[1]));
    assert!(eventually(|| log().matches("controller: s2 connected").count() == 2), "{}", log());
    let mut c2 = BlockingSwitch::new(&address(2)).unwrap();
    assert!(eventually(|| c2.info().is_ok_and(|i| i.controlled)), "s2 gets a FIB from the controller: {}", log());
    for (a, b) in [(1, 0), (1, 3), (0, 1)] {
        let ping = run(hosts[a], &["ping", "-c", "3", "-i", "0.2", "-W", "2", &ip(b as u8 + 1)]);
        assert!(ping.contains(" 0% packet loss"), "after s2's restart, h{} → h{}: {ping}\n{}", a + 1, b + 1, log());
    }

    let status = stop(&mut controller.0);
    assert!(status.success(), "{status}: {}", log());
    assert!(log().contains("nexthop: controller stopped: 4 syncs"), "{}", log());
    for (s, running) in [s1, s2, s3].into_iter().zip(&mut switches) {
        let status = stop(&mut running.0);
        assert!(status.success(), "{status}: {}", log_of(s));
    }
}

/// Runs `cmd` in `ns` and returns its output, whatever its exit status.
fn run_any(ns: &Netns, cmd: &[&str]) -> String {
    String::from_utf8_lossy(&ns.exec(cmd).unwrap().stdout).to_string()
}
