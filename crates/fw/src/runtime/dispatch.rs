//! Which forwarding shard a packet goes to (NDN-DPDK's name dispatch table, without the table):
//! an Interest by a hash of its first `components` name components; a Data or Nack by the
//! shard byte of its PIT token when it carries one of ours, else to every shard that an
//! Interest it could satisfy may have gone to — the shards of its first 1 … `components`
//! components (an Interest with fewer components than `components` was hashed on all of them).

use std::hash::BuildHasher;

use nexthop_wire::NameView;

use crate::lp::packet::{Incoming, Network};
use crate::table::pit_token::PitToken;

/// Routes packets to shards.
#[derive(Debug, Clone)]
pub struct Dispatch {
    shards: usize,
    components: usize,
    hasher: foldhash::fast::FixedState,
}

impl Dispatch {
    /// Dispatch over `shards` shards by the first `components` components (at least 1).
    pub fn new(shards: usize, components: usize) -> Self {
        Dispatch { shards: shards.max(1), components: components.max(1), hasher: foldhash::fast::FixedState::with_seed(0x6e64_7421) }
    }

    /// Shards.
    pub fn shards(&self) -> usize {
        self.shards
    }

    fn of_prefix(&self, name: &NameView<'_>, n: usize) -> usize {
        (self.hasher.hash_one(name.prefix(n).value()) % self.shards as u64) as usize
    }

    /// The shard of an Interest named `name`.
    pub fn interest(&self, name: &NameView<'_>) -> usize {
        if self.shards == 1 {
            return 0;
        }
        self.of_prefix(name, self.components.min(name.len()))
    }

    /// The shards an arriving packet goes to, appended to `out` (no repeats).
    pub fn packet(&self, incoming: &Incoming<'_>, out: &mut Vec<usize>) {
        if self.shards == 1 {
            out.push(0);
            return;
        }
        let name = incoming.name();
        if let Network::Interest(_) = incoming.packet {
            out.push(self.interest(&name));
            return;
        }
        if let Some(t) = incoming.link.pit_token.and_then(PitToken::decode).filter(|t| usize::from(t.shard) < self.shards) {
            out.push(usize::from(t.shard));
            return;
        }
        if let Network::Nack(..) = incoming.packet {
            out.push(self.interest(&name));
            return;
        }
        for n in 0..=self.components.min(name.len()) {
            let s = self.of_prefix(&name, n);
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Data, Emit, Interest, Name};

    use super::*;
    use crate::lp::packet::classify;

    #[test]
    fn data_reaches_every_shard_its_interests_may_be_on() {
        let d = Dispatch::new(4, 2);
        let data = Data::new(Name::from_uri("/a/b/c").unwrap(), b"x".to_vec()).to_bytes();
        let mut shards = Vec::new();
        d.packet(&classify(&data).unwrap().unwrap(), &mut shards);
        for uri in ["/a", "/a/b", "/a/b/c", "/a/b/c/d"] {
            let mut i = Interest::new(Name::from_uri(uri).unwrap());
            i.nonce = Some([0; 4]);
            let w = i.to_bytes();
            let mut s = Vec::new();
            d.packet(&classify(&w).unwrap().unwrap(), &mut s);
            assert_eq!(s.len(), 1);
            if Name::from_uri(uri).unwrap().is_prefix_of(&Name::from_uri("/a/b/c").unwrap()) {
                assert!(shards.contains(&s[0]), "{uri}");
            }
        }
    }
}
