//! Experiment `l2-switch`: Ethernet frames a second one core switches between two veth ports
//! by destination address — the Concise switch (`nexthop_router::l2`) on its Othello FIB, the
//! same switch on the (2,4)-cuckoo table (the paper's Figure 15 peer) and on a hashbrown map,
//! and the Linux bridge with the same addresses in its forwarding database — every frame
//! checked at the sink.
//!
//! # Overview
//! - Namespaces: a generator (`pg0`), the switch (`pw0`, `pw1`) and a sink (`ps1`), joined by
//!   two veth pairs; traffic never leaves them. One thread on core 0 is generator and sink
//!   (AF_XDP ports); the switch (or the bridge's receive work, steered by RPS) is on core 1.
//! - FIBs of `names` unicast addresses (64K, 1M, 16M; `--quick`: 64K): the generator's own
//!   behind `pw0` and random others behind `pw1`; the frames go to 65,536 of the names, drawn
//!   at random. The sink checks that every frame came out of `ps1` unmodified (`misdelivered`:
//!   the others).
//! - Systems: `concise` (Othello, 16-bit cells: 6 bits of port, 10 checksum bits, as `nexthop
//!   run` builds it), `cuckoo`, `hashbrown` — one pipeline, one port layer, only the table
//!   differs — and `linux-bridge` at 64K names (its database is filled by `bridge fdb`, one
//!   entry a request, too slow for millions).
//! - A row's `mpps` is the highest rate passed with at most 0.1% lost (the binary search of
//!   `ports`); `fib_bytes` what the data plane's table left allocated (for Concise, the query
//!   structure); `switch_drops` the frames the switch itself dropped (none expected: every
//!   destination is in the FIB).
//! - The update phase (`concise+updates`, at 1M names or the largest below): the Concise switch
//!   under its gRPC control channel (`nexthop_control::agent`), its FIB pushed whole over it,
//!   then names outside the traffic added and deleted in turn at 100K/s, a patch per 1,000,
//!   pushed over gRPC while 0.1 Mpps of traffic runs; `misdelivered` counts the sink's wrong
//!   frames and the switch's drops for a wrong answer.
//! - Host moves (`controller-move`, `experiments/l2_moves.rs`): two switches under nexthop's
//!   controller, a Linux host moving between them, `move_ms` until its pings are answered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use nexthop_control::address::ControlAddress;
use nexthop_control::blocking::BlockingSwitch;
use nexthop_control::pb::push_delta_request::Delta as PbDelta;
use nexthop_control::switch_fib::{fib_config, patch_to_pb};
use nexthop_io::netns::{veth, Netns};
use nexthop_io::{PortConfig, XdpMode};
use nexthop_lookup::flat::{Delta, Othello, OthelloQuery};
use nexthop_router::l2::ports::{PortSwitch, SwitchConfig};
use nexthop_router::l2::{DropReason, MacFib, PortRole};
use rand::{Rng, SeedableRng};

use super::l2_moves::InProcessSwitch;
use super::ports::{enter, mac_text, namespace, place_receive_work, search, sh, spawn_opened, Generator};
use crate::frames::l2::MacStream;
use crate::frames::traffic::{Outcome, Spec};
use crate::harness::median;
use crate::peers::flat::Cuckoo;
use crate::plot::{Chart, Plot};
use crate::{progress, Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct L2SwitchExperiment;

const FWD_CORE: usize = 1;
const MAC_GEN: [u8; 6] = [2, 0, 0, 0, 0, 2];
/// Destinations the traffic takes, drawn from the FIB's names.
const DESTINATIONS: usize = 65_536;
/// Sequence-numbered flows of the generator.
const SEQ_FLOWS: u16 = 16;
/// The frame sizes measured.
const SIZES: [usize; 2] = [64, 1500];
/// The largest FIB the bridge is measured with.
const BRIDGE_NAMES: usize = 65_536;

/// A system measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum System {
    Concise,
    Cuckoo,
    Hashbrown,
    LinuxBridge,
}

