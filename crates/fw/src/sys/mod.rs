//! Every call into the operating system that needs `unsafe`; the rest of the crate is
//! `#![deny(unsafe_code)]`, and `tests/layout.rs` checks that no other module allows it.
//!
//! # Overview
//! - [`udp_batch`]: batched UDP I/O (`recvmmsg`, `sendmmsg`); [`socket_queue`]: how much a
//!   socket's kernel send queue holds.
//! - [`interfaces`]: the host's interfaces and addresses; [`interface_watch`]: the kernel's
//!   notices that they changed.
//! - [`privileges`]: dropping to an unprivileged user once started.

pub mod interface_watch;
pub mod interfaces;
pub mod privileges;
pub mod socket_queue;
pub mod udp_batch;
