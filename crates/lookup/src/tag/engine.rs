//! The TagNet forwarding engine: parse a header, dispatch to FAS, FLS or TZ, count every drop.
//!
//! # Overview
//! A TagNet packet starts with one byte `version << 4 | address type`, then either
//! - a **descriptor** address (type 1): fan-out k (1 byte: 0 is invalid, 255 means no limit),
//!   the tree (2 bytes LE), the 24-byte descriptor — 28 bytes in all; or
//! - a **locator** address (type 2): a reserved byte, the tree (2 bytes LE), the label's id
//!   (4 bytes LE), field list and mask (8 bytes LE each) — 24 bytes.
//!
//! The paper fixes the fields, not their bytes; this is nexthop's encoding. [`Engine::forward`]
//! sends a descriptor with k = 1 to Find Largest Subset (anycast), any other k to Find All Subsets
//! limited to k ports, and a locator to the Thorup–Zwick function of that tree; both descriptor
//! results keep only ports of the packet's tree. [`Engine::forward_batch`] decides a burst the
//! same way, its anycast packets matched together by one FLS batch (whose depth-first walks
//! interleave on FIBs past the caches; the default breadth-first ones prefetch on their own).
//! [`ForwardingState`] is shared by all forwarding threads (read-only); each thread has its own
//! [`Engine`] with its scratch stack and counters.

use super::compile::CompiledFib;
use super::matcher::{Fanout, Largest, MatchScratch};
use super::tz::{Hop, Label, TzRouter};
use super::{Descriptor, PortSet, TagError, DESCRIPTOR_BYTES};

/// The header version this engine speaks.
pub const VERSION: u8 = 1;
/// Address type: descriptor.
pub const TYPE_DESCRIPTOR: u8 = 1;
/// Address type: locator.
pub const TYPE_LOCATOR: u8 = 2;
/// Header bytes of a descriptor packet.
pub const DESCRIPTOR_HEADER: usize = 4 + DESCRIPTOR_BYTES;
/// Header bytes of a locator packet.
pub const LOCATOR_HEADER: usize = 24;
/// The fan-out byte meaning "no limit".
pub const FANOUT_ALL: u8 = 255;

/// A packet's destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Address {
    /// By descriptor, to up to `fanout` ports on `tree`.
    Descriptor {
        /// The descriptor.
        descriptor: Descriptor,
        /// The fan-out limit k.
        fanout: Fanout,
        /// The routing tree.
        tree: u16,
    },
    /// By locator on `tree`.
    Locator {
        /// The routing tree.
        tree: u16,
        /// The destination's label on it.
        label: Label,
    },
}

fn le<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&b[at..at + N]);
    out
}

impl Address {
    /// Reads the header at the start of `packet`.
    ///
    /// # Errors
    /// [`TagError::Truncated`], [`TagError::BadVersion`], [`TagError::BadAddressType`],
    /// [`TagError::ZeroFanout`] or [`TagError::EmptyDescriptor`].
    pub fn parse(packet: &[u8]) -> Result<Address, TagError> {
        let &first = packet.first().ok_or(TagError::Truncated)?;
        if first >> 4 != VERSION {
            return Err(TagError::BadVersion(first >> 4));
        }
        match first & 0x0f {
            TYPE_DESCRIPTOR => {
                let h = packet.get(..DESCRIPTOR_HEADER).ok_or(TagError::Truncated)?;
                let descriptor = Descriptor::from_bytes(&le(h, 4));
                if descriptor.is_empty() {
                    return Err(TagError::EmptyDescriptor);
                }
                let fanout = if h[1] == FANOUT_ALL { Fanout::ALL } else { Fanout::new(usize::from(h[1]))? };
                Ok(Address::Descriptor { descriptor, fanout, tree: u16::from_le_bytes(le(h, 2)) })
            }
            TYPE_LOCATOR => {
                let h = packet.get(..LOCATOR_HEADER).ok_or(TagError::Truncated)?;
                let label =
                    Label { id: u32::from_le_bytes(le(h, 4)), list: u64::from_le_bytes(le(h, 8)), mask: u64::from_le_bytes(le(h, 16)) };
                Ok(Address::Locator { tree: u16::from_le_bytes(le(h, 2)), label })
            }
            t => Err(TagError::BadAddressType(t)),
        }
    }

