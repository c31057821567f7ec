//! IP routing tables and destination traffic for the `ip-lpm` experiment.
//!
//! Real tables: the RouteViews-derived tables Debian's `python3-pyasn` ships (installed by
//! `scripts/setup.sh`): IPv4 of 2014-05-13 (512,621 prefixes) and the 2015-11-01 table with
//! 606,138 IPv4 and 27,693 IPv6 prefixes; next hop = the origin AS (numbered in order of first
//! appearance). Synthetic IPv4 tables of any size draw prefix lengths from the 2014 table's
//! histogram and random prefix bits.
//!
//! Traffic ([`Traffic`]): uniformly random addresses; addresses drawn to match the table at a
//! given ratio (a matching address is a random address inside a route chosen uniformly, as the
//! paper does; a non-matching one is drawn at random until the oracle finds no route); and a
//! skewed mix whose destination route is drawn with Zipf(1) popularity.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nexthop_lookup::ip::{parse_routes, Address, BinaryTrie, NextHop, Route, RouteSet, NO_ROUTE};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::names::zipf;

/// Where `python3-pyasn` puts its data files (override with `NEXTHOP_PYASN_DATA`).
pub fn pyasn_dir() -> PathBuf {
    std::env::var_os("NEXTHOP_PYASN_DATA").map_or_else(|| PathBuf::from("/usr/lib/python3/dist-packages/data"), PathBuf::from)
}

/// The 2014 IPv4 table.
pub const V4_2014: &str = "ipasn_20140513.dat.gz";
/// The 2015 IPv4 + IPv6 table.
pub const V46_2015: &str = "ipasn6_20151101.dat.gz";

/// Reads a gzipped route file, showing progress.
///
/// # Errors
/// A missing file (with the package to install) or a bad line.
pub fn load(path: &Path) -> anyhow::Result<RouteSet> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("{} (install the Debian package python3-pyasn: scripts/setup.sh)", path.display()))?;
    let bar = crate::progress::bar(700_000, &format!("reading {}", path.file_name().and_then(|n| n.to_str()).unwrap_or("routes")));
    let set = parse_routes(BufReader::new(flate2::read::GzDecoder::new(file)), |n| bar.set_position(n as u64))
        .with_context(|| format!("{}", path.display()))?;
    bar.finish_and_clear();
    Ok(set)
}

/// Keeps the last route of each prefix (a table lists a prefix once; a file may repeat it).
pub fn dedup<A: Address>(routes: &[Route<A>]) -> Vec<Route<A>> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Route<A>> = routes.iter().rev().filter(|r| seen.insert((r.prefix, r.len))).copied().collect();
    out.reverse();
    out
}

/// `n` distinct random IPv4 routes with the length histogram of `like` and its next hops.
pub fn synthetic_v4(like: &[Route<u32>], n: usize, seed: u64) -> Vec<Route<u32>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut seen = std::collections::HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    let bar = crate::progress::bar(n as u64, "synthetic routes");
    while out.len() < n {
        let model = like[rng.gen_range(0..like.len())];
        let len = model.len.max(8);
        let prefix = rng.gen::<u32>().masked(len);
        if seen.insert((prefix, len)) {
            out.push(Route { prefix, len, next_hop: model.next_hop });
            if out.len() % 65_536 == 0 {
                bar.set_position(out.len() as u64);
            }
        }
    }
    bar.finish_and_clear();
    out
}

/// The oracle holding `routes` (a route it refuses is left out; table files are checked when read).
pub fn oracle<A: Address>(routes: &[Route<A>]) -> BinaryTrie<A> {
    let mut t = BinaryTrie::new();
    for r in routes {
        let _ = t.insert(r.prefix, r.len, r.next_hop);
    }
    t
}

/// A destination mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Traffic {
    /// Uniformly random addresses (IPv6: inside 2000::/3, the global unicast space).
    Uniform,
    /// This fraction of addresses matches a route (inside a uniformly chosen one), the rest none.
    Matching(f64),
    /// Destinations inside routes chosen with Zipf(1) popularity.
    Zipf,
}

impl Traffic {
    /// Its name in rows.
    pub fn label(self) -> String {
        match self {
            Traffic::Uniform => "uniform".into(),
            Traffic::Matching(r) => format!("match-{}", (r * 100.0).round()),
            Traffic::Zipf => "zipf".into(),
        }
    }
}

/// An address family's random-address helpers.
pub trait Family: Address {
    /// A uniformly random address of the family's uniform traffic.
    fn random(rng: &mut SmallRng) -> Self;
    /// A random address inside `route`.
    fn inside(route: &Route<Self>, rng: &mut SmallRng) -> Self;
}

impl Family for u32 {
    fn random(rng: &mut SmallRng) -> Self {
        rng.gen()
    }
    fn inside(route: &Route<Self>, rng: &mut SmallRng) -> Self {
        let host = if route.len == 0 { u32::MAX } else { u32::MAX.checked_shr(u32::from(route.len)).unwrap_or(0) };
        route.prefix | (rng.gen::<u32>() & host)
    }
}

impl Family for u128 {
    fn random(rng: &mut SmallRng) -> Self {
        (rng.gen::<u128>() >> 3) | (1u128 << 125)
    }
    fn inside(route: &Route<Self>, rng: &mut SmallRng) -> Self {
        let host = u128::MAX.checked_shr(u32::from(route.len)).unwrap_or(0);
        route.prefix | (rng.gen::<u128>() & host)
    }
}

/// The fraction of `addrs` some route covers.
pub fn matched_fraction<A: Family>(addrs: &[A], answers: &[NextHop]) -> f64 {
    let matched = answers.iter().filter(|&&nh| nh != NO_ROUTE).count();
    matched as f64 / addrs.len().max(1) as f64
}

/// `n` destination addresses of `traffic` for `routes` (`oracle` holds the same routes).
pub fn addresses<A: Family>(routes: &[Route<A>], oracle: &BinaryTrie<A>, traffic: Traffic, n: usize, seed: u64) -> Vec<A> {
    let mut rng = SmallRng::seed_from_u64(seed);
    // Zipf ranks over a fixed random order of the routes.
    let mut order: Vec<usize> = (0..routes.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.gen_range(0..=i));
    }
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let a = match traffic {
            Traffic::Uniform => A::random(&mut rng),
            Traffic::Zipf => A::inside(&routes[order[zipf(&mut rng, routes.len())]], &mut rng),
            Traffic::Matching(r) => {
                if rng.gen_bool(r.clamp(0.0, 1.0)) {
                    A::inside(&routes[rng.gen_range(0..routes.len())], &mut rng)
                } else {
                    // Up to 16 tries for an unrouted address; where the table routes nearly
                    // everything a routed one is taken (see [`matched_fraction`]).
                    let mut a = A::random(&mut rng);
                    for _ in 0..16 {
                        if oracle.lookup(a) == NO_ROUTE {
                            break;
                        }
                        a = A::random(&mut rng);
                    }
                    a
                }
            }
        };
        out.push(a);
    }
    out
}
