//! The TagNet router's pipeline, sans-I/O: a batch of frames in, one [`Decision`] per frame
//! out; between batches, its control plane ([`TreeNode`] per tree) ticks and its tables are
//! rebuilt from what the trees installed.
//!
//! # Overview
//! For each frame (with the port it came in on):
//! - A control message (`message.rs`) goes to its tree's [`TreeNode`]; a beacon of a tree not
//!   seen before makes one (a router joins every tree it hears). Anything else for a tree it
//!   is not on is dropped ([`DropReason::UnknownTree`]).
//! - A packet (`packet.rs`) with a TTL of 1 or less is dropped ([`DropReason::Ttl`]); any other
//!   has its TTL decremented in place, and is forwarded by its address:
//!   - **By descriptor, toward the root first.** An interest that comes up from a child of a
//!     router that is not the root goes on to its parent, untouched: only the root knows every
//!     producer. Every other descriptor packet is matched in the table of its kind — pushes in
//!     the subscriptions', interests in the producers' — on its tree's ports: fan-out 1 by
//!     Find Largest Subset, any other by Find All Subsets limited to the fan-out. A push also
//!     goes up to the parent when it came from below (subscribers elsewhere are reached from
//!     the root down), and never back out of the port it came in on: on a tree, every
//!     subscriber gets it exactly once.
//!   - **By locator**, along the tree's Thorup–Zwick state (the root's labels), out of the port
//!     behind the TZ interface; one for the router itself is counted and consumed
//!     ([`Decision::Local`]).
//! - Everything else is a drop counted by reason ([`RouterCounters::drops`]).
//!
//! The anycast packets of a batch are matched together ([`CompiledFib::fls_batch`]). The tables
//! ([`Table`]) change only between batches ([`TagRouter::maintain`]): static entries (a FIB
//! file's, used by pushes and interests alike) and the entries each tree installed, compiled
//! once (rare+chain, SROL); when no tree installed any, both kinds share the static table.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use nexthop_lookup::tag::{
    Address, CompiledFib, Compression, Descriptor, DescriptorFib, Fanout, Hop, Largest, Layout, MatchScratch, Port, PortSet, TagError,
    TzRouter,
};

use super::message::{Message, MessageError, Role};
use super::packet::{self, Kind, PacketError};
use super::tree::{TreeNode, TICK};
use crate::frames::Frames;

/// Ports a router may have (a decision's ports are a 64-bit mask).
pub const MAX_ROUTER_PORTS: usize = 64;
/// Trees a router may be on (tree ids `0..MAX_TREES`).
pub const MAX_TREES: usize = 64;

/// What to do with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Out of each port of the mask (bit i: port i), its TTL decremented.
    Out(u64),
    /// Consumed here: a control message, or a packet for this router's own locator.
    Local,
    /// Dropped, for this reason.
    Drop(DropReason),
}

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Not TagNet's EtherType.
    NotTagNet,
    /// A header cut short (address, packet header, reply, payload).
    Truncated,
    /// An unknown version, address type or packet kind, or a reply that is no locator.
    BadHeader,
    /// A descriptor with no bits.
    EmptyDescriptor,
    /// A fan-out of 0.
    ZeroFanout,
    /// A tree this router is not on.
    UnknownTree,
    /// A locator that does not belong to the tree.
    BadLocator,
    /// A locator packet on a tree whose labels this router does not have yet, or whose next
    /// hop it no longer hears.
    NoRoute,
    /// No entry matches the descriptor on its tree (and no parent to send it to).
    NoMatch,
    /// The TTL ran out.
    Ttl,
    /// A control message that does not parse.
    BadControl,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 11] = [
        DropReason::NotTagNet,
        DropReason::Truncated,
        DropReason::BadHeader,
        DropReason::EmptyDescriptor,
        DropReason::ZeroFanout,
        DropReason::UnknownTree,
        DropReason::BadLocator,
        DropReason::NoRoute,
        DropReason::NoMatch,
        DropReason::Ttl,
        DropReason::BadControl,
    ];

    /// Its name in counters: `no-match`, `ttl`, …
    pub fn name(self) -> &'static str {
        match self {
            DropReason::NotTagNet => "not-tagnet",
            DropReason::Truncated => "truncated",
            DropReason::BadHeader => "bad-header",
            DropReason::EmptyDescriptor => "empty-descriptor",
            DropReason::ZeroFanout => "zero-fanout",
            DropReason::UnknownTree => "unknown-tree",
            DropReason::BadLocator => "bad-locator",
            DropReason::NoRoute => "no-route",
            DropReason::NoMatch => "no-match",
            DropReason::Ttl => "ttl",
            DropReason::BadControl => "bad-control",
        }
    }

    fn of_packet(e: PacketError) -> DropReason {
        match e {
            PacketError::Address(TagError::Truncated) | PacketError::Truncated => DropReason::Truncated,
            PacketError::Address(TagError::EmptyDescriptor) => DropReason::EmptyDescriptor,
            PacketError::Address(TagError::ZeroFanout) => DropReason::ZeroFanout,
            PacketError::Address(_) | PacketError::BadKind(_) | PacketError::BadReply | PacketError::TooLong(_) => DropReason::BadHeader,
        }
    }
}