const SYSTEMS: [System; 4] = [System::Concise, System::Cuckoo, System::Hashbrown, System::LinuxBridge];

impl System {
    fn name(self) -> &'static str {
        match self {
            System::Concise => "concise",
            System::Cuckoo => "cuckoo",
            System::Hashbrown => "hashbrown",
            System::LinuxBridge => "linux-bridge",
        }
    }
}

/// The (2,4)-cuckoo table as a switch's FIB (ports stored plus one: its batch answers 0 for a
/// name it does not hold), with its batch's answers kept between batches.
struct CuckooFib(Cuckoo<[u8; 6]>, Vec<u32>);

impl MacFib for CuckooFib {
    fn lookup_macs(&mut self, names: &[[u8; 6]], out: &mut Vec<Option<u32>>) {
        self.1.clear();
        self.0.lookup_batch(names, &mut self.1);
        out.extend(self.1.iter().map(|&a| a.checked_sub(1)));
    }
}

/// The cuckoo table of `pairs`.
fn cuckoo(pairs: &[([u8; 6], u32)]) -> Cuckoo<[u8; 6]> {
    let mut c = Cuckoo::with_capacity(pairs.len());
    for &(m, p) in pairs {
        c.insert(m, p as u16 + 1);
    }
    c
}

/// A hashbrown map as a switch's FIB.
struct HashFib(hashbrown::HashMap<[u8; 6], u16>);

impl MacFib for HashFib {
    fn lookup_macs(&mut self, names: &[[u8; 6]], out: &mut Vec<Option<u32>>) {
        out.extend(names.iter().map(|n| self.0.get(n).map(|&p| u32::from(p))));
    }
}

/// `n` distinct random unicast, locally administered addresses (none the generator's).
fn names(n: usize, seed: u64) -> Vec<[u8; 6]> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut seen = hashbrown::HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut m: [u8; 6] = rng.gen();
        m[0] = (m[0] & 0xfc) | 0x02;
        if m != MAC_GEN && seen.insert(m) {
            out.push(m);
        }
    }
    out
}

/// The three namespaces and their links.
struct Topology {
    generator: Netns,
    switch: Netns,
    sink: Netns,
}

impl Topology {
    fn new() -> anyhow::Result<Topology> {
        let ns = |role: &str| namespace("nxl", role);
        let t = Topology { generator: ns("g")?, switch: ns("w")?, sink: ns("s")? };
        veth(&t.generator, "pg0", &t.switch, "pw0", 1)?;
        veth(&t.switch, "pw1", &t.sink, "ps1", 1)?;
        sh(&t.generator, &format!("ip link set pg0 address {}", mac_text(MAC_GEN)))?;
        place_receive_work((&t.switch, "pw0"), &[(&t.sink, "ps1")])?;
        Ok(t)
    }
}

/// The system switching while a run goes on.
enum Running {
    Switch { stop: Arc<AtomicBool>, thread: std::thread::JoinHandle<anyhow::Result<u64>> },
    Bridge,
}

/// Starts the switch on `fib` (built in its thread, on the switching core).
fn start_switch<F: MacFib + 'static>(t: &Topology, build: impl FnOnce() -> F + Send + 'static) -> anyhow::Result<Running> {
    let stop = Arc::new(AtomicBool::new(false));
    let (name, halt) = (t.switch.name().to_string(), stop.clone());
    let open = move || -> anyhow::Result<_> {
        enter(&name)?;
        let edge = PortRole { flood: true, edge: true };
        let config = SwitchConfig { ports: vec![("pw0".into(), edge), ("pw1".into(), edge)], xdp_mode: Some(XdpMode::Native) };
        Ok((PortSwitch::open(&config, build())?, ()))
    };
    let body = move |mut switch: PortSwitch<F>| {
        switch.run(&halt, |_, _| {});
        let c = switch.switch().counters();
        Ok(DropReason::ALL.iter().map(|&d| c.dropped(d)).sum::<u64>() + switch.io_counters().transmit_drops)
    };
    let (thread, ()) = spawn_opened(FWD_CORE, "the switch", open, body)?;
    Ok(Running::Switch { stop, thread })
}

