//! Experiment `ip-router`: IPv4 frames a second one core routes between veth ports — nexthop's
//! router (`nexthop_router::ip::ports`, the Bloom-filter FIB mirrored from the kernel) against
//! the Linux kernel's own forwarding, on the same interfaces with the same routes and
//! neighbours — with every frame's egress checked against a reference LPM; then how fast route
//! changes from netlink reach nexthop's FIB while it forwards, and iperf3 through both.
//!
//! # Overview
//! - Namespaces: a generator (`pg0`), the router (`pr0`, `pr1`, `pr2`) and a sink (`ps1`,
//!   `ps2`), joined by three veth pairs; traffic never leaves them. The router's kernel holds
//!   the table: each route via one of eight gateways, four behind `pr1` and four behind `pr2`
//!   (static neighbours with their own Ethernet addresses), chosen by the route's origin AS.
//!   Tables: the RouteViews 2014 table (512,621 routes; `--quick`: its first 65,536) and a
//!   small one (1,024 of its routes); a few overlapping the namespaces' own networks or
//!   non-unicast space are left out (the row says how many routes were installed).
//! - Traffic ([`crate::frames::ip`]): IPv4 UDP frames from one thread on core 0 (generator and
//!   sink, AF_XDP ports on `pg0`, `ps1`, `ps2`) to `flows` destinations drawn inside random
//!   routes. The sink checks each frame's bytes (TTL one less, checksum, payload) and that it
//!   came out of the port and with the next hop's address the reference LPM (a binary trie of
//!   the same routes) gives its destination: `misrouted` counts the others.
//! - Systems, on core 1: `nexthop` — the router's thread (AF_XDP native on the three ports,
//!   TAPs to the kernel, its FIB loaded from a dump of the kernel's tables); `linux` — no
//!   thread: the kernel forwards (`ip_forward`, its FIB trie), its receive work steered to
//!   core 1. A row's `mpps` is the highest rate passed with at most 0.1% lost (a binary
//!   search, as in `ports`); `lost` the frames lost at that rate.
//! - Routes reach the kernel as a routing daemon's would: rtnetlink requests in bulk
//!   (`nexthop_router::ip::netlink::RouteWriter`), from a thread the scheduler places.
//! - Route updates (the large table, nexthop forwarding at half its rate): 100,000 routes
//!   (`--quick`: 10,000), those the traffic uses first, are replaced, each by one via the next
//!   gateway; `update_routes_per_s` is the routes over the time from the first write until
//!   the router had applied every change (`update_kernel_routes_per_s`: until the kernel had). Frames sent meanwhile may take the old route
//!   or the new one; after it, only the new one passes the check (`misrouted`).
//! - iperf3: one TCP stream through each system, `iperf3 -c` in the generator's namespace
//!   against a server in the sink's (the sink's ports closed first).

use std::net::IpAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use nexthop_io::netns::{veth, Netns};
use nexthop_io::{PortConfig, XdpMode};
use nexthop_lookup::ip::{BinaryTrie, Route, NO_ROUTE};
use nexthop_router::ip::netlink::RouteWriter;
use nexthop_router::ip::ports::{IoCounters, PortRouter, RouterConfig};
use nexthop_router::ip::{Counters, Prefix};

