//! The experiments `nexthop bench` runs, one file each.

use crate::{Report, RunConfig};

pub mod cs;
pub mod flat_fib;
pub mod forwarder;
mod forwarder_frames;
mod forwarder_hops;
pub mod forwarder_ssd;
mod forwarder_strategies;
mod forwarder_traffic;
pub mod ip_lpm;
pub mod ip_router;
mod l2_moves;
pub mod l2_switch;
pub mod name_fib;
pub mod ports;
pub mod tagnet;
pub mod wire;

/// One experiment.
pub trait Experiment: Sync {
    /// The name on the command line and in the JSON.
    fn name(&self) -> &'static str;
    /// One line: what it measures and against which peers.
    fn about(&self) -> &'static str;
    /// Builds the workload, runs nexthop and its peers, and reports.
    ///
    /// # Errors
    /// When the workload cannot be built (missing data, I/O).
    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report>;
}

/// Every experiment, in the order `--all` runs them.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &wire::Wire,
        &name_fib::NameFibExperiment,
        &cs::CsExperiment,
        &flat_fib::FlatFibExperiment,
        &forwarder::ForwarderExperiment,
        &forwarder_ssd::ForwarderSsdExperiment,
        &ip_lpm::IpLpmExperiment,
        &tagnet::TagnetExperiment,
        &ports::PortsExperiment,
        &ip_router::IpRouterExperiment,
        &l2_switch::L2SwitchExperiment,
        &tagnet::TagnetWireExperiment,
    ]
}

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static dyn Experiment> {
    all().into_iter().find(|e| e.name() == name)
}
