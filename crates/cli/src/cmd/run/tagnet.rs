//! The TagNet router of `nexthop run` (`[tagnet]`): its static FIB file read, then
//! `nexthop_router::tag::ports::PortTagRouter` on the configured interfaces and tunnels, on a
//! thread of its own until the forwarder stops; its counters are logged when it ends.

use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use anyhow::Context;
use nexthop_fw::conf::config::TagnetConfig;
use nexthop_lookup::tag::{read_fib_file, DescriptorFib};
use nexthop_router::tag::ports::{PortTagRouter, TagPortsConfig, Tunnel};
use nexthop_router::tag::router::{DropReason, TagRouter};

/// The router's thread.
#[derive(Debug)]
pub struct RunningTagRouter {
    thread: std::thread::JoinHandle<anyhow::Result<()>>,
}

/// Starts the router `cfg` describes (none without interfaces or tunnels); it stops when
/// `stop` is set. Returns once its ports are open.
///
/// # Errors
/// A bad FIB file (naming the line), a bad tunnel, a port that could not open.
pub fn start(cfg: &TagnetConfig, stop: Arc<AtomicBool>) -> anyhow::Result<Option<RunningTagRouter>> {
    if cfg.interfaces.is_empty() && cfg.tunnels.is_empty() {
        return Ok(None);
    }
    let fib = if cfg.fib_file.is_empty() {
        DescriptorFib::new()
    } else {
        let file = std::fs::File::open(&cfg.fib_file).with_context(|| format!("tagnet.fib_file {}", cfg.fib_file))?;
        read_fib_file(std::io::BufReader::new(file), |_| {}).with_context(|| format!("tagnet.fib_file {}", cfg.fib_file))?
    };
    let tunnels = cfg.tunnel_addresses().map_err(anyhow::Error::msg)?.into_iter().map(|(local, remote)| Tunnel { local, remote }).collect();
    let ports =
        TagPortsConfig { interfaces: cfg.interfaces.clone(), tunnels, xdp_mode: super::router::xdp_mode(&cfg.xdp_mode), busy_poll: false };
    let name = if cfg.name.is_empty() { super::switch::host_name() } else { cfg.name.clone() };
    let entries = fib.len();
    let router = TagRouter::new(&name, ports.ports(), &cfg.roots, fib).context("the TagNet router")?;
    let (ready, opened) = mpsc::channel();
    let thread = std::thread::Builder::new().name("nexthop-tagnet".into()).spawn(move || -> anyhow::Result<()> {
        let mut r = match PortTagRouter::open(&ports, router) {
            Ok(r) => r,
            Err(e) => {
                let _ = ready.send(Err(format!("{e}")));
                return Ok(());
            }
        };
        let _ = ready.send(Ok(()));
        r.run(&stop);
        let c = &r.router().counters;
        let drops: Vec<String> =
            DropReason::ALL.iter().filter(|&&d| c.dropped(d) > 0).map(|&d| format!("{} {}", d.name(), c.dropped(d))).collect();
        tracing::info!(
            "tagnet: FAS {}, FLS {}, up {}, TZ {}, local {}, control {}; dropped: {}; {:?}",
            c.fas,
            c.fls,
            c.up,
            c.tz,
            c.local,
            c.control,
            drops.join(", "),
            r.io_counters()
        );
        Ok(())
    })?;
    match opened.recv() {
        Ok(Ok(())) => {
            let roots = if cfg.roots.is_empty() { String::new() } else { format!(", root of trees {:?}", cfg.roots) };
            let mut on: Vec<String> = cfg.interfaces.clone();
            on.extend(cfg.tunnels.iter().map(|t| format!("udp {t}")));
            eprintln!("nexthop: tagnet router {name} on {} ({entries} static entries{roots})", on.join(", "));
            Ok(Some(RunningTagRouter { thread }))
        }
        Ok(Err(e)) => Err(anyhow::anyhow!("starting the TagNet router: {e}")),
        Err(_) => Err(thread
            .join()
            .map_err(|_| anyhow::anyhow!("the TagNet router panicked"))?
            .err()
            .unwrap_or_else(|| anyhow::anyhow!("the TagNet router stopped"))),
    }
}

impl RunningTagRouter {
    /// Waits for the router to end (after its stop flag is set).
    ///
    /// # Errors
    /// It failed while routing.
    pub fn stop(self) -> anyhow::Result<()> {
        self.thread.join().map_err(|_| anyhow::anyhow!("the TagNet router panicked"))?
    }
}
