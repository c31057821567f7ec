//! Strategy choice: which forwarding strategy, with its parameters, applies under each name
//! prefix (NFD's StrategyChoice table).
//!
//! # Overview
//! [`Strategy`] names a strategy and carries its parameters; it is a plain value that PIT
//! entries keep and management lists. Its names are NFD's (`/localhost/nfd/strategy/best-route/v=5`,
//! with the parameters that differ from the defaults after the version); [`Strategy::parse`]
//! refuses an unknown strategy, version or parameter by name. [`StrategyTable`] gives the
//! strategy of a name: the longest matching choice, with `/` always present. What each
//! strategy does with an Interest is `crate::pipeline::strategy`'s.

use nexthop_wire::{Component, Kind, Name, NameView};

use crate::table::strategy_params::{AsfParams, RetxParams};

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
