//! Name components: the typed components of NDN packet format v0.3 and the naming conventions
//! (rev. 3), their canonical order, and their NDN URI form.
//!
//! # Overview of types
//! - [`ComponentRef`]: a borrowed component (TLV-TYPE + TLV-VALUE), `Copy`, what name iterators yield.
//! - [`Component`]: an owned component, with constructors for each typed kind.
//! - [`Kind`]: what a component means, decoded from its type and value.
//!
//! # URI form
//! ```text
//! GenericNameComponent             hello%20world     ("..." + value when the value is only periods)
//! ImplicitSha256DigestComponent    sha256digest=<64 hex>
//! ParametersSha256DigestComponent  params-sha256=<64 hex>
//! Segment/ByteOffset/Version/      seg=N  off=N  v=N
//! Timestamp/SequenceNum            t=N  seq=N
//! any other type T                 T=<escaped value>
//! ```
//! Escaping keeps the RFC 3986 unreserved characters (`A–Z a–z 0–9 - . _ ~`) and writes every other
//! octet as `%XX`. A typed number component whose value is not a NonNegativeInteger in its shortest
//! form is written as `T=<escaped value>`, so that the URI parses back to the same bytes.

use core::cmp::Ordering;
use core::fmt;

use crate::types::*;
use crate::varnum::{is_shortest_nonneg, nonneg_bytes, read_nonneg};
use crate::{Error, Result};

/// Typed components whose value is a number, with their URI prefixes.
const NUMBER_PREFIXES: &[(u32, &str)] = &[
    (SEGMENT_NAME_COMPONENT, "seg"),
    (BYTE_OFFSET_NAME_COMPONENT, "off"),
    (VERSION_NAME_COMPONENT, "v"),
    (TIMESTAMP_NAME_COMPONENT, "t"),
    (SEQUENCE_NUM_NAME_COMPONENT, "seq"),
];

/// What a component means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    /// GenericNameComponent.
    Generic(&'a [u8]),
    /// ImplicitSha256DigestComponent (32 octets).
    ImplicitSha256Digest(&'a [u8]),
    /// ParametersSha256DigestComponent (32 octets).
    ParametersSha256Digest(&'a [u8]),
    /// KeywordNameComponent.
    Keyword(&'a [u8]),
    /// SegmentNameComponent.
    Segment(u64),
    /// ByteOffsetNameComponent.
    ByteOffset(u64),
    /// VersionNameComponent.
    Version(u64),
    /// TimestampNameComponent (microseconds since the Unix epoch).
    Timestamp(u64),
    /// SequenceNumNameComponent.
    SequenceNum(u64),
    /// Any other type, or a typed number component whose value is not a NonNegativeInteger.
    Other(u16, &'a [u8]),
}

/// A borrowed name component.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComponentRef<'a> {
    ty: u16,
    value: &'a [u8],
}

impl<'a> ComponentRef<'a> {
    /// A component of type `ty` (1..=65535) with `value`.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for a type outside 1..=65535 or a digest component that is not
    /// 32 octets.
    pub fn new(ty: u32, value: &'a [u8]) -> Result<Self> {
        if ty == 0 || ty > u16::MAX as u32 {
            return Err(Error::InvalidValue { ty, what: "name component TLV-TYPE must be in 1..=65535" });
        }
        if (ty == IMPLICIT_SHA256_DIGEST_COMPONENT || ty == PARAMETERS_SHA256_DIGEST_COMPONENT) && value.len() != 32 {
            return Err(Error::InvalidValue { ty, what: "digest component must be 32 octets" });
        }
        Ok(ComponentRef { ty: ty as u16, value })
    }

    /// A component whose type and value were already checked by [`ComponentRef::new`] (a name's
    /// iterator over bytes the name validated when it was built).
    pub(crate) fn validated(ty: u32, value: &'a [u8]) -> Self {
        debug_assert!(ComponentRef::new(ty, value).is_ok());
        ComponentRef { ty: ty as u16, value }
    }

    /// TLV-TYPE.
    pub fn ty(&self) -> u32 {
        self.ty as u32
    }

    /// TLV-VALUE.
    pub fn value(&self) -> &'a [u8] {
        self.value
    }

    /// Decodes what the component means.
    pub fn kind(&self) -> Kind<'a> {
        let number = || read_nonneg(self.ty as u32, self.value).ok();
        match self.ty as u32 {
            GENERIC_NAME_COMPONENT => Kind::Generic(self.value),
            IMPLICIT_SHA256_DIGEST_COMPONENT => Kind::ImplicitSha256Digest(self.value),
            PARAMETERS_SHA256_DIGEST_COMPONENT => Kind::ParametersSha256Digest(self.value),
            KEYWORD_NAME_COMPONENT => Kind::Keyword(self.value),
            SEGMENT_NAME_COMPONENT => number().map_or(Kind::Other(self.ty, self.value), Kind::Segment),
            BYTE_OFFSET_NAME_COMPONENT => number().map_or(Kind::Other(self.ty, self.value), Kind::ByteOffset),
            VERSION_NAME_COMPONENT => number().map_or(Kind::Other(self.ty, self.value), Kind::Version),
            TIMESTAMP_NAME_COMPONENT => number().map_or(Kind::Other(self.ty, self.value), Kind::Timestamp),
            SEQUENCE_NUM_NAME_COMPONENT => number().map_or(Kind::Other(self.ty, self.value), Kind::SequenceNum),
            _ => Kind::Other(self.ty, self.value),
        }
    }

    /// The owned copy.
    pub fn to_owned(&self) -> Component {
        Component { ty: self.ty, value: self.value.to_vec() }
    }

    /// Octets of its TLV encoding.
    pub fn encoded_len(&self) -> usize {
        crate::tlv::tlv_len(self.ty as u32, self.value.len())
    }

    /// Canonical order (NDN packet format v0.3, "Canonical Order"): by TLV-TYPE, then by
    /// TLV-LENGTH, then octet by octet.
    pub fn canonical_cmp(&self, other: &ComponentRef<'_>) -> Ordering {
        self.ty.cmp(&other.ty).then(self.value.len().cmp(&other.value.len())).then_with(|| self.value.cmp(other.value))
    }

    /// Parses one component from its URI form (the text between two slashes).
    ///
    /// # Errors
    /// [`Error::InvalidUri`] when the text is not a valid component URI.
    pub fn parse_uri(text: &str) -> Result<Component> {
        Component::from_uri(text)
    }
}

impl PartialOrd for ComponentRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ComponentRef<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.canonical_cmp(other)
    }
}

