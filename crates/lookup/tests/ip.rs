//! The IP tables against the binary-trie oracle: random route sets and random insert/remove
//! sequences (routes crowded into a few /8s so they nest, overlap and capture each other), single
//! and batch lookups, IPv6 with DP-CPE levels and routes longer than /64, and bad input that
//! must change nothing.

use nexthop_lookup::ip::{dp_cpe, simd, BinaryTrie, Bloomfwd4, Bloomfwd6, Dir24, IpError, Miht4, Miht6, Route, NO_ROUTE, PAPER_DLA_BITS};
use proptest::prelude::*;

fn v4_route() -> impl Strategy<Value = Route<u32>> {
    // Lengths weighted like a BGP table, plus the rare short and host routes.
    let len = prop_oneof![2 => 0u8..=8, 3 => 9u8..=20, 6 => 21u8..=24, 3 => 25u8..=32];
    (len, prop::sample::select(vec![10u32, 11, 192]), any::<u32>(), 0u32..50).prop_map(|(len, top, bits, nh)| {
        let a = (top << 24) | (bits >> 8);
        let prefix = if len == 0 { 0 } else { a & (u32::MAX << (32 - u32::from(len))) };
        Route { prefix, len, next_hop: nh }
    })
}

fn v4_addrs(routes: &[Route<u32>], salt: u32) -> Vec<u32> {
    // Addresses inside and around every route, and random ones.
    let mut out = Vec::new();
    let mut x = salt | 1;
    for r in routes {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let span = if r.len == 32 { 0 } else { u32::MAX >> r.len };
        out.extend([r.prefix, r.prefix | span, r.prefix | (x & span), r.prefix.wrapping_sub(1), (r.prefix | span).wrapping_add(1), x]);
    }
    out
}

/// Array widths: mostly the paper's 20 (a small array: cheap cases), then 16, 18 and the router's 24.
fn dla_bits() -> impl Strategy<Value = u8> {
    prop_oneof![6 => Just(PAPER_DLA_BITS), 1 => Just(16u8), 1 => Just(18u8), 2 => Just(24u8)]
}

