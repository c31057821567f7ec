//! nexthop's control channel and the Concise switches' controller (Yu et al., IEEE/ACM ToN
//! 2018, section V: the control structures in the controller, the query structures in the
//! switches, update messages between them).
//!
//! # Overview
//! - [`pb`]: the channel itself, gRPC, from `proto/nexthop/switch/v1/switch.proto` (compiled at
//!   build time by protox, so no `protoc` is needed; any gRPC client can use the `.proto`).
//! - [`address`]: where a channel listens, `unix:PATH` or `IP:PORT`.
//! - [`switch_fib`]: sans-I/O, the switch's side of its FIB — its own control structure until
//!   a controller's structure replaces it, then the controller's patches in order.
//! - [`agent`]: the switch's gRPC server, answering on the switch's thread between batches.
//! - [`blocking`]: a switch's channel from synchronous code.
//! - [`controller`]: `nexthop controller` — the topology, shortest paths, every switch's FIB
//!   control structure, and a gRPC session per switch.

pub mod address;
pub mod agent;
pub mod blocking;
pub mod controller;
pub mod switch_fib;

/// The control channel's messages, client and server (generated from the `.proto`).
#[allow(missing_docs, missing_debug_implementations, clippy::all, rust_2018_idioms)]
pub mod pb {
    tonic::include_proto!("nexthop.switch.v1");
}
