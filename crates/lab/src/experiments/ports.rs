//! Experiment `ports`: how many frames a second one forwarding core moves between two veth
//! ports — nexthop-io's AF_XDP ports (native and generic XDP), its AF_PACKET ports, and the
//! kernel's own bridge between the same two interfaces (the peer).
//!
//! # Overview
//! The experiment makes three network namespaces (generator, forwarder, sink) joined by two veth
//! pairs, `pg0`–`pf0` and `pf1`–`ps0`; traffic never leaves them. One thread, pinned to core 0,
//! is both generator and sink (`crate::frames`): its port set holds an AF_XDP port on `pg0`
//! (opened inside the generator's namespace) and one on `ps0` (inside the sink's), so it counts
//! every frame sent and every frame back, checking each byte. The system measured forwards
//! `pf0` → `pf1` on core 1:
//! - `af-xdp` (native, generic): a thread with a port set of two AF_XDP ports, moving each
//!   received frame's address to the other port's transmit ring (no copy in user space);
//! - `af-packet`: the same loop on two AF_PACKET ports (TPACKET_V3 rings, a copy each way);
//! - `linux-bridge`: no thread; a Linux bridge enslaving `pf0` and `pf1`, the sink's address
//!   in its forwarding database.
//!
//! All the forwarder side's kernel work is kept on core 1 as well: receive packet steering sends
//! `pf0`'s frames to core 1, and the NAPI pollers are threads (`/sys/class/net/*/threaded`)
//! pinned there (`pf0`) or on core 0 with the sink (`ps0`). The generator sends as fast as its
//! port takes frames, over 4 flows; a row's `mpps` is the frames the sink received intact in the
//! measured window, its `lost` the frames sent and never received (the forwarder or its
//! interfaces dropped them: it was offered more than it moves), `corrupted` those whose bytes
//! changed. Systems and frame sizes take turns, repetition by repetition; the median rate is
//! reported.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::Context;
use nexthop_io::netns::{veth, Netns};
use nexthop_io::{Backend, PortConfig, PortCounters, PortId, PortSet, XdpMode};

use crate::frames::format::Template;
use crate::frames::traffic::{self, Outcome, Spec, Stream};
use crate::harness::median;
use crate::machine::pin_current_thread;
use crate::plot::{Chart, Plot};
use crate::{progress, Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct PortsExperiment;

/// Frame sizes (bytes without the FCS; 64 is the smallest Ethernet frame with it).
const SIZES: [usize; 2] = [64, 1500];
/// The generator's flows.
const FLOWS: u16 = 4;
/// The core of the generator and sink, and the forwarding core.
const GEN_CORE: usize = 0;
const FWD_CORE: usize = 1;

/// A system measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum System {
    AfXdp(XdpMode),
    AfPacket,
    LinuxBridge,
}

const SYSTEMS: [System; 4] = [System::AfXdp(XdpMode::Native), System::AfXdp(XdpMode::Generic), System::AfPacket, System::LinuxBridge];

impl System {
    fn name(self) -> &'static str {
        match self {
            System::AfXdp(_) => "af-xdp",
            System::AfPacket => "af-packet",
            System::LinuxBridge => "linux-bridge",
        }
    }

    fn xdp_mode(self) -> &'static str {
        match self {
            System::AfXdp(m) => m.name(),
            _ => "-",
        }
    }

    fn label(self) -> String {
        match self {
            System::AfXdp(m) => format!("af-xdp {}", m.name()),
            s => s.name().to_string(),
        }
    }
}

/// The three namespaces and their links.
struct Topology {
    generator: Netns,
    forwarder: Netns,
    sink: Netns,
}

/// A new namespace for an experiment: `<prefix><role><this process's id>`.
pub(crate) fn namespace(prefix: &str, role: &str) -> anyhow::Result<Netns> {
    Netns::new(&format!("{prefix}{role}{}", std::process::id() % 100_000)).with_context(|| "making a network namespace (needs root)")
}

