//! IP LPM peers from crates.io, as a Rust user would use them: `prefix-trie` (a `PrefixMap` of
//! `ipnet` prefixes, `get_lpm`), `iptrie` (its level-compressed LC-trie map, built from its
//! Patricia trie with `compress`, the form its authors recommend for lookups) and `poptrie`
//! (the SIGCOMM'15 design: 6-bit strides, popcount-indexed children and leaves, built at once
//! from all routes, as its authors advise for large tables). All map to the same next hops as
//! nexthop's tables, with [`NO_ROUTE`] for no match.

use std::net::{Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};
use iptrie::{Ipv4LCTrieMap, Ipv4Prefix, Ipv4RTrieMap, Ipv6LCTrieMap, Ipv6Prefix, Ipv6RTrieMap};
use nexthop_lookup::ip::{NextHop, Route, NO_ROUTE};
use prefix_trie::PrefixMap;

/// A `prefix-trie` map over one family: `$net` prefixes of `$addr` addresses held as `$int`.
macro_rules! prefix_trie_peer {
    ($name:ident, $int:ty, $addr:ty, $net:ty, $bits:expr, $family:literal) => {
        #[doc = concat!("`prefix-trie` over ", $family, ".")]
        #[derive(Debug)]
        pub struct $name(PrefixMap<$net, NextHop>);

        impl $name {
            /// Built from routes (a later duplicate wins).
            pub fn new(routes: &[Route<$int>]) -> Self {
                let mut m = PrefixMap::new();
                for r in routes {
                    if let Ok(p) = <$net>::new(<$addr>::from(r.prefix), r.len) {
                        m.insert(p, r.next_hop);
                    }
                }
                $name(m)
            }

            /// Longest-prefix match.
            #[inline]
            pub fn lookup(&self, addr: $int) -> NextHop {
                let host = <$net>::new_assert(<$addr>::from(addr), $bits);
                self.0.get_lpm(&host).map_or(NO_ROUTE, |(_, &nh)| nh)
            }
        }
    };
}

/// `iptrie`'s LC-trie over one family, built from its Patricia trie.
macro_rules! iptrie_peer {
    ($name:ident, $int:ty, $addr:ty, $prefix:ty, $rtrie:ident, $lctrie:ident, $family:literal) => {
        #[doc = concat!("`iptrie`'s LC-trie over ", $family, ".")]
        pub struct $name($lctrie<NextHop>);

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(stringify!($name))
            }
        }

        impl $name {
            /// Built from routes (a later duplicate wins), then compressed.
            pub fn new(routes: &[Route<$int>]) -> Self {
                let mut m = $rtrie::with_root(NO_ROUTE);
                for r in routes {
                    if let Ok(p) = <$prefix>::new(<$addr>::from(r.prefix), r.len) {
                        m.insert(p, r.next_hop);
                    }
                }
                $name(m.compress())
            }

            /// Longest-prefix match.
            #[inline]
            pub fn lookup(&self, addr: $int) -> NextHop {
                *self.0.lookup(&<$addr>::from(addr)).1
            }
        }
    };
}

/// `poptrie` over IPv4 (u32 keys).
#[derive(Debug)]
pub struct Poptrie4(poptrie::Poptrie<(u32, u8), NextHop>);

impl Poptrie4 {
    /// Built from routes at once (a later duplicate wins).
    pub fn new(routes: &[Route<u32>]) -> Self {
        Poptrie4(routes.iter().map(|r| ((r.prefix, r.len), r.next_hop)).collect())
    }

    /// Longest-prefix match.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        self.0.lookup(addr).copied().unwrap_or(NO_ROUTE)
    }
}

prefix_trie_peer!(PrefixTrie4, u32, Ipv4Addr, Ipv4Net, 32, "IPv4");
prefix_trie_peer!(PrefixTrie6, u128, Ipv6Addr, Ipv6Net, 128, "IPv6");
iptrie_peer!(IpTrie4, u32, Ipv4Addr, Ipv4Prefix, Ipv4RTrieMap, Ipv4LCTrieMap, "IPv4");
iptrie_peer!(IpTrie6, u128, Ipv6Addr, Ipv6Prefix, Ipv6RTrieMap, Ipv6LCTrieMap, "IPv6");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_answer_like_the_oracle() {
        let routes = [
            Route { prefix: 0x0a00_0000u32, len: 8, next_hop: 1 },
            Route { prefix: 0x0a01_0000, len: 16, next_hop: 2 },
            Route { prefix: 0x0a01_0100, len: 24, next_hop: 3 },
        ];
        let (p, i, pop) = (PrefixTrie4::new(&routes), IpTrie4::new(&routes), Poptrie4::new(&routes));
        for (a, want) in [(0x0a01_0101u32, 3), (0x0a01_0201, 2), (0x0a02_0000, 1), (0x0b00_0000, NO_ROUTE)] {
            assert_eq!(p.lookup(a), want);
            assert_eq!(i.lookup(a), want);
            assert_eq!(pop.lookup(a), want);
        }
        let r6 = [Route { prefix: 0x2001_0db8u128 << 96, len: 32, next_hop: 9 }];
        assert_eq!(PrefixTrie6::new(&r6).lookup((0x2001_0db8u128 << 96) | 1), 9);
        assert_eq!(IpTrie6::new(&r6).lookup((0x2001_0db9u128 << 96) | 1), NO_ROUTE);
    }
}
