//! nexthop-lab: workloads, experiments, peers and plots.
//!
//! # Overview of types
//! - [`Experiment`]: one named experiment (`nexthop bench <name>`): it builds its workload, runs
//!   nexthop and its peers on the same keys, and returns a [`Report`].
//! - [`RunConfig`]: `--quick`, `--threads`, repetitions.
//! - [`Report`] / [`Row`]: flat result rows (`system`, workload parameters, metrics), plots
//!   to draw and summary lines; [`report::Document`] is the JSON written to disk.
//! - [`harness::compare`]: runs contenders interleaved, at least 5 repetitions, reports medians,
//!   and counts each contender's answers that differ from the reference.
//! - [`plot`]: SVG bar and line charts; [`progress`]: a stderr progress bar shown on a TTY.
//!
//! Every experiment is listed in [`experiments::all`]; adding one is adding a file there.

#![deny(unsafe_code)]

pub mod alloc;
pub mod experiments;
pub mod frames;
pub mod harness;
pub mod machine;
pub mod peers;
pub mod plot;
pub mod progress;
pub mod report;
pub mod workload;

pub use experiments::Experiment;
pub use report::{Report, Row};

/// How an experiment should run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Shrink every workload so the experiment runs in seconds (what CI does).
    pub quick: bool,
    /// Worker threads for experiments that measure multi-threaded lookup.
    pub threads: usize,
    /// Timed repetitions per contender (at least 5; the median is reported).
    pub reps: usize,
}

impl RunConfig {
    /// The defaults: all cores, 5 repetitions quick, 7 full.
    pub fn new(quick: bool) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        RunConfig { quick, threads, reps: if quick { 5 } else { 7 } }
    }
}