use super::ports::{enter, loss, mac_text, namespace, place_receive_work, search, sh, spawn_opened, Generator};
use crate::frames::ip::{Egress, Ipv4Stream};
use crate::frames::traffic::{Outcome, Spec};
use crate::harness::median;
use crate::plot::{Chart, Plot};
use crate::workload::routes::{self, Traffic as Mix};
use crate::{progress, Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct IpRouterExperiment;

/// (frame bytes, destinations) measured.
const SHAPES: [(usize, usize); 3] = [(64, 16), (64, 65_536), (1500, 65_536)];
/// Sequence-numbered flows of the generator (the destinations are spread over them).
const SEQ_FLOWS: u16 = 16;
const GEN_CORE: usize = 0;
const FWD_CORE: usize = 1;
/// Gateways per egress port.
const GATEWAYS_PER_PORT: usize = 4;
const EGRESS_PORTS: usize = 2;
const GATEWAYS: usize = GATEWAYS_PER_PORT * EGRESS_PORTS;
/// The generator's source address (the router is 10.0.0.1 on its side).
const GEN_IP: u32 = 0x0a00_0002;
const MAC_GEN: [u8; 6] = [2, 0, 0, 0, 0, 2];
const MAC_PR0: [u8; 6] = [2, 0, 0, 0, 0, 1];

/// The router's Ethernet address on egress port `p` (0 or 1).
fn port_mac(p: usize) -> [u8; 6] {
    [2, 0, 0, 0, p as u8 + 1, 1]
}

/// Gateway `g`'s address: 10.<port+1>.0.<10+k>.
fn gateway_ip(g: usize) -> u32 {
    let (p, k) = (g / GATEWAYS_PER_PORT, g % GATEWAYS_PER_PORT);
    0x0a00_0000 | (p as u32 + 1) << 16 | (10 + k as u32)
}

/// Gateway `g`'s Ethernet address.
fn gateway_mac(g: usize) -> [u8; 6] {
    let (p, k) = (g / GATEWAYS_PER_PORT, g % GATEWAYS_PER_PORT);
    [2, 0, 0, p as u8 + 1, 0, 10 + k as u8]
}

/// Whether an address may be a destination here: not this network, private 10/8 (the
/// namespaces' own), loopback, link-local, multicast or reserved.
fn routable(a: u32) -> bool {
    let first = a >> 24;
    !(first == 0 || first == 10 || first == 127 || first >= 224 || a >> 16 == 0xa9fe)
}

/// A table measured: its routes (next hop = gateway) and their reference LPM.
struct Table {
    name: &'static str,
    routes: Vec<Route<u32>>,
    oracle: BinaryTrie<u32>,
    /// Routes of the source table left out (see [`routable`]).
    left_out: usize,
}

impl Table {
    fn new(name: &'static str, source: &[Route<u32>]) -> Table {
        let keep = |r: &&Route<u32>| {
            let last = r.prefix | u32::MAX.checked_shr(u32::from(r.len)).unwrap_or(0);
            r.len >= 8 && routable(r.prefix) && routable(last)
        };
        let routes: Vec<Route<u32>> = source
            .iter()
            .filter(keep)
            .map(|r| Route { prefix: r.prefix, len: r.len, next_hop: (r.next_hop as usize % GATEWAYS) as u32 })
            .collect();
        Table { name, left_out: source.len() - routes.len(), oracle: routes::oracle(&routes), routes }
    }

    /// `n` destinations inside random routes, and where each must come out.
    fn destinations(&self, n: usize, seed: u64) -> (Vec<u32>, Vec<Egress>) {
        let dests: Vec<u32> = routes::addresses(&self.routes, &self.oracle, Mix::Matching(1.0), n * 2, seed)
            .into_iter()
            .filter(|&a| routable(a) && self.oracle.lookup(a) != NO_ROUTE)
            .take(n)
            .collect();
        let egress = dests.iter().map(|&a| egress(self.oracle.lookup(a) as usize)).collect();
        (dests, egress)
    }
}

fn egress(g: usize) -> Egress {
    Egress { rx: g / GATEWAYS_PER_PORT, mac: gateway_mac(g) }
}

/// The three namespaces, their links and the router's kernel configured.
struct Topology {
    generator: Netns,
    router: Netns,
    sink: Netns,
}

impl Topology {
    fn new() -> anyhow::Result<Topology> {
        let ns = |role: &str| namespace("nxr", role);
        let t = Topology { generator: ns("g")?, router: ns("r")?, sink: ns("s")? };
        veth(&t.generator, "pg0", &t.router, "pr0", 1)?;
        veth(&t.router, "pr1", &t.sink, "ps1", 1)?;
        veth(&t.router, "pr2", &t.sink, "ps2", 1)?;
        let r = &t.router;
        let mut script = format!(
            "ip link set pr0 address {} && ip link set pr1 address {} && ip link set pr2 address {} \
             && ip addr add 10.0.0.1/24 dev pr0 && ip addr add 10.1.0.1/24 dev pr1 && ip addr add 10.2.0.1/24 dev pr2 \
             && sysctl -qw net.ipv4.ip_forward=1 && sysctl -qw net.ipv4.conf.all.rp_filter=0 \
             && sysctl -qw net.ipv4.conf.default.rp_filter=0 && sysctl -qw net.ipv4.conf.all.send_redirects=0",
            mac_text(MAC_PR0),
            mac_text(port_mac(0)),
            mac_text(port_mac(1)),
        );
        for g in 0..GATEWAYS {
            let (ip, mac) = (std::net::Ipv4Addr::from(gateway_ip(g)), gateway_mac(g));
            script += &format!(" && ip neigh replace {ip} lladdr {} dev pr{} nud permanent", mac_text(mac), g / GATEWAYS_PER_PORT + 1);
        }
        sh(r, &script)?;
        sh(&t.generator, &format!("ip link set pg0 address {}", mac_text(MAC_GEN)))?;
        place_receive_work((r, "pr0"), &[(&t.sink, "ps1"), (&t.sink, "ps2")])?;
        Ok(t)
    }

    /// Writes `routes` (each via its gateway) into the router's kernel, adding or replacing, as
    /// a routing daemon would (rtnetlink, in bulk), from a thread on no particular core.
    fn write_routes(&self, routes: &[Route<u32>]) -> anyhow::Result<()> {
        let writes: Vec<(Prefix, IpAddr)> = routes
            .iter()
            .map(|r| (Prefix::V4 { addr: r.prefix, len: r.len }, IpAddr::V4(gateway_ip(r.next_hop as usize).into())))
            .collect();
        let name = self.router.name().to_string();
        let writer = std::thread::spawn(move || -> anyhow::Result<usize> {
            enter(&name)?;
            Ok(RouteWriter::open()?.replace(&writes)?)
        });
        let refused = writer.join().map_err(|_| anyhow::anyhow!("the route writer panicked"))??;
        anyhow::ensure!(refused == 0, "the kernel refused {refused} of {} routes", routes.len());
        Ok(())
    }
}

/// A system measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum System {
    Nexthop,
    Linux,
}

