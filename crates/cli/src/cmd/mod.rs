//! Subcommands.

pub mod bench;
pub mod ctl;
pub mod packet;
pub mod run;
pub mod traffic;
