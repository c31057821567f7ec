//! What NFD's *ASF* strategy (Adaptive Smoothed RTT-based Forwarding,
//! `/localhost/nfd/strategy/asf`) measures and decides: which upstream of a route answers
//! fastest, found by sending each new Interest to the best one and, now and then, a copy to
//! another.
//!
//! # Overview
//! - Measurements are kept per *namespace* — the prefix of the FIB route an Interest used — and
//!   per upstream face in it: the last round trip, or *unmeasured*, or *timed out*; an RFC 6298
//!   smoothed RTT ([`crate::lp::rtt`]); and a count of timeouts. They live `measurements-lifetime`
//!   (5 min) past their last use.
//! - Ranking for forwarding: faces that answered, by smoothed RTT; then unmeasured faces; then
//!   timed-out faces; within a group by route cost, then face id. A new Interest goes to the
//!   best eligible face; a consumer's retransmission goes to the best face it has not gone to
//!   yet, or else to the one it went to longest ago (the shard does this with [`AsfState::ranked`]).
//! - Probing: the first Interest of a namespace schedules a probe 0–5 s later, then one every
//!   `probing-interval` (60 s): when one is due, a new Interest also goes, with a fresh nonce,
//!   to another face — an unmeasured one if there is any, else one drawn at random with
//!   probability falling with its rank (rank j of n has weight n + 1 − j).
//! - Timeouts: sending on a face starts its timer (one at a time per face and namespace) at the
//!   face's RTO. When it fires before Data for that Interest came, the face counts a timeout; at
//!   `max-timeouts` (3) in a row the face is *timed out*. A Nack marks it timed out at once.
//!   Data resets the count and cancels the timer.
//! - Late Data: Data that an upstream brings after another one satisfied the Interest (a probe
//!   is usually slower) is still measured: the shard hands its pending sends over with
//!   [`AsfState::expect_late`] (NFD keeps the PIT entry 50 ms longer for this).
//!
//! - Retransmissions are suppressed per entry, as best-route's; its name takes their
//!   parameters and its own (`…/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000`).
//!
//! After NFD's `asf-strategy.cpp`, `asf-measurements.cpp` and `asf-probing-module.cpp`
//! (version 5). [`Asf`] is the strategy; [`AsfState`] what it measures (timeouts only change
//! measurements; nothing is sent on them).

use std::collections::VecDeque;

use hashbrown::HashMap;
use nexthop_lookup::name::NextHop;
use nexthop_wire::NameView;

use super::best_route::sent_ms;
use super::retx_suppression::{RetxParams, RetxSuppression};
use super::{DataContext, Draws, ForwardingStrategy, InterestContext, Made, NackContext, Timer as EntryTimer};
use crate::face::FaceId;
use crate::lp::rtt::RttEstimator;

/// NFD's default probing interval (ms).
pub const DEFAULT_PROBING_INTERVAL_MS: u32 = 60_000;
/// The shortest probing interval NFD allows (ms).
pub const MIN_PROBING_INTERVAL_MS: u32 = 1_000;
/// Timeouts in a row that mark a face timed out, by default.
pub const DEFAULT_MAX_TIMEOUTS: u32 = 3;
/// How long measurements live past their last use, by default (ms).
pub const DEFAULT_MEASUREMENTS_LIFETIME_MS: u32 = 300_000;
/// ASF's parameters, from the strategy's name
/// (`/localhost/nfd/strategy/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000`,
/// and retransmission suppression's `retx-suppression-…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AsfParams {
    /// How retransmissions are suppressed (per entry, exponentially).
    pub retx: RetxParams,
    /// How often a namespace sends a probe (ms; at least 1 s).
    pub probing_interval_ms: u32,
    /// Timeouts in a row before a face counts as timed out (at least 1).
    pub max_timeouts: u32,
    /// How long measurements live past their last use (ms; more than the probing interval).
    pub measurements_lifetime_ms: u32,
}

impl Default for AsfParams {
    fn default() -> Self {
        AsfParams {
            retx: RetxParams::DEFAULT,
            probing_interval_ms: DEFAULT_PROBING_INTERVAL_MS,
            max_timeouts: DEFAULT_MAX_TIMEOUTS,
            measurements_lifetime_ms: DEFAULT_MEASUREMENTS_LIFETIME_MS,
        }
    }
}

