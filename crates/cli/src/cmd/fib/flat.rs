//! `nexthop fib flat`: flat names from a file in a Concise FIB (Othello), exact match.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use nexthop_lookup::flat::{Othello, OthelloConfig};

use super::{answer_each, read_lines};

/// Arguments of `nexthop fib flat`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The name file: `name action` per line (action: a decimal number below 2^24).
    file: PathBuf,
    /// Names to look up; none: read them from standard input, one per line.
    names: Vec<String>,
    /// Checksum bits stored per name, to tell names outside the FIB (0–8).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=8))]
    checksum_bits: u32,
}

pub(super) fn run(args: &Args) -> anyhow::Result<usize> {
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
