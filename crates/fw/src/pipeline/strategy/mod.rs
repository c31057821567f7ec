//! Forwarding strategies: what decides where an Interest goes, as NFD's `fw::Strategy`.
//!
//! # Overview
//! A strategy is a [`ForwardingStrategy`]: the pipeline calls its *triggers* — after it
//! receives an Interest ([`ForwardingStrategy::after_receive_interest`], with the PIT entry
//! already made), Data ([`ForwardingStrategy::after_receive_data`]) or a Nack
//! ([`ForwardingStrategy::after_receive_nack`]) for one of its entries, before an entry expires
//! ([`ForwardingStrategy::before_expiry`]), when one of its timers fires, on each tick and when a
//! face goes — and the strategy answers through the trigger's *context*: send the Interest to a
//! face, send a probe with a fresh nonce, mark it NonDiscovery, drop it without a Nack, retry a
//! Nacked Interest elsewhere or Nack the downstreams now, attach a prefix announcement to Data,
//! learn or forget a route. The pipeline carries out what the context holds (PIT token, nonce,
//! HopLimit, scope, counters), so a strategy holds only its own decisions and measurements, in
//! its own file. Sans-I/O, like the pipeline: the time comes in, nothing is sent from here.
//!
//! The strategies, each in its file: [`best_route`], [`multicast`], [`access`], [`asf`],
//! [`self_learning`], [`random`]. [`registry`] names them (NFD's names and versions, their
//! parameters) and makes an instance from a name; adding a strategy is its file and one line
//! there. A shard keeps one instance per distinct name (parameters included), so a strategy's
//! measurements are per shard and per instance.
//!
//! An Interest for a name already pending upstream (another consumer's, or a retransmission)
//! is forwarded again or aggregated as the strategy suppresses retransmissions
//! ([`retx_suppression::RetxSuppression`], NFD's): best-route and ASF per entry, with an
//! interval that starts at the forwarder's `retry_interval_ms` (NFD's 10 ms) and doubles at
//! each forwarding up to 250 ms; multicast the same per upstream; access within a fixed
//! 100 ms; random and self-learning not at all.

use hashbrown::HashSet;
use nexthop_lookup::name::NextHop;
use nexthop_wire::{NackReason, NameView};

use crate::face::FaceId;
use crate::pipeline::strategy::retx_suppression::RetxSuppression;
use crate::table::pit::Entry;
use crate::table::shared_fib::ShardFib;

pub mod access;
pub mod asf;
pub mod best_route;
pub mod multicast;
pub mod random;
pub mod registry;
pub mod retx_suppression;
pub mod self_learning;

/// A forwarding strategy: its triggers, after NFD's. Every trigger but
/// [`ForwardingStrategy::after_receive_interest`] does nothing unless the strategy says
/// otherwise.
pub trait ForwardingStrategy: std::fmt::Debug + Send {
    /// Its parameters that differ from the defaults, as name components' text
    /// (`retx-suppression-max~500`): they follow the version in its instance name.
    fn parameters(&self) -> Vec<String> {
        Vec::new()
    }

    /// How it suppresses retransmissions.
    fn retx_suppression(&self) -> RetxSuppression;

