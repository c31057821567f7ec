//! Properties every decoder must keep for any input, shared by the cargo-fuzz targets in
//! `fuzz/` and the stable no-panic tests in `tests/`.
//!
//! Each `check_*` decodes arbitrary bytes. On success it reads every accessor of the view, makes
//! the owned copy, encodes it, and asserts that the encoding decodes back to an equal owned
//! packet and that `encoded_len` was exact. A panic here is a bug in the crate.

use crate::{Data, DataView, Emit, Interest, InterestView, LpPacket, LpPacketView, Name, NameView, PacketView};

/// Checks the Interest decoder on `bytes`; returns whether they were a valid Interest.
pub fn check_interest(bytes: &[u8]) -> bool {
    let Ok(v) = InterestView::decode(bytes) else {
        return false;
    };
    let _ = (v.name().to_string(), v.forwarding_hint().count(), v.nonce(), v.effective_lifetime_ms(), v.hop_limit_offset());
    let _ = (v.app_parameters(), v.signature_info(), v.verify_digest_sha256());
    if let Some(at) = v.hop_limit_offset() {
        assert_eq!(Some(bytes[at]), v.hop_limit());
    }
    let owned = v.to_owned();
    round_trip(&owned, Interest::decode);
    true
}

/// Checks the Data decoder on `bytes`; returns whether they were a valid Data packet.
pub fn check_data(bytes: &[u8]) -> bool {
    let Ok(v) = DataView::decode(bytes) else {
        return false;
    };
    let _ = (v.name().to_string(), v.content_type(), v.freshness_period_ms(), v.content(), v.verify_digest_sha256());
    assert!(v.signed_portion().len() <= bytes.len());
    let owned = v.to_owned();
    round_trip(&owned, Data::decode);
    true
}

/// Checks the LpPacket decoder on `bytes`; returns whether they were a valid LpPacket. A valid
/// packet's fragment is run through [`check_packet`] too, as a forwarder would.
pub fn check_lp_packet(bytes: &[u8]) -> bool {
    let Ok(v) = LpPacketView::decode(bytes) else {
        return false;
    };
    let _ = (v.nack(), v.acks().count(), v.is_whole());
    let owned = v.to_owned();
    round_trip(&owned, LpPacket::decode);
    if let Some(fragment) = v.fragment {
        check_packet(fragment);
    }
    true
}

/// Checks the dispatching decoder and the name decoder on `bytes`.
pub fn check_packet(bytes: &[u8]) -> bool {
    if let Ok(name) = NameView::decode(bytes) {
        let text = name.to_string();
        let parsed = Name::from_uri(&text).expect("the URI of a valid name parses");
        assert_eq!(parsed.as_view(), name, "URI round trip of {text}");
    }
    match PacketView::decode(bytes) {
        Ok(PacketView::Interest(_)) => check_interest(bytes),
        Ok(PacketView::Data(_)) => check_data(bytes),
        Ok(PacketView::Lp(_)) => check_lp_packet(bytes),
        Err(_) => false,
    }
}

fn round_trip<T: Emit + PartialEq + core::fmt::Debug>(owned: &T, decode: fn(&[u8]) -> crate::Result<T>) {
    let wire = owned.to_bytes();
    assert_eq!(wire.len(), owned.encoded_len());
    let again = decode(&wire).expect("an encoded packet decodes");
    assert_eq!(&again, owned);
    assert_eq!(again.to_bytes(), wire);
}