/// What the router decided, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouterCounters {
    /// Descriptor packets matched by Find All Subsets.
    pub fas: u64,
    /// Descriptor packets matched by Find Largest Subset.
    pub fls: u64,
    /// Interests passed up toward the root unmatched.
    pub up: u64,
    /// Locator packets forwarded.
    pub tz: u64,
    /// Packets for this router's own locator.
    pub local: u64,
    /// Control messages taken.
    pub control: u64,
    /// Drops, indexed like [`DropReason::ALL`].
    pub drops: [u64; DropReason::ALL.len()],
}

impl RouterCounters {
    /// Drops for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }
}

/// Router port `port`'s bit in a decision's mask (none past the mask's 64).
fn bit(port: usize) -> u64 {
    u32::try_from(port).ok().and_then(|p| 1u64.checked_shl(p)).unwrap_or(0)
}

/// One compiled table: the FIB, each port id's router-port bit, each tree's ports.
#[derive(Debug)]
pub struct Table {
    fib: CompiledFib,
    /// The router-port bit of each port id.
    bits: Vec<u64>,
    /// The port ids on each tree.
    tree_ports: Vec<PortSet>,
    /// The port ids on each router port.
    on_port: Vec<PortSet>,
    entries: usize,
}

impl Table {
    /// `fib` compiled; `ports` is the router's port count (interfaces past it are left out of
    /// every answer).
    ///
    /// # Errors
    /// The FIB does not compile (it is past the compiled trie's index widths).
    pub fn build(fib: &DescriptorFib, ports: usize) -> Result<Table, TagError> {
        let compiled = fib.compile(Compression::RareChain, Layout::Srol)?;
        let bits: Vec<u64> = (0..fib.port_count())
            .map(|id| fib.port(id as u8).map_or(0, |p| if usize::from(p.interface) < ports { bit(usize::from(p.interface)) } else { 0 }))
            .collect();
        let tree_ports = (0..MAX_TREES as u16).map(|t| fib.tree_ports(t)).collect();
        let on_port = (0..ports).map(|port| PortSet::of((0..bits.len()).filter(|&id| bits[id] == bit(port)).map(|id| id as u8))).collect();
        Ok(Table { fib: compiled, bits, tree_ports, on_port, entries: fib.len() })
    }

    /// Descriptors in the table.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// `allowed` without the ids on router port `port`.
    fn without(&self, allowed: &PortSet, port: usize) -> PortSet {
        let off = self.on_port.get(port).copied().unwrap_or_default();
        PortSet(core::array::from_fn(|w| allowed.0[w] & !off.0[w]))
    }

    fn mask(&self, ports: &PortSet) -> u64 {
        ports.iter().fold(0, |m, id| m | self.bits.get(usize::from(id)).copied().unwrap_or(0))
    }
}

/// A tree's locator state: the TZ router and the port behind each TZ interface.
#[derive(Debug, Clone)]
struct Locating {
    router: TzRouter,
    ports: Vec<Option<usize>>,
}

/// A descriptor packet waiting for Find Largest Subset.
#[derive(Debug, Clone, Copy)]
struct Anycast {
    frame: usize,
    descriptor: Descriptor,
    tree: u16,
    ingress: usize,
}

