//! The routing information base: every route registered for a prefix, by face and origin
//! (apps through `rib/register`, operators through `fib/add-nexthop` or the configuration), and
//! the FIB next hops they make. The FIB is derived from here; each change returns the new
//! next-hop sets of the prefixes it touched, for the shards to apply.
//!
//! Derivation (NFD's): a prefix with routes has a FIB entry whose next hops are its own routes
//! (each face at its lowest cost) and, unless one of them has the *capture* flag, the routes it
//! inherits: those with the *child-inherit* flag on each shorter prefix, nearest first, up to and
//! including the first that captures. A face already there keeps its nearer route. A FIB
//! longest-prefix match finds only the longest entry, so without this a prefix registered below
//! another would hide the other's faces: a routing daemon's sync prefix (ndn-dv registers its
//! own face at `/localhop/<net>/DV/ADS` and each neighbour's at `…/ADS/ACT`) would never reach
//! the daemon from a neighbour. A change to a prefix's inheritable routes therefore changes the
//! entries of every prefix below it.

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

/// Route flag: shorter prefixes' FIB entries below this one inherit the route.
pub const CHILD_INHERIT: u64 = 1;
/// Route flag: FIB entries at and below this prefix inherit nothing from above it.
pub const CAPTURE: u64 = 2;

/// Prefixes whose FIB next hops changed, with their new sets (empty: the entry goes).
pub type Changes = Vec<(Name, NextHops)>;

/// Routes a change removed, with their prefixes.
pub type Removed = Vec<(Name, Route)>;

impl Route {
    fn has(&self, flag: u64) -> bool {
        self.flags & flag != 0
    }
}

impl Rib {
    /// Adds or updates the route of (`route.face`, `route.origin`) at `prefix`; the entries it
    /// changed (the prefix's, and those below it when what they inherit changed).
    pub fn register(&mut self, prefix: &Name, route: Route) -> Changes {
        let old = self.routes.get(prefix).and_then(|l| l.iter().find(|r| r.face == route.face && r.origin == route.origin)).copied();
        self.insert(prefix, route);
        let below = old.is_none_or(|o| (o.cost, o.flags) != (route.cost, route.flags));
        self.changes([prefix.clone()], below && (old.is_some_and(passes_down) || passes_down(route)))
    }

    /// Removes the route of (`face`, `origin`) at `prefix` (`origin: None` = every origin); the
    /// entries it changed and the routes it removed (none when nothing was there).
    pub fn unregister(&mut self, prefix: &Name, face: FaceId, origin: Option<u64>) -> (Changes, Removed) {
        let Some(list) = self.routes.get_mut(prefix) else { return Default::default() };
        let (gone, kept): (Vec<Route>, Vec<Route>) = list.drain(..).partition(|r| r.face == face && origin.is_none_or(|o| o == r.origin));
        *list = kept;
        if list.is_empty() {
            self.routes.remove(prefix);
        }
        if gone.is_empty() {
            return Default::default();
        }
        let changes = self.changes([prefix.clone()], gone.iter().copied().any(passes_down));
        (changes, gone.into_iter().map(|r| (prefix.clone(), r)).collect())
    }

    /// Removes every route through `face`; the entries it changed and the routes it removed.
    pub fn remove_face(&mut self, face: FaceId) -> (Changes, Removed) {
        let mut removed = Vec::new();
        self.routes.retain(|prefix, list| {
            list.retain(|r| {
                let gone = r.face == face;
                if gone {
                    removed.push((prefix.clone(), *r));
                }
                !gone
            });
            !list.is_empty()
        });
        let touched: Vec<Name> = removed.iter().map(|(p, _)| p.clone()).collect();
        (self.changes(touched, true), removed)
    }

    /// Removes routes that lapsed by `now_ms`; the entries it changed and the routes it removed.
    pub fn expire(&mut self, now_ms: u64) -> (Changes, Removed) {
        let mut prefixes = Vec::new();
        while self.expiry.first().is_some_and(|(t, _)| *t <= now_ms) {
            let Some((_, p)) = self.expiry.pop_first() else { break };
            let due = self.routes.get(&p).is_some_and(|l| l.iter().any(|r| r.expires_ms.is_some_and(|t| t <= now_ms)));
            if due && !prefixes.contains(&p) {
                prefixes.push(p);
            }
        }
        let mut removed = Vec::new();
        for p in &prefixes {
            if let Some(list) = self.routes.get_mut(p) {
                let (gone, kept): (Vec<Route>, Vec<Route>) = list.drain(..).partition(|r| r.expires_ms.is_some_and(|t| t <= now_ms));
                *list = kept;
                removed.extend(gone.into_iter().map(|r| (p.clone(), r)));
                if list.is_empty() {
                    self.routes.remove(p);
                }
            }
        }
        (self.changes(prefixes, true), removed)
    }

