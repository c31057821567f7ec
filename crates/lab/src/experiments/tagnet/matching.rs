//! FAS and FLS through a compiled FIB against the linear scan and the inverted index: the main
//! rows, the counted walks, FLS handed its answer's weight, and the FIB size rows.

use nexthop_lookup::tag::{
    parallel, CompiledFib, Compression, Descriptor, Fanout, FlsOrder, Largest, Layout, LinearScan, MatchScratch, PortSet, WalkCounts,
};

use super::inputs::{invalid_fls, Workload};
use crate::harness::{compare, timed, Contender, Outcome};
use crate::{Row, RunConfig};

/// A batch matcher: `out[i]` for `queries[i]` (a packet descriptor, or one with what the walk
/// is given besides).
type Batch<'a, Q, A> = &'a (dyn Fn(&[Q], &mut [A]) + Sync);

/// Times `f` on one thread and on all, both checked against `reference`.
fn one_and_all<Q: Sync, A: Copy + Default + PartialEq + Send>(
    cfg: &RunConfig,
    queries: &[Q],
    reference: &[A],
    f: Batch<'_, Q, A>,
) -> (Outcome, Outcome) {
    let n = queries.len();
    let threads = cfg.threads;
    let mut contenders = vec![
        Contender::new("1", |out: &mut Vec<A>| {
            out.resize(n, A::default());
            f(queries, out);
        }),
        Contender::new("all", |out: &mut Vec<A>| {
            out.resize(n, A::default());
            parallel(queries, out, threads, f);
        }),
    ];
    let mut o = compare(cfg.reps, reference, &mut contenders);
    let all = o.pop().unwrap_or_else(|| empty_outcome("all"));
    let one = o.pop().unwrap_or_else(|| empty_outcome("1"));
    (one, all)
}

fn empty_outcome(system: &str) -> Outcome {
    Outcome { system: system.into(), median_s: 0.0, samples_s: Vec::new(), mismatches: 0 }
}

/// A matching row from the two outcomes.
fn match_row(system: &str, w: &Workload<'_>, n: usize, one: &Outcome, all: &Outcome, extra: u64) -> Row {
    Row::new(system)
        .with("fib", w.name.as_str())
        .with("descriptors", w.entries.len())
        .with("queries", n)
        .with("matching_pct", w.matching_pct())
        .with("kmatches_per_s", one.per_second(n) / 1e3)
        .with("kmatches_per_s_all_threads", all.per_second(n) / 1e3)
        .with("us_per_match", one.ns_per_op(n) / 1e3)
        .with("mismatches", one.mismatches.max(all.mismatches) + extra)
}

/// FAS and FLS rows for one compiled FIB.
pub(super) fn measure_trie(cfg: &RunConfig, w: &Workload<'_>, fib: &CompiledFib, extra_tags: usize) -> Vec<Row> {
    let q = &w.queries;
    let fas = |q: &[Descriptor], o: &mut [PortSet]| fib.fas_batch(q, Fanout::ALL, o, &mut MatchScratch::new());
    let (one, all) = one_and_all(cfg, q, &w.fas_ref, &fas);
    let tag = |r: Row| with_form(r, fib, extra_tags);
    let mut s = MatchScratch::new();
    let fas_counts = q.iter().map(|q| fib.fas_counted(q, Fanout::ALL, &PortSet::ALL, &mut s).1);
    let fas_row = tag(match_row("fas", w, q.len(), &one, &all, 0))
        .with("fas_order", fib.fas_order().name())
        .with("fas_records", fib.fas_record_check().name());
    let mut rows = vec![with_counts(fas_row, fas_counts, &one, q.len())];
    let weights = w.fls_weights();
    let fls = |q: &[Descriptor], o: &mut [u32]| {
        weights_of(o, |answers| fib.fls_batch(q, answers, &mut MatchScratch::new()));
    };
    let (one, all) = one_and_all(cfg, q, &weights, &fls);
    let mut answers = vec![None; q.len()];
    fib.fls_batch(q, &mut answers, &mut MatchScratch::new());
    let fls_counts = q.iter().map(|q| fib.fls_counted(q, &mut s).1);
    let fls_row = tag(match_row("fls", w, q.len(), &one, &all, invalid_fls(&answers, &w.fls_ref)));
    let fls_row = fls_row.with("fls_order", fib.fls_order().name()).with("fls_batch", fib.fls_batch_order().name());
    rows.push(with_counts(fls_row, fls_counts, &one, q.len()));
    rows
}

