//! What NFD's *access* strategy remembers (`/localhost/nfd/strategy/access`): for a name
//! prefix, the upstream that last brought its Data and how long it takes, so that later
//! Interests under it go there alone, and to every upstream only when that one is slow.
//!
//! # Overview
//! - A new Interest whose name falls under a remembered prefix goes to the prefix's last
//!   working upstream alone (if it is still a next hop, not where the Interest came from), with
//!   a timer of the prefix's retransmission timeout (RTO); with nothing remembered, or when that
//!   upstream cannot be used, it goes to every next hop. A consumer's retransmission goes to
//!   every next hop.
//! - When the timer fires before Data came back, the Interest goes to every other next hop.
//! - Data from an upstream records the round trip (from when the Interest was last sent there)
//!   under the Data name's parent prefix (`/video/v=1` for `/video/v=1/seg=3`), kept 8 s past
//!   the last Data; a new upstream there starts from that upstream's own estimate.
//! - RTT estimates are RFC 6298's ([`crate::lp::rtt`]).
//!
//! - Retransmissions are suppressed within a fixed 100 ms; it takes no parameters.
//!
//! [`Access`] is the strategy; [`AccessState`] what it remembers.

use hashbrown::HashMap;
use nexthop_wire::NameView;

use super::multicast::send_to_all;
use super::retx_suppression::{RetxSuppression, ACCESS_RETX_SUPPRESSION_MS};
use super::{no_parameters, DataContext, ForwardingStrategy, InterestContext, Made, Timer};
use crate::face::FaceId;
use crate::lp::rtt::RttEstimator;

/// How long a prefix's measurements live after its last Data (ms).
const LIFETIME_MS: u64 = 8000;
/// Prefixes remembered at most (the stalest goes first beyond it, as expiry would).
const MAX_PREFIXES: usize = 1 << 16;

/// A prefix's last working upstream.
#[derive(Debug, Clone, Copy)]
struct Prefix {
    upstream: FaceId,
    rtt: RttEstimator,
    expires_ms: u64,
}

/// The access strategy's measurements and timers.
#[derive(Debug, Default)]
pub struct AccessState {
    faces: HashMap<FaceId, RttEstimator>,
    prefixes: HashMap<Box<[u8]>, Prefix>,
    timers: Vec<Timer>,
}

impl AccessState {
    /// The last working upstream for `name` (its longest remembered prefix) and its RTO, at
    /// `now_ms`.
    pub fn upstream(&self, name: &NameView<'_>, now_ms: u64) -> Option<(FaceId, u64)> {
        if self.prefixes.is_empty() {
            return None;
        }
        (0..=name.len()).rev().find_map(|n| {
            let p = self.prefixes.get(name.prefix(n).value())?;
            (p.expires_ms > now_ms).then(|| (p.upstream, p.rtt.rto_ms()))
        })
    }

    /// Data named `name` came from `upstream` `rtt_ms` after the Interest was sent there.
    pub fn on_data(&mut self, upstream: FaceId, name: &NameView<'_>, rtt_ms: u64, now_ms: u64) {
        let face = self.faces.entry(upstream).or_default();
        face.add(rtt_ms as f64);
        let face = *face;
        let key = name.prefix(name.len().saturating_sub(1)).value();
        if self.prefixes.len() >= MAX_PREFIXES && !self.prefixes.contains_key(key) {
            forget_stale(&mut self.prefixes, now_ms, |p| p.expires_ms);
        }
        let expires_ms = now_ms + LIFETIME_MS;
        match self.prefixes.get_mut(key) {
            Some(p) if p.upstream == upstream => {
                p.rtt.add(rtt_ms as f64);
                p.expires_ms = expires_ms;
            }
            Some(p) => *p = Prefix { upstream, rtt: face, expires_ms },
            None => {
                self.prefixes.insert(key.into(), Prefix { upstream, rtt: face, expires_ms });
            }
        }
    }

    /// Starts a timer.
    pub fn schedule(&mut self, timer: Timer) {
        self.timers.push(timer);
    }

    /// Removes and returns the timers due at `now_ms`; also forgets lapsed prefixes.
    pub fn due(&mut self, now_ms: u64) -> Vec<Timer> {
        if !self.prefixes.is_empty() {
            self.prefixes.retain(|_, p| p.expires_ms > now_ms);
        }
        let mut due = Vec::new();
        self.timers.retain(|t| {
            let fired = t.due_ms <= now_ms;
            if fired {
                due.push(*t);
            }
            !fired
        });
        due
    }

    /// Forgets a face that has gone.
    pub fn face_down(&mut self, face: FaceId) {
        self.faces.remove(&face);
        self.prefixes.retain(|_, p| p.upstream != face);
        self.timers.retain(|t| t.upstream != face && t.downstream != face);
    }

    /// Timers running.
    pub fn timers(&self) -> usize {
        self.timers.len()
    }
}

/// The access strategy.
#[derive(Debug, Default)]
pub struct Access {
    state: AccessState,
}

