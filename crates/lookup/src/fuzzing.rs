//! Properties the parsers of outside input keep for any input, shared by the cargo-fuzz targets
//! in `fuzz/` and the stable no-panic test in `tests/no_panic.rs`: the TagNet header a router
//! reads off the wire, and the descriptors of a FIB file's lines.
//!
//! Each `check_*` parses arbitrary bytes; on success it writes the value back and asserts that
//! it parses to the same. A panic here is a bug in the crate.

use crate::tag::{parse_descriptor, Address};

/// Checks [`Address::parse`] on `bytes`; whether it parsed.
pub fn check_tag_header(bytes: &[u8]) -> bool {
    let Ok(address) = Address::parse(bytes) else { return false };
    let mut again = Vec::new();
    address.encode(&mut again);
    assert_eq!(Address::parse(&again), Ok(address), "the header written back parses the same");
    true
}

/// Checks [`parse_descriptor`] on `bytes` read as text (invalid UTF-8 replaced); whether it
/// parsed.
pub fn check_descriptor_text(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(descriptor) = parse_descriptor(&text) else { return false };
    // A descriptor written as its 192-bit filter text reads back the same.
    let bits: String = (0..crate::tag::FILTER_BITS).map(|i| if descriptor.bit(i) { '1' } else { '0' }).collect();
    assert_eq!(parse_descriptor(&bits).ok(), Some(descriptor), "{text:?} as a filter");
    true
}