impl AsfParams {
    /// Takes one `name~value` parameter if it is ASF's; whether it was.
    ///
    /// # Errors
    /// A value that is not a number of the parameter's kind.
    pub fn parse_parameter(&mut self, key: &str, value: &str) -> Result<bool, String> {
        if self.retx.parse_parameter(key, value)? {
            return Ok(true);
        }
        let field = match key {
            "probing-interval" => &mut self.probing_interval_ms,
            "max-timeouts" => &mut self.max_timeouts,
            "measurements-lifetime" => &mut self.measurements_lifetime_ms,
            _ => return Ok(false),
        };
        *field = value.parse().map_err(|_| format!("parameter {key}: {value:?} is not a non-negative integer"))?;
        Ok(true)
    }

    /// Checks the parameters together, once all are read.
    ///
    /// # Errors
    /// A sentence naming the first parameter out of range.
    pub fn check(&self) -> Result<(), String> {
        self.retx.check()?;
        if self.probing_interval_ms < MIN_PROBING_INTERVAL_MS {
            return Err(format!("probing-interval must be at least {MIN_PROBING_INTERVAL_MS} ms"));
        }
        if self.max_timeouts == 0 {
            return Err("max-timeouts must be at least 1".into());
        }
        if self.measurements_lifetime_ms <= self.probing_interval_ms {
            return Err("measurements-lifetime must be longer than probing-interval".into());
        }
        Ok(())
    }

    /// The parameters that differ from the defaults, as name components' text.
    pub fn components(&self) -> Vec<String> {
        let d = AsfParams::default();
        let mut out = self.retx.components();
        if self.probing_interval_ms != d.probing_interval_ms {
            out.push(format!("probing-interval~{}", self.probing_interval_ms));
        }
        if self.max_timeouts != d.max_timeouts {
            out.push(format!("max-timeouts~{}", self.max_timeouts));
        }
        if self.measurements_lifetime_ms != d.measurements_lifetime_ms {
            out.push(format!("measurements-lifetime~{}", self.measurements_lifetime_ms));
        }
        out
    }
}

/// A namespace's first probe comes within this long of its first Interest (ms).
const FIRST_PROBE_WITHIN_MS: u64 = 5_000;
/// Namespaces measured at most (beyond it, the stalest half is forgotten).
const MAX_NAMESPACES: usize = 1 << 16;
/// Late sends remembered at most (the oldest go first).
const MAX_LATE: usize = 4096;
/// How often lapsed measurements are swept out (ms).
const SWEEP_MS: u64 = 1000;

/// What a face's last Interest in a namespace told.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FaceStatus {
    /// No Data yet (and no timeout).
    Unmeasured,
    /// Timed out `max-timeouts` times in a row, or Nacked.
    TimedOut,
    /// Data came back after this many ms.
    Measured(f64),
}

/// A face's measurements in one namespace.
#[derive(Debug, Clone)]
struct FaceInfo {
    face: FaceId,
    status: FaceStatus,
    rtt: RttEstimator,
    timeouts: u32,
    /// The running timer: its number and the Interest name it waits for.
    timer: Option<(u64, Box<[u8]>)>,
    expires_ms: u64,
}

/// One namespace's measurements.
#[derive(Debug, Clone)]
struct Namespace {
    faces: Vec<FaceInfo>,
    /// When the next probe is due (`None` before the first Interest scheduled one).
    probe_due_ms: Option<u64>,
    lifetime_ms: u64,
    max_timeouts: u32,
    expires_ms: u64,
}

impl Namespace {
    fn face(&self, face: FaceId) -> Option<&FaceInfo> {
        self.faces.iter().find(|f| f.face == face)
    }

    fn face_mut(&mut self, face: FaceId) -> Option<&mut FaceInfo> {
        self.faces.iter_mut().find(|f| f.face == face)
    }

    /// NFD's `onTimeoutOrNack`: the Interest `name` timed out or was Nacked on `face`.
    fn timeout_or_nack(&mut self, face: FaceId, name: &[u8], nack: bool, now_ms: u64) {
        let (lifetime, max) = (self.lifetime_ms, self.max_timeouts);
        let Some(info) = self.face_mut(face) else { return };
        info.timeouts += 1;
        if info.timeouts < max && !nack {
            info.expires_ms = now_ms + lifetime;
            info.timer = None;
        } else {
            info.status = FaceStatus::TimedOut;
            info.timeouts = 0;
            if info.timer.as_ref().is_some_and(|(_, waited)| name.starts_with(waited)) {
                info.timer = None;
            }
        }
    }
}

