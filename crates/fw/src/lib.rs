//! nexthop-fw: the NDN forwarder — faces (Unix, TCP, UDP), PIT, strategies, the forwarding
//! pipeline, NFD-compatible management and configuration. The only layer with I/O.
//!
//! This crate is the place for that work (the forwarder issue); it holds nothing yet.

#![deny(unsafe_code)]
