//! The IPv6 gate: for an address under a guarded /16, the expansion levels that may hold a route
//! covering it — read from a direct-indexed array, with no hash and no compare.
//!
//! # Overview
//! The gate is keyed by an address's first `16 + span` bits (a *cell*; `span` ≤ [`MAX_SPAN`],
//! chosen so a cell is never finer than the table's first level). A cell holds a 16-bit mask: bit
//! j for every level j holding a route that covers the cell or lies inside it, [`HIGH`] for any
//! level from [`LEVEL_BITS`] up, and [`LONG`] when a route longer than /64 lies inside. Any route
//! covering an address covers its cell or lies inside it, so searching only the named levels
//! finds it; a cell with mask 0 has no route at all, and the default route answers.
//!
//! Cells exist only where they are needed: under the /16s that hold a route longer than /16 (the
//! ones the front array guards — 48 of 65,536 in the RouteViews 2015 table), each owning a *block*
//! of 2^span cells. An index of 2^16 entries names each /16's block; block 0 is all zeros and
//! stands for every /16 without one, so a lookup is two reads and no branch:
//! `cells[index[addr >> 112] << span | cell bits]`. The cost is 2^span × 2 bytes per such /16
//! (16 KB at span 13): 768 KB for the 2015 table, and at most 1 GB for a table with routes
//! longer than /16 under every one of the 65,536.
//!
//! Control side: per cell, the routes counted by level (a route of length ≤ 16 + span covers a
//! range of cells, a longer one lies inside one); routes of at most 16 bits are counted per /16
//! instead (a /12 would otherwise touch 16 · 2^span cells) and OR-ed into every cell of the /16's
//! block; and per /16, how many routes longer than /16 lie inside — the block is made when the
//! first arrives (its cells filled from the counts) and handed back when the last leaves.

use hashbrown::HashMap;

use crate::mem::prefetch;

/// The most address bits past /16 a cell takes (blocks of 8,192 cells, 16 KB).
pub const MAX_SPAN: u8 = 13;
/// Levels the mask names one by one; [`HIGH`] stands for all the levels above.
pub const LEVEL_BITS: usize = 14;
/// Mask bit: some level at or above index [`LEVEL_BITS`].
pub const HIGH: u16 = 1 << LEVEL_BITS;
/// Mask bit: a route longer than /64.
pub const LONG: u16 = 1 << 15;
/// The counting slot of routes longer than /64 (levels are 0..=63).
pub const LONG_SLOT: u8 = 64;

/// Routes counted by slot (a level index or [`LONG_SLOT`]).
type Counts = Vec<(u8, u32)>;

/// The gate.
#[derive(Debug, Clone)]
pub struct Gate {
    span: u8,
    /// /16 → its block (0: none, the all-zero block).
    index: Vec<u32>,
    /// 2^span masks per block, block 0 first, and one unused cell after the last (so a SIMD
    /// gather may read 4 bytes at any cell).
    cells: Vec<u16>,
    /// Blocks handed back, for reuse.
    free: Vec<u32>,
    /// Per /16: routes longer than /16 inside it.
    inside: HashMap<u16, u32>,
    /// Per cell key (the address's first 16 + span bits): routes longer than /16 covering the
    /// cell or lying inside it.
    counts: HashMap<u64, Counts>,
    /// Per /16: routes of at most 16 bits covering it.
    short: HashMap<u16, Counts>,
}

impl Gate {
    /// An empty gate for a table whose first level is `/q1`.
    pub fn new(q1: u8) -> Self {
        let span = q1.saturating_sub(16).min(MAX_SPAN);
        Gate {
            span,
            index: vec![0; 1 << 16],
            cells: vec![0; (1 << span) + 1],
            free: Vec::new(),
            inside: HashMap::new(),
            counts: HashMap::new(),
            short: HashMap::new(),
        }
    }

    /// The /16 of an address.
    #[inline(always)]
    fn slash16(addr: u128) -> usize {
        (addr >> 112) as usize
    }