/// A face's timer: fires at `due_ms` unless the face's running timer is no longer `seq`.
#[derive(Debug, Clone)]
struct Timer {
    due_ms: u64,
    namespace: Box<[u8]>,
    face: FaceId,
    seq: u64,
}

/// An Interest still out on `face` when another upstream satisfied it.
#[derive(Debug, Clone)]
struct LateSend {
    name: Box<[u8]>,
    face: FaceId,
    sent_ms: u64,
    until_ms: u64,
}

/// ASF's measurements and timers.
#[derive(Debug)]
pub struct AsfState {
    namespaces: HashMap<Box<[u8]>, Namespace>,
    timers: Vec<Timer>,
    late: VecDeque<LateSend>,
    seq: u64,
    draws: Draws,
    next_sweep_ms: u64,
}

impl Default for AsfState {
    fn default() -> Self {
        AsfState::with_seed(0x9e37_79b9_7f4a_7c15)
    }
}

/// A face's place in a ranking: lower is better.
type Rank = (u8, u64, u32, FaceId);

impl AsfState {
    /// Empty state whose random draws (probe times and faces) start from `seed`.
    pub fn with_seed(seed: u64) -> Self {
        AsfState {
            namespaces: HashMap::new(),
            timers: Vec::new(),
            late: VecDeque::new(),
            seq: 0,
            draws: Draws::new(seed | 1),
            next_sweep_ms: 0,
        }
    }

    fn random(&mut self) -> u64 {
        self.draws.next_u64()
    }

    /// A face's status in `namespace`.
    pub fn status(&self, namespace: &[u8], face: FaceId) -> FaceStatus {
        self.namespaces.get(namespace).and_then(|n| n.face(face)).map_or(FaceStatus::Unmeasured, |f| f.status)
    }

    fn rank(&self, namespace: Option<&Namespace>, hop: &NextHop, for_probing: bool) -> Rank {
        let face = u64::from(hop.face);
        let info = namespace.and_then(|n| n.face(face));
        let status = info.map_or(FaceStatus::Unmeasured, |f| f.status);
        let srtt_us = |f: Option<&FaceInfo>| f.and_then(|f| f.rtt.srtt_ms()).map_or(u64::MAX, |ms| (ms * 1000.0) as u64);
        let (group, srtt) = match (status, for_probing) {
            (FaceStatus::Measured(_), false) => (1, srtt_us(info)),
            (FaceStatus::Unmeasured, false) => (2, u64::MAX),
            (FaceStatus::Unmeasured, true) => (1, u64::MAX),
            (FaceStatus::Measured(_), true) => (2, srtt_us(info)),
            (FaceStatus::TimedOut, _) => (3, u64::MAX),
        };
        (group, srtt, hop.cost, face)
    }

    /// The eligible next hops of `hops`, best first for forwarding, into `out`.
    pub fn ranked(&self, namespace: &[u8], hops: &[NextHop], eligible: impl Fn(FaceId) -> bool, out: &mut Vec<FaceId>) {
        let ns = self.namespaces.get(namespace);
        let mut ranks: Vec<Rank> = hops.iter().filter(|h| eligible(u64::from(h.face))).map(|h| self.rank(ns, h, false)).collect();
        ranks.sort_unstable();
        out.extend(ranks.iter().map(|r| r.3));
    }

