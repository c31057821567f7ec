//! `nexthop fib tag`: a TagNet descriptor FIB from a file, matched by Find All Subsets or Find
//! Largest Subset.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use nexthop_lookup::tag::{self, CompiledFib, Compression, DescriptorFib, Fanout, Layout, MatchScratch, PortSet};

use super::{answer_each, read_file};

/// Arguments of `nexthop fib tag`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The FIB file: `descriptor -> tree:interface ...` per line (descriptor: tags separated by
    /// spaces, a /hierarchical/name, or the filter as 192 characters 0 or 1).
    file: PathBuf,
    /// Descriptors to match (tags separated by spaces, in one argument, or a /name); none: read
    /// them from standard input, one per line.
    descriptors: Vec<String>,
    /// Find Largest Subset (the entry of greatest weight the descriptor contains) instead of
    /// Find All Subsets.
    #[arg(long)]
    fls: bool,
    /// FAS: stop once this many ports are chosen (default: all of them).
    #[arg(long, value_name = "K")]
    fanout: Option<usize>,
    /// Only the ports on this tree (what a packet travelling on it may be forwarded to).
    #[arg(long)]
    tree: Option<u16>,
    /// How the trie is compressed: none, perm, perm+chain (the paper's) or rare+chain.
    #[arg(long, default_value = "rare+chain", value_parser = parse_compression)]
    compression: Compression,
    /// Node layout: sol or srol.
    #[arg(long, default_value = "srol", value_parser = parse_layout)]
    layout: Layout,
    /// Instead of matching, print the FIB's size under each compression — trie nodes and
    /// bytes (the uncompressed forms counted, not built), and the share each saves against
    /// none: what the bit permutation and chain removal do to this FIB.
    #[arg(long, conflicts_with_all = ["descriptors", "fls", "fanout", "tree", "compression"])]
    sizes: bool,
}

fn parse_compression(s: &str) -> Result<Compression, String> {
    Compression::ALL
        .into_iter()
        .find(|c| c.name() == s)
        .ok_or_else(|| format!("unknown compression {s:?} (none, perm, perm+chain, rare+chain)"))
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    Layout::ALL.into_iter().find(|l| l.name() == s).ok_or_else(|| format!("unknown layout {s:?} (sol, srol)"))
}

pub(super) fn run(args: &Args) -> anyhow::Result<usize> {
    let started = Instant::now();
    let fib = read_file(&args.file, |reader, progress| tag::read_fib_file(reader, progress))?;
    eprintln!(
        "{}: {} descriptors, {} ports, read in {:.2} s",
        args.file.display(),
        fib.len(),
        fib.port_count(),
        started.elapsed().as_secs_f64()
    );
    if args.sizes {
        print_sizes(&fib, args.layout)?;
        return Ok(0);
    }
    let started = Instant::now();
    let compiled = fib.compile(args.compression, args.layout).context("compiling the FIB")?;
    eprintln!(
        "compiled {}/{}: {} nodes, {} bytes, in {:.2} s",
        args.compression.name(),
        args.layout.name(),
        compiled.node_count(),
        compiled.memory_bytes(),
        started.elapsed().as_secs_f64()
    );
    let allowed = args.tree.map_or(PortSet::ALL, |t| fib.tree_ports(t));
    let fanout = args.fanout.map_or(Ok(Fanout::ALL), Fanout::new)?;
    let mut scratch = MatchScratch::new();
    answer_each(&args.descriptors, |key| {
        let d = tag::parse_descriptor(key)?;
        Ok(if args.fls {
            match compiled.fls(&d, &mut scratch) {
                Some(best) => format!("weight {}: {}", best.weight, ports(&fib, &best.ports.intersection(&allowed))),
                None => "-".into(),
            }
        } else {
            ports(&fib, &compiled.fas(&d, fanout, &allowed, &mut scratch))
        })
    })
}

/// Prints `fib`'s nodes and bytes under each compression (`layout` for the compiled ones; the
/// layout changes where nodes are, not how many) and what each saves against none.
fn print_sizes(fib: &DescriptorFib, layout: Layout) -> anyhow::Result<()> {
    let entries = || fib.entries().map(|(d, set)| (*d, *set));
    let mut rows = Vec::new();
    for (compression, permuted) in [(Compression::None, false), (Compression::Perm, true)] {
        let size = CompiledFib::plain_size(entries(), fib.len(), permuted).context("counting the trie")?;
        rows.push((compression, size.nodes, size.bytes));
    }
    for compression in [Compression::PermChain, Compression::RareChain] {
        let compiled = fib.compile(compression, layout).context("compiling the FIB")?;
        rows.push((compression, compiled.node_count() as u64, compiled.memory_bytes() as u64));
    }
    let none = rows[0].2 as f64;
    println!("compression\tnodes\tbytes\tsaved");
    for (compression, nodes, bytes) in rows {
        println!("{}\t{nodes}\t{bytes}\t{:.1}%", compression.name(), 100.0 * (1.0 - bytes as f64 / none));
    }
    Ok(())
}

/// `set` as `tree:interface` pairs, or `-`.
fn ports(fib: &DescriptorFib, set: &PortSet) -> String {
    let all: Vec<String> = set.iter().filter_map(|id| fib.port(id)).map(|p| format!("{}:{}", p.tree, p.interface)).collect();
    if all.is_empty() {
        "-".into()
    } else {
        all.join(" ")
    }
}