    /// The entries of `prefixes` and, if `below`, of every prefix under them, each once.
    fn changes(&self, prefixes: impl IntoIterator<Item = Name>, below: bool) -> Changes {
        let mut names = BTreeSet::new();
        for p in prefixes {
            if below {
                names.extend(self.routes.range(&p..).map(|(n, _)| n).take_while(|n| p.is_prefix_of(n)).skip_while(|n| **n == p).cloned());
            }
            names.insert(p);
        }
        names
            .into_iter()
            .map(|n| {
                let hops = self.hops(&n);
                (n, hops)
            })
            .collect()
    }

    /// The FIB next hops of `prefix`: its own routes and, unless one captures, those it inherits
    /// (see the module overview). Empty for a prefix without routes of its own.
    pub fn hops(&self, prefix: &Name) -> NextHops {
        let Some(own) = self.routes.get(prefix) else { return NextHops::default() };
        derive(own, (0..prefix.len()).rev().filter_map(|len| self.routes.get(&prefix.prefix(len)).map(Vec::as_slice)))
    }

    /// Adds a route without deriving any FIB entry (a bulk load: [`Rib::entries`] then derives
    /// them all at once).
    pub fn insert(&mut self, prefix: &Name, route: Route) {
        if let Some(t) = route.expires_ms {
            self.expiry.insert((t, prefix.clone()));
        }
        let list = self.routes.entry(prefix.clone()).or_default();
        match list.iter_mut().find(|r| r.face == route.face && r.origin == route.origin) {
            Some(r) => *r = route,
            None => list.push(route),
        }
    }

    /// Every FIB entry, derived in one pass over the prefixes in order with a stack of the
    /// current one's ancestors (a prefix sorts right before everything under it).
    pub fn entries(&self) -> Changes {
        let mut above: Vec<(&Name, &[Route])> = Vec::new();
        let mut out = Vec::with_capacity(self.routes.len());
        for (prefix, own) in &self.routes {
            while above.last().is_some_and(|(p, _)| !p.is_prefix_of(prefix)) {
                above.pop();
            }
            out.push((prefix.clone(), derive(own, above.iter().rev().map(|(_, r)| *r))));
            above.push((prefix, own));
        }
        out
    }

    /// The routes registered at `prefix`.
    pub fn routes(&self, prefix: &Name) -> &[Route] {
        self.routes.get(prefix).map(Vec::as_slice).unwrap_or_default()
    }

    /// Every prefix with its own routes.
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

/// The next hops of a prefix with routes `own` below prefixes with routes `above` (nearest
/// first): each face once, its nearest route at its lowest cost.
fn derive<'a>(own: &[Route], above: impl Iterator<Item = &'a [Route]>) -> NextHops {
    let hop = |r: &Route| NextHop { face: r.face as u32, cost: r.cost.min(u64::from(u32::MAX)) as u32 };
    let mut hops = NextHops::new(own.iter().map(hop));
    if own.iter().any(|r| r.has(CAPTURE)) {
        return hops;
    }
    for routes in above {
        let inherited: Vec<NextHop> =
            routes.iter().filter(|r| r.has(CHILD_INHERIT) && !hops.hops().iter().any(|h| h.face == r.face as u32)).map(hop).collect();
        if !inherited.is_empty() {
            hops = NextHops::new(hops.hops().iter().copied().chain(inherited));
        }
        if routes.iter().any(|r| r.has(CAPTURE)) {
            break;
        }
    }
    hops
}