    /// Whether a probe is due in `namespace` and, if so, the face to send it to (eligible, not
    /// `used`); the probe after it is then scheduled. The first call for a namespace schedules
    /// its first probe, 0–5 s on.
    pub fn probe(
        &mut self,
        namespace: &[u8],
        hops: &[NextHop],
        eligible: impl Fn(FaceId) -> bool,
        used: FaceId,
        now_ms: u64,
        params: &AsfParams,
    ) -> Option<FaceId> {
        let first_delay = self.random() % (FIRST_PROBE_WITHIN_MS + 1);
        let ns = self.namespace_mut(namespace, now_ms, params);
        let due = *ns.probe_due_ms.get_or_insert(now_ms + first_delay);
        if now_ms < due {
            return None;
        }
        let ns = self.namespaces.get(namespace);
        let mut ranks: Vec<Rank> =
            hops.iter().filter(|h| u64::from(h.face) != used && eligible(u64::from(h.face))).map(|h| self.rank(ns, h, true)).collect();
        ranks.sort_unstable();
        let chosen = match ranks.first() {
            None => return None, // still due: the next Interest with another face probes
            Some(r) if self.status(namespace, r.3) == FaceStatus::Unmeasured => r.3,
            Some(_) => {
                // Rank j of n is drawn with probability (n + 1 − j) / (n(n + 1)/2).
                let n = ranks.len() as u64;
                let mut draw = self.random() % (n * (n + 1) / 2);
                let mut pick = ranks[0].3;
                for (j, r) in ranks.iter().enumerate() {
                    let weight = n - j as u64;
                    if draw < weight {
                        pick = r.3;
                        break;
                    }
                    draw -= weight;
                }
                pick
            }
        };
        let interval = u64::from(params.probing_interval_ms);
        if let Some(ns) = self.namespaces.get_mut(namespace) {
            ns.probe_due_ms = Some(now_ms + interval);
        }
        Some(chosen)
    }

    fn namespace_mut(&mut self, namespace: &[u8], now_ms: u64, params: &AsfParams) -> &mut Namespace {
        let lifetime_ms = u64::from(params.measurements_lifetime_ms);
        // The key is copied only when the namespace is new (this runs for every Interest).
        if !self.namespaces.contains_key(namespace) {
            if self.namespaces.len() >= MAX_NAMESPACES {
                super::access::forget_stale(&mut self.namespaces, now_ms, |n| n.expires_ms);
            }
            let fresh = Namespace { faces: Vec::new(), probe_due_ms: None, lifetime_ms, max_timeouts: 0, expires_ms: 0 };
            self.namespaces.insert(namespace.into(), fresh);
        }
        let ns = self.namespaces.get_mut(namespace).expect("present or just made");
        ns.lifetime_ms = lifetime_ms;
        ns.max_timeouts = params.max_timeouts;
        ns.expires_ms = now_ms + lifetime_ms;
        ns
    }

    /// The Interest `name` went out on `face` for `namespace`: the face is measured from now
    /// on, and its timer starts at its RTO unless one is running.
    pub fn sent(&mut self, namespace: &[u8], face: FaceId, name: &[u8], now_ms: u64, params: &AsfParams) {
        self.seq += 1;
        let seq = self.seq;
        let ns = self.namespace_mut(namespace, now_ms, params);
        let lifetime = ns.lifetime_ms;
        let info = match ns.faces.iter().position(|f| f.face == face) {
            Some(i) => &mut ns.faces[i],
            None => {
                ns.faces.push(FaceInfo {
                    face,
                    status: FaceStatus::Unmeasured,
                    rtt: RttEstimator::default(),
                    timeouts: 0,
                    timer: None,
                    expires_ms: 0,
                });
                ns.faces.last_mut().expect("just pushed")
            }
        };
        info.expires_ms = now_ms + lifetime;
        if info.timer.is_none() {
            info.timer = Some((seq, name.into()));
            let due_ms = now_ms + info.rtt.rto_ms();
            self.timers.push(Timer { due_ms, namespace: namespace.into(), face, seq });
        }
    }

    /// The longest measured namespace that is a prefix of `name`.
    fn namespace_of(&mut self, name: &NameView<'_>) -> Option<&mut Namespace> {
        if self.namespaces.is_empty() {
            return None;
        }
        let n = (0..=name.len()).rev().find(|&n| self.namespaces.contains_key(name.prefix(n).value()))?;
        self.namespaces.get_mut(name.prefix(n).value())
    }

    /// Data named `name` came from `face` `rtt_ms` after the Interest was sent there.
    pub fn on_data(&mut self, name: &NameView<'_>, face: FaceId, rtt_ms: u64, now_ms: u64) {
        let Some(ns) = self.namespace_of(name) else { return };
        ns.expires_ms = now_ms + ns.lifetime_ms;
        let lifetime = ns.lifetime_ms;
        let Some(info) = ns.face_mut(face) else { return };
        info.rtt.add(rtt_ms as f64);
        info.status = FaceStatus::Measured(rtt_ms as f64);
        info.timeouts = 0;
        info.expires_ms = now_ms + lifetime;
        if info.timer.as_ref().is_some_and(|(_, waited)| name.value().starts_with(waited)) {
            info.timer = None;
        }
    }

