//! Subcommands.

pub mod bench;
pub mod packet;
