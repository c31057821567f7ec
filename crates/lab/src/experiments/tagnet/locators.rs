//! Thorup–Zwick locators: labels on the AS-like graph and on real AS topologies, delivery of
//! every pair hop by hop, and the time of one forwarding decision.

use nexthop_lookup::tag::{Hop, Label, Tree, TzLabels, NO_PARENT};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::inputs::{AS_EDGES, AS_NODES};
use crate::harness::{compare, timed, Contender};
use crate::workload::tags::{self as workload, TREES};
use crate::{Row, RunConfig};

/// The locator side on the AS-like graph: label sizes, delivery on random pairs, ns per forward.
pub(super) struct Locators {
    pub(super) trees: Vec<Tree>,
    pub(super) labels: Vec<TzLabels>,
    pub(super) router: u32,
}

pub(super) fn locators(cfg: &RunConfig, rows: &mut Vec<Row>) -> anyhow::Result<Locators> {
    let (nodes, edges) = if cfg.quick { (AS_NODES / 8, AS_EDGES / 8) } else { (AS_NODES, AS_EDGES) };
    let graph = workload::as_graph(nodes, edges, 0x7a);
    // One BFS tree per tree id, rooted at the best-connected nodes (as roots of routing trees).
    let mut by_degree: Vec<u32> = (0..nodes as u32).collect();
    by_degree.sort_by_key(|&v| std::cmp::Reverse(graph[v as usize].len()));
    let mut trees = Vec::new();
    let mut labels = Vec::new();
    for (t, &root) in by_degree.iter().take(usize::from(TREES)).enumerate() {
        // Delivery: random pairs walked hop by hop, each hop checked against the tree path.
        let mut rng = SmallRng::seed_from_u64(0x5eed + t as u64);
        let pairs = if cfg.quick { 20_000 } else { 200_000 };
        let pairs = (0..pairs).map(|_| (rng.gen_range(0..nodes as u32), rng.gen_range(0..nodes as u32)));
        let (row, tree, l) = label_tree("preferential-attachment", &graph, root, pairs)?;
        rows.push(row.with("tree", t));
        trees.push(tree);
        labels.push(l);
    }
    // The router measured: a node of middling degree (not a hub, not a leaf).
    let router = by_degree[nodes / 20];
    rows.push(forward_speed(cfg, &trees[0], &labels[0], router));
    Ok(Locators { trees, labels, router })
}

/// Walks every (source, destination) pair hop by hop with TZ forwarding, checking each hop
/// against the tree path: (pairs tried, pairs delivered with every hop right).
fn deliver(tree: &Tree, l: &TzLabels, pairs: impl Iterator<Item = (u32, u32)>) -> (u64, u64) {
    let (mut tried, mut delivered) = (0u64, 0u64);
    for (s, d) in pairs {
        tried += 1;
        let mut at = s;
        for _ in 0..=tree.len() {
            match l.router(at).forward(&l.label(d)) {
                Ok(Hop::Deliver) => {
                    delivered += u64::from(at == d);
                    break;
                }
                Ok(Hop::Interface(i)) => {
                    let next = l.neighbor(at, i);
                    if next != Some(next_on_path(tree, at, d)) {
                        break;
                    }
                    at = next.unwrap_or(at);
                }
                Err(_) => break,
            }
        }
    }
    (tried, delivered)
}

/// Labels the BFS tree of `graph` from `root` and walks `pairs` over it: the row of label sizes
/// and deliveries, the tree and its labels.
fn label_tree(
    topology: &str,
    graph: &[Vec<u32>],
    root: u32,
    pairs: impl Iterator<Item = (u32, u32)>,
) -> anyhow::Result<(Row, Tree, TzLabels)> {
    let nodes = graph.len() as u32;
    let tree = Tree::bfs(graph, root)?;
    let (l, label_s) = timed(|| TzLabels::build(&tree));
    let l = l?;
    let bits: Vec<u32> = (0..nodes).map(|v| l.label_bits(v)).collect();
    let (tried, delivered) = deliver(&tree, &l, pairs);
    let row = Row::new("tz")
        .with("topology", topology)
        .with("nodes", nodes as usize)
        .with("edges", graph.iter().map(Vec::len).sum::<usize>() / 2)
        .with("root_degree", graph[root as usize].len())
        .with("label_bits_max", bits.iter().copied().max().unwrap_or(0))
        .with("label_bits_mean", bits.iter().map(|&b| f64::from(b)).sum::<f64>() / f64::from(nodes.max(1)))
        .with("label_bits_bound", 3.4 * f64::from(nodes.max(2)).log2())
        .with("label_s", label_s)
        .with("pairs", tried)
        .with("delivered", delivered)
        .with("mismatches", tried - delivered);
    Ok((row, tree, l))
}