/// Into `out`, the weight of each answer `batch` gives (0: none) — what a timed FLS batch is
/// checked by.
pub(super) fn weights_of(out: &mut [u32], batch: impl FnOnce(&mut [Option<Largest>])) {
    let mut answers = vec![None; out.len()];
    batch(&mut answers);
    out.iter_mut().zip(&answers).for_each(|(o, a)| *o = a.map_or(0, |b| b.weight));
}

/// `row` with what names `fib`'s compiled form and the packets' extra tags.
fn with_form(row: Row, fib: &CompiledFib, extra_tags: usize) -> Row {
    row.with("compression", fib.compression().name())
        .with("layout", fib.layout().name())
        .with("sibling_order", fib.sibling_order().name())
        .with("list_scan", if fib.simd() { "avx512" } else { "scalar" })
        .with("extra_tags", extra_tags)
        .with("fib_bytes", fib.memory_bytes())
}

/// FLS on `fib` started, for each packet, from its answer's weight less one as the best so far
/// (sweep `given_best`, [`CompiledFib::fls_above_batch`]): the walk's proof that nothing heavier
/// matches, alone — the most that finding the answer sooner could make FLS gain. With its floor
/// given, the walk has nothing left to find early, so it reads breadth-first from the root
/// ([`FlsOrder::BreadthFirst`]) in every form: the proof at FAS's cost per node. Checked like
/// FLS: each walk must find its answer's weight.
pub(super) fn given_best(cfg: &RunConfig, w: &Workload<'_>, fib: &mut CompiledFib) -> Row {
    let own_order = fib.fls_order();
    fib.set_fls_order(FlsOrder::BreadthFirst);
    let q = &w.queries;
    let weights = w.fls_weights();
    let given: Vec<(Descriptor, u32)> = q.iter().zip(&weights).map(|(d, &weight)| (*d, weight.saturating_sub(1))).collect();
    let fls = |g: &[(Descriptor, u32)], o: &mut [u32]| {
        weights_of(o, |answers| fib.fls_above_batch(g, answers, &mut MatchScratch::new()));
    };
    let (one, all) = one_and_all(cfg, &given, &weights, &fls);
    let mut s = MatchScratch::new();
    let counts = given.iter().map(|(q, floor)| fib.fls_above_counted(q, *floor, &mut s).1);
    let row = with_form(match_row("fls", w, q.len(), &one, &all, 0), fib, 2)
        .with("fls_order", fib.fls_order().name())
        .with("fls_batch", fib.fls_batch_order().name())
        .with("sweep", "given_best");
    let row = with_counts(row, counts, &one, q.len());
    fib.set_fls_order(own_order);
    row
}

/// `row` with what the walks read per match, counted in a separate, untimed pass over the
/// queries ([`WalkCounts`]): lists and nodes, the time per node read (the timed run's, one
/// thread), and for FLS the share of nodes read after its final best match was found (the
/// proof that nothing heavier matches) and, breadth-first after its first match, the share
/// read before it turned breadth-first, the lists read then, and the share of packets whose
/// depth-first part already held a match of the answer's weight.
fn with_counts(row: Row, counts: impl Iterator<Item = WalkCounts>, one: &Outcome, n: usize) -> Row {
    let total = counts.fold(WalkCounts::default(), WalkCounts::plus);
    let per_match = |x: u64| x as f64 / n.max(1) as f64;
    let row = row
        .with("lists_per_match", per_match(total.lists))
        .with("nodes_per_match", per_match(total.nodes))
        .with("ns_per_node", one.ns_per_op(n) / per_match(total.nodes).max(1.0));
    if total.nodes_to_best == 0 {
        return row; // FAS, or nothing matched.
    }
    let row = row.with("nodes_after_best_pct", 100.0 * (total.nodes - total.nodes_to_best) as f64 / total.nodes as f64);
    if total.nodes_depth_first == 0 {
        return row; // FLS depth-first all the way.
    }
    row.with("nodes_depth_first_pct", 100.0 * total.nodes_depth_first as f64 / total.nodes as f64)
        .with("lists_depth_first_per_match", per_match(total.lists_depth_first))
        .with("depth_first_found_answer_pct", 100.0 * per_match(total.depth_first_found_answer))
}

