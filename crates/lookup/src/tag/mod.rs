//! TagNet forwarding by descriptor and by locator (Papalini, Khazaei, Carzaniga, Rogora,
//! ANCS'16).
//!
//! # Overview
//! - [`Descriptor`]: a set of tags as a 192-bit Bloom filter (7 hashes per tag); hierarchical
//!   names as depth-tagged components.
//! - [`DescriptorFib`]: the control side — descriptors → sets of (tree, interface) [`Port`]s,
//!   read from a text file by [`read_fib_file`] —
//!   compiled ([`DescriptorFib::compile`]) into a [`CompiledFib`]: the prefix trie of 1-bit
//!   positions as one vector, with bit permutation, terminal-chain removal and the SOL or SROL
//!   layout ([`Compression`], [`Layout`]).
//! - Matchers on the compiled FIB: [`CompiledFib::fas`] (Find All Subsets, up to a [`Fanout`])
//!   and [`CompiledFib::fls`] (Find Largest Subset), with the paper's three pruning rules;
//!   [`parallel`] splits a batch over threads. The paper walks both depth-first; by default FAS
//!   walks breadth-first ([`FasOrder`]): its answer does not depend on the order, and a queue
//!   of the lists to read lets it prefetch each step 32 steps before it gets there. FLS walks
//!   depth-first until its first match, then breadth-first the same way ([`FlsOrder`]): what
//!   is left then is mostly the proof that nothing heavier matches, whose order hardly
//!   matters. In the depth-first order, [`CompiledFib::fls_batch`] interleaves the FLS walks
//!   of 8 packets on FIBs past [`INTERLEAVE_FROM_BYTES`] ([`FlsBatchOrder`]), so that each
//!   list a walk pushes is fetched while the others read.
//! - Peers and oracle: [`LinearScan`] (SIMD, also the oracle) and [`InvertedIndex`].
//! - Locators: [`Tree`] (from a parent array or a BFS of a graph), [`TzLabels`] (Thorup–Zwick
//!   labels, heavy child first) and [`TzRouter::forward`] (the paper's Figure 6).
//! - [`Engine`]: parses a TagNet header, dispatches to FAS, FLS or TZ, counts drops by reason.

mod chain;
mod compile;
mod descriptor;
mod engine;
mod entries;
mod fib;
mod fib_file;
mod inverted;
mod list_scan;
mod matcher;
mod node;
mod ports;
mod scan;
mod tz;

pub use compile::{CompiledFib, Compression, Layout, PlainSize, SiblingOrder, VARIANTS};
pub use descriptor::{tag_positions, Descriptor, DESCRIPTOR_BYTES, FILTER_BITS, HASHES_PER_TAG};
pub use engine::{Address, Counters, Decision, DropReason, Engine, ForwardingState, DESCRIPTOR_HEADER, FANOUT_ALL, LOCATOR_HEADER};
pub use fib::DescriptorFib;
pub use fib_file::{parse_descriptor, read_fib_file, FibFileError};
pub use inverted::InvertedIndex;
pub use matcher::{Fanout, FasOrder, FlsBatchOrder, FlsOrder, Largest, MatchScratch, RecordCheck, WalkCounts, INTERLEAVE_FROM_BYTES};
pub use ports::{Port, PortId, PortSet, MAX_PORTS};
pub use scan::LinearScan;
pub use tz::{Hop, Label, Tree, TzLabels, TzRouter, NO_PARENT};

/// Errors of the TagNet data structures and headers; a failed operation changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    /// A descriptor with no tags (no bits): it would match every packet.
    #[error("a descriptor needs at least one tag")]
    EmptyDescriptor,
    /// A fan-out limit of 0.
    #[error("a fan-out limit must be at least 1")]
    ZeroFanout,
    /// More distinct (tree, interface) pairs than [`MAX_PORTS`].
    #[error("more than {MAX_PORTS} distinct (tree, interface) pairs")]
    TooManyPorts,
    /// A structure beyond its index widths (2^29 trie nodes, 65,535 port sets, 64-bit labels).
    #[error("the structure is too large for its index widths")]
    TooLarge,
    /// A parent array or graph that is not a tree (or not connected).
    #[error("not a rooted tree (or the graph is not connected)")]
    NotATree,
    /// A locator that does not belong to the tree.
    #[error("the locator does not belong to this tree")]
    BadLocator,
    /// A header cut short.
    #[error("the header is cut short")]
    Truncated,
    /// An unknown header version.
    #[error("unknown header version {0}")]
    BadVersion(u8),
    /// An address type that is neither descriptor (1) nor locator (2).
    #[error("unknown address type {0}")]
    BadAddressType(u8),
    /// A tree this router is not on.
    #[error("this router is not on tree {0}")]
    UnknownTree(u16),
}

pub use crate::parallel;
