//! Name-prefix entries (the paper's Figure 3): the prefix bytes once, and the forwarding slots of
//! the real prefix and of the markers that share its bytes.
//!
//! Overview: entries live in one byte arena, 4-byte aligned, addressed by a 32-bit word offset
//! (so 16 GiB of entries). The arena is a [`Region`]: it grows in place, so an entry never moves
//! and its huge pages stay whole however large the FIB grows. An entry made for name P holds
//! P's bytes, packed (a byte per component shorter than TLV, see `packed`), and one slot per level
//! at which a fingerprint entry points to it: P's own level if P is a route, and each level on
//! P's search path where P needed a marker that did not exist yet. A marker for the first L
//! components of P is the prefix of P's bytes, so it needs no string of its own.
//!
//! ```text
//!  byte 0      component count − 1 (5 bits) | slot count − 1 (3 bits) << 5
//!  then        per slot a 2-byte answer (next-hop set id, 0 = none; 0xffff = a larger id,
//!              kept in a side table)
//!  then        per slot a mark byte: bit 7 = real route here, the low 7 bits = routes whose
//!              search path needs this marker, up to 126; 127 = more, counted in a side table
//!  then        the packed name bytes; the entry is padded to 4
//! ```
//!
//! The name's length is not stored: a packed name says where each component ends, so the
//! control side finds the end by walking the components, and a lookup needs no length at all.
//! Its verification compares the bytes from the name's start with the lookup's own packed
//! prefix of the slot's level; packing is prefix-free component by component, so equal bytes
//! mean equal components, and a slot at level L is only ever in an entry whose name has at
//! least L components, so a comparison never runs past the name's end.
//!
//! A slot's *answer* is the next-hop set of the longest route that is a prefix of (or equal to)
//! the slot's prefix, so a search that stops after it needs no backtracking. A slot is dead when
//! it is neither real nor referenced; an entry is freed when all its slots are dead. Freed space
//! is kept in free lists by size and reused.
//!
//! A slot is 3 bytes because its two numbers are nearly always small. Next-hop sets are interned
//! and their ids reused, so a FIB has as many ids as distinct sets (a router's few thousand, not
//! one per route), and an answer is 2 bytes. Nearly every marker is needed by a handful of routes
//! (a worst-case FIB's markers by one to three), so a reference count is a byte. The rare larger
//! value (past 65,534 distinct sets; a popular domain's marker in a URL FIB) is kept in a hash
//! map beside the arena, which the lookup reads only when the slot says so. Against 32-bit
//! fields that is 5 bytes per slot less, about 10 bytes per route.

use hashbrown::HashMap;

use super::hash::MAX_LEVELS;
use super::packed;
use crate::region::Region;

/// Most slots in one entry: one per level of a 32-level binary search path.
pub const MAX_SLOTS: usize = 8;
const HEADER_BYTES: usize = 1;
// The header holds component count − 1 in 5 bits and slot count − 1 in 3.
const _: () = assert!(MAX_LEVELS <= 32 && MAX_SLOTS <= 8);
/// The most bytes 32-bit word offsets address.
const MAX_BYTES: usize = 4 << 32;
const REAL: u8 = 1 << 7;
/// A mark's count that says "look in the side table".
const SPILLED: u8 = 127;
/// An answer that says "look in the side table".
const WIDE: u16 = u16::MAX;

/// The byte arena of name-prefix entries.
#[derive(Debug, Clone)]
pub struct EntryArena {
    /// Grows in place: entries never move, and its huge pages stay whole.
    bytes: Region,
    free: HashMap<u32, Vec<u32>>,
    /// Reference counts of [`SPILLED`] or more, by `offset << 8 | slot`.
    spilled: HashMap<u64, u32>,
    /// Answers of [`WIDE`] or more, by `offset << 8 | slot`.
    wide: HashMap<u64, u32>,
    live_words: usize,
}

/// A slot to create in a new entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewSlot {
    /// The level (component count) of the slot's prefix (kept by the caller, not stored).
    pub level: u8,
    /// Next-hop set id of the longest route covering the prefix (0 = none).
    pub answer: u32,
    /// Routes whose search path needs this prefix as a marker.
    pub refs: u32,
    /// Whether the prefix is itself a route.
    pub real: bool,
}