impl Running {
    fn start(system: System, t: &Topology, fib: &Fibs) -> anyhow::Result<Running> {
        let pairs = fib.pairs.clone();
        match system {
            System::Concise => {
                let q = fib.concise.clone().context("the Concise FIB")?;
                start_switch(t, move || OthelloQuery::<u16>::from_bytes(&q).expect("bytes of a query structure"))
            }
            System::Cuckoo => start_switch(t, move || CuckooFib(cuckoo(&pairs), Vec::new())),
            System::Hashbrown => start_switch(t, move || HashFib(pairs.iter().map(|&(m, p)| (m, p as u16)).collect())),
            System::LinuxBridge => {
                let w = &t.switch;
                w.ip(&["link", "add", "br0", "type", "bridge", "stp_state", "0", "ageing_time", "0"])?;
                w.ip(&["link", "set", "pw0", "master", "br0"])?;
                w.ip(&["link", "set", "pw1", "master", "br0"])?;
                w.ip(&["link", "set", "br0", "up"])?;
                let mut batch = String::with_capacity(fib.pairs.len() * 48);
                for &(m, p) in fib.pairs.iter() {
                    batch += &format!("fdb replace {} dev pw{p} master static\n", mac_text(m));
                }
                let file = std::env::temp_dir().join(format!("nexthop-l2-fdb-{}", std::process::id()));
                std::fs::write(&file, batch)?;
                let done = sh(w, &format!("bridge -batch {}", file.display()));
                let _ = std::fs::remove_file(&file);
                done?;
                Ok(Running::Bridge)
            }
        }
    }

    /// Stops the system; the switch's drops.
    fn stop(self, t: &Topology) -> anyhow::Result<u64> {
        match self {
            Running::Switch { stop, thread } => {
                stop.store(true, Ordering::Relaxed);
                thread.join().map_err(|_| anyhow::anyhow!("the switch thread panicked"))?
            }
            Running::Bridge => {
                t.switch.ip(&["link", "del", "br0"])?;
                Ok(0)
            }
        }
    }
}

/// One FIB size's tables: the (address, port) pairs and Concise's query structure as bytes
/// (each switch builds its table in its own thread).
struct Fibs {
    pairs: Arc<Vec<([u8; 6], u32)>>,
    concise: Option<Vec<u8>>,
    /// Concise's control structure, for the update phase.
    control: Option<Othello<u16>>,
    /// Bytes of each system's table.
    bytes: Vec<(System, usize)>,
}

fn fibs(n: usize) -> anyhow::Result<(Fibs, Vec<[u8; 6]>)> {
    // n names in all: the generator's own and n - 1 others, which the traffic goes to.
    let names = names(n - 1, 0x12 + n as u64);
    let mut pairs: Vec<([u8; 6], u32)> = names.iter().map(|&m| (m, 1)).collect();
    pairs.push((MAC_GEN, 0));
    let mut othello = Othello::<u16>::construct(fib_config(), pairs.iter().map(|(m, p)| (&m[..], *p)))?;
    // The data plane starts from the query structure.
    let _ = othello.take_delta();
    // What each data-plane table left allocated (the counting allocator).
    let measured = |build: &mut dyn FnMut()| {
        let before = crate::alloc::live_bytes();
        build();
        crate::alloc::live_bytes().saturating_sub(before)
    };
    let mut query = None;
    let concise = measured(&mut || query = Some(othello.query()));
    let query = query.context("built")?;
    let mut c = None;
    let cuckoo_bytes = measured(&mut || c = Some(cuckoo(&pairs)));
    let mut h = None;
    let hash_bytes = measured(&mut || h = Some(pairs.iter().map(|&(m, p)| (m, p as u16)).collect::<hashbrown::HashMap<[u8; 6], u16>>()));
    drop((c, h));
    let bytes = vec![(System::Concise, concise), (System::Cuckoo, cuckoo_bytes), (System::Hashbrown, hash_bytes)];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7 + n as u64);
    let dests = (0..DESTINATIONS).map(|_| names[rng.gen_range(0..names.len())]).collect();
    Ok((Fibs { pairs: Arc::new(pairs), concise: Some(query.to_bytes()), control: Some(othello), bytes }, dests))
}

