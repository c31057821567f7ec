//! Experiment `name-fib`: longest name prefix match, binary search of hash tables vs its peers.
//!
//! FIBs (see `workload::names`): `worst-binsearch` and `worst-linear` at k = 7 and 15, and
//! `url`, at 10M rules (quick: 1M rules, the k = 7 worst cases and `url`); before those, in a
//! full run, the largest `worst-binsearch` k = 7 FIB up to 100M rules that fits in memory, for
//! nexthop alone (the peers and the oracle would not fit beside it).
//!
//! Systems, built from the same routes in the same order:
//! - `binsearch-verify-each` and `binsearch-verify-at-end`: [`NameFib`] with each string strategy;
//!   on `url` also `binsearch-verify-at-end+pull` (level pulling, T = 64 as in the paper); and,
//!   in a full run, `binsearch-verify-each+4k-pages`, whose tables and arena do not ask for
//!   transparent huge pages (the paper found them worth 31–47%);
//! - `longest-first` and `start-at-m` (`peers::name`), with nexthop's fast prefix hash.
//!
//! Each system answers the same lookup names through its batch API on one thread and on all
//! threads, and through its single-name API; every answer of every repetition is compared with
//! the oracle ([`ReferenceFib`]), or, at 100M rules where no oracle fits, with the route each
//! name was made to match. Probes (hash buckets read) are counted per lookup in a separate pass;
//! `bytes_per_rule` is what the build left allocated (counting allocator, plus the readable part
//! of nexthop's entry arena, which is a mapping of its own) divided by rules. Every
//! build ends by giving back spare capacity, as after loading a route file: nexthop's tables are
//! rebuilt at the paper's design load (`NameFib::shrink_to_fit`), the peers' hashbrown tables are
//! shrunk (hashbrown's own `shrink_to_fit`).

use std::time::Instant;

use nexthop_lookup::name::{NameFib, NameFibConfig, NextHops, ReferenceFib, Strategy, MAX_LEVELS};
use nexthop_wire::NameView;

use crate::harness::{compare, Contender};
use crate::peers::name::{LongestFirst, StartAtM};
use crate::plot::{Chart, Plot};
use crate::workload::names::{load_url_list, next_hops_for, FibKind, FibWorkload};
use crate::{alloc, progress, Report, Row, RunConfig};

/// The `name-fib` experiment.
#[derive(Debug)]
pub struct NameFibExperiment;

/// Level-pulling threshold (the paper's example value).
const PULL_THRESHOLD: usize = 64;

impl super::Experiment for NameFibExperiment {
    fn name(&self) -> &'static str {
        "name-fib"
    }

    fn about(&self) -> &'static str {
        "longest name prefix match: binary search of hash tables vs longest-first and start-at-m"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let seed = 0x6e61_6d65;
        let url = load_url_list(seed)?;
        // Quick runs the k = 7 worst cases and url (every code path) to stay under a minute.
        let kinds: Vec<FibKind> = if cfg.quick {
            vec![FibKind::WorstBinsearch { k: 7 }, FibKind::WorstLinear { k: 7 }, FibKind::Url(url)]
        } else {
            vec![
                FibKind::WorstBinsearch { k: 7 },
                FibKind::WorstBinsearch { k: 15 },
                FibKind::WorstLinear { k: 7 },
                FibKind::WorstLinear { k: 15 },
                FibKind::Url(url),
            ]
        };
        // Quick is 1M rules; a full run is first the largest worst-binsearch FIB (k = 7) that
        // fits this machine's memory, up to the paper-scale 100M, while the process's heap is
        // still clean, and then 10M rules of every workload.
        let sizes: &[usize] = if cfg.quick { &[1_000_000] } else { &[10_000_000] };
        let queries = if cfg.quick { 100_000 } else { 1_000_000 };
        let mut rows = Vec::new();
        if !cfg.quick {
            let rules = largest_fitting(100_000_000);
            let w = FibWorkload { kind: FibKind::WorstBinsearch { k: 7 }, rules, seed };
            rows.extend(run_fib(cfg, &w, queries, false)?);
        }
        for &rules in sizes {
            for kind in &kinds {
                let w = FibWorkload { kind: kind.clone(), rules, seed };
                rows.extend(run_fib(cfg, &w, queries, true)?);
            }
        }
        let mut report = Report { rows, ..Report::default() };
        report.plots = plots(&report.rows);
        report.summary = summary(&report.rows);
        Ok(report)
    }
}