/// The receive work of `forwarding` (a namespace and its interface taking the generator's
/// frames) on the forwarding core: steered there (RPS) where it goes through the stack,
/// busy-polled by the forwarder where XDP has a NAPI instance to poll (its interrupts
/// deferred: the kernel leaves the polling to the sockets); each of `polled` (the sink's
/// interfaces) deferred likewise, for the sink to busy-poll on core 0.
pub(crate) fn place_receive_work(forwarding: (&Netns, &str), polled: &[(&Netns, &str)]) -> anyhow::Result<()> {
    let (ns, dev) = forwarding;
    sh(ns, &format!("echo {:x} > /sys/class/net/{dev}/queues/rx-0/rps_cpus", 1u64 << FWD_CORE))?;
    for (ns, dev) in std::iter::once(&forwarding).chain(polled) {
        sh(ns, &format!("echo 2 > /sys/class/net/{dev}/napi_defer_hard_irqs && echo 200000 > /sys/class/net/{dev}/gro_flush_timeout"))?;
    }
    Ok(())
}

/// The generator and sink's thread (core 0, one thread for both, so that a 2-core machine
/// keeps its other core for the system measured): AF_XDP ports, one out of the generator's
/// namespace and others into the sink's, and each job sent to it a traffic run of a stream.
pub(crate) struct Generator<S> {
    /// The Ethernet addresses of the generator's port and of the sink's, in order.
    pub(crate) macs: ([u8; 6], Vec<[u8; 6]>),
    jobs: Option<mpsc::Sender<(Arc<S>, Spec)>>,
    outcomes: mpsc::Receiver<Outcome>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl<S: Stream + 'static> Generator<S> {
    /// Opens `tx` in namespace `generator` and each of `rx` (busy-polled) in namespace `sink`.
    pub(crate) fn start(generator: &Netns, tx: &str, sink: &Netns, rx: Vec<PortConfig>) -> anyhow::Result<Generator<S>> {
        let (jobs, job_rx) = mpsc::channel::<(Arc<S>, Spec)>();
        let (out_tx, outcomes) = mpsc::channel();
        let (g, s, tx) = (generator.name().to_string(), sink.name().to_string(), tx.to_string());
        let open = move || -> anyhow::Result<_> {
            let mut set = PortSet::new(16384)?;
            enter(&g)?;
            let tx = set.open(PortConfig { backend: Some(Backend::AfXdp), ..PortConfig::new(&tx) })?;
            enter(&s)?;
            let mut ports = Vec::new();
            for c in rx {
                ports.push(set.open(PortConfig { backend: Some(Backend::AfXdp), busy_poll: true, ..c })?);
            }
            let macs = (set.info(tx).interface.mac, ports.iter().map(|&p| set.info(p).interface.mac).collect());
            Ok(((set, tx, ports), macs))
        };
        let serve = move |(mut set, tx, rx): (PortSet, PortId, Vec<PortId>)| {
            for (stream, spec) in job_rx {
                let _ = out_tx.send(traffic::run(&mut set, tx, &rx, &*stream, &spec));
            }
            Ok(())
        };
        let (thread, macs) = spawn_opened(GEN_CORE, "the generator and sink ports", open, serve)?;
        Ok(Generator { macs, jobs: Some(jobs), outcomes, thread: Some(thread) })
    }

    /// Starts a run of `stream` as `spec` says; [`Generator::outcome`] waits for it.
    pub(crate) fn send(&self, stream: &Arc<S>, spec: Spec) -> anyhow::Result<()> {
        self.jobs.as_ref().context("stopped")?.send((stream.clone(), spec)).context("the traffic thread is gone")
    }

    /// The outcome of the run started last.
    pub(crate) fn outcome(&self) -> anyhow::Result<Outcome> {
        self.outcomes.recv().context("the traffic thread is gone")
    }

    /// A run of `stream` as `spec` says.
    pub(crate) fn run(&self, stream: &Arc<S>, spec: Spec) -> anyhow::Result<Outcome> {
        self.send(stream, spec)?;
        self.outcome()
    }
}

impl<S> Drop for Generator<S> {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) use nexthop_router::l2::hosts_file::mac_text;

/// Runs `script` with `sh` in namespace `ns`; its standard error if it fails.
pub(crate) fn sh(ns: &Netns, script: &str) -> anyhow::Result<()> {
    let out = ns.exec(&["sh", "-c", script])?;
    anyhow::ensure!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr).trim());
    Ok(())
}

