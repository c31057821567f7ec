//! The Concise switch's pipeline: a batch of Ethernet frames in, one [`Decision`] per frame out;
//! frames are forwarded unmodified.
//!
//! # Overview
//! For each frame (with the port it came in on):
//! - Shorter than an Ethernet header: dropped, [`DropReason::Truncated`].
//! - A group destination (broadcast or multicast: the I/G bit): flooded out of every flood port
//!   (the spanning tree the controller configured) but the one it came in on; one that came in
//!   on a port off the tree is dropped ([`DropReason::OffTree`]), so floods never loop.
//! - A unicast destination is the flat name: the FIB ([`MacFib`]; the Concise FIB is the
//!   Othello query structure) gives the egress port, in two memory reads for Othello
//!   ([`OthelloQuery::lookup_checked`]; the batch's destinations, then its sources, are looked
//!   up in one pass). With checksum bits (the paper's section VII-A), a name outside the FIB is
//!   recognised with probability 1 − 2^−r and dropped where it enters the network
//!   ([`DropReason::UnknownName`]); an answer past the last port is dropped too
//!   ([`DropReason::NoSuchPort`]), and one back out of the port it came in on
//!   ([`DropReason::Hairpin`]): never looped.
//! - Hosts are learned as an SDN controller learns them: a frame whose source address is not
//!   in the FIB at the port it came in on, on an edge port, is reported
//!   ([`L2Switch::take_packet_ins`], at most once per address until taken) for the controller
//!   to install (or move) it. The frame itself is still forwarded by its destination.
//!
//! The FIB changes only between batches: [`L2Switch::apply`] patches the query structure in
//! place with a delta of the control structure ([`Othello::take_delta`]) or replaces it. The
//! pipeline runs on any [`MacFib`], so that other tables can be measured in the same switch.
//!
//! [`Othello::take_delta`]: nexthop_lookup::flat::Othello::take_delta

use hashbrown::HashSet;
use nexthop_lookup::flat::{Cell, Delta, FlatError, OthelloQuery, ReferenceFlat};

use crate::frames::Frames;

/// The table a switch forwards by: destination address → port, `None` for an address it
/// knows it does not hold.
pub trait MacFib {
    /// The answer for each of `names`, appended to `out` in order (`&mut`: a table may keep
    /// scratch space between batches).
    fn lookup_macs(&mut self, names: &[[u8; 6]], out: &mut Vec<Option<u32>>);
}

/// The Concise FIB: two reads and the checksum bits' test per name.
impl<C: Cell> MacFib for OthelloQuery<C> {
    fn lookup_macs(&mut self, names: &[[u8; 6]], out: &mut Vec<Option<u32>>) {
        out.extend(names.iter().map(|n| self.lookup_checked(n)));
    }
}

/// The reference map: the oracle the switch is tested against.
impl MacFib for ReferenceFlat {
    fn lookup_macs(&mut self, names: &[[u8; 6]], out: &mut Vec<Option<u32>>) {
        out.extend(names.iter().map(|n| self.get(n)));
    }
}

/// Applies a change of the control structure to a query structure: a patch in place, or the
/// new structure.
///
/// # Errors
/// A patch of another structure, or not of this version: nothing changes.
pub fn apply_delta<C: Cell>(fib: &mut OthelloQuery<C>, delta: Delta<C>) -> Result<(), FlatError> {
    match delta {
        Delta::Patch(p) => fib.apply(&p),
        Delta::Rebuilt(q) => {
            *fib = q;
            Ok(())
        }
    }
}

/// A switch port: its place in the switch's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchPort(pub u16);

/// What a port is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRole {
    /// On the flood tree: group frames go out of it and are taken in from it.
    pub flood: bool,
    /// Hosts are behind it (not another switch): their source addresses are learned.
    pub edge: bool,
}

/// Roles given for another number of ports than the switch has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("roles for {given} ports; the switch has {have}")]
pub struct PortCount {
    /// The switch's ports.
    pub have: usize,
    /// The roles given.
    pub given: usize,
}

