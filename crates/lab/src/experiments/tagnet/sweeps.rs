//! The series that change one thing: skewed FIBs, every form, and each walk option turned off
//! and measured against the default in turn (prefetch, SIMD, walk orders, batch order, chain
//! records, sibling order, SOL against SROL).

use nexthop_lookup::tag::{
    CompiledFib, Compression, Descriptor, Fanout, FasOrder, FlsBatchOrder, FlsOrder, InvertedIndex, Layout, MatchScratch, PortSet,
    RecordCheck, SiblingOrder, VARIANTS,
};

use super::inputs::{size_label, Workload, CHAIN_REMOVED, MATCHING_RATES, PAPER_WALKS, SKEW_EXPONENTS};
use super::matching::{compile, fib_row, given_best, measure_trie, weights_of};
use crate::harness::{compare, Contender, Outcome};
use crate::workload::tags as workload;
use crate::{Row, RunConfig};

/// How much the bit permutation saves as popularity gets more skewed: the largest Zipf FIB's
/// recipe with an application tag in every descriptor ([`workload::apps_fib`]) and with tags
/// Zipf(s) for each of [`SKEW_EXPONENTS`] ([`workload::zipf_s_fib`]), each compiled without
/// compression, permuted, and with chains removed (SROL) and checked like the main FIBs.
pub(super) fn skew(cfg: &RunConfig, n: usize, n_q: usize) -> anyhow::Result<Vec<Row>> {
    let mut fibs = vec![(format!("apps-{}", size_label(n)), workload::apps_fib(n, 0xa9))];
    for s in SKEW_EXPONENTS {
        fibs.push((format!("zipf-s{s}-{}", size_label(n)), workload::zipf_s_fib(n, s, 0x5e)));
    }
    let mut rows = Vec::new();
    for (name, entries) in fibs {
        let inverted = InvertedIndex::new(entries.iter().map(|(d, p)| (d, p)));
        let queries = workload::queries(&entries, n_q, 2, 0x52);
        let w = Workload::new(cfg, name, &entries, &inverted, queries);
        for c in [Compression::None, Compression::Perm, Compression::PermChain] {
            let (fib, build_s) = compile(w.entries, c, Layout::Srol)?;
            eprintln!("tagnet: {} {}/srol: {:.1} MB", w.name, c.name(), fib.memory_bytes() as f64 / 1e6);
            rows.push(fib_row(&w, &fib, build_s).with("sweep", "skew"));
            rows.extend(measure_trie(cfg, &w, &fib, 2).into_iter().map(|r| r.with("sweep", "skew")));
        }
    }
    Ok(rows)
}

/// Every compression × layout on `w` (Figure 9), returning the rows and the FIBs compiled as
/// `keep` asks, in its order.
pub(super) fn variants(cfg: &RunConfig, w: &Workload<'_>, keep: &[(Compression, Layout)]) -> anyhow::Result<(Vec<Row>, Vec<CompiledFib>)> {
    variants_of(cfg, w, &VARIANTS, keep)
}

/// [`variants`] over the forms `forms` alone.
pub(super) fn variants_of(
    cfg: &RunConfig,
    w: &Workload<'_>,
    forms: &[(Compression, Layout)],
    keep: &[(Compression, Layout)],
) -> anyhow::Result<(Vec<Row>, Vec<CompiledFib>)> {
    let mut rows = Vec::new();
    let mut kept: Vec<(usize, CompiledFib)> = Vec::new();
    for &(c, l) in forms {
        let (mut fib, build_s) = compile(w.entries, c, l)?;
        eprintln!(
            "tagnet: {} {}/{}: {} nodes, {:.1} MB, built in {build_s:.1} s",
            w.name,
            c.name(),
            l.name(),
            fib.node_count(),
            fib.memory_bytes() as f64 / 1e6
        );
        rows.push(fib_row(w, &fib, build_s));
        rows.extend(measure_trie(cfg, w, &fib, 2));
        rows.push(given_best(cfg, w, &mut fib));
        if let Some(at) = keep.iter().position(|&k| k == (c, l)) {
            kept.push((at, fib));
        }
    }
    kept.sort_by_key(|k| k.0);
    Ok((rows, kept.into_iter().map(|k| k.1).collect()))
}