/// Bytes per rule a `binsearch` build needs at its peak, with headroom: ~118 left allocated on
/// worst-binsearch k = 7 (counted at 1M rules), up to a half more while the tables, the index
/// and the arena grow (before the build's `shrink_to_fit`), and the largest table's rebuild
/// (rehashed entries and the new table). A full run at 100M rules with 200 here was killed by
/// the kernel at 24.3 GB resident when a route took ~140 bytes, the old table was kept alive
/// during a rebuild, and this FIB was built after the 10M-rule ones (whose freed small blocks
/// the heap kept).
const BUILD_BYTES_PER_RULE: u64 = 240;

/// The largest multiple of 10M rules, at most `want`, whose build fits in the memory available.
fn largest_fitting(want: usize) -> usize {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find(|l| l.starts_with("MemAvailable:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(u64::MAX, |kib| kib * 1024);
    let fits = (available / BUILD_BYTES_PER_RULE) as usize;
    (want.min(fits) / 10_000_000 * 10_000_000).max(10_000_000)
}

/// One system under test.
enum System {
    Binsearch(String, Box<NameFib>),
    LongestFirst(LongestFirst),
    StartAtM(StartAtM),
}

impl System {
    fn name(&self) -> String {
        match self {
            System::Binsearch(name, _) => name.clone(),
            System::LongestFirst(_) => "longest-first".into(),
            System::StartAtM(_) => "start-at-m".into(),
        }
    }

    #[inline]
    fn lookup_counted(&self, v: &[u8]) -> (Option<&NextHops>, u32) {
        match self {
            System::Binsearch(_, f) => {
                let (id, probes) = f.lookup_counted(v);
                (id.map(|id| f.next_hops(id)), probes)
            }
            System::LongestFirst(p) => p.lookup(v),
            System::StartAtM(p) => p.lookup(v),
        }
    }

    /// The single-name API.
    #[inline]
    fn lookup(&self, v: &[u8]) -> Option<&NextHops> {
        match self {
            System::Binsearch(_, f) => f.lookup_id(v).map(|id| f.next_hops(id)),
            other => other.lookup_counted(v).0,
        }
    }

    /// The batch API (the peers have none: their batch is the single lookup in a loop).
    fn batch<'s>(&'s self, names: &[&[u8]], out: &mut Vec<Option<&'s NextHops>>) {
        match self {
            System::Binsearch(_, f) => {
                let mut ids = [None; 256];
                for chunk in names.chunks(256) {
                    f.lookup_batch_ids(chunk, &mut ids[..chunk.len()]);
                    out.extend(ids[..chunk.len()].iter().map(|id| id.map(|id| f.next_hops(id))));
                }
            }
            other => out.extend(names.iter().map(|v| other.lookup(v))),
        }
    }
}

/// Builds `make()` and returns it with the bytes it left allocated and the seconds it took.
fn measured_build<T>(make: impl FnOnce() -> T) -> (T, f64, f64) {
    let before = alloc::live_bytes();
    let start = Instant::now();
    let built = make();
    let secs = start.elapsed().as_secs_f64();
    let bytes = alloc::live_bytes().saturating_sub(before) as f64;
    (built, bytes, secs)
}

/// Inserts routes 0..rules of `w` through `insert`, with a progress bar.
fn for_each_rule(w: &FibWorkload, what: &str, mut insert: impl FnMut(usize, &[u8])) {
    let bar = progress::bar(w.rules as u64, &format!("{what} {} {}M", w.label(), w.rules / 1_000_000));
    let mut buf = Vec::new();
    for i in 0..w.rules {
        w.rule(i, &mut buf);
        insert(i, &buf);
        if i % 65_536 == 0 {
            bar.set_position(i as u64);
        }
    }
    bar.finish_and_clear();
}

/// One binsearch contender: strategy, level pulling, and whether the tables and the arena ask
/// for transparent huge pages (the default; the paper found them worth 31–47%).
#[derive(Debug, Clone, Copy)]
struct Variant {
    strategy: Strategy,
    pull: bool,
    huge_pages: bool,
}

impl Variant {
    fn new(strategy: Strategy) -> Self {
        Variant { strategy, pull: false, huge_pages: true }
    }

    fn name(self) -> String {
        let pull = if self.pull { "+pull" } else { "" };
        let pages = if self.huge_pages { "" } else { "+4k-pages" };
        format!("binsearch-{}{pull}{pages}", self.strategy.label())
    }
}

fn binsearch(w: &FibWorkload, v: Variant) -> NameFib {
    let mut fib =
        NameFib::new(NameFibConfig { key: Some((0x6e65, 0x7874)), huge_pages: v.huge_pages, ..NameFibConfig::with_strategy(v.strategy) });
    for_each_rule(w, &format!("building {}", v.name()), |i, v| {
        let name = NameView::from_value(v).expect("generated names are valid");
        fib.insert(&name, next_hops_for(i)).expect("generated routes are valid");
    });
    // After a bulk load, the tables at the paper's design load (n/4 buckets for n prefixes).
    let bar = progress::bar(1, &format!("shrinking {} {}M", w.label(), w.rules / 1_000_000));
    fib.shrink_to_fit();
    bar.finish_and_clear();
    if v.pull {
        fib.enable_level_pulling(PULL_THRESHOLD);
    }
    fib
}

/// Runs every system on one FIB; `with_peers` adds the peers and the oracle.
fn run_fib(cfg: &RunConfig, w: &FibWorkload, nq: usize, with_peers: bool) -> anyhow::Result<Vec<Row>> {
    // Lookup names, and the route each was made to match.
    let mut bytes = Vec::new();
    let mut ends = Vec::with_capacity(nq);
    let mut made_for = Vec::with_capacity(nq);
    let mut buf = Vec::new();
    for j in 0..nq {
        made_for.push(w.query(j, &mut buf));
        bytes.extend_from_slice(&buf);
        ends.push(bytes.len());
    }
    let queries: Vec<&[u8]> = ends.iter().scan(0, |start, &end| Some(&bytes[std::mem::replace(start, end)..end])).collect();

    let mut systems: Vec<(System, f64, f64)> = Vec::new();
    let mut variants = vec![Variant::new(Strategy::VerifyEach), Variant::new(Strategy::VerifyAtEnd)];
    if !cfg.quick {
        // Not in --quick, which must stay under a minute (and at 1M rules measured 0.99–1.02x).
        variants.push(Variant { huge_pages: false, ..Variant::new(Strategy::VerifyEach) });
    }
    if matches!(w.kind, FibKind::Url(_)) {
        variants.push(Variant { pull: true, ..Variant::new(Strategy::VerifyAtEnd) });
    }
    if !with_peers {
        variants = vec![Variant::new(Strategy::VerifyAtEnd)];
    }
    for v in variants {
        let (fib, bytes, secs) = measured_build(|| binsearch(w, v));
        // The entry arena is a mapping of its own, which the counting allocator does not see.
        let bytes = bytes + fib.mapped_bytes() as f64;
        systems.push((System::Binsearch(v.name(), Box::new(fib)), bytes, secs));
    }
    let reference;
    let expected: Vec<NextHops>;
    let want: Vec<Option<&NextHops>> = if with_peers {
        let (lf, bytes, secs) = measured_build(|| {
            let mut lf = LongestFirst::default();
            for_each_rule(w, "building longest-first", |i, v| lf.insert(v, &next_hops_for(i)));
            lf.shrink_to_fit();
            lf
        });
        systems.push((System::LongestFirst(lf), bytes, secs));
        let mut per_level = [0usize; MAX_LEVELS + 1];
        for_each_rule(w, "counting levels of", |_, v| per_level[nexthop_lookup::name::hash::count_components(v)] += 1);
        let (sm, bytes, secs) = measured_build(|| {
            let mut sm = StartAtM::with_m(StartAtM::most_populated(&per_level), 0);
            for_each_rule(w, "building start-at-m", |i, v| sm.insert(v, &next_hops_for(i)));
            sm.finish();
            sm.shrink_to_fit();
            sm
        });
        systems.push((System::StartAtM(sm), bytes, secs));
        let mut r = ReferenceFib::new();
        for_each_rule(w, "building the oracle for", |i, v| {
            r.insert(&NameView::from_value(v).expect("valid"), next_hops_for(i));
        });
        reference = r;
        queries.iter().map(|q| reference.lookup_value(q)).collect()
    } else {
        expected = made_for.iter().map(|&i| next_hops_for(i)).collect();
        expected.iter().map(Some).collect()
    };

    // Probes, counted outside the timed runs.
    let probes: Vec<(u32, f64)> = systems
        .iter()
        .map(|(s, _, _)| {
            let (mut max, mut sum) = (0u32, 0u64);
            for q in &queries {
                let p = s.lookup_counted(q).1;
                max = max.max(p);
                sum += u64::from(p);
            }
            (max, sum as f64 / queries.len() as f64)
        })
        .collect();

    let threads = cfg.threads.max(1);
    let batch = {
        let mut c: Vec<Contender<'_, Option<&NextHops>>> =
            systems.iter().map(|(s, _, _)| Contender::new(s.name(), |out: &mut Vec<_>| s.batch(&queries, out))).collect();
        compare(cfg.reps, &want, &mut c)
    };
    let single = {
        let mut c: Vec<Contender<'_, Option<&NextHops>>> = systems
            .iter()
            .map(|(s, _, _)| Contender::new(s.name(), |out: &mut Vec<_>| out.extend(queries.iter().map(|q| s.lookup(q)))))
            .collect();
        compare(cfg.reps, &want, &mut c)
    };
    let parallel = {
        let mut c: Vec<Contender<'_, Option<&NextHops>>> = systems
            .iter()
            .map(|(s, _, _)| Contender::new(s.name(), |out: &mut Vec<_>| batch_on_threads(s, &queries, threads, out)))
            .collect();
        compare(cfg.reps, &want, &mut c)
    };

    let fib_rules = |s: &System| match s {
        System::Binsearch(_, f) => f.len(),
        _ => w.rules,
    };
    let mut rows = Vec::new();
    for (i, (s, bytes, build_s)) in systems.iter().enumerate() {
        let rules = fib_rules(s);
        let mismatches = batch[i].mismatches.max(single[i].mismatches).max(parallel[i].mismatches);
        let mut row = Row::new(&s.name())
            .with("fib", w.label())
            .with("rules", rules as u64)
            .with("components", w.components() as u64)
            .with("queries", nq as u64)
            .with("threads", threads as u64)
            .with("mlookups_per_s", batch[i].per_second(nq) / 1e6)
            .with("mlookups_per_s_all_threads", parallel[i].per_second(nq) / 1e6)
            .with("ns_per_lookup", single[i].ns_per_op(nq))
            .with("max_probes", u64::from(probes[i].0))
            .with("avg_probes", probes[i].1)
            .with("build_s", *build_s)
            .with("mismatches", mismatches)
            .with("oracle", if with_peers { "reference" } else { "construction" });
        if alloc::is_counting() {
            row = row.with("bytes_per_rule", bytes / rules.max(1) as f64);
        }
        if let System::Binsearch(_, f) = s {
            row = row
                .with("data_plane_bytes_per_rule", f.data_plane_bytes() as f64 / rules.max(1) as f64)
                .with("control_bytes_per_rule", f.control_bytes() as f64 / rules.max(1) as f64)
                .with("search_depth", u64::from(f.search_depth()))
                .with("chained_buckets", f.chained_buckets() as u64)
                .with("pulled_prefixes", f.level_pulling().map_or(0, |p| p.len()) as u64);
        }
        rows.push(row);
    }
    Ok(rows)
}

fn batch_on_threads<'s>(s: &'s System, queries: &[&[u8]], threads: usize, out: &mut Vec<Option<&'s NextHops>>) {
    let per = queries.len().div_ceil(threads);
    let parts: Vec<Vec<Option<&'s NextHops>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = queries
            .chunks(per.max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut part = Vec::with_capacity(chunk.len());
                    s.batch(chunk, &mut part);
                    part
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("lookup thread")).collect()
    });
    for p in parts {
        out.extend(p);
    }
}

