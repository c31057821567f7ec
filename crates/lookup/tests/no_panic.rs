//! Parsing random and mutated bytes as a TagNet header, or as a FIB file's descriptor, never
//! panics, and every accepted input keeps the round trips of `nexthop_lookup::fuzzing`.
//!
//! The number of inputs is `NEXTHOP_FUZZ_EXECS` (default 200,000); `make test` runs 10 million
//! in release mode. The seeds are valid headers (descriptor and locator, every fan-out kind) and
//! descriptor texts (tags, names, filters); the mutations are `nexthop_wire::fuzzing::Mutator`'s.

use nexthop_lookup::fuzzing::{check_descriptor_text, check_tag_header};
use nexthop_lookup::tag::{Address, Descriptor, Fanout, Label};
use nexthop_wire::fuzzing::Mutator;

fn header_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, tags) in [&["a"][..], &["music", "rock"], &["x", "y", "z", "w"]].iter().enumerate() {
        let descriptor = Descriptor::from_tags(tags.iter()).unwrap();
        for fanout in [Fanout::ALL, Fanout::new(1).unwrap(), Fanout::new(3).unwrap()] {
            let mut v = Vec::new();
            Address::Descriptor { descriptor, fanout, tree: i as u16 }.encode(&mut v);
            v.extend_from_slice(b"payload");
            out.push(v);
        }
        let mut v = Vec::new();
        Address::Locator { tree: i as u16, label: Label { id: 7 + i as u32, list: 0b1011, mask: 0b1001 } }.encode(&mut v);
        out.push(v);
    }
    out
}

fn text_seeds() -> Vec<Vec<u8>> {
    let filter: String = (0..192).map(|i| if i % 7 == 0 { '1' } else { '0' }).collect();
    ["music rock 80s live", "/org/gnu/software", "tag11 tag732", filter.as_str(), "  a\tb  "]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

#[test]
fn random_and_mutated_headers_and_descriptors_never_panic() {
    let execs = Mutator::execs(200_000);
    let (headers, texts) = (header_seeds(), text_seeds());
    let mut mutator = Mutator::new(0x7461_676e_6574);
    let mut buf = Vec::with_capacity(256);
    let mut accepted = [0u64; 2];
    for _ in 0..execs {
        mutator.fill(&headers, &mut buf);
        accepted[0] += u64::from(check_tag_header(&buf));
        mutator.fill(&texts, &mut buf);
        accepted[1] += u64::from(check_descriptor_text(&buf));
    }
    eprintln!("{execs} inputs each; accepted: header {} descriptor {}", accepted[0], accepted[1]);
    assert!(accepted.iter().all(|&a| a > 0 && a < execs), "both paths of each parser: {accepted:?}");
}

#[test]
fn seeds_are_valid() {
    assert!(header_seeds().iter().all(|s| check_tag_header(s)));
    assert!(text_seeds().iter().all(|s| check_descriptor_text(s)));
}

/// The cargo-fuzz target's seed corpus (`fuzz/corpus/tag_header`) is made of headers and
/// descriptor texts its checks accept.
#[test]
fn the_fuzz_corpus_is_accepted() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/tag_header");
    let files: Vec<_> = std::fs::read_dir(corpus).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(files.len() >= 3);
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(check_tag_header(&bytes) || check_descriptor_text(&bytes), "{}", f.display());
    }
}
