//! `nexthop fib`: builds one of nexthop's lookup tables from a file of yours and looks keys up in
//! it — the data structures of the forwarding plane on your own routes, outside the forwarder.
//!
//! - `nexthop fib tag FILE [DESCRIPTOR ...]`: a TagNet descriptor FIB (one `descriptor ->
//!   tree:interface ...` per line, [`nexthop_lookup::tag::read_fib_file`]) compiled to the
//!   matcher's trie; each descriptor (tags, or a `/`-name) is matched with Find All Subsets (the
//!   ports of every entry it contains) or, with `--fls`, Find Largest Subset.
//! - `nexthop fib ip FILE [ADDRESS ...]`: IPv4/IPv6 routes (`prefix/len next-hop` per line, the
//!   pyasn format, [`nexthop_lookup::ip::parse_routes`]) in the Bloom-filter tables; each address
//!   is answered with the next hop of its longest matching prefix.
//!
//! Keys come from the command line or, when none is given there, one per line from standard
//! input (blank lines and `#` lines skipped); answers go to standard output, one line per key:
//! the key, a tab, the answer (`-` for none). A bad key is an error line on standard error and
//! the others are still answered (the exit status is then 1). The table's size and build time
//! go to standard error. A file with a bad line is refused whole, naming the line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use nexthop_lab::progress;
use nexthop_lookup::ip::{self, Bloomfwd4, Bloomfwd6, NextHop, DEFAULT_FPR, NO_ROUTE};
use nexthop_lookup::tag::{self, Compression, DescriptorFib, Fanout, Layout, MatchScratch, PortSet};

/// Arguments of `nexthop fib`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    table: Table,
}

#[derive(Debug, clap::Subcommand)]
enum Table {
    /// A TagNet descriptor FIB: match descriptors by subset (FAS, or FLS with --fls).
    Tag(TagArgs),
    /// IPv4/IPv6 routes in the Bloom-filter tables: longest prefix match of addresses.
    Ip(IpArgs),
}

/// Arguments of `nexthop fib tag`.
#[derive(Debug, clap::Args)]
struct TagArgs {
    /// The FIB file: `descriptor -> tree:interface ...` per line (descriptor: tags separated by
    /// spaces, or a /hierarchical/name).
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
}

/// Arguments of `nexthop fib ip`.
#[derive(Debug, clap::Args)]
struct IpArgs {
    /// The route file: `prefix/len next-hop` per line (IPv4 and IPv6 may be mixed).
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

fn parse_compression(s: &str) -> Result<Compression, String> {
    [Compression::None, Compression::Perm, Compression::PermChain, Compression::RareChain]
        .into_iter()
        .find(|c| c.name() == s)
        .ok_or_else(|| format!("unknown compression {s:?} (none, perm, perm+chain, rare+chain)"))
}

fn parse_layout(s: &str) -> Result<Layout, String> {
    [Layout::Sol, Layout::Srol].into_iter().find(|l| l.name() == s).ok_or_else(|| format!("unknown layout {s:?} (sol, srol)"))
}

/// Runs `nexthop fib`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let bad_keys = match args.table {
        Table::Tag(a) => tag(&a)?,
        Table::Ip(a) => ip(&a)?,
    };
    if bad_keys > 0 {
        bail!("{bad_keys} key(s) could not be read");
    }
    Ok(())
}

/// Opens `path` for reading, with a spinner that counts lines while it is read.
fn open(path: &Path) -> anyhow::Result<(BufReader<File>, indicatif::ProgressBar)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok((BufReader::new(file), progress::counter("lines read")))
}

/// Each key of `args` or, if there are none, each line of standard input (blank and `#` lines
/// skipped) with `answer(key)`'s line, or its error on standard error. Returns the errors.
fn answer_each(args: &[String], mut answer: impl FnMut(&str) -> anyhow::Result<String>) -> anyhow::Result<usize> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut bad = 0;
    let mut one = |key: &str, out: &mut io::BufWriter<io::StdoutLock<'_>>| -> io::Result<()> {
        match answer(key) {
            Ok(a) => writeln!(out, "{key}\t{a}"),
            Err(e) => {
                bad += 1;
                eprintln!("{key:?}: {e:#}");
                Ok(())
            }
        }
    };
    if args.is_empty() {
        for line in io::stdin().lock().lines() {
            let line = line.context("reading standard input")?;
            let key = line.trim();
            if !(key.is_empty() || key.starts_with('#')) {
                one(key, &mut out)?;
            }
        }
    } else {
        for key in args {
            one(key.trim(), &mut out)?;
        }
    }
    out.flush()?;
    Ok(bad)
}

fn tag(args: &TagArgs) -> anyhow::Result<usize> {
    let started = Instant::now();
    let (reader, bar) = open(&args.file)?;
    let fib = tag::read_fib_file(reader, |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    let fib = fib.map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    eprintln!(
        "{}: {} descriptors, {} ports, read in {:.2} s",
        args.file.display(),
        fib.len(),
        fib.port_count(),
        started.elapsed().as_secs_f64()
    );
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

/// `set` as `tree:interface` pairs, or `-`.
fn ports(fib: &DescriptorFib, set: &PortSet) -> String {
    let all: Vec<String> = set.iter().filter_map(|id| fib.port(id)).map(|p| format!("{}:{}", p.tree, p.interface)).collect();
    if all.is_empty() {
        "-".into()
    } else {
        all.join(" ")
    }
}

fn ip(args: &IpArgs) -> anyhow::Result<usize> {
    let started = Instant::now();
    let (reader, bar) = open(&args.file)?;
    let routes = ip::parse_routes(reader, |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    let routes = routes.map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
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
    let hop = |h: NextHop| if h == NO_ROUTE { "-".to_string() } else { h.to_string() };
    answer_each(&args.addresses, |key| {
        Ok(match key.parse::<IpAddr>().map_err(|e| anyhow::anyhow!("not an IP address ({e})"))? {
            IpAddr::V4(a) => hop(v4.lookup(u32::from(a))),
            IpAddr::V6(a) => hop(v6.lookup(u128::from(a))),
        })
    })
}
