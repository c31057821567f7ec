//! `nexthop gen`: the experiments' workloads written as files — a table in the format
//! `nexthop fib` reads and the keys to look up in it — so they can be looked at, fed to
//! `nexthop fib` or to another tool, and made again from the same seed.
//!
//! Each subcommand writes `<out>/table.txt` and `<out>/keys.txt` (one key per line) and says how
//! to look the keys up:
//! - `tag`: a TagNet descriptor FIB (`descriptor -> tree:interface ...`) of the `tagnet`
//!   experiment's Zipf, app-tagged or CCN-name descriptors, and packet descriptors: a FIB
//!   descriptor plus up to `--extra-tags` Zipf tags, so every one matches; CCN: names of the
//!   name workload extended by 0–3 components (those extending one of the routes left out of a
//!   FIB smaller than the URL list, a tenth at 20,000, match nothing).
//! - `tz`: the preferential-attachment graph of the paper's size (`node node` per edge) and
//!   random `SRC DST` pairs.
//! - `name`: NDN name routes (`/prefix face cost`, a line per next hop) of the `name-fib`
//!   experiment's URL or worst-case FIBs, and lookup names that extend a route by 0–3 components.
//! - `ip`: a RouteViews table as shipped (`prefix/len AS`; `--table 2014` or `2015`, IPv4 and
//!   IPv6) or a synthetic IPv4 table of `--routes` prefixes with the 2014 table's lengths, and
//!   destination addresses (uniform, matching, or Zipf over the routes).
//! - `flat`: flat names (MAC addresses, `name action`) and lookups, a share of them outside.
//!
//! The files start with a `#` line that says what made them; `nexthop fib` skips it.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use nexthop_lab::progress;

mod flat;
mod ip;
mod name;
mod tag;
mod tz;

/// Arguments of `nexthop gen`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    table: Table,
}

/// Where the files go and what seeds the draws (every subcommand).
#[derive(Debug, clap::Args)]
struct Output {
    /// The directory to write `table.txt` and `keys.txt` into (made if missing).
    #[arg(long)]
    out: PathBuf,
    /// Seed of every random choice (the same seed writes the same files).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, clap::Subcommand)]
enum Table {
    /// A TagNet descriptor FIB and packet descriptors that match it (for `nexthop fib tag`).
    Tag(tag::Args),
    /// An AS-like graph and node pairs (for `nexthop fib tz`).
    Tz(tz::Args),
    /// NDN name routes and lookup names (for `nexthop fib name`).
    Name(name::Args),
    /// IP routes and destination addresses (for `nexthop fib ip`).
    Ip(ip::Args),
    /// Flat names with actions, and lookups (for `nexthop fib flat`).
    Flat(flat::Args),
}

/// Runs `nexthop gen`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.table {
        Table::Tag(a) => tag::run(&a),
        Table::Tz(a) => tz::run(&a),
        Table::Name(a) => name::run(&a),
        Table::Ip(a) => ip::run(&a),
        Table::Flat(a) => flat::run(&a),
    }
}

/// Writes `<out>/table.txt` and `<out>/keys.txt`: `header` (a `#` comment line), then the
/// lines `table` and `keys` write, with a line counter each; prints where they went and the
/// `nexthop fib <fib>` command that reads them.
fn write_files(
    out: &Output,
    fib: &str,
    header: &str,
    table: impl FnOnce(&mut dyn FnMut(&str) -> std::io::Result<()>) -> std::io::Result<()>,
    keys: impl FnOnce(&mut dyn FnMut(&str) -> std::io::Result<()>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    fs::create_dir_all(&out.out).with_context(|| format!("cannot make {}", out.out.display()))?;
    let table_path = out.out.join("table.txt");
    let keys_path = out.out.join("keys.txt");
    let lines = write_lines(&table_path, header, "table lines written", table)?;
    let count = write_lines(&keys_path, header, "keys written", keys)?;
    eprintln!(
        "wrote {lines} lines to {} and {count} keys to {}; look them up with\n  nexthop fib {fib} {} < {}",
        table_path.display(),
        keys_path.display(),
        table_path.display(),
        keys_path.display()
    );
    Ok(())
}

/// Writes `header` and then what `write` gives, one line per call; returns the lines given.
fn write_lines(
    path: &Path,
    header: &str,
    what: &str,
    write: impl FnOnce(&mut dyn FnMut(&str) -> std::io::Result<()>) -> std::io::Result<()>,
) -> anyhow::Result<usize> {
    let file = File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut w = BufWriter::new(file);
    let bar = progress::counter(what);
    let mut n = 0usize;
    let result = writeln!(w, "# {header}").and_then(|()| {
        write(&mut |line| {
            n += 1;
            if n.is_multiple_of(65_536) {
                bar.set_position(n as u64);
            }
            writeln!(w, "{line}")
        })
    });
    bar.finish_and_clear();
    result.and_then(|()| w.flush()).with_context(|| format!("writing {}", path.display()))?;
    Ok(n)
}
