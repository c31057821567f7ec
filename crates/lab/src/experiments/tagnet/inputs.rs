//! The `tagnet` experiment's inputs: the FIBs and packets under test with their oracle answers,
//! the packet sizes of the traffic mixes, and the forms each series compiles.

use nexthop_lookup::tag::{parallel, Compression, Descriptor, Fanout, InvertedIndex, Largest, Layout, PortSet};

use crate::workload::tags as workload;
use crate::RunConfig;

/// The paper's packet sizes (section 4.5): push and data 1280 B, first interest 800 B, follow-up
/// interests 100 B.
pub(super) const PUSH_BYTES: u64 = 1280;
pub(super) const INTEREST_BYTES: u64 = 800;
pub(super) const FOLLOW_UP_BYTES: u64 = 100;
pub(super) const DATA_BYTES: u64 = 1280;
/// Packets per [`Engine::forward_batch`] call in the traffic mixes: a receive burst of VPP's
/// vector size. A burst of the 100%-pull mix holds about 16 anycast packets to interleave; at 64
/// packets, about 4, and the gain over one by one shrank to a few percent on a 10M FIB (a probe).
pub(super) const BURST: usize = 256;

/// The AS-level topology size the paper labelled.
pub(super) const AS_NODES: usize = 42_113;
pub(super) const AS_EDGES: usize = 118_040;

/// One FIB under test with its packet descriptors and their oracle answers.
pub(super) struct Workload<'a> {
    pub(super) name: String,
    pub(super) entries: &'a [(Descriptor, PortSet)],
    pub(super) inverted: &'a InvertedIndex,
    pub(super) queries: Vec<Descriptor>,
    pub(super) fas_ref: Vec<PortSet>,
    pub(super) fls_ref: Vec<(u32, Vec<PortSet>)>,
}

impl<'a> Workload<'a> {
    pub(super) fn new(
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
    pub(super) fn fls_weights(&self) -> Vec<u32> {
        self.fls_ref.iter().map(|r| r.0).collect()
    }

    pub(super) fn matching_pct(&self) -> f64 {
        100.0 * self.fas_ref.iter().filter(|p| !p.is_empty()).count() as f64 / self.fas_ref.len().max(1) as f64
    }
}

/// The inverted index's FAS and FLS answers for `queries`, over all threads.
pub(super) fn oracle(cfg: &RunConfig, inverted: &InvertedIndex, queries: &[Descriptor]) -> (Vec<PortSet>, Vec<(u32, Vec<PortSet>)>) {
    let mut fas = vec![PortSet::EMPTY; queries.len()];
    parallel(queries, &mut fas, cfg.threads, |q, o| q.iter().zip(o).for_each(|(q, o)| *o = inverted.fas(q, Fanout::ALL, &PortSet::ALL)));
    let mut fls = vec![(0, Vec::new()); queries.len()];
    parallel(queries, &mut fls, cfg.threads, |q, o| q.iter().zip(o).for_each(|(q, o)| *o = inverted.fls_answers(q)));
    (fas, fls)
}

/// FLS answers that are not one the oracle allows.
pub(super) fn invalid_fls(answers: &[Option<Largest>], reference: &[(u32, Vec<PortSet>)]) -> u64 {
    answers
        .iter()
        .zip(reference)
        .filter(|(a, (w, sets))| match a {
            None => !sets.is_empty(),
            Some(b) => b.weight != *w || !sets.contains(&b.ports),
        })
        .count() as u64
}

/// The paper's largest FIB size (quick: 200K, to run the same code).
pub(super) fn largest_size(cfg: &RunConfig) -> usize {
    if cfg.quick {
        200_000
    } else {
        63_000_000
    }
}

/// The forms measured at [`largest_size`]: those whose trie fits the compiled vector at 63M.
/// (the same forms as [`LAYOUT_FIBS`], kept after the build for their layouts in turn).
pub(super) const LARGEST_FORMS: [(Compression, Layout); 4] = LAYOUT_FIBS;

/// Shares of packets drawn from the FIB in the matching-rate sweep (Figure 7; 100% is the main
/// measurement).
pub(super) const MATCHING_RATES: [f64; 4] = [0.0, 0.25, 0.5, 0.75];

/// Tag-popularity exponents of the skew series' Zipf(s) FIBs (the main Zipf FIB is s ≈ 1).
pub(super) const SKEW_EXPONENTS: [f64; 2] = [1.25, 1.5];

/// The fastest compiled form: it runs the engine, the sweeps and the FIB-size series.
pub(super) const BEST_FIB: (Compression, Layout) = (Compression::RareChain, Layout::Srol);
/// The paper's own compiled form, swept beside [`BEST_FIB`] (Figures 7 and 8).
const PAPER_FIB: (Compression, Layout) = (Compression::PermChain, Layout::Srol);
/// The forms kept after [`variants`]: both layouts of the paper's form and of the fastest,
/// their SOL and SROL measured in turn on every main FIB ([`layouts_in_turn`]); on the largest
/// Zipf FIB also measured again without prefetch and the like, then the SROL two
/// ([`PAPER_FIB`], [`BEST_FIB`], in that order) swept.
pub(super) const LAYOUT_FIBS: [(Compression, Layout); 4] =
    [(Compression::PermChain, Layout::Sol), PAPER_FIB, (Compression::RareChain, Layout::Sol), BEST_FIB];

/// The chain-removed compressions: the paper's and ours.
pub(super) const CHAIN_REMOVED: [Compression; 2] = [Compression::PermChain, Compression::RareChain];

/// [`layouts_in_turn`]'s `walks` for FIBs walked as nexthop walks them by default.
pub(super) const OUR_WALKS: &str = "ours";
/// [`layouts_in_turn`]'s `walks` for FIBs walked as the paper does ([`walk_as_the_paper`]).
pub(super) const PAPER_WALKS: &str = "paper";

/// The Zipf FIB of `n` descriptors, its inverted index (the oracle and a peer), and `n_q`
/// packets drawn from it with up to 2 extra tags.
pub(super) fn zipf_inputs(n: usize, n_q: usize) -> (Vec<(Descriptor, PortSet)>, InvertedIndex, Vec<Descriptor>) {
    let entries = workload::zipf_fib(n, 0x2a + n as u64);
    let inverted = InvertedIndex::new(entries.iter().map(|(d, p)| (d, p)));
    let queries = workload::queries(&entries, n_q, 2, 0x51);
    (entries, inverted, queries)
}

pub(super) fn size_label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(100_000) {
        format!("{}m", n as f64 / 1e6)
    } else {
        format!("{}k", n / 1000)
    }
}
