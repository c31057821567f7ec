//! Experiment `ip-lpm`: IPv4 and IPv6 longest prefix match on real RouteViews tables — Bloomfwd
//! (CPE for IPv4, DP-CPE for IPv6) against the paper's MIHT baseline, DIR-24-8 (DPDK's rte_lpm
//! layout) and the crates `poptrie` (IPv4), `prefix-trie` and `iptrie`. IPv4 Bloomfwd runs
//! with the paper's 2^20 direct array (`bloomfwd`) and with a 2^24 one (`bloomfwd-dla24`, the
//! router's: no /24 group, the filter searched only in /24 cells holding longer routes).
//!
//! Tables: the 2014 (512K) and 2015 (606K) IPv4 tables and the 2015 IPv6 table (27.7K) of
//! Debian's python3-pyasn; synthetic IPv4 tables of 2M and 4M prefixes with the 2014 table's
//! length histogram (full run only). Traffic: uniform, matching ratio 100/80/0%, Zipf.
//!
//! Every system answers the same addresses three ways — its batch path on one thread
//! (`mlookups_per_s`), the batch split over all threads (`mlookups_per_s_all_threads`), and one
//! lookup at a time (`ns_per_lookup`) — every answer of every repetition checked against the
//! binary-trie oracle (`mismatches`, the worst of the three). `bytes_per_prefix` counts what the
//! lookup touches (Bloomfwd's filters, tables and direct array; not its control side, which is
//! `control_bytes_per_prefix`); for the crates, what their build left allocated. For IPv6 each DP-CPE level count n is its own system
//! (`bloomfwd-n<n>`): the paper picks n by measurement, and so does the summary; `dp-cpe` rows
//! give the chosen levels with the estimated and actual expanded sizes (the paper's Table 4).

use nexthop_lookup::ip::{
    dp_cpe, expanded_count, parallel_batch, simd, BinaryTrie, Bloomfwd4, Bloomfwd6, Dir24, Miht4, Miht6, NextHop, Route, DEFAULT_FPR,
};

use crate::harness::{compare, timed, Contender, Outcome};
use crate::peers::ip::{IpTrie4, IpTrie6, Poptrie4, PrefixTrie4, PrefixTrie6};
use crate::plot::{Chart, Plot};
use crate::workload::routes::{self as workload, Family, Traffic};
use crate::{Report, Row, RunConfig};

/// The `ip-lpm` experiment.
#[derive(Debug)]
pub struct IpLpmExperiment;

/// A batch lookup: `out[i]` for `addrs[i]`.
type BatchFn<'a, A> = Box<dyn Fn(&[A], &mut [NextHop]) + Sync + 'a>;
/// Single lookups in a loop, appended to `out`.
type SingleFn<'a, A> = Box<dyn Fn(&[A], &mut Vec<NextHop>) + Sync + 'a>;

/// A table under test, as closures over its batch and single lookups.
struct System<'a, A> {
    name: String,
    build_s: f64,
    bytes: usize,
    control_bytes: Option<usize>,
    extra: Vec<(&'static str, serde_json::Value)>,
    batch: BatchFn<'a, A>,
    single: SingleFn<'a, A>,
}

impl<'a, A: Copy + Sync + 'a> System<'a, A> {
    /// A system answering one address with `one` and a batch with `batch`.
    fn new(
        name: impl Into<String>,
        build_s: f64,
        bytes: usize,
        one: impl Fn(A) -> NextHop + Sync + Copy + 'a,
        batch: impl Fn(&[A], &mut [NextHop]) + Sync + 'a,
    ) -> Self {
        System {
            name: name.into(),
            build_s,
            bytes,
            control_bytes: None,
            extra: Vec::new(),
            batch: Box::new(batch),
            single: Box::new(move |a, o| o.extend(a.iter().map(|&x| one(x)))),
        }
    }

    /// A system without a batch path of its own: its batch is the single lookup in a loop.
    fn looped(name: impl Into<String>, build_s: f64, bytes: usize, one: impl Fn(A) -> NextHop + Sync + Copy + 'a) -> Self {
        Self::new(name, build_s, bytes, one, move |a, o| a.iter().zip(o.iter_mut()).for_each(|(&x, y)| *y = one(x)))
    }

    /// With control-side bytes and extra row fields.
    fn with(mut self, control_bytes: usize, extra: Vec<(&'static str, serde_json::Value)>) -> Self {
        self.control_bytes = Some(control_bytes);
        self.extra = extra;
        self
    }
}

