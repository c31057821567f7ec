//! Name-FIB workloads: routes and lookup names for the `name-fib` experiment.
//!
//! Overview: a [`FibWorkload`] describes `rules` routes and any number of lookup names, each made
//! on demand from its index and a seed (so a 100M-rule FIB needs no list of 100M names in
//! memory). Names are TLV values of generic components. Three families:
//!
//! - [`FibKind::WorstBinsearch`]: the paper's synthetic worst case (§3.3.1). Routes of exactly
//!   k components of 6–10 random characters, in groups that share a base name: for each level L
//!   where a k-component route needs a marker (4 and 6 for k = 7), one route that shares the
//!   first L components with the base and is random after; then the base itself. The first
//!   phase inserts the sharing routes of every group, the second the bases, so a lookup of a base
//!   finds each marker in another route's entry, far away in memory. Lookups are bases.
//! - [`FibKind::WorstLinear`]: routes of every length from 1 to k (chains: the k prefixes of a
//!   random base), looked up with names that follow a chain for 1–3 components and then go
//!   astray for at least k components in all: probing from the longest prefix down costs O(k).
//! - [`FibKind::Url`]: a real URL list converted with the reversed-domain scheme of the paper's
//!   Table 3 (`www.named-data.net/project` → `/net/named-data/www/project`). The list is the
//!   union of the EasyList, EasyPrivacy, uBlock and URLhaus filter lists that Debian's
//!   `webext-ublock-origin-firefox` package ships (about 106K distinct hosts and URL paths).
//!   FIBs larger than the list add children under real names picked with a Zipf(1) popularity,
//!   so a few real prefixes get many suffixes, as in the paper's datasets.
//!
//! Every lookup name extends one route by 0–3 random components, as the paper does for level
//! pulling, so the longest match is rarely the whole name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use nexthop_lookup::name::{NextHop, NextHops};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Which family of FIB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FibKind {
    /// The paper's worst case for binary search, routes of `k` components.
    WorstBinsearch {
        /// Components per route.
        k: usize,
    },
    /// Routes of every length up to `k`, long lookups with short matches.
    WorstLinear {
        /// Longest route.
        k: usize,
    },
    /// Real URLs, reversed-domain names.
    Url(Arc<Vec<Vec<u8>>>),
}

/// A FIB workload of `rules` routes.
#[derive(Debug, Clone)]
pub struct FibWorkload {
    /// The family.
    pub kind: FibKind,
    /// Routes.
    pub rules: usize,
    /// Seed of every random choice.
    pub seed: u64,
}

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Appends one generic component of 6–10 random characters.
fn random_component(rng: &mut SmallRng, out: &mut Vec<u8>) {
    let mut bits: u64 = rng.gen();
    let len = 6 + (bits % 5) as usize;
    bits /= 5;
    out.push(8);
    out.push(len as u8);
    for _ in 0..len {
        out.push(ALPHABET[(bits % ALPHABET.len() as u64) as usize]);
        bits /= ALPHABET.len() as u64;
    }
}