const SYSTEMS: [System; 2] = [System::Nexthop, System::Linux];

impl System {
    fn name(self) -> &'static str {
        match self {
            System::Nexthop => "nexthop",
            System::Linux => "linux",
        }
    }
}

/// nexthop's router running in the router's namespace on core 1.
struct RunningRouter {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<anyhow::Result<(Counters, IoCounters)>>,
    /// Changes from the kernel's tables it has handled.
    applied: Arc<AtomicU64>,
    /// From opening its ports to its FIB holding the kernel's table.
    loaded_s: f64,
}

impl RunningRouter {
    fn start(t: &Topology) -> anyhow::Result<RunningRouter> {
        let stop = Arc::new(AtomicBool::new(false));
        let (name, halt) = (t.router.name().to_string(), stop.clone());
        let open = move || -> anyhow::Result<_> {
            enter(&name)?;
            let start = Instant::now();
            let config = RouterConfig { interfaces: vec!["pr0".into(), "pr1".into(), "pr2".into()], xdp_mode: Some(XdpMode::Native) };
            let mut router = PortRouter::open(&config)?;
            while router.syncing() {
                router.sync()?;
                std::thread::sleep(Duration::from_micros(200));
            }
            router.sync()?;
            let applied = router.applied();
            Ok((router, (applied, start.elapsed().as_secs_f64())))
        };
        let body = move |mut router: PortRouter| {
            router.run(&halt)?;
            Ok((router.counters().clone(), router.io_counters().clone()))
        };
        let (thread, (applied, loaded_s)) = spawn_opened(FWD_CORE, "the router", open, body)?;
        Ok(RunningRouter { stop, thread, applied, loaded_s })
    }

    fn stop(self) -> anyhow::Result<(Counters, IoCounters)> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().map_err(|_| anyhow::anyhow!("the router thread panicked"))?
    }
}

/// One search of one system on one shape.
struct Sample {
    system: System,
    shape: (usize, usize),
    overload: Outcome,
    passed: Option<Outcome>,
    probes: Vec<Outcome>,
}

/// The route-update phase's figures.
struct Update {
    routes: usize,
    kernel_s: f64,
    applied_s: f64,
    during: Outcome,
    after: Outcome,
}

/// Everything measured on one table.
struct TableRun {
    table: &'static str,
    installed: usize,
    left_out: usize,
    install_s: f64,
    loaded_s: Vec<f64>,
    samples: Vec<Sample>,
    router_drops: u64,
    punted: u64,
    io_drops: u64,
    update: Option<Update>,
    iperf: Vec<Iperf>,
}

