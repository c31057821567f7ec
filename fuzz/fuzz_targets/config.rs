//! cargo-fuzz target: the TOML configuration, with the round-trip checks of the crate's `fuzzing` module.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_fw::fuzzing::check_config(data);
});
