//! Experiment `cs`: the hierarchical content store (DRAM L1 + SSD L2 with batch prefetch) against
//! a store built the way NFD builds its own, a monolithic DRAM store, and foyer's hybrid cache.
//!
//! Parts (each a group of rows, `workload` tells them apart):
//! 1. **lookup** — L1 exact-name lookup at 1M chunks (quick: 100K) for each replacement policy,
//!    against `skiplist-cs`, every answer checked (`l1_lookup_ns`, `insert_ns`).
//! 2. **model** — the paper's Figure 5: measured L1 hit ratio of the hierarchical store on
//!    Seq/Unif/Real over a range of L1 sizes, beside Che's approximation and equations (2)–(4);
//!    L2 in memory holding the whole catalogue (|C| = |L2| as in the paper), FIFO L1, B = 10.
//! 3. **real** — the Real workload with a real-file L2 (O_DIRECT, io_uring) of 2×, 4×, 8× the L1
//!    (the paper's Figure 6a); at 8× also `dram-cs` (the same L1 alone, same DRAM),
//!    `skiplist-cs` (same DRAM) and `foyer` (memory = L1 bytes, disk = L2 bytes).
//! 4. **tau** — the paper's Figure 6b: L2 emulated in memory with a busy-wait delay per batch
//!    modelling throughput τ from 1 to 64 Gbps.
//! 5. **threads** — Figures 7/8: shards per thread by Batch or Content hash, emulated L2 at
//!    τ = 4 Gbps split per shard; throughput at 1..cores threads and the load imbalance (max/mean
//!    requests per shard) up to 16 shards.
//!
//! Every system sees the same requests. Before the run each is given the catalogue (as Data
//! arriving from upstream); then the paper's 10·|L1| warm-up requests, then |C| measured ones.
//! On a miss the chunk is fetched from "upstream" (its Data packet made outside the timed
//! section) and inserted (timed). Timed: each store's lookup and insert calls, per request
//! (p99 from the same samples). Every served packet's name is checked against the request:
//! `mismatches` counts those that differ. 8 KB chunks (8000-byte payload) except in `lookup` and
//! `model`, which use 1000- and 1500-byte payloads so that large counts fit in memory (the index
//! work and the hit ratios do not depend on payload size).

use std::path::PathBuf;
use std::time::Instant;

use nexthop_cs::l2::{Backing, DirectIo, FileConfig, IoEngine};
use nexthop_cs::model::{real_hit_ratio, seq_hit_ratio, unif_hit_ratio, CacheKind};
use nexthop_cs::shard::{imbalance, shard_of, HashScheme};
use nexthop_cs::{HcsConfig, HierarchicalStore, L1Config, L2Config, Policy, Request, L1};

use crate::harness::{compare, Contender};
use crate::peers::cs::{FoyerCs, SkiplistCs};
use crate::plot::{Chart, Plot};
use crate::workload::chunks::{chunk_data, chunk_name, ChunkRequest, ChunkWorkload, Pattern};
use crate::{progress, Report, Row, RunConfig};

/// The `cs` experiment.
#[derive(Debug)]
pub struct CsExperiment;

/// Chunks per batch (the paper's B).
const B: u32 = 10;
/// Payload of an 8 KB chunk; the packet fits an 8192-byte slot with the L2's 32-byte header.
const PAYLOAD_8K: usize = 8000;
const SLOT_8K: u32 = 8192;
const MB: u64 = 1 << 20;

/// Sizes of one run.
struct Scale {
    lookup_chunks: u32,
    model_contents: u32,
    model_fractions: Vec<f64>,
    real_l1_bytes: u64,
    real_multiples: Vec<u64>,
    tau_l2_bytes: u64,
    taus_gbps: Vec<f64>,
    balance_shards: Vec<usize>,
}

impl Scale {
    fn new(quick: bool) -> Self {
        if quick {
            Scale {
                lookup_chunks: 100_000,
                model_contents: 16,
                model_fractions: vec![1.0 / 16.0, 1.0 / 8.0, 1.0 / 4.0, 1.0 / 2.0],
                real_l1_bytes: 8 * MB,
                real_multiples: vec![8],
                tau_l2_bytes: 48 * MB,
                taus_gbps: vec![1.0, 4.0, 16.0],
                balance_shards: vec![2, 4, 8, 16],
            }
        } else {
            Scale {
                lookup_chunks: 1_000_000,
                model_contents: 200,
                model_fractions: vec![1.0 / 64.0, 1.0 / 32.0, 1.0 / 16.0, 1.0 / 8.0, 1.0 / 4.0, 1.0 / 2.0, 1.0],
                real_l1_bytes: 128 * MB,
                real_multiples: vec![2, 4, 8],
                tau_l2_bytes: 1024 * MB,
                taus_gbps: vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
                balance_shards: vec![2, 4, 8, 16],
            }
        }
    }
}

