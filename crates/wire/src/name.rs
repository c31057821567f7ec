//! Names: a sequence of components, as a zero-copy view ([`NameView`]) and owned ([`Name`]).
//!
//! Both hold the Name's TLV-VALUE (the concatenated component TLVs) in one contiguous buffer, so a
//! prefix of a name is a prefix of its bytes: lookup tables hash and compare prefixes without
//! copying. Equality and hashing are on those bytes, which is equality of components because
//! nexthop accepts only the shortest VAR-NUMBER forms. Ordering is NDN's canonical order.
//!
//! The URI form is `/` followed by the components' URI forms (see [`crate::component`]) joined by
//! `/`; an optional `ndn:` scheme is accepted when parsing, a trailing `/` is ignored, and `/`
//! alone is the empty name.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};

use crate::component::{Component, ComponentRef};
use crate::tlv::{tlv_len, Tlv};
use crate::types::NAME;
use crate::writer::{Emit, Writer};
use crate::{Error, Result};

/// A validated name borrowed from packet bytes.
#[derive(Clone, Copy)]
pub struct NameView<'a> {
    value: &'a [u8],
    len: usize,
}

/// Iterator over the components of a validated name.
#[derive(Debug, Clone)]
pub struct Components<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Components<'a> {
    type Item = ComponentRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<ComponentRef<'a>> {
        // The bytes were validated when the name was built, so the read does not fail (if it
        // ever did, the iterator would simply end early) and the component needs no new check.
        let tlv = Tlv::read(self.rest).ok()?;
        self.rest = &self.rest[tlv.wire.len()..];
        Some(ComponentRef::validated(tlv.ty, tlv.value))
    }
}

impl<'a> NameView<'a> {
    /// The empty name.
    pub const EMPTY: NameView<'static> = NameView { value: &[], len: 0 };

    /// Validates a Name TLV-VALUE: every element is a component of type 1..=65535, digest
    /// components are 32 octets.
    ///
    /// # Errors
    /// A TLV framing error, or [`Error::InvalidValue`] for a bad component. Never panics.
    pub fn from_value(value: &'a [u8]) -> Result<Self> {
        Self::from_value_with(value, |_, _| {})
    }

    /// [`NameView::from_value`] that also shows each component, with its index, to `visit`, so a
    /// decoder can look for a component in the same pass.
    pub(crate) fn from_value_with(value: &'a [u8], mut visit: impl FnMut(usize, ComponentRef<'a>)) -> Result<Self> {
        let mut rest = value;
        let mut len = 0;
        while !rest.is_empty() {
            let tlv = Tlv::read(rest)?;
            visit(len, ComponentRef::new(tlv.ty, tlv.value)?);
            rest = &rest[tlv.wire.len()..];
            len += 1;
        }
        Ok(NameView { value, len })
    }

    /// Decodes a whole Name TLV.
    ///
    /// # Errors
    /// As [`NameView::from_value`], plus [`Error::UnexpectedType`] and [`Error::TrailingBytes`].
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        Self::from_value(Tlv::read_exact(wire, NAME)?.value)
    }

    /// Number of components.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for the empty name.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The Name TLV-VALUE: concatenated component TLVs.
    #[inline]
    pub fn value(&self) -> &'a [u8] {
        self.value
    }

    /// The components, first to last.
    #[inline]
    pub fn components(&self) -> Components<'a> {
        Components { rest: self.value }
    }

    /// Component `i`, if the name has that many.
    pub fn get(&self, i: usize) -> Option<ComponentRef<'a>> {
        self.components().nth(i)
    }

    /// The last component.
    pub fn last(&self) -> Option<ComponentRef<'a>> {
        self.components().last()
    }

    /// The first `n` components (all of them when `n >= len`).
    pub fn prefix(&self, n: usize) -> NameView<'a> {
        if n >= self.len {
            return *self;
        }
        let bytes: usize = self.components().take(n).map(|c| c.encoded_len()).sum();
        NameView { value: &self.value[..bytes], len: n }
    }

    /// True when `self` is a prefix of `other` (every name is a prefix of itself).
    pub fn is_prefix_of(&self, other: &NameView<'_>) -> bool {
        self.len <= other.len && other.value.starts_with(self.value)
    }

    /// Octets of the Name TLV.
    pub fn encoded_len(&self) -> usize {
        tlv_len(NAME, self.value.len())
    }

    /// The owned copy.
    pub fn to_name(&self) -> Name {
        Name { value: self.value.to_vec(), len: self.len }
    }
}