/// [`timed`], plus the bytes the build left allocated (0 unless the counting allocator is on).
fn timed_bytes<T>(f: impl FnOnce() -> T) -> (T, f64, usize) {
    let before = crate::alloc::live_bytes();
    let (v, s) = timed(f);
    let bytes = if crate::alloc::is_counting() { crate::alloc::live_bytes().saturating_sub(before) } else { 0 };
    (v, s, bytes)
}

const TRAFFIC: [Traffic; 5] = [Traffic::Uniform, Traffic::Matching(1.0), Traffic::Matching(0.8), Traffic::Matching(0.0), Traffic::Zipf];

impl crate::Experiment for IpLpmExperiment {
    fn name(&self) -> &'static str {
        "ip-lpm"
    }

    fn about(&self) -> &'static str {
        "IPv4/IPv6 LPM on RouteViews tables: Bloomfwd (CPE, DP-CPE) vs MIHT, DIR-24-8, poptrie, prefix-trie, iptrie"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let dir = workload::pyasn_dir();
        let v4_2014 = workload::dedup(&workload::load(&dir.join(workload::V4_2014))?.v4);
        let set_2015 = workload::load(&dir.join(workload::V46_2015))?;
        let (v4_2015, v6_2015) = (workload::dedup(&set_2015.v4), workload::dedup(&set_2015.v6));
        let n_addrs = if cfg.quick { 1 << 17 } else { 1 << 21 };
        let mut rows = Vec::new();

        let mut v4_tables = vec![("routeviews-2014".to_string(), v4_2014.clone())];
        if !cfg.quick {
            v4_tables.push(("routeviews-2015".into(), v4_2015));
            for n in [2_000_000usize, 4_000_000] {
                v4_tables.push((format!("synthetic-{}m", n / 1_000_000), workload::synthetic_v4(&v4_2014, n, n as u64)));
            }
        }
        for (table, routes) in &v4_tables {
            let oracle = workload::oracle(routes);
            rows.extend(run_v4(cfg, table, routes, &oracle, n_addrs)?);
            if table == "routeviews-2014" {
                rows.extend(fpr_sweep(cfg, table, routes, &oracle, n_addrs)?);
            }
        }
        rows.extend(run_v6(cfg, "routeviews-2015-v6", &v6_2015, n_addrs.min(1 << 20))?);
        let plots = plots(&rows);
        let summary = summary(&rows);
        Ok(Report { rows, plots, summary })
    }
}

