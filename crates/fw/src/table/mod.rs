//! The forwarding tables of a shard, as NFD's `daemon/table`.
//!
//! # Overview
//! - [`pit`]: the Pending Interest Table; [`pit_token`]: the token that brings Data and Nacks
//!   back to their shard and entry; [`dead_nonce`]: the dead-nonce list that catches loops.
//! - [`fib`]: the name FIB with its root route; [`shared_fib`]: the one FIB every forwarding
//!   thread reads, changed without stopping them.
//! - [`strategy_choice`]: which strategy applies under each name prefix.

pub mod dead_nonce;
pub mod fib;
pub mod pit;
pub mod pit_token;
pub mod shared_fib;
pub mod strategy_choice;
