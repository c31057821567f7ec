//! Decoding random and mutated byte strings never panics, and every accepted packet keeps the
//! round-trip properties of `nexthop_wire::fuzzing`.
//!
//! The number of inputs is `NEXTHOP_FUZZ_EXECS` (default 200,000); `make test` runs 10 million
//! in release mode. Each input goes through every decoder (Interest, Data, LpPacket, the
//! dispatching decoder and the Name decoder). The seed corpus is generated valid packets; the
//! mutations are [`Mutator`]'s.

mod common;

use nexthop_wire::fuzzing::{check_data, check_interest, check_lp_packet, check_packet, Mutator};
use nexthop_wire::{Emit, LpPacket};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

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

#[test]
fn random_and_mutated_bytes_never_panic() {
    let execs = Mutator::execs(200_000);
    let seeds = seeds();
    let mut mutator = Mutator::new(0x006e_6578_7468_6f70);
    let mut buf = Vec::with_capacity(4096);
    let mut accepted = [0u64; 4];
    for _ in 0..execs {
        mutator.fill(&seeds, &mut buf);
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
