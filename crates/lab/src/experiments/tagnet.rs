//! Experiment `tagnet`: TagNet forwarding by descriptor (Find All Subsets, Find Largest Subset on
//! the compiled trie) and by locator (Thorup–Zwick), against a SIMD linear scan and an inverted
//! index, reproducing the paper's Figure 9 (memory and time by compression and layout), Figure 10
//! (threads, FIB size) and Table 1 (push/pull traffic mixes).
//!
//! FIBs: Zipf-tagged descriptors (1M, 10M and the paper's 63M — its chain-removed forms
//! measured, its uncompressed size counted — and 100K to 5M for the FIB-size series; quick:
//! 100K) and a CCN-like FIB of real URL names converted to depth-tagged descriptors (10M; quick:
//! 100K); in the `skew` series, FIBs of the largest Zipf size with more skew (an application tag
//! in every descriptor; Zipf(s) tags, s = 1.25 and 1.5) to show what the bit permutation's saving
//! depends on. Packets: FIB descriptors plus up to 2 extra tags (100% matching) unless a row says
//! otherwise (`extra_tags`, `matching_pct`).
//! Every answer is checked against the inverted index (itself checked against the linear scan on
//! the scan's queries and in the property tests): FAS must return exactly the oracle's port
//! union; FLS the oracle's greatest weight and the ports of one entry of that weight.
//!
//! Rows: `system` fas / fls / linear-scan / inverted-index (with `match` fas or fls) for
//! matching, `tz` for locators, `mixed` for traffic mixes (through the engine in bursts, and one
//! by one: `mpps_one_by_one`), `fib` for each compiled FIB's shape.
//! Trie rows say how the walks read lists (`list_scan`: avx512 or scalar); FAS rows in which
//! order (`fas_order`: breadth-first, the default, or depth-first) and when FAS tests chain
//! records (`fas_records`: deferred, the default, or at-once); FLS rows in which order
//! (`fls_order`: breadth-after-first-match, the default, or depth-first) and how a batch's
//! depth-first walks run (`fls_batch`: interleaved, the default on FIBs of
//! `INTERLEAVE_FROM_BYTES` or more, or one-at-a-time, the default on smaller ones; the
//! breadth-after-first-match walks run one after another). Both are timed through their batch
//! calls. Rows of a series name it in `sweep` (`extra_tags`, `matching`, `no_prefetch`,
//! `scalar` — the walks without the AVX-512 list scan, `depth_first` — both walks in the paper's
//! order, `records_at_once` — FAS's chain records not deferred, `one_at_a_time` — depth-first
//! FLS's walks not interleaved, on every FIB size, which plot `fls-batch-by-size` draws,
//! `peers_in_turn` — each
//! walk against each peer in one compare, `descending`, `descending_no_prefetch`,
//! `layouts_in_turn` — SOL and SROL in one compare, under our walks and under the paper's
//! (`walks`: ours or paper), `skew`, `fib_size`).

use nexthop_lookup::tag::{
    parallel, Address, CompiledFib, Compression, Decision, Descriptor, Engine, Fanout, FasOrder, FlsBatchOrder, FlsOrder, ForwardingState,
    Hop, InvertedIndex, Label, Largest, Layout, LinearScan, MatchScratch, PortSet, RecordCheck, SiblingOrder, Tree, TzLabels, WalkCounts,
    INTERLEAVE_FROM_BYTES, NO_PARENT, VARIANTS,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::harness::{compare, timed, Contender, Outcome};
use crate::plot::{Chart, Plot};
use crate::workload::tags::{self as workload, TREES};
use crate::{Report, Row, RunConfig};

/// The `tagnet` experiment.
#[derive(Debug)]
pub struct TagnetExperiment;

/// The paper's packet sizes (section 4.5): push and data 1280 B, first interest 800 B, follow-up
/// interests 100 B.
const PUSH_BYTES: u64 = 1280;
const INTEREST_BYTES: u64 = 800;
const FOLLOW_UP_BYTES: u64 = 100;
const DATA_BYTES: u64 = 1280;
/// Packets per [`Engine::forward_batch`] call in the traffic mixes: a receive burst of VPP's
/// vector size. A burst of the 100%-pull mix holds about 16 anycast packets to interleave; at 64
/// packets, about 4, and the gain over one by one shrank to a few percent on a 10M FIB (a probe).
const BURST: usize = 256;

/// The AS-level topology size the paper labelled.
const AS_NODES: usize = 42_113;
const AS_EDGES: usize = 118_040;

/// One FIB under test with its packet descriptors and their oracle answers.
struct Workload<'a> {
    name: String,
    entries: &'a [(Descriptor, PortSet)],
    inverted: &'a InvertedIndex,
    queries: Vec<Descriptor>,
    fas_ref: Vec<PortSet>,
    fls_ref: Vec<(u32, Vec<PortSet>)>,
}

impl<'a> Workload<'a> {
    fn new(
        cfg: &RunConfig,
        name: String,
        entries: &'a [(Descriptor, PortSet)],
        inverted: &'a InvertedIndex,
        queries: Vec<Descriptor>,
    ) -> Self {
        let (fas_ref, fls_ref) = oracle(cfg, inverted, &queries);
        Workload { name, entries, inverted, queries, fas_ref, fls_ref }
    }

    /// The weight of each packet's heaviest match (0: none), what FLS rows are checked against.
    fn fls_weights(&self) -> Vec<u32> {
        self.fls_ref.iter().map(|r| r.0).collect()
    }

    fn matching_pct(&self) -> f64 {
        100.0 * self.fas_ref.iter().filter(|p| !p.is_empty()).count() as f64 / self.fas_ref.len().max(1) as f64
    }
}

/// The inverted index's FAS and FLS answers for `queries`, over all threads.
fn oracle(cfg: &RunConfig, inverted: &InvertedIndex, queries: &[Descriptor]) -> (Vec<PortSet>, Vec<(u32, Vec<PortSet>)>) {
    let mut fas = vec![PortSet::EMPTY; queries.len()];
    parallel(queries, &mut fas, cfg.threads, |q, o| q.iter().zip(o).for_each(|(q, o)| *o = inverted.fas(q, Fanout::ALL, &PortSet::ALL)));
    let mut fls = vec![(0, Vec::new()); queries.len()];
    parallel(queries, &mut fls, cfg.threads, |q, o| q.iter().zip(o).for_each(|(q, o)| *o = inverted.fls_answers(q)));
    (fas, fls)
}

