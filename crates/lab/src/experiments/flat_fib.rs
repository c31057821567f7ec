//! Experiment `flat-fib`: exact match on flat names — Concise (Othello) against hashbrown, a
//! (2,4)-cuckoo table and a static minimal perfect hash (ptr_hash) with a value array.
//!
//! Names (`NameType`): 48-bit MACs, IPv4 addresses, 16-byte flow IDs and byte names of 8–40
//! bytes, made distinct by construction (a bijection of the index), with actions drawn uniformly
//! from 0..2^l. Every system is built from the same (name, action) pairs and answers the same
//! queries — 4M names (quick: 512K) drawn uniformly from the FIB at every n — through its batch path (hashbrown has none: a
//! loop of `get`, what a Rust user writes), on one thread and on all threads; every answer of
//! every repetition is checked against the action the name was given (`mismatches`).
//! `bytes_per_name` is what the build left allocated (counting allocator) over n: for Concise the
//! query structure, the data plane's whole state (`control_bytes_per_name` is its control
//! structure). `build_s` is wall time (ptr_hash builds on all cores).
//!
//! Updates (Concise, MAC names): `updates_per_s` runs a mix of adds, deletes and alters of names
//! outside the FIB through the control structure one at a time, shipping every delta into a
//! query structure; `updates_per_s_batch` runs the same mix through `update_batch`, 256 at a
//! time, shipping one delta per batch; `updates_per_s_option1` is the one-at-a-time rate under
//! the paper's sizing option 1. Then one reader thread (pinned to core 0) runs batch lookups of
//! names that never change, in five windows alone and five while a writer thread (pinned to
//! core 1) applies 100K updates/s (each wake-up's due updates as one batch), taken in turn;
//! `mlookups_per_s_reader_alone` and `mlookups_per_s_during_updates` are the medians (every
//! answer checked in both). After each run of updates, every churn name still present is looked
//! up in the shipped query structure and checked against the action it was last given
//! (`mismatches_updated_names`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hashbrown::HashMap;
use nexthop_lookup::flat::{Cell, Othello, OthelloConfig, OthelloQuery, Patch, Sizing, Update};
use ptr_hash::{PtrHash, PtrHashParams};

use crate::harness::{compare, median, Contender};
use crate::peers::flat::{Cuckoo, FlatKey};
use crate::plot::{Chart, Plot};
use crate::{alloc, machine, progress, Report, Row, RunConfig};

/// ptr_hash over a name type, hashing with xxh3 (any name length).
type Mphf<K> = PtrHash<K, ptr_hash::bucket_fn::Linear, Vec<u32>, ptr_hash::hash::Xxh3>;

/// The `flat-fib` experiment.
#[derive(Debug)]
pub struct FlatFibExperiment;

/// Flat name types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameType {
    Mac,
    Ipv4,
    Flow,
    Var,
}

impl NameType {
    fn label(self) -> &'static str {
        match self {
            NameType::Mac => "mac",
            NameType::Ipv4 => "ipv4",
            NameType::Flow => "flow16",
            NameType::Var => "bytes",
        }
    }

    /// Name `i`: distinct for distinct `i` (an odd multiplier is a bijection mod 2^k).
    fn name(self, i: u64) -> Vec<u8> {
        let mix = |x: u64| x.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (x >> 29);
        match self {
            NameType::Mac => (i.wrapping_mul(0x5851_f42d_4c95_7f2d) & ((1 << 48) - 1)).to_be_bytes()[2..].to_vec(),
            NameType::Ipv4 => ((i as u32).wrapping_mul(0x9e37_79b9)).to_be_bytes().to_vec(),
            NameType::Flow => {
                let mut v = i.wrapping_mul(0x5851_f42d_4c95_7f2d).to_be_bytes().to_vec();
                v.extend_from_slice(&mix(i).to_be_bytes());
                v
            }
            NameType::Var => {
                let len = 8 + (mix(i) % 33) as usize;
                let mut v = i.wrapping_mul(0x5851_f42d_4c95_7f2d).to_be_bytes().to_vec();
                v.extend((8..len).map(|j| b'a' + ((mix(i ^ j as u64) % 26) as u8)));
                v
            }
        }
    }
}

/// One configuration: name type, n, l.
#[derive(Debug, Clone, Copy)]
struct Case {
    ty: NameType,
    n: usize,
    bits: u32,
    updates: bool,
}

