//! Workload generators shared by experiments (and later by forwarder benchmarks).

pub mod chunks;
pub mod names;
pub mod packets;
pub mod routes;
pub mod tags;
pub mod topologies;
