//! Configuration: nexthop's TOML file and NFD's `nfd.conf`.
//!
//! # Overview
//! - [`info`]: the INFO format (Boost's property tree) that `nfd.conf` and the validator's
//!   rules are written in; a leaf, with its own error type.
//! - [`config`]: the TOML configuration over a built-in default.
//! - [`nfd_conf`]: `nfd.conf` translated into a [`config::Config`].

pub mod config;
pub mod info;
pub mod nfd_conf;
