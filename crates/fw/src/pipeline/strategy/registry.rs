//! The strategies by name: NFD's names and versions, and an instance made from a name.
//!
//! # Overview
//! A strategy is named as NFD names it, `/localhost/nfd/strategy/<kind>/v=<version>`, with its
//! parameters after the version (`…/best-route/v=5/retx-suppression-max~500`). [`STRATEGIES`]
//! lists each kind, the version of NFD's that it follows, and how to make an instance from the
//! parameters. [`StrategyName::parse`] takes a name with or without the version (another version
//! is refused, as NFD refuses it) and refuses an unknown kind or parameter by name (NFD ignores
//! an unknown parameter; refusing it keeps a misspelt one from being lost silently). A
//! [`StrategyName`] is the canonical instance name — version given, only the parameters that
//! differ from the defaults — which management lists and the pipeline makes instances from.

use nexthop_wire::{Component, Kind, Name, NameView};

use super::{access, asf, best_route, multicast, random, self_learning, ForwardingStrategy, Made};

/// A strategy kind the forwarder has.
#[derive(Debug)]
pub struct Registered {
    /// Its name component (`best-route`).
    pub kind: &'static str,
    /// The version of NFD's strategy of this kind that it follows.
    pub version: u64,
    /// An instance from its name's parameters (`name~value`), its random draws seeded.
    pub make: fn(&[(&str, &str)], u64) -> Made,
}

/// Every strategy, the root's default (best-route) first.
pub const STRATEGIES: &[Registered] = &[
    Registered { kind: "best-route", version: 5, make: best_route::make },
    Registered { kind: "multicast", version: 5, make: multicast::make },
    Registered { kind: "access", version: 1, make: access::make },
    Registered { kind: "asf", version: 5, make: asf::make },
    Registered { kind: "self-learning", version: 1, make: self_learning::make },
    Registered { kind: "random", version: 1, make: random::make },
];

/// The prefix of every strategy name.
const PREFIX: &str = "/localhost/nfd/strategy";

/// A strategy instance's canonical name: a registered kind, its version, and the parameters
/// that differ from the defaults (all checked).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StrategyName {
    name: Name,
    kind: usize,
}

impl Default for StrategyName {
    /// best-route with NFD's default parameters (the root's strategy).
    fn default() -> Self {
        StrategyName::parse(&Name::from_uri(&full_name("best-route")).expect("parses").as_view()).expect("registered")
    }
}

impl std::fmt::Display for StrategyName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.name.fmt(f)
    }
}

impl StrategyName {
    /// The strategy a name asks for (`…/strategy/<kind>[/<version>[/<parameter>~<value>…]]`),
    /// named canonically (`/localhost/nfd/strategy/best-route/v=5`).
    ///
    /// # Errors
    /// Not a strategy name, an unknown strategy or version (NFD's are best-route, multicast and
    /// asf v=5, access, self-learning and random v=1), or parameters it does not take.
    pub fn parse(name: &NameView<'_>) -> Result<StrategyName, String> {
        let (kind, parameters) = split(name)?;
        let strategy = make(kind, &parameters, 0)?;
        let registered = &STRATEGIES[kind];
        let mut name = Name::from_uri(PREFIX).expect("parses").with_generic(registered.kind).with(Component::version(registered.version));
        for p in strategy.parameters() {
            name = name.with_generic(p);
        }
        Ok(StrategyName { name, kind })
    }

    /// The strategy a configuration or `nfdc` names: a full name, or one without
    /// `/localhost/nfd/strategy/` (`asf/v=5/max-timeouts~2`).
    ///
    /// # Errors
    /// As [`StrategyName::parse`], or a name that is not one.
    pub fn from_text(text: &str) -> Result<StrategyName, String> {
        let name = Name::from_uri(&full_name(text)).map_err(|e| e.to_string())?;
        StrategyName::parse(&name.as_view())
    }

    /// The name.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// The strategy's kind (`best-route`).
    pub fn kind(&self) -> &'static str {
        STRATEGIES[self.kind].kind
    }

    /// A new instance, its random draws seeded with `seed`.
    pub fn instantiate(&self, seed: u64) -> Box<dyn ForwardingStrategy> {
        let (kind, parameters) = split(&self.name.as_view()).expect("a canonical name splits");
        make(kind, &parameters, seed).expect("a canonical name's parameters are good")
    }
}

/// An instance of registered strategy `kind` with `parameters`.
fn make(kind: usize, parameters: &[(String, String)], seed: u64) -> Made {
    let parameters: Vec<(&str, &str)> = parameters.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    (STRATEGIES[kind].make)(&parameters, seed)
}