/// The TagNet router.
#[derive(Debug)]
pub struct TagRouter {
    name: String,
    ports: usize,
    trees: BTreeMap<u16, TreeNode>,
    fixed: DescriptorFib,
    fixed_table: Arc<Table>,
    /// Subscriptions' and producers' tables, by [`Role::index`].
    tables: [Arc<Table>; 2],
    /// Per tree: the parent port (`None` at the root or off the tree) and the locator state.
    parents: Vec<Option<usize>>,
    locating: Vec<Option<Locating>>,
    last_tick: Option<Instant>,
    scratch: MatchScratch,
    anycast: [Vec<Anycast>; 2],
    queries: Vec<Descriptor>,
    largest: Vec<Option<Largest>>,
    outbox: Vec<(usize, Vec<u8>)>,
    /// What it forwarded and dropped.
    pub counters: RouterCounters,
}

/// Why a router cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouterError {
    /// More ports than [`MAX_ROUTER_PORTS`].
    #[error("{0} ports: a TagNet router has at most {MAX_ROUTER_PORTS}")]
    TooManyPorts(usize),
    /// A tree id past [`MAX_TREES`].
    #[error("tree {0}: tree ids are below {MAX_TREES}")]
    BadTree(u16),
    /// A name longer than a control message holds, or empty.
    #[error("a node name is 1 to {} bytes", super::message::MAX_NAME)]
    BadName,
    /// The static FIB does not compile.
    #[error("the FIB: {0}")]
    Fib(TagError),
}