impl EntryArena {
    /// An empty arena; `huge_pages` asks for transparent huge pages as it grows.
    pub fn new(huge_pages: bool) -> Self {
        EntryArena {
            bytes: Region::new(MAX_BYTES, huge_pages),
            free: HashMap::new(),
            spilled: HashMap::new(),
            wide: HashMap::new(),
            live_words: 0,
        }
    }

    /// Size in words of an entry with `slots` slots and a name of `name_len` bytes.
    fn words_for(slots: usize, name_len: usize) -> usize {
        (HEADER_BYTES + 3 * slots + name_len).div_ceil(4)
    }

    /// Stores a new entry for the packed name `name` (of `components` components) and
    /// returns its word offset. Panics if the arena would pass 16 GiB (a 32-bit word offset).
    pub fn alloc(&mut self, name: &[u8], components: usize, slots: &[NewSlot]) -> u32 {
        assert!((1..=MAX_SLOTS).contains(&slots.len()) && (1..=MAX_LEVELS).contains(&components));
        debug_assert_eq!(packed::prefix_len(name, components), name.len(), "a name of `components` components");
        let words = Self::words_for(slots.len(), name.len());
        let offset = match self.free.get_mut(&(words as u32)).and_then(Vec::pop) {
            Some(o) => {
                // A freed entry's words, zeroed as new ones are.
                self.bytes[o as usize * 4..(o as usize + words) * 4].fill(0);
                o as usize
            }
            None => {
                let o = self.bytes.len() / 4;
                // A 32-bit word offset reaches 16 GiB, the region's limit.
                self.bytes.extend_zeroed(words * 4).expect("name-prefix arena is full (16 GiB)");
                o
            }
        };
        self.live_words += words;
        let at = offset * 4;
        let b = &mut self.bytes[at..at + words * 4];
        b[0] = (components - 1) as u8 | ((slots.len() - 1) as u8) << 5;
        let name_at = HEADER_BYTES + 3 * slots.len();
        b[name_at..name_at + name.len()].copy_from_slice(name);
        for (i, s) in slots.iter().enumerate() {
            self.set_answer(offset as u32, i, s.answer);
            self.set_mark(offset as u32, i, if s.real { REAL } else { 0 });
            self.set_refs(offset as u32, i, s.refs);
        }
        offset as u32
    }

    /// Frees the entry at `offset`.
    pub fn free(&mut self, offset: u32) {
        for slot in 0..self.slot_count(offset) {
            if self.raw_answer(offset, slot) == WIDE {
                self.wide.remove(&Self::side_key(offset, slot));
            }
        }
        let words = Self::words_for(self.slot_count(offset), self.name(offset).len());
        self.live_words -= words;
        self.free.entry(words as u32).or_default().push(offset);
    }

    #[inline(always)]
    fn head(&self, offset: u32) -> u8 {
        self.bytes[offset as usize * 4]
    }

    /// Number of slots.
    #[inline(always)]
    pub fn slot_count(&self, offset: u32) -> usize {
        usize::from(self.head(offset) >> 5) + 1
    }

    /// Components of the entry's name.
    pub fn components(&self, offset: u32) -> usize {
        usize::from(self.head(offset) & 0x1f) + 1
    }

    /// The arena's bytes from the entry's name on: the name, then whatever follows it.
    #[inline(always)]
    pub fn name_onwards(&self, offset: u32) -> &[u8] {
        &self.bytes[offset as usize * 4 + HEADER_BYTES + 3 * self.slot_count(offset)..]
    }

    /// The packed bytes of the first `components` components of the entry's name.
    pub fn name_prefix(&self, offset: u32, components: usize) -> &[u8] {
        let onwards = self.name_onwards(offset);
        &onwards[..packed::prefix_len(onwards, components)]
    }

    /// The entry's name bytes (packed, see `packed`).
    pub fn name(&self, offset: u32) -> &[u8] {
        self.name_prefix(offset, self.components(offset))
    }

