//! nexthop-fw: the NDN forwarder — faces (Unix, TCP, UDP, WebSocket, Ethernet), PIT,
//! strategies, the forwarding pipeline, NFD-compatible management and configuration.
//!
//! # Overview
//! The crate is laid out by role, after NFD's `daemon/` and NDN-DPDK's `fwdp`. Each folder
//! depends only on those above it in this list, and no module imports one that imports it back
//! (`tests/layout.rs` checks both):
//! - [`face`]: faces as the core sees them — ids, scopes, [`face::uri::FaceUri`] — and the
//!   sans-I/O codec of each transport kind (Ethernet frames, WebSocket frames), with the rules
//!   that pick interfaces and local addresses.
//! - [`counters`]: every drop by reason, and what each forwarding shard did.
//! - [`lp`]: NDNLPv2, the link service between a face and the pipeline: packets classified,
//!   fragmented and put back together, sent reliably, marked under congestion.
//! - [`table`]: the forwarding tables — PIT, dead-nonce list, FIB, strategy choice, the PIT
//!   token that brings Data back to its entry.
//! - [`pipeline`]: the forwarding pipeline of one thread ([`pipeline::Shard`]) and its
//!   [`pipeline::strategy`]s; sans-I/O, it fills an [`pipeline::outbox::Outbox`].
//! - [`mgmt`]: the NFD management protocol (commands, datasets, the RIB, command validation).
//! - [`conf`]: the TOML configuration, NFD's `nfd.conf`, and the INFO format both read.
//! - [`sys`]: every call into the operating system that needs `unsafe`: packet and batched
//!   UDP sockets, the host's interfaces and their changes, privileges.
//! - [`fuzzing`]: the properties every parser of outside input keeps, for the fuzz targets.
//! - [`runtime`]: sockets and threads — an I/O thread with the faces and the management, and
//!   forwarding threads that each own a shard; packets reach a thread by a hash of their
//!   leading name components ([`runtime::dispatch`]) or by PIT token.

#![deny(unsafe_code)]

pub mod conf;
pub mod counters;
pub mod face;
pub mod fuzzing;
pub mod lp;
pub mod mgmt;
pub mod pipeline;
pub mod runtime;
#[allow(unsafe_code)]
pub mod sys;
pub mod table;