/// Appends one generic component with the given bytes.
pub fn push_component(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(8);
    if bytes.len() < 253 {
        out.push(bytes.len() as u8);
    } else {
        out.push(253);
        out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

fn rng_for(seed: u64, stream: u64, i: u64) -> SmallRng {
    // SplitMix-style mixing so neighbouring indices get unrelated streams.
    let mut z = seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    SmallRng::seed_from_u64(z ^ (z >> 31))
}

/// The levels at which a route of `k` components needs a marker in a binary search over the
/// perfect tree that covers k (4 and 6 for k = 7; 8, 12 and 14 for k = 15).
pub fn marker_levels(k: usize) -> Vec<usize> {
    let span = (k + 1).next_power_of_two() - 1;
    let (mut level, mut half) = (span.div_ceil(2), span.div_ceil(2) / 2);
    let mut out = Vec::new();
    while level != k {
        if level < k {
            out.push(level);
            level += half;
        } else {
            level -= half;
        }
        half /= 2;
    }
    out
}

impl FibWorkload {
    /// Label used in result rows (`worst-binsearch`, `worst-linear`, `url`).
    pub fn label(&self) -> &'static str {
        match self.kind {
            FibKind::WorstBinsearch { .. } => "worst-binsearch",
            FibKind::WorstLinear { .. } => "worst-linear",
            FibKind::Url(_) => "url",
        }
    }

    /// Most components of a route (k); for `url`, of the real list.
    pub fn components(&self) -> usize {
        match &self.kind {
            FibKind::WorstBinsearch { k } | FibKind::WorstLinear { k } => *k,
            FibKind::Url(list) => list.iter().map(|n| nexthop_lookup::name::hash::count_components(n)).max().unwrap_or(0) + 2,
        }
    }

    /// Writes route `i` (0 ≤ i < rules, in insertion order) into `out`.
    pub fn rule(&self, i: usize, out: &mut Vec<u8>) {
        out.clear();
        match &self.kind {
            FibKind::WorstBinsearch { k } => {
                let markers = marker_levels(*k);
                let per_group = markers.len() + 1;
                let groups = self.rules / per_group;
                let phase1 = groups * markers.len();
                if i < phase1 {
                    let (group, which) = (i / markers.len(), i % markers.len());
                    self.base(group, markers[which], out);
                    let mut rng = rng_for(self.seed, 2, i as u64);
                    for _ in markers[which]..*k {
                        random_component(&mut rng, out);
                    }
                } else {
                    // Bases of the groups; rules past the last whole group are bases of extra
                    // groups that share nothing.
                    self.base(i - phase1, *k, out);
                }
            }
            FibKind::WorstLinear { k } => {
                let (chain, len) = (i / k, i % k + 1);
                self.base(chain, len, out);
            }
            FibKind::Url(list) => {
                if i < list.len() {
                    out.extend_from_slice(&list[i]);
                } else {
                    let mut rng = rng_for(self.seed, 3, i as u64);
                    out.extend_from_slice(&list[zipf(&mut rng, list.len())]);
                    random_component(&mut rng, out);
                    if rng.gen_bool(0.3) {
                        random_component(&mut rng, out);
                    }
                }
            }
        }
    }

    /// The first `len` components of base name `group` (worst-case families).
    fn base(&self, group: usize, len: usize, out: &mut Vec<u8>) {
        let mut rng = rng_for(self.seed, 1, group as u64);
        for _ in 0..len {
            random_component(&mut rng, out);
        }
    }

    /// Writes lookup name `j` into `out` and returns the index of the route it was made to
    /// match longest (the answer by construction; random components could in principle make a
    /// longer match, which the reference oracle would catch where it is used).
    pub fn query(&self, j: usize, out: &mut Vec<u8>) -> usize {
        let mut rng = rng_for(self.seed, 4, j as u64);
        let expected = match &self.kind {
            FibKind::WorstBinsearch { k } => {
                let markers = marker_levels(*k).len();
                let groups = (self.rules / (markers + 1)).max(1);
                let group = rng.gen_range(0..groups);
                out.clear();
                self.base(group, *k, out);
                groups * markers + group
            }
            FibKind::WorstLinear { k } => {
                let chains = (self.rules / k).max(1);
                out.clear();
                let matched = rng.gen_range(1..=3.min(*k));
                let chain = rng.gen_range(0..chains);
                self.base(chain, matched, out);
                for _ in matched..*k {
                    random_component(&mut rng, out);
                }
                chain * k + matched - 1
            }
            FibKind::Url(_) => {
                let i = rng.gen_range(0..self.rules);
                self.rule(i, out);
                i
            }
        };
        for _ in 0..rng.gen_range(0..=3) {
            random_component(&mut rng, out);
        }
        expected
    }
}

/// A rank in 0..n drawn with probability ∝ 1/(rank+1) (Zipf, exponent 1), by inverting the
/// continuous approximation of its distribution.
pub(crate) fn zipf(rng: &mut SmallRng, n: usize) -> usize {
    let u: f64 = rng.gen();
    let x = ((n as f64 + 1.0).ln() * u).exp() - 1.0;
    (x as usize).min(n - 1)
}

/// The next hops of route `i`: one of 4096 distinct sets over 1024 faces, one or two hops.
pub fn next_hops_for(i: usize) -> NextHops {
    let s = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52; // 12 bits
    let face = 1 + (s % 1024) as u32;
    let mut hops = vec![NextHop { face, cost: 10 + (s >> 10) as u32 }];
    if s.is_multiple_of(3) {
        hops.push(NextHop { face: 1 + ((s * 7 + 1) % 1024) as u32, cost: 20 });
    }
    NextHops::new(hops)
}

/// Where Debian's uBlock Origin package keeps the filter lists.
pub const UBLOCK_ASSETS: &str = "/usr/share/mozilla/extensions/{ec8030f7-c20a-464f-9b0e-13a3a9e97384}/uBlock0@raymondhill.net/assets";

/// The filter lists the URL names come from, relative to [`UBLOCK_ASSETS`].
const URL_LISTS: &[&str] = &[
    "thirdparties/easylist/easylist.txt",
    "thirdparties/easylist/easyprivacy.txt",
    "thirdparties/urlhaus-filter/urlhaus-filter-online.txt",
    "ublock/filters.min.txt",
    "ublock/badware.min.txt",
    "ublock/privacy.min.txt",
    "ublock/unbreak.min.txt",
];

/// Reads the URL names: every `||host/path` rule of the lists, as reversed-domain NDN names
/// (TLV values), deduplicated, in a seeded random order.
pub fn url_names(assets: &Path, seed: u64) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut names = std::collections::BTreeSet::new();
    let mut found = false;
    for rel in URL_LISTS {
        let path: PathBuf = assets.join(rel);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        found = true;
        for line in text.lines() {
            if let Some(name) = url_rule_name(line) {
                names.insert(name);
            }
        }
    }
    if !found {
        bail!("no URL lists under {} (install webext-ublock-origin-firefox: scripts/setup.sh does)", assets.display());
    }
    let mut names: Vec<Vec<u8>> = names.into_iter().collect();
    let mut rng = SmallRng::seed_from_u64(seed);
    use rand::seq::SliceRandom;
    names.shuffle(&mut rng);
    Ok(names)
}