fn group(r: &Row) -> String {
    let rules = r.num("rules").unwrap_or(0.0);
    let size = if rules >= 1e6 { format!("{:.0}M", rules / 1e6) } else { format!("{:.0}K", rules / 1e3) };
    match r.str("fib") {
        Some("url") => format!("url {size}"),
        Some(f) => format!("{f} k={} {size}", r.num("components").unwrap_or(0.0)),
        None => size,
    }
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let mut groups: Vec<String> = Vec::new();
    let mut systems: Vec<String> = Vec::new();
    for r in rows {
        let g = group(r);
        if !groups.contains(&g) {
            groups.push(g);
        }
        let s = r.str("system").unwrap_or("").to_string();
        if !systems.contains(&s) {
            systems.push(s);
        }
    }
    let series = |metric: &str| -> Vec<(String, Vec<f64>)> {
        systems
            .iter()
            .map(|s| {
                let vals = groups
                    .iter()
                    .map(|g| {
                        rows.iter().find(|r| r.str("system") == Some(s) && group(r) == *g).and_then(|r| r.num(metric)).unwrap_or(f64::NAN)
                    })
                    .collect();
                (s.clone(), vals)
            })
            .collect()
    };
    vec![
        Plot {
            file_tag: String::new(),
            title: "Name FIB lookups, batch API, one thread".into(),
            y_label: "million lookups/s".into(),
            chart: Chart::Bars { groups: groups.clone(), series: series("mlookups_per_s") },
        },
        Plot {
            file_tag: "probes".into(),
            title: "Hash buckets read per lookup, worst case".into(),
            y_label: "max probes".into(),
            chart: Chart::Bars { groups: groups.clone(), series: series("max_probes") },
        },
        Plot {
            file_tag: "memory".into(),
            title: "Memory per rule (everything allocated)".into(),
            y_label: "bytes per rule".into(),
            chart: Chart::Bars { groups: groups.clone(), series: series("bytes_per_rule") },
        },
    ]
}

