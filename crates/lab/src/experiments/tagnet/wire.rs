//! Experiment `tagnet-wire`: the paper's Table 1 on the wire — one TagNet router
//! (`nexthop_router::tag`) on the port layer with the 10M-descriptor FIB (1M with `--quick`),
//! the push/pull mixes of the `tagnet` experiment's `mixed` rows as real frames between veth
//! ports, beside the in-memory engine (`Engine::forward_batch`) on the same packets in the same
//! run.
//!
//! # Overview
//! - Namespaces: a generator (`pg0`), the router (`pw0` in, `pw1`–`pw4` out) and a sink
//!   (`ps1`–`ps4`), joined by veth pairs; traffic never leaves them. One thread on core 0 is
//!   generator and sink (AF_XDP ports); the router is on core 1.
//! - The FIB: the `tagnet` experiment's `zipf` descriptors, their (tree, interface) pairs on 4
//!   trees, each tree's interfaces the router's port toward one sink port (tree t: `pw{t+1}`),
//!   so that every packet leaves by one port: the row measures the match and the port layer,
//!   not copies. The locators: the `tagnet` experiment's 4 BFS trees of its AS-like graph, the
//!   router one of their nodes, every TZ interface of tree t that same port.
//! - The mixes: flows of one push (1280 B), or one interest by descriptor (fan-out 1, 800 B,
//!   the consumer's locator in it) and up to 15 pairs of follow-up interest (100 B) and data
//!   (1280 B) by locator, for pull shares 0–100%; packets that would be dropped (no match on
//!   their tree, a locator of the router itself) are left out, so every frame sent must arrive.
//! - Checks: the router's pipeline decides every packet of every mix as the engine does
//!   (sans-I/O, before the run: `decision_mismatches`); the sink checks every frame — out of
//!   its tree's port, TTL decremented, the router's address as source, everything else
//!   unchanged (`misdelivered`, `corrupted`, `duplicates`).
//! - `mpps` on the wire is the highest rate passed with at most 0.1% lost (the `ports`
//!   experiment's binary search); `delivered_pct` is that run's.
//! - `port-layer` rows: the same frames on the same ports forwarded with no lookup (each out of
//!   its tree's port, rewritten as the router does), the port layer's own ceiling in this run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nexthop_io::netns::{veth, Netns};
use nexthop_io::PortConfig;
use nexthop_lookup::tag::{Address, Compression, Decision, DescriptorFib, Engine, Fanout, ForwardingState, Layout, Port};
use nexthop_router::tag::packet::{Kind, Locator, Packet, DEFAULT_TTL};
use nexthop_router::tag::ports::{PortTagRouter, TagPortsConfig, BATCH};
use nexthop_router::tag::router::{self, DropReason, TagRouter};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::inputs::{size_label, BURST, DATA_BYTES, FOLLOW_UP_BYTES, INTEREST_BYTES, PUSH_BYTES};
use super::locators::{locators, Locators};
use crate::experiments::ports::{enter, mac_text, namespace, place_receive_work, search, sh, spawn_opened, Generator};
use crate::frames::tag::TagStream;
use crate::frames::traffic::{Outcome, Spec};
use crate::harness::{compare, median, Contender};
use crate::plot::{Chart, Plot};
use crate::workload::tags::{self as workload, TREES};
use crate::{progress, Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct TagnetWireExperiment;

const FWD_CORE: usize = 1;
const MAC_GEN: [u8; 6] = [2, 0, 0, 0, 0, 0x71];
const SEQ_FLOWS: u16 = 16;
/// Receiving after a run's last frame: the backlog in the rings (thousands of frames at the
/// push mix's rate, tens of milliseconds) must arrive before the next run starts its count.
const DRAIN: Duration = Duration::from_millis(200);
/// The port layer's system name in rows.
const PORT_LAYER: &str = "port-layer";
/// The pull shares of the paper's Table 1.
const PULL_PCTS: [u32; 6] = [0, 20, 40, 60, 80, 100];
/// Follow-up pairs after an interest, at most.
const MAX_FOLLOW_UP: u32 = 15;

/// The router's egress MAC toward sink port `t`.
fn egress_mac(t: usize) -> [u8; 6] {
    [2, 0, 0, 0, 0x72, t as u8 + 1]
}

/// One mix: its packets (for the engine: the TagNet bytes; for the wire: the packet, its frame
/// size and sink port) and the engine's decision for each.
struct Mix {
    pull_pct: u32,
    bytes: Vec<Vec<u8>>,
    frames: Vec<(Packet<'static>, usize, usize)>,
    decisions: Vec<Option<Decision>>,
    mean_bytes: f64,
}

/// A packet's sink port: its tree's (the engine's decision is on that tree), or `None` when the
/// router drops it or keeps it.
fn sink_of(d: Option<Decision>, tree: u16) -> Option<usize> {
    match d {
        Some(Decision::Ports(_)) | Some(Decision::Interface { .. }) => Some(usize::from(tree)),
        Some(Decision::Deliver) | None => None,
    }
}

/// The mix of `pull_pct`% pulls: flows drawn as the `tagnet` experiment's `mixed` rows draw
/// them, each packet kept when the engine forwards it.
fn mix(
    pull_pct: u32,
    flows: usize,
    state: &ForwardingState,
    queries: &[nexthop_lookup::tag::Descriptor],
    loc: &Locators,
) -> anyhow::Result<Mix> {
    let mut rng = SmallRng::seed_from_u64(0x3e7 + u64::from(pull_pct));
    let mut engine = Engine::new(state);
    let (mut bytes, mut frames, mut decisions) = (Vec::new(), Vec::new(), Vec::new());
    let random_locator = |rng: &mut SmallRng, tree: u16| loop {
        let l = &loc.labels[usize::from(tree)];
        let v = rng.gen_range(0..l.len() as u32);
        if v != loc.router {
            break Locator { tree, label: l.label(v) };
        }
    };
    let mut add = |p: Packet<'static>, size: u64, tree: u16| -> anyhow::Result<()> {
        let mut b = Vec::new();
        p.encode(&mut b)?;
        let d = engine.forward(&b);
        if let Some(rx) = sink_of(d, tree) {
            frames.push((p, size as usize, rx));
            bytes.push(b);
            decisions.push(d);
        }
        Ok(())
    };
    for _ in 0..flows {
        let descriptor = queries[rng.gen_range(0..queries.len())];
        let tree = rng.gen_range(0..u16::from(TREES));
        let packet = |address, kind, reply| Packet { address, kind, ttl: DEFAULT_TTL, reply, payload: &[] };
        if rng.gen_range(0..100) < pull_pct {
            let me = random_locator(&mut rng, tree);
            let one = Fanout::new(1)?;
            add(packet(Address::Descriptor { descriptor, fanout: one, tree }, Kind::Interest, Some(me)), INTEREST_BYTES, tree)?;
            for _ in 0..rng.gen_range(0..=MAX_FOLLOW_UP) {
                let t = rng.gen_range(0..u16::from(TREES));
                let to = random_locator(&mut rng, t);
                add(packet(to.address(), Kind::Interest, Some(me)), FOLLOW_UP_BYTES, t)?;
                let back = random_locator(&mut rng, t);
                add(packet(back.address(), Kind::Data, Some(to)), DATA_BYTES, t)?;
            }
        } else {
            add(packet(Address::Descriptor { descriptor, fanout: Fanout::ALL, tree }, Kind::Push, None), PUSH_BYTES, tree)?;
        }
    }
    anyhow::ensure!(!frames.is_empty(), "a {pull_pct}% mix with no packet the router forwards");
    let mean_bytes = frames.iter().map(|f| f.1 as f64).sum::<f64>() / frames.len() as f64;
    Ok(Mix { pull_pct, bytes, frames, decisions, mean_bytes })
}

/// Frames the router's pipeline decides otherwise than the engine: out of its tree's port.
fn mismatches(router: &mut TagRouter, mix: &Mix) -> u64 {
    let mut frames: Vec<Vec<u8>> = mix
        .bytes
        .iter()
        .map(|b| {
            let mut f = nexthop_router::tag::packet::ether_header(MAC_GEN);
            f.extend_from_slice(b);
            f
        })
        .collect();
    let mut out = Vec::new();
    router.route_batch(Instant::now(), &mut frames[..], |_| 0, &mut out);
    out.iter().zip(&mix.frames).filter(|(d, f)| **d != router::Decision::Out(1 << (f.2 + 1))).count() as u64
}

/// The three namespaces and their links.
struct Topology {
    generator: Netns,
    router: Netns,
    sink: Netns,
}

impl Topology {
    fn new() -> anyhow::Result<Topology> {
        let ns = |role: &str| namespace("nxt", role);
        let t = Topology { generator: ns("g")?, router: ns("r")?, sink: ns("s")? };
        veth(&t.generator, "pg0", &t.router, "pw0", 1)?;
        sh(&t.generator, &format!("ip link set pg0 address {}", mac_text(MAC_GEN)))?;
        for i in 1..=usize::from(TREES) {
            veth(&t.router, &format!("pw{i}"), &t.sink, &format!("ps{i}"), 1)?;
            sh(&t.router, &format!("ip link set pw{i} address {}", mac_text(egress_mac(i - 1))))?;
        }
        let sinks: Vec<String> = (1..=usize::from(TREES)).map(|i| format!("ps{i}")).collect();
        let polled: Vec<(&Netns, &str)> = sinks.iter().map(|s| (&t.sink, s.as_str())).collect();
        place_receive_work((&t.router, "pw0"), &polled)?;
        Ok(t)
    }
}

/// The router forwarding while runs go on; its drops when stopped.
struct RunningRouter {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<anyhow::Result<(u64, u64)>>,
}

impl RunningRouter {
    fn start(t: &Topology, router: TagRouter) -> anyhow::Result<RunningRouter> {
        let stop = Arc::new(AtomicBool::new(false));
        let (name, halt) = (t.router.name().to_string(), stop.clone());
        let open = move || -> anyhow::Result<_> {
            enter(&name)?;
            let config = TagPortsConfig {
                interfaces: (0..=usize::from(TREES)).map(|i| format!("pw{i}")).collect(),
                tunnels: Vec::new(),
                xdp_mode: Some(nexthop_io::XdpMode::Native),
                busy_poll: true,
            };
            Ok((PortTagRouter::open(&config, router)?, ()))
        };
        let body = move |mut r: PortTagRouter| {
            r.run(&halt);
            let c = &r.router().counters;
            Ok((DropReason::ALL.iter().map(|&d| c.dropped(d)).sum::<u64>(), r.io_counters().transmit_drops))
        };
        let (thread, ()) = spawn_opened(FWD_CORE, "the TagNet router", open, body)?;
        Ok(RunningRouter { stop, thread })
    }

    /// (pipeline drops, transmit drops).
    fn stop(self) -> anyhow::Result<(u64, u64)> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().map_err(|_| anyhow::anyhow!("the router thread panicked"))?
    }
}