impl Topology {
    fn new() -> anyhow::Result<Topology> {
        let ns = |role: &str| namespace("nxp", role);
        let t = Topology { generator: ns("g")?, forwarder: ns("f")?, sink: ns("s")? };
        veth(&t.generator, "pg0", &t.forwarder, "pf0", 1)?;
        veth(&t.forwarder, "pf1", &t.sink, "ps0", 1)?;
        place_receive_work((&t.forwarder, "pf0"), &[(&t.sink, "ps0")])?;
        Ok(t)
    }
}

/// Starts a thread pinned to `core` that runs `open` (its ports, in their namespaces) and then
/// `body` with what it opened; returns once `open` is done, with the value `open` hands back
/// (what the caller needs to know of the ports), or its error if it failed.
pub(crate) fn spawn_opened<S, V: Send + 'static, R: Send + 'static>(
    core: usize,
    what: &'static str,
    open: impl FnOnce() -> anyhow::Result<(S, V)> + Send + 'static,
    body: impl FnOnce(S) -> anyhow::Result<R> + Send + 'static,
) -> anyhow::Result<(std::thread::JoinHandle<anyhow::Result<R>>, V)> {
    let (ready_tx, ready) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        pin_current_thread(core);
        match open() {
            Ok((opened, value)) => {
                let _ = ready_tx.send(Ok(value));
                body(opened)
            }
            Err(e) => {
                let _ = ready_tx.send(Err(format!("{e:#}")));
                Err(e)
            }
        }
    });
    let value =
        ready.recv().with_context(|| format!("opening {what}: the thread is gone"))?.map_err(|e| anyhow::anyhow!("opening {what}: {e}"))?;
    Ok((thread, value))
}

/// Moves the calling thread into the namespace called `name`.
pub(crate) fn enter(name: &str) -> anyhow::Result<()> {
    nexthop_io::netns::enter(name).with_context(|| format!("entering namespace {name}"))
}

/// The system forwarding `pf0` → `pf1` while a run goes on.
enum Running {
    Thread { stop: Arc<AtomicBool>, thread: std::thread::JoinHandle<anyhow::Result<(PortCounters, PortCounters)>> },
    Bridge,
}

