//! `nexthop run`: the forwarder. With no arguments it uses the built-in configuration
//! (Unix socket /run/nfd/nfd.sock, TCP and UDP on port 6363, a DRAM content store).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use nexthop_fw::config::{Config, DEFAULT_TOML};
use nexthop_fw::runtime::Runtime;

/// Arguments of `nexthop run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Configuration file (TOML), read on top of the built-in default.
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Print the built-in default configuration and exit.
    #[arg(long)]
    print_default_config: bool,
}

/// Runs the forwarder until it is killed.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.print_default_config {
        print!("{DEFAULT_TOML}");
        return Ok(());
    }
    let cfg = match &args.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let mut rt = Runtime::new(cfg).context("starting the forwarder")?;
    let l = rt.listening();
    tracing::info!(unix = ?l.unix, tcp = ?l.tcp, udp = ?l.udp, websocket = ?l.websocket, "nexthop forwarding");
    eprintln!(
        "nexthop: forwarding on{}{}{}{}",
        l.unix.map(|p| format!(" unix://{p}")).unwrap_or_default(),
        l.tcp.map(|a| format!(" tcp://{a}")).unwrap_or_default(),
        l.udp.map(|a| format!(" udp://{a}")).unwrap_or_default(),
        l.websocket.map(|a| format!(" ws://{a}")).unwrap_or_default()
    );
    rt.run(&AtomicBool::new(false)).context("forwarding")?;
    Ok(())
}