/// The port layer alone, the ceiling in the same run: the same ports, each frame sent out of
/// its tree's port with the router's rewrite (TTL decremented, the port's address as source)
/// and no lookup — the tree read at its fixed place in both address headers.
fn start_port_layer(t: &Topology) -> anyhow::Result<(Arc<AtomicBool>, std::thread::JoinHandle<anyhow::Result<u64>>)> {
    let stop = Arc::new(AtomicBool::new(false));
    let (name, halt) = (t.router.name().to_string(), stop.clone());
    let open = move || -> anyhow::Result<_> {
        enter(&name)?;
        let mut set = nexthop_io::PortSet::new(16384)?;
        let mut ports = Vec::new();
        for i in 0..=usize::from(TREES) {
            let mut c = PortConfig::new(&format!("pw{i}"));
            c.backend = Some(nexthop_io::Backend::AfXdp);
            c.xdp_mode = Some(nexthop_io::XdpMode::Native);
            c.ethertypes = vec![nexthop_router::tag::packet::ETHERTYPE];
            c.busy_poll = true;
            ports.push(set.open(c)?);
        }
        Ok(((set, ports), ()))
    };
    let body = move |(mut set, ports): (nexthop_io::PortSet, Vec<nexthop_io::PortId>)| {
        let (mut batch, mut dropped) = (Vec::with_capacity(BATCH), 0u64);
        while !halt.load(Ordering::Relaxed) {
            if set.receive(ports[0], &mut batch, BATCH) == 0 {
                set.flush();
                set.wait(Duration::from_millis(1));
                continue;
            }
            for mut f in batch.drain(..) {
                let b = set.pool().bytes_mut(&mut f);
                let tree = usize::from(u16::from_le_bytes([b[16], b[17]])) % usize::from(TREES);
                let ttl_at =
                    14 + if b[14] & 0x0f == 1 { nexthop_lookup::tag::DESCRIPTOR_HEADER } else { nexthop_lookup::tag::LOCATOR_HEADER } + 1;
                b[ttl_at] -= 1;
                b[6..12].copy_from_slice(&egress_mac(tree));
                dropped += u64::from(set.transmit(ports[1 + tree], f).is_err());
            }
            set.flush();
        }
        Ok(dropped)
    };
    let (thread, ()) = spawn_opened(FWD_CORE, "the port layer alone", open, body)?;
    Ok((stop, thread))
}