    /// Whether the entry's name starts with the name whose TLV value is `prefix` (the
    /// verification of a fingerprint match, for an entry with a slot at `prefix`'s level).
    #[inline(always)]
    pub fn name_starts_with(&self, offset: u32, prefix: &[u8]) -> bool {
        packed::starts_with_tlv(self.name_onwards(offset), prefix)
    }

    /// Address of the entry's first byte, for prefetching.
    #[inline(always)]
    pub fn address(&self, offset: u32) -> *const u8 {
        self.bytes.as_ptr().wrapping_add(offset as usize * 4)
    }

    /// Byte index of slot `slot`'s answer.
    #[inline(always)]
    fn answer_at(offset: u32, slot: usize) -> usize {
        offset as usize * 4 + HEADER_BYTES + 2 * slot
    }

    /// Byte index of slot `slot`'s mark.
    fn mark_at(&self, offset: u32, slot: usize) -> usize {
        Self::answer_at(offset, self.slot_count(offset)) + slot
    }

    fn mark(&self, offset: u32, slot: usize) -> u8 {
        self.bytes[self.mark_at(offset, slot)]
    }

    fn set_mark(&mut self, offset: u32, slot: usize, mark: u8) {
        let at = self.mark_at(offset, slot);
        self.bytes[at] = mark;
    }

    fn side_key(offset: u32, slot: usize) -> u64 {
        u64::from(offset) << 8 | slot as u64
    }

    /// The answer of slot `slot` (next-hop set id, 0 = none).
    #[inline(always)]
    pub fn answer(&self, offset: u32, slot: usize) -> u32 {
        match self.raw_answer(offset, slot) {
            WIDE => self.wide[&Self::side_key(offset, slot)],
            answer => u32::from(answer),
        }
    }

    #[inline(always)]
    fn raw_answer(&self, offset: u32, slot: usize) -> u16 {
        let at = Self::answer_at(offset, slot);
        u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    /// Sets the answer of slot `slot`.
    pub fn set_answer(&mut self, offset: u32, slot: usize, answer: u32) {
        let key = Self::side_key(offset, slot);
        let raw = if answer < u32::from(WIDE) {
            if self.raw_answer(offset, slot) == WIDE {
                self.wide.remove(&key);
            }
            answer as u16
        } else {
            self.wide.insert(key, answer);
            WIDE
        };
        let at = Self::answer_at(offset, slot);
        self.bytes[at..at + 2].copy_from_slice(&raw.to_le_bytes());
    }

    /// Routes whose search path needs slot `slot` as a marker.
    pub fn refs(&self, offset: u32, slot: usize) -> u32 {
        match self.mark(offset, slot) & !REAL {
            SPILLED => self.spilled[&Self::side_key(offset, slot)],
            refs => u32::from(refs),
        }
    }

    /// Stores `refs` as slot `slot`'s count: in its mark, or in the side table past 126.
    fn set_refs(&mut self, offset: u32, slot: usize, refs: u32) {
        let mark = self.mark(offset, slot);
        let key = Self::side_key(offset, slot);
        if refs < u32::from(SPILLED) {
            if mark & !REAL == SPILLED {
                self.spilled.remove(&key);
            }
            self.set_mark(offset, slot, mark & REAL | refs as u8);
        } else {
            self.spilled.insert(key, refs);
            self.set_mark(offset, slot, mark & REAL | SPILLED);
        }
    }

    /// Adds `delta` to the marker references of slot `slot`; returns the new count.
    pub fn add_refs(&mut self, offset: u32, slot: usize, delta: i32) -> u32 {
        let refs = self.refs(offset, slot).checked_add_signed(delta).expect("marker reference count out of range");
        self.set_refs(offset, slot, refs);
        refs
    }

    /// Whether slot `slot` is a route.
    pub fn is_real(&self, offset: u32, slot: usize) -> bool {
        self.mark(offset, slot) & REAL != 0
    }

    /// Marks slot `slot` as a route or not.
    pub fn set_real(&mut self, offset: u32, slot: usize, real: bool) {
        let mark = self.mark(offset, slot) & !REAL;
        self.set_mark(offset, slot, if real { mark | REAL } else { mark });
    }

    /// Whether every slot of the entry is dead (neither real nor referenced).
    pub fn is_dead(&self, offset: u32) -> bool {
        (0..self.slot_count(offset)).all(|s| self.mark(offset, s) == 0)
    }

    /// Gives back the arena's unused capacity.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.free.retain(|_, offsets| !offsets.is_empty());
        self.free.shrink_to_fit();
        self.free.values_mut().for_each(Vec::shrink_to_fit);
        self.spilled.shrink_to_fit();
        self.wide.shrink_to_fit();
    }