/// TZ on real topologies: the CAIDA per-AS topologies `topohub` ships (quick: the 8 largest). On
/// each, the BFS tree from its best-connected node, its labels, and every ordered pair of nodes
/// delivered hop by hop (quick: up to 20,000 pairs), each hop checked against the tree path.
pub(super) fn real_locators(cfg: &RunConfig) -> anyhow::Result<Vec<Row>> {
    let dir = crate::workload::topologies::topohub_dir()?;
    let mut topologies = crate::workload::topologies::load_set(&dir, crate::workload::topologies::CAIDA)?;
    if cfg.quick {
        topologies.truncate(8);
    }
    let mut rows = Vec::new();
    for topo in &topologies {
        let nodes = topo.adjacency.len() as u64;
        let root = (0..nodes as u32).max_by_key(|&v| topo.adjacency[v as usize].len()).unwrap_or(0);
        let all = nodes * nodes;
        let step = if cfg.quick { all.div_ceil(20_000).max(1) } else { 1 };
        let pairs = (0..all).step_by(step as usize).map(|k| ((k / nodes) as u32, (k % nodes) as u32));
        rows.push(label_tree(&topo.name, &topo.adjacency, root, pairs)?.0);
    }
    Ok(rows)
}

/// The node after `at` on the tree path to `dest` (`at` itself when they are equal).
pub(super) fn next_on_path(tree: &Tree, at: u32, dest: u32) -> u32 {
    let mut v = dest;
    while v != at {
        let p = tree.parent(v);
        if p == at {
            return v;
        }
        if p == NO_PARENT {
            return tree.parent(at);
        }
        v = p;
    }
    at
}

/// Neighbour → the interface of `router` that leads to it.
pub(super) fn interfaces_of(labels: &TzLabels, router: u32) -> hashbrown::HashMap<u32, u16> {
    (0..labels.interfaces(router)).filter_map(|i| labels.neighbor(router, i).map(|v| (v, i))).collect()
}

/// ns per TZ forward at one router over random destinations, checked against the tree path.
fn forward_speed(cfg: &RunConfig, tree: &Tree, labels: &TzLabels, router: u32) -> Row {
    const DELIVER: u32 = u32::MAX - 1;
    const ERROR: u32 = u32::MAX;
    // Destinations as a router sees them: in a header just received, so in cache — 64K labels
    // (1.5 MB) forwarded `passes` times per repetition.
    let n = 1 << 16;
    let passes = if cfg.quick { 4 } else { 64 };
    let mut rng = SmallRng::seed_from_u64(0xf0);
    let dest_nodes: Vec<u32> = (0..n).map(|_| rng.gen_range(0..labels.len() as u32)).collect();
    let dests: Vec<Label> = dest_nodes.iter().map(|&v| labels.label(v)).collect();
    let interface_of = interfaces_of(labels, router);
    let reference: Vec<u32> = dest_nodes
        .iter()
        .map(|&d| if d == router { DELIVER } else { interface_of.get(&next_on_path(tree, router, d)).map_or(ERROR, |&i| u32::from(i)) })
        .collect();
    let r = *labels.router(router);
    let mut contenders = vec![Contender::new("tz", |out: &mut Vec<u32>| {
        out.resize(n, 0);
        for _ in 0..passes {
            for (d, o) in dests.iter().zip(out.iter_mut()) {
                *o = match r.forward(d) {
                    Ok(Hop::Interface(i)) => u32::from(i),
                    Ok(Hop::Deliver) => DELIVER,
                    Err(_) => ERROR,
                };
            }
        }
    })];
    let o = compare(cfg.reps, &reference, &mut contenders);
    Row::new("tz")
        .with("topology", "preferential-attachment")
        .with("nodes", labels.len())
        .with("router", router)
        .with("router_interfaces", labels.interfaces(router))
        .with("forwards", n * passes)
        .with("ns_per_forward", o[0].ns_per_op(n * passes))
        .with("mismatches", o[0].mismatches)
}
