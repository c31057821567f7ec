//! nexthop-cs: the content store. A DRAM tier (L1) in front of an SSD tier (L2) whose batches
//! are prefetched on a request, sharded across threads, with the analytical hit-ratio model of
//! the hierarchical content store paper (shared/papers/hierarchical-content-store-nfd.txt).
//!
//! # Overview of types
//! - [`L1`]: exact-name hash index over a preallocated slot arena, FIFO / LRU / S3-FIFO
//!   ([`Policy`]), NDN matching ([`Request`]: exact, CanBePrefix, MustBeFresh, implicit digest).
//! - [`L2`]: batches of B chunks in fixed slots of a preallocated file (O_DIRECT, io_uring or
//!   pread, CRC-32C per chunk, FIFO or CLOCK slot reuse) or of emulated memory with a τ delay.
//! - [`HierarchicalStore`]: L1 hit serves; L1 miss reads the whole batch from L2 into L1; new
//!   Data is admitted to L1 and written back to L2 by batch.
//! - [`shard`]: the paper's Batch and Content hash schemes that give each thread its own store.
//! - [`model`]: Che's approximation (LRU, FIFO/RANDOM) and the paper's equations (2)–(4).
//! - [`key`]: name hashes and [`BatchKey`] (content, batch, position) that groups B segments.
//!
//! Everything here is sans-I/O except the L2 file it is given: time is passed in as monotonic
//! milliseconds, threads belong to the caller.

#![deny(unsafe_code)]

pub mod error;
pub mod hierarchy;
mod index;
pub mod key;
pub mod l1;
pub mod model;
pub mod policy;
mod queue;
pub mod request;
pub mod shard;

pub use error::{InsertError, L2Error};
pub use hierarchy::{HcsConfig, HcsStats, HierarchicalStore, Lookup, Served, Tier};
pub use key::{name_hash, BatchKey};
pub use l1::{L1Config, L1Stats, L1};
pub use policy::{Arrival, Policy};
pub use request::Request;
pub use shard::{shard_of, HashScheme};
pub mod l2;
pub use l2::{Backing, L2Config, L2Stats, SlotReuse, L2};