/// Why a frame is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Shorter than an Ethernet header.
    Truncated,
    /// A unicast destination not in the FIB (its checksum bits do not match).
    UnknownName,
    /// The FIB's answer is not a port of this switch.
    NoSuchPort,
    /// The FIB says the port it came in on.
    Hairpin,
    /// A group frame in on a port off the flood tree.
    OffTree,
    /// Came in on a port the switch does not have.
    BadIngress,
}

impl DropReason {
    /// Every reason, in the order of [`SwitchCounters::drops`].
    pub const ALL: [DropReason; 6] = [
        DropReason::Truncated,
        DropReason::UnknownName,
        DropReason::NoSuchPort,
        DropReason::Hairpin,
        DropReason::OffTree,
        DropReason::BadIngress,
    ];

    /// The reason's name in counters and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Truncated => "truncated",
            DropReason::UnknownName => "unknown-name",
            DropReason::NoSuchPort => "no-such-port",
            DropReason::Hairpin => "hairpin",
            DropReason::OffTree => "off-tree",
            DropReason::BadIngress => "bad-ingress",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What becomes of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Out of this port.
    Forward(SwitchPort),
    /// Out of every flood port but the one it came in on.
    Flood,
    /// Dropped.
    Drop(DropReason),
}

/// The switch's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchCounters {
    /// Unicast frames forwarded.
    pub forwarded: u64,
    /// Group frames flooded.
    pub flooded: u64,
    /// Frames dropped, by [`DropReason`] (in the order of [`DropReason::ALL`]).
    pub drops: [u64; DropReason::ALL.len()],
    /// Source addresses reported to the controller.
    pub packet_ins: u64,
}

impl SwitchCounters {
    /// Frames dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()]
    }
}

/// A host the switch saw: its address, on a port the FIB does not give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketIn {
    /// The host's Ethernet address.
    pub mac: [u8; 6],
    /// The edge port it sent from.
    pub port: SwitchPort,
}

/// The most source addresses waiting for the controller; beyond, new ones wait for the next
/// frame after [`L2Switch::take_packet_ins`].
const MAX_PACKET_INS: usize = 1024;

/// The Concise switch's pipeline (see the module overview), forwarding by the FIB `F`.
#[derive(Debug)]
pub struct L2Switch<F> {
    fib: F,
    ports: Vec<PortRole>,
    counters: SwitchCounters,
    reported: HashSet<PacketIn>,
    packet_ins: Vec<PacketIn>,
    /// Per-batch scratch, kept: each frame's addresses, the names looked up, their answers.
    parsed: Vec<Option<([u8; 6], [u8; 6])>>,
    names: Vec<[u8; 6]>,
    answers: Vec<Option<u32>>,
}

const GROUP_BIT: u8 = 0x01;

/// The destination and source Ethernet addresses of a frame, if it has a header.
fn addresses(frame: &[u8]) -> Option<([u8; 6], [u8; 6])> {
    let dst = frame.get(..6)?.try_into().ok()?;
    let src = frame.get(6..12)?.try_into().ok()?;
    (frame.len() >= 14).then_some((dst, src))
}

