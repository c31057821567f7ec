//! The IP pipeline against its oracle (`ReferenceRouter`): random routes of both families
//! through a few ports and gateways, some neighbours known, random frames — well formed to
//! addresses the routes cover, and the same frames with bytes changed — and route changes
//! between batches. Every decision and every forwarded frame must be the oracle's, one frame
//! at a time and in batches.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

mod common;

use common::v4_frame;
use nexthop_router::ip::header::ETHERTYPE_IPV6;
use nexthop_router::ip::reference::ReferenceRouter;
use nexthop_router::ip::{Decision, Fib, IpRouter, Port, Prefix, Via};
use proptest::prelude::*;

const PORTS: u32 = 3;

fn port_mac(p: u32) -> [u8; 6] {
    [2, 0, 0, 0, 0, p as u8 + 1]
}

/// Gateway `g` of port `p`: 10.p.0.g (IPv4) or 2001:db8:p::g (IPv6).
fn gateway(p: u32, g: u8, v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, p as u16, 0, 0, 0, 0, u16::from(g)))
    } else {
        IpAddr::V4(Ipv4Addr::new(10, p as u8, 0, g))
    }
}

fn via_strategy() -> impl Strategy<Value = Via> {
    prop_oneof![
        6 => (0..PORTS + 1, 1u8..4, any::<bool>()).prop_map(|(p, g, v6)| Via::Gateway { port: Port(p), addr: gateway(p, g, v6) }),
        2 => (0..PORTS + 1).prop_map(|p| Via::Connected(Port(p))),
        1 => Just(Via::Local),
        1 => Just(Via::Blackhole),
        1 => Just(Via::Unreachable),
        1 => Just(Via::Elsewhere),
    ]
}

/// A prefix of `addr` (a few address patterns, so routes nest and overlap).
fn prefix_strategy() -> impl Strategy<Value = Prefix> {
    prop_oneof![
        (0u32..4, 0u8..=32, any::<u32>()).prop_map(|(hi, len, lo)| {
            let addr = (0xc633_0000 | (hi << 8)) ^ (lo & 0xff);
            let masked = if len == 0 { 0 } else { addr & (u32::MAX << (32 - u32::from(len))) };
            Prefix::V4 { addr: masked, len }
        }),
        (0u128..4, 0u8..=128, any::<u128>()).prop_map(|(hi, len, lo)| {
            let addr = (0x2001_0db8_u128 << 96 | hi << 64) ^ (lo & 0xffff_ffff);
            let masked = if len == 0 { 0 } else { addr & (u128::MAX << (128 - u32::from(len))) };
            Prefix::V6 { addr: masked, len }
        }),
    ]
}

fn v6_frame(dst: u128, hop_limit: u8, next: u8, payload: usize) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 40 + payload];
    f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x60;
    ip[4..6].copy_from_slice(&(payload as u16).to_be_bytes());
    ip[6] = next;
    ip[7] = hop_limit;
    ip[8..24].copy_from_slice(&0x2001_0db8_ffff_u128.wrapping_shl(80).to_be_bytes());
    ip[24..40].copy_from_slice(&dst.to_be_bytes());
    if payload >= 8 {
        ip[40] = 17; // an extension header's Next Header: UDP
    }
    f
}

/// A frame to an address near the routes, maybe with bytes changed.
fn frame_strategy() -> impl Strategy<Value = Vec<u8>> {
    let v4 = (0u32..4, prop_oneof![Just(1u8), any::<u8>()], 0u8..8, any::<bool>(), 0usize..40).prop_map(|(hi, lo, ttl, opt, pay)| {
        v4_frame(0xc612_0001, 0xc633_0000 | hi << 8 | u32::from(lo), ttl, if opt && ttl == 3 { 24 } else { 20 }, pay)
    });
    let v6 = (0u128..4, any::<u16>(), 0u8..8, prop_oneof![4 => Just(17u8), 1 => Just(0), 1 => Just(60), 1 => Just(44)], 0usize..40)
        .prop_map(|(hi, lo, hl, next, pay)| v6_frame(0x2001_0db8_u128 << 96 | hi << 64 | u128::from(lo), hl, next, pay));
    let mutation = proptest::option::weighted(0.3, (any::<prop::sample::Index>(), any::<u8>(), any::<bool>()));
    (prop_oneof![v4, v6], mutation).prop_map(|(mut f, m)| {
        if let Some((at, byte, cut)) = m {
            if cut {
                f.truncate(at.index(f.len() + 1));
            } else {
                let i = at.index(f.len());
                f[i] = byte;
            }
        }
        f
    })
}

