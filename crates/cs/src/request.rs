//! What a content-store lookup asks for, taken from an Interest: the name and the selectors that
//! matter to a cache (CanBePrefix, MustBeFresh), and the implicit digest when the name ends in one.

use nexthop_wire::types::IMPLICIT_SHA256_DIGEST_COMPONENT;
use nexthop_wire::{InterestView, NameView};

/// A lookup: which Data may answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// The Interest name's TLV-VALUE, without a trailing implicit digest.
    pub name: &'a [u8],
    /// Any Data whose name starts with `name` matches (else only the exact name).
    pub can_be_prefix: bool,
    /// Only Data that is still fresh (age below its FreshnessPeriod) matches.
    pub must_be_fresh: bool,
    /// The Interest named the Data by its implicit SHA-256 digest: only that exact packet matches.
    pub digest: Option<[u8; 32]>,
}

impl<'a> Request<'a> {
    /// A request for exactly the Data named `name`, fresh or not.
    pub fn exact(name: NameView<'a>) -> Self {
        Request { name: name.value(), can_be_prefix: false, must_be_fresh: false, digest: None }
    }

    /// The request an Interest makes.
    pub fn from_interest(interest: &InterestView<'a>) -> Self {
        let name = interest.name();
        let digest = name.last().filter(|c| c.ty() == IMPLICIT_SHA256_DIGEST_COMPONENT).and_then(|c| <[u8; 32]>::try_from(c.value()).ok());
        let name_value = if digest.is_some() { name.prefix(name.len() - 1).value() } else { name.value() };
        Request { name: name_value, can_be_prefix: interest.can_be_prefix(), must_be_fresh: interest.must_be_fresh(), digest }
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Component, Emit, Interest, Name};

    use super::*;

    #[test]
    fn digest_is_split_off() {
        let name = Name::from_uri("/a/b").unwrap();
        let mut i = Interest::new(name.clone().with(Component::implicit_sha256([7; 32])));
        i.must_be_fresh = true;
        let bytes = i.to_bytes();
        let view = InterestView::decode(&bytes).unwrap();
        let r = Request::from_interest(&view);
        assert_eq!(r.name, name.value());
        assert_eq!(r.digest, Some([7; 32]));
        assert!(r.must_be_fresh && !r.can_be_prefix);
    }
}
