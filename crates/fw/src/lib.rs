//! nexthop-fw: the NDN forwarder — faces (Unix, TCP, UDP, WebSocket, Ethernet), PIT,
//! strategies, the forwarding pipeline, NFD-compatible management and configuration. The only
//! layer with I/O.
//!
//! # Overview
//! The forwarding core is sans-I/O and testable without sockets:
//! - [`packet`]: classify received bytes (NDNLPv2 fields + Interest/Data/Nack), drops by reason;
//!   [`fragmentation`]: NDNLPv2 fragments cut for a face's MTU and put back together;
//!   [`lp_reliability`]: NDNLPv2 link reliability (Acks, retransmission of what a link lost).
//! - [`shard`]: the pipeline of one forwarding thread over its [`pit`], content-store shard,
//!   [`dead_nonce`] list and its view of the [`fib`] ([`shared_fib`]: the one FIB every
//!   forwarding thread reads, changed without stopping them); [`strategy`] picks upstreams,
//!   with what [`access`] and [`asf`] measure ([`rtt`]: round-trip estimates).
//! - [`outbox`]: what a shard sends, for the runtime to write to sockets.
//! - [`token`]: the PIT token that brings Data and Nacks back to their shard and entry.
//! - [`mgmt`]: the NFD management protocol (commands, datasets) and the [`rib`] behind it.
//! - [`reconnect`]: when a permanent TCP face that lost its connection tries again.
//!
//! The runtime ([`runtime`]) owns sockets and threads: an I/O thread with the faces and the
//! management, and forwarding threads that each own a [`shard::Shard`]; packets reach a thread
//! by a hash of their leading name components ([`dispatch`]) or by PIT token.

#![deny(unsafe_code)]

pub mod access;
pub mod asf;
pub mod client;
pub mod config;
pub mod congestion;
pub mod counters;
pub mod dead_nonce;
pub mod dispatch;
#[allow(unsafe_code)]
pub mod ether;
pub mod face;
pub mod fib;
pub mod fragmentation;
pub mod interface_rule;
#[allow(unsafe_code)]
pub mod interface_watch;
#[allow(unsafe_code)]
pub mod interfaces;
pub mod local_addresses;
pub mod lossy_link;
pub mod lp_reliability;
pub mod mgmt;
pub mod nfd_conf;
pub mod outbox;
pub mod packet;
pub mod pit;
#[allow(unsafe_code)]
pub mod privileges;
pub mod reconnect;
pub mod retx_suppression;
pub mod rib;
pub mod rtt;
pub mod runtime;
pub mod shard;
pub mod shared_fib;
#[allow(unsafe_code)]
pub mod socket_queue;
pub mod strategy;
pub mod tlv;
pub mod token;
pub mod traffic;
#[allow(unsafe_code)]
pub mod udp_batch;
pub mod websocket;
