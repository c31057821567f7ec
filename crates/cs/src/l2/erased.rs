//! Name prefixes erased from the L2 (`cs/erase`), applied when batches are read.
//!
//! # Overview
//! The L2's index knows batches by key hash, not by name, so an erase cannot find the batches
//! it covers without reading the whole device. Instead it leaves a mark: the prefix and the
//! sequence number of the last batch written before it. A chunk read back from a slot written
//! at or before a mark's sequence, whose name starts with the mark's prefix, was erased: it is
//! skipped as if its slot were empty. Batches written after the erase (new Data under the same
//! prefix) are untouched.
//!
//! A mark is needed only while some stored batch is older than it; marks older than the oldest
//! stored batch are dropped as slots are rewritten. Past [`MAX_MARKS`] the L2 empties itself
//! instead (it is a cache): the caller asks [`Erased::is_full`].

use nexthop_wire::tlv::Tlv;

/// Marks kept before the L2 empties itself instead of adding one.
pub const MAX_MARKS: usize = 64;

/// One erase: a name prefix (TLV-VALUE, whole components) and the last write it covers.
#[derive(Debug, Clone)]
struct Mark {
    prefix: Box<[u8]>,
    through: u64,
}

/// The erased prefixes whose batches may still be stored.
#[derive(Debug, Clone, Default)]
pub struct Erased {
    marks: Vec<Mark>,
}

impl Erased {
    /// Erases every name under `prefix` written at or before write number `through` (at least
    /// every earlier mark's). Marks it covers are dropped: erasing a prefix again, as clients
    /// do until nothing is left, keeps one mark.
    pub fn mark(&mut self, prefix: &[u8], through: u64) {
        if self.marks.iter().any(|m| prefix.starts_with(&m.prefix) && m.through >= through) {
            return;
        }
        self.marks.retain(|m| !(m.prefix.starts_with(prefix) && m.through <= through));
        self.marks.push(Mark { prefix: prefix.into(), through });
    }

    /// Forgets the marks that cover no stored batch: those before `oldest`, the write number
    /// of the oldest batch stored (`None`: nothing is stored).
    pub fn prune(&mut self, oldest: Option<u64>) {
        match oldest {
            Some(oldest) => self.marks.retain(|m| m.through >= oldest),
            None => self.marks.clear(),
        }
    }

    /// Forgets every mark (the L2 was emptied).
    pub fn clear(&mut self) {
        self.marks.clear();
    }

    /// Whether no more marks should be added.
    pub fn is_full(&self) -> bool {
        self.marks.len() >= MAX_MARKS
    }

    /// Marks held.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Whether the Data packet `wire`, from a batch written as write number `written`, was
    /// erased. A packet whose name does not parse is not (the caller's decoding rejects it).
    pub fn hides(&self, wire: &[u8], written: u64) -> bool {
        if self.marks.iter().all(|m| m.through < written) {
            return false;
        }
        let Some(name) = data_name(wire) else { return false };
        self.marks.iter().any(|m| m.through >= written && name.starts_with(&m.prefix))
    }
}

/// The TLV-VALUE of Data packet `wire`'s name (its first element), if it parses that far.
fn data_name(wire: &[u8]) -> Option<&[u8]> {
    let data = Tlv::read(wire).ok()?;
    Some(Tlv::read(data.value).ok()?.value)
}

/// Whether the Data packet `wire`'s name starts with `prefix` (TLV-VALUE: whole components, as
/// byte prefixes of whole TLVs are).
pub fn is_under(wire: &[u8], prefix: &[u8]) -> bool {
    data_name(wire).is_some_and(|name| name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Data, Emit, Name};

    use super::*;

    fn data(uri: &str) -> Vec<u8> {
        let mut d = Data::new(Name::from_uri(uri).unwrap(), vec![0u8; 4]);
        d.sign_digest_sha256();
        d.to_bytes()
    }

    #[test]
    fn a_mark_hides_older_writes_under_its_prefix_only() {
        let mut e = Erased::default();
        e.mark(Name::from_uri("/a/b").unwrap().value(), 5);
        assert!(e.hides(&data("/a/b/1"), 5));
        assert!(e.hides(&data("/a/b"), 1));
        assert!(!e.hides(&data("/a/b/1"), 6), "written after the erase");
        assert!(!e.hides(&data("/a/bc/1"), 1), "another component");
        assert!(!e.hides(&data("/a"), 1));
        assert!(!e.hides(&[0xff, 0x01], 1), "not a packet");
        e.prune(Some(5));
        assert_eq!(e.len(), 1, "a batch of write 5 may still be stored");
        e.prune(Some(6));
        assert!(e.is_empty());
        e.mark(&[], 9);
        assert!(e.hides(&data("/x"), 9), "the empty prefix covers every name");
        e.prune(None);
        assert!(e.is_empty());
    }

    #[test]
    fn a_mark_covering_another_replaces_it() {
        let mut e = Erased::default();
        let (ab, a) = (Name::from_uri("/a/b").unwrap(), Name::from_uri("/a").unwrap());
        e.mark(ab.value(), 3);
        e.mark(ab.value(), 3);
        assert_eq!(e.len(), 1, "the same erase again");
        e.mark(ab.value(), 7);
        assert_eq!(e.len(), 1, "again after more writes");
        assert!(e.hides(&data("/a/b/c"), 7));
        e.mark(Name::from_uri("/a/b/c").unwrap().value(), 7);
        assert_eq!(e.len(), 1, "a longer prefix, already covered");
        e.mark(a.value(), 2);
        assert_eq!(e.len(), 2, "a shorter prefix of fewer writes covers neither way");
        e.mark(a.value(), 9);
        assert_eq!(e.len(), 1);
        assert!(e.hides(&data("/a/x"), 9) && !e.hides(&data("/a/x"), 10));
    }
}
