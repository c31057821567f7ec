//! Realistic NDN packets: names of several components drawn from a vocabulary of words, with a
//! version and segment at the end of Data names; Interests as consumers send them; Data signed
//! with DigestSha256 as producers without keys send it.

use nexthop_wire::{Component, Data, Interest, MetaInfo, Name};
use rand::rngs::SmallRng;
use rand::Rng;

const WORDS: &[&str] = &[
    "ndn", "edu", "ucla", "arizona", "memphis", "video", "news", "sports", "cs", "lab", "alice", "bob", "sensor", "temp", "camera",
    "stream", "2026", "november", "chunk", "index", "data", "public", "private", "maps", "tiles", "zoom17", "weather", "hourly", "archive",
    "movies",
];

/// A name of `components` components: words, then (for two or more) a version and a segment.
pub fn name(rng: &mut SmallRng, components: usize) -> Name {
    let words = components.saturating_sub(2).max(components.min(1));
    let mut name = Name::new();
    for _ in 0..words {
        let w = WORDS[rng.gen_range(0..WORDS.len())];
        name = name.with_generic(w.as_bytes().to_vec());
    }
    if components >= 2 {
        name = name
            .with(Component::version(rng.gen_range(1_600_000_000_000..1_800_000_000_000)))
            .with(Component::segment(rng.gen_range(0..1000)));
    }
    name
}

/// An Interest as a consumer sends it: a name of 4–10 components, a Nonce, a lifetime,
/// CanBePrefix/MustBeFresh half the time, a HopLimit.
pub fn interest(rng: &mut SmallRng) -> Interest {
    let components = rng.gen_range(4..=10);
    Interest {
        name: name(rng, components),
        can_be_prefix: rng.gen_bool(0.5),
        must_be_fresh: rng.gen_bool(0.5),
        nonce: Some(rng.gen()),
        lifetime_ms: Some(4000),
        hop_limit: Some(64),
        ..Default::default()
    }
}

/// A Data packet with `payload` content bytes, a name of 4–10 components, a FreshnessPeriod, and
/// a DigestSha256 signature.
pub fn data(rng: &mut SmallRng, payload: usize) -> Data {
    let mut content = vec![0u8; payload];
    rng.fill(&mut content[..]);
    let components = rng.gen_range(4..=10);
    let mut d = Data::new(name(rng, components), content);
    d.meta_info = Some(MetaInfo { freshness_period_ms: Some(10_000), ..Default::default() });
    d.sign_digest_sha256();
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_wire::{DataView, Emit, InterestView};
    use rand::SeedableRng;

    #[test]
    fn generated_packets_are_valid() {
        let mut rng = SmallRng::seed_from_u64(1);
        for _ in 0..100 {
            let i = interest(&mut rng);
            assert!((4..=10).contains(&i.name.len()));
            InterestView::decode(&i.to_bytes()).unwrap();
            let d = data(&mut rng, 100);
            assert!(DataView::decode(&d.to_bytes()).unwrap().verify_digest_sha256());
        }
    }
}
