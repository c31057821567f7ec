//! A TagNet host, sans-I/O: a node with one port on one tree that publishes, subscribes,
//! serves and pulls — what `nexthop tag publish | subscribe | serve | get` run.
//!
//! # Overview
//! The host is a leaf of its tree ([`TreeNode`] with one port): it takes its router's beacons,
//! joins, gets its locator from the root's labels and announces its subscriptions and its
//! content's descriptors. [`TagHost::receive`] sorts what arrives: control messages to the tree,
//! packets for the host (a push its subscriptions match; an interest or data by its locator, or
//! an interest by a descriptor it serves) handed up as [`Received`], anything else counted as
//! not for it ([`HostCounters::not_mine`]: on a tree no router sends a host what it did not
//! ask for, so the tests require 0). The packets it sends are built by [`TagHost::push`],
//! [`TagHost::interest`], [`TagHost::interest_to`] and [`TagHost::data`].

use std::time::Instant;

use nexthop_lookup::tag::{Address, Descriptor, Fanout};

use super::message::{Message, Role};
use super::packet::{self, Kind, Locator, Packet, PacketError, DEFAULT_TTL};
use super::tree::{TreeNode, TICK};

/// A packet for the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// Push, interest or data.
    pub kind: Kind,
    /// Its address (the descriptor it was published or asked by, or the host's locator).
    pub address: Address,
    /// Where a reply goes.
    pub reply: Option<Locator>,
    /// The content.
    pub payload: Vec<u8>,
}

/// What the host counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostCounters {
    /// Packets handed up.
    pub received: u64,
    /// Packets not for this host: a push none of its subscriptions match, a locator not its
    /// own, an interest by a descriptor it does not serve.
    pub not_mine: u64,
    /// Bytes that were no TagNet packet or control message.
    pub bad: u64,
}

/// Why the host cannot send yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// No locator yet (the root's labels have not come): an interest needs one to be answered.
    #[error("no locator yet: the host has not been labelled by its tree's root")]
    NoLocator,
    /// The packet cannot be written.
    #[error("{0}")]
    Packet(#[from] PacketError),
}

/// A TagNet host on one tree.
#[derive(Debug)]
pub struct TagHost {
    node: TreeNode,
    last_tick: Option<Instant>,
    /// What it received.
    pub counters: HostCounters,
}

impl TagHost {
    /// Host `name` on `tree`.
    pub fn new(tree: u16, name: &str) -> TagHost {
        TagHost { node: TreeNode::new(tree, name, 1, false), last_tick: None, counters: HostCounters::default() }
    }

    /// Its tree's control plane.
    pub fn tree(&self) -> &TreeNode {
        &self.node
    }

    /// Subscribes to pushes matching any of `descriptors` (the set replaces the last one; empty
    /// withdraws every subscription).
    pub fn subscribe(&mut self, descriptors: Vec<Descriptor>) {
        self.node.set_local(Role::Subscribe, descriptors);
    }

    /// Serves interests whose largest subset is one of `descriptors`.
    pub fn serve(&mut self, descriptors: Vec<Descriptor>) {
        self.node.set_local(Role::Provide, descriptors);
    }

    /// Whether the host is on its tree (it hears its router).
    pub fn attached(&self) -> bool {
        self.node.parent_port().is_some()
    }

    /// Its locator, once labelled.
    pub fn locator(&self) -> Option<Locator> {
        self.node.locator()
    }

    /// Between packets: ticks its tree node when a [`TICK`] has passed.
    pub fn maintain(&mut self, now: Instant) {
        if self.last_tick.is_none_or(|t| now.duration_since(t) >= TICK) {
            self.last_tick = Some(now);
            self.node.tick(now);
        }
    }

    /// Control messages to send (TagNet packet bytes).
    pub fn take_outbox(&mut self) -> Vec<Vec<u8>> {
        self.node.take_messages().into_iter().map(|(_, bytes)| bytes).collect()
    }

    /// A TagNet packet (or control message) that arrived; the packet if it is for the host.
    pub fn receive(&mut self, now: Instant, bytes: &[u8]) -> Option<Received> {
        if packet::is_control(bytes) {
            match Message::parse(bytes) {
                Ok(m) if m.tree() == self.node.tree() => self.node.receive(now, 0, m),
                Ok(_) => self.counters.not_mine += 1,
                Err(_) => self.counters.bad += 1,
            }
            return None;
        }
        let Ok(p) = packet::parse(bytes) else {
            self.counters.bad += 1;
            return None;
        };
        let mine = match (p.address, p.kind) {
            (Address::Descriptor { descriptor, .. }, Kind::Push) => {
                self.node.local(Role::Subscribe).iter().any(|s| s.is_subset_of(&descriptor))
            }
            (Address::Descriptor { descriptor, .. }, Kind::Interest) => {
                self.node.local(Role::Provide).iter().any(|s| s.is_subset_of(&descriptor))
            }
            (Address::Descriptor { .. }, Kind::Data) => false,
            (Address::Locator { tree, label }, _) => self.locator().is_some_and(|l| l.tree == tree && l.label == label),
        };
        if !mine {
            self.counters.not_mine += 1;
            return None;
        }
        self.counters.received += 1;
        Some(Received { kind: p.kind, address: p.address, reply: p.reply, payload: p.payload.to_vec() })
    }

    /// A push of `payload` to every subscriber `descriptor` matches (up to `fanout`).
    ///
    /// # Errors
    /// [`HostError::Packet`] for a payload too long.
    pub fn push(&self, descriptor: Descriptor, fanout: Fanout, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        let address = Address::Descriptor { descriptor, fanout, tree: self.node.tree() };
        self.packet(address, Kind::Push, self.locator(), payload)
    }

    /// An interest by `descriptor` (fan-out 1: the producer of its largest subset), carrying
    /// this host's locator for the data.
    ///
    /// # Errors
    /// [`HostError::NoLocator`] before the host is labelled.
    pub fn interest(&self, descriptor: Descriptor, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        let fanout = Fanout::new(1).map_err(PacketError::Address)?;
        let address = Address::Descriptor { descriptor, fanout, tree: self.node.tree() };
        self.packet(address, Kind::Interest, Some(self.locator().ok_or(HostError::NoLocator)?), payload)
    }

    /// A follow-up interest by locator, to a producer met before.
    ///
    /// # Errors
    /// [`HostError::NoLocator`] before the host is labelled.
    pub fn interest_to(&self, producer: Locator, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        self.packet(producer.address(), Kind::Interest, Some(self.locator().ok_or(HostError::NoLocator)?), payload)
    }

    /// Data for `consumer`, carrying this host's locator (for follow-ups).
    ///
    /// # Errors
    /// [`HostError::NoLocator`] before the host is labelled.
    pub fn data(&self, consumer: Locator, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        self.packet(consumer.address(), Kind::Data, Some(self.locator().ok_or(HostError::NoLocator)?), payload)
    }

    fn packet(&self, address: Address, kind: Kind, reply: Option<Locator>, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        let mut out = Vec::with_capacity(64 + payload.len());
        Packet { address, kind, ttl: DEFAULT_TTL, reply, payload }.encode(&mut out)?;
        Ok(out)
    }
}
