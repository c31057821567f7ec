//! The `l2-switch` experiment's host moves, end to end: two Concise switches under nexthop's
//! controller, a Linux host that moves from one to the other, timed by its pings.
//!
//! # Overview
//! - Namespaces: hosts `h1` and `h2`, switches `s1` and `s2` (`s1s2` — `s2s1` between them);
//!   `h1` is on `s1` (`eth0`) and has a second interface on `s2` (`eth1`, the same MAC, down);
//!   `h2` is on `s2`. Each switch is a `PortSwitch` thread serving its gRPC control channel
//!   (`nexthop_control::agent`) on a Unix socket; the controller (`nexthop_control::controller`)
//!   runs on a thread of its own, learning both hosts from their first frames.
//! - A move: `h1`'s address leaves the interface it was on (taken down) for the other one
//!   (brought up), with a static neighbour entry for `h2`, so its first frame on the new switch
//!   is a ping. It pings every 2 ms; `h2`'s replies reach it only once the controller has moved
//!   it in `s2`'s FIB (and `s1`'s). `move_ms` = 2 ms × the pings that went unanswered before
//!   the first reply. Moves go back and forth.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use nexthop_control::address::ControlAddress;
use nexthop_control::agent::{self, AgentServer};
use nexthop_control::blocking::BlockingSwitch;
use nexthop_control::controller::session;
use nexthop_control::controller::topology::{PortRef, SwitchSpec, Topology};
use nexthop_control::switch_fib::{fib_config, SwitchFib};
use nexthop_io::netns::{veth, Netns};
use nexthop_io::XdpMode;
use nexthop_lookup::flat::Othello;
use nexthop_router::l2::ports::{PortSwitch, SwitchConfig};
use nexthop_router::l2::{PortRole, SwitchCounters};

use super::ports::{enter, namespace, spawn_opened};

const MAC_H1: &str = "02:00:00:6d:00:01";
const MAC_H2: &str = "02:00:00:6d:00:02";
const IP_H1: &str = "10.8.3.1";
const IP_H2: &str = "10.8.3.2";
/// The pings' interval (ms) and how many a move may take before it counts as failed.
const PING_MS: u32 = 2;
const PINGS: u32 = 500;

/// A Concise switch thread under its control channel: an empty FIB until a controller pushes
/// one, the channel's server on the calling thread's side (off the switching core). Also the
/// update phase's switch (`l2_switch.rs`).
pub(crate) struct InProcessSwitch {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<anyhow::Result<SwitchCounters>>,
    server: AgentServer,
}

impl InProcessSwitch {
    /// Starts switch `name` on `interfaces` of namespace `ns`, on `core`, its channel at `address`.
    pub(crate) fn start(
        ns: &Netns,
        name: &str,
        interfaces: &[&str],
        address: &ControlAddress,
        core: usize,
        xdp_mode: Option<XdpMode>,
    ) -> anyhow::Result<InProcessSwitch> {
        let interfaces: Vec<String> = interfaces.iter().map(|i| i.to_string()).collect();
        let (agent, server) = agent::start(address, name, interfaces.clone())?;
        let stop = Arc::new(AtomicBool::new(false));
        let (ns_name, halt) = (ns.name().to_string(), stop.clone());
        let open = move || -> anyhow::Result<_> {
            enter(&ns_name)?;
            let (own, query) = SwitchFib::new(Othello::new(fib_config())?, interfaces.len());
            let edge = PortRole { flood: true, edge: true };
            let config = SwitchConfig { ports: interfaces.iter().map(|i| (i.clone(), edge)).collect(), xdp_mode };
            Ok(((PortSwitch::open(&config, query)?, own), ()))
        };
        let body = move |(mut switch, mut own): (PortSwitch<agent::Fib>, SwitchFib)| {
            switch.run(&halt, |sw, seen| {
                agent.serve(sw, &mut own);
                agent.publish(&seen);
            });
            Ok(switch.switch().counters().clone())
        };
        let (thread, ()) = spawn_opened(core, "a switch", open, body)?;
        Ok(InProcessSwitch { stop, thread, server })
    }

    /// Stops the switch and its channel; what the switch counted.
    pub(crate) fn stop(self) -> anyhow::Result<SwitchCounters> {
        self.stop.store(true, Ordering::Relaxed);
        let done = self.thread.join().map_err(|_| anyhow::anyhow!("a switch thread panicked"))?;
        self.server.stop();
        done
    }
}

fn ip(ns: &Netns, args: &[&str]) -> anyhow::Result<()> {
    ns.ip(args).with_context(|| format!("ip {} in {}", args.join(" "), ns.name()))
}

