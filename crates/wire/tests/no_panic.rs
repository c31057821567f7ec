//! Decoding random and mutated byte strings never panics, and every accepted packet keeps the
//! round-trip properties of `nexthop_wire::fuzzing`.
//!
//! The number of inputs is `NEXTHOP_FUZZ_EXECS` (default 200,000); `make test` runs 10 million
//! in release mode. Each input goes through every decoder (Interest, Data, LpPacket, the
//! dispatching decoder and the Name decoder). The seed corpus is generated valid packets; the
//! mutations are those of a coverage-less fuzzer: bit flips, byte sets, inserts, deletes,
//! truncation, length-octet nudges, slice duplication and splicing two seeds.

mod common;

use nexthop_wire::fuzzing::{check_data, check_interest, check_lp_packet, check_packet};
use nexthop_wire::{Emit, LpPacket};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn seeds() -> Vec<Vec<u8>> {
    let mut runner = TestRunner::deterministic();
    let mut out = Vec::new();
    for _ in 0..200 {
        let i = common::interest().new_tree(&mut runner).unwrap().current().to_bytes();
        let d = common::data().new_tree(&mut runner).unwrap().current().to_bytes();
        let l = common::lp_packet().new_tree(&mut runner).unwrap().current().to_bytes();
        out.push(LpPacket::wrap(d.clone()).to_bytes());
        out.extend([i, d, l]);
    }
    out
}

fn mutate(rng: &mut SmallRng, seeds: &[Vec<u8>], buf: &mut Vec<u8>) {
    buf.clear();
    if rng.gen_ratio(1, 10) {
        let len = rng.gen_range(0..64);
        buf.extend((0..len).map(|_| rng.gen::<u8>()));
        // Give random bytes a plausible outer type now and then.
        if !buf.is_empty() && rng.gen_bool(0.5) {
            buf[0] = [5u8, 6, 100, 7][rng.gen_range(0..4)];
        }
        return;
    }
    buf.extend_from_slice(&seeds[rng.gen_range(0..seeds.len())]);
    for _ in 0..rng.gen_range(1..4) {
        let n = buf.len();
        match rng.gen_range(0..8) {
            0 if n > 0 => {
                let i = rng.gen_range(0..n);
                buf[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if n > 0 => {
                let i = rng.gen_range(0..n);
                buf[i] = rng.gen();
            }
            2 => {
                let i = rng.gen_range(0..=n);
                buf.insert(i, rng.gen());
            }
            3 if n > 0 => {
                buf.remove(rng.gen_range(0..n));
            }
            4 => buf.truncate(rng.gen_range(0..=n)),
            5 if n > 1 => {
                // Nudge what is likely a TLV-LENGTH octet.
                let i = rng.gen_range(1..n);
                buf[i] = buf[i].wrapping_add(if rng.gen() { 1 } else { 255 });
            }
            6 if n > 2 => {
                let a = rng.gen_range(0..n);
                let b = rng.gen_range(a..n.min(a + 16));
                let slice = buf[a..b].to_vec();
                let at = rng.gen_range(0..=n);
                buf.splice(at..at, slice);
            }
            7 => {
                let other = &seeds[rng.gen_range(0..seeds.len())];
                let cut = rng.gen_range(0..=n);
                let from = rng.gen_range(0..=other.len());
                buf.truncate(cut);
                buf.extend_from_slice(&other[from..]);
            }
            _ => {}
        }
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let execs: u64 = std::env::var("NEXTHOP_FUZZ_EXECS").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let seeds = seeds();
    let mut rng = SmallRng::seed_from_u64(0x006e_6578_7468_6f70);
    let mut buf = Vec::with_capacity(4096);
    let mut accepted = [0u64; 4];
    for _ in 0..execs {
        mutate(&mut rng, &seeds, &mut buf);
        accepted[0] += check_interest(&buf) as u64;
        accepted[1] += check_data(&buf) as u64;
        accepted[2] += check_lp_packet(&buf) as u64;
        accepted[3] += check_packet(&buf) as u64;
    }
    eprintln!(
        "{execs} inputs through each decoder; accepted: interest {} data {} lp {} any {}",
        accepted[0], accepted[1], accepted[2], accepted[3]
    );
    // The mix must exercise both the accepting and the rejecting paths of every decoder.
    assert!(accepted.iter().all(|&a| a > 0 && a < execs), "{accepted:?}");
}

#[test]
fn seeds_are_valid() {
    for s in seeds() {
        assert!(check_packet(&s), "{s:02x?}");
    }
}
