//! The direct lookup array with guard bits: one cell per `bits`-bit prefix of the address, holding
//! the next hop of the longest route no longer than `bits` that covers it, one bit that says
//! whether any longer route lies inside the cell's prefix, and one that says whether any route
//! longer than a second length (`deep`) does.
//!
//! Where the guard is clear — most of the address space in real tables — the cell is the whole
//! answer: no hash, no filter, no table. Where only the guard is set, the routes inside are no
//! longer than `deep`, and groups beyond it need not be searched. [`super::Bloomfwd4`] keeps its /0–/20 routes here (the
//! paper's 2^20 array, guard added); [`super::Bloomfwd6`] puts a 2^16 array in front of its
//! levels.
//!
//! Control side: each cell records the length of the route that owns it (so a shorter route
//! never overwrites a longer one: prefix capture) and how many longer routes lie inside it (what
//! the guard bits summarise).

use core::ops::Range;

use hashbrown::HashMap;

use super::{NextHop, NO_ROUTE};
use crate::mem::{huge_vec, prefetch};

/// Owner length of a cell no route covers.
pub const NONE: u8 = u8::MAX;
/// Cell bit: routes longer than the array's width lie inside this cell.
pub const GUARD: u32 = 1 << 31;
/// Cell bit: routes longer than the array's `deep` length lie inside this cell.
pub const DEEP: u32 = 1 << 30;
/// Cell value no route covers (below both bits; next hops are at most `MAX_NEXT_HOP`).
pub const EMPTY: u32 = DEEP - 1;

/// A direct lookup array of 2^bits cells.
#[derive(Debug, Clone)]
pub struct DirectArray {
    /// Next hop (or [`EMPTY`]) plus the [`GUARD`] and [`DEEP`] bits.
    cells: Vec<u32>,
    /// Length of the route owning each cell, or [`NONE`].
    owners: Vec<u8>,
    /// Routes longer than the array's width inside a cell, and how many of them are longer
    /// than `deep`, for the cells with any (few: a 2^24 array keeps no 16M counters).
    longer: HashMap<u32, (u32, u32)>,
    /// The length past which a route inside a cell sets its [`DEEP`] bit.
    deep: u8,
}

impl DirectArray {
    /// An empty array of 2^bits cells (huge pages asked for) whose deep bit marks routes longer
    /// than `deep` inside a cell.
    pub fn new(bits: u8, deep: u8) -> Self {
        let n = 1usize << bits;
        DirectArray { cells: huge_vec(n, EMPTY), owners: vec![NONE; n], longer: HashMap::new(), deep }
    }

    /// The raw cell: decode it with [`Self::guarded`] and [`Self::next_hop`].
    #[inline(always)]
    pub fn cell(&self, i: usize) -> u32 {
        self.cells[i]
    }

    /// The raw cells (for a SIMD lookup; decode as [`Self::guarded`] and [`Self::next_hop`]).
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// Brings cell `i` towards the cache.
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        prefetch(&self.cells[i]);
    }

    /// Whether longer routes lie inside a cell (so it is not the whole answer).
    #[inline(always)]
    pub fn guarded(cell: u32) -> bool {
        cell & GUARD != 0
    }

    /// Whether routes longer than the array's `deep` length lie inside a cell.
    #[inline(always)]
    pub fn deep(cell: u32) -> bool {
        cell & DEEP != 0
    }

    /// A cell's next hop, [`NO_ROUTE`] when no route covers it.
    #[inline(always)]
    pub fn next_hop(cell: u32) -> NextHop {
        match cell & !(GUARD | DEEP) {
            EMPTY => NO_ROUTE,
            nh => nh,
        }
    }

    /// Gives every cell of `cells` whose owner `take` accepts to (`next_hop`, `owner`); an owner
    /// of [`NONE`] frees the cell.
    pub fn claim(&mut self, cells: Range<usize>, next_hop: NextHop, owner: u8, take: impl Fn(u8) -> bool) {
        let value = if owner == NONE || next_hop == NO_ROUTE { EMPTY } else { next_hop };
        for s in cells {
            if take(self.owners[s]) {
                self.cells[s] = (self.cells[s] & (GUARD | DEEP)) | value;
                self.owners[s] = owner;
            }
        }
    }

    /// Counts a route of length `len` (longer than the array's width) in (`add`) or out of cell
    /// `i`, setting or clearing its guard bits.
    pub fn count_longer(&mut self, i: usize, len: u8, add: bool) {
        let counts = self.longer.entry(i as u32).or_insert((0, 0));
        let step = |c: &mut u32| if add { *c += 1 } else { *c = c.saturating_sub(1) };
        step(&mut counts.0);
        if len > self.deep {
            step(&mut counts.1);
        }
        let (all, deep) = *counts;
        if all == 0 {
            self.longer.remove(&(i as u32));
        }
        let bits = if all > 0 { GUARD } else { 0 } | if deep > 0 { DEEP } else { 0 };
        self.cells[i] = (self.cells[i] & !(GUARD | DEEP)) | bits;
    }

    /// Cells some route owns.
    pub fn used(&self) -> usize {
        self.owners.iter().filter(|&&l| l != NONE).count()
    }

    /// Bytes of the cells (the lookup side) and of the owners and counts (the control side).
    pub fn bytes(&self) -> (usize, usize) {
        (self.cells.len() * 4, self.owners.len() + self.longer.capacity() * 13)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_guard_and_release() {
        let mut a = DirectArray::new(4, 8);
        // A /2 over cells 4..8, then a /3 inside it over 4..6 which the /2 must not retake.
        a.claim(4..8, 7, 2, |o| o == NONE || o <= 2);
        a.claim(4..6, 9, 3, |o| o == NONE || o <= 3);
        a.claim(4..8, 8, 2, |o| o == NONE || o <= 2);
        let hops: Vec<NextHop> = (0..8).map(|i| DirectArray::next_hop(a.cell(i))).collect();
        assert_eq!(hops, [NO_ROUTE, NO_ROUTE, NO_ROUTE, NO_ROUTE, 9, 9, 8, 8]);
        assert_eq!(a.used(), 4);
        a.count_longer(5, 6, true);
        a.count_longer(5, 9, true);
        assert!(DirectArray::guarded(a.cell(5)) && !DirectArray::guarded(a.cell(4)));
        assert!(DirectArray::deep(a.cell(5)), "a /9 is deeper than 8");
        assert_eq!(DirectArray::next_hop(a.cell(5)), 9, "the guard bits leave the next hop alone");
        a.count_longer(5, 9, false);
        assert!(DirectArray::guarded(a.cell(5)) && !DirectArray::deep(a.cell(5)));
        a.claim(4..6, 9, 3, |o| o <= 3);
        assert!(DirectArray::guarded(a.cell(5)) && !DirectArray::deep(a.cell(5)), "a claim keeps the bits");
        a.count_longer(5, 6, false);
        assert!(!DirectArray::guarded(a.cell(5)));
        // Removing the /3 hands its cells back to the /2; removing the /2 frees everything.
        a.claim(4..6, 8, 2, |o| o == 3);
        a.claim(4..8, NO_ROUTE, NONE, |o| o == 2);
        assert_eq!(a.used(), 0);
        assert!((0..16).all(|i| DirectArray::next_hop(a.cell(i)) == NO_ROUTE));
    }
}