/// The run's settings.
#[derive(Clone, Copy)]
struct Settings {
    reps: usize,
    warmup: Duration,
    window: Duration,
    steps: usize,
    updates: usize,
    iperf_s: u32,
}

fn spec(s: &Settings, rate_pps: Option<f64>) -> Spec {
    Spec { flows: SEQ_FLOWS, rate_pps, warmup: s.warmup, window: s.window, drain: Duration::from_millis(30), watch_core: Some(FWD_CORE) }
}

fn streams(table: &Table, size: usize, dests: usize) -> Ipv4Stream {
    let (d, e) = table.destinations(dests, 0x1b + dests as u64);
    Ipv4Stream::new(size, (MAC_PR0, MAC_GEN), GEN_IP, SEQ_FLOWS, d, e, vec![port_mac(0), port_mac(1)])
}

fn measure_table(table: &Table, s: &Settings, with_update: bool, bar: &indicatif::ProgressBar) -> anyhow::Result<TableRun> {
    let topology = Topology::new()?;
    bar.set_message(format!("{}: installing {} routes in the kernel", table.name, table.routes.len()));
    let start = Instant::now();
    topology.write_routes(&table.routes)?;
    let install_s = start.elapsed().as_secs_f64();
    let rx = ["ps1", "ps2"].map(|dev| PortConfig { ethertypes: vec![0x0800], ..PortConfig::new(dev) }).to_vec();
    let generator = Generator::<Ipv4Stream>::start(&topology.generator, "pg0", &topology.sink, rx)?;
    let shapes: Vec<(usize, usize, Arc<Ipv4Stream>)> =
        SHAPES.iter().map(|&(size, dests)| (size, dests, Arc::new(streams(table, size, dests)))).collect();
    let mut run = TableRun {
        table: table.name,
        installed: table.routes.len(),
        left_out: table.left_out,
        install_s,
        loaded_s: Vec::new(),
        samples: Vec::new(),
        router_drops: 0,
        punted: 0,
        io_drops: 0,
        update: None,
        iperf: Vec::new(),
    };
    for _ in 0..s.reps {
        for system in SYSTEMS {
            bar.set_message(format!("{}: {}", table.name, system.name()));
            let router = match system {
                System::Nexthop => Some(RunningRouter::start(&topology)?),
                System::Linux => None,
            };
            if let Some(r) = &router {
                run.loaded_s.push(r.loaded_s);
            }
            for (size, dests, stream) in &shapes {
                let found = search(|rate| generator.run(stream, spec(s, rate)), s.steps);
                let (overload, passed, probes) = found?;
                run.samples.push(Sample { system, shape: (*size, *dests), overload, passed, probes });
                bar.inc(1);
            }
            if let Some(r) = router {
                let (counters, io) = r.stop()?;
                run.router_drops += counters.drops.iter().sum::<u64>();
                run.punted += counters.kernel.iter().sum::<u64>();
                run.io_drops += io.transmit_drops + io.tap_drops;
            }
        }
    }
    if with_update {
        bar.set_message(format!("{}: route updates", table.name));
        let (size, dests, stream) = &shapes[1];
        let rate = median(&mpps_of(&run.samples, System::Nexthop, (*size, *dests))) * 1e6 / 2.0;
        run.update = Some(update(&topology, &generator, table, stream, s, rate)?);
    }
    drop(generator);
    bar.set_message(format!("{}: iperf3", table.name));
    run.iperf = iperf(&topology, s.iperf_s)?;
    Ok(run)
}

fn mpps_of(samples: &[Sample], system: System, shape: (usize, usize)) -> Vec<f64> {
    samples
        .iter()
        .filter(|x| x.system == system && x.shape == shape)
        .map(|x| x.passed.as_ref().map_or(0.0, |o| o.received_pps() / 1e6))
        .collect()
}

