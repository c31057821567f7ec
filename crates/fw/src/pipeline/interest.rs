//! The Interest pipeline (NFD's incoming-Interest and outgoing-Interest pipelines, NDN-DPDK's
//! fwd-interest): loop detection, the content store, the FIB, the strategy's choice of
//! upstreams, the PIT entry, and the Interest sent out with this shard's PIT token.

use nexthop_cs::{Lookup, Request};
use nexthop_wire::{Emit, InterestView, NackReason};

use super::{route_of, stays_local, Parked, Plan, SendAs, Shard, MAX_PARKED, NO_FACE};
use crate::counters::DropReason;
use crate::face::{FaceId, FaceScope};
use crate::lp::encode::LpFields;
use crate::lp::packet::LinkInfo;
use crate::pipeline::outbox::Outbox;
use crate::pipeline::strategy::access::Timer;
use crate::pipeline::strategy::retx_suppression::RetxSuppression;
use crate::table::pit::{InRecord, OutRecord};
use crate::table::pit_token::{PitToken, TokenBuf};
use crate::table::strategy_choice::Strategy;

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

    /// Fills `self.hops` with the upstreams for an Interest from `face`: NextHopFaceId from a
    /// local face, else the strategy over the FIB route — first hops for a new entry, retry hops
    /// for the pending entry in `pending`.
    ///
    /// A new Interest under the access strategy whose prefix has a working upstream that may be
    /// used goes to that upstream alone, which is returned with its RTO (the caller starts the
    /// timer once the PIT entry is made). Under ASF, the upstreams are ranked by what was
    /// measured in the route's namespace, which is returned with the face to probe, if any (the
    /// caller sends the probe and records what went where).
    #[allow(clippy::too_many_arguments)]
    fn choose_hops(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        interest: &InterestView<'_>,
        strategy: Strategy,
        pending: Option<u32>,
    ) -> Plan {
        let mut hops = std::mem::take(&mut self.hops);
        hops.clear();
        // The random strategy's draw (taken only for it, so other strategies' nonces stay as
        // they were).
        let draw = if strategy == Strategy::Random { u32::from_be_bytes(self.next_nonce()) } else { 0 };
        let local_only = !self.nonlocal.is_empty() && stays_local(&interest.name(), scope);
        // An Interest from an ad hoc face may go back out on it (as NFD's): the face it came
        // from is no reason to leave a next hop out.
        let face = if self.is_ad_hoc(face) { NO_FACE } else { face };
        let mut plan = Plan::default();
        match (link.next_hop_face_id, scope) {
            (Some(to), FaceScope::Local) => hops.push(to),
            _ => {
                let Shard { fib, pit, access, asf, nonlocal, .. } = self;
                let usable = |h: FaceId| h != face && !(local_only && nonlocal.contains(&h));
                let route = route_of(fib, interest);
                if strategy == Strategy::SelfLearning {
                    match route {
                        // A known route: every next hop, marked NonDiscovery.
                        Some((_, route)) if !route.hops().is_empty() => {
                            hops.extend(route.hops().iter().map(|h| u64::from(h.face)).filter(|&h| usable(h)));
                            plan.non_discovery = true;
                            plan.silent = true;
                        }
                        // A discovery Interest with none: every face to another host.
                        _ if !link.non_discovery => {
                            hops.extend(nonlocal.iter().copied().filter(|&h| usable(h)));
                            hops.sort_unstable();
                            plan.silent = true;
                        }
                        _ => {} // NonDiscovery with no route: Nack NoRoute.
                    }
                } else if let Some((routed, route)) = route {
                    let entry = pending.and_then(|s| pit.get(s));
                    match (strategy, entry) {
                        (Strategy::Asf(params), entry) => {
                            let namespace = routed.prefix(fib.route_prefix_len(&routed).unwrap_or(routed.len())).value().to_vec();
                            let mut ranked = Vec::new();
                            asf.ranked(&namespace, route.hops(), usable, &mut ranked);
                            let pick = match entry {
                                None => ranked.first().copied(),
                                // A retransmission: the best upstream not yet used, else the one
                                // used longest ago.
                                Some(e) => {
                                    let sent = |f: FaceId| e.out_records.iter().find(|r| r.face == f).map(|r| r.sent_ms);
                                    ranked
                                        .iter()
                                        .copied()
                                        .find(|&f| sent(f).is_none())
                                        .or_else(|| ranked.iter().copied().min_by_key(|&f| sent(f)))
                                }
                            };
                            hops.extend(pick);
                            let probe = match (entry, pick) {
                                (None, Some(used)) => asf.probe(&namespace, route.hops(), usable, used, now_ms, &params),
                                _ => None,
                            };
                            plan.asf = Some((namespace, params, probe));
                        }
                        (_, Some(entry)) => strategy.retry_hops(route.hops(), face, &entry.out_records, draw, &mut hops),
                        (_, None) => {
                            plan.access_unicast = (strategy == Strategy::Access)
                                .then(|| access.upstream(&interest.name(), now_ms))
                                .flatten()
                                .filter(|&(up, _)| usable(up) && route.hops().iter().any(|h| u64::from(h.face) == up));
                            match plan.access_unicast {
                                Some((up, _)) => hops.push(up),
                                None => strategy.first_hops(route.hops(), face, draw, &mut hops),
                            }
                        }
                    }
                }
            }
        }
        if local_only {
            hops.retain(|h| !self.nonlocal.contains(h));
        }
        self.hops = hops;
        plan
    }

    /// ASF: records that the entry's Interest went to each of `self.hops` in the plan's
    /// namespace, then sends the plan's probe — the entry's Interest with a fresh nonce — and
    /// records it too.
    fn asf_sent(&mut self, now_ms: u64, plan: Plan, slot: u32, downstream: FaceId, at: SendAs, out: &mut Outbox) {
        let Some((namespace, params, probe)) = plan.asf else { return };
        let Shard { pit, asf, hops, .. } = self;
        let Some(entry) = pit.get(slot) else { return };
        for &to in hops.iter().chain(probe.as_ref()) {
            asf.sent(&namespace, to, &entry.name, now_ms, &params);
        }
        if let Some(to) = probe {
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
        let strategy = self.strategies.find(&name);
        let plan = self.choose_hops(now_ms, face, scope, link, interest, strategy, None);
        if self.hops.is_empty() {
            self.no_hop(face, link, &plan, interest, out);
            return;
        }
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
        self.forward(now_ms, slot, face, nonce, SendAs { non_discovery: plan.non_discovery, ..SendAs::of(interest) }, out);
        if let Some((upstream, rto_ms)) = plan.access_unicast {
            let generation = self.pit.generation(slot).expect("slot exists");
            self.access.schedule(Timer { due_ms: now_ms + rto_ms, slot, generation, downstream: face, upstream });
        }
        self.asf_sent(now_ms, plan, slot, face, SendAs::of(interest), out);
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
        let retx = strategy.retx_suppression();
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
        let plan = self.choose_hops(now_ms, face, scope, link, interest, strategy, Some(slot));
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
            self.no_hop(face, link, &plan, interest, out);
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
        self.forward(now_ms, slot, face, nonce, SendAs { non_discovery: plan.non_discovery, ..SendAs::of(interest) }, out);
        self.asf_sent(now_ms, plan, slot, face, SendAs::of(interest), out);
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