/// A router and its oracle with the same routes, ports (all but the last) and neighbours
/// (gateways 1 and 2 of each port, and hosts .1 of the connected subnets).
fn both(routes: &[(Prefix, Via)], incremental: bool) -> (IpRouter, ReferenceRouter) {
    let fib = if incremental {
        let mut fib = Fib::new();
        for &(p, v) in routes {
            fib.insert(p, v).unwrap();
        }
        fib
    } else {
        Fib::with_routes(routes).unwrap()
    };
    let mut router = IpRouter::new(fib);
    let mut oracle = ReferenceRouter::new();
    for &(p, v) in routes {
        oracle.insert(p, v);
    }
    for p in 0..PORTS {
        router.neighbours_mut().set_port(Port(p), port_mac(p));
        oracle.set_port(Port(p), port_mac(p));
        for g in 1..3u8 {
            for v6 in [false, true] {
                let mac = [6, 6, 6, p as u8, g, v6 as u8];
                router.neighbours_mut().insert(Port(p), gateway(p, g, v6), mac);
                oracle.set_neighbour(Port(p), gateway(p, g, v6), mac);
            }
        }
        for hi in 0..4u32 {
            let host = IpAddr::V4(Ipv4Addr::from(0xc633_0001 | hi << 8));
            router.neighbours_mut().insert(Port(p), host, [7, 7, 7, p as u8, hi as u8, 1]);
            oracle.set_neighbour(Port(p), host, [7, 7, 7, p as u8, hi as u8, 1]);
        }
    }
    (router, oracle)
}

fn check(router: &mut IpRouter, oracle: &ReferenceRouter, frames: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let want: Vec<(Decision, Option<Vec<u8>>)> = frames.iter().map(|f| oracle.decide(f)).collect();
    let mut one = frames.to_vec();
    for (i, f) in one.iter_mut().enumerate() {
        let d = router.route(f);
        prop_assert_eq!(d, want[i].0, "frame {} one at a time: {:02x?}", i, frames[i]);
        if let Some(out) = &want[i].1 {
            prop_assert_eq!(&*f, out);
        }
    }
    let mut batch = frames.to_vec();
    let mut decisions = Vec::new();
    router.route_batch(&mut batch[..], &mut decisions);
    prop_assert_eq!(decisions.len(), frames.len());
    for i in 0..frames.len() {
        prop_assert_eq!(decisions[i], want[i].0, "frame {} in a batch", i);
        if let Some(out) = &want[i].1 {
            prop_assert_eq!(&batch[i], out);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_pipeline_decides_as_the_reference(
        routes in proptest::collection::vec((prefix_strategy(), via_strategy()), 0..40),
        frames in proptest::collection::vec(frame_strategy(), 1..80),
        incremental in any::<bool>(),
    ) {
        let (mut router, oracle) = both(&routes, incremental);
        check(&mut router, &oracle, &frames)?;
        let c = router.counters();
        let counted = c.forwarded + c.kernel.iter().sum::<u64>() + c.drops.iter().sum::<u64>();
        prop_assert_eq!(counted, 2 * frames.len() as u64, "every decision counted");
    }

    #[test]
    fn route_changes_between_batches_take_effect(
        routes in proptest::collection::vec((prefix_strategy(), via_strategy()), 1..30),
        changes in proptest::collection::vec((any::<prop::sample::Index>(), proptest::option::of(via_strategy())), 1..20),
        frames in proptest::collection::vec(frame_strategy(), 1..40),
    ) {
        let (mut router, mut oracle) = both(&routes, false);
        for (at, via) in changes {
            let prefix = routes[at.index(routes.len())].0;
            match via {
                Some(v) => {
                    router.fib_mut().insert(prefix, v).unwrap();
                    oracle.insert(prefix, v);
                }
                None => {
                    let _ = router.fib_mut().remove(prefix);
                    oracle.remove(prefix);
                }
            }
            check(&mut router, &oracle, &frames)?;
        }
    }
}
