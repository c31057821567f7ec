//! The IP router of `nexthop run` (`[router]`): its route file written into the kernel's main
//! table, then `nexthop_router::ip::ports::PortRouter` on the configured interfaces, on a
//! thread of its own until the forwarder stops; its counters are logged when it ends.

use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use anyhow::Context;
use nexthop_fw::conf::config::RouterConfig;
use nexthop_io::XdpMode;
use nexthop_router::ip::netlink::RouteWriter;
use nexthop_router::ip::ports::{self, PortRouter};
use nexthop_router::ip::{route_file, DropReason, Punt};

/// The AF_XDP mode a configuration's `xdp_mode` names (`auto`: none, native where the driver
/// has it).
pub(super) fn xdp_mode(name: &str) -> Option<XdpMode> {
    match name {
        "native" => Some(XdpMode::Native),
        "generic" => Some(XdpMode::Generic),
        _ => None,
    }
}

/// The router's thread.
#[derive(Debug)]
pub struct RunningRouter {
    thread: std::thread::JoinHandle<anyhow::Result<()>>,
}

/// Starts the router `cfg` describes (none without interfaces); it stops when `stop` is set.
/// Returns once its ports are open and its FIB holds the kernel's tables.
///
/// # Errors
/// A bad route file (naming the line), routes the kernel refused, a port that could not open.
pub fn start(cfg: &RouterConfig, stop: Arc<AtomicBool>) -> anyhow::Result<Option<RunningRouter>> {
    if cfg.interfaces.is_empty() {
        return Ok(None);
    }
    if !cfg.route_file.is_empty() {
        let file = std::fs::File::open(&cfg.route_file).with_context(|| format!("router.route_file {}", cfg.route_file))?;
        let routes = route_file::parse(std::io::BufReader::new(file)).with_context(|| format!("router.route_file {}", cfg.route_file))?;
        let refused = RouteWriter::open().context("the kernel's routing tables (rtnetlink)")?.replace(&routes)?;
        anyhow::ensure!(refused == 0, "router.route_file {}: the kernel refused {refused} of its {} routes", cfg.route_file, routes.len());
        tracing::info!("{} routes of {} written into the kernel's main table", routes.len(), cfg.route_file);
    }
    let config = ports::RouterConfig { interfaces: cfg.interfaces.clone(), xdp_mode: xdp_mode(&cfg.xdp_mode) };
    let (ready, opened) = mpsc::channel();
    let thread = std::thread::Builder::new().name("nexthop-router".into()).spawn(move || -> anyhow::Result<()> {
        let mut router = match PortRouter::open(&config) {
            Ok(r) => r,
            Err(e) => {
                let _ = ready.send(Err(format!("{e}")));
                return Ok(());
            }
        };
        while router.syncing() {
            router.sync()?;
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let _ = ready.send(Ok(router.router().fib().len()));
        router.run(&stop)?;
        let c = router.counters();
        let named =
            |list: Vec<(&str, u64)>| list.into_iter().filter(|x| x.1 > 0).map(|(n, v)| format!("{n} {v}")).collect::<Vec<_>>().join(", ");
        tracing::info!(
            "the IP router forwarded {}; to the kernel: {}; dropped: {}; {:?}",
            c.forwarded,
            named(Punt::ALL.iter().map(|&p| (p.name(), c.punted(p))).collect()),
            named(DropReason::ALL.iter().map(|&d| (d.name(), c.dropped(d))).collect()),
            router.io_counters()
        );
        Ok(())
    })?;
    match opened.recv() {
        Ok(Ok(routes)) => {
            eprintln!("nexthop: routing IP on {} ({routes} routes)", cfg.interfaces.join(", "));
            Ok(Some(RunningRouter { thread }))
        }
        Ok(Err(e)) => Err(anyhow::anyhow!("starting the IP router: {e}")),
        Err(_) => Err(thread
            .join()
            .map_err(|_| anyhow::anyhow!("the IP router panicked"))?
            .err()
            .unwrap_or_else(|| anyhow::anyhow!("the IP router stopped"))),
    }
}

impl RunningRouter {
    /// Waits for the router to end (after its stop flag is set).
    ///
    /// # Errors
    /// It failed while routing.
    pub fn stop(self) -> anyhow::Result<()> {
        self.thread.join().map_err(|_| anyhow::anyhow!("the IP router panicked"))?
    }
}
