//! Workload generators shared by experiments (and later by forwarder benchmarks).

pub mod names;
pub mod packets;