/// The goal ratios of the issue, as lines.
fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let find = |fib: &str, k: f64, rules: f64, system: &str| {
        rows.iter()
            .find(|r| {
                r.str("fib") == Some(fib)
                    && (fib == "url" || r.num("components") == Some(k))
                    && r.num("rules").is_some_and(|n| (n - rules).abs() / rules < 0.01)
                    && r.str("system") == Some(system)
            })
            .and_then(|r| r.num("mlookups_per_s"))
    };
    let best_bin = |fib: &str, k: f64, rules: f64| {
        ["binsearch-verify-each", "binsearch-verify-at-end", "binsearch-verify-at-end+pull"]
            .iter()
            .filter_map(|s| find(fib, k, rules, s).map(|v| (v, *s)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let sizes: Vec<f64> = {
        let mut s: Vec<f64> = rows.iter().filter(|r| r.str("oracle") == Some("reference")).filter_map(|r| r.num("rules")).collect();
        s.sort_by(f64::total_cmp);
        s.dedup_by(|a, b| (*a - *b).abs() / *b < 0.01);
        s
    };
    for &rules in &sizes {
        let m = rules / 1e6;
        for (fib, k) in [("worst-linear", 7.0), ("worst-linear", 15.0), ("worst-binsearch", 7.0), ("worst-binsearch", 15.0), ("url", 0.0)] {
            let Some((bin, which)) = best_bin(fib, k, rules) else { continue };
            let lf = find(fib, k, rules, "longest-first").unwrap_or(f64::NAN);
            let sm = find(fib, k, rules, "start-at-m").unwrap_or(f64::NAN);
            let label = if fib == "url" { format!("url {m:.0}M") } else { format!("{fib} k={k} {m:.0}M") };
            out.push(format!("{label}: {which} {bin:.2} M/s = {:.2}x longest-first, {:.2}x start-at-m", bin / lf, bin / sm));
            if let (Some(huge), Some(small)) =
                (find(fib, k, rules, "binsearch-verify-each"), find(fib, k, rules, "binsearch-verify-each+4k-pages"))
            {
                out.push(format!("{label}: huge pages {huge:.2} M/s vs 4K pages {small:.2} M/s ({:.2}x)", huge / small));
            }
        }
    }
    let over: Vec<String> = rows
        .iter()
        .filter(|r| r.str("system").is_some_and(|s| s.starts_with("binsearch") && !s.ends_with("+pull")))
        .filter(|r| {
            let bound = r.num("search_depth").unwrap_or(0.0) + r.num("chained_buckets").unwrap_or(0.0);
            r.num("max_probes").unwrap_or(0.0) > bound
        })
        .map(|r| format!("{} on {}", r.str("system").unwrap_or(""), group(r)))
        .collect();
    out.push(if over.is_empty() {
        "max_probes within ceil(log2(k+1)) + chained overflow buckets for every binsearch lookup".into()
    } else {
        format!("max_probes over the bound: {}", over.join(", "))
    });
    for r in rows.iter().filter(|r| r.str("oracle") == Some("construction")) {
        out.push(format!(
            "{} at {}: {:.1} bytes/rule, built in {:.0} s, {:.2} M lookups/s",
            r.str("system").unwrap_or(""),
            group(r),
            r.num("bytes_per_rule").unwrap_or(f64::NAN),
            r.num("build_s").unwrap_or(f64::NAN),
            r.num("mlookups_per_s").unwrap_or(f64::NAN)
        ));
    }
    let wrong: u64 = rows.iter().filter_map(|r| r.num("mismatches")).sum::<f64>() as u64;
    out.push(format!("mismatches against the oracle: {wrong}"));
    out
}