impl super::Experiment for CsExperiment {
    fn name(&self) -> &'static str {
        "cs"
    }

    fn about(&self) -> &'static str {
        "hierarchical content store (DRAM L1 + file L2, batch prefetch) vs skiplist-cs, dram-cs, foyer; hit-ratio model"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let scale = Scale::new(cfg.quick);
        let dir = std::env::var_os("NEXTHOP_CS_DIR").map_or_else(|| std::env::temp_dir().join("nexthop-cs"), PathBuf::from);
        std::fs::create_dir_all(&dir)?;
        let mut report = Report::default();
        report.rows.extend(lookup_rows(cfg, &scale));
        report.rows.extend(model_rows(&scale)?);
        report.rows.extend(real_rows(&scale, &dir)?);
        report.rows.extend(tau_rows(&scale)?);
        report.rows.extend(thread_rows(cfg, &scale)?);
        let _ = std::fs::remove_dir_all(&dir);
        report.plots = plots(&report.rows);
        report.summary = summary(&report.rows);
        Ok(report)
    }
}

// ---------------------------------------------------------------------------------------------
// 1. lookup

fn lookup_rows(cfg: &RunConfig, scale: &Scale) -> Vec<Row> {
    let n = scale.lookup_chunks;
    let contents = n.div_ceil(1280);
    let packets: Vec<(Vec<u8>, Vec<u8>)> = {
        let bar = progress::bar(u64::from(n), "making chunks");
        (0..n)
            .map(|i| {
                bar.inc(1);
                (chunk_name(i % contents, i / contents).value().to_vec(), chunk_data(i % contents, i / contents, 1000))
            })
            .collect()
    };
    let slot = packets.iter().map(|(_, w)| w.len()).max().unwrap_or(0) as u32;
    let mut rows = Vec::new();
    let mut insert_ns = Vec::new();
    let mut l1s: Vec<(String, L1)> = Vec::new();
    for policy in Policy::ALL {
        let mut l1 = L1::new(L1Config { capacity: n, slot_bytes: slot, policy, prefix_index: true });
        let t = Instant::now();
        for (_, w) in &packets {
            l1.insert(w, 0).expect("fits");
        }
        insert_ns.push(t.elapsed().as_nanos() as f64 / f64::from(n));
        l1s.push((format!("nexthop-l1-{}", policy.name()), l1));
    }
    let l1s_len = l1s.len();
    let mut skip = SkiplistCs::new(n as usize);
    let t = Instant::now();
    for (name, w) in &packets {
        skip.insert(name, w);
    }
    insert_ns.push(t.elapsed().as_nanos() as f64 / f64::from(n));
    // Queries: every stored chunk once, in a random order.
    let mut order: Vec<usize> = (0..n as usize).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let reference: Vec<u32> = order.iter().map(|&i| packets[i].1.len() as u32).collect();
    // The query names laid out flat in query order, so reading them costs no cache miss.
    let flat: Vec<u8> = order.iter().flat_map(|&i| packets[i].0.iter().copied()).collect();
    let mut queries: Vec<&[u8]> = Vec::with_capacity(order.len());
    let mut at = 0;
    for &i in &order {
        queries.push(&flat[at..at + packets[i].0.len()]);
        at += packets[i].0.len();
    }
    let queries = &queries;
    let mut contenders: Vec<Contender<'_, u32>> = Vec::new();
    for (system, l1) in &mut l1s {
        let l1 = std::cell::RefCell::new(l1);
        let l1 = std::rc::Rc::new(l1);
        let single = l1.clone();
        contenders.push(Contender::new(system.clone(), move |out: &mut Vec<u32>| {
            let mut l1 = single.borrow_mut();
            out.extend(queries.iter().map(|q| l1.get(q).map_or(0, |w| w.len() as u32)));
        }));
        contenders.push(Contender::new(format!("{system}-batch"), move |out: &mut Vec<u32>| {
            let mut l1 = l1.borrow_mut();
            let mut answers = Vec::with_capacity(queries.len());
            l1.get_batch(queries, &mut answers);
            out.extend(answers.iter().map(|w| w.map_or(0, |w| w.len() as u32)));
        }));
    }
    contenders.push(Contender::new("skiplist-cs", |out: &mut Vec<u32>| {
        out.extend(queries.iter().map(|q| {
            let mut len = 0;
            skip.get(q, |w| len = w.len() as u32);
            len
        }));
    }));
    // Insert cost per system; the batch contenders share their single sibling's figure.
    let insert_ns: Vec<f64> = insert_ns.iter().enumerate().flat_map(|(i, &ns)| if i < l1s_len { vec![ns, ns] } else { vec![ns] }).collect();
    for (o, ins) in compare(cfg.reps, &reference, &mut contenders).into_iter().zip(insert_ns) {
        rows.push(
            Row::new(&o.system)
                .with("workload", "lookup")
                .with("chunks", n)
                .with("threads", 1)
                .with("l1_lookup_ns", o.ns_per_op(order.len()))
                .with("insert_ns", ins)
                .with("mismatches", o.mismatches),
        );
    }
    rows
}

// ---------------------------------------------------------------------------------------------
// Running a trace