impl TagRouter {
    /// Router `name` on `ports` ports, the root of `roots`, with the static entries `fixed`.
    ///
    /// # Errors
    /// A [`RouterError`].
    pub fn new(name: &str, ports: usize, roots: &[u16], fixed: DescriptorFib) -> Result<TagRouter, RouterError> {
        if ports > MAX_ROUTER_PORTS {
            return Err(RouterError::TooManyPorts(ports));
        }
        if name.is_empty() || name.len() > super::message::MAX_NAME {
            return Err(RouterError::BadName);
        }
        if let Some(&t) = roots.iter().find(|&&t| usize::from(t) >= MAX_TREES) {
            return Err(RouterError::BadTree(t));
        }
        let table = Arc::new(Table::build(&fixed, ports).map_err(RouterError::Fib)?);
        let trees = roots.iter().map(|&t| (t, TreeNode::new(t, name, ports, true))).collect();
        Ok(TagRouter {
            name: name.to_string(),
            ports,
            trees,
            fixed,
            tables: [table.clone(), table.clone()],
            fixed_table: table,
            parents: vec![None; MAX_TREES],
            locating: vec![None; MAX_TREES],
            last_tick: None,
            scratch: MatchScratch::new(),
            anycast: [Vec::new(), Vec::new()],
            queries: Vec::new(),
            largest: Vec::new(),
            outbox: Vec::new(),
            counters: RouterCounters::default(),
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The control plane of `tree`, if the router is on it.
    pub fn tree(&self, tree: u16) -> Option<&TreeNode> {
        self.trees.get(&tree)
    }

    /// The trees it is on.
    pub fn trees(&self) -> impl Iterator<Item = &TreeNode> {
        self.trees.values()
    }

    /// The table packets of `role` are matched in.
    pub fn table(&self, role: Role) -> &Table {
        &self.tables[role.index()]
    }

    /// Installs static locator state on `tree`, which no root labels: `router` is this router's
    /// Thorup–Zwick state there and `ports[i]` the router port behind TZ interface `i` (the
    /// `tagnet-wire` experiment's router, whose labels come from a topology it computes).
    ///
    /// # Errors
    /// [`RouterError::BadTree`] for a tree id past [`MAX_TREES`] or one a root labels here.
    pub fn set_locator(&mut self, tree: u16, router: TzRouter, ports: Vec<Option<usize>>) -> Result<(), RouterError> {
        if usize::from(tree) >= MAX_TREES || self.trees.contains_key(&tree) {
            return Err(RouterError::BadTree(tree));
        }
        let ports = ports.into_iter().map(|p| p.filter(|&p| p < self.ports)).collect();
        self.locating[usize::from(tree)] = Some(Locating { router, ports });
        Ok(())
    }

    /// Control messages to send: (port, TagNet packet bytes), to frame or tunnel.
    pub fn take_outbox(&mut self) -> Vec<(usize, Vec<u8>)> {
        std::mem::take(&mut self.outbox)
    }

    /// Decides a batch: `out[i]` for frame `i`, which came in on `ingress(i)`. Forwarded frames
    /// have their TTL decremented in place (the Ethernet source is the caller's to set).
    pub fn route_batch<F: Frames + ?Sized>(
        &mut self,
        now: Instant,
        frames: &mut F,
        ingress: impl Fn(usize) -> usize,
        out: &mut Vec<Decision>,
    ) {
        out.clear();
        self.anycast[0].clear();
        self.anycast[1].clear();
        for i in 0..frames.count() {
            let d = self.route(now, frames.bytes_mut(i), i, ingress(i));
            out.push(d);
        }
        for role in Role::ALL {
            self.match_anycast(role, out);
        }
        for d in out.iter() {
            if let Decision::Drop(r) = d {
                self.counters.drops[*r as usize] += 1;
            }
        }
    }

    /// One frame's decision; an anycast one is left `Drop(NoMatch)` and queued for FLS.
    fn route(&mut self, now: Instant, frame: &mut [u8], i: usize, ingress: usize) -> Decision {
        if frame.get(12..14) != Some(&packet::ETHERTYPE.to_be_bytes()) {
            return Decision::Drop(DropReason::NotTagNet);
        }
        let bytes = &mut frame[packet::ETHER_BYTES..];
        if packet::is_control(bytes) {
            return self.control(now, bytes, ingress);
        }
        let p = match packet::parse(bytes) {
            Ok(p) => p,
            Err(e) => return Decision::Drop(DropReason::of_packet(e)),
        };
        if p.ttl <= 1 {
            return Decision::Drop(DropReason::Ttl);
        }
        let (address, kind) = (p.address, p.kind);
        bytes[p.ttl_at] -= 1;
        match address {
            Address::Descriptor { descriptor, fanout, tree } => self.by_descriptor(descriptor, fanout, tree, kind, i, ingress),
            Address::Locator { tree, label } => match self.locating.get(usize::from(tree)) {
                None => Decision::Drop(DropReason::UnknownTree),
                Some(None) if !self.trees.contains_key(&tree) => Decision::Drop(DropReason::UnknownTree),
                Some(None) => Decision::Drop(DropReason::NoRoute),
                Some(Some(l)) => match l.router.forward(&label) {
                    Err(_) => Decision::Drop(DropReason::BadLocator),
                    Ok(Hop::Deliver) => {
                        self.counters.local += 1;
                        Decision::Local
                    }
                    Ok(Hop::Interface(x)) => match l.ports.get(usize::from(x)).copied().flatten() {
                        Some(port) => {
                            self.counters.tz += 1;
                            Decision::Out(bit(port))
                        }
                        None => Decision::Drop(DropReason::NoRoute),
                    },
                },
            },
        }
    }

    fn by_descriptor(&mut self, descriptor: Descriptor, fanout: Fanout, tree: u16, kind: Kind, i: usize, ingress: usize) -> Decision {
        let t = usize::from(tree);
        let role = if kind == Kind::Push { Role::Subscribe } else { Role::Provide };
        let table = &self.tables[role.index()];
        let Some(allowed) = table.tree_ports.get(t).filter(|p| !p.is_empty() || self.trees.contains_key(&tree)) else {
            return Decision::Drop(DropReason::UnknownTree);
        };
        let parent = self.parents[t];
        if kind != Kind::Push && parent.is_some_and(|p| p != ingress) {
            self.counters.up += 1;
            return Decision::Out(bit(parent.expect("some")));
        }
        if fanout.get() == 1 {
            self.counters.fls += 1;
            self.anycast[role.index()].push(Anycast { frame: i, descriptor, tree, ingress });
            return Decision::Drop(DropReason::NoMatch);
        }
        self.counters.fas += 1;
        // A push's fan-out is spent on ports other than the one it came in on.
        let allowed = if kind == Kind::Push { table.without(allowed, ingress) } else { *allowed };
        let ports = table.fib.fas(&descriptor, fanout, &allowed, &mut self.scratch);
        self.finish(kind, table.mask(&ports), ingress, parent)
    }

    /// The ports of a match, for a packet of `kind` from `ingress`: a push never back where
    /// it came from, and up to the parent when it came from below.
    fn finish(&self, kind: Kind, mut mask: u64, ingress: usize, parent: Option<usize>) -> Decision {
        if kind == Kind::Push {
            mask &= !bit(ingress);
            if let Some(p) = parent.filter(|&p| p != ingress) {
                mask |= bit(p);
            }
        }
        if mask == 0 {
            Decision::Drop(DropReason::NoMatch)
        } else {
            Decision::Out(mask)
        }
    }

    /// The queued anycast packets of `role`, matched by one FLS batch.
    fn match_anycast(&mut self, role: Role, out: &mut [Decision]) {
        let queued = std::mem::take(&mut self.anycast[role.index()]);
        if queued.is_empty() {
            self.anycast[role.index()] = queued;
            return;
        }
        let table = self.tables[role.index()].clone();
        self.queries.clear();
        self.largest.clear();
        self.largest.resize(queued.len(), None);
        self.queries.extend(queued.iter().map(|a| a.descriptor));
        table.fib.fls_batch(&self.queries, &mut self.largest, &mut self.scratch);
        let kind = if role == Role::Subscribe { Kind::Push } else { Kind::Interest };
        for (a, best) in queued.iter().zip(&self.largest) {
            let allowed = table.tree_ports[usize::from(a.tree)];
            let ports = best.map_or(PortSet::EMPTY, |b| b.ports.intersection(&allowed));
            out[a.frame] = self.finish(kind, table.mask(&ports), a.ingress, self.parents[usize::from(a.tree)]);
        }
        self.anycast[role.index()] = queued;
    }

    fn control(&mut self, now: Instant, bytes: &[u8], ingress: usize) -> Decision {
        let m = match Message::parse(bytes) {
            Ok(m) => m,
            Err(MessageError::NotControl) => return Decision::Drop(DropReason::BadHeader),
            Err(_) => return Decision::Drop(DropReason::BadControl),
        };
        let tree = m.tree();
        if usize::from(tree) >= MAX_TREES {
            return Decision::Drop(DropReason::UnknownTree);
        }
        if !self.trees.contains_key(&tree) {
            if !matches!(m, Message::Beacon(_)) {
                return Decision::Drop(DropReason::UnknownTree);
            }
            self.trees.insert(tree, TreeNode::new(tree, &self.name, self.ports, false));
        }
        self.trees.get_mut(&tree).expect("inserted").receive(now, ingress, m);
        self.counters.control += 1;
        Decision::Local
    }

    /// Between batches: ticks the trees when a [`TICK`] has passed, queues their messages,
    /// and rebuilds what changed (tables, parents, locator state).
    ///
    /// # Errors
    /// The installed entries do not compile; the tables in force stay.
    pub fn maintain(&mut self, now: Instant) -> Result<(), TagError> {
        if self.last_tick.is_none_or(|t| now.duration_since(t) >= TICK) {
            self.last_tick = Some(now);
            for t in self.trees.values_mut() {
                t.tick(now);
            }
        }
        let mut fib_changed = false;
        for t in self.trees.values_mut() {
            self.outbox.extend(t.take_messages());
            fib_changed |= t.take_fib_changed();
            let tree = usize::from(t.tree());
            self.parents[tree] = t.parent_port();
            if t.take_tz_changed() || self.locating[tree].is_none() {
                self.locating[tree] = t.assigned().map(|a| Locating { router: a.router, ports: t.tz_ports() });
            }
        }
        if fib_changed {
            self.rebuild()?;
        }
        Ok(())
    }

    /// The tables from the static entries and every tree's.
    fn rebuild(&mut self) -> Result<(), TagError> {
        let mut tables = [self.fixed_table.clone(), self.fixed_table.clone()];
        for role in Role::ALL {
            let mut entries = self.trees.values().flat_map(|t| t.entries(role).map(move |(d, port)| (d, t.tree(), port))).peekable();
            if entries.peek().is_none() {
                continue;
            }
            let mut fib = self.fixed.clone();
            for (d, tree, port) in entries {
                fib.insert(d, Port { tree, interface: port as u16 })?;
            }
            tables[role.index()] = Arc::new(Table::build(&fib, self.ports)?);
        }
        self.tables = tables;
        Ok(())
    }
}