impl PartialEq for NameView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for NameView<'_> {}

impl Hash for NameView<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state)
    }
}

impl PartialOrd for NameView<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NameView<'_> {
    /// Canonical order: component by component; a proper prefix sorts first.
    fn cmp(&self, other: &Self) -> Ordering {
        let mut a = self.components();
        let mut b = other.components();
        loop {
            match (a.next(), b.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) => match x.canonical_cmp(&y) {
                    Ordering::Equal => continue,
                    o => return o,
                },
            }
        }
    }
}

impl fmt::Display for NameView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        self.components().try_for_each(|c| write!(f, "/{c}"))
    }
}

impl fmt::Debug for NameView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

/// An owned name.
#[derive(Clone, Default)]
pub struct Name {
    value: Vec<u8>,
    len: usize,
}

impl Name {
    /// The empty name.
    pub fn new() -> Self {
        Name::default()
    }

    /// The borrowed form.
    #[inline]
    pub fn as_view(&self) -> NameView<'_> {
        NameView { value: &self.value, len: self.len }
    }

    /// Validates and copies a Name TLV-VALUE.
    ///
    /// # Errors
    /// As [`NameView::from_value`].
    pub fn from_value(value: &[u8]) -> Result<Self> {
        NameView::from_value(value).map(|v| v.to_name())
    }

    /// Parses the NDN URI form.
    ///
    /// # Errors
    /// [`Error::InvalidUri`] when the text does not start with `/` (after an optional `ndn:`),
    /// has an empty component (`//`), or a component is invalid.
    ///
    /// # Example
    /// ```
    /// use nexthop_wire::Name;
    /// let name = Name::from_uri("/ndn/edu/v=3/seg=0").unwrap();
    /// assert_eq!(name.len(), 4);
    /// assert_eq!(name.to_string(), "/ndn/edu/v=3/seg=0");
    /// ```
    pub fn from_uri(uri: &str) -> Result<Self> {
        let path = uri.strip_prefix("ndn:").unwrap_or(uri);
        let path = path.strip_prefix('/').ok_or(Error::InvalidUri("a name must start with '/'"))?;
        let path = path.strip_suffix('/').unwrap_or(path);
        let mut name = Name::new();
        if path.is_empty() {
            return Ok(name);
        }
        for part in path.split('/') {
            if part.is_empty() {
                return Err(Error::InvalidUri("empty component between slashes"));
            }
            name.push(Component::from_uri(part)?.as_ref());
        }
        Ok(name)
    }

    /// Appends a component.
    pub fn push(&mut self, c: ComponentRef<'_>) {
        let mut buf = [0u8; 18];
        let mut w = Writer::new(&mut buf);
        // A header is at most 9 + 9 octets, so this never fails.
        if w.put_header(c.ty(), c.value().len()).is_ok() {
            let n = w.position();
            self.value.extend_from_slice(&buf[..n]);
            self.value.extend_from_slice(c.value());
            self.len += 1;
        }
    }

    /// Appends a component, builder style.
    pub fn with(mut self, c: Component) -> Self {
        self.push(c.as_ref());
        self
    }

    /// Appends a GenericNameComponent, builder style.
    pub fn with_generic(self, value: impl Into<Vec<u8>>) -> Self {
        self.with(Component::generic(value))
    }

    /// Removes the last component.
    pub fn pop(&mut self) {
        if self.len > 0 {
            let keep = self.as_view().prefix(self.len - 1).value().len();
            self.value.truncate(keep);
            self.len -= 1;
        }
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for the empty name.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Component `i`.
    pub fn get(&self, i: usize) -> Option<ComponentRef<'_>> {
        self.as_view().get(i)
    }

    /// The components, first to last.
    pub fn components(&self) -> Components<'_> {
        self.as_view().components()
    }

    /// The Name TLV-VALUE.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The first `n` components, owned.
    pub fn prefix(&self, n: usize) -> Name {
        self.as_view().prefix(n).to_name()
    }

    /// True when `self` is a prefix of `other`.
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        self.as_view().is_prefix_of(&other.as_view())
    }
}