    /// The Interest `name` is still out on `face` (sent at `sent_ms`) though another upstream
    /// satisfied it: Data from `face` until `until_ms` is measured by [`Self::on_late_data`].
    pub fn expect_late(&mut self, name: &[u8], face: FaceId, sent_ms: u64, until_ms: u64) {
        if self.late.len() >= MAX_LATE {
            self.late.pop_front();
        }
        self.late.push_back(LateSend { name: name.into(), face, sent_ms, until_ms });
    }

    /// Data no PIT entry wanted came from `face`: if it answers a late send, it is measured.
    /// Whether it did.
    pub fn on_late_data(&mut self, name: &NameView<'_>, face: FaceId, now_ms: u64) -> bool {
        let Some(i) = self.late.iter().position(|l| l.face == face && l.until_ms > now_ms && name.value().starts_with(&l.name)) else {
            return false;
        };
        let l = self.late.remove(i).expect("found");
        self.on_data(name, face, now_ms.saturating_sub(l.sent_ms), now_ms);
        true
    }

    /// A Nack for `name` came from `face`: the face counts as timed out at once.
    pub fn on_nack(&mut self, name: &NameView<'_>, face: FaceId, now_ms: u64) {
        if let Some(ns) = self.namespace_of(name) {
            ns.timeout_or_nack(face, name.value(), true, now_ms);
        }
    }

    /// Fires the timers due at `now_ms` (measurements only) and forgets lapsed measurements.
    pub fn due(&mut self, now_ms: u64) {
        let (fired, waiting): (Vec<Timer>, Vec<Timer>) = std::mem::take(&mut self.timers).into_iter().partition(|t| t.due_ms <= now_ms);
        self.timers = waiting;
        for t in fired {
            let Some(ns) = self.namespaces.get_mut(&t.namespace) else { continue };
            let Some(info) = ns.face_mut(t.face) else { continue };
            let Some((seq, name)) = info.timer.clone() else { continue };
            if seq == t.seq {
                ns.timeout_or_nack(t.face, &name, false, now_ms);
            }
        }
        if now_ms >= self.next_sweep_ms {
            self.next_sweep_ms = now_ms + SWEEP_MS;
            self.namespaces.retain(|_, ns| {
                ns.faces.retain(|f| f.expires_ms > now_ms);
                ns.expires_ms > now_ms
            });
            self.late.retain(|l| l.until_ms > now_ms);
        }
    }

    /// Forgets a face that has gone.
    pub fn face_down(&mut self, face: FaceId) {
        for ns in self.namespaces.values_mut() {
            ns.faces.retain(|f| f.face != face);
        }
        self.timers.retain(|t| t.face != face);
        self.late.retain(|l| l.face != face);
    }

    /// Timers running (stale ones included until they come due).
    pub fn timers(&self) -> usize {
        self.timers.len()
    }
}

/// The ASF strategy.
#[derive(Debug)]
pub struct Asf {
    params: AsfParams,
    state: AsfState,
}

/// An ASF instance from its name's parameters; its random draws (probe times and faces) start
/// from `seed`.
///
/// # Errors
/// A parameter that is neither ASF's nor retransmission suppression's, or a bad value.
pub fn make(parameters: &[(&str, &str)], seed: u64) -> Made {
    let mut params = AsfParams::default();
    for &(key, value) in parameters {
        if !params.parse_parameter(key, value)? {
            return Err(format!("asf has no parameter {key:?}"));
        }
    }
    params.check()?;
    Ok(Box::new(Asf { params, state: AsfState::with_seed(seed) }))
}

impl ForwardingStrategy for Asf {
    fn parameters(&self) -> Vec<String> {
        self.params.components()
    }