/// The route-update phase (see the module overview).
fn update(
    t: &Topology,
    generator: &Generator<Ipv4Stream>,
    table: &Table,
    stream: &Arc<Ipv4Stream>,
    s: &Settings,
    rate_pps: f64,
) -> anyhow::Result<Update> {
    // The routes the traffic uses first, then others, each moved to the next gateway.
    let mut chosen: Vec<usize> = Vec::with_capacity(s.updates);
    let mut taken = vec![false; table.routes.len()];
    let index: std::collections::HashMap<(u32, u8), usize> = table.routes.iter().enumerate().map(|(i, r)| ((r.prefix, r.len), i)).collect();
    for &d in stream.destinations() {
        if let Some(i) = longest(&index, d) {
            if !taken[i] && chosen.len() < s.updates {
                taken[i] = true;
                chosen.push(i);
            }
        }
    }
    for (i, t) in taken.iter_mut().enumerate() {
        if chosen.len() >= s.updates {
            break;
        }
        if !*t {
            *t = true;
            chosen.push(i);
        }
    }
    let mut updated = table.routes.clone();
    for &i in &chosen {
        updated[i].next_hop = (updated[i].next_hop + 1) % GATEWAYS as u32;
    }
    let new_oracle = routes::oracle(&updated);
    let new_egress: Vec<Egress> = stream.destinations().iter().map(|&d| egress(new_oracle.lookup(d) as usize)).collect();
    let alt: Vec<Option<Egress>> = new_egress.iter().map(|&e| Some(e)).collect();
    let changes: Vec<Route<u32>> = chosen.iter().map(|&i| updated[i]).collect();

    let router = RunningRouter::start(t)?;
    let during_stream = Arc::new((**stream).clone().also_accepting(&alt));
    let long = Settings { window: s.window * 3 + Duration::from_secs(1), ..*s };
    generator.send(&during_stream, spec(&long, Some(rate_pps)))?;
    std::thread::sleep(s.warmup);
    let before = router.applied.load(Ordering::Acquire);
    let start = Instant::now();
    t.write_routes(&changes)?;
    let kernel_s = start.elapsed().as_secs_f64();
    while router.applied.load(Ordering::Acquire) < before + chosen.len() as u64 {
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(60),
            "the router applied {} of {} route changes in 60 s",
            router.applied.load(Ordering::Acquire) - before,
            chosen.len()
        );
        std::thread::sleep(Duration::from_micros(100));
    }
    let applied_s = start.elapsed().as_secs_f64();
    let during = generator.outcome()?;
    let after_stream = Arc::new((**stream).clone().with_egress(new_egress));
    let after = generator.run(&after_stream, spec(s, Some(rate_pps)))?;
    router.stop()?;
    Ok(Update { routes: chosen.len(), kernel_s, applied_s, during, after })
}

/// The longest route covering `a`: its place in the table `index` lists by prefix and length.
fn longest(index: &std::collections::HashMap<(u32, u8), usize>, a: u32) -> Option<usize> {
    (0..=32u8).rev().find_map(|len| index.get(&(a & u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0), len)).copied())
}

/// One iperf3 run.
struct Iperf {
    system: System,
    /// Received.
    gbps: f64,
    /// TCP segments the sender sent again.
    retransmits: u64,
}

