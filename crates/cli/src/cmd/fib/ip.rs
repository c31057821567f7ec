//! `nexthop fib ip`: IPv4/IPv6 routes from a file in the Bloom-filter tables, longest prefix match.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use nexthop_lookup::ip::{self, Bloomfwd4, Bloomfwd6, NextHop, DEFAULT_FPR, NO_ROUTE};

use super::{answer_each, read_file};

/// Arguments of `nexthop fib ip`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The route file: `prefix/len next-hop` per line, the next hop a 32-bit label (IPv4 and
    /// IPv6 may be mixed).
    file: PathBuf,
    /// Addresses to look up; none: read them from standard input, one per line.
    addresses: Vec<String>,
    /// IPv6: the number of expansion levels DP-CPE chooses.
    #[arg(long, default_value_t = 5)]
    levels: usize,
    /// The Bloom filters' target false-positive rate.
    #[arg(long, default_value_t = DEFAULT_FPR)]
    fpr: f64,
}

pub(super) fn run(args: &Args) -> anyhow::Result<usize> {
    let started = Instant::now();
    let routes = read_file(&args.file, |reader, progress| ip::parse_routes(reader, progress))?;
    eprintln!(
        "{}: {} IPv4 and {} IPv6 routes, read in {:.2} s",
        args.file.display(),
        routes.v4.len(),
        routes.v6.len(),
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let v4 = Bloomfwd4::from_routes(&routes.v4, args.fpr).context("building the IPv4 table")?;
    let v6 = Bloomfwd6::with_dp_cpe(&routes.v6, args.levels, args.fpr).context("building the IPv6 table")?;
    eprintln!("built in {:.2} s (IPv6 levels {:?})", started.elapsed().as_secs_f64(), v6.levels());
    // Each answer is the route's label (the tables hold its number).
    let hop = |h: NextHop| routes.label(h).filter(|_| h != NO_ROUTE).map_or_else(|| "-".to_string(), |l| l.to_string());
    answer_each(&args.addresses, |key| {
        Ok(match key.parse::<IpAddr>().map_err(|e| anyhow::anyhow!("not an IP address ({e})"))? {
            IpAddr::V4(a) => hop(v4.lookup(u32::from(a))),
            IpAddr::V6(a) => hop(v6.lookup(u128::from(a))),
        })
    })
}