impl<F: MacFib> L2Switch<F> {
    /// A switch with these ports (by [`SwitchPort`] number) forwarding by `fib` (actions:
    /// port numbers).
    pub fn new(fib: F, ports: Vec<PortRole>) -> L2Switch<F> {
        L2Switch {
            fib,
            ports,
            counters: SwitchCounters::default(),
            reported: HashSet::new(),
            packet_ins: Vec::new(),
            parsed: Vec::new(),
            names: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// The ports' roles.
    pub fn ports(&self) -> &[PortRole] {
        &self.ports
    }

    /// Gives the ports new roles (a controller's flood tree), one per port.
    ///
    /// # Errors
    /// Not one role per port: nothing changes.
    pub fn set_ports(&mut self, roles: &[PortRole]) -> Result<(), PortCount> {
        if roles.len() != self.ports.len() {
            return Err(PortCount { have: self.ports.len(), given: roles.len() });
        }
        self.ports.copy_from_slice(roles);
        Ok(())
    }

    /// The FIB.
    pub fn fib(&self) -> &F {
        &self.fib
    }

    /// The FIB, to change between batches.
    pub fn fib_mut(&mut self) -> &mut F {
        &mut self.fib
    }

    /// The counters so far.
    pub fn counters(&self) -> &SwitchCounters {
        &self.counters
    }

    /// The source addresses reported since the last call (see the module overview).
    pub fn take_packet_ins(&mut self) -> Vec<PacketIn> {
        self.reported.clear();
        std::mem::take(&mut self.packet_ins)
    }

    /// One decision per frame of `frames`, each of which came in on the port `ingress` gives;
    /// `decisions` is cleared first.
    pub fn switch_batch<B: Frames + ?Sized>(&mut self, frames: &B, ingress: impl Fn(usize) -> SwitchPort, decisions: &mut Vec<Decision>) {
        decisions.clear();
        self.names.clear();
        // Destination names first, then source names: one pass of the FIB for both.
        let mut parsed = std::mem::take(&mut self.parsed);
        parsed.clear();
        parsed.extend((0..frames.count()).map(|i| addresses(frames.bytes(i))));
        self.names.extend(parsed.iter().flatten().map(|a| a.0));
        let dsts = self.names.len();
        self.names.extend(parsed.iter().flatten().map(|a| a.1));
        self.answers.clear();
        self.fib.lookup_macs(&self.names, &mut self.answers);
        let (mut d, mut s) = (0, dsts);
        for (i, a) in parsed.iter().enumerate() {
            let port = ingress(i);
            let decision = match a {
                None => Decision::Drop(DropReason::Truncated),
                Some((dst, src)) => {
                    let (to, from) = (self.answers[d], self.answers[s]);
                    d += 1;
                    s += 1;
                    self.decide(port, dst, src, to, from)
                }
            };
            match decision {
                Decision::Forward(_) => self.counters.forwarded += 1,
                Decision::Flood => self.counters.flooded += 1,
                Decision::Drop(r) => self.counters.drops[r.index()] += 1,
            }
            decisions.push(decision);
        }
        self.parsed = parsed;
    }

    fn decide(&mut self, port: SwitchPort, dst: &[u8; 6], src: &[u8; 6], to: Option<u32>, from: Option<u32>) -> Decision {
        let Some(role) = self.ports.get(usize::from(port.0)).copied() else {
            return Decision::Drop(DropReason::BadIngress);
        };
        if role.edge && src[0] & GROUP_BIT == 0 && from != Some(u32::from(port.0)) {
            self.report(PacketIn { mac: *src, port });
        }
        if dst[0] & GROUP_BIT != 0 {
            return if role.flood { Decision::Flood } else { Decision::Drop(DropReason::OffTree) };
        }
        match to {
            None => Decision::Drop(DropReason::UnknownName),
            Some(p) if p as usize >= self.ports.len() => Decision::Drop(DropReason::NoSuchPort),
            Some(p) if p == u32::from(port.0) => Decision::Drop(DropReason::Hairpin),
            Some(p) => Decision::Forward(SwitchPort(p as u16)),
        }
    }

    fn report(&mut self, p: PacketIn) {
        if self.packet_ins.len() < MAX_PACKET_INS && self.reported.insert(p) {
            self.packet_ins.push(p);
            self.counters.packet_ins += 1;
        }
    }

    /// The ports a flooded frame from `ingress` goes out of.
    pub fn flood_ports(&self, ingress: SwitchPort) -> impl Iterator<Item = SwitchPort> + '_ {
        self.ports.iter().enumerate().filter(move |(i, r)| r.flood && *i != usize::from(ingress.0)).map(|(i, _)| SwitchPort(i as u16))
    }
}

impl<C: Cell> L2Switch<OthelloQuery<C>> {
    /// Applies a change of the control structure ([`apply_delta`]).
    ///
    /// # Errors
    /// A patch of another structure, or not of this version: nothing changes.
    pub fn apply(&mut self, delta: Delta<C>) -> Result<(), FlatError> {
        apply_delta(&mut self.fib, delta)
    }
}

#[cfg(test)]
mod tests {
    use nexthop_lookup::flat::{Othello, OthelloConfig, ReferenceFlat};
    use proptest::prelude::*;