/// FLS answers that are not one the oracle allows.
fn invalid_fls(answers: &[Option<Largest>], reference: &[(u32, Vec<PortSet>)]) -> u64 {
    answers
        .iter()
        .zip(reference)
        .filter(|(a, (w, sets))| match a {
            None => !sets.is_empty(),
            Some(b) => b.weight != *w || !sets.contains(&b.ports),
        })
        .count() as u64
}

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
fn measure_trie(cfg: &RunConfig, w: &Workload<'_>, fib: &CompiledFib, extra_tags: usize) -> Vec<Row> {
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
fn weights_of(out: &mut [u32], batch: impl FnOnce(&mut [Option<Largest>])) {
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
fn given_best(cfg: &RunConfig, w: &Workload<'_>, fib: &mut CompiledFib) -> Row {
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
fn measure_peers(cfg: &RunConfig, w: &Workload<'_>, scan_queries: usize, in_turn: &[&CompiledFib]) -> Vec<Row> {
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

fn compile(entries: &[(Descriptor, PortSet)], c: Compression, l: Layout) -> anyhow::Result<(CompiledFib, f64)> {
    let (fib, s) = timed(|| CompiledFib::build(entries.iter().copied(), entries.len(), c, l));
    Ok((fib?, s))
}

/// The size of `fib`, compiled from `w` in `build_s` seconds.
fn fib_row(w: &Workload<'_>, fib: &CompiledFib, build_s: f64) -> Row {
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
fn counted_fib_rows(w: &Workload<'_>) -> anyhow::Result<Vec<Row>> {
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

/// The paper's largest FIB size (quick: 200K, to run the same code).
fn largest_size(cfg: &RunConfig) -> usize {
    if cfg.quick {
        200_000
    } else {
        63_000_000
    }
}

/// The forms measured at [`largest_size`]: those whose trie fits the compiled vector at 63M.
/// (the same forms as [`LAYOUT_FIBS`], kept after the build for their layouts in turn).
const LARGEST_FORMS: [(Compression, Layout); 4] = LAYOUT_FIBS;

/// Shares of packets drawn from the FIB in the matching-rate sweep (Figure 7; 100% is the main
/// measurement).
const MATCHING_RATES: [f64; 4] = [0.0, 0.25, 0.5, 0.75];

/// Tag-popularity exponents of the skew series' Zipf(s) FIBs (the main Zipf FIB is s ≈ 1).
const SKEW_EXPONENTS: [f64; 2] = [1.25, 1.5];

/// How much the bit permutation saves as popularity gets more skewed: the largest Zipf FIB's
/// recipe with an application tag in every descriptor ([`workload::apps_fib`]) and with tags
/// Zipf(s) for each of [`SKEW_EXPONENTS`] ([`workload::zipf_s_fib`]), each compiled without
/// compression, permuted, and with chains removed (SROL) and checked like the main FIBs.
fn skew(cfg: &RunConfig, n: usize, n_q: usize) -> anyhow::Result<Vec<Row>> {
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

/// The fastest compiled form: it runs the engine, the sweeps and the FIB-size series.
const BEST_FIB: (Compression, Layout) = (Compression::RareChain, Layout::Srol);
/// The paper's own compiled form, swept beside [`BEST_FIB`] (Figures 7 and 8).
const PAPER_FIB: (Compression, Layout) = (Compression::PermChain, Layout::Srol);
/// The forms kept after [`variants`]: both layouts of the paper's form and of the fastest,
/// their SOL and SROL measured in turn on every main FIB ([`layouts_in_turn`]); on the largest
/// Zipf FIB also measured again without prefetch and the like, then the SROL two
/// ([`PAPER_FIB`], [`BEST_FIB`], in that order) swept.
const LAYOUT_FIBS: [(Compression, Layout); 4] =
    [(Compression::PermChain, Layout::Sol), PAPER_FIB, (Compression::RareChain, Layout::Sol), BEST_FIB];

/// Every compression × layout on `w` (Figure 9), returning the rows and the FIBs compiled as
/// `keep` asks, in its order.
fn variants(cfg: &RunConfig, w: &Workload<'_>, keep: &[(Compression, Layout)]) -> anyhow::Result<(Vec<Row>, Vec<CompiledFib>)> {
    variants_of(cfg, w, &VARIANTS, keep)
}

/// [`variants`] over the forms `forms` alone.
fn variants_of(
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
fn sweeps(cfg: &RunConfig, w: &Workload<'_>, fibs: &[CompiledFib], n: usize) -> anyhow::Result<Vec<Row>> {
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
fn without_prefetch(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "no_prefetch", |fib, on| {
        fib.set_prefetch(on);
        true
    })
}

/// FAS/FLS on `fibs` with the walks reading sibling lists node by node instead of eight nodes
/// per AVX-512 scan (sweep `scalar`): what the scan gives. Nothing where this CPU has no
/// AVX-512F (the main rows are then node by node, `list_scan` says so).
fn without_simd(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "scalar", CompiledFib::set_simd)
}

/// FAS/FLS on `fibs` with both walks depth-first, the paper's order (sweep `depth_first`): FAS
/// reading the list it pushed last first, each prefetched as it is pushed, and FLS depth-first
/// to its end, its batches as the FIB's size picks. What the default orders give: FAS
/// [breadth-first, prefetching 32 steps ahead](nexthop_lookup::tag::FasOrder), FLS
/// [breadth-first after its first match, or from the root](nexthop_lookup::tag::FlsOrder) as
/// the FIB's compression picks.
fn depth_first(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
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
fn other_fls_order(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
    switched_off(cfg, w, fibs, "other_fls_order", |fib, on| {
        let default = FlsOrder::for_compression(fib.compression());
        fib.set_fls_order(if on { default } else { other_breadth_first(default) });
        true
    })
}

/// The other of FLS's two breadth-first orders (from the root, after the first match).
fn other_breadth_first(order: FlsOrder) -> FlsOrder {
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
fn one_at_a_time(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
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
fn records_at_once(cfg: &RunConfig, w: &Workload<'_>, fibs: &mut [CompiledFib]) -> Vec<Row> {
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
fn on_and_off(
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
fn descending_lists(cfg: &RunConfig, w: &Workload<'_>) -> anyhow::Result<Vec<Row>> {
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

/// The chain-removed compressions: the paper's and ours.
const CHAIN_REMOVED: [Compression; 2] = [Compression::PermChain, Compression::RareChain];

/// SOL and SROL of each chain-removed form compiled with descending lists and walked as the
/// paper walks ([`walk_as_the_paper`]), measured in turn ([`layouts_in_turn`]): Figure 9c's
/// comparison, under its conditions, one compression at a time (two FIBs in memory).
fn paper_layouts_in_turn(cfg: &RunConfig, w: &Workload<'_>) -> anyhow::Result<Vec<Row>> {
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
fn walk_as_the_paper(fib: &mut CompiledFib) {
    fib.set_prefetch(false);
    fib.set_fas_order(FasOrder::DepthFirst);
    fib.set_fls_order(FlsOrder::DepthFirst);
    fib.set_fls_batch_order(FlsBatchOrder::OneAtATime);
}

/// [`layouts_in_turn`]'s `walks` for FIBs walked as nexthop walks them by default.
const OUR_WALKS: &str = "ours";
/// [`layouts_in_turn`]'s `walks` for FIBs walked as the paper does ([`walk_as_the_paper`]).
const PAPER_WALKS: &str = "paper";

/// SOL against SROL, measured in turn (sweep `layouts_in_turn`): for each compression among
/// `fibs` compiled in both layouts, FAS on the two in one [`compare`], then FLS, on the same
/// packets, every answer checked. `walks` says how the FIBs were set to walk: [`OUR_WALKS`] or
/// [`PAPER_WALKS`]. A row carries each layout's K/s and `srol_over_sol`. The main and series
/// rows set SOL against SROL measured minutes apart, and on the AMD EPYC this machine's speed
/// drifted between the two by more than the layouts differ; measured in turn, both share the
/// drift.
fn layouts_in_turn(cfg: &RunConfig, w: &Workload<'_>, fibs: &[CompiledFib], walks: &str) -> Vec<Row> {
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

/// The locator side on the AS-like graph: label sizes, delivery on random pairs, ns per forward.
struct Locators {
    trees: Vec<Tree>,
    labels: Vec<TzLabels>,
    router: u32,
}

fn locators(cfg: &RunConfig, rows: &mut Vec<Row>) -> anyhow::Result<Locators> {
    let (nodes, edges) = if cfg.quick { (AS_NODES / 8, AS_EDGES / 8) } else { (AS_NODES, AS_EDGES) };
    let graph = workload::as_graph(nodes, edges, 0x7a);
    // One BFS tree per tree id, rooted at the best-connected nodes (as roots of routing trees).
    let mut by_degree: Vec<u32> = (0..nodes as u32).collect();
    by_degree.sort_by_key(|&v| std::cmp::Reverse(graph[v as usize].len()));
    let mut trees = Vec::new();
    let mut labels = Vec::new();
    for (t, &root) in by_degree.iter().take(usize::from(TREES)).enumerate() {
        // Delivery: random pairs walked hop by hop, each hop checked against the tree path.
        let mut rng = SmallRng::seed_from_u64(0x5eed + t as u64);
        let pairs = if cfg.quick { 20_000 } else { 200_000 };
        let pairs = (0..pairs).map(|_| (rng.gen_range(0..nodes as u32), rng.gen_range(0..nodes as u32)));
        let (row, tree, l) = label_tree("preferential-attachment", &graph, root, pairs)?;
        rows.push(row.with("tree", t));
        trees.push(tree);
        labels.push(l);
    }
    // The router measured: a node of middling degree (not a hub, not a leaf).
    let router = by_degree[nodes / 20];
    rows.push(forward_speed(cfg, &trees[0], &labels[0], router));
    Ok(Locators { trees, labels, router })
}

/// Walks every (source, destination) pair hop by hop with TZ forwarding, checking each hop
/// against the tree path: (pairs tried, pairs delivered with every hop right).
fn deliver(tree: &Tree, l: &TzLabels, pairs: impl Iterator<Item = (u32, u32)>) -> (u64, u64) {
    let (mut tried, mut delivered) = (0u64, 0u64);
    for (s, d) in pairs {
        tried += 1;
        let mut at = s;
        for _ in 0..=tree.len() {
            match l.router(at).forward(&l.label(d)) {
                Ok(Hop::Deliver) => {
                    delivered += u64::from(at == d);
                    break;
                }
                Ok(Hop::Interface(i)) => {
                    let next = l.neighbor(at, i);
                    if next != Some(next_on_path(tree, at, d)) {
                        break;
                    }
                    at = next.unwrap_or(at);
                }
                Err(_) => break,
            }
        }
    }
    (tried, delivered)
}

/// Labels the BFS tree of `graph` from `root` and walks `pairs` over it: the row of label sizes
/// and deliveries, the tree and its labels.
fn label_tree(
    topology: &str,
    graph: &[Vec<u32>],
    root: u32,
    pairs: impl Iterator<Item = (u32, u32)>,
) -> anyhow::Result<(Row, Tree, TzLabels)> {
    let nodes = graph.len() as u32;
    let tree = Tree::bfs(graph, root)?;
    let (l, label_s) = timed(|| TzLabels::build(&tree));
    let l = l?;
    let bits: Vec<u32> = (0..nodes).map(|v| l.label_bits(v)).collect();
    let (tried, delivered) = deliver(&tree, &l, pairs);
    let row = Row::new("tz")
        .with("topology", topology)
        .with("nodes", nodes as usize)
        .with("edges", graph.iter().map(Vec::len).sum::<usize>() / 2)
        .with("root_degree", graph[root as usize].len())
        .with("label_bits_max", bits.iter().copied().max().unwrap_or(0))
        .with("label_bits_mean", bits.iter().map(|&b| f64::from(b)).sum::<f64>() / f64::from(nodes.max(1)))
        .with("label_bits_bound", 3.4 * f64::from(nodes.max(2)).log2())
        .with("label_s", label_s)
        .with("pairs", tried)
        .with("delivered", delivered)
        .with("mismatches", tried - delivered);
    Ok((row, tree, l))
}

/// TZ on real topologies: the CAIDA per-AS topologies `topohub` ships (quick: the 8 largest). On
/// each, the BFS tree from its best-connected node, its labels, and every ordered pair of nodes
/// delivered hop by hop (quick: up to 20,000 pairs), each hop checked against the tree path.
fn real_locators(cfg: &RunConfig) -> anyhow::Result<Vec<Row>> {
    let dir = crate::workload::topologies::topohub_dir()?;
    let mut topologies = crate::workload::topologies::load_set(&dir, crate::workload::topologies::CAIDA)?;
    if cfg.quick {
        topologies.truncate(8);
    }
    let mut rows = Vec::new();
    for topo in &topologies {
        let nodes = topo.adjacency.len() as u64;
        let root = (0..nodes as u32).max_by_key(|&v| topo.adjacency[v as usize].len()).unwrap_or(0);
        let all = nodes * nodes;
        let step = if cfg.quick { all.div_ceil(20_000).max(1) } else { 1 };
        let pairs = (0..all).step_by(step as usize).map(|k| ((k / nodes) as u32, (k % nodes) as u32));
        rows.push(label_tree(&topo.name, &topo.adjacency, root, pairs)?.0);
    }
    Ok(rows)
}

/// The node after `at` on the tree path to `dest` (`at` itself when they are equal).
fn next_on_path(tree: &Tree, at: u32, dest: u32) -> u32 {
    let mut v = dest;
    while v != at {
        let p = tree.parent(v);
        if p == at {
            return v;
        }
        if p == NO_PARENT {
            return tree.parent(at);
        }
        v = p;
    }
    at
}

/// Neighbour → the interface of `router` that leads to it.
fn interfaces_of(labels: &TzLabels, router: u32) -> hashbrown::HashMap<u32, u16> {
    (0..labels.interfaces(router)).filter_map(|i| labels.neighbor(router, i).map(|v| (v, i))).collect()
}

/// ns per TZ forward at one router over random destinations, checked against the tree path.
fn forward_speed(cfg: &RunConfig, tree: &Tree, labels: &TzLabels, router: u32) -> Row {
    const DELIVER: u32 = u32::MAX - 1;
    const ERROR: u32 = u32::MAX;
    // Destinations as a router sees them: in a header just received, so in cache — 64K labels
    // (1.5 MB) forwarded `passes` times per repetition.
    let n = 1 << 16;
    let passes = if cfg.quick { 4 } else { 64 };
    let mut rng = SmallRng::seed_from_u64(0xf0);
    let dest_nodes: Vec<u32> = (0..n).map(|_| rng.gen_range(0..labels.len() as u32)).collect();
    let dests: Vec<Label> = dest_nodes.iter().map(|&v| labels.label(v)).collect();
    let interface_of = interfaces_of(labels, router);
    let reference: Vec<u32> = dest_nodes
        .iter()
        .map(|&d| if d == router { DELIVER } else { interface_of.get(&next_on_path(tree, router, d)).map_or(ERROR, |&i| u32::from(i)) })
        .collect();
    let r = *labels.router(router);
    let mut contenders = vec![Contender::new("tz", |out: &mut Vec<u32>| {
        out.resize(n, 0);
        for _ in 0..passes {
            for (d, o) in dests.iter().zip(out.iter_mut()) {
                *o = match r.forward(d) {
                    Ok(Hop::Interface(i)) => u32::from(i),
                    Ok(Hop::Deliver) => DELIVER,
                    Err(_) => ERROR,
                };
            }
        }
    })];
    let o = compare(cfg.reps, &reference, &mut contenders);
    Row::new("tz")
        .with("topology", "preferential-attachment")
        .with("nodes", labels.len())
        .with("router", router)
        .with("router_interfaces", labels.interfaces(router))
        .with("forwards", n * passes)
        .with("ns_per_forward", o[0].ns_per_op(n * passes))
        .with("mismatches", o[0].mismatches)
}

/// The paper's Table 1: push/pull mixes through the whole engine (header parse, dispatch, match
/// or TZ), at `router` on each tree, in bursts of [`BURST`] packets and, in the same compare,
/// one by one.
fn mixed(cfg: &RunConfig, w: &Workload<'_>, fib: CompiledFib, loc: &Locators) -> Vec<Row> {
    let routers = loc.labels.iter().map(|l| *l.router(loc.router)).collect();
    let state = ForwardingState { fib, tree_ports: (0..TREES).map(workload::tree_ports).collect(), routers };
    let interface_of: Vec<_> = loc.labels.iter().map(|l| interfaces_of(l, loc.router)).collect();
    let flows = if cfg.quick { 400 } else { 3000 };
    let max_follow_up = 15;
    let mut rows = Vec::new();
    for pull_pct in [0u32, 20, 40, 60, 80, 100] {
        let mut rng = SmallRng::seed_from_u64(0x7ab1 + u64::from(pull_pct));
        let mut packets: Vec<Vec<u8>> = Vec::new();
        let mut expect: Vec<Expect> = Vec::new();
        let mut bytes = 0u64;
        for _ in 0..flows {
            let qi = rng.gen_range(0..w.queries.len());
            let tree = rng.gen_range(0..TREES);
            let tree_ports = &state.tree_ports[usize::from(tree)];
            let pull = rng.gen_range(0..100) < pull_pct;
            let fanout = if pull { Fanout::new(1).unwrap_or(Fanout::ALL) } else { Fanout::ALL };
            packets.push(header(Address::Descriptor { descriptor: w.queries[qi], fanout, tree: u16::from(tree) }));
            if pull {
                bytes += INTEREST_BYTES;
                expect.push(Expect::Fls(qi, *tree_ports));
                for _ in 0..rng.gen_range(0..=max_follow_up) {
                    for size in [FOLLOW_UP_BYTES, DATA_BYTES] {
                        let t = rng.gen_range(0..TREES);
                        let (tz_tree, l) = (&loc.trees[usize::from(t)], &loc.labels[usize::from(t)]);
                        let dest = rng.gen_range(0..l.len() as u32);
                        packets.push(header(Address::Locator { tree: u16::from(t), label: l.label(dest) }));
                        bytes += size;
                        expect.push(if dest == loc.router {
                            Expect::Exact(Some(Decision::Deliver))
                        } else {
                            let next = next_on_path(tz_tree, loc.router, dest);
                            Expect::Exact(
                                interface_of[usize::from(t)]
                                    .get(&next)
                                    .map(|&interface| Decision::Interface { tree: u16::from(t), interface }),
                            )
                        });
                    }
                }
            } else {
                bytes += PUSH_BYTES;
                let ports = w.fas_ref[qi].intersection(tree_ports);
                expect.push(Expect::Exact((!ports.is_empty()).then_some(Decision::Ports(ports))));
            }
        }
        // The reference: exact decisions; for an FLS packet, the ports on its tree of the entry
        // FLS chose (a drop when it has none there) — if that entry is one of the heaviest
        // matches the oracle knows, else a sentinel no answer equals.
        let reference: Vec<Option<Decision>> = expect
            .iter()
            .map(|e| match e {
                Expect::Exact(d) => *d,
                Expect::Fls(qi, tree_ports) => {
                    let (weight, sets) = &w.fls_ref[*qi];
                    let chosen = state.fib.fls(&w.queries[*qi], &mut MatchScratch::new());
                    let valid = match chosen {
                        None => sets.is_empty(),
                        Some(b) => b.weight == *weight && sets.contains(&b.ports),
                    };
                    let on_tree = chosen.map(|b| b.ports.intersection(tree_ports)).filter(|p| !p.is_empty()).map(Decision::Ports);
                    if valid {
                        on_tree
                    } else {
                        Some(Decision::Ports(PortSet::EMPTY))
                    }
                }
            })
            .collect();
        let n = packets.len();
        let threads = cfg.threads;
        let bursts = |p: &[Vec<u8>], o: &mut [Option<Decision>]| {
            let mut e = Engine::new(&state);
            p.chunks(BURST).zip(o.chunks_mut(BURST)).for_each(|(p, o)| e.forward_batch(p, o));
        };
        let one_by_one = |p: &[Vec<u8>], o: &mut [Option<Decision>]| {
            let mut e = Engine::new(&state);
            p.iter().zip(o).for_each(|(p, o)| *o = e.forward(p));
        };
        let mut contenders = vec![
            Contender::new("1", |out: &mut Vec<Option<Decision>>| {
                out.resize(n, None);
                bursts(&packets, out);
            }),
            Contender::new("all", |out: &mut Vec<Option<Decision>>| {
                out.resize(n, None);
                parallel(&packets, out, threads, bursts);
            }),
            Contender::new("1 one by one", |out: &mut Vec<Option<Decision>>| {
                out.resize(n, None);
                one_by_one(&packets, out);
            }),
        ];
        let o = compare(cfg.reps, &reference, &mut contenders);
        let avg = bytes as f64 / n as f64;
        let [mpps, mpps_all, mpps_one_by_one] = [0, 1, 2].map(|i| o[i].per_second(n) / 1e6);
        rows.push(
            Row::new("mixed")
                .with("fib", w.name.as_str())
                .with("descriptors", w.entries.len())
                .with("pull_pct", pull_pct)
                .with("max_follow_up", max_follow_up)
                .with("packets", n)
                .with("burst", BURST)
                .with("avg_packet_bytes", avg)
                .with("mpps", mpps)
                .with("mpps_all_threads", mpps_all)
                .with("mpps_one_by_one", mpps_one_by_one)
                .with("gbps", mpps * avg * 8.0 / 1e3)
                .with("gbps_all_threads", mpps_all * avg * 8.0 / 1e3)
                .with("mismatches", o.iter().map(|o| o.mismatches).max().unwrap_or(0)),
        );
    }
    rows
}

/// What a mixed-traffic packet must get.
enum Expect {
    /// Exactly this decision (FAS and TZ packets).
    Exact(Option<Decision>),
    /// An FLS answer the oracle allows for query `.0`, on the tree with ports `.1`.
    Fls(usize, PortSet),
}

fn header(a: Address) -> Vec<u8> {
    let mut v = Vec::with_capacity(32);
    a.encode(&mut v);
    v
}

impl crate::Experiment for TagnetExperiment {
    fn name(&self) -> &'static str {
        "tagnet"
    }

    fn about(&self) -> &'static str {
        "TagNet: FAS/FLS subset matching on the compressed trie vs linear scan and inverted index; TZ locators; push/pull mixes"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let mut rows = Vec::new();
        let loc = locators(cfg, &mut rows)?;
        rows.extend(real_locators(cfg)?);
        let (zipf_sizes, ccn_size, n_q, scan_q): (&[usize], usize, usize, usize) =
            if cfg.quick { (&[100_000], 100_000, 2_000, 200) } else { (&[1_000_000, 10_000_000], 10_000_000, 2_000, 50) };
        for (i, &n) in zipf_sizes.iter().enumerate() {
            let (entries, inverted, queries) = zipf_inputs(n, n_q);
            let w = Workload::new(cfg, format!("zipf-{}", size_label(n)), &entries, &inverted, queries);
            let largest = i + 1 == zipf_sizes.len();
            let (r, mut fibs) = variants(cfg, &w, &LAYOUT_FIBS)?;
            rows.extend(r);
            rows.extend(layouts_in_turn(cfg, &w, &fibs, OUR_WALKS));
            rows.extend(other_fls_order(cfg, &w, &mut fibs));
            if !largest {
                rows.extend(paper_layouts_in_turn(cfg, &w)?);
                fibs.retain(|f| (f.compression(), f.layout()) == BEST_FIB);
            }
            // The goals' ratios, measured in turn, on the largest size's SROL forms.
            let in_turn: Vec<&CompiledFib> = fibs.iter().filter(|f| largest && f.layout() == Layout::Srol).collect();
            rows.extend(measure_peers(cfg, &w, scan_q, &in_turn));
            rows.extend(one_at_a_time(cfg, &w, &mut fibs));
            rows.extend(records_at_once(cfg, &w, &mut fibs));
            if largest {
                rows.extend(without_prefetch(cfg, &w, &mut fibs));
                rows.extend(without_simd(cfg, &w, &mut fibs));
                rows.extend(depth_first(cfg, &w, &mut fibs));
                rows.extend(descending_lists(cfg, &w)?);
                // The sweeps run on the paper's form and the fastest (SROL both).
                fibs.retain(|f| f.layout() == Layout::Srol);
                rows.extend(sweeps(cfg, &w, &fibs, n_q)?);
            }
            if let Some(best) = fibs.pop() {
                rows.extend(mixed(cfg, &w, best, &loc));
            }
        }
        {
            let (entries, queries) = workload::ccn_fib(ccn_size, n_q, 0xcc)?;
            let inverted = InvertedIndex::new(entries.iter().map(|(d, p)| (d, p)));
            let w = Workload::new(cfg, format!("ccn-{}", size_label(ccn_size)), &entries, &inverted, queries);
            let (r, mut fibs) = variants(cfg, &w, &LAYOUT_FIBS)?;
            rows.extend(r);
            rows.extend(measure_peers(cfg, &w, scan_q, &fibs.iter().filter(|f| f.layout() == Layout::Srol).collect::<Vec<_>>()));
            rows.extend(layouts_in_turn(cfg, &w, &fibs, OUR_WALKS));
            rows.extend(paper_layouts_in_turn(cfg, &w)?);
            rows.extend(other_fls_order(cfg, &w, &mut fibs));
            fibs.retain(|f| (f.compression(), f.layout()) == BEST_FIB);
            rows.extend(without_simd(cfg, &w, &mut fibs));
            rows.extend(depth_first(cfg, &w, &mut fibs));
            rows.extend(one_at_a_time(cfg, &w, &mut fibs));
            rows.extend(records_at_once(cfg, &w, &mut fibs));
            if let Some(best) = fibs.pop() {
                rows.extend(mixed(cfg, &w, best, &loc));
            }
        }
        rows.extend(skew(cfg, zipf_sizes[zipf_sizes.len() - 1], n_q)?);
        {
            // The paper's 63M FIB (Figures 9a and 9c): its chain-removed forms compiled and
            // measured as above, less the peers; its uncompressed forms, about a billion nodes,
            // counted (see `counted_fib_rows`).
            let n = largest_size(cfg);
            let (entries, inverted, queries) = zipf_inputs(n, n_q);
            let w = Workload::new(cfg, format!("zipf-{}", size_label(n)), &entries, &inverted, queries);
            rows.extend(counted_fib_rows(&w)?);
            let (r, fibs) = variants_of(cfg, &w, &LARGEST_FORMS, &LARGEST_FORMS)?;
            rows.extend(r);
            rows.extend(layouts_in_turn(cfg, &w, &fibs, OUR_WALKS));
            drop(fibs);
            rows.extend(paper_layouts_in_turn(cfg, &w)?);
        }
        // Figure 10c: FIB size, rare+chain/SROL (with the main rows' 1M, 10M and 63M); at each
        // size, what interleaving FLS batches gives (plot `fls-batch-by-size`, which sets
        // `INTERLEAVE_FROM_BYTES`).
        let sizes: &[usize] = if cfg.quick { &[25_000, 50_000] } else { &[100_000, 300_000, 500_000, 700_000, 2_500_000, 5_000_000] };
        for &n in sizes {
            let (entries, inverted, queries) = zipf_inputs(n, n_q);
            let w = Workload::new(cfg, format!("zipf-{}", size_label(n)), &entries, &inverted, queries);
            let (fib, build_s) = compile(w.entries, BEST_FIB.0, BEST_FIB.1)?;
            rows.extend(measure_trie(cfg, &w, &fib, 2).into_iter().map(|r| r.with("sweep", "fib_size").with("build_s", build_s)));
            rows.extend(one_at_a_time(cfg, &w, &mut [fib]));
        }
        Ok(Report { plots: plots(&rows), summary: summary(&rows), rows })
    }
}

/// The Zipf FIB of `n` descriptors, its inverted index (the oracle and a peer), and `n_q`
/// packets drawn from it with up to 2 extra tags.
fn zipf_inputs(n: usize, n_q: usize) -> (Vec<(Descriptor, PortSet)>, InvertedIndex, Vec<Descriptor>) {
    let entries = workload::zipf_fib(n, 0x2a + n as u64);
    let inverted = InvertedIndex::new(entries.iter().map(|(d, p)| (d, p)));
    let queries = workload::queries(&entries, n_q, 2, 0x51);
    (entries, inverted, queries)
}

fn size_label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(100_000) {
        format!("{}m", n as f64 / 1e6)
    } else {
        format!("{}k", n / 1000)
    }
}

/// Rows of `system` on `fib` with every (key, value) string field equal.
fn find<'a>(rows: &'a [Row], system: &str, fib: &str, fields: &[(&str, &str)]) -> Option<&'a Row> {
    find_in(rows, None, system, fib, fields)
}

/// [`find`] among the rows of sweep `sweep` (`None`: the main rows).
fn find_in<'a>(rows: &'a [Row], sweep: Option<&str>, system: &str, fib: &str, fields: &[(&str, &str)]) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.str("system") == Some(system)
            && r.str("fib") == Some(fib)
            && r.str("sweep") == sweep
            && fields.iter().all(|(k, v)| r.str(k) == Some(v))
    })
}

fn num(r: Option<&Row>, key: &str) -> f64 {
    r.and_then(|r| r.num(key)).unwrap_or(f64::NAN)
}

/// K matches/s of walk `alg` on `fib` compiled as (`compression`, `layout`), in sweep `sweep`.
fn form_speed(rows: &[Row], sweep: Option<&str>, alg: &str, fib: &str, compression: &str, layout: &str) -> f64 {
    num(find_in(rows, sweep, alg, fib, &[("compression", compression), ("layout", layout)]), "kmatches_per_s")
}

/// How much faster walk `alg` ran with SROL than with SOL on `fib`'s `compression`, in `sweep`.
fn srol_over_sol(rows: &[Row], sweep: Option<&str>, alg: &str, fib: &str, compression: &str) -> f64 {
    form_speed(rows, sweep, alg, fib, compression, "srol") / form_speed(rows, sweep, alg, fib, compression, "sol")
}

/// SROL ÷ SOL of walk `alg` on `fib`'s `compression`, the two measured in turn with the walks
/// set as `walks` says ([`layouts_in_turn`]).
fn layouts_in_turn_ratio(rows: &[Row], alg: &str, fib: &str, compression: &str, walks: &str) -> f64 {
    num(find_in(rows, Some("layouts_in_turn"), alg, fib, &[("compression", compression), ("walks", walks)]), "srol_over_sol")
}

fn fib_names(rows: &[Row]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.str("system") == Some("fib") && r.str("sweep").is_none()) {
        if let Some(f) = r.str("fib").filter(|f| !names.iter().any(|n| n == f)) {
            names.push(f.to_string());
        }
    }
    names
}

const BEST: [(&str, &str); 2] = [("compression", "rare+chain"), ("layout", "srol")];
const PAPER: [(&str, &str); 2] = [("compression", "perm+chain"), ("layout", "srol")];

fn plots(rows: &[Row]) -> Vec<Plot> {
    let fibs = fib_names(rows);
    let comps = ["none", "perm", "perm+chain", "rare+chain"];
    let mut plots = vec![Plot {
        file_tag: "memory".into(),
        // Per descriptor, so that FIBs of 1M to 63M share one scale.
        title: "Figure 9a: compiled FIB size by compression (bytes per descriptor; 63M none and perm counted)".into(),
        y_label: "bytes per descriptor".into(),
        chart: Chart::Bars {
            groups: fibs.clone(),
            series: comps
                .iter()
                .map(|c| {
                    (
                        c.to_string(),
                        fibs.iter()
                            .map(|f| num(find(rows, "fib", f, &[("compression", c), ("layout", "srol")]), "bytes_per_descriptor"))
                            .collect(),
                    )
                })
                .collect(),
        },
    }];
    let alg_groups: Vec<(String, String, &str)> =
        fibs.iter().flat_map(|f| ["fas", "fls"].map(|a| (format!("{f} {a}"), f.clone(), a))).collect();
    let labels: Vec<String> = alg_groups.iter().map(|g| g.0.clone()).collect();
    plots.push(Plot {
        file_tag: "compression-time".into(),
        title: "Figure 9b: µs per match by compression (SROL, 1 thread)".into(),
        y_label: "µs per match".into(),
        chart: Chart::Bars {
            groups: labels.clone(),
            series: comps
                .iter()
                .map(|c| {
                    (
                        c.to_string(),
                        alg_groups
                            .iter()
                            .map(|(_, f, a)| num(find(rows, a, f, &[("compression", c), ("layout", "srol")]), "us_per_match"))
                            .collect(),
                    )
                })
                .collect(),
        },
    });
    // Every form measured (at 63M the uncompressed ones are counted, not built).
    let forms: Vec<(String, String, &str, &str)> = fibs
        .iter()
        .flat_map(|f| comps.iter().flat_map(move |&c| ["sol", "srol"].map(|l| (format!("{f} {c} {l}"), f.clone(), c, l))))
        .filter(|(_, f, c, l)| fls_over_fas(rows, f, c, l, None).is_finite())
        .collect();
    plots.push(Plot {
        file_tag: "given-best".into(),
        title: "FLS throughput ÷ FAS: measured, and given each answer's weight − 1 (the proof alone; 1 thread)".into(),
        y_label: "FLS ÷ FAS".into(),
        chart: Chart::Bars {
            groups: forms.iter().map(|g| g.0.clone()).collect(),
            series: [("measured", None), ("given the answer's weight − 1", Some("given_best"))]
                .iter()
                .map(|&(name, sweep)| (name.to_string(), forms.iter().map(|(_, f, c, l)| fls_over_fas(rows, f, c, l, sweep)).collect()))
                .collect(),
        },
    });
    plots.push(Plot {
        file_tag: "layout".into(),
        title: "Figure 9c: µs per match, SOL vs SROL (1 thread)".into(),
        y_label: "µs per match".into(),
        chart: Chart::Bars {
            groups: labels.clone(),
            series: ["sol", "srol"]
                .iter()
                .map(|l| {
                    (
                        l.to_string(),
                        alg_groups
                            .iter()
                            .map(|(_, f, a)| num(find(rows, a, f, &[("compression", "perm+chain"), ("layout", l)]), "us_per_match"))
                            .collect(),
                    )
                })
                .collect(),
        },
    });
    if let Some(f) = rows.iter().find(|r| r.str("sweep") == Some("descending_no_prefetch")).and_then(|r| r.str("fib")) {
        // SROL ÷ SOL under each walk condition the layout series measure, on their FIB: each
        // layout's rows measured minutes apart, then the two measured in turn.
        let walks: Vec<(String, &str, &str)> =
            CHAIN_REMOVED.map(Compression::name).into_iter().flat_map(|c| ["fas", "fls"].map(|a| (format!("{f} {c} {a}"), c, a))).collect();
        let apart = |sweep: Option<&str>| walks.iter().map(|&(_, c, a)| srol_over_sol(rows, sweep, a, f, c)).collect();
        let in_turn = |by: &str| walks.iter().map(|&(_, c, a)| layouts_in_turn_ratio(rows, a, f, c, by)).collect();
        let series = vec![
            ("ours (ascending, prefetch)".to_string(), apart(None)),
            ("ours, in turn".to_string(), in_turn(OUR_WALKS)),
            ("no prefetch".to_string(), apart(Some("no_prefetch"))),
            ("descending".to_string(), apart(Some("descending"))),
            ("the paper's walks, descending, no prefetch".to_string(), apart(Some("descending_no_prefetch"))),
            ("the paper's walks, in turn".to_string(), in_turn(PAPER_WALKS)),
        ];
        plots.push(Plot {
            file_tag: "layout-conditions".into(),
            title: "SROL ÷ SOL (matches/s, 1 thread) by how the walks run: ours, and the paper's".into(),
            y_label: "SROL ÷ SOL".into(),
            chart: Chart::Bars { groups: walks.iter().map(|w| w.0.clone()).collect(), series },
        });
    }
    let groups: Vec<(String, String, &str, &str)> = fib_names(rows)
        .into_iter()
        .flat_map(|f| CHAIN_REMOVED.map(Compression::name).into_iter().flat_map(move |c| ["fas", "fls"].map(|a| (f.clone(), c, a))))
        .map(|(f, c, a)| (format!("{f} {c} {a}"), f, c, a))
        .filter(|(_, f, c, a)| layouts_in_turn_ratio(rows, a, f, c, OUR_WALKS).is_finite())
        .collect();
    if !groups.is_empty() {
        let series = [(OUR_WALKS, "our walks"), (PAPER_WALKS, "the paper's walks (descending, no prefetch)")]
            .map(|(by, name)| (name.to_string(), groups.iter().map(|(_, f, c, a)| layouts_in_turn_ratio(rows, a, f, c, by)).collect()));
        plots.push(Plot {
            file_tag: "layouts-in-turn".into(),
            title: "Figure 9c as a ratio: SROL ÷ SOL, the two measured in turn (matches/s, 1 thread)".into(),
            y_label: "SROL ÷ SOL".into(),
            chart: Chart::Bars { groups: groups.into_iter().map(|g| g.0).collect(), series: series.into() },
        });
    }
    plots.push(Plot {
        file_tag: "threads".into(),
        title: "Figure 10a/b: thousand matches/s, 1 thread vs all (rare+chain, SROL)".into(),
        y_label: "kmatches/s".into(),
        chart: Chart::Bars {
            groups: labels.clone(),
            series: [("1 thread", "kmatches_per_s"), ("all threads", "kmatches_per_s_all_threads")]
                .iter()
                .map(|(n, k)| (n.to_string(), alg_groups.iter().map(|(_, f, a)| num(find(rows, a, f, &BEST), k)).collect()))
                .collect(),
        },
    });
    let sized = |alg: &str| -> Vec<(f64, f64)> {
        let mut p: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.str("system") == Some(alg) && r.str("fib").is_some_and(|f| f.starts_with("zipf")))
            .filter(|r| {
                r.str("sweep") == Some("fib_size")
                    || (r.str("sweep").is_none() && r.str("compression") == Some("rare+chain") && r.str("layout") == Some("srol"))
            })
            .filter_map(|r| Some((r.num("descriptors")?, r.num("kmatches_per_s")?)))
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    };
    plots.push(Plot {
        file_tag: "fib-size".into(),
        title: "Figure 10c: thousand matches/s by FIB size (Zipf FIBs, 1 thread)".into(),
        y_label: "kmatches/s".into(),
        chart: Chart::Lines {
            x_label: "descriptors".into(),
            log_x: true,
            series: vec![("fas".into(), sized("fas")), ("fls".into(), sized("fls"))],
        },
    });
    plots.push(Plot {
        file_tag: "peers".into(),
        title: "Trie speed-up over the peers (SROL, 1 thread)".into(),
        y_label: "× peer's matches/s".into(),
        chart: Chart::Bars {
            groups: labels,
            series: ["linear-scan", "inverted-index"]
                .iter()
                .map(|p| {
                    let v = alg_groups
                        .iter()
                        .map(|(_, f, a)| {
                            num(find(rows, a, f, &BEST), "kmatches_per_s") / num(find(rows, p, f, &[("match", a)]), "kmatches_per_s")
                        })
                        .collect();
                    (format!("× {p}"), v)
                })
                .collect(),
        },
    });
    let in_turn: Vec<&Row> = rows.iter().filter(|r| r.str("sweep") == Some("peers_in_turn")).collect();
    plots.push(Plot {
        file_tag: "peers-in-turn".into(),
        title: "Trie speed-up over each peer, measured in turn with it (SROL, 1 thread)".into(),
        y_label: "× peer's matches/s".into(),
        chart: Chart::Bars {
            groups: in_turn
                .iter()
                .map(|r| {
                    format!("{} {} {}", r.str("fib").unwrap_or("?"), r.str("compression").unwrap_or("?"), r.str("system").unwrap_or("?"))
                })
                .collect(),
            series: [("linear-scan", "vs_scan_in_turn"), ("inverted-index", "vs_index_in_turn")]
                .iter()
                .map(|(p, key)| (format!("× {p}"), in_turn.iter().map(|r| num(Some(r), key)).collect()))
                .collect(),
        },
    });
    plots.push(Plot {
        file_tag: "mixed".into(),
        title: format!(
            "Table 1: push/pull mixes, Mpps through the engine (1 thread, up to 15 follow-ups; bursts of {BURST}, and one by one)"
        ),
        y_label: "Mpps".into(),
        chart: Chart::Lines {
            x_label: "pull flows (%)".into(),
            log_x: false,
            series: fibs
                .iter()
                .flat_map(|f| [(f, "mpps", String::new()), (f, "mpps_one_by_one", " one by one".to_string())])
                .map(|(f, metric, how)| {
                    let p = rows
                        .iter()
                        .filter(|r| r.str("system") == Some("mixed") && r.str("fib") == Some(f))
                        .filter_map(|r| Some((r.num("pull_pct")?, r.num(metric)?)))
                        .collect();
                    (format!("{f}{how}"), p)
                })
                .collect(),
        },
    });
    for (file_tag, title, name, x_label, x) in [
        (
            "matching",
            "Figure 7: µs per match by matching rate (largest Zipf FIB, SROL, up to 2 extra tags)",
            "matching",
            "packets matching (%)",
            "matching_pct",
        ),
        (
            "extra-tags",
            "Figure 8: µs per match by extra tags in the packet (largest Zipf FIB, SROL)",
            "extra_tags",
            "extra tags (at most)",
            "extra_tags",
        ),
    ] {
        let series = CHAIN_REMOVED
            .map(Compression::name)
            .iter()
            .flat_map(|c| ["fas", "fls"].map(|a| (format!("{a} {c}"), sweep_points(rows, a, c, name, x))))
            .collect();
        plots.push(Plot {
            file_tag: file_tag.into(),
            title: title.into(),
            y_label: "µs per match".into(),
            chart: Chart::Lines { x_label: x_label.into(), log_x: false, series },
        });
    }
    for (file_tag, sweep, title, y_label) in [
        (
            "list-scan",
            "scalar",
            "Reading sibling lists eight nodes per AVX-512 scan: speed-up over node by node (1 thread)",
            "× node-by-node matches/s",
        ),
        (
            "walk-order",
            "depth_first",
            "FAS breadth-first, FLS in its breadth-first order: speed-up over the paper's depth-first walks (1 thread)",
            "× depth-first matches/s",
        ),
        (
            "fas-records",
            "records_at_once",
            "FAS holding 8 chain records, prefetched, before testing them: speed-up over testing each at once (1 thread; FLS, unchanged, as a control)",
            "× at-once matches/s",
        ),
        (
            "fls-order",
            "other_fls_order",
            "FLS in the order its compression picks (rare+chain: breadth-first from the root; the others: after its first match): speed-up over the other (1 thread; FAS, unchanged, as a control)",
            "× other order's matches/s",
        ),
        (
            "fls-batch",
            "one_at_a_time",
            "FLS depth-first interleaving 8 walks of a batch: speed-up over one walk at a time (1 thread; FAS, unchanged, as a control)",
            "× one-at-a-time matches/s",
        ),
    ] {
        let gains = series_gains(rows, sweep);
        plots.push(Plot {
            file_tag: file_tag.into(),
            title: title.into(),
            y_label: y_label.into(),
            chart: Chart::Bars {
                groups: gains.iter().map(|(f, c, l, _, _)| format!("{f} {c} {l}")).collect(),
                series: vec![("fas".into(), gains.iter().map(|g| g.3).collect()), ("fls".into(), gains.iter().map(|g| g.4).collect())],
            },
        });
    }
    plots.push(Plot {
        file_tag: "fls-batch-by-size".into(),
        title: format!(
            "FLS interleaving 8 walks of a batch, by FIB size: speed-up over one walk at a time (1 thread; the default from {} MiB on)",
            INTERLEAVE_FROM_BYTES >> 20
        ),
        y_label: "× one-at-a-time matches/s".into(),
        chart: Chart::Lines { x_label: "FIB MB".into(), log_x: true, series: interleaving_by_size(rows) },
    });
    let savings = permutation_savings(rows);
    plots.push(Plot {
        file_tag: "skew".into(),
        title: "Bytes the permutation saves by FIB, size and tag skew (SROL; the paper: 48% at 10M, 42% 10M-CCN, 46% 63M)".into(),
        y_label: "% of the uncompressed FIB saved".into(),
        chart: Chart::Bars {
            groups: savings.iter().map(|s| s.0.clone()).collect(),
            series: vec![
                ("perm".into(), savings.iter().map(|s| s.1).collect()),
                ("perm+chain".into(), savings.iter().map(|s| s.2).collect()),
            ],
        },
    });
    plots
}

/// For each (FIB, compression, layout) of sweep `sweep` (a walk option turned off): how much
/// faster FAS and FLS ran with it on, one thread, both measured in turn ([`on_and_off`]).
fn series_gains(rows: &[Row], sweep: &str) -> Vec<(String, String, String, f64, f64)> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.str("sweep") == Some(sweep) && r.str("system") == Some("fas")) {
        let (Some(f), Some(c), Some(l)) = (r.str("fib"), r.str("compression"), r.str("layout")) else { continue };
        let form = [("compression", c), ("layout", l)];
        let gain = |alg: &str| {
            let row = find_in(rows, Some(sweep), alg, f, &form);
            num(row, "ab_on_kmatches_per_s") / num(row, "ab_off_kmatches_per_s")
        };
        out.push((f.to_string(), c.to_string(), l.to_string(), gain("fas"), gain("fls")));
    }
    out
}

/// What interleaving FLS batches gives by FIB size (sweep `one_at_a_time`, both orders
/// measured in turn): for each FIB family (zipf, ccn) and form, (FIB MB, interleaved ÷ one at a
/// time) by size.
fn interleaving_by_size(rows: &[Row]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.str("sweep") == Some("one_at_a_time") && r.str("system") == Some("fls")) {
        let (Some(f), Some(c), Some(l)) = (r.str("fib"), r.str("compression"), r.str("layout")) else { continue };
        let name = format!("{} {c}/{l}", f.split('-').next().unwrap_or(f));
        let r = Some(r);
        let point = (num(r, "fib_bytes") / 1e6, num(r, "ab_on_kmatches_per_s") / num(r, "ab_off_kmatches_per_s"));
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(point),
            None => series.push((name, vec![point])),
        }
    }
    series.iter_mut().for_each(|(_, points)| points.sort_by(|a, b| a.0.total_cmp(&b.0)));
    series
}