fn check_v4(routes: &[Route<u32>], t: &Bloomfwd4, addrs: &[u32]) -> Result<(), TestCaseError> {
    let mut oracle = BinaryTrie::<u32>::new();
    for r in routes {
        oracle.insert(r.prefix, r.len, r.next_hop).unwrap();
    }
    let mut batch = vec![0; addrs.len()];
    t.lookup_batch(addrs, &mut batch);
    let mut unguarded = t.clone();
    unguarded.set_guard(false);
    let mut unguarded_batch = vec![0; addrs.len()];
    unguarded.lookup_batch(addrs, &mut unguarded_batch);
    let dir = Dir24::from_routes(routes).unwrap();
    let miht = Miht4::from_routes(routes).unwrap();
    for ((&a, &b), &u) in addrs.iter().zip(&batch).zip(&unguarded_batch) {
        let want = oracle.lookup(a);
        prop_assert_eq!(u, want, "bloomfwd batch without guard {:#x}", a);
        prop_assert_eq!(t.lookup(a), want, "bloomfwd single {:#x}", a);
        prop_assert_eq!(b, want, "bloomfwd batch {:#x}", a);
        prop_assert_eq!(unguarded.lookup(a), want, "bloomfwd without guard {:#x}", a);
        prop_assert_eq!(dir.lookup(a), want, "dir-24-8 {:#x}", a);
        prop_assert_eq!(miht.lookup(a), want, "miht {:#x}", a);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn v4_tables_agree_with_the_oracle(routes in prop::collection::vec(v4_route(), 0..200), salt in any::<u32>(), bits in dla_bits()) {
        let t = Bloomfwd4::from_routes_with(&routes, bits, 0.3).unwrap();
        check_v4(&routes, &t, &v4_addrs(&routes, salt))?;
    }

    #[test]
    fn v4_updates_agree_with_the_oracle(ops in prop::collection::vec((v4_route(), any::<bool>()), 1..250), salt in any::<u32>(), bits in dla_bits()) {
        let mut t = Bloomfwd4::with_dla_bits(bits, 0.3);
        let mut live: Vec<Route<u32>> = Vec::new();
        for (r, insert) in &ops {
            if *insert || live.is_empty() {
                t.insert(r.prefix, r.len, r.next_hop).unwrap();
                live.retain(|x| (x.prefix, x.len) != (r.prefix, r.len));
                live.push(*r);
            } else {
                let victim = live.remove(r.next_hop as usize % live.len());
                prop_assert_eq!(t.remove(victim.prefix, victim.len), Ok(victim.next_hop));
            }
        }
        prop_assert_eq!(t.len(), live.len());
        let mut probes = v4_addrs(&live, salt);
        probes.extend(v4_addrs(&ops.iter().map(|o| o.0).collect::<Vec<_>>(), salt));
        check_v4(&live, &t, &probes)?;
    }
}

fn v6_route() -> impl Strategy<Value = Route<u128>> {
    let len = prop_oneof![1 => 0u8..=16, 4 => 17u8..=48, 3 => 49u8..=64, 1 => 65u8..=128];
    (len, prop::sample::select(vec![0x2001u128, 0x2a00, 0x2400]), any::<u128>(), 0u32..50).prop_map(|(len, top, bits, nh)| {
        let a = (top << 112) | (bits >> 16);
        let prefix = if len == 0 { 0 } else { a & (u128::MAX << (128 - u32::from(len))) };
        Route { prefix, len, next_hop: nh }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn v6_tables_agree_with_the_oracle(routes in prop::collection::vec(v6_route(), 0..150), n in 3usize..10, removals in 0usize..40, salt in any::<u128>()) {
        // Levels from the routes' own histogram; keep only routes the levels can expand.
        let mut counts = [0u64; 65];
        for r in &routes {
            if (1..=64).contains(&r.len) {
                counts[usize::from(r.len)] += 1;
            }
        }
        let levels = dp_cpe(&counts, n);
        let mut t = Bloomfwd6::new(&levels, 0.3).unwrap();
        let mut live: Vec<Route<u128>> = Vec::new();
        for r in &routes {
            if t.insert(r.prefix, r.len, r.next_hop).is_ok() {
                live.retain(|x| (x.prefix, x.len) != (r.prefix, r.len));
                live.push(*r);
            }
        }
        for i in 0..removals.min(live.len()) {
            let victim = live.remove((i * 7) % live.len());
            prop_assert_eq!(t.remove(victim.prefix, victim.len), Ok(victim.next_hop));
        }
        let mut oracle = BinaryTrie::<u128>::new();
        for r in &live {
            oracle.insert(r.prefix, r.len, r.next_hop).unwrap();
        }
        let miht = Miht6::from_routes(&live).unwrap();
        let mut addrs = Vec::new();
        let mut x = salt | 1;
        for r in routes.iter() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let span = if r.len == 128 { 0 } else { u128::MAX >> r.len };
            addrs.extend([r.prefix, r.prefix | span, r.prefix | (x & span), r.prefix.wrapping_sub(1), x]);
        }
        let mut batch = vec![0; addrs.len()];
        t.lookup_batch(&addrs, &mut batch);
        // Levels probed one at a time, without the SIMD filter lanes.
        let mut scalar_batch = vec![0; addrs.len()];
        t.lookup_batch_with(simd::Isa::Scalar, &addrs, &mut scalar_batch);
        prop_assert_eq!(&scalar_batch, &batch, "bloomfwd6 batch, scalar against {:?}", simd::detect());
        let mut ungated = t.clone();
        ungated.set_gate(false);
        let mut ungated_batch = vec![0; addrs.len()];
        ungated.lookup_batch(&addrs, &mut ungated_batch);
        for ((&a, &b), &u) in addrs.iter().zip(&batch).zip(&ungated_batch) {
            let want = oracle.lookup(a);
            prop_assert_eq!(u, want, "bloomfwd6 batch without gate {:#x}", a);
            prop_assert_eq!(ungated.lookup(a), want, "bloomfwd6 single without gate {:#x}", a);
            prop_assert_eq!(t.lookup(a), want, "bloomfwd6 single {:#x} levels {:?}", a, levels);
            prop_assert_eq!(b, want, "bloomfwd6 batch {:#x}", a);
            prop_assert_eq!(miht.lookup(a), want, "miht6 {:#x}", a);
        }
    }
}

#[test]
fn bad_routes_change_nothing() {
    let good = [Route { prefix: 0x0a00_0000u32, len: 8, next_hop: 1 }, Route { prefix: 0x0a01_0100, len: 24, next_hop: 2 }];
    let mut t = Bloomfwd4::from_routes(&good, 0.3).unwrap();
    let probes = [0x0a01_0101u32, 0x0a02_0000, 0x0b00_0000];
    let before: Vec<u32> = probes.iter().map(|&a| t.lookup(a)).collect();
    assert_eq!(before, vec![2, 1, NO_ROUTE]);
    let bad = [Route { prefix: 0x0b00_0000, len: 8, next_hop: 3 }, Route { prefix: 0x0c00_0001, len: 8, next_hop: 3 }];
    assert_eq!(t.insert_all(&bad), Err(IpError::HostBitsSet { len: 8 }));
    assert_eq!(t.insert(0, 33, 1), Err(IpError::LengthTooLong { len: 33, max: 32 }));
    assert_eq!(t.insert(0, 0, NO_ROUTE), Err(IpError::BadNextHop(u64::from(NO_ROUTE))));
    assert!(matches!(t.remove(0x0b00_0000, 8), Err(IpError::NoSuchRoute(_))));
    assert_eq!(probes.iter().map(|&a| t.lookup(a)).collect::<Vec<_>>(), before);
    assert_eq!(t.len(), 2);

    let mut t6 = Bloomfwd6::new(&[32, 48, 64], 0.3).unwrap();
    assert_eq!(t6.insert(0x2000u128 << 112, 8, 1), Err(IpError::ExpansionTooLarge { len: 8, level: 32 }));
    assert!(t6.insert(0x2001_0db8u128 << 96, 32, 1).is_ok());
    assert_eq!(Bloomfwd6::new(&[32, 48], 0.3).err(), Some(IpError::BadLevels(vec![32, 48])));
    assert_eq!(t6.lookup((0x2001_0db8u128 << 96) | 5), 1);
    assert_eq!(t6.len(), 1);
}

#[test]
fn capture_keeps_the_longer_route() {
    // A /22 inserted after a /24 inside it must not take the /24's slot, and removing the /24
    // hands its slot back to the /22; removing the /22 then empties the group.
    let mut t = Bloomfwd4::new(0.3);
    t.insert(0x0a00_0100, 24, 7).unwrap();
    t.insert(0x0a00_0000, 22, 5).unwrap();
    assert_eq!(t.lookup(0x0a00_0101), 7);
    assert_eq!(t.lookup(0x0a00_0201), 5);
    assert_eq!(t.expanded().1, 4);
    t.remove(0x0a00_0100, 24).unwrap();
    assert_eq!(t.lookup(0x0a00_0101), 5);
    t.remove(0x0a00_0000, 22).unwrap();
    assert_eq!(t.lookup(0x0a00_0101), NO_ROUTE);
    assert_eq!(t.expanded(), (0, 0, 0));
}
