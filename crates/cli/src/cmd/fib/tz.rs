//! `nexthop fib tz`: a graph from a file, its BFS tree labelled by Thorup–Zwick, and the paths
//! packets addressed by locator take.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use nexthop_lookup::tag::{Hop, Tree, TzLabels};

use super::{answer_each, read_lines};

/// Arguments of `nexthop fib tz`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The graph: `node node` per edge (node names without white space; a loop is skipped).
    file: PathBuf,
    /// Pairs `SRC DST` (one argument each, e.g. "a b"); none: read them from standard input.
    pairs: Vec<String>,
    /// The tree's root (default: the node of highest degree).
    #[arg(long)]
    root: Option<String>,
}

pub(super) fn run(args: &Args) -> anyhow::Result<usize> {
    let started = Instant::now();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut adjacency: Vec<Vec<u32>> = Vec::new();
    let mut id = |name: &str, adjacency: &mut Vec<Vec<u32>>| {
        *ids.entry(name.to_string()).or_insert_with(|| {
            names.push(name.to_string());
            adjacency.push(Vec::new());
            (names.len() - 1) as u32
        })
    };
    let mut edges = 0usize;
    read_lines(&args.file, |line| {
        let mut parts = line.split_whitespace();
        let (Some(u), Some(v), None) = (parts.next(), parts.next(), parts.next()) else { return Err("expected `node node`".into()) };
        let (u, v) = (id(u, &mut adjacency), id(v, &mut adjacency));
        if u == v {
            return Ok(()); // A loop: no part of any tree.
        }
        adjacency[u as usize].push(v);
        adjacency[v as usize].push(u);
        edges += 1;
        Ok(())
    })?;
    let root = match &args.root {
        Some(r) => *ids.get(r).with_context(|| format!("--root {r:?} is not a node of the graph"))?,
        None => (0..adjacency.len()).max_by_key(|&v| (adjacency[v].len(), std::cmp::Reverse(v))).context("the graph has no edges")? as u32,
    };
    let tree = Tree::bfs(&adjacency, root)
        .map_err(|_| anyhow::anyhow!("the graph is not connected: not every node can be reached from {}", names[root as usize]))?;
    let labels = TzLabels::build(&tree).context("labelling the tree")?;
    let widest = (0..labels.len() as u32).map(|v| labels.label_bits(v)).max().unwrap_or(0);
    eprintln!(
        "{}: {} nodes, {edges} edges; BFS tree from {}, labelled in {:.2} s; labels up to {widest} bits",
        args.file.display(),
        names.len(),
        names[root as usize],
        started.elapsed().as_secs_f64()
    );
    answer_each(&args.pairs, |pair| {
        let mut parts = pair.split_whitespace();
        let (Some(src), Some(dst), None) = (parts.next(), parts.next(), parts.next()) else { bail!("expected `SRC DST`") };
        let node = |n: &str| ids.get(n).copied().with_context(|| format!("{n:?} is not a node of the graph"));
        let (mut at, dst) = (node(src)?, node(dst)?);
        let label = labels.label(dst);
        let mut path = vec![names[at as usize].as_str()];
        // Each hop decided by the router there, from its own state and the locator alone.
        while let Hop::Interface(port) = labels.router(at).forward(&label)? {
            at = labels.neighbor(at, port).context("forwarded to an interface with no neighbour")?;
            path.push(&names[at as usize]);
            anyhow::ensure!(path.len() <= names.len(), "the locator led round a loop");
        }
        Ok(format!("locator {} ({} bits): {} ({} hops)", label.id, labels.label_bits(dst), path.join(" "), path.len() - 1))
    })
}
