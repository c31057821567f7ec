//! TagNet workloads: descriptor FIBs, packet descriptors, an AS-like topology, traffic mixes.
//!
//! Overview:
//! - [`zipf_fib`]: `n` distinct descriptors of 1–4 tags each (uniform), tags drawn from a
//!   vocabulary of [`VOCABULARY`] with Zipf(1) popularity — the skew the paper's section 3.2.1
//!   counts on. (The paper's 63M/10M FIBs come from its authors' routing simulation and are not
//!   public; this is the stand-in, chosen before measuring.)
//! - [`apps_fib`]: the same, but each descriptor also carries one of [`APPS`] application tags
//!   (Zipf-picked): a skew the Bloom filter cannot flatten, since the app tag's 7 bits are set
//!   together in a large share of the FIB. Used only to show how much the bit permutation's
//!   saving depends on skew; the main workloads stay the two above.
//! - [`zipf_s_fib`]: the Zipf FIB's recipe with tag popularity Zipf(s) for a given exponent s
//!   (the main Zipf FIB's sampler is a continuous stand-in for s = 1): the same question, with
//!   skew in the tags themselves.
//! - [`ccn_fib`]: hierarchical names converted as the paper's section 2.1 does — the name FIB
//!   workload's real URL names (reversed-domain, extended under Zipf-picked real prefixes beyond
//!   the list's size), each component `c` at depth `i` becoming the tag `i:c`.
//! - [`queries`]: descriptors drawn from the FIB plus 0..=`extra` more tags (100% matching);
//!   [`queries_matching`]: those mixed at an exact ratio with descriptors of tags from outside
//!   the vocabulary that match nothing (checked against an oracle).
//! - Ports: each descriptor forwards to 1–2 of 64 (tree, interface) pairs on 4 trees, port id
//!   `i` being tree `i % 4`.
//! - [`as_graph`]: preferential attachment with the AS-level graph's size the paper used (42,113
//!   nodes, 118,040 edges).
//! - For files (`nexthop gen tag`): [`zipf_fib_written`], [`apps_fib_written`],
//!   [`ccn_fib_written`] and [`queries_written`] draw the same descriptors with their text
//!   ([`Written`]); each generator draws its tags once, into a [`TagSink`] — a descriptor, or a
//!   descriptor and its text.

use hashbrown::HashSet;
use nexthop_lookup::tag::{Descriptor, PortSet};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::names::{zipf, FibKind, FibWorkload};

/// Distinct tags the Zipf FIB draws from.
pub const VOCABULARY: usize = 1 << 20;
/// (tree, interface) pairs a FIB forwards to.
pub const PORTS: u8 = 64;
/// Trees those ports are spread over.
pub const TREES: u8 = 4;

/// The ports of FIB entry `i`: one or two of [`PORTS`].
pub fn ports_for(i: usize) -> PortSet {
    let s = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    let mut p = PortSet::of([(s % u64::from(PORTS)) as u8]);
    if s.is_multiple_of(3) {
        p.insert(((s >> 8) % u64::from(PORTS)) as u8);
    }
    p
}

/// The ports on tree `tree`.
pub fn tree_ports(tree: u8) -> PortSet {
    PortSet::of((0..PORTS).filter(|p| p % TREES == tree))
}

/// Where a generator puts the tags it draws: a descriptor's filter, or ([`Written`]) that and
/// the tags' text, for files.
pub trait TagSink {
    /// Adds `tag`.
    fn add(&mut self, tag: &str);
}

impl TagSink for Descriptor {
    fn add(&mut self, tag: &str) {
        self.add_tag(tag.as_bytes());
    }
}

/// A generated descriptor with its text as a descriptor FIB file writes it (tags separated by
/// spaces, or a `/`-name; `nexthop_lookup::tag::parse_descriptor` reads it back to
/// `descriptor`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// The filter.
    pub descriptor: Descriptor,
    /// The text.
    pub text: String,
}

impl TagSink for Written {
    fn add(&mut self, tag: &str) {
        self.descriptor.add_tag(tag.as_bytes());
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        self.text.push_str(tag);
    }
}