/// (x, µs per match) of `alg` on `compression`/SROL in sweep `sweep`, x being field `x`: the
/// sweep's rows plus the main measurement (2 extra tags, 100% matching) of the swept FIB.
fn sweep_points(rows: &[Row], alg: &str, compression: &str, sweep: &str, x: &str) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.str("system") == Some(alg) && (r.str("sweep") == Some(sweep) || r.str("sweep").is_none()))
        .filter(|r| r.str("compression") == Some(compression) && r.str("layout") == Some("srol"))
        .filter(|r| rows.iter().any(|s| s.str("sweep") == Some(sweep) && s.str("fib") == r.str("fib")))
        .filter_map(|r| Some((r.num(x)?, r.num("us_per_match")?)))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

/// The bytes of FIB `fib` compiled with `compression` and SROL, from its `fib` row (of any
/// series).
fn srol_bytes(rows: &[Row], fib: &str, compression: &str) -> f64 {
    let r = rows.iter().find(|r| {
        r.str("system") == Some("fib")
            && r.str("fib") == Some(fib)
            && r.str("compression") == Some(compression)
            && r.str("layout") == Some("srol")
    });
    num(r, "fib_bytes")
}

/// For each main FIB and each FIB of the skew series: its name, the percentage of the
/// uncompressed FIB's bytes the permutation saves alone and with chains removed, and the
/// perm+chain FIB's MB.
fn permutation_savings(rows: &[Row]) -> Vec<(String, f64, f64, f64)> {
    let skewed = |r: &&Row| r.str("system") == Some("fib") && r.str("sweep") == Some("skew");
    let mut names: Vec<String> = Vec::new();
    for f in fib_names(rows).into_iter().chain(rows.iter().filter(skewed).filter_map(|r| r.str("fib").map(String::from))) {
        if !names.contains(&f) {
            names.push(f);
        }
    }
    names
        .into_iter()
        .map(|f| {
            let mem = |c: &str| srol_bytes(rows, &f, c);
            let saved = |c: &str| 100.0 * (1.0 - mem(c) / mem("none"));
            let (perm, chain, mb) = (saved("perm"), saved("perm+chain"), mem("perm+chain") / 1e6);
            (f, perm, chain, mb)
        })
        .collect()
}

