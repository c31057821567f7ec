//! The Interest pipeline (NFD's incoming-Interest and outgoing-Interest pipelines, NDN-DPDK's
//! fwd-interest): loop detection, the content store, the FIB, the strategy's choice of
//! upstreams, the PIT entry, and the Interest sent out with this shard's PIT token.

use nexthop_cs::{Lookup, Request};
use nexthop_wire::{Emit, InterestView, NackReason};

use super::{route_of, stays_local, Parked, SendAs, Shard, MAX_PARKED};
use crate::counters::DropReason;
use crate::face::{FaceId, FaceScope, LinkType};
use crate::lp::encode::LpFields;
use crate::lp::packet::LinkInfo;
use crate::pipeline::outbox::Outbox;
use crate::pipeline::strategy::retx_suppression::RetxSuppression;
use crate::pipeline::strategy::{Decision, Faces, InterestContext, RouteView, Timer};
use crate::table::pit::{InRecord, OutRecord};
use crate::table::pit_token::{PitToken, TokenBuf};
use crate::table::strategy_choice::StrategyId;

impl Shard {
    pub(super) fn on_interest(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        interest: &InterestView<'_>,
        out: &mut Outbox,
    ) {
        self.counters.interests_in.inc();
        self.process_interest(now_ms, face, scope, link, interest, out);
    }

    pub(super) fn process_interest(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        interest: &InterestView<'_>,
        out: &mut Outbox,
    ) {
        if interest.hop_limit() == Some(0) {
            self.counters.drops.count(DropReason::HopLimit);
            return;
        }
        let no_hop_limit = self.cfg.default_hop_limit > 0 && interest.hop_limit().is_none();
        let Some(nonce) = interest.nonce().filter(|_| !no_hop_limit) else {
            // NDN packet format 0.3: a forwarder adds a Nonce to an Interest that has none.
            // NFD's default_hop_limit: a HopLimit to one that has none, which it leaves with
            // (given one more here, since leaving takes one off; 255 leaves as 254).
            let mut owned = interest.to_owned();
            owned.nonce = owned.nonce.or_else(|| Some(self.next_nonce()));
            if no_hop_limit {
                owned.hop_limit = Some(self.cfg.default_hop_limit.saturating_add(1));
            }
            let wire = owned.to_bytes();
            if let Ok(view) = InterestView::decode(&wire) {
                self.process_interest(now_ms, face, scope, link, &view, out);
            }
            return;
        };
        let name = interest.name();
        if self.dead_nonces.contains(name.value(), nonce) {
            self.counters.drops.count(DropReason::Loop);
            self.nack_back(face, link, NackReason::Duplicate, interest.wire(), out);
            return;
        }
        if self.in_producer_region(interest) {
            // Arrived (NFD's network region table): on by name, without the hint.
            let wire = interest.without_forwarding_hint();
            if let Ok(view) = InterestView::decode(&wire) {
                self.process_interest(now_ms, face, scope, link, &view, out);
            }
            return;
        }
        let (cbp, mbf) = (interest.can_be_prefix(), interest.must_be_fresh());
        match self.pit.find(name.value(), cbp, mbf) {
            None => self.new_interest(now_ms, face, scope, link, interest, nonce, out),
            Some(slot) => self.pending_interest(now_ms, face, scope, link, interest, nonce, slot, out),
        }
    }

    /// Whether `interest` has a forwarding hint that names a region this forwarder is in (a
    /// delegation that is one of the regions or a prefix of one, as NFD tests it).
    fn in_producer_region(&self, interest: &InterestView<'_>) -> bool {
        !self.cfg.network_regions.is_empty()
            && interest.forwarding_hint().any(|d| self.cfg.network_regions.iter().any(|r| d.is_prefix_of(&r.as_view())))
    }

