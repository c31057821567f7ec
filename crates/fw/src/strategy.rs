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
//!   none or it is slow (the shard keeps what this needs: [`crate::access`]); otherwise as
//!   multicast.
//! - asf (NFD's Adaptive Smoothed RTT-based Forwarding): an Interest goes to the upstream that
//!   answers fastest, now and then with a probe to another (the shard keeps the measurements:
//!   [`crate::asf`]); a retransmission goes to the best upstream not yet used, else the one used
//!   longest ago; a Nack is passed on once every upstream has Nacked.
//! - self-learning (NFD's, for LANs and ad hoc networks where no routing runs): an Interest
//!   with a route goes to every next hop marked NonDiscovery; a *discovery* Interest (not so
//!   marked) with no route is broadcast on every face to another host; the Data that answers it
//!   carries a prefix announcement from the producer's forwarder, and each forwarder on the way
//!   back learns a route from it (the shard keeps the announcements to attach and asks the RIB
//!   to learn: [`crate::shard`]). A Nack NoRoute along a learned route unlearns it. As NFD's, it
//!   Nacks only a NonDiscovery Interest with no route; one whose route (or broadcast) leaves no
//!   eligible face is dropped without a Nack (counted `no-eligible-hop`), since a Nack NoRoute
//!   would make a self-learning downstream unlearn its route through this forwarder.
//! - random (NFD's): an Interest, and each retransmission, goes to one next hop picked at
//!   random among those that are not where it came from (a draw the shard supplies); the
//!   downstreams get a Nack once every upstream used has Nacked.
//!
//! An Interest for a name already pending upstream (another consumer's, or a retransmission)
//! is forwarded again or aggregated as NFD's strategies suppress retransmissions
//! ([`RetxSuppression`], [`crate::retx_suppression`]): best-route and ASF per entry, with an
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
use nexthop_wire::{Component, Kind, Name, NameView};

use crate::asf::AsfParams;
use crate::face::FaceId;
use crate::pit::OutRecord;
pub use crate::retx_suppression::{RetxParams, RetxSuppression, ACCESS_RETX_SUPPRESSION_MS};

/// A forwarding strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Lowest cost first, retry on another next hop.
    BestRoute(RetxParams),
    /// Every next hop.
    Multicast(RetxParams),
    /// The last working upstream of the prefix, else every next hop.
    Access,
    /// The fastest upstream, measured and probed.
    Asf(AsfParams),
    /// Every next hop of a known route, else a broadcast that learns one.
    SelfLearning,
    /// One next hop picked at random.
    Random,
}

impl Default for Strategy {
    fn default() -> Self {
        Strategy::BEST_ROUTE
    }
}

impl Strategy {
    /// best-route with NFD's default parameters (the root's strategy).
    pub const BEST_ROUTE: Strategy = Strategy::BestRoute(RetxParams::DEFAULT);
    /// multicast with NFD's default parameters.
    pub const MULTICAST: Strategy = Strategy::Multicast(RetxParams::DEFAULT);

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

