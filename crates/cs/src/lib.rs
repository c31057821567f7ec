//! nexthop-cs: the content store. A DRAM tier (L1) in front of an SSD tier (L2) whose batches
//! are prefetched on a request, sharded across threads, with the analytical hit-ratio model of
//! the hierarchical content store paper. Sans-I/O apart from the L2 file it is given.
//!
//! This crate is the place for that work (the content-store issue); it holds nothing yet.

#![deny(unsafe_code)]