fn run_v4(cfg: &RunConfig, table: &str, routes: &[Route<u32>], oracle: &BinaryTrie<u32>, n_addrs: usize) -> anyhow::Result<Vec<Row>> {
    let (bloom, bloom_s) = timed(|| Bloomfwd4::from_routes(routes, DEFAULT_FPR));
    let bloom = bloom?;
    let mut unguarded = bloom.clone();
    unguarded.set_guard(false);
    let (wide, wide_s) = timed(|| Bloomfwd4::from_routes_with(routes, 24, DEFAULT_FPR));
    let wide = wide?;
    let (wq, wc) = wide.bytes();
    let (miht, miht_s) = timed(|| Miht4::from_routes(routes));
    let miht = miht?;
    let (dir, dir_s) = timed(|| Dir24::from_routes(routes));
    let dir = dir?;
    let (ptrie, ptrie_s, ptrie_bytes) = timed_bytes(|| PrefixTrie4::new(routes));
    let (iptrie, iptrie_s, iptrie_bytes) = timed_bytes(|| IpTrie4::new(routes));
    let (poptrie, poptrie_s, poptrie_bytes) = timed_bytes(|| Poptrie4::new(routes));
    let (q, c) = bloom.bytes();
    let (e20, e24, e32) = bloom.expanded();
    let [(m24, k24), (m32, k32)] = bloom.bloom_shapes();
    let isa = simd::detect();
    let bloom_extra = vec![
        ("isa", isa.label().into()),
        ("expanded_dla", e20.into()),
        ("expanded_24", e24.into()),
        ("expanded_32", e32.into()),
        ("bloom_24_m", m24.into()),
        ("bloom_24_k", k24.into()),
        ("bloom_32_m", m32.into()),
        ("bloom_32_k", k32.into()),
        ("fpr_target", DEFAULT_FPR.into()),
    ];
    let systems: Vec<System<'_, u32>> = vec![
        System::new("bloomfwd", bloom_s, q, |x| bloom.lookup(x), |a, o| bloom.lookup_batch(a, o)).with(c, bloom_extra),
        System::new("bloomfwd-scalar-hash", bloom_s, q, |x| bloom.lookup(x), |a, o| bloom.lookup_batch_with(simd::Isa::Scalar, a, o))
            .with(c, vec![("isa", "scalar".into())]),
        System::new("bloomfwd-noguard", bloom_s, q, |x| unguarded.lookup(x), |a, o| unguarded.lookup_batch(a, o))
            .with(c, vec![("isa", isa.label().into())]),
        System::new("bloomfwd-dla24", wide_s, wq, |x| wide.lookup(x), |a, o| wide.lookup_batch(a, o))
            .with(wc, vec![("isa", isa.label().into()), ("expanded_32", wide.expanded().2.into())]),
        System::new("miht", miht_s, miht.bytes(), |x| miht.lookup(x), |a, o| miht.lookup_batch(a, o)),
        System::new("dir-24-8", dir_s, dir.bytes(), |x| dir.lookup(x), |a, o| dir.lookup_batch(a, o)),
        System::looped("prefix-trie", ptrie_s, ptrie_bytes, |x| ptrie.lookup(x)),
        System::looped("iptrie", iptrie_s, iptrie_bytes, |x| iptrie.lookup(x)),
        System::looped("poptrie", poptrie_s, poptrie_bytes, |x| poptrie.lookup(x)),
    ];
    let mut rows = Vec::new();
    // Synthetic tables route nearly the whole space: unmatched traffic is not to be had there.
    let synthetic = table.starts_with("synthetic");
    for (t, traffic) in TRAFFIC.iter().enumerate() {
        if synthetic && matches!(traffic, Traffic::Matching(r) if *r < 1.0) {
            continue;
        }
        let addrs = workload::addresses(routes, oracle, *traffic, n_addrs, 0x1b + t as u64);
        rows.extend(measure(cfg, "ipv4", table, routes.len(), *traffic, &addrs, oracle, &systems));
    }
    Ok(rows)
}