/// A store under test: exact-name lookups and inserts.
trait Store {
    /// Looks `name` up; `f` sees the packet when there is one.
    fn lookup(&mut self, name: &[u8], f: &mut dyn FnMut(&[u8])) -> bool;
    /// Inserts a packet that arrived from upstream.
    fn insert(&mut self, name: &[u8], wire: &[u8]);
}

impl Store for HierarchicalStore {
    fn lookup(&mut self, name: &[u8], f: &mut dyn FnMut(&[u8])) -> bool {
        let req = Request { name, can_be_prefix: false, must_be_fresh: false, digest: None };
        match HierarchicalStore::lookup(self, &req, 0) {
            Some(s) => {
                f(s.wire);
                true
            }
            None => false,
        }
    }
    fn insert(&mut self, _name: &[u8], wire: &[u8]) {
        HierarchicalStore::insert(self, wire, 0).expect("chunk fits");
    }
}

impl Store for SkiplistCs {
    fn lookup(&mut self, name: &[u8], f: &mut dyn FnMut(&[u8])) -> bool {
        self.get(name, f)
    }
    fn insert(&mut self, name: &[u8], wire: &[u8]) {
        SkiplistCs::insert(self, name, wire);
    }
}

impl Store for FoyerCs {
    fn lookup(&mut self, name: &[u8], f: &mut dyn FnMut(&[u8])) -> bool {
        self.get(name, f)
    }
    fn insert(&mut self, name: &[u8], wire: &[u8]) {
        FoyerCs::insert(self, name, wire);
    }
}

/// What one trace measured (over the measured part, after warm-up).
#[derive(Debug, Default)]
struct Measured {
    requests: u64,
    served: u64,
    served_bytes: u64,
    store_s: f64,
    p99_us: f64,
    mismatches: u64,
}

/// The Name TLV-VALUE at the start of a Data packet.
fn data_name(wire: &[u8]) -> Option<&[u8]> {
    fn varnum(b: &[u8]) -> Option<(usize, usize)> {
        match *b.first()? {
            x @ 0..=252 => Some((usize::from(x), 1)),
            253 => Some((usize::from(u16::from_be_bytes(b.get(1..3)?.try_into().ok()?)), 3)),
            254 => Some((u32::from_be_bytes(b.get(1..5)?.try_into().ok()?) as usize, 5)),
            _ => None,
        }
    }
    let (_, t) = varnum(wire)?;
    let (_, l) = varnum(&wire[t..])?;
    let name_at = t + l;
    let (ty, t2) = varnum(&wire[name_at..])?;
    let (len, l2) = varnum(&wire[name_at + t2..])?;
    (ty == 7).then(|| wire.get(name_at + t2 + l2..name_at + t2 + l2 + len))?
}

/// Gives the store the catalogue, then runs `warmup` + the rest of `requests`.
fn run_trace(store: &mut dyn Store, w: &ChunkWorkload, requests: &[ChunkRequest], warmup: usize, payload: usize, label: &str) -> Measured {
    let bar = progress::bar(w.catalogue() + requests.len() as u64, label);
    for c in 0..w.contents {
        for k in 0..w.chunks_per_content {
            store.insert(chunk_name(c, k).value(), &chunk_data(c, k, payload));
            bar.inc(1);
        }
    }
    let mut m = Measured::default();
    let mut lat = Vec::with_capacity(requests.len().saturating_sub(warmup));
    let mut head = [0u8; 96];
    for (i, r) in requests.iter().enumerate() {
        bar.inc(1);
        let name = chunk_name(r.content, r.chunk);
        let name = name.value();
        let mut got = 0usize;
        let mut on_hit = |wire: &[u8]| {
            got = wire.len();
            let n = wire.len().min(head.len());
            head[..n].copy_from_slice(&wire[..n]);
        };
        let t = Instant::now();
        let hit = store.lookup(name, &mut on_hit);
        let mut dt = t.elapsed();
        if !hit {
            let wire = chunk_data(r.content, r.chunk, payload);
            let t = Instant::now();
            store.insert(name, &wire);
            dt += t.elapsed();
        }
        if i < warmup {
            continue;
        }
        m.requests += 1;
        m.store_s += dt.as_secs_f64();
        lat.push(dt.as_nanos() as u64);
        if hit {
            m.served += 1;
            m.served_bytes += got as u64;
            if data_name(&head[..got.min(head.len())]) != Some(name) {
                m.mismatches += 1;
            }
        }
    }
    bar.finish_and_clear();
    m.p99_us = p99_us(&mut lat);
    m
}

/// The 99th percentile of latencies in nanoseconds, in microseconds.
fn p99_us(lat: &mut [u64]) -> f64 {
    lat.sort_unstable();
    lat.get(lat.len().saturating_sub(1).min(lat.len() * 99 / 100)).map_or(0.0, |&ns| ns as f64 / 1e3)
}

/// The hierarchical store with the next batch read ahead ([`HcsConfig::read_ahead`]).
const READ_AHEAD: &str = "nexthop-hcs+read-ahead";

