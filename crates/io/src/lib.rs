//! nexthop's packet I/O: ports that receive and transmit batches of Ethernet frames, for
//! pipelines that never touch a socket.
//!
//! # Overview
//! - A [`PortSet`] is the ports one thread serves and the [`FramePool`] their frames live in.
//!   A pipeline takes a batch of [`Frame`]s from [`PortSet::receive`], reads them through the
//!   pool, and hands each to [`PortSet::transmit`] on some port or back to the pool;
//!   [`PortSet::flush`] sends the batch.
//! - AF_XDP ports (`xdp`): an XDP program that nexthop assembles itself ([`bpf`], no compiler
//!   needed) redirects the port's EtherTypes to one socket per receive queue; every other frame
//!   passes to the kernel. The set's sockets share the pool as their UMEM, so forwarding from
//!   one AF_XDP port to another copies nothing in user space. Native XDP where the driver has
//!   it, generic otherwise; [`PortInfo`] says which.
//! - AF_PACKET ports (`packet`, TPACKET_V3 rings) where XDP cannot attach, with the same API.
//! - Drops are counted by reason ([`DropReason`]); an interface that goes away closes its
//!   port, which [`PortSet::maintain`] opens again when the interface is back.
//! - [`tap`]: TAP interfaces, the way a pipeline hands the kernel what its fast path leaves.
//! - [`netns`]: namespaces and veth pairs for tests and experiments.
//!
//! Unsafe code (system calls, mapped rings) is in the modules allowed it below, each block with
//! its `// SAFETY:`; the rest of the crate has none.

pub mod bpf;
mod counters;
mod error;
#[allow(unsafe_code)]
mod interface;
#[allow(unsafe_code)]
mod mapping;
#[allow(unsafe_code)]
mod membership;
#[allow(unsafe_code)]
pub mod netns;
#[allow(unsafe_code)]
mod packet;
#[allow(unsafe_code)]
mod poll;
#[allow(unsafe_code)]
mod pool;
mod port_set;
#[allow(unsafe_code)]
mod sockopt;
pub mod tap;
#[allow(unsafe_code)]
mod xdp;

pub use counters::{DropReason, PortCounters};
pub use error::PortError;
pub use interface::Interface;
pub use poll::readable;
pub use pool::{Frame, FramePool, ETHER_HEADER_BYTES, FRAME_BYTES, HEADROOM, MAX_FRAME_DATA};
pub use port_set::{Backend, PortConfig, PortEvent, PortId, PortInfo, PortSet};
pub use sockopt::set_receive_buffer;
pub use tap::Tap;
pub use xdp::port::XdpMode;
