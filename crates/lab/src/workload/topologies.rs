//! Real network topologies for the `tagnet` experiment's locators: the CAIDA per-AS topologies
//! (ITDK, 2024-08) that the PyPI package `topohub` ships as JSON, installed into `.venv` by
//! `scripts/setup.sh`.
//!
//! Each file is a networkx node-link graph: `nodes` with an `id`, `edges` with `source` and
//! `target`. A topology is read into adjacency lists over dense node numbers, self-loops and
//! repeated edges dropped, and cut to its largest connected component (a spanning tree needs one).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// The topology sets `topohub` ships that are measured router topologies of one AS each.
pub const CAIDA: &str = "caida/2024-08";

/// One named graph.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Its name, e.g. `caida-as7018`.
    pub name: String,
    /// Neighbours of each node.
    pub adjacency: Vec<Vec<u32>>,
}

impl Topology {
    /// Undirected edges.
    pub fn edges(&self) -> usize {
        self.adjacency.iter().map(Vec::len).sum::<usize>() / 2
    }
}

/// Where `topohub`'s data lies: `NEXTHOP_TOPOHUB`, else the package inside the project's `.venv`
/// (found from the current directory or the running binary's).
pub fn topohub_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("NEXTHOP_TOPOHUB") {
        return Ok(PathBuf::from(dir));
    }
    let mut roots: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    for root in roots {
        let Ok(libs) = std::fs::read_dir(root.join(".venv/lib")) else { continue };
        for lib in libs.flatten() {
            let data = lib.path().join("site-packages/topohub/data");
            if data.is_dir() {
                return Ok(data);
            }
        }
    }
    bail!("topohub's data not found (install it into .venv with scripts/setup.sh, or set NEXTHOP_TOPOHUB)")
}

/// Every topology of a set (e.g. [`CAIDA`]) under `dir`, largest first.
pub fn load_set(dir: &Path, set: &str) -> anyhow::Result<Vec<Topology>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(set))
        .with_context(|| format!("{}", dir.join(set).display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let prefix = set.split('/').next().unwrap_or(set);
    let mut out = Vec::new();
    for f in files {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        let text = std::fs::read_to_string(&f).with_context(|| f.display().to_string())?;
        let adjacency = parse_node_link(&text).with_context(|| f.display().to_string())?;
        out.push(Topology { name: format!("{prefix}-as{stem}"), adjacency });
    }
    out.sort_by_key(|t| std::cmp::Reverse((t.adjacency.len(), t.edges())));
    Ok(out)
}

/// A node-link JSON graph as adjacency lists over its largest connected component.
pub fn parse_node_link(text: &str) -> anyhow::Result<Vec<Vec<u32>>> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    let id = |x: &serde_json::Value| x.as_u64().or_else(|| x.as_str().and_then(|s| s.parse().ok()));
    let nodes = v["nodes"].as_array().context("no `nodes` array")?;
    let mut index = hashbrown::HashMap::new();
    for n in nodes {
        let i = id(&n["id"]).context("a node without a numeric id")?;
        let next = index.len() as u32;
        index.entry(i).or_insert(next);
    }
    let mut adjacency = vec![Vec::new(); index.len()];
    for e in v["edges"].as_array().or_else(|| v["links"].as_array()).context("no `edges` array")? {
        let end = |k: &str| id(&e[k]).and_then(|i| index.get(&i).copied()).with_context(|| format!("an edge whose {k} is not a node"));
        let (a, b) = (end("source")?, end("target")?);
        if a != b && !adjacency[a as usize].contains(&b) {
            adjacency[a as usize].push(b);
            adjacency[b as usize].push(a);
        }
    }
    Ok(largest_component(&adjacency))
}

/// The largest connected component, renumbered densely.
fn largest_component(adjacency: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let n = adjacency.len();
    let mut component = vec![u32::MAX; n];
    let mut sizes = Vec::new();
    for start in 0..n {
        if component[start] != u32::MAX {
            continue;
        }
        let c = sizes.len() as u32;
        let mut stack = vec![start];
        component[start] = c;
        let mut size = 0;
        while let Some(v) = stack.pop() {
            size += 1;
            for &w in &adjacency[v] {
                if component[w as usize] == u32::MAX {
                    component[w as usize] = c;
                    stack.push(w as usize);
                }
            }
        }
        sizes.push(size);
    }
    let Some(best) = (0..sizes.len()).max_by_key(|&c| sizes[c]) else { return Vec::new() };
    let mut renumber = vec![u32::MAX; n];
    let mut next = 0;
    for v in 0..n {
        if component[v] == best as u32 {
            renumber[v] = next;
            next += 1;
        }
    }
    (0..n).filter(|&v| component[v] == best as u32).map(|v| adjacency[v].iter().map(|&w| renumber[w as usize]).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_link_keeps_the_largest_component() {
        let text = r#"{"nodes":[{"id":10},{"id":20},{"id":30},{"id":40},{"id":50}],
            "edges":[{"source":10,"target":20},{"source":20,"target":30},{"source":30,"target":10},
                     {"source":20,"target":10},{"source":40,"target":40},{"source":40,"target":50}]}"#;
        let adj = parse_node_link(text).unwrap();
        assert_eq!(adj.len(), 3, "the triangle, not the 40–50 pair");
        assert!(adj.iter().all(|n| n.len() == 2), "the repeated edge is dropped: {adj:?}");
    }

    #[test]
    fn bad_graphs_are_errors() {
        assert!(parse_node_link("{}").is_err());
        assert!(parse_node_link(r#"{"nodes":[{"id":1}],"edges":[{"source":1,"target":2}]}"#).is_err());
    }
}