impl super::Experiment for FlatFibExperiment {
    fn name(&self) -> &'static str {
        "flat-fib"
    }

    fn about(&self) -> &'static str {
        "exact match on flat names: Concise (Othello) vs hashbrown, (2,4)-cuckoo, ptr_hash MPHF"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let mut cases = Vec::new();
        let sizes: &[usize] = if cfg.quick { &[1 << 16, 1 << 20] } else { &[1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24] };
        for &n in sizes {
            cases.push(Case { ty: NameType::Mac, n, bits: 8, updates: n <= 1 << 24 });
        }
        if !cfg.quick {
            cases.push(Case { ty: NameType::Mac, n: 1 << 26, bits: 8, updates: false });
        }
        let other_sizes: &[usize] = if cfg.quick { &[1 << 18] } else { &[1 << 20, 1 << 24] };
        for &n in other_sizes {
            cases.push(Case { ty: NameType::Ipv4, n, bits: 8, updates: false });
            cases.push(Case { ty: NameType::Flow, n, bits: 8, updates: false });
            cases.push(Case { ty: NameType::Flow, n, bits: 16, updates: false });
            cases.push(Case { ty: NameType::Var, n, bits: 8, updates: false });
        }
        if cfg.quick {
            cases.push(Case { ty: NameType::Mac, n: 1 << 22, bits: 8, updates: false });
        }
        let mut report = Report::default();
        for case in cases {
            let rows = match case.ty {
                NameType::Mac => run_case::<[u8; 6]>(cfg, case),
                NameType::Ipv4 => run_case::<[u8; 4]>(cfg, case),
                NameType::Flow => run_case::<[u8; 16]>(cfg, case),
                NameType::Var => run_case::<Box<[u8]>>(cfg, case),
            };
            report.rows.extend(rows);
        }
        report.plots = plots(&report.rows);
        report.summary = summary(&report.rows);
        Ok(report)
    }
}

fn run_case<K: FlatKey>(cfg: &RunConfig, case: Case) -> Vec<Row> {
    if case.bits <= 8 {
        run_typed::<K, u8>(cfg, case)
    } else {
        run_typed::<K, u16>(cfg, case)
    }
}

