//! cargo-fuzz target: the data decoder, with the round-trip checks of `nexthop_wire::fuzzing`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_wire::fuzzing::check_data(data);
    nexthop_wire::fuzzing::check_packet(data);
});
