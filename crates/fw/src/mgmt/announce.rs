//! Prefix announcements: the signed Data an app hands the forwarder with `rib/announce` (NFD's
//! "Register a route with Prefix Announcement object"), instead of ControlParameters.
//!
//! # Overview
//! A prefix announcement is a Data packet named `<prefix>/32=PA/<version>/<segment 0>`, of
//! ContentType PrefixAnn (5), whose content is an ExpirationPeriod (milliseconds) and an
//! optional ValidityPeriod (NotBefore and NotAfter, `YYYYMMDDThhmmss` UTC). The route it makes
//! lives for the ExpirationPeriod, and no longer than the ValidityPeriod's end; an announcement
//! outside its ValidityPeriod makes none. Its signature is checked where
//! `forwarder.prefix_announcement_security` (NFD's `prefix_announcement_validation`) is set,
//! by [`super::validator`]; else, as NFD's sample configuration (trust anchor "any"), not.
//! This module only decodes and times; [`super::Manager`] makes the route.

use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{DataView, Kind, Name};

/// ContentType of a prefix announcement.
pub const CONTENT_TYPE_PREFIX_ANN: u64 = 5;
/// The keyword component before the version: `32=PA`.
const KEYWORD: &[u8] = b"PA";
/// ExpirationPeriod.
const EXPIRATION_PERIOD: u32 = 0x6d;
/// ValidityPeriod and its NotBefore and NotAfter.
const VALIDITY_PERIOD: u32 = 0xfd;
const NOT_BEFORE: u32 = 0xfe;
const NOT_AFTER: u32 = 0xff;

/// Why an announcement was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad prefix announcement: {0}")]
pub struct AnnounceError(pub &'static str);

/// A decoded prefix announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixAnnouncement {
    /// The prefix announced.
    pub announced: Name,
    /// How long the route lives (ms).
    pub expiration_ms: u64,
    /// NotBefore and NotAfter, in ms since the Unix epoch.
    pub validity: Option<(u64, u64)>,
}

impl PrefixAnnouncement {
    /// Decodes an announcement (the whole Data packet).
    ///
    /// # Errors
    /// [`AnnounceError`] when it is not a Data packet, its name is not `…/32=PA/<version>/<seg 0>`,
    /// its ContentType is not PrefixAnn, or its content lacks an ExpirationPeriod or holds a bad
    /// one or a bad ValidityPeriod.
    pub fn decode(wire: &[u8]) -> Result<Self, AnnounceError> {
        let data = DataView::decode(wire).map_err(|_| AnnounceError("not a Data packet"))?;
        let name = data.name();
        let n = name.len();
        let kinds =
            (n >= 3).then(|| (name.get(n - 3).map(|c| c.kind()), name.get(n - 2).map(|c| c.kind()), name.get(n - 1).map(|c| c.kind())));
        if !matches!(kinds, Some((Some(Kind::Keyword(KEYWORD)), Some(Kind::Version(_)), Some(Kind::Segment(0))))) {
            return Err(AnnounceError("name does not end in 32=PA/<version>/<segment 0>"));
        }
        if data.content_type() != CONTENT_TYPE_PREFIX_ANN {
            return Err(AnnounceError("ContentType is not PrefixAnn (5)"));
        }
        let (mut expiration_ms, mut validity) = (None, None);
        for t in TlvReader::new(data.content().unwrap_or_default()) {
            let t = t.map_err(|_| AnnounceError("content does not parse"))?;
            match t.ty {
                EXPIRATION_PERIOD => expiration_ms = Some(read_nonneg(t.ty, t.value).map_err(|_| AnnounceError("bad ExpirationPeriod"))?),
                VALIDITY_PERIOD => validity = Some(validity_period(t.value).ok_or(AnnounceError("bad ValidityPeriod"))?),
                _ => {}
            }
        }
        let expiration_ms = expiration_ms.ok_or(AnnounceError("no ExpirationPeriod"))?;
        Ok(PrefixAnnouncement { announced: name.to_name().prefix(n - 3), expiration_ms, validity })
    }

    /// How long the route lives from `now_ms` (ms since the Unix epoch): the ExpirationPeriod,
    /// cut at NotAfter; `None` outside the ValidityPeriod.
    pub fn lifetime_ms(&self, now_ms: u64) -> Option<u64> {
        match self.validity {
            Some((not_before, not_after)) if now_ms < not_before || now_ms > not_after => None,
            Some((_, not_after)) => Some(self.expiration_ms.min(not_after - now_ms)),
            None => Some(self.expiration_ms),
        }
    }
}

/// NotBefore and NotAfter of a ValidityPeriod's value, in ms since the Unix epoch.
pub(super) fn validity_period(value: &[u8]) -> Option<(u64, u64)> {
    let (mut before, mut after) = (None, None);
    for t in TlvReader::new(value) {
        let t = t.ok()?;
        match t.ty {
            NOT_BEFORE => before = Some(iso_basic_ms(t.value)?),
            NOT_AFTER => after = Some(iso_basic_ms(t.value)?),
            _ => {}
        }
    }
    Some((before?, after?))
}