fn rng_next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn run_typed<K: FlatKey, C: Cell>(cfg: &RunConfig, case: Case) -> Vec<Row> {
    let Case { ty, n, bits, .. } = case;
    let label = format!("{} n={n} l={bits}", ty.label());
    let bar = progress::bar(n as u64, &label);
    let mut seed = 0x666c_6174 ^ n as u64;
    let keys: Vec<K> = (0..n as u64).map(|i| K::from_bytes(&ty.name(i))).inspect(|_| bar.inc(1)).collect();
    bar.finish_and_clear();
    let actions: Vec<u16> = (0..n).map(|_| (rng_next(&mut seed) % (1u64 << bits)) as u16).collect();
    // As many queries at every n (drawn with repetition), so small FIBs are timed as long as large.
    let q: usize = if cfg.quick { 1 << 19 } else { 1 << 22 };
    let picks: Vec<usize> = (0..q).map(|_| (rng_next(&mut seed) % n as u64) as usize).collect();
    let queries: Vec<K> = picks.iter().map(|&i| keys[i].clone()).collect();
    let reference: Vec<u32> = picks.iter().map(|&i| u32::from(actions[i])).collect();

    // Builds, each measured for time and for what it leaves allocated.
    let measure = |f: &mut dyn FnMut()| {
        let before = alloc::live_bytes();
        let t = Instant::now();
        f();
        (t.elapsed().as_secs_f64(), alloc::live_bytes().saturating_sub(before))
    };
    let mut control: Option<Othello<C>> = None;
    let (concise_ctl_s, ctl_bytes) = measure(&mut || {
        let pairs = keys.iter().zip(&actions).map(|(k, &a)| (k.as_ref(), u32::from(a)));
        control = Some(Othello::construct(OthelloConfig::new(bits), pairs).expect("distinct names, l-bit actions"));
    });
    let control = control.expect("built");
    let mut concise: Option<OthelloQuery<C>> = None;
    let (concise_q_s, concise_bytes) = measure(&mut || concise = Some(control.query()));
    let concise = concise.expect("built");
    let mut map: Option<HashMap<K, u16>> = None;
    let (map_s, map_bytes) = measure(&mut || {
        let mut m = HashMap::with_capacity(n);
        m.extend(keys.iter().cloned().zip(actions.iter().copied()));
        map = Some(m);
    });
    let map = map.expect("built");
    let mut cuckoo: Option<Cuckoo<K>> = None;
    let (cuckoo_s, cuckoo_bytes) = measure(&mut || {
        let mut c = Cuckoo::with_capacity(n);
        for (k, &a) in keys.iter().zip(&actions) {
            c.insert(k.clone(), a);
        }
        cuckoo = Some(c);
    });
    let cuckoo = cuckoo.expect("built");
    let mut mphf: Option<(Mphf<K>, Vec<u16>)> = None;
    let (mphf_s, mphf_bytes) = measure(&mut || {
        let h = PtrHash::new(&keys, PtrHashParams::default());
        let mut values = vec![0u16; n];
        for (k, &a) in keys.iter().zip(&actions) {
            values[h.index(k)] = a;
        }
        mphf = Some((h, values));
    });
    let (mphf, values) = mphf.expect("built");

    let split = |threads: usize| (q.div_ceil(threads.max(1))).max(1);
    let mut contenders: Vec<Contender<'_, u32>> = vec![
        Contender::new("concise", |out: &mut Vec<u32>| concise.lookup_batch(&queries, out)),
        Contender::new("hashbrown", |out: &mut Vec<u32>| out.extend(queries.iter().map(|k| map.get(k).map_or(0, |&a| u32::from(a))))),
        Contender::new("cuckoo", |out: &mut Vec<u32>| cuckoo.lookup_batch(&queries, out)),
        Contender::new("ptr-hash", |out: &mut Vec<u32>| mphf_batch(&mphf, &values, &queries, out)),
    ];
    let single = compare(cfg.reps, &reference, &mut contenders);
    drop(contenders);
    // All threads: each thread answers its share of the queries; answers gathered in order.
    let threads = cfg.threads.max(1);
    let chunk = split(threads);
    let parallel = |f: &(dyn Fn(std::ops::Range<usize>, &mut Vec<u32>) + Sync), out: &mut Vec<u32>| {
        let parts: Vec<Vec<u32>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..q)
                .step_by(chunk)
                .map(|start| {
                    s.spawn(move || {
                        let mut o = Vec::with_capacity(chunk);
                        f(start..(start + chunk).min(q), &mut o);
                        o
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("thread")).collect()
        });
        out.extend(parts.into_iter().flatten());
    };
    let mut contenders: Vec<Contender<'_, u32>> = vec![
        Contender::new("concise", |out: &mut Vec<u32>| parallel(&|r, o| concise.lookup_batch(&queries[r], o), out)),
        Contender::new("hashbrown", |out: &mut Vec<u32>| {
            parallel(&|r, o| o.extend(queries[r].iter().map(|k| map.get(k).map_or(0, |&a| u32::from(a)))), out)
        }),
        Contender::new("cuckoo", |out: &mut Vec<u32>| parallel(&|r, o| cuckoo.lookup_batch(&queries[r], o), out)),
        Contender::new("ptr-hash", |out: &mut Vec<u32>| parallel(&|r, o| mphf_batch(&mphf, &values, &queries[r], o), out)),
    ];
    let all = compare(cfg.reps, &reference, &mut contenders);
    drop(contenders);

    let builds = [(concise_ctl_s + concise_q_s, concise_bytes), (map_s, map_bytes), (cuckoo_s, cuckoo_bytes), (mphf_s, mphf_bytes)];
    let mut rows = Vec::new();
    for ((o, a), (build_s, bytes)) in single.iter().zip(&all).zip(builds) {
        let mut row = Row::new(&o.system)
            .with("names", n)
            .with("name_type", ty.label())
            .with("actions", 1u64 << bits)
            .with("queries", q)
            .with("threads", threads)
            .with("mlookups_per_s", o.per_second(q) / 1e6)
            .with("mlookups_per_s_all_threads", a.per_second(q) / 1e6)
            .with("bytes_per_name", bytes as f64 / n as f64)
            .with("build_s", build_s)
            .with("mismatches", o.mismatches.max(a.mismatches));
        if o.system == "concise" {
            row = row.with("control_bytes_per_name", ctl_bytes as f64 / n as f64).with("rebuild_seeds", control.stats().seeds_tried);
        }
        rows.push(row);
    }
    if case.updates {
        let ups = updates::<K, C>(cfg, ty, control, &queries, &reference, bits);
        if let Some(row) = rows.iter_mut().find(|r| r.str("system") == Some("concise")) {
            for (k, v) in ups {
                row.0.insert(k.to_string(), v.into());
            }
        }
    }
    rows
}