    use super::*;

    const EDGE: PortRole = PortRole { flood: true, edge: true };

    fn mac(i: u32) -> [u8; 6] {
        let b = i.to_be_bytes();
        [0x02, 0, b[0], b[1], b[2], b[3]]
    }

    fn frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[..6].copy_from_slice(&dst);
        f[6..12].copy_from_slice(&src);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f
    }

    /// Hosts 0..n, host i behind port i % ports.
    fn switch(n: u32, ports: usize) -> (L2Switch<OthelloQuery<u16>>, Othello<u16>) {
        let mut cfg = OthelloConfig::new(6);
        cfg.checksum_bits = 10;
        let names: Vec<[u8; 6]> = (0..n).map(mac).collect();
        let mut o = Othello::<u16>::construct(cfg, names.iter().enumerate().map(|(i, m)| (&m[..], (i % ports) as u32))).unwrap();
        let _ = o.take_delta(); // the construction's: the switch starts from its query structure
        (L2Switch::new(o.query(), vec![EDGE; ports]), o)
    }

    #[test]
    fn unicast_goes_where_the_fib_says_and_groups_flood() {
        let (mut sw, _) = switch(100, 4);
        let frames = [frame(mac(5), mac(4)), frame([0xff; 6], mac(4)), frame(mac(8), mac(4)), vec![0; 10]];
        let mut d = Vec::new();
        sw.switch_batch(&frames[..], |_| SwitchPort(0), &mut d);
        assert_eq!(
            d,
            [Decision::Forward(SwitchPort(1)), Decision::Flood, Decision::Drop(DropReason::Hairpin), Decision::Drop(DropReason::Truncated)]
        );
        assert_eq!(sw.flood_ports(SwitchPort(0)).collect::<Vec<_>>(), [SwitchPort(1), SwitchPort(2), SwitchPort(3)]);
        let c = sw.counters();
        assert_eq!((c.forwarded, c.flooded, c.dropped(DropReason::Hairpin), c.dropped(DropReason::Truncated)), (1, 1, 1, 1));
    }

    #[test]
    fn hosts_off_their_port_are_reported_once_until_taken() {
        let (mut sw, _) = switch(100, 4);
        // Host 5 is behind port 1 in the FIB; it sends from port 2 (it moved), twice.
        let frames = [frame(mac(0), mac(5)), frame(mac(0), mac(5)), frame(mac(0), mac(6))];
        let mut d = Vec::new();
        sw.switch_batch(&frames[..], |_| SwitchPort(2), &mut d);
        assert_eq!(sw.take_packet_ins(), [PacketIn { mac: mac(5), port: SwitchPort(2) }], "host 6 is behind port 2 already");
        sw.switch_batch(&frames[..1], |_| SwitchPort(2), &mut d);
        assert_eq!(sw.take_packet_ins().len(), 1, "reported again once taken");
        assert_eq!(sw.counters().packet_ins, 2);
    }

    #[test]
    fn off_tree_ports_take_no_floods_and_bad_ingress_is_counted() {
        let (_, o) = switch(10, 2);
        let mut sw = L2Switch::new(o.query(), vec![EDGE, PortRole { flood: false, edge: false }]);
        let frames = [frame([0xff; 6], mac(1)), frame(mac(0), mac(1))];
        let mut d = Vec::new();
        sw.switch_batch(&frames[..], |_| SwitchPort(1), &mut d);
        assert_eq!(d, [Decision::Drop(DropReason::OffTree), Decision::Forward(SwitchPort(0))]);
        assert_eq!(sw.flood_ports(SwitchPort(0)).count(), 0, "the only other port is off the tree");
        sw.switch_batch(&frames[..1], |_| SwitchPort(9), &mut d);
        assert_eq!(d, [Decision::Drop(DropReason::BadIngress)]);
        assert!(sw.take_packet_ins().is_empty(), "a core port learns nothing");
    }