impl Running {
    fn start(system: System, t: &Topology, sink_mac: [u8; 6]) -> anyhow::Result<Running> {
        let (backend, mode) = match system {
            System::AfXdp(m) => (Backend::AfXdp, Some(m)),
            System::AfPacket => (Backend::AfPacket, None),
            System::LinuxBridge => {
                let f = &t.forwarder;
                f.ip(&["link", "add", "br0", "type", "bridge", "stp_state", "0"])?;
                f.ip(&["link", "set", "pf0", "master", "br0"])?;
                f.ip(&["link", "set", "pf1", "master", "br0"])?;
                f.ip(&["link", "set", "br0", "up"])?;
                sh(f, &format!("bridge fdb replace {} dev pf1 master static", mac_text(sink_mac)))?;
                return Ok(Running::Bridge);
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let name = t.forwarder.name().to_string();
        let halt = stop.clone();
        let open = move || -> anyhow::Result<_> {
            enter(&name)?;
            let mut set = PortSet::new(16384)?;
            let port = |dev: &str| PortConfig { backend: Some(backend), xdp_mode: mode, busy_poll: true, ..PortConfig::new(dev) };
            let i = set.open(port("pf0"))?;
            let o = set.open(port("pf1"))?;
            anyhow::ensure!(set.info(i).xdp_mode == mode, "pf0 opened in {:?}, not {mode:?}", set.info(i).xdp_mode);
            Ok(((set, i, o), ()))
        };
        let forward = move |(mut set, i, o): (PortSet, _, _)| {
            let mut batch = Vec::with_capacity(256);
            while !halt.load(Ordering::Relaxed) {
                if set.receive(i, &mut batch, 256) == 0 {
                    // Sleep rather than spin: the kernel's receive work shares this core.
                    set.wait(Duration::from_millis(1));
                    continue;
                }
                for f in batch.drain(..) {
                    let _ = set.transmit(o, f); // a drop is counted
                }
                set.flush();
            }
            Ok((set.counters(i), set.counters(o)))
        };
        let (thread, ()) = spawn_opened(FWD_CORE, "the forwarder's ports", open, forward)?;
        Ok(Running::Thread { stop, thread })
    }

    /// Stops the system; the forwarder's drops (frames it took but could not send).
    fn stop(self, t: &Topology) -> anyhow::Result<u64> {
        match self {
            Running::Thread { stop, thread } => {
                stop.store(true, Ordering::Relaxed);
                let (i, o) = thread.join().map_err(|_| anyhow::anyhow!("the forwarder thread panicked"))??;
                Ok(i.dropped_total() + o.dropped_total())
            }
            Running::Bridge => {
                t.forwarder.ip(&["link", "del", "br0"])?;
                Ok(0)
            }
        }
    }
}

/// The loss a probe may have and still pass: RFC 2544's throughput allows none; a frame or
/// two in a thousand at a rate's start (rings filling) is tolerated.
pub(crate) const LOSS_TOLERATED: f64 = 0.001;

/// One repetition's measurement of one system at one size: every frame the generator makes
/// (`overload`), then a binary search for the highest rate passed with at most
/// [`LOSS_TOLERATED`] lost (`passed`; `None` if none did).
struct Sample {
    overload: Outcome,
    passed: Option<Outcome>,
    probes: Vec<Outcome>,
    forwarder_drops: u64,
}

pub(crate) fn loss(o: &Outcome) -> f64 {
    o.lost as f64 / o.sent.max(1) as f64
}

/// The search (see [`Sample`]): `steps` halvings of the range below the overload's offered
/// rate; `run` sends at a rate (`None`: as fast as the port takes frames).
pub(crate) fn search(
    mut run: impl FnMut(Option<f64>) -> anyhow::Result<Outcome>,
    steps: usize,
) -> anyhow::Result<(Outcome, Option<Outcome>, Vec<Outcome>)> {
    let overload = run(None)?;
    let mut probes = vec![overload.clone()];
    if loss(&overload) <= LOSS_TOLERATED {
        return Ok((overload.clone(), Some(overload), probes));
    }
    let (mut lo, mut hi, mut passed) = (0.0, overload.offered_pps(), None);
    for _ in 0..steps {
        let mid = (lo + hi) / 2.0;
        let o = run(Some(mid))?;
        if loss(&o) <= LOSS_TOLERATED {
            lo = mid;
            passed = Some(o.clone());
        } else {
            hi = mid;
        }
        probes.push(o);
    }
    Ok((overload, passed, probes))
}

impl super::Experiment for PortsExperiment {
    fn name(&self) -> &'static str {
        "ports"
    }

    fn about(&self) -> &'static str {
        "frames/s one core forwards between two veth ports (RFC 2544 throughput and under overload): nexthop-io AF_XDP (native, generic) and AF_PACKET vs the Linux bridge, in namespaces it makes"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let topology = Topology::new()?;
        let sink = PortConfig { ethertypes: vec![crate::frames::format::ETHERTYPE], ..PortConfig::new("ps0") };
        let traffic = Generator::<Template>::start(&topology.generator, "pg0", &topology.sink, vec![sink])?;
        let (gen_mac, sink_mac) = (traffic.macs.0, traffic.macs.1[0]);
        let (warmup, window, steps) = if cfg.quick {
            (Duration::from_millis(50), Duration::from_millis(150), 4)
        } else {
            (Duration::from_millis(200), Duration::from_secs(1), 7)
        };
        let reps = cfg.reps.max(crate::harness::MIN_REPS);
        let bar = progress::bar((reps * SIZES.len() * SYSTEMS.len()) as u64, "ports searches");
        let mut samples: Vec<(System, usize, Sample)> = Vec::new();
        for _ in 0..reps {
            for &size in &SIZES {
                for &system in &SYSTEMS {
                    let running = Running::start(system, &topology, sink_mac)?;
                    let spec =
                        Spec { flows: FLOWS, rate_pps: None, warmup, window, drain: Duration::from_millis(30), watch_core: Some(FWD_CORE) };
                    let template = Arc::new(Template::new(size, sink_mac, gen_mac));
                    let found = search(|rate_pps| traffic.run(&template, Spec { rate_pps, ..spec.clone() }), steps);
                    let forwarder_drops = running.stop(&topology)?;
                    let (overload, passed, probes) = found?;
                    samples.push((system, size, Sample { overload, passed, probes, forwarder_drops }));
                    bar.inc(1);
                }
            }
        }
        bar.finish_and_clear();
        drop(traffic);
        let rows = rows(&samples);
        Ok(Report { plots: plots(&rows), summary: summary(&rows), rows })
    }
}