/// ptr_hash's streaming (prefetching) index over a batch; its iterator must be driven by `fold`.
fn mphf_batch<K: FlatKey>(
    h: &PtrHash<K, ptr_hash::bucket_fn::Linear, Vec<u32>, ptr_hash::hash::Xxh3>,
    values: &[u16],
    keys: &[K],
    out: &mut Vec<u32>,
) {
    h.index_stream::<32, _>(keys.iter()).for_each(|i| out.push(u32::from(values[i])));
}

/// Windows of lookups alone and of lookups beside the paced writer, taken in turn.
const WINDOWS: usize = 5;

/// Updates handed to [`Othello::update_batch`] at once in `updates_per_s_batch`.
const UPDATE_BATCH: usize = 256;

/// The churn mix: updates of names beyond the FIB's own, each the add of an absent one or the
/// delete or alter of a present one, chosen by a seeded generator.
#[derive(Debug, Clone)]
struct Churn {
    live: Vec<bool>,
    /// The action each live name was last given.
    actions: Vec<u32>,
    seed: u64,
    /// Actions are drawn from 0..max.
    max: u64,
}

impl Churn {
    /// The next update, of one of `names` (as many as `live` has).
    fn next<'n>(&mut self, names: &'n [Vec<u8>]) -> Update<'n> {
        let r = rng_next(&mut self.seed);
        let c = (r % names.len() as u64) as usize;
        let action = ((r >> 32) % self.max) as u32;
        if !self.live[c] {
            self.live[c] = true;
            self.actions[c] = action;
            Update::Add(&names[c], action)
        } else if r & (1 << 20) == 0 {
            self.live[c] = false;
            Update::Delete(&names[c])
        } else {
            self.actions[c] = action;
            Update::Alter(&names[c], action)
        }
    }
}

/// Live churn names whose action in `query` is not the one they were last given.
fn churn_mismatches<C: Cell>(query: &OthelloQuery<C>, names: &[Vec<u8>], churn: &Churn) -> u64 {
    names.iter().enumerate().filter(|&(c, name)| churn.live[c] && query.lookup(name) != churn.actions[c]).count() as u64
}

/// Ships what the control structure changed into the data plane's query structure.
fn ship<C: Cell>(control: &mut Othello<C>, patch: &mut Patch<C>, query: &mut OthelloQuery<C>) {
    match control.take_delta_into(patch) {
        None => query.apply(patch).expect("in range"),
        Some(q) => *query = q,
    }
}

/// `count` updates of the churn mix through `control`, `batch` at a time, each batch's delta
/// shipped into a query structure; updates per second, and the churn names the shipped query
/// structure then answers wrongly.
fn update_rate<C: Cell>(control: &mut Othello<C>, names: &[Vec<u8>], churn: &mut Churn, count: usize, batch: usize) -> (f64, u64) {
    let mut query = control.query();
    let mut patch = Patch::default();
    let mut ups = Vec::with_capacity(batch);
    let t = Instant::now();
    let mut done = 0;
    while done < count {
        ups.clear();
        ups.extend((0..batch.min(count - done)).map(|_| churn.next(names)));
        if let [one] = ups[..] {
            control.update(one).expect("the mix is valid");
        } else {
            control.update_batch(&ups, |_, r| r.expect("the mix is valid"));
        }
        ship(control, &mut patch, &mut query);
        done += ups.len();
    }
    let rate = count as f64 / t.elapsed().as_secs_f64();
    (rate, churn_mismatches(&query, names, churn))
}

