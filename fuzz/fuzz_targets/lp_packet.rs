//! cargo-fuzz target: the lp_packet decoder, with the round-trip checks of `nexthop_wire::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_wire::fuzzing::check_lp_packet(data);
    nexthop_wire::fuzzing::check_packet(data);
});