/// The icmp_seq of the first reply in `ping`'s output.
fn first_reply(ping: &str) -> Option<u32> {
    ping.lines().find(|l| l.contains("bytes from"))?.split("icmp_seq=").nth(1)?.split_whitespace().next()?.parse().ok()
}

/// `moves` host moves between two switches under the controller: each one's milliseconds, and
/// what the controller counted.
pub(crate) fn measure(moves: usize, core: usize) -> anyhow::Result<(Vec<f64>, session::ControllerCounters)> {
    let ns = |role: &str| namespace("nxm", role);
    let (h1, h2, s1, s2) = (ns("h1")?, ns("h2")?, ns("s1")?, ns("s2")?);
    veth(&s1, "s1s2", &s2, "s2s1", 1)?;
    veth(&h1, "eth0", &s1, "s1h1", 1)?;
    veth(&h2, "eth0", &s2, "s2h2", 1)?;
    veth(&h1, "eth1", &s2, "s2h1", 1)?;
    ip(&h1, &["link", "set", "eth1", "down"])?;
    for (h, dev, mac) in [(&h1, "eth0", MAC_H1), (&h1, "eth1", MAC_H1), (&h2, "eth0", MAC_H2)] {
        ip(h, &["link", "set", dev, "address", mac])?;
    }
    ip(&h1, &["addr", "add", &format!("{IP_H1}/24"), "dev", "eth0"])?;
    ip(&h2, &["addr", "add", &format!("{IP_H2}/24"), "dev", "eth0"])?;

    // The sockets are removed when the switches stop.
    let address = |n: u8| ControlAddress::Unix(std::env::temp_dir().join(format!("nexthop-l2-moves-{}-s{n}.control", std::process::id())));
    let switches = [
        InProcessSwitch::start(&s1, "s1", &["s1h1", "s1s2"], &address(1), core, None)?,
        InProcessSwitch::start(&s2, "s2", &["s2s1", "s2h2", "s2h1"], &address(2), core, None)?,
    ];
    let port = |switch: usize, interface: &str| PortRef { switch, interface: interface.to_string() };
    let topology = Topology {
        switches: vec![SwitchSpec { name: "s1".into(), control: address(1) }, SwitchSpec { name: "s2".into(), control: address(2) }],
        links: vec![(port(0, "s1s2"), port(1, "s2s1"))],
        hosts: Vec::new(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let halt = stop.clone();
    let controller = std::thread::spawn(move || session::run(topology, halt));

    let measured = (|| -> anyhow::Result<Vec<f64>> {
        for n in [1, 2] {
            let mut c = BlockingSwitch::new(&address(n))?;
            let t0 = Instant::now();
            while !c.info().is_ok_and(|i| i.controlled) {
                anyhow::ensure!(t0.elapsed() < Duration::from_secs(10), "switch s{n} never got the controller's FIB");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // Both hosts learned from their first frames.
        let t0 = Instant::now();
        while !String::from_utf8_lossy(&h1.exec(&["ping", "-c", "2", "-i", "0.05", "-W", "1", IP_H2])?.stdout).contains(" 0% packet loss") {
            anyhow::ensure!(t0.elapsed() < Duration::from_secs(10), "h1 never reached h2 through the two switches");
        }
        let mut out = Vec::with_capacity(moves);
        for k in 0..moves {
            let (from, to) = if k % 2 == 0 { ("eth0", "eth1") } else { ("eth1", "eth0") };
            ip(&h1, &["link", "set", from, "down"])?;
            ip(&h1, &["addr", "flush", "dev", from])?;
            ip(&h1, &["addr", "add", &format!("{IP_H1}/24"), "dev", to])?;
            ip(&h1, &["neigh", "replace", IP_H2, "lladdr", MAC_H2, "dev", to, "nud", "permanent"])?;
            ip(&h1, &["link", "set", to, "up"])?;
            let interval = format!("0.{PING_MS:03}");
            let ping = h1.exec(&["ping", "-i", &interval, "-c", &PINGS.to_string(), "-w", "2", "-W", "1", IP_H2])?;
            let text = String::from_utf8_lossy(&ping.stdout);
            let seq = first_reply(&text).with_context(|| format!("move {k} ({from} → {to}): no reply in {PINGS} pings"))?;
            out.push(f64::from((seq - 1) * PING_MS));
        }
        Ok(out)
    })();
    stop.store(true, Ordering::Relaxed);
    let counters = controller.join().map_err(|_| anyhow::anyhow!("the controller panicked"))??;
    for s in switches {
        s.stop()?;
    }
    Ok((measured?, counters))
}