/// The paper's Table 5 and Figure 2: filter shapes and lookup rate as the target false-positive
/// rate varies (uniform traffic; with the guard, and without it as in the paper).
fn fpr_sweep(cfg: &RunConfig, table: &str, routes: &[Route<u32>], oracle: &BinaryTrie<u32>, n_addrs: usize) -> anyhow::Result<Vec<Row>> {
    let addrs = workload::addresses(routes, oracle, Traffic::Uniform, n_addrs, 0xf9);
    let reference: Vec<NextHop> = addrs.iter().map(|&a| oracle.lookup(a)).collect();
    let fprs: &[f64] = if cfg.quick { &[0.01, 0.3] } else { &[0.01, 0.1, 0.3, 0.6, 0.9] };
    // Each rate's table with its guard (the default) and without (the paper's search).
    let mut tables = Vec::new();
    for &fpr in fprs {
        let guarded = Bloomfwd4::from_routes(routes, fpr)?;
        let mut paper = guarded.clone();
        paper.set_guard(false);
        tables.push((fpr, guarded, paper));
    }
    let n = addrs.len();
    let batches =
        tables.iter().flat_map(|(_, guarded, paper)| [guarded, paper]).map(|t| move |a: &[u32], o: &mut [NextHop]| t.lookup_batch(a, o));
    let outcomes = time_batches(cfg, &addrs, &reference, batches);
    let mut rows = Vec::new();
    for (i, (fpr, t, _)) in tables.iter().enumerate() {
        let [(m24, k24), (m32, k32)] = t.bloom_shapes();
        for (j, search) in ["guard", "paper"].iter().enumerate() {
            let o = &outcomes[2 * i + j];
            rows.push(
                Row::new("bloomfwd-fpr")
                    .with("family", "ipv4")
                    .with("table", table)
                    .with("prefixes", routes.len())
                    .with("traffic", "uniform")
                    .with("search", *search)
                    .with("fpr_target", *fpr)
                    .with("bloom_24_m", m24)
                    .with("bloom_24_k", k24)
                    .with("bloom_32_m", m32)
                    .with("bloom_32_k", k32)
                    .with("bytes_per_prefix", t.bytes().0 as f64 / routes.len() as f64)
                    .with("mlookups_per_s", o.per_second(n) / 1e6)
                    .with("mismatches", o.mismatches),
            );
        }
    }
    Ok(rows)
}

fn run_v6(cfg: &RunConfig, table: &str, routes: &[Route<u128>], n_addrs: usize) -> anyhow::Result<Vec<Row>> {
    let oracle = workload::oracle(routes);
    let counts = nexthop_lookup::ip::bloomfwd6_histogram(routes);
    let mut rows = Vec::new();
    // Every DP-CPE level count whose estimated expansion fits in memory; and no CPE at all (a
    // level at every used length, the naive algorithm's one pair per length).
    let ns: Vec<usize> = if cfg.quick { vec![5, 7, 9] } else { (4..=12).collect() };
    let mut tables: Vec<(String, Bloomfwd6, f64)> = Vec::new();
    for n in ns {
        let levels = dp_cpe(&counts, n);
        let estimate = expanded_count(&counts, &levels);
        let mut row = Row::new("dp-cpe")
            .with("family", "ipv6")
            .with("table", table)
            .with("prefixes", routes.len())
            .with("n", n)
            .with("levels", format!("{levels:?}"))
            .with("expanded_estimate", estimate as f64);
        if estimate > 64_000_000 {
            rows.push(row.with("skipped", "estimate above 64M prefixes"));
            continue;
        }
        let (t, s) = timed(|| Bloomfwd6::from_routes(routes, &levels, DEFAULT_FPR));
        match t {
            Ok(t) => {
                row = row.with("expanded_actual", t.expanded());
                let mut paper = t.clone();
                paper.set_gate(false);
                tables.push((format!("bloomfwd-n{n}"), t, s));
                tables.push((format!("bloomfwd-n{n}-nogate"), paper, s));
            }
            Err(e) => row = row.with("skipped", e.to_string()),
        }
        rows.push(row);
    }
    let mut used: Vec<u8> = (1..=64u8).filter(|&l| counts[usize::from(l)] > 0).collect();
    if used.last() != Some(&64) {
        used.push(64);
    }
    let (nocpe, nocpe_s) = timed(|| Bloomfwd6::from_routes(routes, &used, DEFAULT_FPR));
    let mut nocpe = nocpe?;
    nocpe.set_gate(false);
    tables.push(("bloomfwd-nocpe".into(), nocpe, nocpe_s));
    let (miht, miht_s) = timed(|| Miht6::from_routes(routes));
    let miht = miht?;
    let (ptrie, ptrie_s, ptrie_bytes) = timed_bytes(|| PrefixTrie6::new(routes));
    let (iptrie, iptrie_s, iptrie_bytes) = timed_bytes(|| IpTrie6::new(routes));
    let isa = simd::detect();
    let mut systems: Vec<System<'_, u128>> = tables
        .iter()
        .map(|(name, t, s)| {
            let extra =
                vec![("isa", isa.label().into()), ("levels", format!("{:?}", t.levels()).into()), ("expanded_actual", t.expanded().into())];
            System::new(name.clone(), *s, t.bytes().0, |x| t.lookup(x), |a, o| t.lookup_batch(a, o)).with(t.bytes().1, extra)
        })
        .collect();
    // The same gated tables with their filters probed one level at a time (no SIMD filter lanes).
    for (name, t, s) in tables.iter().filter(|(name, ..)| name[10..].parse::<usize>().is_ok()) {
        let extra = vec![("isa", simd::Isa::Scalar.label().into()), ("levels", format!("{:?}", t.levels()).into())];
        systems.push(
            System::new(format!("{name}-scalar"), *s, t.bytes().0, |x| t.lookup(x), |a, o| t.lookup_batch_with(simd::Isa::Scalar, a, o))
                .with(t.bytes().1, extra),
        );
    }
    systems.push(System::new("miht", miht_s, miht.bytes(), |x| miht.lookup(x), |a, o| miht.lookup_batch(a, o)));
    systems.push(System::looped("prefix-trie", ptrie_s, ptrie_bytes, |x| ptrie.lookup(x)));
    systems.push(System::looped("iptrie", iptrie_s, iptrie_bytes, |x| iptrie.lookup(x)));
    for (t, traffic) in TRAFFIC.iter().enumerate() {
        let addrs = workload::addresses(routes, &oracle, *traffic, n_addrs, 0x6b + t as u64);
        rows.extend(measure(cfg, "ipv6", table, routes.len(), *traffic, &addrs, &oracle, &systems));
    }
    rows.extend(fpr_sweep_v6(cfg, table, routes, &oracle, n_addrs)?);
    Ok(rows)
}