fn hcs(l1_chunks: u32, slot: u32, l2: Option<L2Config>) -> anyhow::Result<HierarchicalStore> {
    hcs_with(l1_chunks, slot, l2, false)
}

fn hcs_with(l1_chunks: u32, slot: u32, l2: Option<L2Config>, read_ahead: bool) -> anyhow::Result<HierarchicalStore> {
    let l1 = L1Config { capacity: l1_chunks, slot_bytes: slot, policy: Policy::Fifo, prefix_index: true };
    Ok(HierarchicalStore::new(HcsConfig { l1, l2, staging_batches: 16, read_ahead, chunk_reads: false })?)
}

fn memory_l2(bytes: u64, slot: u32, tau_gbps: Option<f64>) -> L2Config {
    let mut c = L2Config::new(bytes, Backing::Memory { tau_bits_per_s: tau_gbps.map(|g| g * 1e9) });
    c.chunk_slot_bytes = slot;
    c.batch_chunks = B;
    c
}

/// The common row of a trace.
#[allow(clippy::too_many_arguments)]
fn trace_row(system: &str, workload: &str, l1_bytes: u64, l2_bytes: u64, l2: &str, threads: usize, scheme: &str, m: &Measured) -> Row {
    let s = m.store_s.max(1e-12);
    Row::new(system)
        .with("workload", workload)
        .with("l1_bytes", l1_bytes)
        .with("l2_bytes", l2_bytes)
        .with("batch", B)
        .with("threads", threads)
        .with("hash_scheme", scheme)
        .with("l2", l2)
        .with("requests", m.requests)
        .with("kchunks_per_s", m.requests as f64 / s / 1e3)
        .with("gbps", m.served_bytes as f64 * 8.0 / s / 1e9)
        .with("hit_ratio", m.served as f64 / m.requests.max(1) as f64)
        .with("p99_us", m.p99_us)
        .with("mismatches", m.mismatches)
}

/// Adds the hierarchical store's own counters (over the measured part) to a row.
fn with_hcs_stats(row: Row, before: &HierarchicalStore, l1_hits_before: u64, reads_before: u64, m: &Measured) -> Row {
    let l1_hits = before.stats().l1_hits - l1_hits_before;
    let read_bytes = before.l2_stats().read_bytes - reads_before;
    row.with("l1_hit_ratio", l1_hits as f64 / m.requests.max(1) as f64)
        .with("l2_read_mb_per_s", read_bytes as f64 / 1e6 / m.store_s.max(1e-12))
        .with("corrupt_chunks", before.l2_stats().corrupt_chunks)
        .with("l2_read_aheads", before.l2_stats().read_aheads)
        .with("read_ahead_waits", before.stats().read_ahead_waits)
}

/// Runs the hierarchical store on a trace, counting its tiers over the measured part only.
fn run_hcs(
    store: &mut HierarchicalStore,
    w: &ChunkWorkload,
    requests: &[ChunkRequest],
    warmup: usize,
    payload: usize,
    label: &str,
) -> (Measured, u64, u64) {
    // Split the trace so the counters can be read between warm-up and measurement.
    let (warm, measured) = requests.split_at(warmup.min(requests.len()));
    let _ = run_trace(store, w, warm, warm.len(), payload, label);
    let (hits, reads) = (store.stats().l1_hits, store.l2_stats().read_bytes);
    let empty = ChunkWorkload { contents: 0, ..w.clone() };
    let m = run_trace(store, &empty, measured, 0, payload, label);
    (m, hits, reads)
}

// ---------------------------------------------------------------------------------------------
// 2. model

fn model_rows(scale: &Scale) -> anyhow::Result<Vec<Row>> {
    let slot = 2048;
    let payload = 1500;
    let mut rows = Vec::new();
    for pattern in [Pattern::Unif, Pattern::Seq, Pattern::Real] {
        let w = ChunkWorkload::paper(pattern, scale.model_contents, 0x6d6f_6465);
        let catalogue = w.catalogue();
        for &f in &scale.model_fractions {
            let l1_chunks = ((catalogue as f64 * f) as u32).max(B);
            let warmup = 10 * l1_chunks as usize;
            let requests = w.requests(warmup + catalogue as usize);
            let l2_bytes = catalogue.div_ceil(u64::from(B)) * u64::from(B * slot);
            let mut store = hcs(l1_chunks, slot, Some(memory_l2(l2_bytes, slot, None)))?;
            let (m, hits, reads) = run_hcs(&mut store, &w, &requests, warmup, payload, &format!("model {} {f:.3}", pattern.name()));
            let (l1c, cat) = (f64::from(l1_chunks), catalogue as f64);
            let model = match pattern {
                Pattern::Unif => unif_hit_ratio(l1c, cat),
                Pattern::Seq => seq_hit_ratio(l1c, cat, B),
                Pattern::Real => real_hit_ratio(&w.content_rates(), (w.chunks_per_content / B) as usize, l1c, B, CacheKind::Fifo),
            };
            let row =
                trace_row("nexthop-hcs", &format!("model-{}", pattern.name()), u64::from(l1_chunks * slot), l2_bytes, "memory", 1, "-", &m);
            rows.push(with_hcs_stats(row, &store, hits, reads, &m).with("model_l1_hit_ratio", model).with("l1_fraction", f));
        }
    }
    Ok(rows)
}

