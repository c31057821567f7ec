//! TagNet routers on the wire (Papalini et al., ANCS'16): packets forwarded by descriptor and
//! by locator through `nexthop_lookup::tag`, with the control plane that builds the trees.
//!
//! # Overview
//! - [`packet`]: a TagNet packet's bytes — the address header, the packet header (kind, TTL,
//!   reply locator), the payload — in an Ethernet frame or a UDP datagram.
//! - [`message`]: the link-local control messages (beacon, join, labels, announce).
//! - [`tree`]: the control plane on one tree, sans-I/O: the tree, its Thorup–Zwick labels, and
//!   the descriptors installed and passed toward the root.
//! - [`router`]: the router's pipeline, a batch of frames to one [`router::Decision`] each, and
//!   its tables rebuilt from what its trees installed.
//! - [`host`]: a host on a tree — subscribe, publish, serve, pull.

pub mod host;
pub mod message;
pub mod packet;
pub mod router;
pub mod tree;