/// The reversed-domain name of a `||host[/path]` filter rule, or `None` for other rules.
fn url_rule_name(line: &str) -> Option<Vec<u8>> {
    let rest = line.strip_prefix("||")?;
    let end = rest.find(['^', '$', '*', '|']).unwrap_or(rest.len());
    let url = &rest[..end];
    let (host, path) = url.split_once('/').unwrap_or((url, ""));
    let labels: Vec<&str> = host.split('.').collect();
    let valid = |l: &&str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if labels.len() < 2 || !labels.iter().all(valid) || !labels.last()?.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let mut out = Vec::new();
    for label in labels.iter().rev() {
        push_component(&mut out, label.to_ascii_lowercase().as_bytes());
    }
    for part in path.split('/').filter(|p| !p.is_empty()) {
        push_component(&mut out, part.as_bytes());
    }
    Some(out)
}

/// Loads the URL list from the standard place.
pub fn load_url_list(seed: u64) -> anyhow::Result<Arc<Vec<Vec<u8>>>> {
    let names = url_names(Path::new(UBLOCK_ASSETS), seed).context("loading the URL list")?;
    Ok(Arc::new(names))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_wire::NameView;

    fn uri(v: &[u8]) -> String {
        NameView::from_value(v).unwrap().to_string()
    }

    #[test]
    fn marker_levels_follow_the_search_tree() {
        assert_eq!(marker_levels(7), vec![4, 6]);
        assert_eq!(marker_levels(15), vec![8, 12, 14]);
        assert_eq!(marker_levels(3), vec![2]);
        assert_eq!(marker_levels(1), Vec::<usize>::new());
    }

    #[test]
    fn worst_binsearch_groups_share_marker_prefixes() {
        let w = FibWorkload { kind: FibKind::WorstBinsearch { k: 7 }, rules: 30, seed: 1 };
        let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
        w.rule(0, &mut a); // group 0, shares 4
        w.rule(1, &mut b); // group 0, shares 6
        w.rule(20, &mut r); // phase 2: base of group 0
        let (na, nb, nr) = (NameView::from_value(&a).unwrap(), NameView::from_value(&b).unwrap(), NameView::from_value(&r).unwrap());
        assert_eq!((na.len(), nb.len(), nr.len()), (7, 7, 7));
        assert_eq!(na.prefix(4), nr.prefix(4));
        assert_ne!(na.prefix(5), nr.prefix(5));
        assert_eq!(nb.prefix(6), nr.prefix(6));
        assert_ne!(nb, nr);
        let mut q = Vec::new();
        w.query(5, &mut q);
        assert!(NameView::from_value(&q).unwrap().len() >= 7);
    }

    #[test]
    fn worst_linear_chains_hold_every_length() {
        let w = FibWorkload { kind: FibKind::WorstLinear { k: 7 }, rules: 70, seed: 1 };
        let mut v = Vec::new();
        let lens: Vec<usize> = (0..7)
            .map(|i| {
                w.rule(i, &mut v);
                NameView::from_value(&v).unwrap().len()
            })
            .collect();
        assert_eq!(lens, vec![1, 2, 3, 4, 5, 6, 7]);
        w.query(3, &mut v);
        assert!(NameView::from_value(&v).unwrap().len() >= 7);
    }

    #[test]
    fn url_rules_become_reversed_domain_names() {
        assert_eq!(uri(&url_rule_name("||www.named-data.net/project/^$third-party").unwrap()), "/net/named-data/www/project");
        assert_eq!(uri(&url_rule_name("||ads.example.com^").unwrap()), "/com/example/ads");
        assert_eq!(url_rule_name("##.banner"), None);
        assert_eq!(url_rule_name("||192.168.0.1^"), None);
    }

    #[test]
    fn next_hop_sets_vary() {
        let distinct: std::collections::HashSet<NextHops> = (0..10_000).map(next_hops_for).collect();
        assert!(distinct.len() > 3000);
    }
}
