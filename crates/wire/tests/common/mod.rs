//! proptest strategies for valid NDN packets, shared by the round-trip and no-panic tests.
#![allow(dead_code)]

use nexthop_wire::tlv::UnknownElement;
use nexthop_wire::{Component, Data, Interest, KeyLocator, LpPacket, MetaInfo, Nack, NackReason, Name, SignatureInfo};
use proptest::collection::vec;
use proptest::prelude::*;

pub fn component() -> impl Strategy<Value = Component> {
    prop_oneof![
        4 => vec(any::<u8>(), 0..12).prop_map(Component::generic),
        1 => any::<u64>().prop_map(Component::segment),
        1 => any::<u64>().prop_map(Component::version),
        1 => any::<u64>().prop_map(Component::timestamp),
        1 => any::<u64>().prop_map(Component::sequence_num),
        1 => any::<u64>().prop_map(Component::byte_offset),
        1 => any::<[u8; 32]>().prop_map(Component::implicit_sha256),
        1 => vec(any::<u8>(), 0..6).prop_map(Component::keyword),
        1 => (3u32..=65535, vec(any::<u8>(), 0..6)).prop_map(|(t, v)| Component::new(t, v).unwrap()),
    ]
}

pub fn name() -> impl Strategy<Value = Name> {
    vec(component(), 0..8).prop_map(|cs| cs.into_iter().fold(Name::new(), |n, c| n.with(c)))
}

/// Unknown non-critical elements with anchors in `1..=max_anchor`, sorted by anchor, of types
/// that the container does not know.
pub fn unknowns(types: &'static [u32], max_anchor: u8) -> impl Strategy<Value = Vec<UnknownElement>> {
    vec((1..=max_anchor, proptest::sample::select(types), vec(any::<u8>(), 0..5)), 0..3).prop_map(|mut v| {
        v.sort_by_key(|e| e.0);
        v.into_iter().map(|(after, ty, value)| UnknownElement { after, ty, value }).collect()
    })
}

pub fn signature_info() -> impl Strategy<Value = SignatureInfo> {
    (
        0u64..8,
        prop_oneof![
            Just(None),
            name().prop_map(|n| Some(KeyLocator::Name(n))),
            vec(any::<u8>(), 1..33).prop_map(|d| Some(KeyLocator::KeyDigest(d)))
        ],
        proptest::option::of(vec(any::<u8>(), 0..8)),
        proptest::option::of(vec(any::<u8>(), 1..9)),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        unknowns(&[64, 100, 202, 1000], 6),
    )
        .prop_map(|(signature_type, key_locator, validity_period, nonce, time, seq_num, unknown)| SignatureInfo {
            signature_type,
            key_locator,
            validity_period,
            nonce,
            time,
            seq_num,
            unknown,
        })
}

pub fn interest() -> impl Strategy<Value = Interest> {
    (
        name(),
        any::<(bool, bool)>(),
        vec(name(), 0..3),
        proptest::option::of(any::<[u8; 4]>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(vec(any::<u8>(), 0..16)),
        proptest::option::of((signature_info(), vec(any::<u8>(), 0..40))),
        unknowns(&[64, 66, 200, 1022, 70000], 10),
    )
        .prop_map(|(name, (cbp, mbf), hint, nonce, lifetime, hop, params, sig, unknown)| {
            // ParametersSha256DigestComponent is derived, never random.
            let name: Name = name.components().filter(|c| c.ty() != 2).collect();
            let mut i = Interest {
                name,
                can_be_prefix: cbp,
                must_be_fresh: mbf,
                forwarding_hint: hint,
                nonce,
                lifetime_ms: lifetime,
                hop_limit: hop,
                app_parameters: params,
                unknown,
                ..Default::default()
            };
            if let Some((info, value)) = sig {
                i.app_parameters.get_or_insert_with(Vec::new);
                i.signature_info = Some(info);
                i.signature_value = Some(value);
            }
            i.update_parameters_digest();
            i
        })
}

pub fn meta_info() -> impl Strategy<Value = MetaInfo> {
    (proptest::option::of(0u64..10), proptest::option::of(any::<u64>()), proptest::option::of(component()), unknowns(&[64, 98, 500], 3))
        .prop_map(|(content_type, freshness_period_ms, final_block_id, unknown)| MetaInfo {
            content_type,
            freshness_period_ms,
            final_block_id,
            unknown,
        })
}

pub fn data() -> impl Strategy<Value = Data> {
    (
        name(),
        proptest::option::of(meta_info()),
        proptest::option::of(vec(any::<u8>(), 0..64)),
        signature_info(),
        vec(any::<u8>(), 0..40),
        unknowns(&[64, 66, 200, 1024], 5),
    )
        .prop_map(|(name, meta_info, content, signature_info, signature_value, unknown)| Data {
            name,
            meta_info,
            content,
            signature_info,
            signature_value,
            unknown,
        })
}

pub fn lp_packet() -> impl Strategy<Value = LpPacket> {
    let frag = prop_oneof![Just((None, None)), (1u64..20).prop_flat_map(|n| (0..n).prop_map(move |i| (Some(i), Some(n))))];
    (
        proptest::option::of(any::<u64>()),
        frag,
        proptest::option::of(vec(any::<u8>(), 1..33)),
        proptest::option::of(proptest::option::of(any::<u64>()).prop_map(|r| Nack { reason: r.map(NackReason::from), unknown: vec![] })),
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of(any::<u64>()),
            proptest::option::of(0u64..3),
            proptest::option::of(0u64..3),
        ),
        (vec(any::<u64>(), 0..3), proptest::option::of(any::<u64>()), any::<bool>(), proptest::option::of(vec(any::<u8>(), 0..8))),
        unknowns(&[804, 808, 828, 852, 900, 956], 14),
        proptest::option::of(prop_oneof![interest().prop_map(|i| nexthop_wire::Emit::to_bytes(&i)), vec(any::<u8>(), 0..32)]),
    )
        .prop_map(
            |(
                sequence,
                (frag_index, frag_count),
                pit_token,
                nack,
                (next_hop, incoming, cache_policy, mark),
                (acks, tx, nd, pa),
                ignored,
                fragment,
            )| LpPacket {
                sequence,
                frag_index,
                frag_count,
                pit_token,
                nack,
                next_hop_face_id: next_hop,
                incoming_face_id: incoming,
                cache_policy,
                congestion_mark: mark,
                acks,
                tx_sequence: tx,
                non_discovery: nd,
                prefix_announcement: pa,
                ignored,
                fragment,
            },
        )
}