/// One mix's wire searches.
struct WireSample {
    passed: Option<Outcome>,
    overload: Outcome,
    probes: Vec<Outcome>,
}

impl crate::Experiment for TagnetWireExperiment {
    fn name(&self) -> &'static str {
        "tagnet-wire"
    }

    fn about(&self) -> &'static str {
        "TagNet on the wire: one router on veth ports (AF_XDP) with the 10M-descriptor FIB, the paper's push/pull mixes as frames, beside the in-memory engine on the same packets; every frame checked at the sink"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let (n, flows, reps, warmup, window, steps) = if cfg.quick {
            (1_000_000, 400, 1, Duration::from_millis(50), Duration::from_millis(150), 5)
        } else {
            (10_000_000, 3000, cfg.reps.max(3), Duration::from_millis(200), Duration::from_secs(1), 7)
        };
        let bar = progress::bar((PULL_PCTS.len() * (2 * reps + 1)) as u64, "tagnet-wire");
        bar.set_message(format!("building the {} FIB", size_label(n)));
        let entries = workload::zipf_fib(n, 0x2a + n as u64);
        let queries = workload::queries(&entries, 2_000, 2, 0x51);
        // Each tree's interfaces are the router's one port toward that tree's sink port.
        let mut fib = DescriptorFib::new();
        for (d, ports) in &entries {
            for id in ports.iter() {
                let tree = u16::from(id % TREES);
                fib.insert(*d, Port { tree, interface: 1 + tree })?;
            }
        }
        drop(entries);
        let loc = locators(cfg, &mut Vec::new())?;
        let routers = loc.labels.iter().map(|l| *l.router(loc.router)).collect();
        let state = ForwardingState {
            fib: fib.compile(Compression::RareChain, Layout::Srol)?,
            tree_ports: (0..u16::from(TREES)).map(|t| fib.tree_ports(t)).collect(),
            routers,
        };
        bar.set_message("the router's tables");
        let mut router = TagRouter::new("tagnet-wire", 1 + usize::from(TREES), &[], fib)?;
        for (t, l) in loc.labels.iter().enumerate() {
            let port = vec![Some(1 + t); usize::from(l.interfaces(loc.router))];
            router.set_locator(t as u16, *l.router(loc.router), port)?;
        }
        let mixes: Vec<Mix> = PULL_PCTS.iter().map(|&p| mix(p, flows, &state, &queries, &loc)).collect::<anyhow::Result<_>>()?;
        let decision_mismatches: Vec<u64> = mixes.iter().map(|m| mismatches(&mut router, m)).collect();
        router.counters = Default::default();

        // The in-memory engine on the same packets, one thread, bursts.
        let mut rows = Vec::new();
        for (m, &bad) in mixes.iter().zip(&decision_mismatches) {
            bar.set_message(format!("engine, {}% pull", m.pull_pct));
            let count = m.bytes.len();
            let mut contenders = vec![Contender::new("engine", |out: &mut Vec<Option<Decision>>| {
                out.resize(count, None);
                let mut e = Engine::new(&state);
                m.bytes.chunks(BURST).zip(out.chunks_mut(BURST)).for_each(|(p, o)| e.forward_batch(p, o));
            })];
            let o = compare(cfg.reps, &m.decisions, &mut contenders);
            let mpps = o[0].per_second(count) / 1e6;
            rows.push(
                Row::new("engine")
                    .with("pull_pct", m.pull_pct)
                    .with("descriptors", n as u64)
                    .with("packets", count as u64)
                    .with("avg_packet_bytes", m.mean_bytes)
                    .with("mpps", mpps)
                    .with("gbps", mpps * m.mean_bytes * 8.0 / 1e3)
                    .with("delivered_pct", 100.0)
                    .with("duplicates", 0u64)
                    .with("misdelivered", o[0].mismatches)
                    .with("decision_mismatches", bad),
            );
            bar.inc(1);
        }
        drop(state);

        // The router on the wire.
        let topology = Topology::new()?;
        let sinks = (1..=usize::from(TREES)).map(|i| PortConfig::new(&format!("ps{i}"))).collect();
        let generator = Generator::<TagStream>::start(&topology.generator, "pg0", &topology.sink, sinks)?;
        let egress: Vec<[u8; 6]> = (0..usize::from(TREES)).map(egress_mac).collect();
        let streams: Vec<Arc<TagStream>> = mixes
            .iter()
            .map(|m| TagStream::new(MAC_GEN, SEQ_FLOWS, &m.frames, egress.clone()).map(Arc::new))
            .collect::<anyhow::Result<_>>()?;
        let searches = |system: &str, samples: &mut Vec<(u32, WireSample)>| -> anyhow::Result<()> {
            for (m, stream) in mixes.iter().zip(&streams) {
                for _ in 0..reps {
                    bar.set_message(format!("{system}, {}% pull", m.pull_pct));
                    let spec = |rate| Spec { flows: SEQ_FLOWS, rate_pps: rate, warmup, window, drain: DRAIN, watch_core: Some(FWD_CORE) };
                    let (overload, passed, probes) = search(|rate| generator.run(stream, spec(rate)), steps)?;
                    samples.push((m.pull_pct, WireSample { passed, overload, probes }));
                    bar.inc(1);
                }
            }
            Ok(())
        };
        let (mut wire, mut alone) = (Vec::new(), Vec::new());
        let running = RunningRouter::start(&topology, router)?;
        searches("wire", &mut wire)?;
        let (router_drops, transmit_drops) = running.stop()?;
        let (stop, thread) = start_port_layer(&topology)?;
        searches("port layer", &mut alone)?;
        stop.store(true, Ordering::Relaxed);
        let port_layer_drops = thread.join().map_err(|_| anyhow::anyhow!("the port layer's thread panicked"))??;
        drop(generator);
        bar.finish_and_clear();
        for (system, samples) in [("wire", &wire), (PORT_LAYER, &alone)] {
            for (m, &bad) in mixes.iter().zip(&decision_mismatches) {
                let mut row = wire_row(system, m, n, samples);
                row = if system == "wire" {
                    row.with("decision_mismatches", bad).with("router_drops", router_drops).with("transmit_drops", transmit_drops)
                } else {
                    row.with("transmit_drops", port_layer_drops)
                };
                rows.push(row);
            }
        }
        Ok(Report { plots: plots(&rows), summary: summary(&rows), rows })
    }
}