/// FAS/FLS on each of `fibs` as the packet descriptors change: extra tags 0–3 (Figure 8) and
/// matching rates 0–75% (Figure 7; the packets that do not match are checked to match nothing).
pub(super) fn sweeps(cfg: &RunConfig, w: &Workload<'_>, fibs: &[CompiledFib], n: usize) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut run = |q: Vec<Descriptor>, extra: usize, sweep: &str| {
        let sweep_w = Workload::new(cfg, w.name.clone(), w.entries, w.inverted, q);
        for fib in fibs {
            rows.extend(measure_trie(cfg, &sweep_w, fib, extra).into_iter().map(|r| r.with("sweep", sweep)));
        }
    };
    for extra in [0, 1, 3] {
        run(workload::queries(w.entries, n, extra, 0x70 + extra as u64), extra, "extra_tags");
    }
    let one = Fanout::new(1).expect("1 is a fan-out");
    let matches = |q: &Descriptor| !w.inverted.fas(q, one, &PortSet::ALL).is_empty();
    for (i, matching) in MATCHING_RATES.into_iter().enumerate() {
        run(workload::queries_matching(w.entries, n, 2, matching, 0x80 + i as u64, matches)?, 2, "matching");
    }
    Ok(rows)
}

/// FAS/FLS on `fibs` with the walks' prefetch of the lists they will read turned off (sweep
/// `no_prefetch`): what each layout gives alone, as in the paper, which describes no prefetch.
pub(super) fn without_prefetch(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "no_prefetch", |fib, on| {
        fib.set_prefetch(on);
        true
    })
}

/// FAS/FLS on `fibs` with the walks reading sibling lists node by node instead of eight nodes
/// per AVX-512 scan (sweep `scalar`): what the scan gives. Nothing where this CPU has no
/// AVX-512F (the main rows are then node by node, `list_scan` says so).
pub(super) fn without_simd(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "scalar", CompiledFib::set_simd)
}

/// FAS/FLS on `fibs` with both walks depth-first, the paper's order (sweep `depth_first`): FAS
/// reading the list it pushed last first, each prefetched as it is pushed, and FLS depth-first
/// to its end, its batches as the FIB's size picks. What the default orders give: FAS
/// [breadth-first, prefetching 32 steps ahead](nexthop_lookup::tag::FasOrder), FLS
/// [breadth-first after its first match, or from the root](nexthop_lookup::tag::FlsOrder) as
/// the FIB's compression picks.
pub(super) fn depth_first(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "depth_first", |fib, on| {
        fib.set_fas_order(if on { FasOrder::BreadthFirst } else { FasOrder::DepthFirst });
        fib.set_fls_order(if on { FlsOrder::for_compression(fib.compression()) } else { FlsOrder::DepthFirst });
        true
    })
}

/// FAS/FLS on `fibs` with FLS in the other of its two breadth-first orders (sweep
/// `other_fls_order`): from the root where the FIB's compression picks breadth-first after the
/// first match (the paper's forms), and after the first match where it picks from the root
/// (rare+chain). What [the order by compression](nexthop_lookup::tag::FlsOrder::for_compression)
/// gives. FAS, unchanged, is measured again beside it.
pub(super) fn other_fls_order(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "other_fls_order", |fib, on| {
        let default = FlsOrder::for_compression(fib.compression());
        fib.set_fls_order(if on { default } else { other_breadth_first(default) });
        true
    })
}

/// The other of FLS's two breadth-first orders (from the root, after the first match).
pub(super) fn other_breadth_first(order: FlsOrder) -> FlsOrder {
    if order == FlsOrder::BreadthFirst {
        FlsOrder::BreadthAfterFirstMatch
    } else {
        FlsOrder::BreadthFirst
    }
}

/// FAS/FLS on `fibs` with FLS depth-first walking a batch's packets one after another (sweep
/// `one_at_a_time`): what [interleaving 8 walks](nexthop_lookup::tag::FlsBatchOrder) gives the
/// depth-first FLS (the default FLS walks one packet after another), on FIBs of any size (the
/// default is chosen by size; each FIB gets its own back after, and its own FLS order). FAS,
/// unchanged, is measured again beside it: its rows differ from the main ones by the run's noise.
pub(super) fn one_at_a_time(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    let defaults: Vec<(FlsOrder, FlsBatchOrder)> = fibs.iter().map(|f| (f.fls_order(), f.fls_batch_order())).collect();
    fibs.iter_mut().for_each(|fib| fib.set_fls_order(FlsOrder::DepthFirst));
    let rows = switched_off(cfg, w, fibs, "one_at_a_time", |fib, on| {
        fib.set_fls_batch_order(if on { FlsBatchOrder::Interleaved } else { FlsBatchOrder::OneAtATime });
        true
    });
    fibs.iter_mut().zip(defaults).for_each(|(fib, (order, batch))| {
        fib.set_fls_order(order);
        fib.set_fls_batch_order(batch);
    });
    rows
}

