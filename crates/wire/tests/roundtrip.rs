//! Property tests: generated packets encode, decode and encode again to the same bytes; names
//! survive the URI form; canonical order agrees with a reference comparison.

mod common;

use nexthop_wire::{Data, DataView, Emit, Interest, InterestView, LpPacket, Name, NameView};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn interest_round_trip(i in common::interest()) {
        let bytes = i.to_bytes();
        prop_assert_eq!(bytes.len(), i.encoded_len());
        let view = InterestView::decode(&bytes).map_err(|e| TestCaseError::fail(format!("{e}: {i:?}")))?;
        prop_assert_eq!(view.wire(), &bytes[..]);
        let back = Interest::decode(&bytes).unwrap();
        prop_assert_eq!(back.to_bytes(), bytes);
        // Unknown elements' anchors are normalised by decoding, so compare fields without them.
        if i.unknown.is_empty() && i.signature_info.as_ref().is_none_or(|s| s.unknown.is_empty()) {
            prop_assert_eq!(back, i);
        }
    }

    #[test]
    fn data_round_trip(d in common::data()) {
        let bytes = d.to_bytes();
        let back = Data::decode(&bytes).map_err(|e| TestCaseError::fail(format!("{e}: {d:?}")))?;
        prop_assert_eq!(back.to_bytes(), bytes);
        if d.unknown.is_empty() && d.meta_info.as_ref().is_none_or(|m| m.unknown.is_empty()) && d.signature_info.unknown.is_empty() {
            prop_assert_eq!(back, d);
        }
    }

    #[test]
    fn data_digest_signature_verifies(d in common::data()) {
        let mut d = d;
        d.sign_digest_sha256();
        let bytes = d.to_bytes();
        prop_assert!(DataView::decode(&bytes).unwrap().verify_digest_sha256());
    }

    #[test]
    fn signed_interest_verifies(i in common::interest()) {
        let mut i = i;
        i.sign_digest_sha256();
        let bytes = i.to_bytes();
        prop_assert!(InterestView::decode(&bytes).unwrap().verify_digest_sha256());
    }

    #[test]
    fn lp_round_trip(p in common::lp_packet()) {
        let bytes = p.to_bytes();
        let back = LpPacket::decode(&bytes).map_err(|e| TestCaseError::fail(format!("{e}: {p:?}")))?;
        prop_assert_eq!(back.to_bytes(), bytes);
        if p.ignored.is_empty() {
            prop_assert_eq!(back, p);
        }
    }

    #[test]
    fn name_uri_round_trip(n in common::name()) {
        let uri = n.to_string();
        prop_assert_eq!(Name::from_uri(&uri).unwrap(), n.clone());
        let bytes = n.to_bytes();
        prop_assert_eq!(NameView::decode(&bytes).unwrap(), n.as_view());
    }

    #[test]
    fn canonical_order_matches_reference(a in common::name(), b in common::name()) {
        // Reference: compare (type, length, value) tuples lexicographically.
        let key = |n: &Name| n.components().map(|c| (c.ty(), c.value().len(), c.value().to_vec())).collect::<Vec<_>>();
        prop_assert_eq!(a.cmp(&b), key(&a).cmp(&key(&b)));
        prop_assert_eq!(a.is_prefix_of(&b), key(&b).starts_with(&key(&a)));
    }
}
