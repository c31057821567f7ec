//! IP LPM peers from crates.io, as a Rust user would use them: `prefix-trie` (a `PrefixMap` of
//! `ipnet` prefixes, `get_lpm`) and `iptrie` (its level-compressed LC-trie map, built from its
//! Patricia trie with `compress`, the form its authors recommend for lookups). Both map to the
//! same next hops as nexthop's tables, with [`NO_ROUTE`] for no match.

use std::net::{Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};
use iptrie::{Ipv4LCTrieMap, Ipv4Prefix, Ipv4RTrieMap, Ipv6LCTrieMap, Ipv6Prefix, Ipv6RTrieMap};
use nexthop_lookup::ip::{NextHop, Route, NO_ROUTE};
use prefix_trie::PrefixMap;

/// `prefix-trie` over IPv4.
#[derive(Debug)]
pub struct PrefixTrie4(PrefixMap<Ipv4Net, NextHop>);

impl PrefixTrie4 {
    /// Built from routes (a later duplicate wins).
    pub fn new(routes: &[Route<u32>]) -> Self {
        let mut m = PrefixMap::new();
        for r in routes {
            if let Ok(p) = Ipv4Net::new(Ipv4Addr::from(r.prefix), r.len) {
                m.insert(p, r.next_hop);
            }
        }
        PrefixTrie4(m)
    }

    /// Longest-prefix match.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let host = Ipv4Net::new_assert(Ipv4Addr::from(addr), 32);
        self.0.get_lpm(&host).map_or(NO_ROUTE, |(_, &nh)| nh)
    }
}

/// `prefix-trie` over IPv6.
#[derive(Debug)]
pub struct PrefixTrie6(PrefixMap<Ipv6Net, NextHop>);

impl PrefixTrie6 {
    /// Built from routes (a later duplicate wins).
    pub fn new(routes: &[Route<u128>]) -> Self {
        let mut m = PrefixMap::new();
        for r in routes {
            if let Ok(p) = Ipv6Net::new(Ipv6Addr::from(r.prefix), r.len) {
                m.insert(p, r.next_hop);
            }
        }
        PrefixTrie6(m)
    }

    /// Longest-prefix match.
    #[inline]
    pub fn lookup(&self, addr: u128) -> NextHop {
        let host = Ipv6Net::new_assert(Ipv6Addr::from(addr), 128);
        self.0.get_lpm(&host).map_or(NO_ROUTE, |(_, &nh)| nh)
    }
}

/// `iptrie`'s LC-trie over IPv4.
pub struct IpTrie4(Ipv4LCTrieMap<NextHop>);

impl core::fmt::Debug for IpTrie4 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("IpTrie4")
    }
}

impl IpTrie4 {
    /// Built from routes (a later duplicate wins), then compressed.
    pub fn new(routes: &[Route<u32>]) -> Self {
        let mut m = Ipv4RTrieMap::with_root(NO_ROUTE);
        for r in routes {
            if let Ok(p) = Ipv4Prefix::new(Ipv4Addr::from(r.prefix), r.len) {
                m.insert(p, r.next_hop);
            }
        }
        IpTrie4(m.compress())
    }

    /// Longest-prefix match.
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        *self.0.lookup(&Ipv4Addr::from(addr)).1
    }
}

/// `iptrie`'s LC-trie over IPv6.
pub struct IpTrie6(Ipv6LCTrieMap<NextHop>);

impl core::fmt::Debug for IpTrie6 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("IpTrie6")
    }
}

impl IpTrie6 {
    /// Built from routes (a later duplicate wins), then compressed.
    pub fn new(routes: &[Route<u128>]) -> Self {
        let mut m = Ipv6RTrieMap::with_root(NO_ROUTE);
        for r in routes {
            if let Ok(p) = Ipv6Prefix::new(Ipv6Addr::from(r.prefix), r.len) {
                m.insert(p, r.next_hop);
            }
        }
        IpTrie6(m.compress())
    }

    /// Longest-prefix match.
    #[inline]
    pub fn lookup(&self, addr: u128) -> NextHop {
        *self.0.lookup(&Ipv6Addr::from(addr)).1
    }
}

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
        let (p, i) = (PrefixTrie4::new(&routes), IpTrie4::new(&routes));
        for (a, want) in [(0x0a01_0101u32, 3), (0x0a01_0201, 2), (0x0a02_0000, 1), (0x0b00_0000, NO_ROUTE)] {
            assert_eq!(p.lookup(a), want);
            assert_eq!(i.lookup(a), want);
        }
        let r6 = [Route { prefix: 0x2001_0db8u128 << 96, len: 32, next_hop: 9 }];
        assert_eq!(PrefixTrie6::new(&r6).lookup((0x2001_0db8u128 << 96) | 1), 9);
        assert_eq!(IpTrie6::new(&r6).lookup((0x2001_0db9u128 << 96) | 1), NO_ROUTE);
    }
}