impl fmt::Display for ComponentRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ty = self.ty as u32;
        match ty {
            GENERIC_NAME_COMPONENT => return write_escaped(f, self.value),
            IMPLICIT_SHA256_DIGEST_COMPONENT => return write_hex(f, "sha256digest=", self.value),
            PARAMETERS_SHA256_DIGEST_COMPONENT => return write_hex(f, "params-sha256=", self.value),
            _ => {}
        }
        if let Some(&(_, prefix)) = NUMBER_PREFIXES.iter().find(|(t, _)| *t == ty) {
            if is_shortest_nonneg(self.value) {
                let n = read_nonneg(ty, self.value).unwrap_or_default();
                return write!(f, "{prefix}={n}");
            }
        }
        write!(f, "{ty}=")?;
        write_escaped(f, self.value)
    }
}

impl fmt::Debug for ComponentRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Component({self})")
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, prefix: &str, value: &[u8]) -> fmt::Result {
    f.write_str(prefix)?;
    value.iter().try_for_each(|b| write!(f, "{b:02x}"))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn write_escaped(f: &mut fmt::Formatter<'_>, value: &[u8]) -> fmt::Result {
    if value.iter().all(|&b| b == b'.') {
        // Only periods (or empty): three extra periods, so "." and ".." stay unambiguous.
        f.write_str("...")?;
    }
    for &b in value {
        if is_unreserved(b) {
            write!(f, "{}", b as char)?;
        } else {
            write!(f, "%{b:02X}")?;
        }
    }
    Ok(())
}

/// Undoes percent-escaping.
fn unescape(text: &str) -> Result<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(Error::InvalidUri("'%' must be followed by two hex digits"))?;
            let hi = hex_digit(hex[0]).ok_or(Error::InvalidUri("'%' must be followed by two hex digits"))?;
            let lo = hex_digit(hex[1]).ok_or(Error::InvalidUri("'%' must be followed by two hex digits"))?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn hex_digit(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

fn unescape_value(text: &str) -> Result<Vec<u8>> {
    let value = unescape(text)?;
    if value.iter().all(|&b| b == b'.') {
        if value.len() < 3 {
            return Err(Error::InvalidUri("a component of only periods needs at least three"));
        }
        return Ok(value[3..].to_vec());
    }
    Ok(value)
}

/// An owned name component.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Component {
    ty: u16,
    value: Vec<u8>,
}

impl Component {
    /// A component of type `ty` with `value`; see [`ComponentRef::new`].
    ///
    /// # Errors
    /// As [`ComponentRef::new`].
    pub fn new(ty: u32, value: impl Into<Vec<u8>>) -> Result<Self> {
        let value = value.into();
        ComponentRef::new(ty, &value)?;
        Ok(Component { ty: ty as u16, value })
    }

    /// A GenericNameComponent.
    pub fn generic(value: impl Into<Vec<u8>>) -> Self {
        Component { ty: GENERIC_NAME_COMPONENT as u16, value: value.into() }
    }

    /// A KeywordNameComponent.
    pub fn keyword(value: impl Into<Vec<u8>>) -> Self {
        Component { ty: KEYWORD_NAME_COMPONENT as u16, value: value.into() }
    }

    fn number(ty: u32, n: u64) -> Self {
        let (bytes, len) = nonneg_bytes(n);
        Component { ty: ty as u16, value: bytes[..len].to_vec() }
    }

    /// A SegmentNameComponent.
    pub fn segment(n: u64) -> Self {
        Self::number(SEGMENT_NAME_COMPONENT, n)
    }

    /// A ByteOffsetNameComponent.
    pub fn byte_offset(n: u64) -> Self {
        Self::number(BYTE_OFFSET_NAME_COMPONENT, n)
    }

    /// A VersionNameComponent.
    pub fn version(n: u64) -> Self {
        Self::number(VERSION_NAME_COMPONENT, n)
    }

    /// A TimestampNameComponent (microseconds since the Unix epoch).
    pub fn timestamp(n: u64) -> Self {
        Self::number(TIMESTAMP_NAME_COMPONENT, n)
    }

    /// A SequenceNumNameComponent.
    pub fn sequence_num(n: u64) -> Self {
        Self::number(SEQUENCE_NUM_NAME_COMPONENT, n)
    }

    /// An ImplicitSha256DigestComponent.
    pub fn implicit_sha256(digest: [u8; 32]) -> Self {
        Component { ty: IMPLICIT_SHA256_DIGEST_COMPONENT as u16, value: digest.to_vec() }
    }

    /// A ParametersSha256DigestComponent.
    pub fn parameters_sha256(digest: [u8; 32]) -> Self {
        Component { ty: PARAMETERS_SHA256_DIGEST_COMPONENT as u16, value: digest.to_vec() }
    }

    /// The borrowed form.
    pub fn as_ref(&self) -> ComponentRef<'_> {
        ComponentRef { ty: self.ty, value: &self.value }
    }

    /// TLV-TYPE.
    pub fn ty(&self) -> u32 {
        self.ty as u32
    }

    /// TLV-VALUE.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// Parses one component from its URI form; see the module documentation.
    ///
    /// # Errors
    /// [`Error::InvalidUri`] for a malformed escape, number or digest, or a bad type number.
    pub fn from_uri(text: &str) -> Result<Self> {
        let Some((prefix, rest)) = text.split_once('=') else {
            return Ok(Component::generic(unescape_value(text)?));
        };
        let digest = |rest: &str| -> Result<[u8; 32]> {
            let bytes = rest.as_bytes();
            if bytes.len() != 64 {
                return Err(Error::InvalidUri("a digest component needs 64 hex digits"));
            }
            let mut out = [0u8; 32];
            for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                let hi = hex_digit(pair[0]).ok_or(Error::InvalidUri("a digest component needs 64 hex digits"))?;
                let lo = hex_digit(pair[1]).ok_or(Error::InvalidUri("a digest component needs 64 hex digits"))?;
                *o = hi << 4 | lo;
            }
            Ok(out)
        };
        match prefix {
            "sha256digest" => return Ok(Component::implicit_sha256(digest(rest)?)),
            "params-sha256" => return Ok(Component::parameters_sha256(digest(rest)?)),
            _ => {}
        }
        if let Some(&(ty, _)) = NUMBER_PREFIXES.iter().find(|(_, p)| *p == prefix) {
            let n: u64 = rest.parse().map_err(|_| Error::InvalidUri("a typed number component needs a decimal number"))?;
            return Ok(Component::number(ty, n));
        }
        if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) {
            let ty: u32 = prefix.parse().map_err(|_| Error::InvalidUri("component type number out of range"))?;
            return Component::new(ty, unescape_value(rest)?)
                .map_err(|_| Error::InvalidUri("component type must be in 1..=65535 (digests: 32 octets)"));
        }
        // Not a known prefix: the '=' belongs to a generic component's value.
        Ok(Component::generic(unescape_value(text)?))
    }
}