/// iperf3 through each system: one TCP stream.
fn iperf(t: &Topology, seconds: u32) -> anyhow::Result<Vec<Iperf>> {
    sh(&t.generator, "ip addr add 10.0.0.2/24 dev pg0 && ip route add default via 10.0.0.1 && ethtool -K pg0 tx off >/dev/null")?;
    sh(
        &t.sink,
        "ip link set ps1 up && ip addr add 10.1.0.2/24 dev ps1 && ip route add default via 10.1.0.1 && ethtool -K ps1 tx off >/dev/null",
    )?;
    let mut out = Vec::new();
    for system in SYSTEMS {
        let router = match system {
            System::Nexthop => Some(RunningRouter::start(t)?),
            System::Linux => None,
        };
        let mut server = Command::new("ip")
            .args(["netns", "exec", t.sink.name(), "iperf3", "-s", "-1", "-B", "10.1.0.2", "-A", &GEN_CORE.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("iperf3 (install it: scripts/setup.sh)")?;
        std::thread::sleep(Duration::from_millis(300));
        let client = t.generator.exec(&["iperf3", "-c", "10.1.0.2", "-t", &seconds.to_string(), "-J", "-A", &GEN_CORE.to_string()]);
        let _ = server.kill();
        let _ = server.wait();
        if let Some(r) = router {
            r.stop()?;
        }
        let client = client?;
        let report: serde_json::Value = serde_json::from_slice(&client.stdout).context("iperf3's JSON report")?;
        let bps = report["end"]["sum_received"]["bits_per_second"].as_f64();
        let bps = bps.with_context(|| format!("iperf3 through {}: {}", system.name(), report["error"]))?;
        let retransmits = report["end"]["sum_sent"]["retransmits"].as_u64().unwrap_or(0);
        out.push(Iperf { system, gbps: bps / 1e9, retransmits });
    }
    Ok(out)
}

impl super::Experiment for IpRouterExperiment {
    fn name(&self) -> &'static str {
        "ip-router"
    }

    fn about(&self) -> &'static str {
        "IPv4 frames/s one core routes between veth ports on a RouteViews table: nexthop's router (Bloom-filter FIB mirrored from the kernel) vs Linux kernel forwarding on the same interfaces, every frame's egress checked against a reference LPM; netlink route updates/s while forwarding; iperf3"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let source = routes::dedup(&routes::load(&routes::pyasn_dir().join(routes::V4_2014))?.v4);
        let settings = if cfg.quick {
            Settings {
                reps: 1,
                warmup: Duration::from_millis(50),
                window: Duration::from_millis(120),
                steps: 3,
                updates: 10_000,
                iperf_s: 1,
            }
        } else {
            Settings {
                reps: cfg.reps.max(3),
                warmup: Duration::from_millis(200),
                window: Duration::from_secs(1),
                steps: 7,
                updates: 100_000,
                iperf_s: 3,
            }
        };
        let large = if cfg.quick { &source[..source.len().min(65_536)] } else { &source[..] };
        let small: Vec<Route<u32>> = source.iter().step_by((source.len() / 1024).max(1)).take(1024).copied().collect();
        let tables = [Table::new("small", &small), Table::new(if cfg.quick { "routeviews-2014-64k" } else { "routeviews-2014" }, large)];
        let bar = progress::bar((tables.len() * settings.reps * SYSTEMS.len() * SHAPES.len()) as u64, "ip-router searches");
        let mut runs = Vec::new();
        for (i, table) in tables.iter().enumerate() {
            runs.push(measure_table(table, &settings, i == tables.len() - 1, &bar)?);
        }
        bar.finish_and_clear();
        let rows = rows(&runs);
        Ok(Report { plots: plots(&rows), summary: summary(&rows, &runs), rows })
    }
}

fn rows(runs: &[TableRun]) -> Vec<Row> {
    let mut rows = Vec::new();
    for run in runs {
        for &(size, dests) in &SHAPES {
            for system in SYSTEMS {
                let mine: Vec<&Sample> = run.samples.iter().filter(|x| x.system == system && x.shape == (size, dests)).collect();
                let mpps = mpps_of(&run.samples, system, (size, dests));
                let all = || mine.iter().flat_map(|x| &x.probes);
                let passed = || mine.iter().filter_map(|x| x.passed.as_ref());
                let ns_per_frame: Vec<f64> =
                    passed().filter_map(|o| o.core_busy.map(|b| b * o.window_s * 1e9 / o.received_in_window.max(1) as f64)).collect();
                let m = median(&mpps);
                let mut row = Row::new(system.name())
                    .with("routes", run.table)
                    .with("routes_installed", run.installed as u64)
                    .with("frame_bytes", size as u64)
                    .with("flows", dests as u64)
                    .with("mpps", m)
                    .with("gbps", m * size as f64 * 8.0 / 1e3)
                    .with("mpps_samples", mpps)
                    .with("overload_mpps", median(&mine.iter().map(|x| x.overload.received_pps() / 1e6).collect::<Vec<_>>()))
                    .with("offered_mpps", median(&mine.iter().map(|x| x.overload.offered_pps() / 1e6).collect::<Vec<_>>()))
                    .with("fwd_core_ns_per_frame", median(&ns_per_frame))
                    .with("lost", passed().map(|o| o.lost).sum::<u64>())
                    .with("lost_at_overload", mine.iter().map(|x| x.overload.lost).sum::<u64>())
                    .with("sent", all().map(|o| o.sent).sum::<u64>())
                    .with("misrouted", all().map(|o| o.counts.misrouted).sum::<u64>())
                    .with("corrupted", all().map(|o| o.counts.corrupted).sum::<u64>());
                if let Some(i) = run.iperf.iter().find(|i| i.system == system) {
                    row = row.with("iperf3_gbps", i.gbps).with("iperf3_retransmits", i.retransmits);
                }
                rows.push(row);
            }
        }
        let mut row = Row::new("nexthop")
            .with("routes", run.table)
            .with("routes_installed", run.installed as u64)
            .with("routes_left_out", run.left_out as u64)
            .with("kernel_install_routes_per_s", run.installed as f64 / run.install_s)
            .with("fib_load_s", median(&run.loaded_s))
            .with("router_drops", run.router_drops)
            .with("router_punted", run.punted)
            .with("router_io_drops", run.io_drops);
        if let Some(u) = &run.update {
            row = row
                .with("update_routes", u.routes as u64)
                .with("update_routes_per_s", u.routes as f64 / u.applied_s)
                .with("update_kernel_routes_per_s", u.routes as f64 / u.kernel_s)
                .with("update_misrouted", u.during.counts.misrouted + u.after.counts.misrouted)
                .with("update_corrupted", u.during.counts.corrupted + u.after.counts.corrupted)
                .with("update_lost", u.during.lost + u.after.lost)
                .with("update_loss", loss(&u.during));
        }
        rows.push(row.with("phase", "control"));
    }
    rows
}

