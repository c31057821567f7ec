//! The Concise switch of `nexthop run` (`[switch]`): its hosts file read into an Othello FIB,
//! then `nexthop_router::l2::ports::PortSwitch` on the configured interfaces, on a thread of
//! its own until the forwarder stops; with `learn`, the hosts it reports off their FIB port are
//! installed there (the switch is its own controller); its counters are logged when it ends.
//!
//! The FIB's cells are 16 bits: 6 for the egress interface (at most 64), 10 checksum bits, so
//! that all but one in 1,024 frames to addresses outside the FIB are dropped where they enter.

use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use anyhow::Context;
use nexthop_fw::conf::config::SwitchConfig;
use nexthop_lookup::flat::{Othello, OthelloConfig};
use nexthop_router::l2::hosts_file;
use nexthop_router::l2::ports::{self, PortSwitch};
use nexthop_router::l2::{apply_delta, DropReason, PortRole};

/// Bits of the egress interface and of the checksum in each FIB cell.
const PORT_BITS: u32 = 6;
const CHECKSUM_BITS: u32 = 10;

/// The switch's thread.
#[derive(Debug)]
pub struct RunningSwitch {
    thread: std::thread::JoinHandle<anyhow::Result<()>>,
}

/// Starts the switch `cfg` describes (none without interfaces); it stops when `stop` is set.
/// Returns once its ports are open.
///
/// # Errors
/// A bad hosts file (naming the line), a port that could not open.
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
    let fib_config = OthelloConfig { checksum_bits: CHECKSUM_BITS, ..OthelloConfig::new(PORT_BITS) };
    let mut othello = Othello::<u16>::construct(fib_config, hosts.iter().map(|(m, p)| (&m[..], u32::from(*p))))?;
    let _ = othello.take_delta(); // the switch starts from the query structure itself
    let edge = PortRole { flood: true, edge: true };
    let config = ports::SwitchConfig {
        ports: cfg.interfaces.iter().map(|i| (i.clone(), edge)).collect(),
        xdp_mode: super::router::xdp_mode(&cfg.xdp_mode),
    };
    let learn = cfg.learn;
    let (ready, opened) = mpsc::channel();
    let thread = std::thread::Builder::new().name("nexthop-switch".into()).spawn(move || -> anyhow::Result<()> {
        let mut switch = match PortSwitch::open(&config, othello.query()) {
            Ok(s) => s,
            Err(e) => {
                let _ = ready.send(Err(format!("{e}")));
                return Ok(());
            }
        };
        let _ = ready.send(Ok(othello.len()));
        switch.run(&stop, |seen, fib| {
            if !learn || seen.is_empty() {
                return;
            }
            for p in seen {
                let port = u32::from(p.port.0);
                let done = if othello.get(&p.mac).is_some() { othello.alter(&p.mac, port) } else { othello.add(&p.mac, port) };
                match done {
                    Ok(()) => tracing::info!("switch: host {} on {}", mac_text(p.mac), config.ports[usize::from(p.port.0)].0),
                    Err(e) => tracing::warn!("switch: host {} not installed: {e}", mac_text(p.mac)),
                }
            }
            if let Err(e) = apply_delta(fib, othello.take_delta()) {
                tracing::warn!("switch: the FIB refused a change: {e}");
            }
        });
        let c = switch.switch().counters();
        let drops: Vec<String> =
            DropReason::ALL.iter().filter(|&&d| c.dropped(d) > 0).map(|&d| format!("{} {}", d.name(), c.dropped(d))).collect();
        tracing::info!(
            "the switch forwarded {}, flooded {}; dropped: {}; {} hosts learned; {:?}",
            c.forwarded,
            c.flooded,
            drops.join(", "),
            c.packet_ins,
            switch.io_counters()
        );
        Ok(())
    })?;
    match opened.recv() {
        Ok(Ok(hosts)) => {
            eprintln!("nexthop: switching on {} ({hosts} hosts{})", cfg.interfaces.join(", "), if learn { ", learning" } else { "" });
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

fn mac_text(m: [u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
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