/// Adds the vocabulary's tag of popularity rank `rank` (0: the most popular).
fn add_ranked_tag(d: &mut dyn TagSink, rank: u64) {
    d.add(&format!("tag{rank}"));
}

fn add_zipf_tag(rng: &mut SmallRng, d: &mut dyn TagSink) {
    add_ranked_tag(d, zipf(rng, VOCABULARY) as u64);
}

/// The tags of one Zipf descriptor: 1–4 Zipf(1) tags.
fn zipf_tags(rng: &mut SmallRng, d: &mut dyn TagSink) {
    for _ in 0..rng.gen_range(1..=4) {
        add_zipf_tag(rng, d);
    }
}

/// The tags of one app-tagged descriptor: an application tag, then 1–3 Zipf(1) tags.
fn apps_tags(rng: &mut SmallRng, d: &mut dyn TagSink) {
    d.add(&format!("app{}", zipf(rng, APPS)));
    for _ in 0..rng.gen_range(1..=3) {
        add_zipf_tag(rng, d);
    }
}

/// `n` distinct Zipf-tagged descriptors with their ports.
pub fn zipf_fib(n: usize, seed: u64) -> Entries {
    distinct_fib(n, seed, "zipf descriptors", |d: &Descriptor| *d, zipf_tags)
}

/// [`zipf_fib`] with each descriptor's text (the same descriptors, for a file).
pub fn zipf_fib_written(n: usize, seed: u64) -> FibOf<Written> {
    distinct_fib(n, seed, "zipf descriptors", |w: &Written| w.descriptor, zipf_tags)
}

/// `n` distinct descriptors of 1–4 tags, each tag Zipf(`s`) over [`VOCABULARY`].
///
/// # Panics
/// If `s` is negative or NaN (a caller's constant; s = 0 is uniform).
pub fn zipf_s_fib(n: usize, s: f64, seed: u64) -> Entries {
    let tags = rand_distr::Zipf::new(VOCABULARY as u64, s).expect("a Zipf exponent ≥ 0");
    distinct_fib(
        n,
        seed,
        "zipf(s) descriptors",
        |d: &Descriptor| *d,
        |rng, d| {
            for _ in 0..rng.gen_range(1..=4) {
                let t: f64 = rng.sample(tags); // 1..=VOCABULARY
                add_ranked_tag(d, t as u64 - 1);
            }
        },
    )
}

/// Application tags [`apps_fib`] draws from.
pub const APPS: usize = 16;

/// `n` distinct descriptors of one application tag (Zipf(1) over [`APPS`]) and 1–3 Zipf tags.
pub fn apps_fib(n: usize, seed: u64) -> Entries {
    distinct_fib(n, seed, "app-tagged descriptors", |d: &Descriptor| *d, apps_tags)
}

/// [`apps_fib`] with each descriptor's text.
pub fn apps_fib_written(n: usize, seed: u64) -> FibOf<Written> {
    distinct_fib(n, seed, "app-tagged descriptors", |w: &Written| w.descriptor, apps_tags)
}