    /// Asks the strategy of the entry in `slot` where the Interest from `face` goes (after it
    /// arrived, or, with `timer`, when the strategy's timer fired): `self.hops` gets the faces.
    /// NextHopFaceId from a local face overrides the strategy; a face the Interest's scope
    /// does not allow is left out whatever the strategy said.
    #[allow(clippy::too_many_arguments)]
    fn consult_strategy(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        interest: &InterestView<'_>,
        slot: u32,
        is_new: bool,
        timer: Option<&Timer>,
    ) -> Decision {
        let mut hops = std::mem::take(&mut self.hops);
        hops.clear();
        let local_only = !self.nonlocal.is_empty() && stays_local(&interest.name(), scope);
        let decision = match (link.next_hop_face_id, scope, timer) {
            (Some(to), FaceScope::Local, None) => {
                hops.push(to);
                Decision::default()
            }
            _ => {
                let Shard { fib, pit, instances, nonlocal, links, draws, .. } = self;
                let (Some(entry), Some(generation)) = (pit.get(slot), pit.generation(slot)) else {
                    self.hops = hops;
                    return Decision::default();
                };
                // An Interest from an ad hoc face may go back out on it (as NFD's).
                let excluded = (links.get(&face) != Some(&LinkType::AdHoc)).then_some(face);
                let faces = Faces { excluded, local_only, nonlocal };
                let route = route_of(fib, interest);
                let view = route.as_ref().map(|(routed, r)| RouteView::new(r.hops(), *routed, fib));
                let name = interest.name();
                let strategy = &mut *instances[entry.strategy.0 as usize].1;
                let at = (face, link.non_discovery);
                let mut ctx = InterestContext::new(now_ms, name, entry, (slot, generation), is_new, at, view, faces, draws, &mut hops);
                match timer {
                    None => strategy.after_receive_interest(&mut ctx),
                    Some(t) => strategy.on_timer(&mut ctx, t),
                }
                ctx.decision()
            }
        };
        if local_only {
            hops.retain(|h| !self.nonlocal.contains(h));
        }
        self.hops = hops;
        decision
    }

    /// A strategy's timer fired: if its entry is still pending, the strategy says where the
    /// Interest goes now (with the downstream's nonce).
    pub(super) fn strategy_timer(&mut self, now_ms: u64, id: StrategyId, t: &Timer, out: &mut Outbox) {
        let Some(entry) = self.pit.get(t.slot).filter(|e| self.pit.generation(t.slot) == Some(t.generation) && e.strategy == id) else {
            return;
        };
        let Some(record) = entry.in_records.iter().find(|r| r.face == t.downstream) else { return };
        let (nonce, non_discovery) = (record.nonce, record.non_discovery);
        let wire = entry.interest.clone();
        let Ok(interest) = InterestView::decode(&wire) else { return }; // Decoded once already.
        let scope = if self.nonlocal.contains(&t.downstream) { FaceScope::NonLocal } else { FaceScope::Local };
        let link = LinkInfo { non_discovery, ..LinkInfo::default() };
        let decision = self.consult_strategy(now_ms, t.downstream, scope, &link, &interest, t.slot, false, Some(t));
        if !self.hops.is_empty() {
            let at = SendAs { non_discovery: decision.non_discovery, ..SendAs::of(&interest) };
            self.forward(now_ms, t.slot, t.downstream, nonce, at, out);
        }
    }