/// The IPv6 counterpart of [`fpr_sweep`], on matching traffic (where the filters decide what a
/// lookup costs): the gated tables of 6 and 8 levels at each target rate, SIMD filter lanes on.
fn fpr_sweep_v6(
    cfg: &RunConfig,
    table: &str,
    routes: &[Route<u128>],
    oracle: &BinaryTrie<u128>,
    n_addrs: usize,
) -> anyhow::Result<Vec<Row>> {
    let addrs = workload::addresses(routes, oracle, Traffic::Matching(1.0), n_addrs, 0xfa);
    let reference: Vec<NextHop> = addrs.iter().map(|&a| oracle.lookup(a)).collect();
    let fprs: &[f64] = if cfg.quick { &[0.01, 0.3] } else { &[0.01, 0.05, 0.1, 0.3, 0.6] };
    let counts = nexthop_lookup::ip::bloomfwd6_histogram(routes);
    let mut tables = Vec::new();
    for n in [6usize, 8] {
        for &fpr in fprs {
            tables.push((n, fpr, Bloomfwd6::from_routes(routes, &dp_cpe(&counts, n), fpr)?));
        }
    }
    let n_addrs = addrs.len();
    let outcomes =
        time_batches(cfg, &addrs, &reference, tables.iter().map(|(_, _, t)| move |a: &[u128], o: &mut [NextHop]| t.lookup_batch(a, o)));
    Ok(tables
        .iter()
        .zip(&outcomes)
        .map(|((n, fpr, t), o)| {
            Row::new("bloomfwd6-fpr")
                .with("family", "ipv6")
                .with("table", table)
                .with("prefixes", routes.len())
                .with("traffic", "match-100")
                .with("n", *n)
                .with("fpr_target", *fpr)
                .with("bytes_per_prefix", t.bytes().0 as f64 / routes.len() as f64)
                .with("mlookups_per_s", o.per_second(n_addrs) / 1e6)
                .with("mismatches", o.mismatches)
        })
        .collect())
}

