//! Automatic prefix propagation to a gateway, as NFD's `rib.auto_prefix_propagate` does: a host
//! whose apps register prefixes under its identity has that identity's prefix registered on the
//! gateway (an NDN hub) it is connected to.
//!
//! # Overview
//! NFD's host-to-gateway policy and readvertisement (`daemon/rib/readvertise`):
//! - **What is propagated**: for a RIB route whose prefix is not under `/localhost` and is not
//!   `/localhop/nfd`, the shortest signing identity whose name is a prefix of it (a last
//!   component `nrd` ignored): its name is registered on the gateway, once however many routes
//!   under it there are, and withdrawn when the last of them goes.
//! - **Where**: the gateway is reachable while the RIB has an entry for `/localhop/nfd` or a
//!   prefix of it (the route `ndn-autoconfig` or an operator makes toward the hub); when one
//!   appears every propagated prefix is registered, and nothing is sent while none is there.
//! - **How**: `/localhop/nfd/rib/register` (or `unregister`) with Name, Cost (`cost`, 15) and
//!   Origin client, signed by the identity's key ([`super::command_key`]); the gateway checks it
//!   with its `localhop_security` ([`super::validator`]). A registration is refreshed every
//!   `refresh_interval` (25 s); one refused or unanswered within `timeout` (10 s) is sent again
//!   after `base_retry_wait` (50 s), doubling up to `max_retry_wait` (an hour), as NFD's.
//!
//! Sans-I/O: the manager tells it of routes and answers and asks what is due ([`Propagation::due`]),
//! then signs and sends those commands.

use std::collections::{BTreeMap, HashMap};

use nexthop_wire::Name;

use crate::face::FaceId;

/// Registrations refused or unanswered are sent again after this long at first, by default
/// (NFD's `base_retry_wait`).
pub const RETRY_MIN_MS: u64 = 50_000;
/// … doubling up to this (NFD's `max_retry_wait`).
pub const RETRY_MAX_MS: u64 = 3_600_000;

/// Settings, NFD's `auto_prefix_propagate` keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropagateSettings {
    /// Cost of the route on the gateway.
    pub cost: u64,
    /// How long an answer is waited for (ms).
    pub timeout_ms: u64,
    /// How often a registration is refreshed (ms).
    pub refresh_ms: u64,
    /// How long after a refusal or a timeout a command is sent again at first (ms) …
    pub retry_min_ms: u64,
    /// … doubling up to this.
    pub retry_max_ms: u64,
}

impl Default for PropagateSettings {
    fn default() -> Self {
        PropagateSettings { cost: 15, timeout_ms: 10_000, refresh_ms: 25_000, retry_min_ms: RETRY_MIN_MS, retry_max_ms: RETRY_MAX_MS }
    }
}

/// A command to send: register or withdraw `prefix`, signed by identity `signer` (an index
/// into the identities given to [`Propagation::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// `rib/register` (true) or `rib/unregister`.
    pub register: bool,
    /// The identity prefix.
    pub prefix: Name,
    /// Which identity signs.
    pub signer: usize,
    /// The route's cost on the gateway.
    pub cost: u64,
}

/// One propagated prefix.
#[derive(Debug, Clone)]
struct Propagated {
    signer: usize,
    /// RIB routes it stands for (0: being withdrawn).
    routes: usize,
    /// When to send its command next (none: waiting for an answer, or nothing to do).
    due_ms: Option<u64>,
    /// The command sent and not yet answered, and when it times out.
    waiting: Option<(Name, u64)>,
    retry_ms: u64,
}

/// What is propagated, and to whom.
#[derive(Debug)]
pub struct Propagation {
    identities: Vec<Name>,
    settings: PropagateSettings,
    available: bool,
    prefixes: BTreeMap<Name, Propagated>,
    /// RIB route (prefix, face, origin) → the prefix it is propagated as.
    routes: HashMap<(Name, FaceId, u64), Name>,
}

/// The gateway's management prefix.
pub fn gateway_prefix() -> Name {
    Name::from_uri("/localhop/nfd").expect("a valid name")
}

impl Propagation {
    /// Propagation signed by these identities (their names; a last component `nrd` is not part
    /// of the prefix they propagate).
    pub fn new(identities: Vec<Name>, settings: PropagateSettings) -> Propagation {
        let identities = identities
            .into_iter()
            .map(|n| if n.get(n.len().wrapping_sub(1)).is_some_and(|c| c.value() == b"nrd") { n.prefix(n.len() - 1) } else { n })
            .collect();
        Propagation { identities, settings, available: false, prefixes: BTreeMap::new(), routes: HashMap::new() }
    }

    /// The shortest identity that is a prefix of `prefix`, and its index.
    fn identity_for(&self, prefix: &Name) -> Option<(usize, &Name)> {
        if Name::from_uri("/localhost").expect("valid").is_prefix_of(prefix) || *prefix == gateway_prefix() {
            return None;
        }
        self.identities.iter().enumerate().filter(|(_, id)| id.is_prefix_of(prefix)).min_by_key(|(_, id)| id.len())
    }

