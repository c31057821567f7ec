//! cargo-fuzz target: NFD's ControlParameters and ControlResponse, with the round-trip checks of the crate's `fuzzing` module.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_fw::fuzzing::check_control_parameters(data);
});
