//! `nexthop gen ip`: the `ip-lpm` experiment's routing tables and destination addresses as files.

use std::net::{Ipv4Addr, Ipv6Addr};

use nexthop_lab::workload::routes::{self, Family, Traffic};
use nexthop_lookup::ip::Route;

use super::{write_files, Output};

/// Arguments of `nexthop gen ip`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    out: Output,
    /// Which table: 2014 (RouteViews 2014-05-13, 512,621 IPv4 prefixes), 2015 (2015-11-01,
    /// IPv4 and IPv6) — as `python3-pyasn` ships them — or synthetic (IPv4, `--routes` random
    /// prefixes with the 2014 table's lengths).
    #[arg(long, default_value = "2014", value_parser = ["2014", "2015", "synthetic"])]
    table: String,
    /// Prefixes of the synthetic table.
    #[arg(long, default_value_t = 1_000_000)]
    routes: usize,
    /// Destination addresses (per IP version).
    #[arg(long, default_value_t = 10_000)]
    addresses: usize,
    /// Which destinations: uniform (random), matching (this share inside a route, the rest
    /// outside every route, e.g. matching:0.5) or zipf (inside routes of Zipf(1) popularity).
    #[arg(long, default_value = "uniform")]
    traffic: String,
}

/// The traffic named by `text`.
fn traffic(text: &str) -> anyhow::Result<Traffic> {
    Ok(match text {
        "uniform" => Traffic::Uniform,
        "zipf" => Traffic::Zipf,
        t => match t.strip_prefix("matching:").and_then(|r| r.parse::<f64>().ok()) {
            Some(r) if (0.0..=1.0).contains(&r) => Traffic::Matching(r),
            _ => anyhow::bail!("--traffic {t:?}: uniform, zipf or matching:<share 0–1>"),
        },
    })
}

/// `n` destinations of `traffic` for `routes` (none without routes).
fn destinations<A: Family>(routes: &[Route<A>], traffic: Traffic, n: usize, seed: u64) -> Vec<A> {
    if routes.is_empty() {
        return Vec::new();
    }
    routes::addresses(routes, &routes::oracle(routes), traffic, n, seed)
}

pub(super) fn run(args: &Args) -> anyhow::Result<()> {
    let seed = args.out.seed;
    let traffic = traffic(&args.traffic)?;
    anyhow::ensure!((1..=100_000_000).contains(&args.routes), "--routes must be 1 to 100,000,000");
    let dir = routes::pyasn_dir();
    let (v4, v6) = match args.table.as_str() {
        "2015" => {
            let set = routes::load(&dir.join(routes::V46_2015))?;
            (routes::dedup(&set.v4), routes::dedup(&set.v6))
        }
        table => {
            let set = routes::load(&dir.join(routes::V4_2014))?;
            let v4 = routes::dedup(&set.v4);
            let v4 = if table == "synthetic" { routes::synthetic_v4(&v4, args.routes, seed) } else { v4 };
            (v4, Vec::new())
        }
    };
    let to4 = destinations(&v4, traffic, args.addresses, seed);
    let to6 = destinations(&v6, traffic, args.addresses, seed ^ 0x6);
    let routes = if args.table == "synthetic" { format!(" --routes {}", args.routes) } else { String::new() };
    let header =
        format!("nexthop gen ip --table {}{routes} --addresses {} --traffic {} --seed {seed}", args.table, args.addresses, args.traffic);
    write_files(
        &args.out,
        "ip",
        &header,
        |line| {
            for r in &v4 {
                line(&format!("{}/{}\t{}", Ipv4Addr::from(r.prefix), r.len, r.next_hop))?;
            }
            for r in &v6 {
                line(&format!("{}/{}\t{}", Ipv6Addr::from(r.prefix), r.len, r.next_hop))?;
            }
            Ok(())
        },
        |line| {
            to4.iter().try_for_each(|&a| line(&Ipv4Addr::from(a).to_string()))?;
            to6.iter().try_for_each(|&a| line(&Ipv6Addr::from(a).to_string()))
        },
    )
}