    /// An Interest arrived for one of its entries: a new one, or another for a pending one
    /// ([`InterestContext::is_new`]). Where it goes is what the context is told; told nothing,
    /// the downstream gets a Nack NoRoute.
    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>);

    /// Data from `ctx.upstream` satisfies one of its entries (before it goes to the downstreams).
    fn after_receive_data(&mut self, _ctx: &mut DataContext<'_>) {}

    /// Data that no entry wanted came from `upstream` (a strategy may still measure it).
    fn after_receive_unsolicited_data(&mut self, _now_ms: u64, _upstream: FaceId, _name: &NameView<'_>) {}

    /// A Nack from `ctx.upstream` for one of its entries (its out-record already marked). Told
    /// nothing, the downstreams get a Nack once every upstream has Nacked.
    fn after_receive_nack(&mut self, _ctx: &mut NackContext<'_>) {}

    /// One of its entries expires unsatisfied.
    fn before_expiry(&mut self, _now_ms: u64, _entry: &Entry) {}

    /// Its timer for an entry fired ([`ForwardingStrategy::tick`] handed it back), the entry still
    /// pending: the Interest goes where the context is told (a new entry's rules do not apply).
    fn on_timer(&mut self, _ctx: &mut InterestContext<'_>, _timer: &Timer) {}

    /// The time, every tick: the timers due go into `fired`; measurements lapse.
    fn tick(&mut self, _now_ms: u64, _fired: &mut Vec<Timer>) {}

    /// A face has gone.
    fn face_down(&mut self, _face: FaceId) {}
}

/// A strategy instance made from its name's parameters, or why it cannot be.
pub type Made = Result<Box<dyn ForwardingStrategy>, String>;

/// A strategy's timer for a PIT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    /// When it fires.
    pub due_ms: u64,
    /// The PIT entry (slot and generation: a later entry in the slot is another Interest).
    pub slot: u32,
    /// The entry's generation.
    pub generation: u32,
    /// The downstream whose Interest it is.
    pub downstream: FaceId,
    /// The upstream it waits on.
    pub upstream: FaceId,
}

/// A PIT entry's FIB route.
#[derive(Debug, Clone, Copy)]
pub struct RouteView<'a> {
    /// Its next hops.
    pub hops: &'a [NextHop],
    routed: NameView<'a>,
    fib: &'a ShardFib,
}

impl<'a> RouteView<'a> {
    /// The route's next hops, found for `routed` (the forwarding hint's delegation or the
    /// Interest's name) in `fib`.
    pub fn new(hops: &'a [NextHop], routed: NameView<'a>, fib: &'a ShardFib) -> Self {
        RouteView { hops, routed, fib }
    }

    /// The route's own prefix (TLV-VALUE): the namespace a measuring strategy keeps its
    /// measurements under.
    pub fn namespace(&self) -> Vec<u8> {
        let n = self.fib.route_prefix_len(&self.routed).unwrap_or(self.routed.len());
        self.routed.prefix(n).value().to_vec()
    }
}

/// The faces an Interest may be sent to, as the pipeline sees them.
#[derive(Debug, Clone, Copy)]
pub struct Faces<'a> {
    /// The face left out: where the Interest came from (none when that link is ad hoc, where
    /// an Interest may go back out on the face it came from).
    pub excluded: Option<FaceId>,
    /// Only faces on this host (`/localhost`, or `/localhop` from another host).
    pub local_only: bool,
    /// The faces that reach another host.
    pub nonlocal: &'a HashSet<FaceId>,
}

impl Faces<'_> {
    /// Whether the Interest may go to `face`.
    pub fn eligible(&self, face: FaceId) -> bool {
        self.excluded != Some(face) && !(self.local_only && self.nonlocal.contains(&face))
    }
}

/// Random draws for strategies that pick at random (xorshift64*: they need to spread, not to be
/// secret). The shard's nonces come from the same sequence.
#[derive(Debug, Clone)]
pub struct Draws(u64);

impl Draws {
    /// A sequence that starts from `seed`.
    pub fn new(seed: u64) -> Self {
        Draws(seed)
    }

    /// The next draw, 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The next draw, 32 bits (the high half of [`Draws::next_u64`]'s).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
}

/// What a strategy decided for an Interest, besides the faces it goes to.
#[derive(Debug, Default, Clone, Copy)]
pub struct Decision {
    /// A copy with a fresh nonce to this face too (ASF's probe).
    pub probe: Option<FaceId>,
    /// The Interest goes out marked NonDiscovery (it follows a known route).
    pub non_discovery: bool,
    /// With no face to go to, the Interest is dropped without a Nack (counted
    /// `no-eligible-hop`) instead of Nacked NoRoute.
    pub silent: bool,
}

/// What [`ForwardingStrategy::after_receive_interest`] and [`ForwardingStrategy::on_timer`] see,
/// and what they answer with.
#[derive(Debug)]
pub struct InterestContext<'a> {
    /// The time.
    pub now_ms: u64,
    /// The Interest's name.
    pub name: NameView<'a>,
    /// Its PIT entry (a new one has no out-records yet).
    pub entry: &'a Entry,
    /// Where the entry is, and its generation (for a timer).
    pub slot: u32,
    /// The entry's generation.
    pub generation: u32,
    /// Whether the entry is new; else this is another Interest for it (a retransmission or
    /// another consumer's) that retransmission suppression let through.
    pub is_new: bool,
    /// The face it came from.
    pub downstream: FaceId,
    /// Whether it came marked NonDiscovery.
    pub non_discovery: bool,
    /// Its FIB route (by forwarding hint or name), if there is one.
    pub route: Option<RouteView<'a>>,
    /// The faces it may go to.
    pub faces: Faces<'a>,
    draws: &'a mut Draws,
    sends: &'a mut Vec<FaceId>,
    decision: Decision,
}

