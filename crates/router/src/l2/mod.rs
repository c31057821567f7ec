//! The Concise switch (Yu et al., IEEE/ACM ToN 2018, sections V and VII): Ethernet frames
//! forwarded by destination address through the Othello query structure
//! (`nexthop_lookup::flat`), unmodified.
//!
//! # Overview
//! - [`switch`]: the sans-I/O pipeline — a batch of frames in, one decision per frame out
//!   (forward, flood along the configured tree, or a counted drop), the hosts it sees off their
//!   FIB port reported for the controller, the FIB patched between batches.
//! - [`ports`]: the pipeline on `nexthop-io` ports, one thread.
//! - [`hosts_file`]: the static FIB a switch starts from (`mac interface` lines).

pub mod hosts_file;
pub mod ports;
pub mod switch;

pub use switch::{apply_delta, Decision, DropReason, L2Switch, MacFib, PacketIn, PortCount, PortRole, SwitchCounters, SwitchPort};