/// `n` entries of distinct descriptors, each drawn by `make` into a fresh `S`, with their ports.
fn distinct_fib<S: TagSink + Default>(
    n: usize,
    seed: u64,
    what: &str,
    descriptor: impl Fn(&S) -> Descriptor,
    mut make: impl FnMut(&mut SmallRng, &mut dyn TagSink),
) -> FibOf<S> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut seen = HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    let bar = crate::progress::bar(n as u64, what);
    while out.len() < n {
        let mut d = S::default();
        make(&mut rng, &mut d);
        if seen.insert(descriptor(&d)) {
            out.push((d, ports_for(out.len())));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    out
}

/// The generic components of a TLV name value.
fn components(name: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 2 <= name.len() {
        let (len, head) = match name[at + 1] {
            253 if at + 4 <= name.len() => (usize::from(u16::from_be_bytes([name[at + 2], name[at + 3]])), 4),
            l if l < 253 => (usize::from(l), 2),
            _ => break,
        };
        let Some(c) = name.get(at + head..at + head + len) else { break };
        out.push(c);
        at += head + len;
    }
    out
}

/// The descriptor of a hierarchical name: component i (1-based) → tag `i:component`.
pub fn name_descriptor(name: &[u8]) -> Descriptor {
    let mut d = Descriptor::EMPTY;
    for (i, c) in components(name).into_iter().enumerate() {
        let mut tag = format!("{}:", i + 1).into_bytes();
        tag.extend_from_slice(c);
        d.add_tag(&tag);
    }
    d
}

/// A descriptor FIB: each entry's descriptor and ports.
pub type Entries = FibOf<Descriptor>;

/// A FIB of descriptors as `S` ([`Descriptor`]s, or [`Written`] ones) with their ports.
pub type FibOf<S> = Vec<(S, PortSet)>;

/// `n` distinct descriptors of real URL names (see the module overview) and lookup names that
/// extend FIB names by 0–3 components (as descriptors).
pub fn ccn_fib(n: usize, queries: usize, seed: u64) -> anyhow::Result<(Entries, Vec<Descriptor>)> {
    ccn(n, queries, seed, name_descriptor, |d: &Descriptor| *d)
}

/// [`ccn_fib`] written as names (`/c1/c2/…`), each component's bytes other than letters, digits
/// and `-._~` percent-encoded, and each descriptor the one its text reads as.
pub fn ccn_fib_written(n: usize, queries: usize, seed: u64) -> anyhow::Result<(FibOf<Written>, Vec<Written>)> {
    ccn(n, queries, seed, name_written, |w: &Written| w.descriptor)
}

/// The name (a TLV value) written as a descriptor FIB file writes it, with its descriptor.
fn name_written(name: &[u8]) -> Written {
    use std::fmt::Write as _;
    let mut text = String::new();
    for c in components(name) {
        text.push('/');
        for &b in c {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                text.push(char::from(b));
            } else {
                let _ = write!(text, "%{b:02X}");
            }
        }
    }
    Written { descriptor: Descriptor::from_name(&text).unwrap_or(Descriptor::EMPTY), text }
}

fn ccn<S>(
    n: usize,
    queries: usize,
    seed: u64,
    from_name: impl Fn(&[u8]) -> S,
    descriptor: impl Fn(&S) -> Descriptor,
) -> anyhow::Result<(FibOf<S>, Vec<S>)> {
    let list = super::names::load_url_list(seed)?;
    let w = FibWorkload { kind: FibKind::Url(list), rules: n + n / 8, seed };
    let mut seen = HashSet::with_capacity(n);
    let mut fib = Vec::with_capacity(n);
    let mut name = Vec::new();
    let bar = crate::progress::bar(n as u64, "ccn descriptors");
    for i in 0..w.rules {
        if fib.len() == n {
            break;
        }
        name.clear();
        w.rule(i, &mut name);
        let d = from_name(&name);
        let key = descriptor(&d);
        if !key.is_empty() && seen.insert(key) {
            fib.push((d, ports_for(fib.len())));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let q = (0..queries)
        .map(|j| {
            name.clear();
            w.query(j, &mut name);
            from_name(&name)
        })
        .collect();
    Ok((fib, q))
}

/// `count` packet descriptors, each a FIB descriptor plus 0..=`extra` Zipf tags (100% matching).
pub fn queries(fib: &[(Descriptor, PortSet)], count: usize, extra: usize, seed: u64) -> Vec<Descriptor> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..count).map(|_| from_fib(&mut rng, fib.len(), extra, |i| fib[i].0)).collect()
}

/// [`queries`] with their text (the same draws, from a FIB made with its text).
pub fn queries_written(fib: &[(Written, PortSet)], count: usize, extra: usize, seed: u64) -> Vec<Written> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..count).map(|_| from_fib(&mut rng, fib.len(), extra, |i| fib[i].0.clone())).collect()
}