/// A row of the wire searches of `system` on mix `m`.
fn wire_row(system: &str, m: &Mix, n: usize, samples: &[(u32, WireSample)]) -> Row {
    let mine: Vec<&WireSample> = samples.iter().filter(|s| s.0 == m.pull_pct).map(|s| &s.1).collect();
    let mpps: Vec<f64> = mine.iter().map(|s| s.passed.as_ref().map_or(0.0, |o| o.received_pps() / 1e6)).collect();
    let mpps_median = median(&mpps);
    let all = || mine.iter().flat_map(|s| &s.probes);
    let passed: Vec<&Outcome> = mine.iter().filter_map(|s| s.passed.as_ref()).collect();
    let (sent, unique) = passed.iter().fold((0u64, 0u64), |(s, u), o| (s + o.sent, u + o.counts.unique));
    Row::new(system)
        .with("pull_pct", m.pull_pct)
        .with("descriptors", n as u64)
        .with("packets", m.frames.len() as u64)
        .with("avg_packet_bytes", m.mean_bytes)
        .with("mpps", mpps_median)
        .with("gbps", mpps_median * m.mean_bytes * 8.0 / 1e3)
        .with("mpps_samples", mpps)
        .with("delivered_pct", if sent > 0 { 100.0 * unique as f64 / sent as f64 } else { 0.0 })
        .with("duplicates", all().map(|o| o.counts.duplicated).sum::<u64>())
        .with("misdelivered", all().map(|o| o.counts.misrouted).sum::<u64>())
        .with("corrupted", all().map(|o| o.counts.corrupted).sum::<u64>())
        .with("lost", passed.iter().map(|o| o.lost).sum::<u64>())
        .with("sent", all().map(|o| o.sent).sum::<u64>())
        .with("overload_mpps", median(&mine.iter().map(|s| s.overload.received_pps() / 1e6).collect::<Vec<_>>()))
        .with("offered_mpps", median(&mine.iter().map(|s| s.overload.offered_pps() / 1e6).collect::<Vec<_>>()))
        .with("core_busy", median(&passed.iter().filter_map(|o| o.core_busy).collect::<Vec<_>>()))
}

