//! `nexthop gen name`: the `name-fib` experiment's routes and lookup names as files.

use nexthop_lab::workload::names::{self, FibKind, FibWorkload};
use nexthop_wire::Name;

use super::{write_files, Output};

/// Arguments of `nexthop gen name`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    out: Output,
    /// Which FIB: url (real URL names, reversed-domain, extended under Zipf-picked real prefixes
    /// beyond the list's size), worst-binsearch (the paper's worst case for binary search) or
    /// worst-linear (routes of every length, long lookups with short matches).
    #[arg(long, default_value = "url", value_parser = ["url", "worst-binsearch", "worst-linear"])]
    kind: String,
    /// Routes.
    #[arg(long, default_value_t = 100_000)]
    routes: usize,
    /// Lookup names (each extends a route by 0–3 components).
    #[arg(long, default_value_t = 10_000)]
    lookups: usize,
    /// Components per route of the worst-case FIBs.
    #[arg(long, default_value_t = 7)]
    components: usize,
}

pub(super) fn run(args: &Args) -> anyhow::Result<()> {
    let seed = args.out.seed;
    let kind = match args.kind.as_str() {
        "url" => FibKind::Url(names::load_url_list(seed)?),
        "worst-binsearch" => FibKind::WorstBinsearch { k: args.components },
        _ => FibKind::WorstLinear { k: args.components },
    };
    let w = FibWorkload { kind, rules: args.routes, seed };
    let uri = |value: &[u8]| Name::from_value(value).map(|n| n.to_string());
    let header = format!(
        "nexthop gen name --kind {} --routes {} --lookups {} --components {} --seed {seed}",
        args.kind, args.routes, args.lookups, args.components
    );
    let mut value = Vec::new();
    write_files(
        &args.out,
        "name",
        &header,
        |line| {
            for i in 0..w.rules {
                value.clear();
                w.rule(i, &mut value);
                let Ok(prefix) = uri(&value) else { continue };
                for hop in names::next_hops_for(i).hops() {
                    line(&format!("{prefix} {} {}", hop.face, hop.cost))?;
                }
            }
            Ok(())
        },
        |line| {
            let mut value = Vec::new();
            for j in 0..args.lookups {
                value.clear();
                w.query(j, &mut value);
                if let Ok(name) = uri(&value) {
                    line(&name)?;
                }
            }
            Ok(())
        },
    )
}
