//! `nexthop controller`: the Concise switches' SDN controller.
//!
//! # Overview
//! - [`topology`]: the file — switches and their control addresses, links, hosts known.
//! - [`paths`]: shortest paths and the flood tree over the switch graph.
//! - [`fabric`]: sans-I/O, where every host is and every switch's FIB control structure, with
//!   the update messages each change makes.
//! - [`session`]: the I/O — a gRPC session per switch (connect, sync, stream packet-ins, push
//!   messages in order; reconnect after a switch restarts), around one loop that owns the
//!   fabric.

pub mod fabric;
pub mod paths;
pub mod session;
pub mod topology;
