//! cargo-fuzz target: the INFO format and `nfd.conf`'s translation, with the round-trip checks of the crate's `fuzzing` module.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_fw::fuzzing::check_info(data);
});
