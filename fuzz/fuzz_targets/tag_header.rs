//! cargo-fuzz target: the TagNet header a router reads, and a FIB file's descriptor text, with the round-trip checks of the crate's `fuzzing` module.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nexthop_lookup::fuzzing::check_tag_header(data);
    nexthop_lookup::fuzzing::check_descriptor_text(data);
});