/// Name updates per second the controller's side pushes while traffic runs (the goal).
const UPDATE_RATE: f64 = 100_000.0;
/// Name updates per patch pushed.
const UPDATE_BATCH: usize = 1_000;
/// Names added and deleted in turn by the update phase (none in the FIB, none in the traffic).
const CHURN_NAMES: usize = 65_536;
/// Frames/s offered while the FIB is updated.
const UPDATE_TRAFFIC_PPS: f64 = 100_000.0;
/// The FIB size the update phase runs at (at most: the largest measured).
const UPDATE_NAMES: usize = 1 << 20;

/// The update phase: Concise's switch under its gRPC control channel, traffic to names that
/// stay while other names are added and deleted (patches pushed over the channel).
struct UpdateSample {
    names: usize,
    traffic: Outcome,
    updates: u64,
    seconds: f64,
    patches: u64,
    structures: u64,
    /// Pushes the switch refused (each followed by the whole structure).
    refused: u64,
    /// Frames the switch dropped because a lookup answered wrong (hairpin, no such port,
    /// unknown name): every destination is in the FIB behind the other port.
    wrong_lookups: u64,
}

/// Runs the update phase on `fib` (its control structure taken) with `stream`'s traffic.
fn update_phase(
    t: &Topology,
    generator: &Generator<MacStream>,
    fib: &mut Fibs,
    stream: &Arc<MacStream>,
    spec: Spec,
) -> anyhow::Result<UpdateSample> {
    let mut control = fib.control.take().context("the control structure")?;
    let names = fib.pairs.len();
    let address = ControlAddress::Unix(std::env::temp_dir().join(format!("nexthop-l2-switch-{}.control", std::process::id())));
    let switch = InProcessSwitch::start(&t.switch, "l2-switch", &["pw0", "pw1"], &address, FWD_CORE, Some(XdpMode::Native))?;
    let mut client = BlockingSwitch::new(&address)?;
    client.push(PbDelta::Structure(control.query().to_bytes())).map_err(|e| anyhow::anyhow!("pushing the FIB: {e}"))?;

    let mut rng = rand::rngs::StdRng::seed_from_u64(0xc4);
    let mut churn = Vec::with_capacity(CHURN_NAMES);
    while churn.len() < CHURN_NAMES {
        let mut m: [u8; 6] = rng.gen();
        m[0] = (m[0] & 0xfc) | 0x02;
        if control.get(&m).is_none() && !churn.contains(&m) {
            churn.push(m);
        }
    }
    let pushing = Arc::new(AtomicBool::new(true));
    let still = pushing.clone();
    let pusher = std::thread::spawn(move || -> anyhow::Result<(u64, f64, u64, u64, u64)> {
        let (mut updates, mut patches, mut structures, mut refused) = (0u64, 0u64, 0u64, 0u64);
        let mut present = vec![false; churn.len()];
        let mut next = 0;
        let t0 = std::time::Instant::now();
        while still.load(Ordering::Relaxed) {
            for _ in 0..UPDATE_BATCH {
                let i = next % churn.len();
                next += 1;
                let done = if present[i] { control.delete(&churn[i]) } else { control.add(&churn[i], 1) };
                done.with_context(|| format!("update {updates}"))?;
                present[i] = !present[i];
            }
            updates += UPDATE_BATCH as u64;
            let pushed = match control.take_delta() {
                Delta::Patch(p) => {
                    patches += 1;
                    client.push(PbDelta::Patch(patch_to_pb(&p)))
                }
                Delta::Rebuilt(q) => {
                    structures += 1;
                    client.push(PbDelta::Structure(q.to_bytes()))
                }
            };
            if pushed.is_err() {
                refused += 1;
                client.push(PbDelta::Structure(control.query().to_bytes())).map_err(|e| anyhow::anyhow!("resync: {e}"))?;
            }
            let due = t0 + Duration::from_secs_f64(updates as f64 / UPDATE_RATE);
            if let Some(wait) = due.checked_duration_since(std::time::Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        Ok((updates, t0.elapsed().as_secs_f64(), patches, structures, refused))
    });
    let traffic = generator.run(stream, spec);
    pushing.store(false, Ordering::Relaxed);
    let pushed = pusher.join().map_err(|_| anyhow::anyhow!("the pusher panicked"))?;
    let c = switch.stop()?;
    let wrong_lookups = [DropReason::Hairpin, DropReason::NoSuchPort, DropReason::UnknownName].iter().map(|&d| c.dropped(d)).sum();
    let (updates, seconds, patches, structures, refused) = pushed?;
    Ok(UpdateSample { names, traffic: traffic?, updates, seconds, patches, structures, refused, wrong_lookups })
}

/// One search of one system.
struct Sample {
    system: System,
    names: usize,
    size: usize,
    overload: Outcome,
    passed: Option<Outcome>,
    probes: Vec<Outcome>,
}

impl super::Experiment for L2SwitchExperiment {
    fn name(&self) -> &'static str {
        "l2-switch"
    }

    fn about(&self) -> &'static str {
        "Ethernet frames/s one core switches between veth ports by destination address: the Concise switch on its Othello FIB vs the same switch on (2,4)-cuckoo and hashbrown tables and the Linux bridge, every frame checked at the sink"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let (sizes, reps, warmup, window, steps): (&[usize], usize, Duration, Duration, usize) = if cfg.quick {
            (&[65_536], 1, Duration::from_millis(50), Duration::from_millis(120), 3)
        } else {
            (&[65_536, 1 << 20, 1 << 24], cfg.reps.max(3), Duration::from_millis(200), Duration::from_secs(1), 7)
        };
        let topology = Topology::new()?;
        let generator = Generator::<MacStream>::start(&topology.generator, "pg0", &topology.sink, vec![PortConfig::new("ps1")])?;
        let systems_at = |n: usize| SYSTEMS.iter().copied().filter(move |&s| s != System::LinuxBridge || n <= BRIDGE_NAMES);
        let total: usize = sizes.iter().map(|&n| systems_at(n).count() * SIZES.len() * reps).sum();
        let bar = progress::bar(total as u64, "l2-switch searches");
        let mut samples = Vec::new();
        let mut fib_bytes = Vec::new();
        let mut drops: Vec<(System, usize, u64)> = Vec::new();
        let mut updates = Vec::new();
        let update_names = sizes.iter().copied().filter(|&n| n <= UPDATE_NAMES).max().unwrap_or(sizes[0]);
        for &n in sizes {
            bar.set_message(format!("{n} names: building the tables"));
            let (mut fib, dests) = fibs(n)?;
            fib_bytes.push((n, fib.bytes.clone()));
            let streams: Vec<Arc<MacStream>> =
                SIZES.iter().map(|&size| Arc::new(MacStream::new(size, MAC_GEN, SEQ_FLOWS, dests.clone(), 0))).collect();
            for _ in 0..reps {
                for system in systems_at(n) {
                    bar.set_message(format!("{n} names: {}", system.name()));
                    let running = Running::start(system, &topology, &fib)?;
                    for (&size, stream) in SIZES.iter().zip(&streams) {
                        let spec = |rate| Spec {
                            flows: SEQ_FLOWS,
                            rate_pps: rate,
                            warmup,
                            window,
                            drain: Duration::from_millis(30),
                            watch_core: Some(FWD_CORE),
                        };
                        let (overload, passed, probes) = search(|rate| generator.run(stream, spec(rate)), steps)?;
                        samples.push(Sample { system, names: n, size, overload, passed, probes });
                        bar.inc(1);
                    }
                    drops.push((system, n, running.stop(&topology)?));
                }
            }
            if n == update_names {
                bar.set_message(format!("{n} names: updates while forwarding"));
                let spec = Spec {
                    flows: SEQ_FLOWS,
                    rate_pps: Some(UPDATE_TRAFFIC_PPS),
                    warmup,
                    window: window * 3,
                    drain: Duration::from_millis(30),
                    watch_core: Some(FWD_CORE),
                };
                updates.push(update_phase(&topology, &generator, &mut fib, &streams[0], spec)?);
            }
        }
        bar.set_message("host moves under the controller");
        let (moves, controller) = super::l2_moves::measure(if cfg.quick { 2 } else { MOVES }, FWD_CORE)?;
        bar.finish_and_clear();
        let mut rows = rows(&samples, &fib_bytes, &drops);
        rows.extend(updates.iter().map(update_row));
        rows.push(
            Row::new(MOVES_SYSTEM)
                .with("switches", 2u64)
                .with("moves", moves.len() as u64)
                .with("move_ms", median(&moves))
                .with("move_ms_max", moves.iter().copied().fold(0.0, f64::max))
                .with("move_ms_samples", moves)
                .with("controller_syncs", controller.syncs)
                .with("controller_messages", controller.messages)
                .with("hosts_placed", controller.placed),
        );
        Ok(Report { plots: plots(&rows), summary: summary(&rows), rows })
    }
}