fn find(rows: &[Row], system: System, table: &str, shape: (usize, usize), key: &str) -> f64 {
    rows.iter()
        .find(|r| {
            r.str("system") == Some(system.name())
                && r.str("routes") == Some(table)
                && r.num("frame_bytes") == Some(shape.0 as f64)
                && r.num("flows") == Some(shape.1 as f64)
        })
        .and_then(|r| r.num(key))
        .unwrap_or(f64::NAN)
}

fn summary(rows: &[Row], runs: &[TableRun]) -> Vec<String> {
    let mut out = Vec::new();
    for run in runs {
        for &shape in &SHAPES {
            let (n, l) = (find(rows, System::Nexthop, run.table, shape, "mpps"), find(rows, System::Linux, run.table, shape, "mpps"));
            out.push(format!(
                "{} ({} routes), {} B to {} destinations: nexthop {n:.3} Mpps = {:.2}× linux ({l:.3}); misrouted {} / {}",
                run.table,
                run.installed,
                shape.0,
                shape.1,
                n / l,
                find(rows, System::Nexthop, run.table, shape, "misrouted"),
                find(rows, System::Linux, run.table, shape, "misrouted"),
            ));
        }
        if let Some(u) = &run.update {
            out.push(format!(
                "{}: {} route changes applied at {:.0}/s while forwarding (the kernel took them at {:.0}/s); {} misrouted, {} lost",
                run.table,
                u.routes,
                u.routes as f64 / u.applied_s,
                u.routes as f64 / u.kernel_s,
                u.during.counts.misrouted + u.after.counts.misrouted,
                u.during.lost + u.after.lost,
            ));
        }
        let gbps = |s: System| run.iperf.iter().find(|i| i.system == s).map_or(f64::NAN, |i| i.gbps);
        out.push(format!("{}: iperf3 nexthop {:.2} Gbit/s, linux {:.2} Gbit/s", run.table, gbps(System::Nexthop), gbps(System::Linux)));
    }
    out
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let tables: Vec<String> = {
        let mut t: Vec<String> = rows.iter().filter_map(|r| r.str("routes").map(String::from)).collect();
        t.dedup();
        t
    };
    let mut groups = Vec::new();
    let mut series: Vec<(String, Vec<f64>)> = SYSTEMS.iter().map(|s| (s.name().to_string(), Vec::new())).collect();
    for t in &tables {
        for &shape in &SHAPES {
            groups.push(format!("{t}, {} B, {} dst", shape.0, shape.1));
            for (i, &s) in SYSTEMS.iter().enumerate() {
                series[i].1.push(find(rows, s, t, shape, "mpps"));
            }
        }
    }
    vec![Plot {
        file_tag: "mpps".into(),
        title: "IPv4 frames routed between veth ports by one core (million/s)".into(),
        y_label: "million frames/s".into(),
        chart: Chart::Bars { groups, series },
    }]
}