/// Whether a change to `r` can change the entries below its prefix.
fn passes_down(r: Route) -> bool {
    r.has(CHILD_INHERIT) || r.has(CAPTURE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(face: FaceId, origin: u64, cost: u64) -> Route {
        Route { face, origin, cost, flags: CHILD_INHERIT, expires_ms: None }
    }

    fn name(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    /// (face, cost) of each next hop, by face.
    fn faces(hops: &NextHops) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = hops.hops().iter().map(|h| (h.face, h.cost)).collect();
        v.sort_unstable();
        v
    }

    /// The single entry a change touched.
    fn only(changes: Changes) -> NextHops {
        assert_eq!(changes.len(), 1, "{changes:?}");
        changes.into_iter().next().unwrap().1
    }

    #[test]
    fn lowest_cost_per_face() {
        let mut rib = Rib::default();
        let p = name("/a");
        rib.register(&p, r(300, 0, 10));
        let hops = only(rib.register(&p, r(300, 255, 5)));
        assert_eq!(hops.hops(), &[NextHop { face: 300, cost: 5 }]);
        let hops = only(rib.register(&p, r(301, 0, 1)));
        assert_eq!(hops.best().unwrap().face, 301);
        let (changes, removed) = rib.unregister(&p, 300, Some(255));
        assert_eq!(removed, [(p.clone(), r(300, 255, 5))]);
        let hops = only(changes);
        assert_eq!(hops.hops()[1], NextHop { face: 300, cost: 10 });
        assert_eq!(rib.unregister(&p, 999, None), Default::default());
        let (changed, removed) = rib.remove_face(300);
        assert_eq!(removed, [(p.clone(), r(300, 0, 10))]);
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].1.len(), 1);
        assert_eq!(only(rib.unregister(&p, 301, None).0).len(), 0);
        assert!(rib.is_empty());
    }

    #[test]
    fn entries_below_inherit_child_inherit_routes_up_to_a_capture() {
        let mut rib = Rib::default();
        let (root, a, ab, abc) = (name("/"), name("/a"), name("/a/b"), name("/a/b/c"));
        rib.register(&abc, r(303, 0, 3));
        // A route above changes the entries below it.
        let changes = rib.register(&a, r(301, 0, 1));
        assert_eq!(changes.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(), [a.clone(), abc.clone()]);
        assert_eq!(faces(&rib.hops(&abc)), [(301, 1), (303, 3)]);
        // Without child-inherit it stays where it is.
        rib.register(&root, Route { flags: 0, ..r(300, 0, 9) });
        assert_eq!(rib.hops(&abc).len(), 2);
        // Its own route wins over an inherited one on the same face; the nearest inherited wins.
        rib.register(&ab, r(301, 0, 7));
        rib.register(&abc, r(302, 0, 2));
        rib.register(&root, r(302, 1, 0));
        assert_eq!(faces(&rib.hops(&abc)), [(301, 7), (302, 2), (303, 3)]);
        // A capture below /a/b stops inheritance from /a and above; at /a/b itself, from above.
        let changes = rib.register(&ab, Route { flags: CHILD_INHERIT | CAPTURE, ..r(301, 0, 7) });
        assert_eq!(changes.len(), 2);
        assert_eq!(faces(&rib.hops(&ab)), [(301, 7)]);
        assert_eq!(faces(&rib.hops(&abc)), [(301, 7), (302, 2), (303, 3)]);
        // A prefix without routes of its own has no entry (the longest match finds its parent).
        assert!(rib.hops(&name("/a/x")).is_empty());
        // Removing the route above changes the entries below again.
        let changes = rib.remove_face(301).0;
        assert_eq!(changes.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(), [a.clone(), ab, abc.clone()]);
        assert_eq!(faces(&rib.hops(&abc)), [(302, 2), (303, 3)]);
        assert!(rib.hops(&a).is_empty());
    }

    #[test]
    fn a_refreshed_route_changes_only_its_own_entry() {
        let mut rib = Rib::default();
        rib.register(&name("/a/b"), r(302, 0, 1));
        assert_eq!(rib.register(&name("/a"), r(301, 0, 1)).len(), 2);
        assert_eq!(rib.register(&name("/a"), Route { expires_ms: Some(5), ..r(301, 0, 1) }).len(), 1);
        assert_eq!(rib.register(&name("/a"), r(301, 0, 2)).len(), 2);
        // A route that passes nothing down touches only its own entry, even at the root.
        assert_eq!(rib.register(&name("/"), Route { flags: 0, ..r(300, 0, 1) }).len(), 1);
        assert_eq!(rib.unregister(&name("/"), 300, None).0.len(), 1);
    }

    #[test]
    fn a_bulk_load_derives_what_registering_one_by_one_does() {
        let (mut bulk, mut one_by_one) = (Rib::default(), Rib::default());
        let mut seed = 7u64;
        for _ in 0..2_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let depth = (seed >> 60) % 4;
            let uri: String = (0..depth).map(|d| format!("/{}", (seed >> (8 * d + 8)) % 3)).collect();
            let prefix = name(if uri.is_empty() { "/" } else { &uri });
            let route = Route { flags: (seed >> 40) % 4, ..r((seed >> 20) % 5 + 300, (seed >> 30) % 2, (seed >> 50) % 9) };
            bulk.insert(&prefix, route);
            one_by_one.register(&prefix, route);
        }
        let entries = bulk.entries();
        assert_eq!(entries.len(), one_by_one.len());
        for (prefix, hops) in entries {
            assert_eq!(faces(&hops), faces(&one_by_one.hops(&prefix)), "{prefix}");
        }
    }

    #[test]
    fn routes_expire() {
        let mut rib = Rib::default();
        let p = name("/a");
        rib.register(&p, Route { expires_ms: Some(100), ..r(300, 0, 1) });
        assert!(rib.expire(99).0.is_empty());
        let (c, removed) = rib.expire(100);
        assert_eq!(c, vec![(p.clone(), NextHops::default())]);
        assert_eq!(removed, [(p.clone(), Route { expires_ms: Some(100), ..r(300, 0, 1) })]);
        assert!(rib.is_empty());
    }

    #[test]
    fn a_refreshed_route_lives_on_and_static_routes_never_expire() {
        let mut rib = Rib::default();
        let p = name("/a");
        let q = name("/q");
        rib.register(&q, r(302, 255, 1));
        rib.register(&p, Route { expires_ms: Some(100), ..r(300, 0, 1) });
        rib.register(&p, Route { expires_ms: Some(200), ..r(300, 0, 1) });
        rib.register(&p, Route { expires_ms: Some(120), ..r(301, 0, 1) });
        let c = rib.expire(150).0;
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].1.hops(), &[NextHop { face: 300, cost: 1 }]);
        assert!(rib.expire(199).0.is_empty());
        assert_eq!(rib.expire(1_000).0, vec![(p, NextHops::default())]);
        assert!(rib.expire(u64::MAX).0.is_empty());
        assert_eq!(rib.len(), 1);
    }
}