    #[test]
    fn deltas_move_hosts_and_a_foreign_patch_changes_nothing() {
        let (mut sw, mut o) = switch(1000, 4);
        o.alter(&mac(7), 2).unwrap();
        let delta = o.take_delta();
        assert!(matches!(delta, Delta::Patch(_)), "an alter patches in place");
        sw.apply(delta).unwrap();
        let mut d = Vec::new();
        sw.switch_batch(&[frame(mac(7), mac(0))][..], |_| SwitchPort(0), &mut d);
        assert_eq!(d, [Decision::Forward(SwitchPort(2))]);
        let (_, mut other) = switch(50, 4);
        other.alter(&mac(3), 0).unwrap();
        let before = sw.fib().to_bytes();
        let Delta::Patch(p) = other.take_delta() else { panic!("an alter is a patch") };
        assert_eq!(sw.apply(Delta::Patch(p)), Err(FlatError::ForeignPatch), "a patch of another structure");
        assert_eq!(sw.fib().to_bytes(), before);
    }

    proptest! {
        /// Against the reference map: every known destination goes to its port (or is a
        /// hairpin), and almost no unknown one passes the checksum.
        #[test]
        fn forwards_as_the_reference_says(n in 1u32..400, probes in proptest::collection::vec(0u32..800, 1..64), ingress in 0u16..4) {
            let (mut sw, o) = switch(n, 4);
            let mut reference = ReferenceFlat::new();
            for (k, v) in o.iter() {
                reference.add(k, v).unwrap();
            }
            let frames: Vec<Vec<u8>> = probes.iter().map(|&p| frame(mac(p), mac(0))).collect();
            let mut d = Vec::new();
            sw.switch_batch(&frames[..], |_| SwitchPort(ingress), &mut d);
            let mut passed_unknown = 0;
            for (&p, dec) in probes.iter().zip(&d) {
                match reference.get(&mac(p)) {
                    Some(port) if port == u32::from(ingress) => prop_assert_eq!(*dec, Decision::Drop(DropReason::Hairpin)),
                    Some(port) => prop_assert_eq!(*dec, Decision::Forward(SwitchPort(port as u16))),
                    None => passed_unknown += u32::from(*dec != Decision::Drop(DropReason::UnknownName)),
                }
            }
            prop_assert!(passed_unknown <= 3, "{passed_unknown} unknown names passed 10 checksum bits");
        }

        /// The switch on the Concise FIB decides as the same switch on the reference map for
        /// every frame whose addresses are in the FIB (floods, hairpins and packet-ins
        /// included).
        #[test]
        fn decides_as_on_the_reference_map(n in 2u32..300, pairs in proptest::collection::vec((0u32..300, 0u32..300, 0u16..4), 1..64)) {
            let (mut sw, o) = switch(n, 4);
            let mut reference = ReferenceFlat::new();
            for (k, v) in o.iter() {
                reference.add(k, v).unwrap();
            }
            let mut oracle = L2Switch::new(reference, vec![EDGE; 4]);
            let frames: Vec<Vec<u8>> = pairs.iter().map(|&(d, s, _)| frame(if d == 0 { [0xff; 6] } else { mac(d % n) }, mac(s % n))).collect();
            let (mut got, mut want) = (Vec::new(), Vec::new());
            sw.switch_batch(&frames[..], |i| SwitchPort(pairs[i].2), &mut got);
            oracle.switch_batch(&frames[..], |i| SwitchPort(pairs[i].2), &mut want);
            prop_assert_eq!(got, want);
            prop_assert_eq!(sw.take_packet_ins(), oracle.take_packet_ins());
            prop_assert_eq!(sw.counters(), oracle.counters());
        }

        /// Any bytes: a decision each, never a panic.
        #[test]
        fn any_bytes(frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 0..32)) {
            let (mut sw, _) = switch(20, 3);
            let mut d = Vec::new();
            sw.switch_batch(&frames[..], |i| SwitchPort((i % 5) as u16), &mut d);
            prop_assert_eq!(d.len(), frames.len());
        }
    }
}