/// FIB entry `entry(i)` for a random i < `len`, plus 0..=`extra` Zipf tags.
fn from_fib<S: TagSink>(rng: &mut SmallRng, len: usize, extra: usize, entry: impl Fn(usize) -> S) -> S {
    let extras = rng.gen_range(0..=extra);
    let mut d = entry(rng.gen_range(0..len));
    for _ in 0..extras {
        add_zipf_tag(rng, &mut d);
    }
    d
}

/// `count` packet descriptors of which exactly ⌊`matching`·`count`⌉ (in random places) are made
/// as [`queries`] makes them and the rest match nothing: 1–4 tags plus 0..=`extra` more, all
/// from outside the vocabulary, drawn again while `matches` says the FIB has a subset of them
/// (a Bloom filter of a few random tags can still cover a short FIB descriptor's bits).
///
/// # Errors
/// If 100 draws in a row all match (a FIB that nearly every packet matches).
pub fn queries_matching(
    fib: &[(Descriptor, PortSet)],
    count: usize,
    extra: usize,
    matching: f64,
    seed: u64,
    matches: impl Fn(&Descriptor) -> bool,
) -> anyhow::Result<Vec<Descriptor>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let hits = ((matching.clamp(0.0, 1.0) * count as f64).round() as usize).min(count);
    let mut out: Vec<Descriptor> = (0..hits).map(|_| from_fib(&mut rng, fib.len(), extra, |i| fib[i].0)).collect();
    let mut misses_in_a_row = 0;
    while out.len() < count {
        let mut d = Descriptor::EMPTY;
        for _ in 0..rng.gen_range(1..=4) + rng.gen_range(0..=extra) {
            d.add_tag(format!("other{}", rng.gen::<u64>()).as_bytes());
        }
        if !matches(&d) {
            out.push(d);
            misses_in_a_row = 0;
        } else {
            misses_in_a_row += 1;
            anyhow::ensure!(misses_in_a_row < 100, "100 random packets in a row matched the FIB: no non-matching mix");
        }
    }
    out.shuffle(&mut rng);
    Ok(out)
}