/// The update phase's row (system `concise+updates`).
fn update_row(u: &UpdateSample) -> Row {
    Row::new(UPDATES_SYSTEM)
        .with("names", u.names as u64)
        .with("frame_bytes", 64u64)
        .with("updates_per_s", u.updates as f64 / u.seconds)
        .with("update_target_per_s", UPDATE_RATE)
        .with("updates", u.updates)
        .with("patches", u.patches)
        .with("structures", u.structures)
        .with("refused", u.refused)
        .with("offered_mpps", u.traffic.offered_pps() / 1e6)
        .with("mpps", u.traffic.received_pps() / 1e6)
        .with("sent", u.traffic.sent)
        .with("lost", u.traffic.lost)
        .with("wrong_lookups", u.wrong_lookups)
        .with("misdelivered", u.traffic.counts.misrouted + u.wrong_lookups)
        .with("corrupted", u.traffic.counts.corrupted)
}

/// The update phase's system name in rows.
const UPDATES_SYSTEM: &str = "concise+updates";
/// The host moves' row.
const MOVES_SYSTEM: &str = "controller-move";
/// Host moves timed (there and back, in turn).
const MOVES: usize = 10;

fn rows(samples: &[Sample], fib_bytes: &[(usize, Vec<(System, usize)>)], drops: &[(System, usize, u64)]) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut keys: Vec<(usize, usize)> = samples.iter().map(|s| (s.names, s.size)).collect();
    keys.sort_unstable();
    keys.dedup();
    for (n, size) in keys {
        for system in SYSTEMS {
            let mine: Vec<&Sample> = samples.iter().filter(|s| s.system == system && s.names == n && s.size == size).collect();
            if mine.is_empty() {
                continue;
            }
            let mpps: Vec<f64> = mine.iter().map(|s| s.passed.as_ref().map_or(0.0, |o| o.received_pps() / 1e6)).collect();
            let m = median(&mpps);
            let all = || mine.iter().flat_map(|s| &s.probes);
            let bytes = fib_bytes.iter().find(|(k, _)| *k == n).and_then(|(_, b)| b.iter().find(|(s, _)| *s == system)).map(|(_, b)| *b);
            let mut row = Row::new(system.name())
                .with("names", n as u64)
                .with("frame_bytes", size as u64)
                .with("mpps", m)
                .with("gbps", m * size as f64 * 8.0 / 1e3)
                .with("mpps_samples", mpps)
                .with("overload_mpps", median(&mine.iter().map(|s| s.overload.received_pps() / 1e6).collect::<Vec<_>>()))
                .with("offered_mpps", median(&mine.iter().map(|s| s.overload.offered_pps() / 1e6).collect::<Vec<_>>()))
                .with("lost", mine.iter().filter_map(|s| s.passed.as_ref()).map(|o| o.lost).sum::<u64>())
                .with("sent", all().map(|o| o.sent).sum::<u64>())
                .with("misdelivered", all().map(|o| o.counts.misrouted).sum::<u64>())
                .with("corrupted", all().map(|o| o.counts.corrupted).sum::<u64>())
                .with("switch_drops", drops.iter().filter(|d| d.0 == system && d.1 == n).map(|d| d.2).sum::<u64>());
            if let Some(b) = bytes {
                row = row.with("fib_bytes", b as u64).with("fib_bytes_per_name", b as f64 / n as f64);
            }
            rows.push(row);
        }
    }
    rows
}