    /// Appends the header for this address to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            Address::Descriptor { descriptor, fanout, tree } => {
                let k = if fanout.get() >= usize::from(FANOUT_ALL) { FANOUT_ALL } else { fanout.get() as u8 };
                out.extend_from_slice(&[VERSION << 4 | TYPE_DESCRIPTOR, k]);
                out.extend_from_slice(&tree.to_le_bytes());
                out.extend_from_slice(&descriptor.to_bytes());
            }
            Address::Locator { tree, label } => {
                out.extend_from_slice(&[VERSION << 4 | TYPE_LOCATOR, 0]);
                out.extend_from_slice(&tree.to_le_bytes());
                out.extend_from_slice(&label.id.to_le_bytes());
                out.extend_from_slice(&label.list.to_le_bytes());
                out.extend_from_slice(&label.mask.to_le_bytes());
            }
        }
    }
}

/// What the engine decided for a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Out of these ports (a descriptor packet).
    Ports(PortSet),
    /// Out of `interface` of `tree` (a locator packet).
    Interface {
        /// The tree.
        tree: u16,
        /// The interface.
        interface: u16,
    },
    /// To this node's own applications (a locator naming this router).
    Deliver,
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The header is cut short.
    Truncated,
    /// An unknown header version.
    BadVersion,
    /// Neither descriptor nor locator.
    BadAddressType,
    /// A descriptor with no bits.
    EmptyDescriptor,
    /// A fan-out of 0.
    ZeroFanout,
    /// A tree this router is not on.
    UnknownTree,
    /// A locator that does not belong to the tree.
    BadLocator,
    /// No FIB entry matches the descriptor (on the packet's tree).
    NoMatch,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 8] = [
        DropReason::Truncated,
        DropReason::BadVersion,
        DropReason::BadAddressType,
        DropReason::EmptyDescriptor,
        DropReason::ZeroFanout,
        DropReason::UnknownTree,
        DropReason::BadLocator,
        DropReason::NoMatch,
    ];

    fn of(e: &TagError) -> DropReason {
        match e {
            TagError::Truncated => DropReason::Truncated,
            TagError::BadVersion(_) => DropReason::BadVersion,
            TagError::BadAddressType(_) => DropReason::BadAddressType,
            TagError::EmptyDescriptor => DropReason::EmptyDescriptor,
            TagError::ZeroFanout => DropReason::ZeroFanout,
            TagError::UnknownTree(_) => DropReason::UnknownTree,
            _ => DropReason::BadLocator,
        }
    }
}

/// Per-engine counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Descriptor packets forwarded by Find All Subsets.
    pub fas: u64,
    /// Descriptor packets forwarded by Find Largest Subset.
    pub fls: u64,
    /// Locator packets forwarded.
    pub tz: u64,
    /// Locator packets for this router.
    pub delivered: u64,
    /// Drops, indexed like [`DropReason::ALL`].
    pub drops: [u64; 8],
}

impl Counters {
    /// A packet's decision, or `None` for a drop, counted by its reason.
    fn count(&mut self, decided: Result<Decision, DropReason>) -> Option<Decision> {
        decided.map_err(|reason| self.drops[reason as usize] += 1).ok()
    }

    /// Drops for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }
}

/// What every forwarding thread of one router reads: the compiled descriptor FIB, the ports of
/// each tree, and this router's TZ state on each tree (both indexed by tree).
#[derive(Debug, Clone)]
pub struct ForwardingState {
    /// The descriptor FIB.
    pub fib: CompiledFib,
    /// Ports per tree.
    pub tree_ports: Vec<PortSet>,
    /// This router's locator state per tree.
    pub routers: Vec<TzRouter>,
}

/// One forwarding thread's engine.
#[derive(Debug)]
pub struct Engine<'a> {
    state: &'a ForwardingState,
    scratch: MatchScratch,
    /// A burst's anycast packets, matched together: their descriptors, and each one's place in
    /// the burst and ports allowed on its tree.
    anycast: Vec<Descriptor>,
    anycast_at: Vec<(usize, PortSet)>,
    largest: Vec<Option<Largest>>,
    /// What it forwarded and dropped.
    pub counters: Counters,
}