impl<'a> InterestContext<'a> {
    /// A context whose answers go into `sends` (emptied first).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        now_ms: u64,
        name: NameView<'a>,
        entry: &'a Entry,
        (slot, generation): (u32, u32),
        is_new: bool,
        (downstream, non_discovery): (FaceId, bool),
        route: Option<RouteView<'a>>,
        faces: Faces<'a>,
        draws: &'a mut Draws,
        sends: &'a mut Vec<FaceId>,
    ) -> Self {
        sends.clear();
        InterestContext {
            now_ms,
            name,
            entry,
            slot,
            generation,
            is_new,
            downstream,
            non_discovery,
            route,
            faces,
            draws,
            sends,
            decision: Decision::default(),
        }
    }

    /// The route's next hops the Interest may go to.
    pub fn eligible_hops(&self) -> impl Iterator<Item = &'a NextHop> + Clone + '_ {
        let hops: &'a [NextHop] = self.route.map_or(&[], |r| r.hops);
        hops.iter().filter(|h| self.faces.eligible(u64::from(h.face)))
    }

    /// Sends the Interest to `face` (once).
    pub fn send_to(&mut self, face: FaceId) {
        if !self.sends.contains(&face) {
            self.sends.push(face);
        }
    }

    /// Sends a copy with a fresh nonce to `face` too.
    pub fn probe(&mut self, face: FaceId) {
        self.decision.probe = Some(face);
    }

    /// Marks the copies it sends NonDiscovery.
    pub fn mark_non_discovery(&mut self) {
        self.decision.non_discovery = true;
    }

    /// With no face to go to, drop it without a Nack.
    pub fn drop_silently(&mut self) {
        self.decision.silent = true;
    }

    /// A random draw.
    pub fn draw(&mut self) -> u32 {
        self.draws.next_u32()
    }

    /// What was decided besides the faces.
    pub fn decision(&self) -> Decision {
        self.decision
    }
}

/// A prefix announcement the RIB holds, kept for the self-learning strategy.
#[derive(Debug, Clone)]
pub struct Announcement {
    /// The face its route goes to.
    pub face: FaceId,
    /// The announcement (a Data packet).
    pub wire: Vec<u8>,
    /// When it lapses.
    pub expires_ms: u64,
}

/// What [`ForwardingStrategy::after_receive_data`] sees, and what it answers with.
#[derive(Debug)]
pub struct DataContext<'a> {
    /// The time.
    pub now_ms: u64,
    /// The face the Data came from.
    pub upstream: FaceId,
    /// The Data's name.
    pub name: NameView<'a>,
    /// The entry it satisfies (removed from the PIT).
    pub entry: &'a Entry,
    /// The prefix announcement the Data carried, if any.
    pub prefix_announcement: Option<&'a [u8]>,
    /// The prefix announcements the RIB holds, by prefix (TLV-VALUE).
    pub announcements: &'a hashbrown::HashMap<Box<[u8]>, Announcement>,
    /// The faces that reach another host.
    pub nonlocal: &'a HashSet<FaceId>,
    /// The announcement to attach to the Data for its downstreams.
    pub attach: Option<Vec<u8>>,
    /// A route to learn through `upstream`, from this announcement (handed to the RIB).
    pub learn: Option<Vec<u8>>,
}

/// What [`ForwardingStrategy::after_receive_nack`] sees, and what it answers with.
#[derive(Debug)]
pub struct NackContext<'a> {
    /// The time.
    pub now_ms: u64,
    /// The face the Nack came from.
    pub upstream: FaceId,
    /// Its reason.
    pub reason: NackReason,
    /// The Interest's name.
    pub name: NameView<'a>,
    /// The entry (the upstream's out-record marked with the Nack).
    pub entry: &'a Entry,
    /// The faces the Interest came from (ad hoc ones left out: an Interest may go back there).
    pub downstreams: &'a [FaceId],
    /// The route of the Interest's name, if there is one.
    pub route: Option<&'a [NextHop]>,
    /// Send the Interest to this face instead.
    pub retry: Option<FaceId>,
    /// Nack every downstream now, with the Nack's reason.
    pub nack_now: bool,
    /// Forget the route to the name learned through `upstream` (asked of the RIB).
    pub unlearn: bool,
}

