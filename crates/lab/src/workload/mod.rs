//! Workload generators shared by experiments (and later by forwarder benchmarks).

pub mod packets;
