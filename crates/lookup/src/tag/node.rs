//! One node of the compiled descriptor trie: 8 bytes, and the flags of its 32-bit link (the
//! layout `super::compile`'s overview describes), shared by the compiler and the walks.

/// Link flag: the last of its siblings.
pub(super) const LAST: u32 = 1 << 30;
/// Link flag: a terminator (ends a descriptor, possibly after a chain).
pub(super) const TERMINAL: u32 = 1 << 31;
/// Inner-node link flag: the node also stands for its single child (whose position is in its
/// guard byte), and links to that child's children.
pub(super) const SKIP: u32 = 1 << 29;
/// An inner node's link bits below the flags: its first child.
pub(super) const CHILD: u32 = SKIP - 1;
/// One trie node (8 bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub(super) struct Node {
    /// Inner node: the bit position. Terminator: the first position of its chain (if any).
    pub(super) a: u8,
    /// Inner node: the minimum depth below. Terminator: the second position it keeps of its
    /// chain ([`super::chain::KeptPositions`]).
    pub(super) b: u8,
    /// The maximum depth below (a terminator: its descriptor's weight).
    pub(super) max: u8,
    /// Inner node: its guard, a position after `a` that every descriptor below has (`a` itself
    /// when there is none, or the compression keeps no guards). Terminator: the third position
    /// it keeps of its chain.
    pub(super) c: u8,
    /// [`LAST`] | [`TERMINAL`], then an inner node's [`SKIP`] flag and first child, or a
    /// terminator's record offset and port-set id ([`PAYLOAD`]).
    pub(super) link: u32,
}

impl Node {
    #[inline]
    pub(super) fn pos(&self) -> usize {
        usize::from(self.a)
    }
    #[inline]
    pub(super) fn min(&self) -> u32 {
        u32::from(self.b)
    }
    #[inline]
    pub(super) fn is(&self, flag: u32) -> bool {
        self.link & flag != 0
    }
    /// An inner node's first child.
    #[inline]
    pub(super) fn child(&self) -> usize {
        (self.link & CHILD) as usize
    }
    /// The positions an inner node stands for beyond its own: 1 with [`SKIP`], else 0.
    #[inline]
    pub(super) fn skip(&self) -> u32 {
        self.link >> SKIP.trailing_zeros() & 1
    }
}