/// FAS/FLS on `fibs` with FAS testing each terminator's chain record when it meets it (sweep
/// `records_at_once`): what [holding 8 records, prefetched](nexthop_lookup::tag::RecordCheck)
/// gives. FLS, which tests at once either way, is measured again beside it: its rows differ
/// from the main ones by the run's noise.
pub(super) fn records_at_once(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "records_at_once", |fib, on| {
        fib.set_fas_record_check(if on { RecordCheck::Deferred } else { RecordCheck::AtOnce });
        true
    })
}

/// FAS/FLS rows (sweep `sweep`) of each of `fibs` with a walk option turned off by `set(fib,
/// false)`, which says whether it was on (else the FIB is skipped); turned on again after. Each
/// row also carries the option's gain measured in one stretch of the run ([`on_and_off`]):
/// `ab_on_kmatches_per_s` and `ab_off_kmatches_per_s`.
fn switched_off(
    cfg: &RunConfig,
    w: &Workload<'_>,
    fibs: &mut [CompiledFib],
    sweep: &str,
    set: impl Fn(&mut CompiledFib, bool) -> bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for fib in fibs {
        if !set(fib, true) {
            continue;
        }
        set(fib, false);
        let off = measure_trie(cfg, w, fib, 2);
        let ab = on_and_off(cfg, w, fib, &set);
        rows.extend(off.into_iter().zip(ab).map(|(r, (on, off, wrong))| {
            let mismatches = r.num("mismatches").unwrap_or(0.0) as u64 + wrong;
            r.with("sweep", sweep).with("ab_on_kmatches_per_s", on).with("ab_off_kmatches_per_s", off).with("mismatches", mismatches)
        }));
        set(fib, true);
    }
    rows
}

/// FAS, then FLS, on `fib` on one thread with a walk option on and off in turn, `set` switching
/// it before each repetition (interleaved by [`compare`], every answer checked): for each walk,
/// K/s with it on, K/s with it off, and answers wrong. A series' rows are measured minutes after
/// the main rows, and this machine's speed drifts between the two by more than some options
/// gain; measured in turn, both sides share the drift.
pub(super) fn on_and_off(
    cfg: &RunConfig,
    w: &Workload<'_>,
    fib: &mut CompiledFib,
    set: &impl Fn(&mut CompiledFib, bool) -> bool,
) -> [(f64, f64, u64); 2] {
    let q = &w.queries;
    let n = q.len();
    let cell = core::cell::RefCell::new(fib);
    let fib = &cell;
    let name = |on: bool| if on { "on" } else { "off" };
    let fas = |on: bool| {
        Contender::new(name(on), move |out: &mut Vec<PortSet>| {
            let mut f = fib.borrow_mut();
            set(&mut f, on);
            out.resize(n, PortSet::EMPTY);
            f.fas_batch(q, Fanout::ALL, out, &mut MatchScratch::new());
        })
    };
    let fls = |on: bool| {
        Contender::new(name(on), move |out: &mut Vec<u32>| {
            let mut f = fib.borrow_mut();
            set(&mut f, on);
            out.resize(n, 0);
            weights_of(out, |answers| f.fls_batch(q, answers, &mut MatchScratch::new()));
        })
    };
    let pair = |o: &[Outcome]| match o {
        [on, off] => (on.per_second(n) / 1e3, off.per_second(n) / 1e3, on.mismatches + off.mismatches),
        _ => (0.0, 0.0, 0),
    };
    let fas_ab = pair(&compare(cfg.reps, &w.fas_ref, &mut [fas(true), fas(false)]));
    let fls_ab = pair(&compare(cfg.reps, &w.fls_weights(), &mut [fls(true), fls(false)]));
    [fas_ab, fls_ab]
}

/// FAS/FLS on the forms of [`LAYOUT_FIBS`] compiled again with sibling lists in descending
/// order (sweep `descending`): what the default, the paper's ascending order, gives (FLS stops
/// reading a list where it can no longer beat its best match, instead of passing over its head).
/// Measured again as the paper walks (sweep `descending_no_prefetch`): no prefetch, FAS
/// depth-first, FLS one packet at a time. With descending lists both walks then pop a list's
/// children in the order SROL lays their subtrees out (lowest position, the last sibling,
/// first), so these rows show the layouts as the paper compares them — walks that follow SROL,
/// and nothing to hide where the next list is. (FAS's default, breadth-first, follows no
/// layout, and interleaved FLS walks read other packets' lists between their own: in the runs
/// from git 5025a9b through d0be050 these rows measured those defaults, not the paper's walks.)
/// Then each compression's two layouts, walking so, are measured in turn ([`layouts_in_turn`]).
pub(super) fn descending_lists(cfg: &RunConfig, w: &Workload<'_>) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for c in CHAIN_REMOVED {
        let mut both = descending_layouts(w, c)?;
        for fib in &mut both {
            rows.extend(measure_trie(cfg, w, fib, 2).into_iter().map(|r| r.with("sweep", "descending")));
            walk_as_the_paper(fib);
            rows.extend(measure_trie(cfg, w, fib, 2).into_iter().map(|r| r.with("sweep", "descending_no_prefetch")));
        }
        rows.extend(layouts_in_turn(cfg, w, &both, PAPER_WALKS));
    }
    Ok(rows)
}