impl PartialOrd for Component {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Component {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_ref().canonical_cmp(&other.as_ref())
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl fmt::Debug for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl core::str::FromStr for Component {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Component::from_uri(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(c: &Component) -> String {
        c.to_string()
    }

    #[test]
    fn uri_of_each_kind() {
        assert_eq!(uri(&Component::generic(*b"hello world")), "hello%20world");
        assert_eq!(uri(&Component::generic(*b"")), "...");
        assert_eq!(uri(&Component::generic(*b".")), "....");
        assert_eq!(uri(&Component::generic(*b"a.b~c_d-e")), "a.b~c_d-e");
        assert_eq!(uri(&Component::segment(0)), "seg=0");
        assert_eq!(uri(&Component::byte_offset(1024)), "off=1024");
        assert_eq!(uri(&Component::version(1_700_000_000_000)), "v=1700000000000");
        assert_eq!(uri(&Component::timestamp(7)), "t=7");
        assert_eq!(uri(&Component::sequence_num(u64::MAX)), "seq=18446744073709551615");
        assert_eq!(uri(&Component::keyword(*b"k")), "32=k");
        assert_eq!(uri(&Component::new(50, [0u8, 5]).unwrap()), "50=%00%05");
        assert_eq!(uri(&Component::new(300, *b"x/y").unwrap()), "300=x%2Fy");
        let d = Component::implicit_sha256([0xab; 32]);
        assert_eq!(uri(&d), format!("sha256digest={}", "ab".repeat(32)));
        let p = Component::parameters_sha256([0x01; 32]);
        assert_eq!(uri(&p), format!("params-sha256={}", "01".repeat(32)));
    }

    #[test]
    fn uri_parse_round_trips() {
        for text in
            ["hello%20world", "...", "....", "seg=0", "v=17", "t=7", "seq=3", "off=9", "32=k", "50=%00%05", "300=x%2Fy", "8=plain", "a%3Db"]
        {
            let c = Component::from_uri(text).unwrap();
            let again = Component::from_uri(&c.to_string()).unwrap();
            assert_eq!(c, again, "{text}");
        }
        assert_eq!(Component::from_uri("8=plain").unwrap(), Component::generic(*b"plain"));
        assert_eq!(Component::from_uri("x=y").unwrap(), Component::generic(*b"x=y"));
        assert_eq!(Component::from_uri("%41").unwrap(), Component::generic(*b"A"));
        assert!(Component::from_uri("..").is_err());
        assert!(Component::from_uri("%4").is_err());
        assert!(Component::from_uri("%zz").is_err());
        assert!(Component::from_uri("seg=x").is_err());
        assert!(Component::from_uri("0=x").is_err());
        assert!(Component::from_uri("65536=x").is_err());
        assert!(Component::from_uri("1=abc").is_err());
        assert!(Component::from_uri("sha256digest=abc").is_err());
    }

    #[test]
    fn canonical_order() {
        let mut v = [
            Component::generic(*b"b"),
            Component::generic(*b"aa"),
            Component::generic(*b"a"),
            Component::segment(1),
            Component::implicit_sha256([0; 32]),
        ];
        v.sort();
        let uris: Vec<_> = v.iter().map(|c| c.to_string()).collect();
        assert_eq!(uris[0], format!("sha256digest={}", "00".repeat(32)));
        assert_eq!(&uris[1..], ["a", "b", "aa", "seg=1"]);
    }

    #[test]
    fn kinds() {
        assert_eq!(Component::segment(9).as_ref().kind(), Kind::Segment(9));
        assert_eq!(Component::new(54, [1u8, 2, 3]).unwrap().as_ref().kind(), Kind::Other(54, &[1, 2, 3]));
        assert!(Component::new(0, *b"x").is_err());
        assert!(Component::new(2, [0u8; 31]).is_err());
    }
}