/// An access instance (it takes no parameters).
///
/// # Errors
/// Any parameter.
pub fn make(parameters: &[(&str, &str)], _seed: u64) -> Made {
    no_parameters("access", parameters)?;
    Ok(Box::<Access>::default())
}

impl ForwardingStrategy for Access {
    fn retx_suppression(&self) -> RetxSuppression {
        RetxSuppression::Fixed(ACCESS_RETX_SUPPRESSION_MS)
    }

    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>) {
        let hops = ctx.route.map_or(&[][..], |r| r.hops);
        let unicast = ctx
            .is_new
            .then(|| self.state.upstream(&ctx.name, ctx.now_ms))
            .flatten()
            .filter(|&(up, _)| ctx.faces.eligible(up) && hops.iter().any(|h| u64::from(h.face) == up));
        match unicast {
            Some((upstream, rto_ms)) => {
                ctx.send_to(upstream);
                let (slot, generation, downstream) = (ctx.slot, ctx.generation, ctx.downstream);
                self.state.schedule(Timer { due_ms: ctx.now_ms + rto_ms, slot, generation, downstream, upstream });
            }
            None => send_to_all(ctx),
        }
    }

    fn after_receive_data(&mut self, ctx: &mut DataContext<'_>) {
        if let Some(r) = ctx.entry.out_records.iter().find(|r| r.face == ctx.upstream) {
            self.state.on_data(ctx.upstream, &ctx.name, ctx.now_ms.saturating_sub(r.sent_ms), ctx.now_ms);
        }
    }

    /// The one upstream did not answer within its RTO: every other next hop.
    fn on_timer(&mut self, ctx: &mut InterestContext<'_>, timer: &Timer) {
        let others: Vec<FaceId> = ctx.eligible_hops().map(|h| u64::from(h.face)).filter(|&f| f != timer.upstream).collect();
        for face in others {
            ctx.send_to(face);
        }
    }

    fn tick(&mut self, now_ms: u64, fired: &mut Vec<Timer>) {
        fired.extend(self.state.due(now_ms));
    }

    fn face_down(&mut self, face: FaceId) {
        self.state.face_down(face);
    }
}

/// Drops the entries of a full table of measurements that lapsed by `now_ms`, or, if none
/// has, the stalest half (by `expires`): what a bounded table does where expiry would.
pub(crate) fn forget_stale<K, V>(table: &mut HashMap<K, V>, now_ms: u64, expires: impl Fn(&V) -> u64) {
    let before = table.len();
    table.retain(|_, v| expires(v) > now_ms);
    if table.len() == before && !table.is_empty() {
        let mut ends: Vec<u64> = table.values().map(&expires).collect();
        ends.sort_unstable();
        let median = ends[ends.len() / 2];
        table.retain(|_, v| expires(v) > median);
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::*;

    #[test]
    fn data_teaches_the_parent_prefix_its_upstream() {
        let mut a = AccessState::default();
        let n = |s: &str| Name::from_uri(s).unwrap();
        assert_eq!(a.upstream(&n("/v/1/seg0").as_view(), 0), None);
        a.on_data(301, &n("/v/1/seg0").as_view(), 40, 0);
        assert_eq!(a.upstream(&n("/v/1/seg1").as_view(), 100), Some((301, 200)));
        assert_eq!(a.upstream(&n("/v/1").as_view(), 100), Some((301, 200)));
        assert_eq!(a.upstream(&n("/v/2/seg0").as_view(), 100), None, "another prefix");
        // Another upstream answers: it takes over, with its own estimate.
        a.on_data(302, &n("/v/1/seg1").as_view(), 500, 200);
        assert_eq!(a.upstream(&n("/v/1/seg2").as_view(), 300), Some((302, 1500)));
        assert_eq!(a.upstream(&n("/v/1/seg2").as_view(), 8200), None, "8 s after its last Data");
        a.on_data(302, &n("/v/1/seg3").as_view(), 500, 9000);
        a.face_down(302);
        assert_eq!(a.upstream(&n("/v/1/seg4").as_view(), 9100), None);
    }

    #[test]
    fn a_full_table_forgets_the_lapsed_or_else_the_stalest_half() {
        let mut t: HashMap<u32, u64> = (0..10).map(|k| (k, 100 + u64::from(k))).collect();
        forget_stale(&mut t, 103, |&e| e);
        assert_eq!(t.len(), 6, "the four lapsed ones");
        forget_stale(&mut t, 0, |&e| e);
        let mut left: Vec<u32> = t.into_keys().collect();
        left.sort_unstable();
        assert_eq!(left, [8, 9], "none lapsed: those past the median stay");
    }

    #[test]
    fn timers_fire_once_when_due() {
        let mut a = AccessState::default();
        let t = Timer { due_ms: 500, slot: 3, generation: 1, downstream: 300, upstream: 301 };
        a.schedule(t);
        assert!(a.due(499).is_empty());
        assert_eq!(a.due(500), [t]);
        assert!(a.due(1000).is_empty());
        a.schedule(t);
        a.face_down(300);
        assert_eq!(a.timers(), 0);
    }
}