    /// Bytes allocated (the arena's readable part and the free lists).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.committed()
            + self.free.allocation_size()
            + self.free.values().map(|v| v.capacity() * 4).sum::<usize>()
            + self.spilled.allocation_size()
            + self.wide.allocation_size()
    }

    /// Bytes of the arena itself (its mapping's readable part).
    pub fn mapped_bytes(&self) -> usize {
        self.bytes.committed()
    }

    /// Bytes in live entries.
    #[cfg(test)]
    pub fn live_bytes(&self) -> usize {
        self.live_words * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use packed::packed;

    #[test]
    fn entries_round_trip_and_space_is_reused() {
        let mut a = EntryArena::new(false);
        let slots = [NewSlot { level: 4, answer: 0, refs: 2, real: false }, NewSlot { level: 7, answer: 9, refs: 0, real: true }];
        let e = a.alloc(&packed(b"\x08\x01a\x08\x02bc"), 2, &slots);
        let f = a.alloc(&packed(b"\x08\x01z"), 1, &slots[1..]);
        assert_eq!(a.name(e), b"\x02a\x03bc", "packed");
        assert_eq!(a.slot_count(e), 2);
        assert_eq!((a.answer(e, 1), a.refs(e, 0), a.is_real(e, 1), a.is_real(e, 0)), (9, 2, true, false));
        assert!(a.name_starts_with(e, b"\x08\x01a"));
        assert!(!a.name_starts_with(e, b"\x08\x01b"));
        assert_eq!(a.name(f), b"\x02z");
        assert_eq!(a.add_refs(e, 0, -2), 0);
        a.set_real(e, 1, false);
        assert!(a.is_dead(e));
        let live = a.live_bytes();
        a.free(e);
        assert!(a.live_bytes() < live);
        let g = a.alloc(&packed(b"\x08\x01q\x08\x02rs"), 2, &slots);
        assert_eq!(g, e, "same-size entry reuses the freed space");
        assert_eq!(a.name(f), b"\x02z");
    }

    #[test]
    fn counts_past_a_byte_spill_to_the_side_table_and_come_back() {
        let mut a = EntryArena::new(false);
        let slots = [NewSlot { level: 1, answer: 3, refs: 500, real: true }, NewSlot { level: 2, answer: 4, refs: 1, real: false }];
        let e = a.alloc(&packed(b"\x08\x01a\x08\x01b"), 2, &slots);
        assert_eq!((a.refs(e, 0), a.refs(e, 1), a.is_real(e, 0), a.is_real(e, 1)), (500, 1, true, false));
        for n in 2..=300 {
            assert_eq!(a.add_refs(e, 1, 1), n);
        }
        assert_eq!(a.refs(e, 1), 300);
        assert_eq!((a.answer(e, 0), a.answer(e, 1), a.name(e)), (3, 4, &b"\x02a\x02b"[..]));
        for _ in 0..300 {
            a.add_refs(e, 1, -1);
        }
        for _ in 0..500 {
            a.add_refs(e, 0, -1);
        }
        assert!(a.spilled.is_empty(), "counts back under 127 leave the side table");
        a.set_answer(e, 1, 70_000);
        a.set_answer(e, 0, 1 << 31);
        assert_eq!((a.answer(e, 0), a.answer(e, 1), a.refs(e, 1)), (1 << 31, 70_000, 0));
        a.set_answer(e, 0, 65_534);
        assert_eq!((a.answer(e, 0), a.wide.len()), (65_534, 1));
        assert!(!a.is_dead(e), "slot 0 is still a route");
        a.set_real(e, 0, false);
        assert!(a.is_dead(e));
        a.free(e);
        assert!(a.wide.is_empty(), "a freed entry's large answers leave the side table");
    }
}
