//! `nexthop run`: the forwarder. With no arguments it uses the built-in configuration
//! (Unix socket /run/nfd/nfd.sock, TCP and UDP on port 6363, a DRAM content store). SIGTERM or
//! SIGINT stops it cleanly: the forwarding threads end, faces close and the Unix socket file is
//! removed, and it exits 0 (as a service manager expects). SIGHUP reloads the configuration
//! file, as NFD reloads nfd.conf. With `[router] interfaces`, the IP router runs beside the
//! forwarder on a thread of its own ([`router`]); with `[switch] interfaces`, the Concise
//! switch ([`switch`]); with `[tagnet] interfaces` or `tunnels`, a TagNet router ([`tagnet`]).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use nexthop_fw::conf::config::{Config, DEFAULT_TOML};
use nexthop_fw::conf::nfd_conf;
use nexthop_fw::runtime::Runtime;

mod router;
mod switch;
mod tagnet;

/// Arguments of `nexthop run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Configuration file (TOML), read on top of the built-in default.
    #[arg(long, short, conflicts_with = "nfd_conf")]
    config: Option<PathBuf>,
    /// NFD's configuration file (nfd.conf) instead: what nexthop has a setting for is taken,
    /// the rest named in warnings.
    #[arg(long, value_name = "NFD_CONF")]
    nfd_conf: Option<PathBuf>,
    /// Print the built-in default configuration and exit.
    #[arg(long)]
    print_default_config: bool,
    /// Print the configuration in effect (from --config or --nfd-conf) as TOML and exit.
    #[arg(long)]
    print_config: bool,
}

/// The configuration `args` name: the TOML file on top of the built-in default, NFD's
/// nfd.conf (its warnings printed), or the default alone.
fn load(args: &Args) -> anyhow::Result<Config> {
    Ok(match (&args.config, &args.nfd_conf) {
        (Some(p), _) => Config::load(p)?,
        (None, Some(p)) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
            let (mut cfg, warnings) = nfd_conf::from_nfd_conf(&text).with_context(|| format!("{}", p.display()))?;
            cfg.resolve_paths(p.parent().unwrap_or(std::path::Path::new("")));
            for w in warnings {
                eprintln!("nexthop: {}: {w}", p.display());
            }
            cfg
        }
        (None, None) => Config::default(),
    })
}

/// Runs the forwarder until SIGTERM or SIGINT, logging at the configuration's level
/// (`forwarder.log_level`, given to `log_level`). SIGHUP reads the configuration file again
/// and applies what can change while forwarding (`Runtime::reload`: authorizations, validators,
/// strategy choices, the content store's capacity and unsolicited policy, listeners, multicast
/// and Ethernet faces, static faces and routes, the log level), as NFD reloads nfd.conf; a file
/// with a mistake changes nothing.
pub fn run(args: Args, log_level: Arc<dyn Fn(&str) + Send + Sync>) -> anyhow::Result<()> {
    if args.print_default_config {
        print!("{DEFAULT_TOML}");
        return Ok(());
    }
    let cfg = load(&args)?;
    if args.print_config {
        print!("{}", cfg.to_toml());
        return Ok(());
    }
    log_level(&cfg.forwarder.log_level);
    let (stop, reload) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let ip_router = router::start(&cfg.router, stop.clone())?;
    let l2_switch = switch::start(&cfg.switch, stop.clone())?;
    let tag_router = tagnet::start(&cfg.tagnet, stop.clone())?;
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
    // SIGTERM and SIGINT stop it, SIGHUP reloads: a thread takes the signals, sets the flag
    // and wakes the forwarder's loop (which, idle, would otherwise notice within a second).
    let mut signals =
        signal_hook::iterator::Signals::new([signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT, signal_hook::consts::SIGHUP])
            .context("handling signals")?;
    let (waker, flags) = (rt.waker(), (stop.clone(), reload.clone()));
    std::thread::Builder::new()
        .name("nexthop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let flag = if signal == signal_hook::consts::SIGHUP { &flags.1 } else { &flags.0 };
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
                let _ = waker.wake();
            }
        })
        .context("handling signals")?;
    rt.reload_on(
        reload,
        Box::new(move || {
            tracing::info!("SIGHUP: reading the configuration again");
            let cfg = load(&args).map_err(|e| format!("{e:#}"))?;
            log_level(&cfg.forwarder.log_level);
            Ok(cfg)
        }),
        // Told whatever the log level, as the start is.
        Box::new(|outcome| match outcome {
            Ok(warnings) => {
                for w in warnings {
                    eprintln!("nexthop: reload: {w}");
                }
                eprintln!("nexthop: configuration reloaded");
            }
            Err(e) => eprintln!("nexthop: configuration not reloaded, nothing changed: {e}"),
        }),
    );
    rt.run(&stop).context("forwarding")?;
    drop(rt);
    if let Some(r) = ip_router {
        r.stop()?;
    }
    if let Some(s) = l2_switch {
        s.stop()?;
    }
    if let Some(t) = tag_router {
        t.stop()?;
    }
    tracing::info!("nexthop stopped");
    eprintln!("nexthop: stopped");
    Ok(())
}
