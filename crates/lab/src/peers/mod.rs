//! Peers: the structures nexthop is measured against, built the way their authors (or the
//! systems that use them) build them, on the same keys and with the same hash where it applies.

pub mod cs;
pub mod flat;
pub mod forwarder;
pub mod ip;
pub mod name;
pub mod veth;