impl Emit for Name {
    fn encoded_len(&self) -> usize {
        tlv_len(NAME, self.value.len())
    }

    fn emit_to(&self, w: &mut Writer<'_>) -> Result<()> {
        w.put_tlv(NAME, &self.value)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for Name {}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state)
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_view().cmp(&other.as_view())
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_view().fmt(f)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_view().fmt(f)
    }
}

impl core::str::FromStr for Name {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Name::from_uri(s)
    }
}

impl<'a> FromIterator<ComponentRef<'a>> for Name {
    fn from_iter<I: IntoIterator<Item = ComponentRef<'a>>>(iter: I) -> Self {
        let mut name = Name::new();
        iter.into_iter().for_each(|c| name.push(c));
        name
    }
}

impl<'a> From<NameView<'a>> for Name {
    fn from(v: NameView<'a>) -> Self {
        v.to_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/ndn/edu/seg=3`, hand-encoded.
    const NAME_BYTES: &[u8] = &[
        0x07, 0x0d, //
        0x08, 0x03, b'n', b'd', b'n', //
        0x08, 0x03, b'e', b'd', b'u', //
        0x32, 0x01, 0x03,
    ];

    #[test]
    fn deconstruct() {
        let v = NameView::decode(NAME_BYTES).unwrap();
        assert_eq!(v.len(), 3);
        let c: Vec<_> = v.components().map(|c| (c.ty(), c.value().to_vec())).collect();
        assert_eq!(c, [(8, b"ndn".to_vec()), (8, b"edu".to_vec()), (50, vec![3])]);
        assert_eq!(v.to_string(), "/ndn/edu/seg=3");
    }

    #[test]
    fn construct_and_emit() {
        let name = Name::new().with_generic(*b"ndn").with_generic(*b"edu").with(Component::segment(3));
        let mut buf = [0xa5u8; 32];
        let n = name.emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], NAME_BYTES);
        assert!(buf[n..].iter().all(|&b| b == 0xa5));
        assert_eq!(name.encoded_len(), NAME_BYTES.len());
        assert_eq!(name.emit(&mut [0u8; 4]), Err(Error::BufferTooSmall));
    }

    #[test]
    fn uri_both_ways() {
        let name = Name::from_uri("ndn:/ndn/edu/seg=3/").unwrap();
        assert_eq!(name.to_bytes(), NAME_BYTES);
        assert_eq!(Name::from_uri("/").unwrap(), Name::new());
        assert_eq!(Name::new().to_string(), "/");
        assert!(Name::from_uri("a/b").is_err());
        assert!(Name::from_uri("/a//b").is_err());
        assert_eq!(Name::from_uri("/a/.../b").unwrap().get(1).unwrap().value(), b"");
    }

    #[test]
    fn prefixes_and_order() {
        let a = Name::from_uri("/a/b/c").unwrap();
        assert_eq!(a.prefix(2).to_string(), "/a/b");
        assert!(a.prefix(2).is_prefix_of(&a));
        assert!(!Name::from_uri("/a/c").unwrap().is_prefix_of(&a));
        assert!(Name::from_uri("/a/b").unwrap() < a);
        assert!(Name::from_uri("/a/b/c").unwrap() < Name::from_uri("/a/b/d").unwrap());
        assert!(Name::from_uri("/a/z").unwrap() < Name::from_uri("/a/aa").unwrap());
        let mut p = a.clone();
        p.pop();
        assert_eq!(p, a.prefix(2));
        // A component TLV-VALUE is not a prefix boundary: /ab is not a prefix of /abc.
        assert!(!Name::from_uri("/ab").unwrap().is_prefix_of(&Name::from_uri("/abc").unwrap()));
    }

    #[test]
    fn rejects_bad_components() {
        assert!(NameView::from_value(&[0x00, 0x00]).is_err());
        assert!(NameView::from_value(&[0xfe, 0x00, 0x01, 0x00, 0x00, 0x00]).is_err());
        assert!(NameView::from_value(&[0x01, 0x01, 0x00]).is_err());
        assert!(NameView::from_value(&[0x08, 0x02, 0x00]).is_err());
    }
}