    /// A RIB route appeared (or changed: counted once); what it brings is due at once.
    pub fn route_added(&mut self, prefix: &Name, face: FaceId, origin: u64) {
        if prefix.is_prefix_of(&gateway_prefix()) {
            self.set_available(true);
        }
        let key = (prefix.clone(), face, origin);
        if self.routes.contains_key(&key) {
            return;
        }
        let Some((signer, identity)) = self.identity_for(prefix) else { return };
        let identity = identity.clone();
        self.routes.insert(key, identity.clone());
        let p = self.prefixes.entry(identity).or_insert(Propagated {
            signer,
            routes: 0,
            due_ms: None,
            waiting: None,
            retry_ms: self.settings.retry_min_ms,
        });
        p.routes += 1;
        if p.routes == 1 {
            p.retry_ms = self.settings.retry_min_ms;
            p.due_ms = Some(0);
            p.waiting = None;
        }
    }

    /// A RIB route went; `gateway_left` when no RIB entry for `/localhop/nfd` or above is left.
    pub fn route_removed(&mut self, prefix: &Name, face: FaceId, origin: u64, gateway_left: bool) {
        if let Some(identity) = self.routes.remove(&(prefix.clone(), face, origin)) {
            if let Some(p) = self.prefixes.get_mut(&identity) {
                p.routes -= 1;
                if p.routes == 0 {
                    p.retry_ms = self.settings.retry_min_ms;
                    p.due_ms = Some(0);
                    p.waiting = None;
                }
            }
        }
        if gateway_left {
            self.set_available(false);
        }
    }

    fn set_available(&mut self, available: bool) {
        if available == self.available {
            return;
        }
        self.available = available;
        // Reachable: everything is registered now; gone: nothing is sent, withdrawals are done.
        self.prefixes.retain(|_, p| available || p.routes > 0);
        for p in self.prefixes.values_mut() {
            p.retry_ms = self.settings.retry_min_ms;
            p.waiting = None;
            p.due_ms = available.then_some(0);
        }
    }

    /// The commands due by `now_ms` (unanswered ones past their timeout are retried later).
    pub fn due(&mut self, now_ms: u64) -> Vec<Command> {
        let mut out = Vec::new();
        if !self.available {
            return out;
        }
        let cost = self.settings.cost;
        for (prefix, p) in &mut self.prefixes {
            if p.waiting.as_ref().is_some_and(|(_, deadline)| *deadline <= now_ms) {
                p.waiting = None;
                p.due_ms = Some(now_ms + p.retry_ms);
                p.retry_ms = (p.retry_ms * 2).min(self.settings.retry_max_ms);
            }
            if p.waiting.is_none() && p.due_ms.is_some_and(|at| at <= now_ms) {
                p.due_ms = None;
                out.push(Command { register: p.routes > 0, prefix: prefix.clone(), signer: p.signer, cost });
            }
        }
        out
    }

    /// Command `name` (the Interest's, which its answer carries) was sent for `prefix`.
    pub fn sent(&mut self, prefix: &Name, name: Name, now_ms: u64) {
        if let Some(p) = self.prefixes.get_mut(prefix) {
            p.waiting = Some((name, now_ms + self.settings.timeout_ms));
        }
    }

    /// The answer to command `name` came with status `code`: a registration is refreshed
    /// later, a withdrawal is done; a refusal is retried after the back-off. False when no
    /// command of ours has that name.
    pub fn answered(&mut self, name: &Name, code: u64, now_ms: u64) -> bool {
        let Some((prefix, p)) = self.prefixes.iter_mut().find(|(_, p)| p.waiting.as_ref().is_some_and(|(n, _)| n == name)) else {
            return false;
        };
        p.waiting = None;
        if code != 200 {
            p.due_ms = Some(now_ms + p.retry_ms);
            p.retry_ms = (p.retry_ms * 2).min(self.settings.retry_max_ms);
            tracing::info!(%prefix, code, "prefix propagation refused by the gateway");
        } else if p.routes > 0 {
            p.retry_ms = self.settings.retry_min_ms;
            p.due_ms = Some(now_ms + self.settings.refresh_ms);
        } else {
            let prefix = prefix.clone();
            self.prefixes.remove(&prefix);
        }
        true
    }

    /// How long an answer is waited for (ms): the commands' Interest lifetime.
    pub fn timeout_ms(&self) -> u64 {
        self.settings.timeout_ms
    }

