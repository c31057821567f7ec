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
//! - `nexthop fib name FILE [NAME ...]`: NDN name routes (`/prefix face [cost]` per line; a prefix
//!   on several lines gets each face) in the binary search of hash tables; each name is answered
//!   with its longest matching route and that route's next hops (`face:cost`, cheapest first).
//! - `nexthop fib flat FILE [NAME ...]`: flat names (`name action` per line, a name any string
//!   without white space) in a Concise FIB (Othello); each name is answered with its action, or
//!   `-` when its checksum bits say it is not in the FIB (`--checksum-bits r`: a name outside
//!   slips through with probability 2^−r — the Concise FIB stores no names).
//! - `nexthop fib tz FILE [PAIR ...]`: a graph (`node node` per edge, nodes any names without
//!   white space), its BFS spanning tree from `--root` (default: the node of highest degree)
//!   labelled by Thorup–Zwick; each pair `SRC DST` is answered with DST's locator (id and bits)
//!   and the path a packet addressed by it takes from SRC, each router forwarding by its own
//!   state alone (the paper's Figure 6).
//!
//! Keys come from the command line or, when none is given there, one per line from standard
//! input (blank lines and `#` lines skipped); answers go to standard output, one line per key:
//! the key, a tab, the answer (`-` for none). A bad key is an error line on standard error and
//! the others are still answered (the exit status is then 1). The table's size and build time
//! go to standard error. A file with a bad line is refused whole, naming the line.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use nexthop_fw::fib::Fib;
use nexthop_lab::progress;
use nexthop_lookup::flat::{Othello, OthelloConfig};
use nexthop_lookup::ip::{self, Bloomfwd4, Bloomfwd6, NextHop, DEFAULT_FPR, NO_ROUTE};
use nexthop_lookup::name::{self, NextHops};
use nexthop_lookup::tag::{self, Compression, DescriptorFib, Fanout, Hop, Layout, MatchScratch, PortSet, Tree, TzLabels};
use nexthop_wire::Name;

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
    /// NDN name routes in the binary search of hash tables: longest name prefix match.
    Name(NameArgs),
    /// Flat names in a Concise FIB (Othello hashing): exact match.
    Flat(FlatArgs),
    /// A graph's BFS tree labelled by Thorup–Zwick: locators and the paths packets take.
    Tz(TzArgs),
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

/// Arguments of `nexthop fib name`.
#[derive(Debug, clap::Args)]
struct NameArgs {
    /// The route file: `/prefix face [cost]` per line (face and cost: decimal numbers).
    file: PathBuf,
    /// Names to look up (NDN URIs); none: read them from standard input, one per line.
    names: Vec<String>,
}

/// Arguments of `nexthop fib flat`.
#[derive(Debug, clap::Args)]
struct FlatArgs {
    /// The name file: `name action` per line (action: a decimal number below 2^24).
    file: PathBuf,
    /// Names to look up; none: read them from standard input, one per line.
    names: Vec<String>,
    /// Checksum bits stored per name, to tell names outside the FIB (0–8).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=8))]
    checksum_bits: u32,
}

/// Arguments of `nexthop fib tz`.
#[derive(Debug, clap::Args)]
struct TzArgs {
    /// The graph: `node node` per edge (node names without white space).
    file: PathBuf,
    /// Pairs `SRC DST` (one argument each, e.g. "a b"); none: read them from standard input.
    pairs: Vec<String>,
    /// The tree's root (default: the node of highest degree).
    #[arg(long)]
    root: Option<String>,
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
        Table::Name(a) => name(&a)?,
        Table::Flat(a) => flat(&a)?,
        Table::Tz(a) => tz(&a)?,
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

/// Reads `path` line by line: `parse(line)` for each line that is not blank or a `#` comment, with
/// a line counter on stderr; the first error names the file and line.
fn read_lines(path: &Path, mut parse: impl FnMut(&str) -> Result<(), String>) -> anyhow::Result<()> {
    let (reader, bar) = open(path)?;
    for (i, line) in reader.lines().enumerate() {
        let at = || format!("{}: line {}", path.display(), i + 1);
        let line = line.with_context(at)?;
        let t = line.trim();
        if !(t.is_empty() || t.starts_with('#')) {
            parse(t).map_err(|e| anyhow::anyhow!("{}: {e}", at()))?;
        }
        if i % 65_536 == 0 {
            bar.set_position(i as u64);
        }
    }
    bar.finish_and_clear();
    Ok(())
}

fn name(args: &NameArgs) -> anyhow::Result<usize> {
    let started = Instant::now();
    let mut routes: HashMap<Name, Vec<name::NextHop>> = HashMap::new();
    read_lines(&args.file, |line| {
        let mut parts = line.split_whitespace();
        let (Some(prefix), Some(face)) = (parts.next(), parts.next()) else { return Err("expected `/prefix face [cost]`".into()) };
        let prefix = Name::from_uri(prefix).map_err(|e| format!("bad prefix {prefix:?}: {e}"))?;
        let face = face.parse().map_err(|_| format!("bad face {face:?}"))?;
        let cost = parts.next().map_or(Ok(0), |c| c.parse().map_err(|_| format!("bad cost {c:?}")))?;
        if parts.next().is_some() {
            return Err("too many fields".into());
        }
        routes.entry(prefix).or_default().push(name::NextHop { face, cost });
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

fn flat(args: &FlatArgs) -> anyhow::Result<usize> {
    const ACTION_BITS: u32 = 24;
    let started = Instant::now();
    let mut pairs: Vec<(Vec<u8>, u32)> = Vec::new();
    let mut seen = HashSet::new();
    read_lines(&args.file, |line| {
        let mut parts = line.split_whitespace();
        let (Some(key), Some(action), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err("expected `name action`".into());
        };
        let action: u32 =
            action.parse().ok().filter(|&a| a < 1 << ACTION_BITS).ok_or_else(|| format!("bad action {action:?} (0 to 2^24 − 1)"))?;
        if !seen.insert(key.to_string()) {
            return Err(format!("{key:?} is already in the file"));
        }
        pairs.push((key.as_bytes().to_vec(), action));
        Ok(())
    })?;
    let value_bits = pairs.iter().map(|p| p.1).max().map_or(1, |m| (32 - m.leading_zeros()).max(1));
    let cfg = OthelloConfig { checksum_bits: args.checksum_bits, ..OthelloConfig::new(value_bits) };
    let control = Othello::<u32>::construct(cfg, pairs.iter().map(|(k, a)| (k.as_slice(), *a))).context("building the Concise FIB")?;
    let query = control.query();
    eprintln!(
        "{}: {} names, read and built in {:.2} s ({value_bits} action bits, {} checksum bits: {} bytes in the data plane)",
        args.file.display(),
        control.len(),
        started.elapsed().as_secs_f64(),
        args.checksum_bits,
        query.bytes()
    );
    answer_each(&args.names, |key| Ok(query.lookup_checked(key.as_bytes()).map_or_else(|| "-".into(), |a| a.to_string())))
}

fn tz(args: &TzArgs) -> anyhow::Result<usize> {
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
        if u == v {
            return Err(format!("a loop at {u:?}"));
        }
        let (u, v) = (id(u, &mut adjacency), id(v, &mut adjacency));
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