/// The registered kind a name asks for and its parameters (`name~value`, in order).
fn split(name: &NameView<'_>) -> Result<(usize, Vec<(String, String)>), String> {
    let prefix = Name::from_uri(PREFIX).expect("parses");
    if !prefix.as_view().is_prefix_of(name) || name.len() < 4 {
        return Err("not a strategy name".into());
    }
    let version = match name.get(4).map(|c| c.kind()) {
        None => None,
        Some(Kind::Version(v)) => Some(v),
        Some(_) => return Err("parameters follow a version component".into()),
    };
    let asked = name.get(3).map(|c| c.value()).unwrap_or_default();
    let kind = STRATEGIES.iter().position(|s| s.kind.as_bytes() == asked).ok_or("unknown strategy")?;
    let registered = &STRATEGIES[kind];
    if version.is_some_and(|v| v != registered.version) {
        return Err(format!("{} has version {}, not {}", registered.kind, registered.version, version.unwrap_or_default()));
    }
    let mut parameters = Vec::new();
    for c in (5..name.len()).filter_map(|i| name.get(i)) {
        let text = std::str::from_utf8(c.value()).map_err(|_| "strategy parameters are text".to_string())?;
        let (key, value) = text
            .split_once('~')
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            .ok_or_else(|| format!("parameter {text:?} is not name~value"))?;
        parameters.push((key.to_string(), value.to_string()));
    }
    Ok((kind, parameters))
}

/// The full name of a strategy given by its short one (`asf` → `/localhost/nfd/strategy/asf`,
/// as nfdc takes them); a full name is returned as it is.
pub fn full_name(text: &str) -> String {
    if text.starts_with('/') {
        text.to_string()
    } else {
        format!("{PREFIX}/{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<String, String> {
        StrategyName::parse(&Name::from_uri(s).unwrap().as_view()).map(|n| n.to_string())
    }

    #[test]
    fn names_are_canonical() {
        for (asked, canonical) in [
            ("/localhost/nfd/strategy/best-route", "/localhost/nfd/strategy/best-route/v=5"),
            ("/localhost/nfd/strategy/multicast/v=5", "/localhost/nfd/strategy/multicast/v=5"),
            ("/localhost/nfd/strategy/access", "/localhost/nfd/strategy/access/v=1"),
            ("/localhost/nfd/strategy/asf", "/localhost/nfd/strategy/asf/v=5"),
            ("/localhost/nfd/strategy/self-learning", "/localhost/nfd/strategy/self-learning/v=1"),
            ("/localhost/nfd/strategy/random/v=1", "/localhost/nfd/strategy/random/v=1"),
            (
                "/localhost/nfd/strategy/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000",
                "/localhost/nfd/strategy/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000",
            ),
            ("/localhost/nfd/strategy/asf/v=5/max-timeouts~3", "/localhost/nfd/strategy/asf/v=5"),
            (
                "/localhost/nfd/strategy/best-route/v=5/retx-suppression-max~100",
                "/localhost/nfd/strategy/best-route/v=5/retx-suppression-max~100",
            ),
        ] {
            assert_eq!(parse(asked).as_deref(), Ok(canonical), "{asked}");
            assert_eq!(parse(canonical).as_deref(), Ok(canonical), "a canonical name names itself");
        }
        for kind in ["best-route", "multicast", "asf"] {
            let text = format!(
                "/localhost/nfd/strategy/{kind}/v=5/retx-suppression-initial~20/retx-suppression-max~500/retx-suppression-multiplier~1.5"
            );
            assert_eq!(parse(&text), Ok(text.clone()));
        }
        assert_eq!(StrategyName::default().to_string(), "/localhost/nfd/strategy/best-route/v=5", "as NFD lists it");
        assert_eq!(StrategyName::from_text("asf/v=5/max-timeouts~2").unwrap().kind(), "asf");
        assert_eq!(StrategyName::from_text("multicast"), StrategyName::from_text("/localhost/nfd/strategy/multicast/v=5"));
        let v = Name::from_uri("/localhost/nfd/strategy/multicast").unwrap().with(Component::version(5));
        assert_eq!(StrategyName::parse(&v.as_view()).map(|n| n.kind()), Ok("multicast"));
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in [
            "/localhost/nfd/strategy/ncc",
            "/localhost/nfd/strategy",
            "/localhost/nfd/other/best-route",
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
        assert_eq!(parse("/localhost/nfd/strategy/best-route/v=5/x~1"), Err("best-route has no parameter \"x\"".into()));
    }

    #[test]
    fn every_registered_strategy_makes_an_instance_that_names_itself() {
        for s in STRATEGIES {
            let name = StrategyName::from_text(s.kind).unwrap();
            assert_eq!(name.kind(), s.kind);
            assert!(name.instantiate(7).parameters().is_empty(), "{}: defaults", s.kind);
        }
        let tuned = StrategyName::from_text("asf/v=5/max-timeouts~2").unwrap();
        assert_eq!(tuned.instantiate(7).parameters(), ["max-timeouts~2"]);
    }
}