/// A packet that parsed and was not dropped, after everything but Find Largest Subset.
enum Pending {
    /// Decided.
    Decided(Decision),
    /// An anycast descriptor, to match by FLS on ports `allowed` (those of its tree).
    Anycast { descriptor: Descriptor, allowed: PortSet },
}

impl<'a> Engine<'a> {
    /// An engine over `state`.
    pub fn new(state: &'a ForwardingState) -> Self {
        Engine {
            state,
            scratch: MatchScratch::new(),
            anycast: Vec::new(),
            anycast_at: Vec::new(),
            largest: Vec::new(),
            counters: Counters::default(),
        }
    }

    /// Forwards one packet; `None` when it was dropped (and counted).
    pub fn forward(&mut self, packet: &[u8]) -> Option<Decision> {
        let decided = self.decide(packet).and_then(|p| match p {
            Pending::Decided(d) => Ok(d),
            Pending::Anycast { descriptor, allowed } => anycast_decision(self.state.fib.fls(&descriptor, &mut self.scratch), &allowed),
        });
        self.counters.count(decided)
    }

    /// Forwards a burst: `out[i]` is what [`Engine::forward`] decides for `packets[i]` (the
    /// same decision, and the same counts), for as many packets as both have. The anycast
    /// packets' FLS walks run as one [`CompiledFib::fls_batch`], which, for walks in
    /// [`super::FlsOrder::DepthFirst`] on a FIB past the caches, interleaves them
    /// ([`super::FlsBatchOrder`]), so each waits on memory while the others work; the rest are
    /// decided one by one.
    pub fn forward_batch<P: AsRef<[u8]>>(&mut self, packets: &[P], out: &mut [Option<Decision>]) {
        self.anycast.clear();
        self.anycast_at.clear();
        for (i, (p, o)) in packets.iter().zip(out.iter_mut()).enumerate() {
            match self.decide(p.as_ref()) {
                Ok(Pending::Anycast { descriptor, allowed }) => {
                    self.anycast.push(descriptor);
                    self.anycast_at.push((i, allowed));
                }
                Ok(Pending::Decided(d)) => *o = Some(d),
                Err(reason) => *o = self.counters.count(Err(reason)),
            }
        }
        self.largest.clear();
        self.largest.resize(self.anycast.len(), None);
        self.state.fib.fls_batch(&self.anycast, &mut self.largest, &mut self.scratch);
        for (&(i, allowed), &best) in self.anycast_at.iter().zip(&self.largest) {
            out[i] = self.counters.count(anycast_decision(best, &allowed));
        }
    }

    /// Parses `packet` and decides it, except an anycast descriptor: that is left for FLS.
    fn decide(&mut self, packet: &[u8]) -> Result<Pending, DropReason> {
        let s = self.state;
        let decided = match Address::parse(packet).map_err(|e| DropReason::of(&e))? {
            Address::Descriptor { descriptor, fanout, tree } => {
                let allowed = s.tree_ports.get(usize::from(tree)).ok_or(DropReason::UnknownTree)?;
                if fanout.get() == 1 {
                    self.counters.fls += 1;
                    return Ok(Pending::Anycast { descriptor, allowed: *allowed });
                }
                self.counters.fas += 1;
                let ports = s.fib.fas(&descriptor, fanout, allowed, &mut self.scratch);
                if ports.is_empty() {
                    return Err(DropReason::NoMatch);
                }
                Decision::Ports(ports)
            }
            Address::Locator { tree, label } => {
                let router = s.routers.get(usize::from(tree)).ok_or(DropReason::UnknownTree)?;
                match router.forward(&label).map_err(|e| DropReason::of(&e))? {
                    Hop::Deliver => {
                        self.counters.delivered += 1;
                        Decision::Deliver
                    }
                    Hop::Interface(interface) => {
                        self.counters.tz += 1;
                        Decision::Interface { tree, interface }
                    }
                }
            }
        };
        Ok(Pending::Decided(decided))
    }
}

/// An anycast packet's decision from its FLS answer: the answer's ports on the packet's tree.
fn anycast_decision(best: Option<Largest>, allowed: &PortSet) -> Result<Decision, DropReason> {
    let ports = best.map_or(PortSet::EMPTY, |b| b.ports.intersection(allowed));
    if ports.is_empty() {
        return Err(DropReason::NoMatch);
    }
    Ok(Decision::Ports(ports))
}