    fn retx_suppression(&self) -> RetxSuppression {
        RetxSuppression::PerEntry(self.params.retx)
    }

    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>) {
        let Some(route) = ctx.route else { return };
        let namespace = route.namespace();
        let faces = ctx.faces;
        let mut ranked = Vec::new();
        self.state.ranked(&namespace, route.hops, |f| faces.eligible(f), &mut ranked);
        let entry = ctx.entry;
        let pick = if ctx.is_new {
            ranked.first().copied()
        } else {
            // A retransmission: the best upstream not yet used, else the one used longest ago.
            let sent = |f: FaceId| sent_ms(&entry.out_records, f);
            ranked.iter().copied().find(|&f| sent(f).is_none()).or_else(|| ranked.iter().copied().min_by_key(|&f| sent(f)))
        };
        let Some(pick) = pick else { return };
        ctx.send_to(pick);
        let probe = match ctx.is_new {
            true => self.state.probe(&namespace, route.hops, |f| faces.eligible(f), pick, ctx.now_ms, &self.params),
            false => None,
        };
        for to in std::iter::once(pick).chain(probe) {
            self.state.sent(&namespace, to, &entry.name, ctx.now_ms, &self.params);
        }
        if let Some(to) = probe {
            ctx.probe(to);
        }
    }

    fn after_receive_data(&mut self, ctx: &mut DataContext<'_>) {
        for r in ctx.entry.out_records.iter().filter(|r| r.nack.is_none()) {
            if r.face == ctx.upstream {
                self.state.on_data(&ctx.name, r.face, ctx.now_ms.saturating_sub(r.sent_ms), ctx.now_ms);
            } else {
                self.state.expect_late(&ctx.entry.name, r.face, r.sent_ms, ctx.entry.expires_ms);
            }
        }
    }

    fn after_receive_unsolicited_data(&mut self, now_ms: u64, upstream: FaceId, name: &NameView<'_>) {
        self.state.on_late_data(name, upstream, now_ms);
    }

    fn after_receive_nack(&mut self, ctx: &mut NackContext<'_>) {
        self.state.on_nack(&ctx.name, ctx.upstream, ctx.now_ms);
    }

    fn tick(&mut self, now_ms: u64, _fired: &mut Vec<EntryTimer>) {
        self.state.due(now_ms);
    }

    fn face_down(&mut self, face: FaceId) {
        self.state.face_down(face);
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::*;

    const NS: &[u8] = b"\x08\x01a";
    const A: FaceId = 300;
    const B: FaceId = 301;
    const C: FaceId = 302;

    fn hops() -> Vec<NextHop> {
        vec![NextHop { face: A as u32, cost: 10 }, NextHop { face: B as u32, cost: 5 }, NextHop { face: C as u32, cost: 1 }]
    }

    fn name(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    fn ranked(s: &AsfState) -> Vec<FaceId> {
        let mut out = Vec::new();
        s.ranked(NS, &hops(), |_| true, &mut out);
        out
    }

    /// Sends `/a/<i>` to `face` at `now` and answers it `rtt` later.
    fn answered(s: &mut AsfState, face: FaceId, i: u32, now: u64, rtt: u64) {
        let n = name(&format!("/a/{i}"));
        s.sent(NS, face, n.value(), now, &AsfParams::default());
        s.on_data(&n.as_view(), face, rtt, now + rtt);
    }

    #[test]
    fn ranks_measured_by_srtt_then_unmeasured_by_cost_then_timed_out() {
        let mut s = AsfState::default();
        assert_eq!(ranked(&s), [C, B, A], "nothing measured: by cost");
        answered(&mut s, A, 1, 0, 40);
        answered(&mut s, B, 2, 0, 20);
        assert_eq!(ranked(&s), [B, A, C], "measured first, fastest first");
        assert_eq!(s.status(NS, A), FaceStatus::Measured(40.0));
        s.on_nack(&name("/a/3").as_view(), B, 50);
        assert_eq!(s.status(NS, B), FaceStatus::TimedOut);
        assert_eq!(ranked(&s), [A, C, B], "a Nacked face last");
        let mut out = Vec::new();
        s.ranked(NS, &hops(), |f| f != A, &mut out);
        assert_eq!(out, [C, B], "only eligible faces");
        // Data from a timed-out face measures it again.
        answered(&mut s, B, 4, 100, 10);
        assert_eq!(ranked(&s)[0], B);
    }

    #[test]
    fn a_face_times_out_after_max_timeouts_in_a_row() {
        let mut s = AsfState::default();
        let p = AsfParams { max_timeouts: 2, ..AsfParams::default() };
        answered(&mut s, A, 0, 0, 100);
        let rto = 300; // srtt 100 + 4 · 50
        let before = s.timers();
        s.sent(NS, A, name("/a/1").value(), 1000, &p);
        s.sent(NS, A, name("/a/2").value(), 1001, &p);
        assert_eq!(s.timers(), before + 1, "one timer at a time: /a/1's");
        s.due(1000 + rto - 1);
        assert_eq!(s.status(NS, A), FaceStatus::Measured(100.0), "not yet due");
        s.due(1000 + rto);
        assert_eq!(s.status(NS, A), FaceStatus::Measured(100.0), "one timeout of two");
        s.sent(NS, A, name("/a/3").value(), 2000, &p);
        // Data for another Interest resets the count but leaves /a/3's timer running.
        s.on_data(&name("/a/2").as_view(), A, 1001, 2002);
        s.due(4000);
        assert_eq!(s.status(NS, A), FaceStatus::Measured(1001.0), "the count started again");
        s.sent(NS, A, name("/a/4").value(), 5000, &p);
        s.due(9000);
        assert_eq!(s.status(NS, A), FaceStatus::TimedOut);
        // Data for the Interest a timer waits for cancels it.
        s.sent(NS, B, name("/a/5").value(), 10_000, &p);
        s.on_data(&name("/a/5/seg=0").as_view(), B, 5, 10_005);
        s.sent(NS, B, name("/a/6").value(), 10_010, &p);
        s.due(20_000);
        assert!(matches!(s.status(NS, B), FaceStatus::Measured(_)), "/a/6's timeout is the first");
    }

    #[test]
    fn probes_an_unmeasured_face_first_then_draws_by_rank() {
        let mut s = AsfState::with_seed(7);
        let p = AsfParams { probing_interval_ms: 1000, ..AsfParams::default() };
        answered(&mut s, C, 0, 0, 10);
        // The first probe comes 0–5 s after the namespace's first Interest.
        let mut now = 0;
        let first = loop {
            if let Some(f) = s.probe(NS, &hops(), |_| true, C, now, &p) {
                break f;
            }
            now += 10;
            assert!(now <= FIRST_PROBE_WITHIN_MS);
        };
        assert_eq!(first, B, "an unmeasured face, the cheaper of two");
        assert_eq!(s.probe(NS, &hops(), |_| true, C, now + 999, &p), None, "one per interval");
        assert_eq!(s.probe(NS, &hops(), |_| true, C, now + 1000, &p), Some(B), "unmeasured until measured");
        // All measured: rank j of 3 is drawn with weight 4 − j (C 10 ms, B 20, A 30).
        answered(&mut s, B, 1, now, 20);
        answered(&mut s, A, 2, now, 30);
        let mut counts = HashMap::<FaceId, u32>::new();
        for k in 0..6000u64 {
            let f = s.probe(NS, &hops(), |_| true, 999, now + 1000 * (k + 2), &p).expect("due");
            *counts.entry(f).or_default() += 1;
        }
        let (c, b, a) = (counts[&C], counts[&B], counts[&A]);
        assert!((2700..3300).contains(&c) && (1750..2250).contains(&b) && (800..1200).contains(&a), "{c} {b} {a}");
        // Never the face used or an ineligible one; none left: no probe, and it stays due.
        let due = now + 1000 * 6010;
        assert_eq!(s.probe(NS, &hops(), |f| f == C, C, due, &p), None);
        assert!(s.probe(NS, &hops(), |_| true, C, due, &p).is_some());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Sent(usize, FaceId, u8),
        Data(usize, FaceId, u8, u16),
        Nack(usize, FaceId, u8),
        Late(FaceId, u8),
        Probe(usize, FaceId),
        Down(FaceId),
        Wait(u16),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let face = (A..=C + 1).boxed();
        prop_oneof![
            (0..2usize, face.clone(), 0..4u8).prop_map(|(n, f, i)| Op::Sent(n, f, i)),
            (0..2usize, face.clone(), 0..4u8, 0..2000u16).prop_map(|(n, f, i, r)| Op::Data(n, f, i, r)),
            (0..2usize, face.clone(), 0..4u8).prop_map(|(n, f, i)| Op::Nack(n, f, i)),
            (face.clone(), 0..4u8).prop_map(|(f, i)| Op::Late(f, i)),
            (0..2usize, face.clone()).prop_map(|(n, f)| Op::Probe(n, f)),
            face.prop_map(Op::Down),
            (0..3000u16).prop_map(Op::Wait),
        ]
    }

    proptest::proptest! {
        /// Any sequence of sends, answers, Nacks, probes, face losses and waits: a ranking is
        /// always every eligible face once, a face that just answered ranks above every face
        /// that has not, a probe is never the face used or an ineligible one, a face gone is
        /// unmeasured, and Data from a face a timeout or Nack marked puts it back.
        #[test]
        fn rankings_and_probes_stay_sound(ops in proptest::collection::vec(op(), 1..80)) {
            let namespaces = [b"\x08\x01a".as_slice(), b"\x08\x01b".as_slice()];
            let p = AsfParams { probing_interval_ms: 1000, measurements_lifetime_ms: 5000, max_timeouts: 2, ..AsfParams::default() };
            let mut s = AsfState::with_seed(3);
            let mut now = 0u64;
            let interest = |n: usize, i: u8| name(&format!("/{}/{i}", ["a", "b"][n]));
            for op in ops {
                match op {
                    Op::Sent(n, f, i) => s.sent(namespaces[n], f, interest(n, i).value(), now, &p),
                    Op::Data(n, f, i, rtt) => {
                        let known = s.namespaces.get(namespaces[n]).is_some_and(|ns| ns.face(f).is_some());
                        s.on_data(&interest(n, i).as_view(), f, u64::from(rtt), now);
                        if known {
                            proptest::prop_assert_eq!(s.status(namespaces[n], f), FaceStatus::Measured(f64::from(rtt)));
                            let mut out = Vec::new();
                            s.ranked(namespaces[n], &hops(), |_| true, &mut out);
                            let at = out.iter().position(|&x| x == f);
                            for (j, &other) in out.iter().enumerate() {
                                if !matches!(s.status(namespaces[n], other), FaceStatus::Measured(_)) {
                                    proptest::prop_assert!(at.is_none_or(|at| at < j), "{f} answered but ranks below {other}");
                                }
                            }
                        }
                    }
                    Op::Nack(n, f, i) => {
                        let known = s.namespaces.get(namespaces[n]).is_some_and(|ns| ns.face(f).is_some());
                        s.on_nack(&interest(n, i).as_view(), f, now);
                        if known {
                            proptest::prop_assert_eq!(s.status(namespaces[n], f), FaceStatus::TimedOut);
                        }
                    }
                    Op::Late(f, i) => {
                        s.expect_late(interest(0, i).value(), f, now, now + 1000);
                        proptest::prop_assert!(s.on_late_data(&interest(0, i).as_view(), f, now));
                    }
                    Op::Probe(n, used) => {
                        let eligible = |f: FaceId| f != B;
                        if let Some(f) = s.probe(namespaces[n], &hops(), eligible, used, now, &p) {
                            proptest::prop_assert!(f != used && f != B && hops().iter().any(|h| u64::from(h.face) == f));
                        }
                    }
                    Op::Down(f) => {
                        s.face_down(f);
                        proptest::prop_assert!(namespaces.iter().all(|ns| s.status(ns, f) == FaceStatus::Unmeasured));
                    }
                    Op::Wait(ms) => {
                        now += u64::from(ms);
                        s.due(now);
                    }
                }
                for ns in namespaces {
                    let mut out = Vec::new();
                    s.ranked(ns, &hops(), |f| f != A, &mut out);
                    out.sort_unstable();
                    proptest::prop_assert_eq!(out, vec![B, C]);
                }
            }
        }
    }

    #[test]
    fn late_data_is_measured_and_measurements_lapse() {
        let mut s = AsfState::default();
        let p = AsfParams { probing_interval_ms: 1000, measurements_lifetime_ms: 2000, max_timeouts: 3, ..AsfParams::default() };
        let n = name("/a/1");
        s.sent(NS, A, n.value(), 0, &p);
        s.sent(NS, B, n.value(), 0, &p);
        s.on_data(&n.as_view(), A, 10, 10);
        s.expect_late(n.value(), B, 0, 4000);
        assert!(!s.on_late_data(&n.as_view(), C, 30), "not from that face");
        assert!(!s.on_late_data(&name("/a/2").as_view(), B, 30), "not that name");
        assert!(s.on_late_data(&n.as_view(), B, 30));
        assert_eq!(s.status(NS, B), FaceStatus::Measured(30.0));
        assert!(!s.on_late_data(&n.as_view(), B, 31), "once");
        s.face_down(B);
        assert_eq!(s.status(NS, B), FaceStatus::Unmeasured);
        s.due(2009);
        assert_eq!(s.status(NS, A), FaceStatus::Measured(10.0));
        s.due(3100); // swept once a second
        assert_eq!(s.status(NS, A), FaceStatus::Unmeasured, "lapsed 2 s after its last use");
    }
}