/// A Real-workload trace whose catalogue fills `l2_bytes` of 8 KB chunks, with the paper's
/// warm-up of 10·|L1| requests for an L1 of `l1_chunks` before |C| measured ones.
struct RealTrace {
    w: ChunkWorkload,
    warmup: usize,
    requests: Vec<ChunkRequest>,
}

fn real_trace(l2_bytes: u64, l1_chunks: u32, seed: u64) -> RealTrace {
    let contents = ((l2_bytes / u64::from(SLOT_8K)) / 1280).max(2) as u32;
    let w = ChunkWorkload::paper(Pattern::Real, contents, seed);
    let warmup = 10 * l1_chunks as usize;
    let requests = w.requests(warmup + w.catalogue() as usize);
    RealTrace { w, warmup, requests }
}

// ---------------------------------------------------------------------------------------------
// 3. real (file L2)

fn file_l2(path: PathBuf, bytes: u64) -> L2Config {
    let mut c = L2Config::new(bytes, Backing::File(FileConfig { path, create: true, direct: DirectIo::Preferred, engine: IoEngine::Auto }));
    c.chunk_slot_bytes = SLOT_8K;
    c.batch_chunks = B;
    c
}

fn real_rows(scale: &Scale, dir: &std::path::Path) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let l1_bytes = scale.real_l1_bytes;
    let l1_chunks = (l1_bytes / u64::from(SLOT_8K)) as u32;
    for &mult in &scale.real_multiples {
        let l2_bytes = l1_bytes * mult;
        let RealTrace { w, warmup, requests } = real_trace(l2_bytes, l1_chunks, 0x7265_616c);
        let path = dir.join(format!("l2-{mult}x"));
        let model = real_hit_ratio(&w.content_rates(), (w.chunks_per_content / B) as usize, f64::from(l1_chunks), B, CacheKind::Fifo);
        // The paper's serial algorithm, then with the next batch read ahead (same trace, new file).
        for (system, read_ahead) in [("nexthop-hcs", false), (READ_AHEAD, true)] {
            let mut store = hcs_with(l1_chunks, SLOT_8K, Some(file_l2(path.clone(), l2_bytes)), read_ahead)?;
            let l2_desc = store.l2().map(|l2| l2.describe()).unwrap_or_default();
            let (m, hits, reads) = run_hcs(&mut store, &w, &requests, warmup, PAYLOAD_8K, &format!("real {mult}x {system}"));
            let row = trace_row(system, "real", l1_bytes, l2_bytes, &l2_desc, 1, "-", &m).with("l2_multiple", mult);
            rows.push(with_hcs_stats(row, &store, hits, reads, &m).with("model_l1_hit_ratio", model));
            drop(store);
            let _ = std::fs::remove_file(&path);
        }
        if mult != 8 {
            continue;
        }
        // Peers on the same trace, same DRAM.
        let mut dram = hcs(l1_chunks, SLOT_8K, None)?;
        let (m, hits, _) = run_hcs(&mut dram, &w, &requests, warmup, PAYLOAD_8K, "real dram-cs");
        let row = trace_row("dram-cs", "real", l1_bytes, 0, "none", 1, "-", &m).with("l2_multiple", mult);
        rows.push(row.with("l1_hit_ratio", (dram.stats().l1_hits - hits) as f64 / m.requests.max(1) as f64));
        drop(dram);
        let mut skip = SkiplistCs::new(l1_chunks as usize);
        let m = run_trace(&mut skip, &w, &requests, warmup, PAYLOAD_8K, "real skiplist-cs");
        rows.push(trace_row("skiplist-cs", "real", l1_bytes, 0, "none", 1, "-", &m).with("l2_multiple", mult));
        drop(skip);
        let foyer_dir = dir.join("foyer");
        let mut foyer = FoyerCs::new(&foyer_dir, l1_bytes as usize, l2_bytes as usize)?;
        let (warm, measured) = requests.split_at(warmup);
        let _ = run_trace(&mut foyer, &w, warm, warm.len(), PAYLOAD_8K, "real foyer");
        foyer.settle();
        let empty = ChunkWorkload { contents: 0, ..w.clone() };
        let m = run_trace(&mut foyer, &empty, measured, 0, PAYLOAD_8K, "real foyer");
        rows.push(
            trace_row("foyer", "real", l1_bytes, l2_bytes, "file (foyer block engine, direct)", 1, "-", &m).with("l2_multiple", mult),
        );
        drop(foyer);
        let _ = std::fs::remove_dir_all(&foyer_dir);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// 4. tau (emulated L2 throughput)

fn tau_rows(scale: &Scale) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let l2_bytes = scale.tau_l2_bytes;
    let l1_chunks = (l2_bytes / 8 / u64::from(SLOT_8K)) as u32;
    let RealTrace { w, warmup, requests } = real_trace(l2_bytes, l1_chunks, 0x0074_6175);
    // The paper's serial algorithm, and the read-ahead it expects to pay at higher τ (its §5).
    for (system, read_ahead, &tau) in
        [("nexthop-hcs", false), (READ_AHEAD, true)].into_iter().flat_map(|(s, r)| scale.taus_gbps.iter().map(move |t| (s, r, t)))
    {
        let mut store = hcs_with(l1_chunks, SLOT_8K, Some(memory_l2(l2_bytes, SLOT_8K, Some(tau))), read_ahead)?;
        let (m, hits, reads) = run_hcs(&mut store, &w, &requests, warmup, PAYLOAD_8K, &format!("tau {tau} {system}"));
        let row =
            trace_row(system, "tau", u64::from(l1_chunks) * u64::from(SLOT_8K), l2_bytes, &format!("memory τ={tau} Gbps"), 1, "-", &m);
        rows.push(with_hcs_stats(row, &store, hits, reads, &m).with("tau_gbps", tau));
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// 5. threads and hash schemes

fn thread_rows(cfg: &RunConfig, scale: &Scale) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let l2_bytes = scale.tau_l2_bytes;
    let l1_chunks = (l2_bytes / 8 / u64::from(SLOT_8K)) as u32;
    let RealTrace { w, warmup, requests } = real_trace(l2_bytes, l1_chunks, 0x0074_6872);
    let names: Vec<Vec<u8>> = requests.iter().map(|r| chunk_name(r.content, r.chunk).value().to_vec()).collect();
    for scheme in [HashScheme::Batch, HashScheme::Content] {
        for &shards in &scale.balance_shards {
            let mut loads = vec![0u64; shards];
            for n in &names[warmup..] {
                loads[shard_of(n, scheme, B, shards)] += 1;
            }
            rows.push(
                Row::new("nexthop-hcs")
                    .with("workload", "balance")
                    .with("threads", shards)
                    .with("hash_scheme", scheme.name())
                    .with("load_imbalance", imbalance(&loads)),
            );
        }
        let mut threads = 1;
        while threads <= cfg.threads.max(1) {
            rows.push(run_sharded(&w, &requests, &names, warmup, threads, scheme, l1_chunks, l2_bytes)?);
            threads *= 2;
        }
    }
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn run_sharded(
    w: &ChunkWorkload,
    requests: &[ChunkRequest],
    names: &[Vec<u8>],
    warmup: usize,
    threads: usize,
    scheme: HashScheme,
    l1_chunks: u32,
    l2_bytes: u64,
) -> anyhow::Result<Row> {
    let tau = 4.0;
    let per_l1 = (l1_chunks / threads as u32).max(B);
    let per_l2 = (l2_bytes / threads as u64).max(u64::from(B * SLOT_8K));
    let mut stores =
        (0..threads).map(|_| hcs(per_l1, SLOT_8K, Some(memory_l2(per_l2, SLOT_8K, Some(tau))))).collect::<anyhow::Result<Vec<_>>>()?;
    let shard = |name: &[u8]| shard_of(name, scheme, B, threads);
    // Catalogue into its shards, then the trace split by shard (what RSS or I/O cores do).
    for c in 0..w.contents {
        for k in 0..w.chunks_per_content {
            let name = chunk_name(c, k);
            stores[shard(name.value())].insert(&chunk_data(c, k, PAYLOAD_8K), 0).expect("fits");
        }
    }
    let mut parts: Vec<Vec<(ChunkRequest, bool)>> = vec![Vec::new(); threads];
    for (i, (r, n)) in requests.iter().zip(names).enumerate() {
        parts[shard(n)].push((*r, i >= warmup));
    }
    let loads: Vec<u64> = parts.iter().map(|p| p.iter().filter(|(_, m)| *m).count() as u64).collect();
    let results: Vec<(u64, u64, f64, Vec<u64>)> = std::thread::scope(|s| {
        let handles: Vec<_> = stores
            .iter_mut()
            .zip(&parts)
            .map(|(store, part)| {
                s.spawn(move || {
                    let (mut served, mut bytes, mut measured_s, mut lat) = (0u64, 0u64, 0.0f64, Vec::with_capacity(part.len()));
                    for &(r, measured) in part {
                        let name = chunk_name(r.content, r.chunk);
                        let t = Instant::now();
                        let got = Store::lookup(store, name.value(), &mut |wire| bytes += if measured { wire.len() as u64 } else { 0 });
                        let mut dt = t.elapsed();
                        if !got {
                            let wire = chunk_data(r.content, r.chunk, PAYLOAD_8K);
                            let t = Instant::now();
                            store.insert(&wire, 0).expect("fits");
                            dt += t.elapsed();
                        }
                        if measured {
                            served += u64::from(got);
                            measured_s += dt.as_secs_f64();
                            lat.push(dt.as_nanos() as u64);
                        }
                    }
                    (served, bytes, measured_s, lat)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("shard thread")).collect()
    });
    // Shards run in parallel: the run takes as long as the busiest shard.
    let busiest = results.iter().map(|r| r.2).fold(0.0, f64::max);
    let served: u64 = results.iter().map(|r| r.0).sum();
    let bytes: u64 = results.iter().map(|r| r.1).sum();
    let total: u64 = loads.iter().sum();
    let mut lat: Vec<u64> = results.iter().flat_map(|r| r.3.iter().copied()).collect();
    let m = Measured { requests: total, served, served_bytes: bytes, store_s: busiest, p99_us: p99_us(&mut lat), mismatches: 0 };
    let row =
        trace_row("nexthop-hcs", "threads", l1_chunks as u64 * u64::from(SLOT_8K), l2_bytes, "memory τ=4 Gbps", threads, scheme.name(), &m);
    Ok(row.with("load_imbalance", imbalance(&loads)))
}

// ---------------------------------------------------------------------------------------------
// Plots and summary

fn rows_of<'a>(rows: &'a [Row], workload: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
    rows.iter().filter(move |r| r.str("workload") == Some(workload))
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let mut plots = Vec::new();
    // Figure 5: model vs measured.
    let mut series = Vec::new();
    for p in ["unif", "seq", "real"] {
        let wl = format!("model-{p}");
        let pts = |key: &str| rows_of(rows, &wl).filter_map(|r| Some((r.num("l1_bytes")? / 1e6, r.num(key)?))).collect::<Vec<_>>();
        series.push((format!("{p} measured"), pts("l1_hit_ratio")));
        series.push((format!("{p} model"), pts("model_l1_hit_ratio")));
    }
    plots.push(Plot {
        file_tag: "model".into(),
        title: "L1 hit ratio: measured vs model (Fig. 5)".into(),
        y_label: "L1 hit ratio".into(),
        chart: Chart::Lines { x_label: "L1 size (MB)".into(), log_x: true, series },
    });
    // Real workload, all systems.
    let real: Vec<&Row> = rows_of(rows, "real").filter(|r| r.num("l2_multiple") == Some(8.0)).collect();
    if !real.is_empty() {
        let groups: Vec<String> = real.iter().filter_map(|r| r.str("system").map(str::to_string)).collect();
        plots.push(Plot {
            file_tag: "systems".into(),
            title: "Real workload, L2 = 8 × L1: chunks served per second".into(),
            y_label: "kchunks/s".into(),
            chart: Chart::Bars {
                groups: groups.clone(),
                series: vec![("kchunks/s".into(), real.iter().map(|r| r.num("kchunks_per_s").unwrap_or(f64::NAN)).collect())],
            },
        });
        plots.push(Plot {
            file_tag: "hit-ratio".into(),
            title: "Real workload, L2 = 8 × L1: requests answered by the store".into(),
            y_label: "hit ratio".into(),
            chart: Chart::Bars {
                groups,
                series: vec![("hit ratio".into(), real.iter().map(|r| r.num("hit_ratio").unwrap_or(f64::NAN)).collect())],
            },
        });
    }
    plots.push(Plot {
        file_tag: "l2-size".into(),
        title: "Real workload, file L2: throughput vs L2 size (Fig. 6a)".into(),
        y_label: "kchunks/s".into(),
        chart: Chart::Lines {
            x_label: "L2 size (GB)".into(),
            log_x: true,
            series: ["nexthop-hcs", READ_AHEAD]
                .iter()
                .map(|s| (s.to_string(), points(rows, "real", s, "l2_bytes", "kchunks_per_s").map(|(b, k)| (b / 1e9, k)).collect()))
                .collect(),
        },
    });
    plots.push(Plot {
        file_tag: "tau".into(),
        title: "Emulated L2: served throughput vs L2 throughput τ (Fig. 6b)".into(),
        y_label: "served Gbps".into(),
        chart: Chart::Lines {
            x_label: "τ (Gbps)".into(),
            log_x: true,
            series: ["nexthop-hcs", READ_AHEAD]
                .iter()
                .map(|s| (s.to_string(), points(rows, "tau", s, "tau_gbps", "gbps").collect()))
                .collect(),
        },
    });
    let thread_series = |workload: &str, key: &str| {
        ["batch", "content"]
            .iter()
            .map(|s| {
                let pts = rows_of(rows, workload)
                    .filter(|r| r.str("hash_scheme") == Some(s))
                    .filter_map(|r| Some((r.num("threads")?, r.num(key)?)))
                    .collect();
                ((*s).to_string(), pts)
            })
            .collect::<Vec<_>>()
    };
    plots.push(Plot {
        file_tag: "threads".into(),
        title: "Shards on threads, emulated L2 τ = 4 Gbps per shard (Fig. 7/8b)".into(),
        y_label: "kchunks/s".into(),
        chart: Chart::Lines { x_label: "threads".into(), log_x: false, series: thread_series("threads", "kchunks_per_s") },
    });
    plots.push(Plot {
        file_tag: "balance".into(),
        title: "Load balance: most loaded shard / mean (Fig. 8a)".into(),
        y_label: "max / mean requests".into(),
        chart: Chart::Lines { x_label: "shards".into(), log_x: false, series: thread_series("balance", "load_imbalance") },
    });
    plots
}

/// (x, y) of `system`'s rows of `workload`.
fn points<'a>(rows: &'a [Row], workload: &'a str, system: &'a str, x: &'a str, y: &'a str) -> impl Iterator<Item = (f64, f64)> + 'a {
    rows_of(rows, workload).filter(move |r| r.str("system") == Some(system)).filter_map(move |r| Some((r.num(x)?, r.num(y)?)))
}

/// The real-workload row of `system` at L2 = `multiple` × L1.
fn real_at<'a>(rows: &'a [Row], system: &str, multiple: f64) -> Option<&'a Row> {
    rows_of(rows, "real").find(|r| r.str("system") == Some(system) && r.num("l2_multiple") == Some(multiple))
}