fn find(rows: &[Row], system: System, n: usize, size: usize, key: &str) -> f64 {
    rows.iter()
        .find(|r| r.str("system") == Some(system.name()) && r.num("names") == Some(n as f64) && r.num("frame_bytes") == Some(size as f64))
        .and_then(|r| r.num(key))
        .unwrap_or(f64::NAN)
}

fn names_measured(rows: &[Row]) -> Vec<usize> {
    let mut n: Vec<usize> = rows.iter().filter_map(|r| r.num("names").map(|v| v as usize)).collect();
    n.sort_unstable();
    n.dedup();
    n
}

fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.str("system") == Some(MOVES_SYSTEM)) {
        let v = |k: &str| r.num(k).unwrap_or(f64::NAN);
        out.push(format!(
            "a host moved between two switches under the controller is reached again after {:.0} ms (median of {:.0} moves; at most {:.0} ms)",
            v("move_ms"),
            v("moves"),
            v("move_ms_max")
        ));
    }
    for r in rows.iter().filter(|r| r.str("system") == Some(UPDATES_SYSTEM)) {
        let v = |k: &str| r.num(k).unwrap_or(f64::NAN);
        out.push(format!(
            "{} names: {:.0} name updates/s pushed over gRPC ({:.0} patches, {:.0} whole structures, {:.0} refused) while switching {:.3} Mpps of {:.3} offered: misdelivered {}, lost {}",
            v("names"),
            v("updates_per_s"),
            v("patches"),
            v("structures"),
            v("refused"),
            v("mpps"),
            v("offered_mpps"),
            v("misdelivered"),
            v("lost")
        ));
    }
    for n in names_measured(rows) {
        for size in SIZES {
            let c = find(rows, System::Concise, n, size, "mpps");
            let mut line = format!("{n} names, {size} B: concise {c:.3} Mpps");
            for s in [System::Cuckoo, System::Hashbrown, System::LinuxBridge] {
                let v = find(rows, s, n, size, "mpps");
                if v.is_finite() {
                    line += &format!(" = {:.2}× {} ({v:.3})", c / v, s.name());
                }
            }
            let bad: f64 = SYSTEMS.iter().map(|&s| find(rows, s, n, size, "misdelivered")).filter(|v| v.is_finite()).sum();
            line += &format!("; misdelivered {bad}");
            out.push(line);
        }
        let (c, h) = (find(rows, System::Concise, n, 64, "fib_bytes"), find(rows, System::Hashbrown, n, 64, "fib_bytes"));
        out.push(format!("{n} names: Concise's table {:.2} B/name = {:.3}× hashbrown's ({:.2} B/name)", c / n as f64, c / h, h / n as f64));
    }
    out
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let mut groups = Vec::new();
    let mut series: Vec<(String, Vec<f64>)> = SYSTEMS.iter().map(|s| (s.name().to_string(), Vec::new())).collect();
    for n in names_measured(rows) {
        for size in SIZES {
            groups.push(format!("{n} names, {size} B"));
            for (i, &s) in SYSTEMS.iter().enumerate() {
                series[i].1.push(find(rows, s, n, size, "mpps"));
            }
        }
    }
    vec![Plot {
        file_tag: "mpps".into(),
        title: "Ethernet frames switched between veth ports by one core (million/s)".into(),
        y_label: "million frames/s".into(),
        chart: Chart::Bars { groups, series },
    }]
}