fn rows(samples: &[(System, usize, Sample)]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &size in &SIZES {
        for &system in &SYSTEMS {
            let mine: Vec<&Sample> = samples.iter().filter(|(s, z, _)| *s == system && *z == size).map(|(_, _, x)| x).collect();
            let mpps: Vec<f64> = mine.iter().map(|s| s.passed.as_ref().map_or(0.0, |o| o.received_pps() / 1e6)).collect();
            let overload: Vec<f64> = mine.iter().map(|s| s.overload.received_pps() / 1e6).collect();
            let offered: Vec<f64> = mine.iter().map(|s| s.overload.offered_pps() / 1e6).collect();
            let all = || mine.iter().flat_map(|s| &s.probes);
            // The forwarding core's time per frame at the passing rate: what it would move busy
            // all the time, whatever the generator could offer.
            let passed = || mine.iter().filter_map(|s| s.passed.as_ref());
            let busy: Vec<f64> = passed().filter_map(|o| o.core_busy).collect();
            let ns_per_frame: Vec<f64> =
                passed().filter_map(|o| o.core_busy.map(|b| b * o.window_s * 1e9 / o.received_in_window.max(1) as f64)).collect();
            let m = median(&mpps);
            let corrupted: u64 = all().map(|o| o.counts.corrupted).sum();
            rows.push(
                Row::new(system.name())
                    .with("xdp_mode", system.xdp_mode())
                    .with("frame_bytes", size as u64)
                    .with("mpps", m)
                    .with("gbps", m * size as f64 * 8.0 / 1e3)
                    .with("mpps_samples", mpps)
                    .with("overload_mpps", median(&overload))
                    .with("fwd_core_busy", median(&busy))
                    .with("fwd_core_ns_per_frame", median(&ns_per_frame))
                    .with("offered_mpps", median(&offered))
                    .with("generator_limited", mine.iter().filter(|s| loss(&s.overload) <= LOSS_TOLERATED).count() as u64)
                    .with("lost", mine.iter().map(|s| s.passed.as_ref().map_or(0, |o| o.lost)).sum::<u64>())
                    .with("lost_at_overload", mine.iter().map(|s| s.overload.lost).sum::<u64>())
                    .with("sent", all().map(|o| o.sent).sum::<u64>())
                    .with("duplicated", all().map(|o| o.counts.duplicated).sum::<u64>())
                    .with("reordered", all().map(|o| o.counts.reordered).sum::<u64>())
                    .with("corrupted", corrupted)
                    .with("forwarder_drops", mine.iter().map(|s| s.forwarder_drops).sum::<u64>())
                    .with("mismatches", corrupted),
            );
        }
    }
    rows
}

fn mpps(rows: &[Row], system: System, size: usize) -> f64 {
    rows.iter()
        .find(|r| {
            r.str("system") == Some(system.name())
                && r.str("xdp_mode") == Some(system.xdp_mode())
                && r.num("frame_bytes") == Some(size as f64)
        })
        .and_then(|r| r.num("mpps"))
        .unwrap_or(f64::NAN)
}

fn summary(rows: &[Row]) -> Vec<String> {
    let corrupted: f64 = rows.iter().filter_map(|r| r.num("corrupted")).sum();
    SIZES
        .iter()
        .map(|&size| {
            let native = mpps(rows, SYSTEMS[0], size);
            let bridge = mpps(rows, System::LinuxBridge, size);
            let packet = mpps(rows, System::AfPacket, size);
            format!(
                "{size} B, one forwarding core: af-xdp native {native:.2} Mpps = {:.2}× linux-bridge ({bridge:.2}), {:.2}× af-packet ({packet:.2}); af-xdp generic {:.2} Mpps; {corrupted} corrupted",
                native / bridge,
                native / packet,
                mpps(rows, SYSTEMS[1], size),
            )
        })
        .collect()
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let groups = SIZES.iter().map(|s| format!("{s}-byte frames")).collect();
    let series = SYSTEMS.iter().map(|&s| (s.label(), SIZES.iter().map(|&z| mpps(rows, s, z)).collect())).collect();
    vec![Plot {
        file_tag: "mpps".into(),
        title: "Frames forwarded between two veth ports by one core (million/s)".into(),
        y_label: "million frames/s".into(),
        chart: Chart::Bars { groups, series },
    }]
}