/// A strategy that takes no parameters: `parameters` must be empty (`kind` names it in the error).
///
/// # Errors
/// Any parameter.
pub fn no_parameters(kind: &str, parameters: &[(&str, &str)]) -> Result<(), String> {
    match parameters {
        [] => Ok(()),
        _ => Err(format!("{kind} takes no parameters")),
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::registry::StrategyName;
    use super::*;
    use crate::table::fib::Fib;
    use crate::table::pit::{OutRecord, Pit};
    use crate::table::strategy_choice::StrategyId;

    fn hop(face: u32, cost: u32) -> NextHop {
        NextHop { face, cost }
    }

    fn out(face: FaceId, sent_ms: u64) -> OutRecord {
        OutRecord { face, nonce: [0; 4], sent_ms, nack: None, non_discovery: false, retx_interval_ms: 0 }
    }

    /// Where `strategy` sends an Interest from `downstream` over `hops`, its entry having gone to
    /// `used` (new when none), with `draws`.
    fn sends(strategy: &str, hops: &[NextHop], downstream: FaceId, used: &[OutRecord], draws: &mut Draws) -> Vec<FaceId> {
        let mut pit = Pit::new(4);
        let slot = pit.insert(b"\x08\x01a", false, false, false, StrategyId(0)).unwrap();
        pit.get_mut(slot).unwrap().out_records = used.to_vec();
        let fib = ShardFib::from(Fib::new(Default::default()));
        let name = Name::from_uri("/a").unwrap();
        let route = RouteView::new(hops, name.as_view(), &fib);
        let nonlocal = HashSet::new();
        let faces = Faces { excluded: Some(downstream), local_only: false, nonlocal: &nonlocal };
        let mut out = Vec::new();
        let entry = pit.get(slot).unwrap();
        let mut ctx = InterestContext::new(
            0,
            name.as_view(),
            entry,
            (slot, 0),
            used.is_empty(),
            (downstream, false),
            Some(route),
            faces,
            draws,
            &mut out,
        );
        StrategyName::from_text(strategy).unwrap().instantiate(1).after_receive_interest(&mut ctx);
        out
    }

    #[test]
    fn best_route_picks_the_cheapest_then_the_unused_then_the_oldest() {
        let d = &mut Draws::new(1);
        let hops = [hop(300, 10), hop(301, 5), hop(302, 1)];
        assert_eq!(sends("best-route", &hops, 302, &[], d), [301], "cheapest, not where it came from");
        assert_eq!(sends("multicast", &hops, 302, &[], d), [300, 301]);
        let two = [hop(300, 10), hop(301, 5)];
        assert_eq!(sends("best-route", &two, 1, &[out(301, 10)], d), [300], "a retransmission: the cheapest unused");
        assert_eq!(sends("best-route", &two, 1, &[out(301, 10), out(300, 20)], d), [301], "else the one used longest ago");
    }

    #[test]
    fn random_picks_one_eligible_next_hop_by_the_draw() {
        let hops: Vec<NextHop> = [300u32, 301, 302].iter().map(|&f| hop(f, 10)).collect();
        let mut picked = std::collections::BTreeMap::new();
        let mut d = Draws::new(7);
        for _ in 0..300 {
            let v = sends("random", &hops, 302, &[], &mut d);
            assert_eq!(v.len(), 1);
            *picked.entry(v[0]).or_insert(0) += 1;
        }
        let picked: Vec<(FaceId, i32)> = picked.into_iter().collect();
        assert_eq!(picked.iter().map(|p| p.0).collect::<Vec<_>>(), [300, 301], "never where it came from");
        assert!(picked.iter().all(|p| p.1 > 100), "both drawn: {picked:?}");
        assert!(sends("random", &hops[2..], 302, &[], &mut d).is_empty(), "no eligible next hop: none");
    }
}
