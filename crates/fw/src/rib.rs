//! The routing information base: every route registered for a prefix, by face and origin
//! (apps through `rib/register`, operators through `fib/add-nexthop` or the configuration), and
//! the FIB next hops they make — for each face, its lowest cost. The FIB is derived from here;
//! each change returns the prefix's new next-hop set for the shards to apply.
//!
//! Flags (child-inherit, capture) are kept and listed but do not change the derivation: a FIB
//! longest-prefix match already makes a route apply below its prefix.

use std::collections::{BTreeMap, BTreeSet};

use nexthop_lookup::name::{NextHop, NextHops};
use nexthop_wire::Name;

use crate::face::FaceId;

/// Origin of routes added with `fib/add-nexthop` (NFD's FIB is not a RIB; here it is one origin).
pub const ORIGIN_FIB: u64 = 0xfffe;
/// Origin of routes from the configuration (NFD's "static").
pub const ORIGIN_STATIC: u64 = 255;
/// Origin of routes registered by apps (NFD's "app").
pub const ORIGIN_APP: u64 = 0;

/// One registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Face.
    pub face: FaceId,
    /// Who registered it.
    pub origin: u64,
    /// Cost.
    pub cost: u64,
    /// NFD route flags (1 child-inherit, 2 capture).
    pub flags: u64,
    /// When it lapses (ms), if ever.
    pub expires_ms: Option<u64>,
}

/// Routes by prefix.
#[derive(Debug, Default, Clone)]
pub struct Rib {
    routes: BTreeMap<Name, Vec<Route>>,
    /// (expiry time, prefix) of every route registered with an expiration period, so that
    /// expiring looks only at those (a large static FIB is never scanned). Entries whose route
    /// was replaced or removed since are dropped when their time comes.
    expiry: BTreeSet<(u64, Name)>,
}

impl Rib {
    /// Adds or updates the route of (`route.face`, `route.origin`) at `prefix`; the prefix's
    /// new next hops.
    pub fn register(&mut self, prefix: &Name, route: Route) -> NextHops {
        if let Some(t) = route.expires_ms {
            self.expiry.insert((t, prefix.clone()));
        }
        let list = self.routes.entry(prefix.clone()).or_default();
        match list.iter_mut().find(|r| r.face == route.face && r.origin == route.origin) {
            Some(r) => *r = route,
            None => list.push(route),
        }
        self.hops(prefix)
    }

    /// Removes the route of (`face`, `origin`) at `prefix` (`origin: None` = every origin); the
    /// prefix's new next hops (empty: the FIB entry goes), or `None` when nothing was there.
    pub fn unregister(&mut self, prefix: &Name, face: FaceId, origin: Option<u64>) -> Option<NextHops> {
        let list = self.routes.get_mut(prefix)?;
        let before = list.len();
        list.retain(|r| !(r.face == face && origin.is_none_or(|o| o == r.origin)));
        if list.len() == before {
            return None;
        }
        if list.is_empty() {
            self.routes.remove(prefix);
        }
        Some(self.hops(prefix))
    }

    /// Removes every route through `face`; the changed prefixes with their new next hops.
    pub fn remove_face(&mut self, face: FaceId) -> Vec<(Name, NextHops)> {
        let touched: Vec<Name> = self.routes.iter().filter(|(_, l)| l.iter().any(|r| r.face == face)).map(|(n, _)| n.clone()).collect();
        touched.into_iter().map(|n| (n.clone(), self.unregister(&n, face, None).unwrap_or_default())).collect()
    }

    /// Removes routes that lapsed by `now_ms`; the changed prefixes with their new next hops.
    pub fn expire(&mut self, now_ms: u64) -> Vec<(Name, NextHops)> {
        let mut changed = Vec::new();
        let mut prefixes = Vec::new();
        while self.expiry.first().is_some_and(|(t, _)| *t <= now_ms) {
            let Some((_, p)) = self.expiry.pop_first() else { break };
            let due = self.routes.get(&p).is_some_and(|l| l.iter().any(|r| r.expires_ms.is_some_and(|t| t <= now_ms)));
            if due && !prefixes.contains(&p) {
                prefixes.push(p);
            }
        }
        for p in prefixes {
            if let Some(list) = self.routes.get_mut(&p) {
                list.retain(|r| r.expires_ms.is_none_or(|t| t > now_ms));
                if list.is_empty() {
                    self.routes.remove(&p);
                }
            }
            let hops = self.hops(&p);
            changed.push((p, hops));
        }
        changed
    }

    /// The FIB next hops of `prefix`: each face once, at its lowest cost.
    pub fn hops(&self, prefix: &Name) -> NextHops {
        let list = self.routes.get(prefix).map(Vec::as_slice).unwrap_or_default();
        NextHops::new(list.iter().map(|r| NextHop { face: r.face as u32, cost: r.cost.min(u64::from(u32::MAX)) as u32 }))
    }

    /// Every prefix with its routes.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &[Route])> + '_ {
        self.routes.iter().map(|(n, l)| (n, l.as_slice()))
    }

    /// Prefixes with routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(face: FaceId, origin: u64, cost: u64) -> Route {
        Route { face, origin, cost, flags: 1, expires_ms: None }
    }

    #[test]
    fn lowest_cost_per_face() {
        let mut rib = Rib::default();
        let p = Name::from_uri("/a").unwrap();
        rib.register(&p, r(300, 0, 10));
        let hops = rib.register(&p, r(300, 255, 5));
        assert_eq!(hops.hops(), &[NextHop { face: 300, cost: 5 }]);
        let hops = rib.register(&p, r(301, 0, 1));
        assert_eq!(hops.best().unwrap().face, 301);
        let hops = rib.unregister(&p, 300, Some(255)).unwrap();
        assert_eq!(hops.hops()[1], NextHop { face: 300, cost: 10 });
        assert!(rib.unregister(&p, 999, None).is_none());
        let changed = rib.remove_face(300);
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].1.len(), 1);
        assert_eq!(rib.unregister(&p, 301, None).unwrap().len(), 0);
        assert!(rib.is_empty());
    }

    #[test]
    fn routes_expire() {
        let mut rib = Rib::default();
        let p = Name::from_uri("/a").unwrap();
        rib.register(&p, Route { expires_ms: Some(100), ..r(300, 0, 1) });
        assert!(rib.expire(99).is_empty());
        let c = rib.expire(100);
        assert_eq!(c, vec![(p.clone(), NextHops::default())]);
        assert!(rib.is_empty());
    }

    #[test]
    fn a_refreshed_route_lives_on_and_static_routes_never_expire() {
        let mut rib = Rib::default();
        let p = Name::from_uri("/a").unwrap();
        let q = Name::from_uri("/q").unwrap();
        rib.register(&q, r(302, 255, 1));
        rib.register(&p, Route { expires_ms: Some(100), ..r(300, 0, 1) });
        rib.register(&p, Route { expires_ms: Some(200), ..r(300, 0, 1) });
        rib.register(&p, Route { expires_ms: Some(120), ..r(301, 0, 1) });
        let c = rib.expire(150);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].1.hops(), &[NextHop { face: 300, cost: 1 }]);
        assert!(rib.expire(199).is_empty());
        assert_eq!(rib.expire(1_000), vec![(p, NextHops::default())]);
        assert!(rib.expire(u64::MAX).is_empty());
        assert_eq!(rib.len(), 1);
    }
}