/// A peer: name, queries it answers, bytes, its FAS and its FLS (weights) batch.
type Peer<'a> = (&'a str, usize, usize, Batch<'a, Descriptor, PortSet>, Batch<'a, Descriptor, u32>);

/// Linear-scan and inverted-index rows (the scan on the first `scan_queries` queries), then
/// each of `in_turn` against both peers, measured in turn (sweep `peers_in_turn`): the trie and
/// each peer in one [`compare`] on the peer's packets, every answer checked. Those rows carry
/// the trie's K/s beside the index, on every packet (`kmatches_per_s`), and both ratios
/// (`vs_scan_in_turn`, `vs_index_in_turn`). The main rows set the trie against peer rows
/// measured minutes apart, and this machine's speed drifts between the two by more than some
/// goals' margins; measured in turn, both sides share the drift.
pub(super) fn measure_peers(cfg: &RunConfig, w: &Workload<'_>, scan_queries: usize, in_turn: &[&CompiledFib]) -> Vec<Row> {
    let scan = LinearScan::new(w.entries.iter().map(|(d, p)| (d, p)));
    let inv = w.inverted;
    let weights = w.fls_weights();
    let mut rows = Vec::new();
    let peers: [Peer<'_>; 2] = [
        (
            "linear-scan",
            scan_queries.min(w.queries.len()),
            scan.memory_bytes(),
            &|q, o| q.iter().zip(o).for_each(|(q, o)| *o = scan.fas(q, Fanout::ALL, &PortSet::ALL)),
            &|q, o| q.iter().zip(o).for_each(|(q, o)| *o = scan.fls(q).map_or(0, |b| b.weight)),
        ),
        (
            "inverted-index",
            w.queries.len(),
            inv.memory_bytes(),
            &|q, o| q.iter().zip(o).for_each(|(q, o)| *o = inv.fas(q, Fanout::ALL, &PortSet::ALL)),
            &|q, o| q.iter().zip(o).for_each(|(q, o)| *o = inv.fls(q).map_or(0, |b| b.weight)),
        ),
    ];
    for (system, n, bytes, fas, fls) in peers {
        let q = &w.queries[..n];
        let (one, all) = one_and_all(cfg, q, &w.fas_ref[..n], fas);
        rows.push(match_row(system, w, n, &one, &all, 0).with("match", "fas").with("fib_bytes", bytes).with("extra_tags", 2));
        let (one, all) = one_and_all(cfg, q, &weights[..n], fls);
        rows.push(match_row(system, w, n, &one, &all, 0).with("match", "fls").with("fib_bytes", bytes).with("extra_tags", 2));
    }
    for fib in in_turn {
        let fas = against_peers(
            cfg,
            &w.queries,
            &w.fas_ref,
            &|q, o| fib.fas_batch(q, Fanout::ALL, o, &mut MatchScratch::new()),
            peers.map(|p| (p.1, p.3)),
        );
        let fls = against_peers(
            cfg,
            &w.queries,
            &weights,
            &|q, o| weights_of(o, |a| fib.fls_batch(q, a, &mut MatchScratch::new())),
            peers.map(|p| (p.1, p.4)),
        );
        for (walk, (kmatches_per_s, [vs_scan, vs_index], mismatches)) in [("fas", fas), ("fls", fls)] {
            rows.push(
                with_form(Row::new(walk), fib, 2)
                    .with("fib", w.name.as_str())
                    .with("descriptors", w.entries.len())
                    .with("sweep", "peers_in_turn")
                    .with("queries", w.queries.len())
                    .with("scan_queries", peers[0].1)
                    .with("kmatches_per_s", kmatches_per_s)
                    .with("vs_index_in_turn", vs_index)
                    .with("vs_scan_in_turn", vs_scan)
                    .with("mismatches", mismatches),
            );
        }
    }
    rows
}

