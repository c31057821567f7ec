//! Longest name prefix match by binary search of hash tables (Yuan & Crowley, ANCS'15).
//!
//! Overview: [`NameFib`] maps NDN name prefixes to [`NextHops`] and answers "which route is the
//! longest prefix of this name" with at most ⌈log2(k+1)⌉ hash-table probes for routes of up to k
//! components, whatever the routes look like. The pieces, one file each:
//!
//! - `hash`: the hash of every prefix of a name in one pass; the two string-matching
//!   [`Strategy`]s (verify on every fingerprint match with a fast hash, or only at the end with a
//!   keyed SipHash).
//! - `table`: the paper's fingerprint hash table — 64-byte buckets of seven fingerprint entries,
//!   chained overflow buckets, low load.
//! - `packed`: names as the arena stores them, a byte per component shorter than TLV.
//! - `entry`: name-prefix entries, the prefix bytes stored once with the forwarding slots of the
//!   route and of the markers that share them.
//! - `fib`: the binary search, markers with inherited answers, batch lookup with prefetching,
//!   and the control side (insert, replace, remove while in use).
//! - `pulling`: level pulling (§4), an option.
//! - `route_index`: the control side's ordered index of routes, a B+-tree of 8-byte keys that
//!   point into the entry arena (no name stored twice).
//! - `nexthops`: forwarding information, interned.
//! - `reference`: the oracle.

mod component;
mod entry;
mod fib;
pub mod hash;
mod nexthops;
mod packed;
mod pulling;
mod reference;
mod route_index;
mod table;

pub use fib::{NameFib, NameFibConfig, RouteError, DEFAULT_MAX_NAME_BYTES};
pub use hash::{PrefixHasher, PrefixHashes, Strategy, MAX_LEVELS};
pub use nexthops::{NextHop, NextHopSets, NextHops, NextHopsId};
pub use pulling::LevelPulling;
pub use reference::ReferenceFib;
pub use table::SLOTS_PER_BUCKET;