fn p_num(r: &Row, key: &str) -> f64 {
    r.num(key).unwrap_or(f64::NAN)
}

fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let lookup = |sys: &str| rows_of(rows, "lookup").find(|r| r.str("system") == Some(sys)).and_then(|r| r.num("l1_lookup_ns"));
    if let (Some(l1), Some(batch), Some(skip)) = (lookup("nexthop-l1-fifo"), lookup("nexthop-l1-fifo-batch"), lookup("skiplist-cs")) {
        out.push(format!(
            "cs: L1 lookup {batch:.0} ns batch, {l1:.0} ns single vs skiplist-cs {skip:.0} ns ({:.1}×, {:.1}×)",
            skip / batch,
            skip / l1
        ));
    }
    for p in ["unif", "seq", "real"] {
        let errs: Vec<f64> =
            rows_of(rows, &format!("model-{p}")).filter_map(|r| Some(r.num("l1_hit_ratio")? - r.num("model_l1_hit_ratio")?)).collect();
        if !errs.is_empty() {
            let rmse = (errs.iter().map(|e| e * e).sum::<f64>() / errs.len() as f64).sqrt();
            out.push(format!("cs: model RMSE {p} {rmse:.4}"));
        }
    }
    let real = |sys: &str| real_at(rows, sys, 8.0);
    if let (Some(n), Some(f), Some(d)) = (real("nexthop-hcs"), real("foyer"), real("dram-cs")) {
        let k = |r: &Row| r.num("kchunks_per_s").unwrap_or(0.0);
        let h = |r: &Row| r.num("hit_ratio").unwrap_or(0.0);
        out.push(format!(
            "cs: real 8×: {:.0} kchunks/s vs foyer {:.0} ({:.1}×); hit ratio {:.3} vs dram-cs {:.3} ({:.2}×)",
            k(n),
            k(f),
            k(n) / k(f).max(1e-9),
            h(n),
            h(d),
            h(n) / h(d).max(1e-9)
        ));
    }
    for (plain, ahead) in rows_of(rows, "real")
        .filter(|r| r.str("system") == Some("nexthop-hcs"))
        .filter_map(|p| Some((p, real_at(rows, READ_AHEAD, p.num("l2_multiple")?)?)))
    {
        let k = |r: &Row| r.num("kchunks_per_s").unwrap_or(0.0);
        out.push(format!(
            "cs: real {}× with read-ahead: {:.0} kchunks/s vs {:.0} ({:.2}×); L1 hit ratio {:.3} vs {:.3}; {} of {} read-aheads waited for",
            p_num(plain, "l2_multiple"),
            k(ahead),
            k(plain),
            k(ahead) / k(plain).max(1e-9),
            p_num(ahead, "l1_hit_ratio"),
            p_num(plain, "l1_hit_ratio"),
            p_num(ahead, "read_ahead_waits"),
            p_num(ahead, "l2_read_aheads"),
        ));
    }
    let tau_line = |system: &str| {
        rows_of(rows, "tau")
            .filter(|r| r.str("system") == Some(system))
            .map(|r| format!("{:.1}", p_num(r, "gbps")))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    out.push(format!("cs: emulated L2, served Gbps at each τ: serial {}; read-ahead {}", tau_line("nexthop-hcs"), tau_line(READ_AHEAD)));
    for s in ["batch", "content"] {
        if let Some(r) = rows_of(rows, "balance").filter(|r| r.str("hash_scheme") == Some(s)).last() {
            out.push(format!(
                "cs: {s} hashing imbalance at {} shards: {:.2}",
                r.num("threads").unwrap_or(0.0),
                r.num("load_imbalance").unwrap_or(0.0)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_name_reads_the_name() {
        let wire = chunk_data(1, 2, 3000);
        assert_eq!(data_name(&wire[..96]), Some(chunk_name(1, 2).value()));
        assert_eq!(data_name(&[6, 1]), None);
    }
}
