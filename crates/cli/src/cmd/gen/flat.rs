//! `nexthop gen flat`: flat names (MAC addresses, the Concise FIB's layer-2 use) with actions,
//! and lookups of which a share is outside the FIB.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{write_files, Output};

/// Arguments of `nexthop gen flat`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    out: Output,
    /// Names in the FIB.
    #[arg(long, default_value_t = 1_000_000)]
    names: usize,
    /// Actions: each name gets one of this many (at most 2^24).
    #[arg(long, default_value_t = 256)]
    actions: u32,
    /// Lookups.
    #[arg(long, default_value_t = 10_000)]
    lookups: usize,
    /// The share of lookups for names outside the FIB (0–1).
    #[arg(long, default_value_t = 0.1)]
    outside: f64,
}

/// The MAC address of name `i`: locally administered unicast (`02:…`), distinct for each i <
/// 2^40 (an odd multiplier is a bijection mod 2^40).
fn mac(i: u64) -> String {
    let x = i.wrapping_mul(0x9e37_79b9_7f4b) & ((1 << 40) - 1);
    let b = x.to_be_bytes();
    format!("02:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[3], b[4], b[5], b[6], b[7])
}

pub(super) fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.names > 0 && (args.names as u64) < 1 << 39, "--names must be 1 to 2^39 − 1");
    anyhow::ensure!((1..=1 << 24).contains(&args.actions), "--actions must be 1 to 2^24");
    anyhow::ensure!((0.0..=1.0).contains(&args.outside), "--outside is a share, 0 to 1");
    let seed = args.out.seed;
    let action = |i: u64| (i.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) % u64::from(args.actions);
    let mut rng = SmallRng::seed_from_u64(seed);
    let n = args.names as u64;
    let header = format!(
        "nexthop gen flat --names {} --actions {} --lookups {} --outside {} --seed {seed}",
        args.names, args.actions, args.lookups, args.outside
    );
    write_files(
        &args.out,
        "flat",
        &header,
        |line| (0..n).try_for_each(|i| line(&format!("{} {}", mac(i), action(i)))),
        |line| {
            for _ in 0..args.lookups {
                // Names n.. are outside the FIB (mac is a bijection).
                let i = if rng.gen_bool(args.outside) { n + rng.gen_range(0..n) } else { rng.gen_range(0..n) };
                line(&mac(i))?;
            }
            Ok(())
        },
    )
}
