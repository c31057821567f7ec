//! nexthop-cs: the content store. A DRAM tier (L1) in front of an SSD tier (L2) whose batches
//! are prefetched on a request, sharded across threads, with the analytical hit-ratio model of
//! the hierarchical content store paper (shared/papers/hierarchical-content-store-nfd.txt).
//!
//! # Overview of types
//! - [`L1`]: exact-name hash index over a preallocated slot arena, FIFO / LRU / S3-FIFO
//!   ([`Policy`]), NDN matching ([`Request`]: exact, CanBePrefix, MustBeFresh, implicit digest).
//! - [`key`]: name hashes and [`BatchKey`] (content, batch, position) that groups B segments.
//!
//! Everything here is sans-I/O except the L2 file it is given: time is passed in as monotonic
//! milliseconds, threads belong to the caller.

#![deny(unsafe_code)]

pub mod error;
pub mod key;
pub mod l1;
pub mod policy;
mod queue;
pub mod request;

pub use error::{InsertError, L2Error};
pub use key::{name_hash, BatchKey};
pub use l1::{L1Config, L1Stats, L1};
pub use policy::Policy;
pub use request::Request;
pub mod l2;
pub use l2::{Backing, L2Config, L2Stats, SlotReuse, L2};
