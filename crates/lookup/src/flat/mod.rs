//! Exact match for flat names: Othello hashing and the Concise FIB (Yu et al., IEEE/ACM ToN 2018).
//!
//! # Overview
//! - [`Othello`] (control.rs): the control structure — names, the bipartite graph G over the
//!   cells, construction in expected O(n), add / delete / alter in amortised O(1), reconstruction
//!   with a new seed only when an add would close a cycle; the graph is also the index from name
//!   to edge. [`Othello::update_batch`] applies a batch of [`Update`]s with their cache misses
//!   overlapped. Every operation records the cells it changed; [`Othello::take_delta`] hands them
//!   out as a [`Patch`] (the paper's FIB update message) or, after a reconstruction, a whole new
//!   query structure.
//! - [`OthelloQuery`] (query.rs): the data plane — two arrays of l-bit cells, no names; a lookup
//!   is τ(k) = A[h_a(k)] ⊕ B[h_b(k)], two memory reads. Bit slicing: the l Othellos of an l-bit
//!   Parallel Othello Group share G and live in one array of `u8`/`u16`/`u32` cells ([`Cell`]).
//!   It serialises to bytes, loads from bytes, and is patched in place by one writer while readers
//!   query, under the paper's version-vector protocol (counters instead of bits).
//! - Optional checksum bits per name (section VII-A) make [`OthelloQuery::lookup_checked`] reject
//!   names outside the FIB with probability 1 − 2^−r.
//! - [`ReferenceFlat`]: a `HashMap` from name to action, the oracle.
//!
//! Names are byte strings of any length: MAC addresses, IPv4/IPv6 addresses, 5-tuples, NDN names.

mod cell;
mod control;
mod hash;
mod key;
mod query;
mod reference;
mod sync;

pub use cell::Cell;
pub use control::{Delta, Othello, OthelloConfig, OthelloStats, Sizing, Update, UPDATE_AHEAD};
pub use query::{fingerprint, OthelloQuery, Patch, AHEAD, BATCH};
pub use reference::ReferenceFlat;

/// What the flat-name structures refuse. Nothing changes when an operation fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlatError {
    /// The name is already in the FIB (add) or given twice (construct).
    #[error("duplicate name")]
    Duplicate,
    /// The name is not in the FIB (alter, delete).
    #[error("name not found")]
    NotFound,
    /// An action needs more than l bits.
    #[error("action {value} does not fit in {bits} bits")]
    ValueTooWide {
        /// The action.
        value: u32,
        /// l.
        bits: u32,
    },
    /// l + r does not fit the cell type (or l is 0).
    #[error("{value_bits} action bits + {checksum_bits} checksum bits do not fit a {cell_bits}-bit cell")]
    TooWide {
        /// l.
        value_bits: u32,
        /// r.
        checksum_bits: u32,
        /// Cell width.
        cell_bits: u32,
    },
    /// A patch names a cell outside the arrays.
    #[error("patch index outside the query structure")]
    PatchOutOfRange,
    /// A patch of a structure of another shape (another seed, sizes or widths: another
    /// structure, or one before a rebuild).
    #[error("patch of another structure (its seed, sizes or widths differ)")]
    ForeignPatch,
    /// A patch that does not start from this structure's version.
    #[error("patch for version {patch}, the structure is at version {have}")]
    PatchVersion {
        /// The structure's version.
        have: u64,
        /// The version the patch starts from.
        patch: u64,
    },
    /// Bytes that are not a serialised query structure of this cell type.
    #[error("not a query structure: {0}")]
    BadQueryBytes(String),
}