/// Concise under updates: update rate one at a time and in batches, then lookups alone vs during
/// 100K updates/s.
fn updates<K: FlatKey, C: Cell>(
    cfg: &RunConfig,
    ty: NameType,
    mut control: Othello<C>,
    stable: &[K],
    want: &[u32],
    bits: u32,
) -> Vec<(&'static str, f64)> {
    let n = control.len() as u64;
    // A churn population beyond the FIB's names: added, altered, deleted.
    let names: Vec<Vec<u8>> = (0..65_536).map(|i| ty.name(n + i)).collect();
    let mut churn = Churn { live: vec![false; names.len()], actions: vec![0; names.len()], seed: 0x7570_6461_7465, max: 1 << bits };
    // Update rate: control work plus shipping every delta.
    let count = if cfg.quick { 100_000 } else { 1_000_000 };
    // The same mix on the paper's option-1 sizing (m_a = m_b: smaller trees, more cells), from
    // the same start.
    let mut option1 = {
        let cfg1 = OthelloConfig { sizing: Sizing::Equal, ..OthelloConfig::new(bits) };
        (Othello::<C>::construct(cfg1, control.iter()).expect("same names"), churn.clone())
    };
    let (updates_per_s, wrong_single) = update_rate(&mut control, &names, &mut churn, count, 1);
    let rebuilds = control.stats().rebuilds as f64;
    let (updates_per_s_batch, wrong_batch) = update_rate(&mut control, &names, &mut churn, count, UPDATE_BATCH);
    let (updates_per_s_option1, wrong_option1) = update_rate(&mut option1.0, &names, &mut option1.1, count, 1);
    drop(option1);
    // Lookups of stable names, alone and beside a paced writer: windows of each in turn, so a
    // drift of the machine (or one reconstruction) moves one window, not a whole side.
    let shared = Arc::new(arc_swap::ArcSwap::from_pointee(control.query()));
    let window = Duration::from_millis(if cfg.quick { 60 } else { 400 });
    let reader = |shared: &arc_swap::ArcSwap<OthelloQuery<C>>| {
        let (mut done, mut wrong) = (0u64, 0u64);
        let mut out = Vec::with_capacity(stable.len());
        let t = Instant::now();
        while t.elapsed() < window {
            out.clear();
            shared.load().lookup_batch(stable, &mut out);
            wrong += out.iter().zip(want).filter(|(a, b)| a != b).count() as u64;
            done += out.len() as u64;
        }
        (done as f64 / t.elapsed().as_secs_f64() / 1e6, wrong)
    };
    let rebuilds_before = control.stats().rebuilds;
    let (mut alone, mut during, mut wrong) = (Vec::new(), Vec::new(), 0);
    let (mut applied, mut writing_s) = (0usize, 0.0);
    // The reader has core 0 and the writer core 1 to themselves, as a data plane pins them, so
    // the scheduler never puts the waking writer on the reader's core.
    let pinned_reader = || {
        machine::pin_current_thread(0);
        reader(&shared)
    };
    for _ in 0..WINDOWS {
        let (rate, w) = std::thread::scope(|s| s.spawn(pinned_reader).join().expect("reader"));
        alone.push(rate);
        wrong += w;
        let stop = AtomicBool::new(false);
        let (rate, w, (n, secs)) = std::thread::scope(|s| {
            let writer = s.spawn(|| {
                machine::pin_current_thread(1);
                let start = Instant::now();
                let mut n = 0;
                let (mut patch, mut ups) = (Patch::default(), Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    // 100 updates per millisecond: those due since the last wake-up, as one batch.
                    let due = (start.elapsed().as_secs_f64() * 100_000.0) as usize;
                    ups.clear();
                    ups.extend((n..due).map(|_| churn.next(&names)));
                    control.update_batch(&ups, |_, r| r.expect("the mix is valid"));
                    match control.take_delta_into(&mut patch) {
                        None => shared.load().apply(&patch).expect("in range"),
                        Some(q) => shared.store(Arc::new(q)),
                    }
                    n = due.max(n);
                    std::thread::sleep(Duration::from_micros(200));
                }
                (n, start.elapsed().as_secs_f64())
            });
            let (rate, w) = s.spawn(pinned_reader).join().expect("reader");
            stop.store(true, Ordering::Relaxed);
            (rate, w, writer.join().expect("writer"))
        });
        during.push(rate);
        wrong += w;
        applied += n;
        writing_s += secs;
    }
    vec![
        ("updates_per_s", updates_per_s),
        ("updates_per_s_batch", updates_per_s_batch),
        ("updates_per_s_option1", updates_per_s_option1),
        ("update_rebuilds", rebuilds),
        ("mlookups_per_s_reader_alone", median(&alone)),
        ("mlookups_per_s_during_updates", median(&during)),
        ("updates_per_s_applied_during", applied as f64 / writing_s),
        ("update_rebuilds_during", (control.stats().rebuilds - rebuilds_before) as f64),
        ("mismatches_during_updates", wrong as f64),
        (
            "mismatches_updated_names",
            (wrong_single + wrong_batch + wrong_option1 + churn_mismatches(&shared.load(), &names, &churn)) as f64,
        ),
    ]
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let series = |key: &str| {
        ["concise", "hashbrown", "cuckoo", "ptr-hash"]
            .iter()
            .map(|sys| {
                let pts = rows
                    .iter()
                    .filter(|r| r.str("system") == Some(sys) && r.str("name_type") == Some("mac"))
                    .filter_map(|r| Some((r.num("names")?, r.num(key)?)))
                    .collect();
                ((*sys).to_string(), pts)
            })
            .collect::<Vec<_>>()
    };
    vec![
        Plot {
            file_tag: "throughput".into(),
            title: "MAC names, l = 8: batch lookups, one thread (Fig. 5)".into(),
            y_label: "M lookups/s".into(),
            chart: Chart::Lines { x_label: "names".into(), log_x: true, series: series("mlookups_per_s") },
        },
        Plot {
            file_tag: "memory".into(),
            title: "MAC names, l = 8: data-plane bytes per name".into(),
            y_label: "bytes / name".into(),
            chart: Chart::Lines { x_label: "names".into(), log_x: true, series: series("bytes_per_name") },
        },
    ]
}

fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let get = |sys: &str, ty: &str, n: f64, bits: f64, key: &str| {
        rows.iter()
            .find(|r| {
                r.str("system") == Some(sys)
                    && r.str("name_type") == Some(ty)
                    && r.num("names") == Some(n)
                    && r.num("actions") == Some(bits)
            })
            .and_then(|r| r.num(key))
    };
    let mut ns: Vec<f64> = rows.iter().filter(|r| r.str("name_type") == Some("mac")).filter_map(|r| r.num("names")).collect();
    ns.dedup();
    for n in ns {
        if let (Some(c), Some(h), Some(k)) = (
            get("concise", "mac", n, 256.0, "mlookups_per_s"),
            get("hashbrown", "mac", n, 256.0, "mlookups_per_s"),
            get("cuckoo", "mac", n, 256.0, "mlookups_per_s"),
        ) {
            out.push(format!("flat-fib mac n={n}: concise {c:.1} M/s = {:.2}x hashbrown, {:.2}x cuckoo", c / h, c / k));
        }
        if let (Some(u), Some(b), Some(a), Some(d)) = (
            get("concise", "mac", n, 256.0, "updates_per_s"),
            get("concise", "mac", n, 256.0, "updates_per_s_batch"),
            get("concise", "mac", n, 256.0, "mlookups_per_s_reader_alone"),
            get("concise", "mac", n, 256.0, "mlookups_per_s_during_updates"),
        ) {
            out.push(format!(
                "flat-fib mac n={n}: {:.2} M updates/s one at a time, {:.2} M/s in batches of {UPDATE_BATCH}; lookups during 100K updates/s {:.1}% of alone",
                u / 1e6,
                b / 1e6,
                100.0 * d / a
            ));
        }
    }
    for r in rows
        .iter()
        .filter(|r| r.str("system") == Some("concise") && r.str("name_type") == Some("flow16") && r.num("actions") == Some(256.0))
    {
        let n = r.num("names").unwrap_or(0.0);
        if let (Some(c), Some(h)) = (r.num("bytes_per_name"), get("hashbrown", "flow16", n, 256.0, "bytes_per_name")) {
            out.push(format!("flat-fib flow16 n={n} l=8: concise {c:.2} bytes/name vs hashbrown {h:.1} ({:.1}x smaller)", h / c));
        }
    }
    let wrong: f64 = rows.iter().filter_map(|r| r.num("mismatches")).sum::<f64>()
        + rows.iter().filter_map(|r| r.num("mismatches_during_updates")).sum::<f64>()
        + rows.iter().filter_map(|r| r.num("mismatches_updated_names")).sum::<f64>();
    out.push(format!("flat-fib: mismatches against the actions given: {wrong}"));
    out
}
