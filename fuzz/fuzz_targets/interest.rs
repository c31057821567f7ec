//! cargo-fuzz target: the interest decoder, with the round-trip checks of `nexthop_wire::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_wire::fuzzing::check_interest(data);
    nexthop_wire::fuzzing::check_packet(data);
});