    /// The cell of `addr` in the data array.
    #[inline(always)]
    fn cell(&self, addr: u128) -> usize {
        let inner = (addr >> (112 - u32::from(self.span))) as usize & ((1 << self.span) - 1);
        ((self.index[Self::slash16(addr)] as usize) << self.span) | inner
    }

    /// The mask of `addr`'s cell (0 when no route covers it or lies inside its cell, and for
    /// addresses under a /16 holding no route longer than /16).
    #[inline(always)]
    pub fn mask(&self, addr: u128) -> u16 {
        self.cells[self.cell(addr)]
    }

    /// Brings `addr`'s cell towards the cache (reading the index, which stays cached).
    #[inline(always)]
    pub fn prefetch(&self, addr: u128) {
        prefetch(&self.cells[self.cell(addr)]);
    }

    /// The mask bit of a counting slot.
    fn bit(slot: u8) -> u16 {
        match usize::from(slot) {
            64 => LONG,
            j if j >= LEVEL_BITS => HIGH,
            j => 1 << j,
        }
    }

    fn mask_of(counts: Option<&Counts>) -> u16 {
        counts.map_or(0, |c| c.iter().fold(0, |m, &(s, _)| m | Self::bit(s)))
    }

    /// Adds one (`add`) or removes one route from `slot`'s count under `key`, dropping the key
    /// when nothing is counted there any more.
    fn count<K: core::hash::Hash + Eq + Copy>(map: &mut HashMap<K, Counts>, key: K, slot: u8, add: bool) {
        let counts = map.entry(key).or_default();
        match counts.iter().position(|&(s, _)| s == slot) {
            Some(i) if add => counts[i].1 += 1,
            Some(i) if counts[i].1 > 1 => counts[i].1 -= 1,
            Some(i) => {
                counts.swap_remove(i);
            }
            None if add => counts.push((slot, 1)),
            None => {}
        }
        if counts.is_empty() {
            map.remove(&key);
        }
    }

    /// Rewrites every cell of `s16`'s block (when it has one) from the counts.
    fn refill(&mut self, s16: u16) {
        let block = self.index[usize::from(s16)] as usize;
        if block == 0 {
            return;
        }
        let short = Self::mask_of(self.short.get(&s16));
        let first = u64::from(s16) << self.span;
        for i in 0..1usize << self.span {
            self.cells[(block << self.span) | i] = short | Self::mask_of(self.counts.get(&(first + i as u64)));
        }
    }

    /// Counts a route of length `len` ≥ 1 in (`add`) or out, in `slot` (its level index, or
    /// [`LONG_SLOT`] above /64), and rewrites the cells it changes.
    pub fn update(&mut self, prefix: u128, len: u8, slot: u8, add: bool) {
        let first16 = Self::slash16(prefix) as u16;
        if len <= 16 {
            let n = 1u32 << (16 - len);
            for s16 in u32::from(first16)..u32::from(first16) + n {
                Self::count(&mut self.short, s16 as u16, slot, add);
                self.refill(s16 as u16);
            }
            return;
        }
        let g = 16 + self.span;
        let key = (prefix >> (128 - u32::from(g))) as u64;
        let keys = if len <= g { key..key + (1u64 << (g - len)) } else { key..key + 1 };
        for k in keys.clone() {
            Self::count(&mut self.counts, k, slot, add);
        }
        let inside = self.inside.entry(first16).or_insert(0);
        *inside = if add { *inside + 1 } else { inside.saturating_sub(1) };
        match (*inside, self.index[usize::from(first16)]) {
            (0, block) => {
                self.inside.remove(&first16);
                if block != 0 {
                    self.index[usize::from(first16)] = 0;
                    self.free.push(block);
                }
            }
            (_, 0) => {
                let block = self.free.pop().unwrap_or_else(|| {
                    let blocks = (self.cells.len() - 1) >> self.span; // the spare cell is not a block
                    self.cells.resize(self.cells.len() + (1 << self.span), 0);
                    blocks as u32
                });
                self.index[usize::from(first16)] = block;
                self.refill(first16);
            }
            (_, block) => {
                let short = Self::mask_of(self.short.get(&first16));
                let low = (1u64 << self.span) - 1;
                for k in keys {
                    self.cells[((block as usize) << self.span) | (k & low) as usize] = short | Self::mask_of(self.counts.get(&k));
                }
            }
        }
    }

