//! The IPv4/IPv6 router: Ethernet frames routed on the Bloom-filter FIB.
//!
//! # Overview
//! - [`header`]: parsing and checking Ethernet + IPv4/IPv6 (RFC 1812, RFC 8200), martians, the
//!   forwarding rewrite (TTL with the RFC 1624 checksum update, Ethernet addresses).
//! - [`route`]: prefixes, ports and [`Via`]s (gateway, connected, local, blackhole,
//!   unreachable).
//! - [`fib`]: the FIB — IPv4 Bloomfwd (direct lookup array + two Bloom-filter groups) and IPv6
//!   Bloomfwd (DP-CPE levels) from `nexthop_lookup::ip`, their next hops naming vias.
//! - [`route_file`]: static route files (`prefix/len gateway`) for large tables.
//! - [`neighbours`]: link-layer addresses of next hops, and the ports' own.
//! - [`mirror`]: the kernel as control plane — its routes and neighbours (rtnetlink messages)
//!   as changes of the FIB and the neighbour table.
//! - [`router`]: the pipeline, a batch of frames to one [`Decision`] each.
//! - [`counters`]: why a frame went to the kernel ([`Punt`]) or was dropped ([`DropReason`]).
//! - [`reference`](mod@reference): the oracle the pipeline is tested against — the same rules written plainly,
//!   over a binary trie.

pub mod counters;
pub mod fib;
pub mod header;
pub mod mirror;
pub mod neighbours;
pub mod netlink;
pub mod ports;
pub mod reference;
pub mod route;
pub mod route_file;
pub mod router;

pub use counters::{Counters, DropReason, Punt};
pub use fib::Fib;
pub use header::Mac;
pub use neighbours::Neighbours;
pub use route::{Port, Prefix, RouteError, Via};
pub use router::{Decision, Frames, IpRouter};