/// `YYYYMMDDThhmmss` (UTC, the packet format's timestamps) as ms since the Unix epoch.
fn iso_basic_ms(s: &[u8]) -> Option<u64> {
    if s.len() != 15 || s[8] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u64> {
        s[r].iter().try_fold(0u64, |n, &b| b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0')))
    };
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from the civil date (proleptic Gregorian; the year starts in March so that the leap
    // day comes last).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era_day = 365 * y + y / 4 - y / 100 + y / 400 + (153 * m + 2) / 5 + d - 1;
    let days = era_day - 719_468; // The days from 0000-03-01 to 1970-01-01.
    Some(((days * 24 + hh) * 60 + mm) * 60 * 1000 + ss * 1000)
}

#[cfg(test)]
pub(super) mod tests {
    use nexthop_wire::{Component, Data, Emit, MetaInfo};

    use super::*;
    use crate::lp::encode::{put_nonneg, put_tlv};

    /// An announcement of `prefix` for an hour, signed with ECDSA by `key` as `locator`.
    pub(in crate::mgmt) fn signed_announcement(prefix: &str, key: &p256::ecdsa::SigningKey, locator: &str) -> Vec<u8> {
        let d = Data::decode(&announcement(prefix, 3_600_000, None, 5)).unwrap();
        crate::mgmt::validator::tests::signed(d, key, locator, None)
    }

    /// An announcement of `prefix` as NDNts and ndn-cxx make it.
    fn announcement(prefix: &str, expiration_ms: u64, validity: Option<(&str, &str)>, content_type: u64) -> Vec<u8> {
        let name =
            Name::from_uri(prefix).unwrap().with(Component::keyword(KEYWORD)).with(Component::version(7)).with(Component::segment(0));
        let mut content = Vec::new();
        put_nonneg(&mut content, EXPIRATION_PERIOD, expiration_ms);
        if let Some((before, after)) = validity {
            let mut v = Vec::new();
            put_tlv(&mut v, NOT_BEFORE, before.as_bytes());
            put_tlv(&mut v, NOT_AFTER, after.as_bytes());
            put_tlv(&mut content, VALIDITY_PERIOD, &v);
        }
        let mut d = Data::new(name, content);
        d.meta_info = Some(MetaInfo { content_type: Some(content_type), ..MetaInfo::default() });
        d.sign_digest_sha256();
        d.to_bytes()
    }

    #[test]
    fn an_announcement_decodes_and_times_its_route() {
        let pa = PrefixAnnouncement::decode(&announcement("/app/chat", 3_600_000, None, 5)).unwrap();
        assert_eq!(pa.announced, Name::from_uri("/app/chat").unwrap());
        assert_eq!(pa.lifetime_ms(1_000), Some(3_600_000));
        // 2026-11-24T00:00:00 is 1,795,478,400 s after the epoch.
        let pa = PrefixAnnouncement::decode(&announcement("/a", 3_600_000, Some(("20261124T000000", "20261124T003000")), 5)).unwrap();
        let start = 1_795_478_400_000;
        assert_eq!(pa.validity, Some((start, start + 30 * 60 * 1000)));
        assert_eq!(pa.lifetime_ms(start + 10 * 60 * 1000), Some(20 * 60 * 1000), "cut at NotAfter");
        assert_eq!(pa.lifetime_ms(start - 1), None, "not yet valid");
        assert_eq!(pa.lifetime_ms(start + 31 * 60 * 1000), None, "no longer valid");
    }

    #[test]
    fn civil_dates_count_leap_days() {
        assert_eq!(iso_basic_ms(b"19700101T000000"), Some(0));
        assert_eq!(iso_basic_ms(b"20000301T000000"), Some(951_868_800_000));
        assert_eq!(iso_basic_ms(b"20240229T235959"), Some(1_709_251_199_000));
        assert_eq!(iso_basic_ms(b"20241301T000000"), None);
        assert_eq!(iso_basic_ms(b"2024-01-01T0000"), None);
    }

    #[test]
    fn what_is_not_an_announcement_is_refused() {
        assert!(PrefixAnnouncement::decode(&announcement("/a", 1, None, 0)).is_err(), "ContentType Blob");
        let mut d = Data::new(Name::from_uri("/a/b/c").unwrap(), vec![0x6d, 0x01, 0x01]);
        d.meta_info = Some(MetaInfo { content_type: Some(5), ..MetaInfo::default() });
        d.sign_digest_sha256();
        assert!(PrefixAnnouncement::decode(&d.to_bytes()).is_err(), "name without 32=PA");
        assert!(PrefixAnnouncement::decode(&announcement("/a", 1, Some(("x", "y")), 5)).is_err(), "bad ValidityPeriod");
        assert!(PrefixAnnouncement::decode(&[0x06, 0x01]).is_err());
        for seed in 0..2000u32 {
            let bytes: Vec<u8> = (0..40).map(|i| (seed.wrapping_mul(2_654_435_761).rotate_left(i) & 0xff) as u8).collect();
            let _ = PrefixAnnouncement::decode(&bytes);
        }
    }
}
