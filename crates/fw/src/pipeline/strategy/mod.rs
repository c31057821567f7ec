//! Forwarding strategies and the table that picks one per name prefix.
//!
//! - best-route: an Interest goes to the lowest-cost next hop that is not where it came from.
//!   A Nack from that upstream, or another Interest for the name (a retransmission, or another
//!   consumer's) past the suppression interval (below), moves it to the next unused next hop by
//!   cost; when all have been used, it goes to the one used longest ago. When every upstream
//!   has Nacked, the downstreams get a Nack with the least severe reason.
//! - multicast: an Interest goes to every next hop except where it came from; the downstreams
//!   get a Nack once every upstream has Nacked.
//! - access (NFD's, for access routers and hosts with several uplinks): an Interest goes to the
//!   upstream that last brought Data for its prefix alone, and to every next hop when there is
//!   none or it is slow (the shard keeps what this needs: [`crate::pipeline::strategy::access`]); otherwise as
//!   multicast.
//! - asf (NFD's Adaptive Smoothed RTT-based Forwarding): an Interest goes to the upstream that
//!   answers fastest, now and then with a probe to another (the shard keeps the measurements:
//!   [`crate::pipeline::strategy::asf`]); a retransmission goes to the best upstream not yet used, else the one used
//!   longest ago; a Nack is passed on once every upstream has Nacked.
//! - self-learning (NFD's, for LANs and ad hoc networks where no routing runs): an Interest
//!   with a route goes to every next hop marked NonDiscovery; a *discovery* Interest (not so
//!   marked) with no route is broadcast on every face to another host; the Data that answers it
//!   carries a prefix announcement from the producer's forwarder, and each forwarder on the way
//!   back learns a route from it (the shard keeps the announcements to attach and asks the RIB
//!   to learn: [`crate::pipeline`]). A Nack NoRoute along a learned route unlearns it. As NFD's, it
//!   Nacks only a NonDiscovery Interest with no route; one whose route (or broadcast) leaves no
//!   eligible face is dropped without a Nack (counted `no-eligible-hop`), since a Nack NoRoute
//!   would make a self-learning downstream unlearn its route through this forwarder.
//! - random (NFD's): an Interest, and each retransmission, goes to one next hop picked at
//!   random among those that are not where it came from (a draw the shard supplies); the
//!   downstreams get a Nack once every upstream used has Nacked.
//!
//! An Interest for a name already pending upstream (another consumer's, or a retransmission)
//! is forwarded again or aggregated as NFD's strategies suppress retransmissions
//! ([`retx_suppression::RetxSuppression`]): best-route and ASF per entry, with an
//! interval that starts at the forwarder's `retry_interval_ms` (NFD's 10 ms) and doubles at
//! each forwarding up to 250 ms; multicast the same per upstream; access within a fixed
//! 100 ms; random and self-learning not at all.
//!
//! Strategy names are NFD's: `/localhost/nfd/strategy/best-route`,
//! `/localhost/nfd/strategy/multicast`, `/localhost/nfd/strategy/access`,
//! `/localhost/nfd/strategy/asf`, `/localhost/nfd/strategy/self-learning` and
//! `/localhost/nfd/strategy/random`, with or without NFD's version component (v=5 for
//! best-route, multicast and ASF, v=1 for access, self-learning and random; another version is
//! refused, as NFD refuses it). A strategy is named back with its version, as NFD names its
//! instances ([`Strategy::name`]).
//! Parameters follow the version: best-route, multicast and ASF take retransmission
//! suppression's (`…/best-route/v=5/retx-suppression-initial~20/retx-suppression-max~500/retx-suppression-multiplier~1.5`),
//! ASF its own too (`…/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000`).
//! An unknown parameter is refused with its name (NFD ignores it), so a misspelt one is not
//! silently lost.

use nexthop_lookup::name::NextHop;

use crate::face::FaceId;
use crate::pipeline::strategy::retx_suppression::{RetxSuppression, ACCESS_RETX_SUPPRESSION_MS};
use crate::table::pit::OutRecord;
use crate::table::strategy_choice::Strategy;

pub mod access;
pub mod asf;
pub mod retx_suppression;

impl Strategy {
    /// How it suppresses retransmissions ([`RetxSuppression`]), as NFD's does.
    pub fn retx_suppression(self) -> RetxSuppression {
        match self {
            Strategy::BestRoute(p) => RetxSuppression::PerEntry(p),
            Strategy::Asf(p) => RetxSuppression::PerEntry(p.retx),
            Strategy::Multicast(p) => RetxSuppression::PerUpstream(p),
            Strategy::Access => RetxSuppression::Fixed(ACCESS_RETX_SUPPRESSION_MS),
            Strategy::SelfLearning | Strategy::Random => RetxSuppression::None,
        }
    }

    /// Next hops for a new Interest from `downstream`, appended to `out`; `draw` is a random
    /// number (random picks the next hop with it).
    pub fn first_hops(self, hops: &[NextHop], downstream: FaceId, draw: u32, out: &mut Vec<FaceId>) {
        let eligible = hops.iter().filter(|h| u64::from(h.face) != downstream);
        match self {
            Strategy::Random => {
                let n = eligible.clone().count();
                out.extend(eligible.clone().nth(draw as usize % n.max(1)).map(|h| u64::from(h.face)));
            }
            // ASF: with nothing measured (the shard ranks by measurements first), the cheapest.
            Strategy::BestRoute(_) | Strategy::Asf(_) => out.extend(eligible.min_by_key(|h| (h.cost, h.face)).map(|h| u64::from(h.face))),
            // Access: with no working upstream known (the shard asks first), every next hop.
            // Self-learning: a route's every next hop (the shard broadcasts when there is none).
            Strategy::Multicast(_) | Strategy::Access | Strategy::SelfLearning => out.extend(eligible.map(|h| u64::from(h.face))),
        }
    }