    /// The identity prefixes propagated now (registered or being registered).
    pub fn propagated(&self) -> Vec<Name> {
        self.prefixes.iter().filter(|(_, p)| p.routes > 0).map(|(n, _)| n.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    fn propagation() -> Propagation {
        Propagation::new(vec![n("/testbed/alice"), n("/testbed"), n("/other/nrd")], PropagateSettings::default())
    }

    #[test]
    fn the_shortest_identity_is_propagated_once_the_gateway_is_there() {
        let mut p = propagation();
        p.route_added(&n("/testbed/alice/app"), 300, 0);
        p.route_added(&n("/testbed/alice/chat"), 301, 0);
        p.route_added(&n("/localhost/x"), 300, 0);
        p.route_added(&n("/elsewhere"), 300, 0);
        assert_eq!(p.due(0), [], "no gateway yet");
        p.route_added(&gateway_prefix(), 260, 255);
        let due = p.due(5);
        assert_eq!(due, [Command { register: true, prefix: n("/testbed"), signer: 1, cost: 15 }]);
        p.sent(&n("/testbed"), n("/localhop/nfd/rib/register/x"), 5);
        assert_eq!(p.due(6), [], "waiting for the answer");
        assert!(p.answered(&n("/localhop/nfd/rib/register/x"), 200, 10));
        assert_eq!(p.due(10 + 24_999), []);
        assert_eq!(p.due(10 + 25_000).len(), 1, "refreshed");
        // `nrd` is not part of the prefix.
        p.route_added(&n("/other/app"), 300, 0);
        assert_eq!(p.propagated(), [n("/other"), n("/testbed")]);
    }

    #[test]
    fn the_last_route_gone_withdraws_and_refusals_back_off() {
        let mut p = propagation();
        p.route_added(&gateway_prefix(), 260, 255);
        p.route_added(&n("/testbed/alice/app"), 300, 0);
        p.route_added(&n("/testbed/alice/app"), 300, 0); // the same route again: counted once
        p.route_added(&n("/testbed/bob"), 301, 0);
        let c = p.due(0);
        assert_eq!(c.len(), 1);
        p.sent(&c[0].prefix, n("/cmd/1"), 0);
        assert!(p.answered(&n("/cmd/1"), 403, 1));
        assert_eq!(p.due(1 + RETRY_MIN_MS - 1), []);
        assert_eq!(p.due(1 + RETRY_MIN_MS).len(), 1, "after 50 s");
        p.sent(&n("/testbed"), n("/cmd/2"), 1 + RETRY_MIN_MS);
        // Unanswered: retried after twice as long.
        let t = 1 + RETRY_MIN_MS + 10_000;
        assert_eq!(p.due(t), []);
        assert_eq!(p.due(t + 2 * RETRY_MIN_MS).len(), 1);
        p.sent(&n("/testbed"), n("/cmd/3"), t + 2 * RETRY_MIN_MS);
        assert!(p.answered(&n("/cmd/3"), 200, t + 2 * RETRY_MIN_MS));
        p.route_removed(&n("/testbed/alice/app"), 300, 0, false);
        assert_eq!(p.due(t + 2 * RETRY_MIN_MS + 1), [], "bob's route still needs it");
        let now = t + 2 * RETRY_MIN_MS + 2;
        p.route_removed(&n("/testbed/bob"), 301, 0, false);
        let c = p.due(now);
        assert_eq!(c, [Command { register: false, prefix: n("/testbed"), signer: 1, cost: 15 }]);
        p.sent(&n("/testbed"), n("/cmd/4"), now);
        assert!(p.answered(&n("/cmd/4"), 200, now));
        assert!(p.propagated().is_empty() && p.due(now + RETRY_MAX_MS).is_empty());
        assert!(!p.answered(&n("/cmd/4"), 200, now), "not ours any more");
    }

    /// `base_retry_wait` and `max_retry_wait` set the back-off: 1 s, 2 s, then 3 s at most.
    #[test]
    fn the_back_off_follows_the_settings() {
        let settings = PropagateSettings { retry_min_ms: 1000, retry_max_ms: 3000, ..PropagateSettings::default() };
        let mut p = Propagation::new(vec![n("/testbed")], settings);
        p.route_added(&gateway_prefix(), 260, 255);
        p.route_added(&n("/testbed/app"), 300, 0);
        let (mut now, mut c) = (0, p.due(0));
        let mut waits = Vec::new();
        for round in 0..4 {
            assert_eq!(c.len(), 1, "round {round}");
            let name = n(&format!("/cmd/{round}"));
            p.sent(&c[0].prefix, name.clone(), now);
            assert!(p.answered(&name, 403, now), "refused");
            let next = (now + 1..now + 10_000)
                .find(|&t| {
                    c = p.due(t);
                    !c.is_empty()
                })
                .unwrap();
            waits.push(next - now);
            now = next;
        }
        assert_eq!(waits, [1000, 2000, 3000, 3000]);
    }

    #[test]
    fn losing_the_gateway_stops_everything_until_it_returns() {
        let mut p = propagation();
        p.route_added(&n("/"), 260, 255); // a default route reaches the gateway too
        p.route_added(&n("/testbed/alice/app"), 300, 0);
        assert_eq!(p.due(0).len(), 1);
        p.route_removed(&n("/"), 260, 255, true);
        assert_eq!(p.due(RETRY_MAX_MS), []);
        p.route_added(&gateway_prefix(), 261, 255);
        assert_eq!(p.due(2).len(), 1, "registered again");
    }
}
