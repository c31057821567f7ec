//! `nexthop fib name`: NDN name routes from a file in the forwarder's FIB, longest name prefix
//! match.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use nexthop_fw::table::fib::Fib;
use nexthop_lookup::name::{NextHop, NextHops};
use nexthop_wire::Name;

use super::{answer_each, read_lines};

/// Arguments of `nexthop fib name`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The route file: `/prefix face [cost]` per line (face and cost: decimal numbers).
    file: PathBuf,
    /// Names to look up (NDN URIs); none: read them from standard input, one per line.
    names: Vec<String>,
}

pub(super) fn run(args: &Args) -> anyhow::Result<usize> {
    let started = Instant::now();
    let mut routes: HashMap<Name, Vec<NextHop>> = HashMap::new();
    read_lines(&args.file, |line| {
        let mut parts = line.split_whitespace();
        let (Some(prefix), Some(face)) = (parts.next(), parts.next()) else { return Err("expected `/prefix face [cost]`".into()) };
        let prefix = Name::from_uri(prefix).map_err(|e| format!("bad prefix {prefix:?}: {e}"))?;
        let face = face.parse().map_err(|_| format!("bad face {face:?}"))?;
        let cost = parts.next().map_or(Ok(0), |c| c.parse().map_err(|_| format!("bad cost {c:?}")))?;
        if parts.next().is_some() {
            return Err("too many fields".into());
        }
        routes.entry(prefix).or_default().push(NextHop { face, cost });
        Ok(())
    })?;
    // The forwarder's FIB: the binary search of hash tables, plus the root route `/`.
    let mut fib = Fib::default();
    for (prefix, hops) in routes {
        fib.insert(&prefix.as_view(), NextHops::new(hops)).map_err(|e| anyhow::anyhow!("route {prefix}: {e}"))?;
    }
    eprintln!("{}: {} routes, read and built in {:.2} s", args.file.display(), fib.len(), started.elapsed().as_secs_f64());
    answer_each(&args.names, |key| {
        let name = Name::from_uri(key).map_err(|e| anyhow::anyhow!("not an NDN name ({e})"))?;
        let view = name.as_view();
        let Some(hops) = fib.lookup(&view) else { return Ok("-".into()) };
        // The route that answered: the longest prefix that is a route (a CLI's extra lookups).
        let route =
            (0..=view.len()).rev().map(|n| view.prefix(n)).find(|p| fib.get(p).is_some()).map(|r| r.to_string()).unwrap_or_default();
        let hops: Vec<String> = hops.hops().iter().map(|h| format!("{}:{}", h.face, h.cost)).collect();
        Ok(format!("{route} {}", hops.join(" ")))
    })
}