    /// Next hops when the consumer retransmits: best-route moves on to the cheapest unused next
    /// hop, or the one used longest ago; multicast sends to all again; random picks again.
    pub fn retry_hops(self, hops: &[NextHop], downstream: FaceId, used: &[OutRecord], draw: u32, out: &mut Vec<FaceId>) {
        match self {
            Strategy::Multicast(_) | Strategy::Access | Strategy::SelfLearning | Strategy::Random => {
                self.first_hops(hops, downstream, draw, out)
            }
            Strategy::BestRoute(_) | Strategy::Asf(_) => {
                let eligible = || hops.iter().filter(|h| u64::from(h.face) != downstream);
                let unused = eligible().filter(|h| !used.iter().any(|r| r.face == u64::from(h.face))).min_by_key(|h| (h.cost, h.face));
                let oldest = || eligible().min_by_key(|h| used.iter().find(|r| r.face == u64::from(h.face)).map_or(0, |r| r.sent_ms));
                out.extend(unused.or_else(oldest).map(|h| u64::from(h.face)));
            }
        }
    }

    /// Next hop after a Nack: best-route tries the cheapest next hop not yet used; multicast
    /// waits for the others.
    pub fn after_nack(self, hops: &[NextHop], downstreams: &[FaceId], used: &[OutRecord]) -> Option<FaceId> {
        match self {
            Strategy::Multicast(_) | Strategy::Access | Strategy::Asf(_) | Strategy::SelfLearning | Strategy::Random => None,
            Strategy::BestRoute(_) => hops
                .iter()
                .filter(|h| !downstreams.contains(&u64::from(h.face)) && !used.iter().any(|r| r.face == u64::from(h.face)))
                .min_by_key(|h| (h.cost, h.face))
                .map(|h| u64::from(h.face)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(face: u32, cost: u32) -> NextHop {
        NextHop { face, cost }
    }

    fn out(face: FaceId, sent_ms: u64) -> OutRecord {
        OutRecord { face, nonce: [0; 4], sent_ms, nack: None, non_discovery: false, retx_interval_ms: 0 }
    }

    #[test]
    fn best_route_picks_cheapest_not_downstream() {
        let hops = [hop(300, 10), hop(301, 5), hop(302, 1)];
        let mut v = Vec::new();
        Strategy::BEST_ROUTE.first_hops(&hops, 302, 0, &mut v);
        assert_eq!(v, [301]);
        v.clear();
        Strategy::MULTICAST.first_hops(&hops, 302, 0, &mut v);
        assert_eq!(v, [300, 301]);
    }

    #[test]
    fn best_route_retries_unused_then_oldest() {
        let hops = [hop(300, 10), hop(301, 5)];
        let mut v = Vec::new();
        Strategy::BEST_ROUTE.retry_hops(&hops, 1, &[out(301, 10)], 0, &mut v);
        assert_eq!(v, [300]);
        v.clear();
        Strategy::BEST_ROUTE.retry_hops(&hops, 1, &[out(301, 10), out(300, 20)], 0, &mut v);
        assert_eq!(v, [301]);
        assert_eq!(Strategy::BEST_ROUTE.after_nack(&hops, &[1], &[out(301, 0)]), Some(300));
        assert_eq!(Strategy::BEST_ROUTE.after_nack(&hops, &[1], &[out(301, 0), out(300, 0)]), None);
        assert_eq!(Strategy::MULTICAST.after_nack(&hops, &[1], &[out(301, 0)]), None);
    }

    #[test]
    fn random_picks_one_eligible_next_hop_by_the_draw() {
        let hops: Vec<NextHop> = [300u32, 301, 302].iter().map(|&f| NextHop { face: f, cost: 10 }).collect();
        let mut picked = std::collections::BTreeMap::new();
        for draw in 0..300u32 {
            let mut v = Vec::new();
            Strategy::Random.first_hops(&hops, 302, draw, &mut v);
            assert_eq!(v.len(), 1);
            *picked.entry(v[0]).or_insert(0) += 1;
            let mut again = Vec::new();
            Strategy::Random.retry_hops(&hops, 302, &[], draw, &mut again);
            assert_eq!(again, v, "a retransmission draws again, the same way");
        }
        assert_eq!(picked.into_iter().collect::<Vec<_>>(), [(300, 150), (301, 150)], "never where it came from");
        let mut none = Vec::new();
        Strategy::Random.first_hops(&hops[2..], 302, 7, &mut none);
        assert!(none.is_empty(), "no eligible next hop: none");
        assert_eq!(Strategy::Random.after_nack(&hops, &[302], &[]), None, "waits for every upstream's Nack");
        let name = Strategy::Random.name();
        assert_eq!(name.to_string(), "/localhost/nfd/strategy/random/v=1");
        assert_eq!(Strategy::from_name(&name.as_view()), Some(Strategy::Random));
    }
}
