//! `nexthop controller`: the Concise switches' SDN controller (`nexthop_control::controller`)
//! on a topology file, until SIGTERM or SIGINT. It connects to every switch's control channel
//! (`[switch] control` of each `nexthop run`), sends each its flood tree and FIB, installs the
//! hosts the switches report in every FIB and moves the ones that move; a switch that restarts
//! gets its FIB again.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use nexthop_control::controller::{session, topology::Topology};

/// Arguments of `nexthop controller`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The topology file (TOML): [[switch]] name and control, [[link]] a and b
    /// (switch:interface), [[host]] mac and at.
    #[arg(long, short)]
    topology: PathBuf,
}

/// Runs the controller until SIGTERM or SIGINT, logging what it does (at `info` unless
/// RUST_LOG says otherwise).
pub fn run(args: Args, log_level: Arc<dyn Fn(&str) + Send + Sync>) -> anyhow::Result<()> {
    let path = &args.topology;
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let topology = Topology::parse(&text).with_context(|| format!("{}", path.display()))?;
    log_level("info");
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone()).context("handling signals")?;
    }
    let names: Vec<&str> = topology.switches.iter().map(|s| s.name.as_str()).collect();
    eprintln!("nexthop: controller of {} ({} links, {} hosts known)", names.join(", "), topology.links.len(), topology.hosts.len());
    let c = session::run(topology, stop).context("the controller's runtime")?;
    eprintln!("nexthop: controller stopped: {} syncs, {} messages, {} hosts placed, {} resyncs", c.syncs, c.messages, c.placed, c.resyncs);
    Ok(())
}