/// The `trie` batch against each of `peers` (packets it answers, its batch), each pair in one
/// [`compare`]: the trie's K/s beside the last peer, trie ÷ peer for each, and answers wrong.
fn against_peers<'a, A: Copy + Default + PartialEq>(
    cfg: &RunConfig,
    queries: &'a [Descriptor],
    reference: &[A],
    trie: Batch<'a, Descriptor, A>,
    peers: [(usize, Batch<'a, Descriptor, A>); 2],
) -> (f64, [f64; 2], u64) {
    let contender = |name: &str, f: Batch<'a, Descriptor, A>, n: usize| {
        Contender::new(name, move |out: &mut Vec<A>| {
            out.resize(n, A::default());
            f(&queries[..n], out);
        })
    };
    let (mut kmatches_per_s, mut wrong) = (f64::NAN, 0);
    let ratios = peers.map(|(n, peer)| {
        let o = compare(cfg.reps, &reference[..n], &mut [contender("trie", trie, n), contender("peer", peer, n)]);
        kmatches_per_s = o[0].per_second(n) / 1e3;
        wrong += o[0].mismatches + o[1].mismatches;
        o[1].median_s / o[0].median_s
    });
    (kmatches_per_s, ratios, wrong)
}

pub(super) fn compile(entries: &[(Descriptor, PortSet)], c: Compression, l: Layout) -> anyhow::Result<(CompiledFib, f64)> {
    let (fib, s) = timed(|| CompiledFib::build(entries.iter().copied(), entries.len(), c, l));
    Ok((fib?, s))
}

/// The size of `fib`, compiled from `w` in `build_s` seconds.
pub(super) fn fib_row(w: &Workload<'_>, fib: &CompiledFib, build_s: f64) -> Row {
    size_row(w, fib.compression(), fib.layout(), fib.node_count() as u64, fib.memory_bytes() as u64).with("build_s", build_s)
}

/// A `fib` row: `w`'s FIB in form `c`/`l` takes `nodes` nodes and `bytes` bytes.
fn size_row(w: &Workload<'_>, c: Compression, l: Layout, nodes: u64, bytes: u64) -> Row {
    Row::new("fib")
        .with("fib", w.name.as_str())
        .with("descriptors", w.entries.len())
        .with("compression", c.name())
        .with("layout", l.name())
        .with("nodes", nodes)
        .with("fib_bytes", bytes)
        .with("bytes_per_descriptor", bytes as f64 / w.entries.len() as f64)
}

/// The size of `w`'s FIB uncompressed (none and perm), counted without compiling it
/// ([`CompiledFib::plain_size`]): rows like [`fib_row`]'s with `counted` set, for the 63M FIB,
/// whose uncompressed trie is past the compiled vector's 2^29-node links.
pub(super) fn counted_fib_rows(w: &Workload<'_>) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (c, permuted) in [(Compression::None, false), (Compression::Perm, true)] {
        let (size, count_s) = timed(|| CompiledFib::plain_size(w.entries.iter().copied(), w.entries.len(), permuted));
        let size = size?;
        eprintln!("tagnet: {} {} (counted, not built): {} nodes, {:.1} MB", w.name, c.name(), size.nodes, size.bytes as f64 / 1e6);
        for l in Layout::ALL {
            rows.push(size_row(w, c, l, size.nodes, size.bytes).with("counted", true).with("count_s", count_s));
        }
    }
    Ok(rows)
}
