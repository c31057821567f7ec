//! `nexthop gen tz`: the `tagnet` experiment's AS-like graph and node pairs as files.

use nexthop_lab::workload::tags;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{write_files, Output};

/// Arguments of `nexthop gen tz`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    out: Output,
    /// Nodes (the paper's AS-level graph: 42,113).
    #[arg(long, default_value_t = 42_113)]
    nodes: usize,
    /// Edges (the paper's: 118,040), joined by preferential attachment.
    #[arg(long, default_value_t = 118_040)]
    edges: usize,
    /// Random `SRC DST` pairs of distinct nodes.
    #[arg(long, default_value_t = 10_000)]
    pairs: usize,
}

pub(super) fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.nodes >= 2, "--nodes must be at least 2");
    anyhow::ensure!(args.edges >= args.nodes - 1, "--edges must be at least --nodes − 1 (a connected graph)");
    let graph = tags::as_graph(args.nodes, args.edges, args.out.seed);
    let mut rng = SmallRng::seed_from_u64(args.out.seed ^ 0x7a);
    let header = format!("nexthop gen tz --nodes {} --edges {} --pairs {} --seed {}", args.nodes, args.edges, args.pairs, args.out.seed);
    write_files(
        &args.out,
        "tz",
        &header,
        |line| {
            for (u, near) in graph.iter().enumerate() {
                for &v in near.iter().filter(|&&v| (v as usize) > u) {
                    line(&format!("{u} {v}"))?;
                }
            }
            Ok(())
        },
        |line| {
            for _ in 0..args.pairs {
                let src = rng.gen_range(0..args.nodes);
                let dst = (src + rng.gen_range(1..args.nodes)) % args.nodes;
                line(&format!("{src} {dst}"))?;
            }
            Ok(())
        },
    )
}
