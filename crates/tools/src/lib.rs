//! nexthop-tools: what talks to a forwarder from outside it — the operator's tool, the tests and
//! the experiments all use these; the forwarder itself does not.
//!
//! # Overview
//! - [`client`]: a small blocking NDN client over a Unix, TCP, UDP or WebSocket face: Interests,
//!   signed management commands, status datasets.
//! - [`traffic`]: a producer and a consumer that measure satisfied Interests per second.
//! - [`lossy_link`]: a UDP relay that drops what a loss rule refuses.

#![deny(unsafe_code)]

pub mod client;
pub mod lossy_link;
pub mod traffic;