/// Each batch lookup of `batches` timed on `addrs` (as the sweeps' contenders), every answer of
/// every repetition checked against `reference`; the outcomes in the same order.
fn time_batches<'t, A: Sync + 't, B: Fn(&[A], &mut [NextHop]) + 't>(
    cfg: &RunConfig,
    addrs: &'t [A],
    reference: &[NextHop],
    batches: impl Iterator<Item = B>,
) -> Vec<Outcome> {
    let n = addrs.len();
    let mut contenders: Vec<Contender<'t, NextHop>> = batches
        .enumerate()
        .map(|(i, batch)| {
            Contender::new(format!("table {i}"), move |out: &mut Vec<NextHop>| {
                out.resize(n, 0);
                batch(addrs, out);
            })
        })
        .collect();
    compare(cfg.reps, reference, &mut contenders)
}

/// Runs every system on `addrs` three ways and returns one row per system.
#[allow(clippy::too_many_arguments)]
fn measure<A: Family>(
    cfg: &RunConfig,
    family: &str,
    table: &str,
    prefixes: usize,
    traffic: Traffic,
    addrs: &[A],
    oracle: &BinaryTrie<A>,
    systems: &[System<'_, A>],
) -> Vec<Row> {
    let reference: Vec<NextHop> = addrs.iter().map(|&a| oracle.lookup(a)).collect();
    let n = addrs.len();
    let batch = run_mode(cfg, Mode::Batch, systems, addrs, &reference);
    let all = run_mode(cfg, Mode::AllThreads, systems, addrs, &reference);
    let single = run_mode(cfg, Mode::Single, systems, addrs, &reference);
    systems
        .iter()
        .zip(batch.iter().zip(all.iter().zip(&single)))
        .map(|(s, (b, (a, one)))| {
            let mut row = Row::new(&s.name)
                .with("family", family)
                .with("table", table)
                .with("prefixes", prefixes)
                .with("traffic", traffic.label())
                .with("addresses", n)
                .with("matched_fraction", workload::matched_fraction(addrs, &reference))
                .with("mlookups_per_s", b.per_second(n) / 1e6)
                .with("mlookups_per_s_all_threads", a.per_second(n) / 1e6)
                .with("threads", cfg.threads)
                .with("ns_per_lookup", one.ns_per_op(n))
                .with("build_s", s.build_s)
                .with("mismatches", b.mismatches.max(a.mismatches).max(one.mismatches));
            if s.bytes > 0 {
                row = row.with("bytes_per_prefix", s.bytes as f64 / prefixes as f64);
            }
            if let Some(c) = s.control_bytes {
                row = row.with("control_bytes_per_prefix", c as f64 / prefixes as f64);
            }
            for (k, v) in &s.extra {
                row = row.with(k, v.clone());
            }
            row
        })
        .collect()
}

/// How a system is driven.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Its batch path, one thread.
    Batch,
    /// Its batch path split over all threads.
    AllThreads,
    /// One lookup at a time.
    Single,
}

fn run_mode<'s, A: Family>(
    cfg: &RunConfig,
    mode: Mode,
    systems: &'s [System<'_, A>],
    addrs: &'s [A],
    reference: &[NextHop],
) -> Vec<Outcome> {
    let (n, threads) = (addrs.len(), cfg.threads);
    let mut contenders: Vec<Contender<'s, NextHop>> = systems
        .iter()
        .map(|s| {
            Contender::new(s.name.clone(), move |out: &mut Vec<NextHop>| match mode {
                Mode::Batch => {
                    out.resize(n, 0);
                    (s.batch)(addrs, out);
                }
                Mode::AllThreads => {
                    out.resize(n, 0);
                    parallel_batch(addrs, out, threads, &s.batch);
                }
                Mode::Single => (s.single)(addrs, out),
            })
        })
        .collect();
    compare(cfg.reps, reference, &mut contenders)
}