    /// The index (2^16 entries), the cells (blocks of 2^span, then one spare) and the span, for a
    /// SIMD lookup: the mask of `addr` is
    /// `cells[index[addr >> 112] << span | (addr >> (112 − span)) mod 2^span]`.
    pub fn raw(&self) -> (&[u32], &[u16], u32) {
        (&self.index, &self.cells, u32::from(self.span))
    }

    /// Bytes the lookups read (index and cells) and bytes only updates need (the counts).
    pub fn bytes(&self) -> (usize, usize) {
        let data = self.index.len() * 4 + self.cells.len() * 2;
        let entry = |v: &Counts| v.capacity() * core::mem::size_of::<(u8, u32)>();
        let control = self.counts.capacity() * (core::mem::size_of::<(u64, Counts)>() + 1)
            + self.counts.values().map(entry).sum::<usize>()
            + self.short.capacity() * (core::mem::size_of::<(u16, Counts)>() + 1)
            + self.short.values().map(entry).sum::<usize>()
            + self.inside.capacity() * (core::mem::size_of::<(u16, u32)>() + 1)
            + self.free.capacity() * 4;
        (data, control)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u128 = 0x2001_0db8u128 << 96;

    #[test]
    fn a_block_appears_with_the_first_longer_route_and_goes_with_the_last() {
        let mut g = Gate::new(29);
        g.update(P, 32, 1, true);
        assert_eq!(g.mask(P | 7), 1 << 1);
        assert_eq!(g.mask(P ^ (1u128 << 100)), 0, "another /29 of the same /16: nothing there");
        assert_eq!(g.mask(0x2002u128 << 112), 0, "another /16: the zero block");
        g.update(P | (5u128 << 80), 48, 3, true);
        g.update(P | 1, 128, LONG_SLOT, true);
        assert_eq!(g.mask(P), (1 << 1) | (1 << 3) | LONG);
        g.update(P, 32, 1, false);
        g.update(P | 1, 128, LONG_SLOT, false);
        assert_eq!(g.mask(P), 1 << 3);
        g.update(P | (5u128 << 80), 48, 3, false);
        assert_eq!(g.mask(P), 0);
        assert_eq!(g.index[Gate::slash16(P)], 0, "the block is handed back");
        g.update(0x2a00u128 << 112, 24, 0, true);
        assert_eq!(g.cells.len(), (2 << 13) + 1, "and reused");
    }

    #[test]
    fn short_routes_reach_every_cell_of_the_blocks_they_cover() {
        let mut g = Gate::new(29);
        g.update(0x2400u128 << 112, 12, 0, true); // 2400::/16 .. 240f::/16
        assert_eq!(g.mask(0x2403u128 << 112), 0, "no block: the front array answers there");
        g.update(0x2403_0001u128 << 96, 32, 2, true);
        assert_eq!(g.mask(0x2403_0001u128 << 96), 0b101);
        assert_eq!(g.mask(0x2403_ff00u128 << 96), 0b001, "the /12 covers the whole block");
        g.update(0x2400u128 << 112, 12, 0, false);
        assert_eq!(g.mask(0x2403_0001u128 << 96), 0b100);
        assert_eq!(g.mask(0x2403_ff00u128 << 96), 0);
    }

    #[test]
    fn levels_past_the_named_ones_share_the_high_bit() {
        let mut g = Gate::new(16);
        assert_eq!(g.span, 0);
        g.update(P, 64, 20, true);
        assert_eq!(g.mask(P), HIGH);
    }
}
