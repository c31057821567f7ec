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

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use anyhow::{bail, Context};
use nexthop_lab::progress;
use nexthop_lookup::table_file::for_each_line;

mod flat;
mod ip;
mod name;
mod tag;
mod tz;

/// Arguments of `nexthop fib`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    table: Table,
}

#[derive(Debug, clap::Subcommand)]
enum Table {
    /// A TagNet descriptor FIB: match descriptors by subset (FAS, or FLS with --fls).
    Tag(tag::Args),
    /// IPv4/IPv6 routes in the Bloom-filter tables: longest prefix match of addresses.
    Ip(ip::Args),
    /// NDN name routes in the binary search of hash tables: longest name prefix match.
    Name(name::Args),
    /// Flat names in a Concise FIB (Othello hashing): exact match.
    Flat(flat::Args),
    /// A graph's BFS tree labelled by Thorup–Zwick: locators and the paths packets take.
    Tz(tz::Args),
}

/// Runs `nexthop fib`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let bad_keys = match args.table {
        Table::Tag(a) => tag::run(&a)?,
        Table::Ip(a) => ip::run(&a)?,
        Table::Name(a) => name::run(&a)?,
        Table::Flat(a) => flat::run(&a)?,
        Table::Tz(a) => tz::run(&a)?,
    };
    if bad_keys > 0 {
        bail!("{bad_keys} key(s) could not be read");
    }
    Ok(())
}

/// Reads the file at `path` with `read`, which gets the file and a progress callback (lines read
/// so far) that drives a line counter on stderr; an error names the file.
fn read_file<T, E: std::fmt::Display>(
    path: &Path,
    read: impl FnOnce(BufReader<File>, &mut dyn FnMut(usize)) -> Result<T, E>,
) -> anyhow::Result<T> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let bar = progress::counter("lines read");
    let out = read(BufReader::new(file), &mut |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    out.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
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

/// Reads `path` line by line: `parse(line)` for each line that is not blank or a `#` comment, with
/// a line counter on stderr; the first error names the file and line.
fn read_lines(path: &Path, parse: impl FnMut(&str) -> Result<(), String>) -> anyhow::Result<()> {
    read_file(path, |reader, progress| for_each_line(reader, &['#'], progress, parse))
}