fn bars(rows: &[Row], family: &str, table: &str, systems: &[String]) -> Chart {
    let groups: Vec<String> = TRAFFIC.iter().map(|t| t.label()).collect();
    let series = systems
        .iter()
        .map(|sys| {
            let vals = groups
                .iter()
                .map(|g| {
                    rows.iter()
                        .find(|r| {
                            r.str("system") == Some(sys)
                                && r.str("family") == Some(family)
                                && r.str("table") == Some(table)
                                && r.str("traffic") == Some(g)
                        })
                        .and_then(|r| r.num("mlookups_per_s"))
                        .unwrap_or(f64::NAN)
                })
                .collect();
            (sys.clone(), vals)
        })
        .collect();
    Chart::Bars { groups, series }
}

/// The fastest DP-CPE variant on the IPv6 table, by mean batch rate over the mixes of matching
/// traffic (match-100, match-80, Zipf). Uniform and unmatched addresses stop at the front array
/// whatever the levels, so their rates differ only by noise and would decide the choice.
fn best_v6(rows: &[Row]) -> Option<String> {
    let mut names: Vec<String> = rows
        .iter()
        .filter(|r| {
            r.str("family") == Some("ipv6")
                && r.str("system").is_some_and(|s| s.starts_with("bloomfwd-n") && s[10..].parse::<usize>().is_ok())
        })
        .filter_map(|r| r.str("system").map(String::from))
        .collect();
    names.dedup();
    let matching = |r: &&Row| matches!(r.str("traffic"), Some("match-100" | "match-80" | "zipf"));
    let mean = |sys: &str| {
        let v: Vec<f64> =
            rows.iter().filter(|r| r.str("system") == Some(sys)).filter(matching).filter_map(|r| r.num("mlookups_per_s")).collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    names.into_iter().max_by(|a, b| mean(a).total_cmp(&mean(b)))
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let v4: Vec<String> =
        ["bloomfwd", "bloomfwd-dla24", "bloomfwd-noguard", "bloomfwd-scalar-hash", "dir-24-8", "poptrie", "miht", "prefix-trie", "iptrie"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let mut v6 = vec!["bloomfwd-nocpe".to_string(), "miht".into(), "prefix-trie".into(), "iptrie".into()];
    if let Some(b) = best_v6(rows) {
        v6.insert(0, b);
    }
    let dp_points = |key: &str, suffix: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.str("family") == Some("ipv6") && r.str("traffic") == Some("match-100"))
            .filter_map(|r| {
                let n: f64 = r.str("system")?.strip_prefix("bloomfwd-n")?.strip_suffix(suffix)?.parse().ok()?;
                Some((n, r.num(key)?))
            })
            .collect()
    };
    let fpr_points = |search: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.str("system") == Some("bloomfwd-fpr") && r.str("search") == Some(search))
            .filter_map(|r| Some((r.num("fpr_target")? * 100.0, r.num("mlookups_per_s")?)))
            .collect()
    };
    let fpr_points_v6 = |n: f64| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.str("system") == Some("bloomfwd6-fpr") && r.num("n") == Some(n))
            .filter_map(|r| Some((r.num("fpr_target")? * 100.0, r.num("mlookups_per_s")?)))
            .collect()
    };
    vec![
        Plot {
            file_tag: "ipv4".into(),
            title: "IPv4, RouteViews 2014 (512K prefixes): batch lookups, one thread".into(),
            y_label: "M lookups/s".into(),
            chart: bars(rows, "ipv4", "routeviews-2014", &v4),
        },
        Plot {
            file_tag: "ipv6".into(),
            title: "IPv6, RouteViews 2015 (27.7K prefixes): batch lookups, one thread".into(),
            y_label: "M lookups/s".into(),
            chart: bars(rows, "ipv6", "routeviews-2015-v6", &v6),
        },
        Plot {
            file_tag: "dpcpe".into(),
            title: "IPv6 DP-CPE: lookup rate by number of levels n (match-100)".into(),
            y_label: "M lookups/s".into(),
            chart: Chart::Lines {
                x_label: "levels n".into(),
                log_x: false,
                series: vec![
                    ("bloomfwd (gate)".into(), dp_points("mlookups_per_s", "")),
                    ("bloomfwd (gate, filters one at a time)".into(), dp_points("mlookups_per_s", "-scalar")),
                    ("bloomfwd (paper: no gate)".into(), dp_points("mlookups_per_s", "-nogate")),
                ],
            },
        },
        Plot {
            file_tag: "fpr".into(),
            title: "Lookup rate by target false-positive rate (Fig. 2): IPv4 2014 uniform, IPv6 100% matching".into(),
            y_label: "M lookups/s".into(),
            chart: Chart::Lines {
                x_label: "target false-positive rate (%)".into(),
                log_x: false,
                series: vec![
                    ("IPv4 with guard".into(), fpr_points("guard")),
                    ("IPv4 paper's search".into(), fpr_points("paper")),
                    ("IPv6 n = 6".into(), fpr_points_v6(6.0)),
                    ("IPv6 n = 8".into(), fpr_points_v6(8.0)),
                ],
            },
        },
    ]
}