    /// The strategy's kind, as its name has it (`best-route`).
    pub fn kind(self) -> &'static str {
        match self {
            Strategy::BestRoute(_) => "best-route",
            Strategy::Multicast(_) => "multicast",
            Strategy::Access => "access",
            Strategy::Asf(_) => "asf",
            Strategy::SelfLearning => "self-learning",
            Strategy::Random => "random",
        }
    }

    /// The version of NFD's strategy of this kind that nexthop's follows.
    pub fn version(self) -> u64 {
        match self {
            Strategy::BestRoute(_) | Strategy::Multicast(_) | Strategy::Asf(_) => 5,
            Strategy::Access | Strategy::SelfLearning | Strategy::Random => 1,
        }
    }

    /// The parameters that differ from the defaults, as name components' text.
    fn parameters(self) -> Vec<String> {
        match self {
            Strategy::BestRoute(p) | Strategy::Multicast(p) => p.components(),
            Strategy::Asf(p) => p.components(),
            Strategy::Access | Strategy::SelfLearning | Strategy::Random => Vec::new(),
        }
    }

    /// The strategy's instance name as NFD gives it: its version, then the parameters that
    /// differ from the defaults (`/localhost/nfd/strategy/best-route/v=5`,
    /// `/localhost/nfd/strategy/best-route/v=5/retx-suppression-max~500`).
    pub fn name(self) -> Name {
        let mut name =
            Name::from_uri("/localhost/nfd/strategy").expect("parses").with_generic(self.kind()).with(Component::version(self.version()));
        for p in self.parameters() {
            name = name.with_generic(p);
        }
        name
    }

    /// The strategy a name asks for (`…/strategy/<kind>[/<version>[/<parameter>~<value>…]]`).
    pub fn from_name(name: &NameView<'_>) -> Option<Strategy> {
        Strategy::parse(name).ok()
    }

    /// [`Strategy::from_name`], saying what is wrong with a name it refuses.
    ///
    /// # Errors
    /// Not a strategy name, an unknown strategy or version (NFD's are best-route, multicast and
    /// asf v=5, access, self-learning and random v=1), or parameters it does not take: an
    /// unknown one is refused (NFD ignores it), so that a misspelt parameter is not lost.
    pub fn parse(name: &NameView<'_>) -> Result<Strategy, String> {
        let prefix = Name::from_uri("/localhost/nfd/strategy").expect("parses");
        if !prefix.as_view().is_prefix_of(name) || name.len() < 4 {
            return Err("not a strategy name".into());
        }
        let version = match name.get(4).map(|c| c.kind()) {
            None => None,
            Some(Kind::Version(v)) => Some(v),
            Some(_) => return Err("parameters follow a version component".into()),
        };
        let mut strategy = match name.get(3).map(|c| c.value()).unwrap_or_default() {
            b"best-route" => Strategy::BEST_ROUTE,
            b"multicast" => Strategy::MULTICAST,
            b"access" => Strategy::Access,
            b"self-learning" => Strategy::SelfLearning,
            b"random" => Strategy::Random,
            b"asf" => Strategy::Asf(AsfParams::default()),
            _ => return Err("unknown strategy".into()),
        };
        if version.is_some_and(|v| v != strategy.version()) {
            return Err(format!("{} has version {}, not {}", strategy.kind(), strategy.version(), version.unwrap_or_default()));
        }
        for c in (5..name.len()).filter_map(|i| name.get(i)) {
            let text = std::str::from_utf8(c.value()).map_err(|_| "strategy parameters are text".to_string())?;
            let (key, value) = text
                .split_once('~')
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .ok_or_else(|| format!("parameter {text:?} is not name~value"))?;
            let known = match &mut strategy {
                Strategy::BestRoute(p) | Strategy::Multicast(p) => p.parse_parameter(key, value)?,
                Strategy::Asf(p) => p.parse_parameter(key, value)?,
                Strategy::Access | Strategy::SelfLearning | Strategy::Random => {
                    return Err(format!("{} takes no parameters", strategy.kind()))
                }
            };
            if !known {
                return Err(format!("{} has no parameter {key:?}", strategy.kind()));
            }
        }
        match strategy {
            Strategy::BestRoute(p) | Strategy::Multicast(p) => p.check()?,
            Strategy::Asf(p) => p.check()?,
            Strategy::Access | Strategy::SelfLearning | Strategy::Random => {}
        }
        Ok(strategy)
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

/// The full name of a strategy given by its short one (`asf` → `/localhost/nfd/strategy/asf`,
/// as nfdc takes them); a full name is returned as it is.
pub fn full_name(text: &str) -> String {
    if text.starts_with('/') {
        text.to_string()
    } else {
        format!("/localhost/nfd/strategy/{text}")
    }
}

/// The strategy chosen for each name prefix; the longest matching choice wins, `/` is always
/// present.
#[derive(Debug, Clone)]
pub struct StrategyTable {
    choices: hashbrown::HashMap<Box<[u8]>, Strategy>,
    deepest: usize,
}

impl Default for StrategyTable {
    fn default() -> Self {
        let mut choices = hashbrown::HashMap::new();
        choices.insert(Box::<[u8]>::default(), Strategy::BEST_ROUTE);
        StrategyTable { choices, deepest: 0 }
    }
}

impl StrategyTable {
    /// Chooses `strategy` under `prefix`.
    pub fn set(&mut self, prefix: &NameView<'_>, strategy: Strategy) {
        self.choices.insert(prefix.value().into(), strategy);
        self.deepest = self.deepest.max(prefix.len());
    }

    /// Removes the choice at `prefix` (the root choice stays); whether there was one.
    pub fn unset(&mut self, prefix: &NameView<'_>) -> bool {
        !prefix.is_empty() && self.choices.remove(prefix.value()).is_some()
    }

    /// The strategy for `name`.
    pub fn find(&self, name: &NameView<'_>) -> Strategy {
        if self.choices.len() == 1 {
            return self.choices.values().next().copied().unwrap_or_default();
        }
        for n in (0..=name.len().min(self.deepest)).rev() {
            if let Some(&s) = self.choices.get(name.prefix(n).value()) {
                return s;
            }
        }
        Strategy::BEST_ROUTE
    }

    /// Every (prefix TLV-VALUE, strategy).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], Strategy)> + '_ {
        self.choices.iter().map(|(k, &v)| (&**k, v))
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

    #[test]
    fn names_parse() {
        let tuned = AsfParams { probing_interval_ms: 30_000, max_timeouts: 2, measurements_lifetime_ms: 120_000, ..AsfParams::default() };
        for s in [
            Strategy::BEST_ROUTE,
            Strategy::MULTICAST,
            Strategy::Access,
            Strategy::Asf(AsfParams::default()),
            Strategy::Asf(tuned),
            Strategy::SelfLearning,
        ] {
            assert_eq!(Strategy::from_name(&s.name().as_view()), Some(s), "{}", s.name());
        }
        assert_eq!(Strategy::Asf(AsfParams::default()).name().to_string(), "/localhost/nfd/strategy/asf/v=5");
        assert_eq!(Strategy::BEST_ROUTE.name().to_string(), "/localhost/nfd/strategy/best-route/v=5", "as NFD lists it");
        assert_eq!(
            Strategy::Asf(tuned).name().to_string(),
            "/localhost/nfd/strategy/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000"
        );
        let parse = |s: &str| Strategy::parse(&Name::from_uri(s).unwrap().as_view());
        assert_eq!(
            parse("/localhost/nfd/strategy/asf/v=5/max-timeouts~5"),
            Ok(Strategy::Asf(AsfParams { max_timeouts: 5, ..AsfParams::default() }))
        );
        for bad in [
            "/localhost/nfd/strategy/asf/v=5/probing-interval~999",
            "/localhost/nfd/strategy/asf/v=5/max-timeouts~0",
            "/localhost/nfd/strategy/asf/v=5/max-timeouts~-1",
            "/localhost/nfd/strategy/asf/v=5/probing-interval~400000",
            "/localhost/nfd/strategy/asf/v=5/retx-suppression-multiplier~0.5",
            "/localhost/nfd/strategy/asf/v=5/max-timeouts",
            "/localhost/nfd/strategy/asf/v=5/~2",
            "/localhost/nfd/strategy/asf/v=5/max-timeouts~",
            "/localhost/nfd/strategy/asf/max-timeouts~2",
            "/localhost/nfd/strategy/asf/v=4",
            "/localhost/nfd/strategy/best-route/v=5/max-timeouts~2",
            "/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~0",
            "/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~300/retx-suppression-max~200",
            "/localhost/nfd/strategy/best-route/v=1",
            "/localhost/nfd/strategy/multicast/v=5/retx-suppression-multiplier~two",
            "/localhost/nfd/strategy/access/v=1/retx-suppression-max~500",
            "/localhost/nfd/strategy/access/v=5",
            "/localhost/nfd/strategy/random/v=1/x~1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let retx = RetxParams::new(Some(20), 500, 1.5).unwrap();
        let tuned_retx = [Strategy::BestRoute(retx), Strategy::Multicast(retx), Strategy::Asf(AsfParams { retx, ..AsfParams::default() })];
        for s in tuned_retx {
            assert_eq!(Strategy::from_name(&s.name().as_view()), Some(s), "{}", s.name());
            let kind = s.kind();
            let text = format!(
                "/localhost/nfd/strategy/{kind}/v=5/retx-suppression-initial~20/retx-suppression-max~500/retx-suppression-multiplier~1.5"
            );
            assert_eq!(s.name().to_string(), text);
            assert_eq!(parse(&text), Ok(s));
        }
        assert_eq!(
            parse("/localhost/nfd/strategy/best-route/v=5/retx-suppression-max~100"),
            Ok(Strategy::BestRoute(RetxParams::new(None, 100, 2.0).unwrap()))
        );
        let v = Name::from_uri("/localhost/nfd/strategy/multicast").unwrap().with(nexthop_wire::Component::version(5));
        assert_eq!(Strategy::from_name(&v.as_view()), Some(Strategy::MULTICAST));
        assert_eq!(Strategy::from_name(&Name::from_uri("/localhost/nfd/strategy/ncc").unwrap().as_view()), None);
    }

    #[test]
    fn table_longest_match() {
        let mut t = StrategyTable::default();
        let n = |s| Name::from_uri(s).unwrap();
        assert_eq!(t.find(&n("/a/b").as_view()), Strategy::BEST_ROUTE);
        t.set(&n("/a").as_view(), Strategy::MULTICAST);
        assert_eq!(t.find(&n("/a/b").as_view()), Strategy::MULTICAST);
        assert_eq!(t.find(&n("/b").as_view()), Strategy::BEST_ROUTE);
        assert!(t.unset(&n("/a").as_view()));
        assert!(!t.unset(&n("/").as_view()));
        assert_eq!(t.find(&n("/a/b").as_view()), Strategy::BEST_ROUTE);
    }
}