/// FLS's throughput over FAS's on `fib`'s form `c`/`l`: as measured, and (sweep `given_best`)
/// given each answer's weight less one.
fn fls_over_fas(rows: &[Row], fib: &str, c: &str, l: &str, sweep: Option<&str>) -> f64 {
    let fields = [("compression", c), ("layout", l)];
    num(find_in(rows, sweep, "fls", fib, &fields), "kmatches_per_s") / num(find(rows, "fas", fib, &fields), "kmatches_per_s")
}

/// The lowest and the highest of `values` (∞ and −∞ for none).
fn lowest_and_highest(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for f in fib_names(rows) {
        let mem = |c: &str| srol_bytes(rows, &f, c);
        let speed = |a: &str, fields: &[(&str, &str)]| num(find(rows, a, &f, fields), "kmatches_per_s");
        out.push(format!(
            "tagnet {f}: perm+chain {:.0} MB (perm saves {:.0}%, +chain {:.0}%), rare+chain {:.0} MB",
            mem("perm+chain") / 1e6,
            100.0 * (1.0 - mem("perm") / mem("none")),
            100.0 * (1.0 - mem("perm+chain") / mem("none")),
            mem("rare+chain") / 1e6,
        ));
        for (c, variant) in [("perm+chain", PAPER), ("rare+chain", BEST)] {
            let (fas, fls) = (speed("fas", &variant), speed("fls", &variant));
            let sol = |a: &str| speed(a, &[("compression", c), ("layout", "sol")]);
            let mut line = format!(
                "tagnet {f} {c}: FAS {fas:.1}K/s, FLS {fls:.1}K/s ({:.2}×); SROL/SOL FAS {:.2}× FLS {:.2}×",
                fls / fas,
                fas / sol("fas"),
                fls / sol("fls")
            );
            // The peers are not measured on every FIB (not at 63M).
            let (scan, inverted) = (speed("linear-scan", &[("match", "fas")]), speed("inverted-index", &[("match", "fas")]));
            if scan.is_finite() && inverted.is_finite() {
                line += &format!(
                    "; vs scan FAS {:.0}× FLS {:.0}×; vs inverted FAS {:.1}× FLS {:.1}×",
                    fas / scan,
                    fls / speed("linear-scan", &[("match", "fls")]),
                    fas / inverted,
                    fls / speed("inverted-index", &[("match", "fls")]),
                );
            }
            out.push(line);
        }
        for c in CHAIN_REMOVED.map(Compression::name) {
            let at = |a: &str, key: &str| num(find_in(rows, Some("peers_in_turn"), a, &f, &[("compression", c)]), key);
            if at("fas", "vs_index_in_turn").is_finite() {
                out.push(format!(
                    "tagnet {f} {c} SROL in turn with each peer: FAS {:.1}× scan, {:.1}× inverted; FLS {:.1}× scan, {:.1}× inverted",
                    at("fas", "vs_scan_in_turn"),
                    at("fas", "vs_index_in_turn"),
                    at("fls", "vs_scan_in_turn"),
                    at("fls", "vs_index_in_turn")
                ));
            }
        }
        for c in Compression::ALL.map(Compression::name) {
            let [sol, srol] = ["sol", "srol"].map(|l| fls_over_fas(rows, &f, c, l, Some("given_best")));
            if sol.is_finite() || srol.is_finite() {
                out.push(format!(
                    "tagnet {f} {c} FLS given its answer's weight − 1 (the proof alone, breadth-first): {sol:.2}× FAS (SOL), {srol:.2}× (SROL)"
                ));
            }
            let fls = find(rows, "fls", &f, &[("compression", c), ("layout", "srol")]);
            if num(fls, "depth_first_found_answer_pct").is_finite() {
                out.push(format!(
                    "tagnet {f} {c}/srol FLS depth-first part: {:.0} lists, {:.1}% of its nodes; it held the answer on {:.1}% of packets",
                    num(fls, "lists_depth_first_per_match"),
                    num(fls, "nodes_depth_first_pct"),
                    num(fls, "depth_first_found_answer_pct")
                ));
            }
        }
        if let Some(m) =
            rows.iter().find(|r| r.str("system") == Some("mixed") && r.str("fib") == Some(f.as_str()) && r.num("pull_pct") == Some(80.0))
        {
            out.push(format!(
                "tagnet {f} mixed 80% pull: {:.2} Mpps / {:.1} Gbps (1 thread, bursts of {BURST}: {:.2}× one by one)",
                num(Some(m), "mpps"),
                num(Some(m), "gbps"),
                num(Some(m), "mpps") / num(Some(m), "mpps_one_by_one")
            ));
        }
    }
    if let Some(swept) = rows.iter().find(|r| r.str("sweep") == Some("matching")).and_then(|r| r.str("fib")) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let at = |a: &str| {
                let p = sweep_points(rows, a, c, "matching", "matching_pct");
                p.iter().map(|(x, us)| format!("{x:.0}%: {us:.1}")).collect::<Vec<_>>().join(", ")
            };
            out.push(format!("tagnet {swept} {c} µs per match by matching rate: FAS {}; FLS {}", at("fas"), at("fls")));
        }
    }
    if let Some(f) = rows.iter().find(|r| r.str("sweep") == Some("no_prefetch")).and_then(|r| r.str("fib")) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let ratio = |a: &str| srol_over_sol(rows, Some("no_prefetch"), a, f, c);
            out.push(format!("tagnet {f} {c} without prefetch: SROL/SOL FAS {:.2}× FLS {:.2}×", ratio("fas"), ratio("fls")));
        }
    }
    for (f, c, l, fas, fls) in series_gains(rows, "scalar") {
        out.push(format!("tagnet {f} {c}/{l}: AVX-512 list scan ÷ node by node: FAS {fas:.2}× FLS {fls:.2}×"));
    }
    for (f, c, l, fas, fls) in series_gains(rows, "depth_first") {
        out.push(format!("tagnet {f} {c}/{l}: breadth-first ÷ depth-first: FAS {fas:.2}×, FLS (in its breadth-first order) {fls:.2}×"));
    }
    for (f, c, l, fas, fls) in series_gains(rows, "other_fls_order") {
        let Some(own) = Compression::ALL.into_iter().find(|x| x.name() == c).map(FlsOrder::for_compression) else { continue };
        let (own, other) = (own.name(), other_breadth_first(own).name());
        out.push(format!("tagnet {f} {c}/{l}: FLS {own} ÷ {other} {fls:.2}× (FAS, the same walk, {fas:.2}×)"));
    }
    for (f, c, l, fas, fls) in series_gains(rows, "one_at_a_time") {
        out.push(format!("tagnet {f} {c}/{l}: FLS depth-first interleaved ÷ one at a time {fls:.2}× (FAS, the same walk, {fas:.2}×)"));
    }
    let from = INTERLEAVE_FROM_BYTES as f64 / 1e6;
    let (under, over): (Vec<_>, Vec<_>) =
        interleaving_by_size(rows).into_iter().flat_map(|(_, points)| points).partition(|(mb, _)| *mb < from);
    let span = |points: &[(f64, f64)]| {
        let (lo, hi) = lowest_and_highest(points.iter().map(|p| p.1));
        if points.is_empty() {
            "no FIB".to_string()
        } else {
            format!("{lo:.2}–{hi:.2}× on {} FIBs", points.len())
        }
    };
    out.push(format!(
        "tagnet FLS interleaved ÷ one at a time: under {from:.1} MB (one at a time by default) {}; from it (interleaved) {}",
        span(&under),
        span(&over),
    ));
    for (f, c, l, fas, fls) in series_gains(rows, "records_at_once") {
        out.push(format!("tagnet {f} {c}/{l}: FAS chain records deferred ÷ at once {fas:.2}× (FLS, the same walk, {fls:.2}×)"));
    }
    if let Some(f) = rows.iter().find(|r| r.str("sweep") == Some("descending")).and_then(|r| r.str("fib")) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            for (order, sweep) in [("ascending", None), ("descending", Some("descending"))] {
                let speed = |a: &str, l: &str| form_speed(rows, sweep, a, f, c, l);
                out.push(format!(
                    "tagnet {f} {c} {order} lists: FLS/FAS {:.2}× (SOL) {:.2}× (SROL); SROL/SOL FAS {:.2}× FLS {:.2}×",
                    speed("fls", "sol") / speed("fas", "sol"),
                    speed("fls", "srol") / speed("fas", "srol"),
                    srol_over_sol(rows, sweep, "fas", f, c),
                    srol_over_sol(rows, sweep, "fls", f, c),
                ));
            }
            out.push(format!(
                "tagnet {f} {c} descending lists without prefetch (walks that follow SROL, the paper's conditions): SROL/SOL FAS {:.2}× FLS {:.2}×",
                srol_over_sol(rows, Some("descending_no_prefetch"), "fas", f, c),
                srol_over_sol(rows, Some("descending_no_prefetch"), "fls", f, c),
            ));
        }
    }
    for f in fib_names(rows) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let ratio = |a: &str, by: &str| layouts_in_turn_ratio(rows, a, &f, c, by);
            if ratio("fas", OUR_WALKS).is_finite() {
                out.push(format!(
                    "tagnet {f} {c} SROL/SOL measured in turn: our walks FAS {:.2}× FLS {:.2}×; the paper's walks FAS {:.2}× FLS {:.2}×",
                    ratio("fas", OUR_WALKS),
                    ratio("fls", OUR_WALKS),
                    ratio("fas", PAPER_WALKS),
                    ratio("fls", PAPER_WALKS),
                ));
            }
        }
    }
    let in_turn: Vec<&Row> = rows.iter().filter(|r| r.str("sweep") == Some("layouts_in_turn")).collect();
    for (by, name) in [(OUR_WALKS, "our walks"), (PAPER_WALKS, "the paper's walks")] {
        let ratios: Vec<f64> = in_turn.iter().filter(|r| r.str("walks") == Some(by)).filter_map(|r| r.num("srol_over_sol")).collect();
        if ratios.is_empty() {
            continue;
        }
        let (lo, hi) = lowest_and_highest(ratios.iter().copied());
        out.push(format!(
            "tagnet SROL faster than SOL, measured in turn, with {name}: {} of {} pairs ({lo:.2}–{hi:.2}×)",
            ratios.iter().filter(|&&x| x > 1.0).count(),
            ratios.len(),
        ));
    }
    // The main FIBs' savings are on their own lines above.
    let main = fib_names(rows);
    for (name, perm, chain, mb) in permutation_savings(rows).into_iter().filter(|s| !main.contains(&s.0)) {
        out.push(format!("tagnet skew, {name}: perm alone saves {perm:.1}%, with chains {chain:.1}% ({mb:.1} MB)"));
    }
    if let Some(t) = rows.iter().find(|r| r.str("system") == Some("tz") && r.num("ns_per_forward").is_some()) {
        let synthetic = || rows.iter().filter(|r| r.str("topology") == Some("preferential-attachment"));
        let max_bits = synthetic().filter_map(|r| r.num("label_bits_max")).fold(0.0, f64::max);
        let bound = synthetic().find_map(|r| r.num("label_bits_bound")).unwrap_or(f64::NAN);
        out.push(format!(
            "tagnet tz: {:.2} ns per forward; labels ≤ {max_bits} bits (3.4·log2 n = {bound:.1})",
            num(Some(t), "ns_per_forward")
        ));
    }
    let real: Vec<&Row> =
        rows.iter().filter(|r| r.str("system") == Some("tz") && r.str("topology").is_some_and(|t| t.starts_with("caida-"))).collect();
    if let Some(largest) = real.first() {
        let pairs: f64 = real.iter().filter_map(|r| r.num("pairs")).sum();
        let wrong: f64 = real.iter().filter_map(|r| r.num("mismatches")).sum();
        let worst = real.iter().filter_map(|r| r.num("label_bits_max")).fold(0.0, f64::max);
        out.push(format!(
            "tagnet tz on {} CAIDA AS topologies: labels ≤ {worst} bits; largest {} ({} nodes) ≤ {} bits; {pairs} pairs walked, {wrong} wrong",
            real.len(),
            largest.str("topology").unwrap_or("?"),
            num(Some(largest), "nodes"),
            num(Some(largest), "label_bits_max"),
        ));
    }
    let mismatches: f64 = rows.iter().filter_map(|r| r.num("mismatches")).sum();
    out.push(format!("tagnet mismatches: {mismatches}"));
    out
}