fn summary(rows: &[Row]) -> Vec<String> {
    let get = |sys: &str, table: &str, traffic: &str, key: &str| {
        rows.iter()
            .find(|r| r.str("system") == Some(sys) && r.str("table") == Some(table) && r.str("traffic") == Some(traffic))
            .and_then(|r| r.num(key))
    };
    let mut out = Vec::new();
    let mut tables: Vec<(String, String)> = Vec::new();
    for r in rows {
        if let (Some(f), Some(t)) = (r.str("family"), r.str("table")) {
            if !tables.iter().any(|(_, x)| x == t) {
                tables.push((f.to_string(), t.to_string()));
            }
        }
    }
    let best6 = best_v6(rows);
    for (family, table) in tables {
        let bloom = if family == "ipv4" { Some("bloomfwd".to_string()) } else { best6.clone() };
        let Some(bloom) = bloom else { continue };
        for traffic in ["uniform", "match-100", "zipf"] {
            let Some(b) = get(&bloom, &table, traffic, "mlookups_per_s") else { continue };
            let ratio = |peer: &str| get(peer, &table, traffic, "mlookups_per_s").map_or("-".to_string(), |p| format!("{:.2}x", b / p));
            let mut line = format!(
                "ip-lpm {table} {traffic}: {bloom} {b:.1} M/s = {} miht, {} prefix-trie, {} iptrie",
                ratio("miht"),
                ratio("prefix-trie"),
                ratio("iptrie")
            );
            if family == "ipv4" {
                line.push_str(&format!(", {} dir-24-8, {} poptrie", ratio("dir-24-8"), ratio("poptrie")));
                if let Some(w) = get("bloomfwd-dla24", &table, traffic, "mlookups_per_s") {
                    let wr =
                        |peer: &str| get(peer, &table, traffic, "mlookups_per_s").map_or("-".to_string(), |p| format!("{:.2}x", w / p));
                    line.push_str(&format!("; bloomfwd-dla24 {w:.1} M/s = {} dir-24-8, {} poptrie", wr("dir-24-8"), wr("poptrie")));
                }
            }
            out.push(line);
        }
    }
    let wrong: f64 = rows.iter().filter_map(|r| r.num("mismatches")).sum();
    out.push(format!("ip-lpm: mismatches against the binary-trie oracle: {wrong}"));
    out
}
