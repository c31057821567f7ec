//! The Concise switch of `nexthop run` (`[switch]`): its hosts file read into an Othello FIB,
//! then `nexthop_router::l2::ports::PortSwitch` on the configured interfaces, on a thread of
//! its own until the forwarder stops. With `control`, its gRPC control channel
//! (`nexthop_control::agent`) is served beside it and answered between batches: a controller
//! (or any client) reads it, writes hosts, pushes deltas and streams the hosts it sees. With
//! `learn`, while no controller's FIB is in force, the hosts it reports off their FIB port are
//! installed there (the switch is its own controller). Its counters are logged when it ends.
//!
//! The FIB's cells are 16 bits: 6 for the egress interface (at most 64), 10 checksum bits, so
//! that all but one in 1,024 frames to addresses outside the FIB are dropped where they enter
//! (`nexthop_control::switch_fib`).

use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use anyhow::Context;
use nexthop_control::address::ControlAddress;
use nexthop_control::agent::{self, Fib};
use nexthop_control::switch_fib::{fib_config, SwitchFib};
use nexthop_fw::conf::config::SwitchConfig;
use nexthop_lookup::flat::Othello;
use nexthop_router::l2::hosts_file::{self, mac_text};
use nexthop_router::l2::ports::{self, PortSwitch};
use nexthop_router::l2::{DropReason, PortRole};

/// The switch's thread.
#[derive(Debug)]
pub struct RunningSwitch {
    thread: std::thread::JoinHandle<anyhow::Result<()>>,
}

/// Starts the switch `cfg` describes (none without interfaces); it stops when `stop` is set.
/// Returns once its ports are open and its control channel listens.
///
/// # Errors
/// A bad hosts file (naming the line), a port that could not open, a control address that
/// could not be bound.
pub fn start(cfg: &SwitchConfig, stop: Arc<AtomicBool>) -> anyhow::Result<Option<RunningSwitch>> {
    if cfg.interfaces.is_empty() {
        return Ok(None);
    }
    let hosts = if cfg.hosts_file.is_empty() {
        Vec::new()
    } else {
        let file = std::fs::File::open(&cfg.hosts_file).with_context(|| format!("switch.hosts_file {}", cfg.hosts_file))?;
        hosts_file::parse(std::io::BufReader::new(file), &cfg.interfaces)
            .with_context(|| format!("switch.hosts_file {}", cfg.hosts_file))?
    };
    let othello = Othello::construct(fib_config(), hosts.iter().map(|(m, p)| (&m[..], u32::from(*p))))?;
    let (mut fib, query) = SwitchFib::new(othello, cfg.interfaces.len());
    let edge = PortRole { flood: true, edge: true };
    let config = ports::SwitchConfig {
        ports: cfg.interfaces.iter().map(|i| (i.clone(), edge)).collect(),
        xdp_mode: super::router::xdp_mode(&cfg.xdp_mode),
    };
    let control = if cfg.control.is_empty() {
        None
    } else {
        let address: ControlAddress = cfg.control.parse()?;
        let name = if cfg.name.is_empty() { host_name() } else { cfg.name.clone() };
        Some(agent::start(&address, &name, cfg.interfaces.clone()).with_context(|| format!("switch.control {address}"))?)
    };
    let learn = cfg.learn;
    let (ready, opened) = mpsc::channel();
    let thread = std::thread::Builder::new().name("nexthop-switch".into()).spawn(move || -> anyhow::Result<()> {
        let mut switch: PortSwitch<Fib> = match PortSwitch::open(&config, query) {
            Ok(s) => s,
            Err(e) => {
                let _ = ready.send(Err(format!("{e}")));
                return Ok(());
            }
        };
        let _ = ready.send(Ok(hosts.len()));
        let (agent, server) = control.unzip();
        switch.run(&stop, |switch, seen| {
            if let Some(agent) = &agent {
                agent.serve(switch, &mut fib);
                agent.publish(&seen);
            }
            if !learn || seen.is_empty() {
                return;
            }
            let found = seen.iter().map(|p| (p.mac, u32::from(p.port.0)));
            for (mac, port) in fib.learn(switch.switch_mut().fib_mut(), found) {
                tracing::info!("switch: host {} on {}", mac_text(mac), config.ports[port as usize].0);
            }
        });
        drop(server);
        let c = switch.switch().counters();
        let drops: Vec<String> =
            DropReason::ALL.iter().filter(|&&d| c.dropped(d) > 0).map(|&d| format!("{} {}", d.name(), c.dropped(d))).collect();
        tracing::info!(
            "the switch forwarded {}, flooded {}; dropped: {}; {} hosts seen; {} deltas applied, {} refused; {:?}",
            c.forwarded,
            c.flooded,
            drops.join(", "),
            c.packet_ins,
            fib.applied,
            fib.refused,
            switch.io_counters()
        );
        Ok(())
    })?;
    match opened.recv() {
        Ok(Ok(hosts)) => {
            let control = if cfg.control.is_empty() { String::new() } else { format!(", control {}", cfg.control) };
            eprintln!(
                "nexthop: switching on {} ({hosts} hosts{}{control})",
                cfg.interfaces.join(", "),
                if learn { ", learning" } else { "" }
            );
            Ok(Some(RunningSwitch { thread }))
        }
        Ok(Err(e)) => Err(anyhow::anyhow!("starting the switch: {e}")),
        Err(_) => Err(thread
            .join()
            .map_err(|_| anyhow::anyhow!("the switch panicked"))?
            .err()
            .unwrap_or_else(|| anyhow::anyhow!("the switch stopped"))),
    }
}

/// This host's name (the switch's name on its control channel when the configuration gives
/// none).
pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "switch".into())
}

impl RunningSwitch {
    /// Waits for the switch to end (after its stop flag is set).
    ///
    /// # Errors
    /// It failed while switching.
    pub fn stop(self) -> anyhow::Result<()> {
        self.thread.join().map_err(|_| anyhow::anyhow!("the switch panicked"))?
    }
}
