//! A traffic generator and sink of Ethernet frames on nexthop-io ports: frames of a given size,
//! over a number of flows, at a given rate or as fast as the port takes them, each carrying its
//! flow and sequence number so that the sink counts what was lost, duplicated, reordered or
//! corrupted on the way.
//!
//! # Overview
//! - [`format`](mod@format): the frame layout (a header with a check word, a fixed payload pattern) and
//!   the sink's check of every byte.
//! - [`ip`]: the router's frames (IPv4 UDP to many destinations) and the sink's check of the
//!   port and next hop each came out by.
//! - [`l2`]: the switch's frames (to many destination addresses) and the sink's check that
//!   each came out unmodified by its destination's port.
//! - [`tag`]: the TagNet router's frames (pushes, interests, follow-ups and data of the
//!   paper's sizes) and the sink's check of the port each came out of.
//! - [`tally`]: the sink's accounting per flow (sans-I/O).
//! - [`traffic`]: the loop that sends on one port and receives on others of one
//!   [`nexthop_io::PortSet`] (the two may be in different network namespaces).
//! - [`xdp`]: a generator and sink that are XDP programs, several times faster than the loop
//!   (headers checked, not the payload), for systems the loop cannot load to their limit.

pub mod format;
pub mod ip;
pub mod l2;
pub mod tag;
pub mod tally;
pub mod traffic;
pub mod xdp;
