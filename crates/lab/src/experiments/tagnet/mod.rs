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
//!
//! The code by part: `inputs.rs` (FIBs, packets, oracle answers, the forms each series compiles),
//! `matching.rs` (FAS and FLS against the peers), `sweeps.rs` (the series that change one
//! thing), `locators.rs` (Thorup–Zwick), `mixed.rs` (traffic mixes through the engine),
//! `rows.rs` (reading rows back by FIB, form and series), `plots.rs` and `summary.rs`.

mod inputs;
mod locators;
mod matching;
mod mixed;
mod plots;
mod rows;
mod summary;
mod sweeps;
mod wire;

use nexthop_lookup::tag::{CompiledFib, InvertedIndex, Layout};

use crate::workload::tags as workload;
use crate::{Report, RunConfig};
use inputs::{largest_size, size_label, zipf_inputs, Workload, BEST_FIB, LARGEST_FORMS, LAYOUT_FIBS, OUR_WALKS};
use locators::{locators, real_locators};
use matching::{compile, counted_fib_rows, measure_peers, measure_trie};
use mixed::mixed;
use plots::plots;
use summary::summary;
use sweeps::{
    depth_first, descending_lists, layouts_in_turn, one_at_a_time, other_fls_order, paper_layouts_in_turn, records_at_once, skew, sweeps,
    variants, variants_of, without_prefetch, without_simd,
};
pub use wire::TagnetWireExperiment;

/// The `tagnet` experiment.
#[derive(Debug)]
pub struct TagnetExperiment;

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
        let read = rows::Rows::read(&rows);
        Ok(Report { plots: plots(&read), summary: summary(&read), rows })
    }
}