/// A preferential-attachment graph of `nodes` nodes and `edges` edges (Barabási–Albert with a
/// fractional number of links per new node, no multi-edges), as adjacency lists.
pub fn as_graph(nodes: usize, edges: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    // Every edge's two ends: picking a uniform entry picks a node with probability ∝ degree.
    let mut ends: Vec<u32> = Vec::with_capacity(2 * edges);
    let link = |a: u32, b: u32, adj: &mut Vec<Vec<u32>>, ends: &mut Vec<u32>| {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
        ends.extend([a, b]);
    };
    let core = 3.min(nodes);
    for a in 0..core as u32 {
        for b in 0..a {
            link(a, b, &mut adj, &mut ends);
        }
    }
    let mut made = ends.len() / 2;
    for v in core..nodes {
        // Links still owed, spread evenly over the nodes still to come (at least one each).
        let left = nodes - v;
        let want = ((edges.saturating_sub(made)) as f64 / left as f64).max(1.0);
        let mut k = want.floor() as usize + usize::from(rng.gen_bool(want.fract()));
        k = k.clamp(1, v);
        let mut chosen: Vec<u32> = Vec::with_capacity(k);
        while chosen.len() < k {
            let t = ends[rng.gen_range(0..ends.len())];
            if !chosen.contains(&t) {
                chosen.push(t);
            }
        }
        for t in chosen {
            link(v as u32, t, &mut adj, &mut ends);
            made += 1;
        }
    }
    adj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_graph_has_the_asked_size_and_a_heavy_tail() {
        let g = as_graph(4211, 11804, 7);
        let edges: usize = g.iter().map(Vec::len).sum::<usize>() / 2;
        assert!((edges as f64 - 11804.0).abs() < 200.0, "{edges}");
        let max = g.iter().map(Vec::len).max().unwrap();
        assert!(max > 100, "max degree {max}");
    }

    #[test]
    fn names_become_depth_tags() {
        let mut name = Vec::new();
        super::super::names::push_component(&mut name, b"org");
        super::super::names::push_component(&mut name, b"gnu");
        assert_eq!(name_descriptor(&name), Descriptor::from_name("/org/gnu").unwrap());
    }

    #[test]
    fn zipf_fib_is_distinct_and_queries_from_it_match() {
        let fib = zipf_fib(2000, 1);
        let set: HashSet<_> = fib.iter().map(|e| e.0).collect();
        assert_eq!(set.len(), 2000);
        let q = queries(&fib, 100, 2, 2);
        assert!(q.iter().all(|q| fib.iter().any(|(d, _)| d.is_subset_of(q))));
    }

    #[test]
    fn written_workloads_are_the_same_draws_and_read_back_from_their_text() {
        use nexthop_lookup::tag::parse_descriptor;
        let fib = zipf_fib(500, 3);
        let written = zipf_fib_written(500, 3);
        assert_eq!(fib, written.iter().map(|(w, p)| (w.descriptor, *p)).collect::<Vec<_>>());
        let q = queries(&fib, 200, 2, 5);
        let qw = queries_written(&written, 200, 2, 5);
        assert_eq!(q, qw.iter().map(|w| w.descriptor).collect::<Vec<_>>());
        let apps = apps_fib_written(300, 4);
        assert_eq!(apps_fib(300, 4), apps.iter().map(|(w, p)| (w.descriptor, *p)).collect::<Vec<_>>());
        for w in written.iter().map(|e| &e.0).chain(&qw).chain(apps.iter().map(|e| &e.0)) {
            assert_eq!(parse_descriptor(&w.text).unwrap(), w.descriptor, "{}", w.text);
        }
        let mut name = Vec::new();
        super::super::names::push_component(&mut name, b"com");
        super::super::names::push_component(&mut name, b"a b/c->d");
        let w = name_written(&name);
        assert_eq!(w.text, "/com/a%20b%2Fc-%3Ed");
        assert_eq!(parse_descriptor(&w.text).unwrap(), w.descriptor);
    }

    #[test]
    fn a_matching_mix_has_exactly_its_share_of_matching_packets() {
        let fib = zipf_fib(2000, 1);
        let matches = |q: &Descriptor| fib.iter().any(|(d, _)| d.is_subset_of(q));
        for (share, hits) in [(0.0, 0), (0.25, 50), (0.5, 100), (1.0, 200)] {
            let q = queries_matching(&fib, 200, 2, share, 4, matches).unwrap();
            assert_eq!(q.len(), 200);
            assert_eq!(q.iter().filter(|q| matches(q)).count(), hits, "share {share}");
        }
    }

    #[test]
    fn a_fib_that_every_packet_matches_has_no_non_matching_mix() {
        let fib = zipf_fib(100, 1);
        assert!(queries_matching(&fib, 10, 2, 0.5, 4, |_| true).is_err());
    }

    #[test]
    fn a_larger_exponent_puts_more_of_the_fib_on_its_top_tag() {
        let share = |s: f64| {
            let fib = zipf_s_fib(5000, s, 3);
            let top = Descriptor::from_tags(["tag0"]).unwrap();
            fib.iter().filter(|(d, _)| top.is_subset_of(d)).count()
        };
        // Zipf(1.5) over 2^20 gives its top tag 38% of draws, Zipf(1) about 7%.
        let (flat, steep) = (share(1.0), share(1.5));
        assert!(steep > 2 * flat, "{flat} vs {steep}");
    }

    #[test]
    fn apps_fib_descriptors_each_carry_an_app_tag() {
        let fib = apps_fib(2000, 1);
        let apps: Vec<Descriptor> = (0..APPS).map(|a| Descriptor::from_tags([format!("app{a}")]).unwrap()).collect();
        assert!(fib.iter().all(|(d, _)| apps.iter().any(|a| a.is_subset_of(d))));
        // Zipf(1) over 16: the first app is in about a quarter of them.
        let first = fib.iter().filter(|(d, _)| apps[0].is_subset_of(d)).count();
        assert!((400..900).contains(&first), "{first}");
    }
}