/// SOL and SROL of each chain-removed form compiled with descending lists and walked as the
/// paper walks ([`walk_as_the_paper`]), measured in turn ([`layouts_in_turn`]): Figure 9c's
/// comparison, under its conditions, one compression at a time (two FIBs in memory).
pub(super) fn paper_layouts_in_turn(cfg: &RunConfig, w: &Workload<'_>) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for c in CHAIN_REMOVED {
        let mut both = descending_layouts(w, c)?;
        both.iter_mut().for_each(walk_as_the_paper);
        rows.extend(layouts_in_turn(cfg, w, &both, PAPER_WALKS));
    }
    Ok(rows)
}

/// `w`'s FIB compiled as `c` in SOL, then SROL, with sibling lists in descending order.
fn descending_layouts(w: &Workload<'_>, c: Compression) -> anyhow::Result<Vec<CompiledFib>> {
    [Layout::Sol, Layout::Srol]
        .into_iter()
        .map(|l| Ok(CompiledFib::build_ordered(w.entries.iter().copied(), w.entries.len(), c, l, SiblingOrder::Descending)?))
        .collect()
}

/// Sets `fib` to walk as the paper does: no prefetch, both walks depth-first, FLS one packet at
/// a time.
pub(super) fn walk_as_the_paper(fib: &mut CompiledFib) {
    fib.set_prefetch(false);
    fib.set_fas_order(FasOrder::DepthFirst);
    fib.set_fls_order(FlsOrder::DepthFirst);
    fib.set_fls_batch_order(FlsBatchOrder::OneAtATime);
}

/// SOL against SROL, measured in turn (sweep `layouts_in_turn`): for each compression among
/// `fibs` compiled in both layouts, FAS on the two in one [`compare`], then FLS, on the same
/// packets, every answer checked. `walks` says how the FIBs were set to walk: [`OUR_WALKS`] or
/// [`PAPER_WALKS`]. A row carries each layout's K/s and `srol_over_sol`. The main and series
/// rows set SOL against SROL measured minutes apart, and on the AMD EPYC this machine's speed
/// drifted between the two by more than the layouts differ; measured in turn, both share the
/// drift.
pub(super) fn layouts_in_turn(cfg: &RunConfig, w: &Workload<'_>, fibs: &[CompiledFib], walks: &str) -> Vec<Row> {
    let q = &w.queries;
    let n = q.len();
    let weights = w.fls_weights();
    let mut rows = Vec::new();
    for sol in fibs.iter().filter(|f| f.layout() == Layout::Sol) {
        let Some(srol) = fibs.iter().find(|f| f.layout() == Layout::Srol && f.compression() == sol.compression()) else {
            continue;
        };
        let mut fas = [sol, srol].map(|fib| {
            Contender::new(fib.layout().name(), move |out: &mut Vec<PortSet>| {
                out.resize(n, PortSet::EMPTY);
                fib.fas_batch(q, Fanout::ALL, out, &mut MatchScratch::new());
            })
        });
        let mut fls = [sol, srol].map(|fib| {
            Contender::new(fib.layout().name(), move |out: &mut Vec<u32>| {
                out.resize(n, 0);
                weights_of(out, |answers| fib.fls_batch(q, answers, &mut MatchScratch::new()));
            })
        });
        let fas_o = compare(cfg.reps, &w.fas_ref, &mut fas);
        let fls_o = compare(cfg.reps, &weights, &mut fls);
        for (walk, o) in [("fas", fas_o), ("fls", fls_o)] {
            let [sol_k, srol_k] = [0, 1].map(|i| o.get(i).map_or(f64::NAN, |o| o.per_second(n) / 1e3));
            rows.push(
                Row::new(walk)
                    .with("fib", w.name.as_str())
                    .with("descriptors", w.entries.len())
                    .with("sweep", "layouts_in_turn")
                    .with("walks", walks)
                    .with("compression", sol.compression().name())
                    .with("sibling_order", sol.sibling_order().name())
                    .with("extra_tags", 2)
                    .with("queries", n)
                    .with("sol_kmatches_per_s", sol_k)
                    .with("srol_kmatches_per_s", srol_k)
                    .with("srol_over_sol", srol_k / sol_k)
                    .with("mismatches", o.iter().map(|o| o.mismatches).sum::<u64>()),
            );
        }
    }
    rows
}
