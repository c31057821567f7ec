//! Subcommands.

pub mod bench;
pub mod controller;
pub mod ctl;
pub mod fib;
pub mod gen;
pub mod packet;
pub mod run;
pub mod tag;
pub mod traffic;