    /// Sends the strategy's probe, if it asked for one: the entry's Interest with a fresh nonce.
    fn send_probe(&mut self, now_ms: u64, decision: Decision, slot: u32, downstream: FaceId, at: SendAs, out: &mut Outbox) {
        if let Some(to) = decision.probe {
            self.hops.clear();
            self.hops.push(to);
            let nonce = self.next_nonce();
            self.forward(now_ms, slot, downstream, nonce, at, out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn new_interest(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        interest: &InterestView<'_>,
        nonce: [u8; 4],
        out: &mut Outbox,
    ) {
        let may_park = self.cfg.cs_background_reads && !self.resuming && self.parked_count < MAX_PARKED;
        if let Some(cs) = self.cs.as_mut().filter(|_| self.cs_serve) {
            let req = Request::from_interest(interest);
            let answer =
                if may_park { cs.lookup_or_read(&req, now_ms) } else { cs.lookup(&req, now_ms).map_or(Lookup::Miss, Lookup::Served) };
            match answer {
                Lookup::Served(hit) => {
                    self.counters.cs_hits.inc();
                    let incoming_face_id = self.local_fields.contains(&face).then_some(face);
                    out.push(face, &LpFields { pit_token: link.pit_token, incoming_face_id, ..LpFields::default() }, hit.wire);
                    self.counters.data_out.inc();
                    return;
                }
                Lookup::Reading(batch) => {
                    self.parked.entry(batch).or_default().push(Parked {
                        face,
                        scope,
                        pit_token: link.pit_token.map(TokenBuf::new),
                        next_hop_face_id: link.next_hop_face_id,
                        non_discovery: link.non_discovery,
                        wire: interest.wire().to_vec(),
                    });
                    self.parked_count += 1;
                    self.counters.cs_parked.inc();
                    self.update_cs_gauges();
                    return;
                }
                Lookup::Miss => self.counters.cs_misses.inc(),
            }
        }
        let name = interest.name();
        let strategy = *self.strategies.find(&name);
        if !self.face_has_room(face) {
            self.counters.drops.count(DropReason::PitFull);
            return;
        }
        let has_digest = crate::table::pit::split_digest(name.value()).is_some();
        let slot = match self.pit.insert(name.value(), interest.can_be_prefix(), interest.must_be_fresh(), has_digest, strategy) {
            Ok(s) => s,
            Err(_) => {
                self.counters.drops.count(DropReason::PitFull);
                return;
            }
        };
        let expires_ms = now_ms + interest.effective_lifetime_ms();
        let entry = self.pit.get_mut(slot).expect("just made");
        entry.interest.extend_from_slice(interest.wire());
        let non_discovery = link.non_discovery;
        entry.in_records.push(InRecord { face, nonce, expires_ms, token: link.pit_token.map(TokenBuf::new), non_discovery });
        self.hold(face);
        self.pit.set_expiry(slot, expires_ms);
        let decision = self.consult_strategy(now_ms, face, scope, link, interest, slot, true, None);
        if self.hops.is_empty() {
            self.no_hop(face, link, decision.silent, interest, out);
            if let Some(entry) = self.pit.remove(slot) {
                self.release_entry(&entry);
                self.pit.recycle(entry);
            }
            return;
        }
        self.forward(now_ms, slot, face, nonce, SendAs { non_discovery: decision.non_discovery, ..SendAs::of(interest) }, out);
        self.send_probe(now_ms, decision, slot, face, SendAs::of(interest), out);
    }

    #[allow(clippy::too_many_arguments)]
    fn pending_interest(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        interest: &InterestView<'_>,
        nonce: [u8; 4],
        slot: u32,
        out: &mut Outbox,
    ) {
        let new_downstream = self.pit.get(slot).is_some_and(|e| !e.in_records.iter().any(|r| r.face == face));
        if new_downstream && !self.face_has_room(face) {
            self.counters.drops.count(DropReason::PitFull);
            return;
        }
        let point_to_point = self.is_point_to_point(face);
        let entry = self.pit.get_mut(slot).expect("found");
        // A nonce the entry already has (in an in-record or out-record) is a loop, as NFD's —
        // except the same downstream's again over a point-to-point link: a retransmission,
        // which the strategy suppresses or not (its copy upstream carries the nonce too).
        let again = entry.in_records.iter().any(|r| r.nonce == nonce && r.face == face);
        let seen = entry.in_records.iter().any(|r| r.nonce == nonce) || entry.out_records.iter().any(|r| r.nonce == nonce);
        let looped = seen && !(again && point_to_point);
        if looped {
            self.counters.drops.count(DropReason::Loop);
            // No Nack on a multi-access or ad hoc link (NFD's: dropped).
            if point_to_point {
                self.nack_back(face, link, NackReason::Duplicate, interest.wire(), out);
            }
            return;
        }
        let expires_ms = now_ms + interest.effective_lifetime_ms();
        let token = link.pit_token.map(TokenBuf::new);
        let non_discovery = link.non_discovery;
        match entry.in_record_mut(face) {
            Some(r) => *r = InRecord { face, nonce, expires_ms, token, non_discovery },
            None => {
                entry.in_records.push(InRecord { face, nonce, expires_ms, token, non_discovery });
                *self.pending_by_face.entry(face).or_default() += 1;
            }
        }
        entry.interest.clear();
        entry.interest.extend_from_slice(interest.wire());
        let latest = entry.in_records.iter().map(|r| r.expires_ms).max().unwrap_or(expires_ms);
        let pending = entry.out_records.iter().any(|r| r.nack.is_none());
        let last_sent = entry.out_records.iter().map(|r| r.sent_ms).max().unwrap_or(0);
        let strategy = entry.strategy;
        self.pit.set_expiry(slot, latest);
        // Another Interest for a name pending upstream: aggregated or forwarded again, as the
        // strategy suppresses retransmissions (NFD's: `RetxSuppression`).
        let initial = self.cfg.retry_interval_ms;
        let retx = self.strategy(strategy).retx_suppression();
        let suppressed = pending
            && match retx {
                RetxSuppression::None | RetxSuppression::PerUpstream(_) => false,
                RetxSuppression::Fixed(ms) => now_ms < last_sent + ms,
                RetxSuppression::PerEntry(p) => {
                    let entry = self.pit.get_mut(slot).expect("found");
                    !p.due(&mut entry.retx_interval_ms, last_sent, now_ms, initial)
                }
            };
        if suppressed {
            self.counters.aggregated.inc();
            return;
        }
        let decision = self.consult_strategy(now_ms, face, scope, link, interest, slot, false, None);
        if let (true, RetxSuppression::PerUpstream(p), false) = (pending, retx, self.hops.is_empty()) {
            // Each upstream within its own interval of its last forwarding is skipped.
            let Shard { pit, hops, .. } = self;
            if let Some(entry) = pit.get_mut(slot) {
                hops.retain(|&h| match entry.out_record_mut(h) {
                    None => true,
                    Some(r) => p.due(&mut r.retx_interval_ms, r.sent_ms, now_ms, initial),
                });
            }
            if self.hops.is_empty() {
                self.counters.aggregated.inc();
                return;
            }
        }
        if self.hops.is_empty() {
            self.no_hop(face, link, decision.silent, interest, out);
            if let Some(e) = self.pit.get_mut(slot) {
                e.in_records.retain(|r| r.face != face);
                let empty = e.in_records.is_empty();
                self.release(face);
                if empty {
                    self.pit.remove(slot);
                }
            }
            return;
        }
        self.forward(now_ms, slot, face, nonce, SendAs { non_discovery: decision.non_discovery, ..SendAs::of(interest) }, out);
        self.send_probe(now_ms, decision, slot, face, SendAs::of(interest), out);
    }

    /// Sends the entry's Interest to every face in `self.hops` with this shard's PIT token,
    /// carrying `nonce` (which the out-records keep) and HopLimit decremented; `at` says where
    /// those are in the entry's copy of the Interest. An Interest that would leave with
    /// HopLimit 0 goes only to faces on this host: to another host it is dropped, counted
    /// `hop-limit` (NFD's `nOutHopLimitZero`).
    pub(super) fn forward(&mut self, now_ms: u64, slot: u32, downstream: FaceId, nonce: [u8; 4], at: SendAs, out: &mut Outbox) {
        let generation = self.pit.generation(slot).expect("slot exists");
        let token = PitToken { shard: self.cfg.index, slot, generation }.encode();
        let Shard { pit, hops, counters, local_fields, nonlocal, .. } = self;
        let entry = pit.get_mut(slot).expect("entry exists");
        let last_hop = at.hop_limit.is_some_and(|at| entry.interest.get(at).is_some_and(|&h| h <= 1));
        for &to in hops.iter() {
            if last_hop && nonlocal.contains(&to) {
                counters.drops.count(DropReason::HopLimit);
                continue;
            }
            let incoming_face_id = local_fields.contains(&to).then_some(downstream);
            let fields = LpFields { pit_token: Some(&token), incoming_face_id, non_discovery: at.non_discovery, ..LpFields::default() };
            out.push_with(to, &fields, &entry.interest, |p| {
                if let Some(at) = at.hop_limit {
                    p[at] = p[at].saturating_sub(1);
                }
                if let Some(at) = at.nonce {
                    p[at..at + 4].copy_from_slice(&nonce);
                }
            });
            counters.interests_out.inc();
            let record = OutRecord { face: to, nonce, sent_ms: now_ms, nack: None, non_discovery: at.non_discovery, retx_interval_ms: 0 };
            match entry.out_record_mut(to) {
                Some(r) => *r = OutRecord { retx_interval_ms: r.retx_interval_ms, ..record },
                None => entry.out_records.push(record),
            }
        }
    }
}
