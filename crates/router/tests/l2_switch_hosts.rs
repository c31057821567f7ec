//! The Concise switch between real Linux hosts: namespaces h1, h2, h3 each joined to the
//! switch's namespace by a veth pair, the switch on its three interfaces (AF_XDP ports). The
//! hosts find each other by ARP (flooded) and `ping` and `iperf3` across it; a host missing
//! from the FIB is learned from its first frame (packet-in) and installed by the test's
//! control loop, as the controller would; a frame to an address outside the FIB is dropped at
//! the switch and counted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nexthop_io::netns::{veth, Netns};
use nexthop_lookup::flat::{Othello, OthelloConfig};
use nexthop_router::l2::ports::{PortSwitch, SwitchConfig, SwitchIoCounters};
use nexthop_router::l2::{apply_delta, DropReason, PacketIn, PortRole, SwitchCounters};

fn host_mac(i: usize) -> [u8; 6] {
    [2, 0, 0, 0x5c, 0, i as u8 + 1]
}

fn text(m: [u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

fn run(ns: &Netns, cmd: &[&str]) -> String {
    let out = ns.exec(cmd).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{cmd:?} in {}: {stdout}{}", ns.name(), String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn hosts_ping_and_move_data_across_the_switch() {
    let id = std::process::id() % 100_000;
    let mut names = Vec::new();
    for role in ["h1", "h2", "h3", "sw"] {
        let Some(ns) = Netns::for_test(&format!("nl2{role}{id}")) else { return };
        names.push(ns);
    }
    let sw = names.pop().unwrap();
    let hosts = names;
    for (i, h) in hosts.iter().enumerate() {
        veth(h, "e0", &sw, &format!("s{}", i + 1), 1).unwrap();
        h.ip(&["link", "set", "e0", "address", &text(host_mac(i))]).unwrap();
        h.ip(&["addr", "add", &format!("10.9.0.{}/24", i + 1), "dev", "e0"]).unwrap();
        // A host's veth end leaves checksums to "the NIC" (the skb carries the partial sum,
        // which only a kernel receiver completes); a frame on a wire has them filled in.
        run(h, &["ethtool", "-K", "e0", "tx", "off"]);
    }
    // The FIB knows h1 and h2; h3 is learned.
    let mut cfg = OthelloConfig::new(6);
    cfg.checksum_bits = 10;
    let known: Vec<[u8; 6]> = (0..2).map(host_mac).collect();
    let othello = Othello::<u16>::construct(cfg, known.iter().enumerate().map(|(i, m)| (&m[..], i as u32))).unwrap();
    let unknown = (0x10..=0xff).map(|b| [2, 0, 0, 0x5c, 0x99, b]).find(|m| othello.query().lookup_checked(m).is_none()).unwrap();
    let fib = othello.query();

    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<PacketIn>>> = Arc::default();
    let (ready, started) = std::sync::mpsc::channel();
    let (name, stopping, seen_by_switch) = (sw.name().to_string(), stop.clone(), seen.clone());
    let edge = PortRole { flood: true, edge: true };
    let config = SwitchConfig { ports: (1..=3).map(|i| (format!("s{i}"), edge)).collect(), xdp_mode: None };
    let switch = std::thread::spawn(move || -> (SwitchCounters, SwitchIoCounters) {
        nexthop_io::netns::enter(&name).unwrap();
        let mut switch = PortSwitch::open(&config, fib).unwrap();
        ready.send(()).unwrap();
        let mut othello = othello;
        switch.run(&stopping, |switch, ins| {
            if ins.is_empty() {
                return;
            }
            seen_by_switch.lock().unwrap().extend(&ins);
            for p in ins {
                let port = u32::from(p.port.0);
                let _ = if othello.get(&p.mac).is_some() { othello.alter(&p.mac, port) } else { othello.add(&p.mac, port) };
            }
            apply_delta(switch.switch_mut().fib_mut(), othello.take_delta()).unwrap();
        });
        (switch.switch().counters().clone(), switch.io_counters().clone())
    });
    started.recv_timeout(Duration::from_secs(10)).expect("the switch starts");

    for (from, to) in [(0, 1), (1, 0), (0, 2), (2, 1)] {
        let out = run(&hosts[from], &["ping", "-c", "3", "-i", "0.2", "-W", "2", &format!("10.9.0.{}", to + 1)]);
        assert!(out.contains("3 received"), "h{} → h{}: {out}", from + 1, to + 1);
    }
    let learned = seen.lock().unwrap().clone();
    assert!(learned.iter().any(|p| p.mac == host_mac(2) && p.port.0 == 2), "h3 learned on its port: {learned:?}");

    let mut server = std::process::Command::new("ip")
        .args(["netns", "exec", hosts[1].name(), "iperf3", "-s", "-1", "-B", "10.9.0.2"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let report = run(&hosts[0], &["iperf3", "-c", "10.9.0.2", "-t", "1", "-J"]);
    let _ = server.wait();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let bytes = report["end"]["sum_received"]["bytes"].as_f64().unwrap_or_else(|| panic!("iperf3's report: {report}"));
    assert!(bytes > 1e6, "iperf3 moved {bytes} bytes");

    // Frames to an address outside the FIB stop at the switch.
    hosts[0].ip(&["neigh", "replace", "10.9.0.99", "lladdr", &text(unknown), "dev", "e0", "nud", "permanent"]).unwrap();
    let _ = hosts[0].exec(&["ping", "-c", "3", "-i", "0.2", "-W", "1", "10.9.0.99"]);

    stop.store(true, Ordering::Relaxed);
    let (counters, io) = switch.join().unwrap();
    eprintln!("{counters:?} {io:?}");
    assert!(counters.dropped(DropReason::UnknownName) >= 3, "{counters:?}");
    assert!(counters.forwarded > 20 && counters.flooded >= 3, "{counters:?}");
    assert_eq!(io, SwitchIoCounters::default());
}