fn find(rows: &[Row], system: &str, pull: u32, key: &str) -> f64 {
    rows.iter()
        .find(|r| r.str("system") == Some(system) && r.num("pull_pct") == Some(f64::from(pull)))
        .and_then(|r| r.num(key))
        .unwrap_or(f64::NAN)
}

fn summary(rows: &[Row]) -> Vec<String> {
    PULL_PCTS
        .iter()
        .map(|&p| {
            let v = |system: &str, key: &str| find(rows, system, p, key);
            let (w, e, a) = (v("wire", "mpps"), v("engine", "mpps"), v(PORT_LAYER, "mpps"));
            let (wo, ao) = (v("wire", "overload_mpps"), v(PORT_LAYER, "overload_mpps"));
            format!(
                "{p}% pull: wire {w:.3} Mpps loss-free ({:.2} Gbps) = {:.2}× the engine's {e:.3} Mpps (port layer alone {a:.3}); under overload {wo:.3} Mpps = {:.2}× the engine, {:.2}× the port layer's {ao:.3}; delivered {:.2}%, duplicates {}, misdelivered {}, corrupted {}, decisions unlike the engine's {}",
                v("wire", "gbps"),
                w / e,
                wo / e,
                wo / ao,
                v("wire", "delivered_pct"),
                v("wire", "duplicates"),
                v("wire", "misdelivered"),
                v("wire", "corrupted"),
                v("wire", "decision_mismatches"),
            )
        })
        .collect()
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let groups = PULL_PCTS.iter().map(|p| format!("{p}% pull")).collect();
    let series = ["engine", "wire", PORT_LAYER]
        .iter()
        .map(|s| (s.to_string(), PULL_PCTS.iter().map(|&p| find(rows, s, p, "mpps")).collect()))
        .collect();
    vec![Plot {
        file_tag: "mpps".into(),
        title: "TagNet packets/s, one core: the router on veth ports vs the in-memory engine (million/s)".into(),
        y_label: "million packets/s".into(),
        chart: Chart::Bars { groups, series },
    }]
}
