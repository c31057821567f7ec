//! nexthop's forwarding pipelines over Ethernet frames, sans-I/O.
//!
//! # Overview
//! A pipeline takes a batch of received frames (each with the port it came in on) and returns
//! one decision per frame — transmit on a port (the frame rewritten in place), hand to the
//! kernel, or drop for a counted reason — with no socket and no thread of its own, so the same
//! code runs under a unit test, a property test against its oracle, and the port layer
//! (`nexthop-io`). Its tables change only through its control side, between batches.
//! - [`ip`]: the IPv4/IPv6 router on the Bloom-filter FIB (`nexthop_lookup::ip`), with the
//!   kernel's tables mirrored as its control plane (the one I/O here: an rtnetlink socket,
//!   never on the data path).
//! - [`l2`]: the Concise switch: Ethernet frames forwarded by destination address through the
//!   Othello query structure (`nexthop_lookup::flat`).
//! - [`tag`]: TagNet routers: packets by descriptor (FAS, FLS) and by locator (Thorup–Zwick),
//!   and the control plane that builds their trees.
//! - [`frames`]: the batch a pipeline reads.

pub mod frames;
pub mod ip;
pub mod l2;
pub mod tag;
