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
//! - [`ports`]: the router on `nexthop-io` ports (AF_XDP, TagNet's EtherType) and UDP tunnels.
//! - [`host`]: a host on a tree — subscribe, publish, serve, pull — and [`link`], its one link
//!   (an Ethernet interface or a UDP tunnel).

pub mod host;
pub mod link;
pub mod message;
pub mod packet;
pub mod ports;
pub mod router;
pub mod tree;
