//! NFD-compatible management: the commands and status datasets that apps (python-ndn, ndn-cxx)
//! and operators (`nfdc`, `nexthop ctl`) use, answered by the forwarder itself.
//!
//! Overview: Interests under `/localhost/nfd` reach the [`Manager`] (on the I/O thread) only
//! from local faces; from any other face they are dropped and counted. With
//! `forwarder.localhop_prefix_registration`, `rib/register` and `rib/unregister` under
//! `/localhop/nfd` reach it from faces one hop away too (routing to the asking face only). A command is
//! `/localhost/nfd/<module>/<verb>/<ControlParameters>/…` in either signed form (the older
//! signed-command name with timestamp, nonce, SignatureInfo and SignatureValue components, or a
//! v0.3 signed Interest with ParametersSha256Digest); the answer is a Data named like the
//! Interest carrying a [`params::ControlResponse`]. Commands are taken from local faces only;
//! those of the `faces`, `fib`, `cs` and `strategy-choice` modules must also pass the
//! configured authorizations ([`authorization`]: NFD's, by default `any`), and `rib` commands
//! the `rib` section's validators ([`validator`]): `localhost_security` for those from local
//! faces (by default none, NFD's sample `any`: the local face is enough), `localhop_security`
//! for those one hop away (none: not checked). A dataset is
//! `/localhost/nfd/<module>/list` (or `status/general`, `cs/info`): a new version is made,
//! cut into segments, and segment 0 answers; later segments are answered from a small cache.
//!
//! Commands: `rib/register`, `rib/unregister`, `fib/add-nexthop`, `fib/remove-nexthop`,
//! `faces/create`, `faces/destroy`, `faces/update`, `strategy-choice/set`,
//! `strategy-choice/unset`, `rib/announce` (a signed prefix announcement in ApplicationParameters
//! instead of ControlParameters, [`announce`]), `cs/config` (capacity, admit and serve flags) and `cs/erase` (by
//! name prefix, at most 256 packets a command as NFD). Datasets: `faces/list`, `faces/query` (FaceQueryFilter), `faces/channels`, `fib/list`, `rib/list`,
//! `strategy-choice/list`, `status/general`, `cs/info`, and nexthop's own `status/drops` (drop
//! counters by reason) and `status/counters` (the forwarding threads' counters and gauges, all
//! threads together), both [`dataset::labelled_counts`].
//!
//! Face events: `faces/events`, NFD's notification stream of faces made and closed
//! ([`events`]), whose Interests wait for the next event.
//!
//! Routes follow NFD's RIB (child-inherit and capture, see [`crate::mgmt::rib`]), and routes an app
//! registers with origin *client* are announced to the local routing daemon (NLSR, ndn-dv) the
//! way NFD's `readvertise_nlsr` does ([`readvertise`]).

pub mod announce;
pub mod authorization;
pub mod client_conf;
pub mod command_key;
pub mod dataset;
pub mod events;
pub mod face_create;
pub mod keychain;
pub mod name_regex;
pub mod params;
pub mod propagate;
pub mod readvertise;
pub mod rib;
pub mod validator;

use std::collections::VecDeque;

use nexthop_lookup::name::{DEFAULT_MAX_NAME_BYTES, MAX_LEVELS};
use nexthop_wire::{Data, Emit, Interest, InterestView, Kind, Name};

use crate::counters::DropReason;
use crate::face::uri::FaceUri;
use crate::face::{FaceId, FaceScope, Persistency, FLAG_CONGESTION_MARKING, FLAG_LP_RELIABILITY, MANAGEMENT_FACE};
use crate::mgmt::rib::{Changes, Rib, Route, CHILD_INHERIT, ORIGIN_APP, ORIGIN_FIB};
use crate::pipeline::strategy::registry::StrategyName;
use crate::pipeline::Control;
use crate::table::strategy_choice::StrategyTable;
use announce::PrefixAnnouncement;
use authorization::{Authorizations, Rejection};
use command_key::CommandKey;
use dataset::{CsInfo, FaceStatus, GeneralStatus};
use events::{Delivery, FaceEventKind, FaceEvents};
use params::{ControlParameters, ControlResponse};
use propagate::{PropagateSettings, Propagation};
use readvertise::Announce;
use validator::{Progress, Validator};

/// What the manager needs from the runtime that holds the faces and shards.
pub trait Host {
    /// One face's status.
    fn face(&self, id: FaceId) -> Option<FaceStatus>;
    /// Every face's status.
    fn faces(&self) -> Vec<FaceStatus>;
    /// The LocalUri of every listener (`faces/channels`).
    fn channels(&self) -> Vec<String>;
    /// Makes a face to `uri` from `local` (an Ethernet face's `dev://<interface>`; other faces
    /// take none), or finds the one there: `Ok((status, false))`.
    ///
    /// # Errors
    /// The ControlResponse to answer with (unsupported scheme, socket error).
    fn create_face(
        &mut self,
        uri: &FaceUri,
        local: Option<&str>,
        persistency: Persistency,
    ) -> Result<(FaceStatus, bool), Box<ControlResponse>>;
    /// Whether face `id` is a TCP face still connecting (made by [`Host::create_face`]): its
    /// `faces/create` is answered once it has connected ([`face_create`]).
    fn is_connecting(&self, id: FaceId) -> bool;
    /// Closes a face; whether it existed.
    fn destroy_face(&mut self, id: FaceId) -> bool;
    /// Gives a face another persistency, if its kind allows (UDP, unicast Ethernet and TCP faces
    /// take any; Unix, WebSocket and multicast faces keep their own); whether it has it now.
    fn set_persistency(&mut self, id: FaceId, persistency: Persistency) -> bool;
    /// Changes a face's congestion marking — on or off, its base interval (ns), its threshold
    /// (bytes) — where given; a face that cannot mark (UDP) stays off. The face's status after,
    /// or `None` if there is no such face.
    fn update_marking(&mut self, id: FaceId, on: Option<bool>, interval_ns: Option<u64>, threshold: Option<u64>) -> Option<FaceStatus>;
    /// Turns NDNLPv2 link reliability on or off ([`crate::lp::reliability`]); a multi-access
    /// face keeps it off. The face's status after, or `None` if there is no such face.
    fn set_reliability(&mut self, id: FaceId, on: bool) -> Option<FaceStatus>;
    /// Whether face `id` can take `mtu` as its MTU (a datagram face, and `mtu` at least
    /// [`crate::lp::fragmentation::MIN_MTU`]).
    fn can_override_mtu(&self, id: FaceId, mtu: u64) -> bool;
    /// Overrides face `id`'s MTU (NFD's Mtu); its status after, or `None` if it cannot.
    fn override_mtu(&mut self, id: FaceId, mtu: u64) -> Option<FaceStatus>;
    /// Applies a change to every forwarding shard.
    fn apply(&mut self, op: Control);
    /// Forwarder-wide figures for `status/general` and `cs/info`.
    fn general(&self) -> (GeneralStatus, CsInfo);
    /// NFD's `cs/config`: changes what is given — the capacity in packets, all forwarding
    /// threads' stores together (rounded up to a multiple of their number, at most what they
    /// allocated), whether Data is admitted, whether Interests are served — and returns the
    /// capacity and flags (bit 0 admit, bit 1 serve) now in force.
    fn configure_cs(&mut self, capacity: Option<u64>, admit: Option<bool>, serve: Option<bool>) -> (u64, u64);
    /// NFD's `cs/erase`: erases up to `max` packets under `prefix`; how many went and whether
    /// more remain.
    fn erase_cs(&mut self, prefix: &Name, max: usize) -> (usize, bool);
    /// Drops by reason, all threads together.
    fn drops(&self) -> Vec<(&'static str, u64)>;
    /// The forwarding threads' other counters and gauges, all threads together, then the I/O
    /// thread's (`congestion_marks`, `faces_down`).
    fn counters(&self) -> Vec<(&'static str, u64)>;
    /// Forwards an Interest of the manager's own (a readvertisement) as if an app had sent it
    /// on the management face; what answers it comes back to that face and ends there.
    fn express(&mut self, interest: &[u8]);
}

/// The management module.
#[derive(Debug)]
pub struct Manager {
    rib: Rib,
    strategies: StrategyTable<StrategyName>,
    datasets: VecDeque<(Name, Vec<Vec<u8>>)>,
    next_version: u64,
    started_ms: u64,
    /// The last nonce of the manager's own Interests.
    nonce: u32,
    /// The `faces/events` notification stream.
    events: FaceEvents,
    /// Who may command which module.
    authorizations: Authorizations,
    /// What checks `rib` commands: from one hop away (`rib.localhop_security`) and from local
    /// faces (`rib.localhost_security`); none: they are accepted unchecked.
    validators: [Option<Validator>; 3],
    /// `rib` commands waiting for a certificate of their signer's chain.
    validating: Vec<Validating>,
    /// Prefix propagation to a gateway (`rib.auto_prefix_propagate`), and the keys that sign it.
    propagation: Option<(Propagation, Vec<PropagationSigner>)>,
    /// `faces/create` answers held until their TCP faces have connected ([`face_create`]).
    held_creates: Vec<face_create::HeldCreate>,
    /// The connecting face the command being carried out made, if any.
    connecting_made: Option<FaceId>,
    /// Client routes are told to a routing daemon that registers `/localhost/nlsr`
    /// ([`readvertise`], NFD's `readvertise_nlsr`).
    readvertise: bool,
}

/// A key prefix propagation signs with, and the certificate the forwarder answers for when the
/// gateway fetches it to validate the command.
#[derive(Debug)]
pub struct PropagationSigner {
    /// The key.
    pub key: CommandKey,
    /// Its certificate (a Data packet), if the forwarder is to serve it.
    pub certificate: Option<Vec<u8>>,
}

/// Where a certificate is asked for ([`Manager::fetch_certificate`]).
#[derive(Debug, Clone, Copy)]
enum Fetch {
    /// Straight from this face.
    Direct(FaceId),
    /// From the network by the FIB, waiting this long.
    Network { lifetime_ms: u64 },
}

/// Which of the `rib` section's validators checks a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RibTrust {
    /// `localhop_security`: commands under `/localhop/nfd` from one hop away.
    Localhop = 0,
    /// `localhost_security`: `rib` commands under `/localhost/nfd` from local faces.
    Localhost = 1,
    /// `prefix_announcement_validation`: the prefix announcement a `rib/announce` carries.
    PrefixAnnouncement = 2,
}

/// What waits for a validation to complete.
#[derive(Debug)]
enum Waiter {
    /// A command Interest, answered once it is carried out or refused, with its PIT token.
    Command { interest: Vec<u8>, pit_token: Option<Vec<u8>> },
    /// A prefix announcement the self-learning strategy brought: its route is learned once it
    /// is validated.
    Learned(Vec<u8>),
}

/// A command or an announcement waiting for a certificate its validation fetches.
#[derive(Debug)]
struct Validating {
    trust: RibTrust,
    /// The face it came from (where certificates are asked first).
    face: FaceId,
    waiter: Waiter,
    /// Its validation so far.
    pending: Box<validator::Pending>,
    /// When it is refused if the certificate has not come.
    deadline_ms: u64,
    /// When the certificate is asked of the network, if the command's face has not answered
    /// by then; `None` once it has been.
    network_at_ms: Option<u64>,
    /// The nonce of the Interest that asked the network, once sent.
    network_nonce: Option<[u8; 4]>,
}

/// The answer refusing what waited, from `face`: a command's (none for a silent refusal); an
/// announcement is dropped, logged.
fn refused_waiting(face: FaceId, waiter: Waiter, why: Rejection) -> Option<Delivery> {
    match waiter {
        Waiter::Command { interest, pit_token } => {
            let command = InterestView::decode(&interest).map(|i| i.name().to_name()).unwrap_or_default();
            refused(&command, why).ok().map(|data| Delivery { face, pit_token, data })
        }
        Waiter::Learned(_) => {
            announcement_refused(face, &why);
            None
        }
    }
}

/// Logs an announcement the self-learning strategy brought that validation refused.
fn announcement_refused(face: FaceId, why: &Rejection) {
    tracing::debug!(face, "self-learning: announcement refused: {why:?}");
}

/// How long a certificate fetched for a command's validation is waited for (ndn-cxx's default
/// Interest lifetime), all of its chain's certificates together.
const CERTIFICATE_FETCH_MS: u64 = 4000;
/// How long the command's own face has to answer for a certificate before the network is
/// asked (the lifetime of the direct fetch's Interest).
const DIRECT_FETCH_MS: u64 = 1000;
/// Commands waiting for certificates at most; more are refused.
const MAX_VALIDATING: usize = 256;

/// Datasets whose segments stay answerable.
const KEPT_DATASETS: usize = 16;

/// Route origin of prefix announcements (NFD's `prefixann`).
const ORIGIN_PREFIX_ANN: u64 = 129;
/// The cost of a route made by a prefix announcement (NFD's).
const PREFIX_ANN_COST: u64 = 2048;
/// The longest a route learned by the self-learning strategy lives before it is learned again
/// (NFD's `ROUTE_RENEW_LIFETIME`).
const LEARNED_ROUTE_LIFETIME_MS: u64 = 10 * 60 * 1000;

/// Most packets one `cs/erase` erases (NFD's limit; clients repeat the command until it
/// erases none).
const ERASE_LIMIT: u64 = 256;
/// `cs/config` Flags and Mask bit: Data is admitted to the content store.
pub const CS_ENABLE_ADMIT: u64 = 1;
/// `cs/config` Flags and Mask bit: Interests are answered from the content store.
pub const CS_ENABLE_SERVE: u64 = 2;

impl Manager {
    /// A manager with an empty RIB that lets local faces send every command
    /// ([`Authorizations::any`]); `started_ms` is reported by `status/general`.
    pub fn new(started_ms: u64) -> Self {
        Manager {
            rib: Rib::default(),
            strategies: StrategyTable::default(),
            datasets: VecDeque::new(),
            next_version: started_ms,
            started_ms,
            nonce: started_ms as u32,
            events: FaceEvents::default(),
            authorizations: Authorizations::any(),
            validators: [None, None, None],
            validating: Vec::new(),
            propagation: None,
            held_creates: Vec::new(),
            connecting_made: None,
            readvertise: true,
        }
    }

    /// The manager telling a routing daemon of client routes, or not (NFD's
    /// `readvertise_nlsr`; on by default).
    pub fn with_readvertise(self, readvertise: bool) -> Self {
        Manager { readvertise, ..self }
    }

    /// The manager with a validator for `rib` commands: from one hop away (NFD's
    /// `rib.localhop_security`) or from local faces (`rib.localhost_security`).
    pub fn with_rib_validator(mut self, trust: RibTrust, validator: Validator) -> Self {
        self.validators[trust as usize] = Some(validator);
        self
    }

    /// The manager propagating its routes' identity prefixes to a gateway (NFD's
    /// `rib.auto_prefix_propagate`), signed by `signers`, whose identities are the names before
    /// `KEY` in their key names. The routes toward the management face for their certificates
    /// are the runtime's to add ([`Manager::certificate_routes`]).
    pub fn with_propagation(self, signers: Vec<PropagationSigner>, settings: PropagateSettings) -> Self {
        let identities = signers.iter().map(|s| validator::identity_of(s.key.name())).collect();
        Manager { propagation: Some((Propagation::new(identities, settings), signers)), ..self }
    }

    /// The prefixes under which the management face answers for propagation's certificates
    /// (`/<identity>/KEY/<key id>`): routes to [`MANAGEMENT_FACE`] the runtime adds.
    pub fn certificate_routes(&self) -> Vec<Name> {
        let Some((_, signers)) = &self.propagation else { return Vec::new() };
        signers.iter().filter(|s| s.certificate.is_some()).map(|s| s.key.name().clone()).collect()
    }

    /// The manager with who may command which module (NFD's `authorizations`).
    pub fn with_authorizations(self, authorizations: Authorizations) -> Self {
        Manager { authorizations, ..self }
    }

    /// Takes a reloaded configuration's authorizations and `rib` validators (each trust's, or
    /// none: unchecked). Commands already waiting for a certificate go on under the new
    /// validator.
    pub fn reconfigure(&mut self, authorizations: Authorizations, validators: Vec<(RibTrust, Validator)>) {
        self.authorizations = authorizations;
        self.validators = [None, None, None];
        for (trust, v) in validators {
            self.validators[trust as usize] = Some(v);
        }
    }

    /// The RIB.
    pub fn rib(&self) -> &Rib {
        &self.rib
    }

    /// Adds a route (configuration, route files) and applies it to the shards; a client route
    /// is announced to the routing daemon, and a daemon that has just registered hears of every
    /// client route (see [`readvertise`]).
    ///
    /// # Errors
    /// A text naming why the route is refused (too many components, too long).
    pub fn add_route(&mut self, host: &mut impl Host, prefix: &Name, route: Route) -> Result<(), String> {
        check_route_name(prefix)?;
        let daemon = readvertise::daemon_prefix();
        let daemon_new = *prefix == daemon && self.rib.routes(&daemon).is_empty();
        let changes = self.rib.register(prefix, route);
        apply_routes(host, changes);
        if daemon_new {
            let client: Vec<(Name, Route)> = self
                .rib
                .iter()
                .flat_map(|(p, l)| l.iter().filter(|r| readvertise::is_announced(r)).map(move |r| (p.clone(), *r)))
                .collect();
            self.announce(host, Announce::Register, &client);
        } else if readvertise::is_announced(&route) {
            self.announce(host, Announce::Register, &[(prefix.clone(), route)]);
        }
        self.propagation_changed(&[(prefix.clone(), route)], &[]);
        Ok(())
    }

    /// Tells prefix propagation of routes added and removed (those to the management face, its
    /// own certificates', are not propagated).
    fn propagation_changed(&mut self, added: &[(Name, Route)], removed: &[(Name, Route)]) {
        let Some((p, _)) = self.propagation.as_mut() else { return };
        let gateway = propagate::gateway_prefix();
        let gateway_left = !removed.is_empty() && !(0..=gateway.len()).any(|n| !self.rib.routes(&gateway.prefix(n)).is_empty());
        for (prefix, r) in added.iter().filter(|(_, r)| r.face != MANAGEMENT_FACE) {
            p.route_added(prefix, r.face, r.origin);
        }
        for (prefix, r) in removed.iter().filter(|(_, r)| r.face != MANAGEMENT_FACE) {
            p.route_removed(prefix, r.face, r.origin, gateway_left);
        }
    }

    /// Signs and sends the propagation commands due by `now_ms` (wall-clock: the commands'
    /// timestamps) toward the gateway.
    fn propagate(&mut self, host: &mut impl Host, now_ms: u64) {
        let Some((p, signers)) = self.propagation.as_mut() else { return };
        for c in p.due(now_ms) {
            let Some(signer) = signers.get_mut(c.signer) else { continue };
            let verb = if c.register { "register" } else { "unregister" };
            let params = ControlParameters {
                name: Some(c.prefix.clone()),
                cost: c.register.then_some(c.cost),
                origin: Some(readvertise::ORIGIN_CLIENT),
                ..Default::default()
            };
            let name =
                propagate::gateway_prefix().with_generic("rib").with_generic(verb).with(nexthop_wire::Component::generic(params.encode()));
            let mut interest = Interest::new(name);
            self.nonce = self.nonce.wrapping_add(1);
            interest.nonce = Some(self.nonce.to_be_bytes());
            interest.lifetime_ms = Some(p.timeout_ms());
            interest.set_app_parameters(Vec::new());
            let signature_nonce = (u64::from(self.nonce) << 32 | now_ms & 0xffff_ffff).to_be_bytes();
            signer.key.sign(&mut interest, now_ms, signature_nonce);
            p.sent(&c.prefix, interest.name.clone(), now_ms);
            tracing::debug!(prefix = %c.prefix, verb, "prefix propagation to the gateway");
            host.express(&interest.to_bytes());
        }
    }

    /// Removes the route of (`face`, `origin`) at `prefix` (`origin: None` = every origin) and
    /// applies the change; the routing daemon hears of a client route that went.
    pub fn remove_route(&mut self, host: &mut impl Host, prefix: &Name, face: FaceId, origin: Option<u64>) {
        let (changes, removed) = self.rib.unregister(prefix, face, origin);
        apply_routes(host, changes);
        self.announce(host, Announce::Unregister, &removed);
        self.propagation_changed(&[], &removed);
    }

    /// Adds a route of a bulk load (the configuration's routes and route files, at start) to the
    /// RIB alone: [`Manager::apply_all_routes`] then derives and applies every FIB entry in one
    /// pass, where [`Manager::add_route`] would look up each route's ancestors and descendants.
    ///
    /// # Errors
    /// As [`Manager::add_route`].
    pub fn insert_route(&mut self, prefix: &Name, route: Route) -> Result<(), String> {
        check_route_name(prefix)?;
        self.rib.insert(prefix, route);
        Ok(())
    }

    /// Chooses `strategy` under `prefix` (the configuration's choices): in force in every
    /// forwarding thread and listed by `strategy-choice/list`, as `strategy-choice/set` would.
    pub fn set_strategy(&mut self, host: &mut impl Host, prefix: &Name, strategy: StrategyName) {
        host.apply(Control::SetStrategy(prefix.clone(), strategy.clone()));
        self.strategies.set(&prefix.as_view(), strategy);
    }

    /// Whether commands of `trust` are checked by a validator.
    pub fn has_validator(&self, trust: RibTrust) -> bool {
        self.validators[trust as usize].is_some()
    }

    /// The strategy chosen at exactly `prefix`, if one is.
    pub fn strategy_at(&self, prefix: &Name) -> Option<&StrategyName> {
        self.strategies.at(prefix.value())
    }

    /// Derives every FIB entry from the RIB and applies it (after [`Manager::insert_route`]).
    pub fn apply_all_routes(&mut self, host: &mut impl Host) {
        apply_routes(host, self.rib.entries());
        if self.propagation.is_some() {
            let all: Vec<(Name, Route)> = self.rib.iter().flat_map(|(p, l)| l.iter().map(move |r| (p.clone(), *r))).collect();
            self.propagation_changed(&all, &[]);
        }
    }

    /// Forgets every route through a face that has gone (and tells the shards).
    pub fn face_gone(&mut self, host: &mut impl Host, face: FaceId) {
        self.events.face_gone(face);
        let (changes, removed) = self.rib.remove_face(face);
        apply_routes(host, changes);
        self.announce(host, Announce::Unregister, &removed);
        self.propagation_changed(&[], &removed);
        host.apply(Control::FaceDown(face));
    }

    /// Publishes a face event (`faces/events`): the notification for each Interest held for it.
    pub fn face_event(&mut self, kind: FaceEventKind, status: &FaceStatus, now_ms: u64) -> Vec<Delivery> {
        self.events.publish(kind, status, now_ms)
    }

    /// The self-learning strategy learned a route: Data that came from `face` carried the
    /// prefix announcement `wire`. The route is NFD's for a learned announcement: origin
    /// prefixann, cost 2048, child-inherit, for the announcement's lifetime but at most 10
    /// minutes; a bad or lapsed announcement teaches nothing.
    ///
    /// With `prefix_announcement_security`, as NFD validates them, the announcement must pass
    /// it first (its certificates asked of `face`, then the network): the route is learned once
    /// it does, and never if it does not.
    pub fn learn(&mut self, host: &mut impl Host, now_ms: u64, face: FaceId, wire: &[u8]) {
        let Ok(pa) = PrefixAnnouncement::decode(wire) else { return };
        if let Some(v) = self.validators[RibTrust::PrefixAnnouncement as usize].as_mut() {
            match v.start_data(wire, now_ms) {
                Ok(Progress::Accepted) => {}
                Ok(Progress::Fetch(pending)) => {
                    // Learned once its certificate comes (`on_answer`), or never.
                    let waiter = Waiter::Learned(wire.to_vec());
                    if let Err(why) = self.wait_for_certificate(host, now_ms, RibTrust::PrefixAnnouncement, face, waiter, pending) {
                        announcement_refused(face, &why);
                    }
                    return;
                }
                Err(why) => return announcement_refused(face, &why),
            }
        }
        self.learn_validated(host, now_ms, face, &pa, wire);
    }

    /// [`Manager::learn`] once the announcement `pa` (`wire`) is validated, or needs not be.
    fn learn_validated(&mut self, host: &mut impl Host, now_ms: u64, face: FaceId, pa: &PrefixAnnouncement, wire: &[u8]) {
        let r = self.add_announced(host, now_ms, face, pa, wire, Some(LEARNED_ROUTE_LIFETIME_MS));
        tracing::debug!(face, prefix = %pa.announced, code = r.code, "self-learning: route learned");
    }

    /// The self-learning strategy had a Nack NoRoute for `name` from `face`: the learned route
    /// (a prefix announcement's) of the longest prefix of `name` through `face` goes.
    pub fn unlearn(&mut self, host: &mut impl Host, face: FaceId, name: &[u8]) {
        let Ok(name) = Name::from_value(name) else { return };
        let learned = (0..=name.len())
            .rev()
            .map(|n| name.prefix(n))
            .find(|p| self.rib.routes(p).iter().any(|r| r.face == face && r.origin == ORIGIN_PREFIX_ANN));
        if let Some(prefix) = learned {
            self.remove_route(host, &prefix, face, Some(ORIGIN_PREFIX_ANN));
            tracing::debug!(face, %prefix, "self-learning: route unlearned");
        }
    }

    /// Removes lapsed routes.
    pub fn expire(&mut self, host: &mut impl Host, now_ms: u64) {
        let (changes, removed) = self.rib.expire(now_ms);
        apply_routes(host, changes);
        self.announce(host, Announce::Unregister, &removed);
        self.propagation_changed(&[], &removed);
        self.propagate(host, now_ms);
    }

    /// Tells the routing daemon, if one is registered, of the client routes among `routes`.
    fn announce(&mut self, host: &mut impl Host, what: Announce, routes: &[(Name, Route)]) {
        if !self.readvertise || self.rib.routes(&readvertise::daemon_prefix()).is_empty() {
            return;
        }
        for (prefix, route) in routes.iter().filter(|(_, r)| readvertise::is_announced(r)) {
            self.nonce = self.nonce.wrapping_add(1);
            host.express(&readvertise::announcement(what, prefix, route, self.nonce));
        }
    }

    /// Answers a management Interest from `face` (which came with `pit_token`): the Data to
    /// send back, or `None` when the Interest is held for a face event to come ([`events`]:
    /// [`Manager::face_event`] answers it then).
    ///
    /// # Errors
    /// The drop reason when it is not answered (not from a local face; not a command or
    /// dataset nexthop knows).
    pub fn handle(
        &mut self,
        host: &mut impl Host,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        pit_token: Option<&[u8]>,
        interest: &InterestView<'_>,
    ) -> Result<Option<Vec<u8>>, DropReason> {
        let name = interest.name();
        if name.len() < 4 {
            return Err(DropReason::ManagementUnknown);
        }
        if scope == FaceScope::Local && events::stream_name().as_view().is_prefix_of(&name) {
            return Ok(self.events.ask(face, pit_token, interest, now_ms));
        }
        let module = name.get(2).map(|c| c.value()).unwrap_or_default();
        let verb = name.get(3).map(|c| c.value()).unwrap_or_default();
        // Under /localhop/nfd (which the runtime passes on only when configured to) an app one
        // hop away may register and unregister prefixes, and do nothing else.
        let localhop = name.get(0).is_some_and(|c| c.value() == b"localhop");
        let remote_ok = localhop && module == b"rib" && matches!(verb, b"register" | b"unregister" | b"announce");
        if !remote_ok && (scope != FaceScope::Local || localhop) {
            return Err(DropReason::ManagementNotLocal);
        }
        let dataset = matches!(
            (module, verb),
            (b"faces", b"list")
                | (b"faces", b"query")
                | (b"faces", b"channels")
                | (b"fib", b"list")
                | (b"rib", b"list")
                | (b"strategy-choice", b"list")
                | (b"status", b"general")
                | (b"cs", b"info")
                | (b"status", b"drops")
                | (b"status", b"counters")
        );
        if dataset {
            return self.dataset(host, now_ms, &name.to_name(), module, verb).map(Some).ok_or(DropReason::ManagementUnknown);
        }
        if let Some(m) = authorization::Module::parse(module) {
            let decision = self.authorizations.authorize(m, interest, now_ms);
            if let Err(why) = decision {
                return refused(&name.to_name(), why).map(Some);
            }
        }
        self.proceed(host, now_ms, face, pit_token, interest, None)
    }

    /// The validations a command authorised so far must still pass, in order, after `done`
    /// (the last one passed, if any): its signer's (`localhop_security` for one from one hop
    /// away, `localhost_security` for a local `rib` command), then a `rib/announce`'s
    /// announcement (`prefix_announcement_validation`); each only where configured. The command
    /// is carried out once all have passed: its answer, or `None` while a certificate is
    /// fetched (the command then waits in [`Manager::validating`] and goes on from
    /// [`Manager::on_answer`]).
    fn proceed(
        &mut self,
        host: &mut impl Host,
        now_ms: u64,
        face: FaceId,
        pit_token: Option<&[u8]>,
        interest: &InterestView<'_>,
        done: Option<RibTrust>,
    ) -> Result<Option<Vec<u8>>, DropReason> {
        let name = interest.name();
        let module = name.get(2).map(|c| c.value()).unwrap_or_default();
        let verb = name.get(3).map(|c| c.value()).unwrap_or_default();
        let localhop = name.get(0).is_some_and(|c| c.value() == b"localhop");
        let signer = if localhop { Some(RibTrust::Localhop) } else { (module == b"rib").then_some(RibTrust::Localhost) };
        let announcement = (module, verb) == (&b"rib"[..], &b"announce"[..]);
        let checks = [signer, announcement.then_some(RibTrust::PrefixAnnouncement)];
        let after = checks.iter().position(|c| c.is_some() && *c == done).map_or(0, |i| i + 1);
        for trust in checks[after..].iter().flatten().copied() {
            let Some(v) = self.validators[trust as usize].as_mut() else { continue };
            let started = match trust {
                // A missing or bad announcement is answered 400 when carried out.
                RibTrust::PrefixAnnouncement => match interest.app_parameters() {
                    Some(pa) => v.start_data(pa, now_ms),
                    None => continue,
                },
                _ => v.start(interest, now_ms),
            };
            match started {
                Ok(Progress::Accepted) => {}
                Ok(Progress::Fetch(pending)) => {
                    let waiter = Waiter::Command { interest: interest.wire().to_vec(), pit_token: pit_token.map(<[u8]>::to_vec) };
                    return match self.wait_for_certificate(host, now_ms, trust, face, waiter, pending) {
                        Ok(()) => Ok(None),
                        Err(why) => refused(&name.to_name(), why).map(Some),
                    };
                }
                Err(why) => return refused(&name.to_name(), why).map(Some),
            }
        }
        let answer = self.execute(host, now_ms, face, interest);
        Ok(self.hold_if_connecting(now_ms, face, pit_token, &name.to_name(), answer))
    }

    /// Asks for the certificate `pending` needs and keeps `waiter` until it comes (at most
    /// [`MAX_VALIDATING`] wait: beyond, the refusal).
    fn wait_for_certificate(
        &mut self,
        host: &mut impl Host,
        now_ms: u64,
        trust: RibTrust,
        face: FaceId,
        waiter: Waiter,
        pending: Box<validator::Pending>,
    ) -> Result<(), Rejection> {
        if self.validating.len() >= MAX_VALIDATING {
            return Err(Rejection::Forbidden("too many commands wait for certificates".into()));
        }
        self.fetch_certificate(host, &pending, Fetch::Direct(face));
        self.validating.push(Validating {
            trust,
            face,
            waiter,
            pending,
            deadline_ms: now_ms + CERTIFICATE_FETCH_MS,
            network_at_ms: Some(now_ms + DIRECT_FETCH_MS),
            network_nonce: None,
        });
        Ok(())
    }

    /// Asks for the certificate `pending` needs, as ndn-cxx's direct fetcher does: first
    /// straight from the face the command came from (NextHopFaceId), then, if that face has
    /// not answered within [`DIRECT_FETCH_MS`] or Nacked, from the network by the FIB. Its Data
    /// comes back to the management face ([`Manager::on_answer`]). The nonce sent.
    fn fetch_certificate(&mut self, host: &mut impl Host, pending: &validator::Pending, how: Fetch) -> [u8; 4] {
        self.nonce = self.nonce.wrapping_add(1);
        let mut interest = Interest::new(pending.wanted().clone());
        interest.can_be_prefix = true;
        interest.nonce = Some(self.nonce.to_be_bytes());
        match how {
            Fetch::Direct(face) => {
                interest.lifetime_ms = Some(DIRECT_FETCH_MS);
                let mut next_hop = Vec::new();
                crate::lp::encode::put_nonneg(&mut next_hop, nexthop_wire::types::NEXT_HOP_FACE_ID, face);
                let mut lp = Vec::new();
                crate::lp::encode::put_with_lp_fields(&mut lp, &interest.to_bytes(), nexthop_wire::types::NEXT_HOP_FACE_ID, &next_hop);
                tracing::debug!(face, certificate = %pending.wanted(), "rib command: fetching its signer's certificate from its face");
                host.express(&lp);
            }
            Fetch::Network { lifetime_ms } => {
                interest.lifetime_ms = Some(lifetime_ms.max(1));
                tracing::debug!(certificate = %pending.wanted(), "rib command: fetching its signer's certificate from the network");
                host.express(&interest.to_bytes());
            }
        }
        self.nonce.to_be_bytes()
    }

    /// Asks the network for the certificate `w` waits for, now.
    fn fetch_from_network(&mut self, host: &mut impl Host, now_ms: u64, w: &mut Validating) {
        let lifetime_ms = w.deadline_ms.saturating_sub(now_ms);
        w.network_nonce = Some(self.fetch_certificate(host, &w.pending, Fetch::Network { lifetime_ms }));
        w.network_at_ms = None;
    }

    /// A Data or Nack that came back to the management face (`packet`, bare or in an
    /// LpPacket): a certificate a waiting command's validation asked for goes on with it; the
    /// answers to commands decided now.
    pub fn on_answer(&mut self, host: &mut impl Host, now_ms: u64, packet: &[u8]) -> Vec<Delivery> {
        let Ok(Some(incoming)) = crate::lp::packet::classify(packet) else { return Vec::new() };
        let (name, data, nacked_nonce) = match &incoming.packet {
            crate::lp::packet::Network::Data(d) => (d.name().to_name(), Some(d.wire()), None),
            crate::lp::packet::Network::Nack(_, i) => (i.name().to_name(), None, i.nonce()),
            crate::lp::packet::Network::Interest(i) => {
                self.serve_certificate(host, i);
                return Vec::new();
            }
        };
        if let Some((p, _)) = self.propagation.as_mut() {
            let code = data
                .and_then(|d| nexthop_wire::DataView::decode(d).ok())
                .and_then(|d| ControlResponse::decode(d.content()?).ok())
                .map_or(0, |r| r.code);
            if p.answered(&name, code, now_ms) {
                self.propagate(host, now_ms);
                return Vec::new();
            }
        }
        let mut out = Vec::new();
        let waiting: Vec<Validating> = {
            let (matched, rest) = std::mem::take(&mut self.validating).into_iter().partition(|v| v.pending.wanted().is_prefix_of(&name));
            self.validating = rest;
            matched
        };
        for mut w in waiting {
            if data.is_none() && nacked_nonce.is_none_or(|n| Some(n) != w.network_nonce) {
                // The command's face Nacked: the network is asked at once; a Nack of an
                // earlier direct fetch, once it has been, changes nothing.
                if w.network_at_ms.is_some() {
                    self.fetch_from_network(host, now_ms, &mut w);
                }
                self.validating.push(w);
                continue;
            }
            let progress = match (self.validators[w.trust as usize].as_mut(), data) {
                (Some(v), Some(wire)) => v.resume(w.pending, wire, now_ms),
                (Some(_), None) => Err(Rejection::Forbidden(format!("the certificate {name} was Nacked"))),
                (None, _) => continue,
            };
            match progress {
                Ok(Progress::Accepted) => match w.waiter {
                    Waiter::Command { interest, pit_token } => {
                        let Ok(view) = InterestView::decode(&interest) else { continue };
                        // The next validation, if any, then the command.
                        if let Ok(Some(data)) = self.proceed(host, now_ms, w.face, pit_token.as_deref(), &view, Some(w.trust)) {
                            out.push(Delivery { face: w.face, pit_token, data });
                        }
                    }
                    Waiter::Learned(wire) => {
                        if let Ok(pa) = PrefixAnnouncement::decode(&wire) {
                            self.learn_validated(host, now_ms, w.face, &pa, &wire);
                        }
                    }
                },
                Ok(Progress::Fetch(pending)) => {
                    self.fetch_certificate(host, &pending, Fetch::Direct(w.face));
                    let network_at_ms = Some(now_ms + DIRECT_FETCH_MS);
                    self.validating.push(Validating { pending, network_at_ms, network_nonce: None, ..w });
                }
                Err(why) => out.extend(refused_waiting(w.face, w.waiter, why)),
            }
        }
        out
    }

    /// Answers an Interest that reached the management face for the certificate of a key
    /// propagation signs with (the gateway validating a propagated prefix fetches it).
    fn serve_certificate(&mut self, host: &mut impl Host, interest: &InterestView<'_>) {
        let Some((_, signers)) = &self.propagation else { return };
        let asked = interest.name().to_name();
        for cert in signers.iter().filter_map(|s| s.certificate.as_deref()) {
            let Ok(data) = nexthop_wire::DataView::decode(cert) else { continue };
            let name = data.name().to_name();
            if name == asked || (interest.can_be_prefix() && asked.is_prefix_of(&name)) {
                host.express(cert);
                return;
            }
        }
    }

    /// Refuses the commands whose certificates have not come by `now_ms` (403), forgets those
    /// of faces that have gone, and asks the network for the certificates the commands' faces
    /// did not answer for in time.
    pub fn expire_validations(&mut self, host: &mut impl Host, now_ms: u64) -> Vec<Delivery> {
        let (late, mut waiting) = std::mem::take(&mut self.validating)
            .into_iter()
            .partition::<Vec<_>, _>(|v| v.deadline_ms <= now_ms || host.face(v.face).is_none());
        for w in waiting.iter_mut().filter(|w| w.network_at_ms.is_some_and(|t| t <= now_ms)) {
            self.fetch_from_network(host, now_ms, w);
        }
        self.validating = waiting;
        late.into_iter()
            .filter(|v| host.face(v.face).is_some())
            .filter_map(|v| {
                let why = Rejection::Forbidden(format!("the certificate {} did not come", v.pending.wanted()));
                refused_waiting(v.face, v.waiter, why)
            })
            .collect()
    }

    /// Carries out an authorised command Interest from `face`: the answer's Data. The routes it
    /// added or removed are propagated to the gateway at once.
    fn execute(&mut self, host: &mut impl Host, now_ms: u64, face: FaceId, interest: &InterestView<'_>) -> Vec<u8> {
        let answer = self.carry_out(host, now_ms, face, interest);
        self.propagate(host, now_ms);
        answer
    }

    /// [`Manager::execute`] but for the propagation.
    fn carry_out(&mut self, host: &mut impl Host, now_ms: u64, face: FaceId, interest: &InterestView<'_>) -> Vec<u8> {
        let name = interest.name();
        let module = name.get(2).map(|c| c.value()).unwrap_or_default();
        let verb = name.get(3).map(|c| c.value()).unwrap_or_default();
        let localhop = name.get(0).is_some_and(|c| c.value() == b"localhop");
        if (module, verb) == (&b"rib"[..], &b"announce"[..]) {
            // The parameters are a prefix announcement in ApplicationParameters.
            let response = match interest.app_parameters().map(PrefixAnnouncement::decode) {
                None => ControlResponse::error(400, "rib/announce carries a prefix announcement in ApplicationParameters"),
                Some(Err(e)) => ControlResponse::error(400, e.to_string()),
                Some(Ok(pa)) => {
                    let wire = interest.app_parameters().unwrap_or_default();
                    self.add_announced(host, now_ms, face, &pa, wire, None)
                }
            };
            return reply(name.to_name(), response.encode());
        }
        let response = match name.get(4).map(|c| ControlParameters::decode(c.value())) {
            None => ControlResponse::error(400, "command has no ControlParameters"),
            Some(Err(e)) => ControlResponse::error(400, e.to_string()),
            // One hop away, an app routes prefixes to its own face only.
            Some(Ok(p)) => {
                self.command(host, now_ms, face, module, verb, ControlParameters { face_id: p.face_id.filter(|_| !localhop), ..p })
            }
        };
        reply(name.to_name(), response.encode())
    }

    /// `rib/announce`: a route to the asking face for the announced prefix, of origin
    /// prefixann, cost 2048 and child-inherit, for the announcement's lifetime (as NFD), at
    /// most `max_lifetime_ms`. The forwarding threads keep the announcement (`wire`) for the
    /// self-learning strategy to attach.
    fn add_announced(
        &mut self,
        host: &mut impl Host,
        now_ms: u64,
        face: FaceId,
        pa: &PrefixAnnouncement,
        wire: &[u8],
        max_lifetime_ms: Option<u64>,
    ) -> ControlResponse {
        let Some(lifetime) = pa.lifetime_ms(now_ms) else {
            return ControlResponse::error(403, "Prefix announcement rejected: outside its ValidityPeriod");
        };
        let lifetime = lifetime.min(max_lifetime_ms.unwrap_or(u64::MAX));
        let route = Route {
            face,
            origin: ORIGIN_PREFIX_ANN,
            cost: PREFIX_ANN_COST,
            flags: CHILD_INHERIT,
            expires_ms: Some(now_ms.saturating_add(lifetime)),
        };
        if let Err(e) = self.add_route(host, &pa.announced, route) {
            return ControlResponse::error(414, e);
        }
        host.apply(Control::Announce {
            prefix: pa.announced.clone(),
            face,
            announcement: wire.to_vec(),
            expires_ms: now_ms.saturating_add(lifetime),
        });
        ControlResponse::ok(ControlParameters {
            name: Some(pa.announced.clone()),
            face_id: Some(face),
            origin: Some(route.origin),
            cost: Some(route.cost),
            flags: Some(route.flags),
            expiration_period: Some(lifetime),
            ..Default::default()
        })
    }

    /// The congestion marking a faces/create or faces/update asks for (the CongestionMarking
    /// flag where Mask has its bit, the interval, the threshold), and the link reliability
    /// (LpReliabilityEnabled), applied if it asks any; the face's status after.
    ///
    /// The answers to both carry the marking flag but not the interval and threshold, which
    /// NFD adds: python-ndn's ControlParameters expects them elsewhere in the element, and as
    /// critical elements out of its order they fail its whole answer (`pynfdc new-face`
    /// against NFD too). `faces/list` shows them.
    fn update_link(host: &mut impl Host, id: FaceId, p: &ControlParameters) -> Option<FaceStatus> {
        let on = p.flag_bit(FLAG_CONGESTION_MARKING);
        let (interval, threshold) = (p.base_congestion_marking_interval, p.default_congestion_threshold);
        let marked =
            if on.is_none() && interval.is_none() && threshold.is_none() { None } else { host.update_marking(id, on, interval, threshold) };
        // Link reliability: the LpReliabilityEnabled flag where Mask has its bit.
        p.flag_bit(FLAG_LP_RELIABILITY).and_then(|on| host.set_reliability(id, on)).or(marked)
    }

    fn command(
        &mut self,
        host: &mut impl Host,
        now_ms: u64,
        face: FaceId,
        module: &[u8],
        verb: &[u8],
        p: ControlParameters,
    ) -> ControlResponse {
        let requester = |id: Option<u64>| id.filter(|&f| f != 0).unwrap_or(face);
        match (module, verb) {
            (b"rib", b"register") => {
                let Some(prefix) = p.name.clone() else { return ControlResponse::error(400, "Name is required") };
                let face_id = requester(p.face_id);
                if host.face(face_id).is_none() {
                    return ControlResponse::error(410, "face not found");
                }
                let route = Route {
                    face: face_id,
                    origin: p.origin.unwrap_or(ORIGIN_APP),
                    cost: p.cost.unwrap_or(0),
                    flags: p.flags.unwrap_or(1),
                    expires_ms: p.expiration_period.map(|e| now_ms.saturating_add(e)),
                };
                if let Err(e) = self.add_route(host, &prefix, route) {
                    return ControlResponse::error(400, e);
                }
                ControlResponse::ok(ControlParameters {
                    name: Some(prefix),
                    face_id: Some(face_id),
                    origin: Some(route.origin),
                    cost: Some(route.cost),
                    flags: Some(route.flags),
                    expiration_period: p.expiration_period,
                    ..Default::default()
                })
            }
            (b"rib", b"unregister") | (b"fib", b"remove-nexthop") => {
                let Some(prefix) = p.name.clone() else { return ControlResponse::error(400, "Name is required") };
                let face_id = requester(p.face_id);
                let origin = if module == b"fib" { None } else { Some(p.origin.unwrap_or(ORIGIN_APP)) };
                self.remove_route(host, &prefix, face_id, origin);
                ControlResponse::ok(ControlParameters { name: Some(prefix), face_id: Some(face_id), origin, ..Default::default() })
            }
            (b"fib", b"add-nexthop") => {
                let Some(prefix) = p.name.clone() else { return ControlResponse::error(400, "Name is required") };
                let face_id = requester(p.face_id);
                if host.face(face_id).is_none() {
                    return ControlResponse::error(410, "face not found");
                }
                let cost = p.cost.unwrap_or(0);
                let route = Route { face: face_id, origin: ORIGIN_FIB, cost, flags: 0, expires_ms: None };
                if let Err(e) = self.add_route(host, &prefix, route) {
                    return ControlResponse::error(400, e);
                }
                ControlResponse::ok(ControlParameters {
                    name: Some(prefix),
                    face_id: Some(face_id),
                    cost: Some(cost),
                    ..Default::default()
                })
            }
            (b"faces", b"create") => {
                let Some(uri) = p.uri.as_deref() else { return ControlResponse::error(400, "Uri is required") };
                let uri = match crate::sys::interfaces::parse_face_uri(uri) {
                    Ok(u @ (FaceUri::Udp(_) | FaceUri::Tcp(_) | FaceUri::Ether(_))) => u,
                    Ok(_) => return ControlResponse::error(406, "only udp, tcp and ether faces can be created"),
                    Err(e) => return ControlResponse::error(400, e.to_string()),
                };
                let persistency = match p.face_persistency.map(Persistency::from_code) {
                    None => Persistency::Persistent,
                    Some(Some(Persistency::OnDemand)) => return ControlResponse::error(406, "a created face cannot be on-demand"),
                    Some(Some(x)) => x,
                    Some(None) => return ControlResponse::error(400, "unknown FacePersistency"),
                };
                // An MTU override, as NFD's factories take it: not on TCP, not below the least.
                match p.mtu {
                    Some(_) if matches!(uri, FaceUri::Tcp(_)) => {
                        return ControlResponse::error(406, "TCP faces do not support MTU overrides")
                    }
                    Some(m) if m < crate::lp::fragmentation::MIN_MTU as u64 => {
                        let why = format!("Override MTU cannot be less than {}", crate::lp::fragmentation::MIN_MTU);
                        return ControlResponse::error(406, why);
                    }
                    _ => {}
                }
                match host.create_face(&uri, p.local_uri.as_deref(), persistency) {
                    Ok((mut status, created)) => {
                        if let Some(s) = p.mtu.and_then(|m| host.override_mtu(status.face_id, m)) {
                            status = s;
                        }
                        if let Some(s) = Self::update_link(host, status.face_id, &p) {
                            status = s;
                        }
                        let body = ControlParameters {
                            face_id: Some(status.face_id),
                            uri: Some(status.uri.clone()),
                            local_uri: Some(status.local_uri.clone()),
                            face_persistency: Some(status.persistency),
                            flags: Some(status.flags),
                            ..Default::default()
                        };
                        if created && host.is_connecting(status.face_id) {
                            // Answered once connected, or 504 (`face_create`).
                            self.connecting_made = Some(status.face_id);
                        }
                        if created {
                            ControlResponse::ok(body)
                        } else {
                            ControlResponse { code: 409, text: "face exists".into(), body: Some(body) }
                        }
                    }
                    Err(r) => *r,
                }
            }
            (b"faces", b"destroy") => {
                let Some(id) = p.face_id else { return ControlResponse::error(400, "FaceId is required") };
                if id != MANAGEMENT_FACE && host.destroy_face(id) {
                    self.face_gone(host, id);
                }
                ControlResponse::ok(ControlParameters { face_id: Some(id), ..Default::default() })
            }
            (b"faces", b"update") => {
                let id = requester(p.face_id);
                if host.face(id).is_none() {
                    return ControlResponse::error(410, "face not found");
                }
                // Checked before anything changes, as NFD does (a stream face has no MTU).
                if let Some(mtu) = p.mtu.filter(|&m| !host.can_override_mtu(id, m)) {
                    let body = ControlParameters { mtu: Some(mtu), ..Default::default() };
                    return ControlResponse { code: 409, text: "Invalid properties specified".into(), body: Some(body) };
                }
                match p.face_persistency.map(Persistency::from_code) {
                    None => {}
                    Some(None) => return ControlResponse::error(400, "unknown FacePersistency"),
                    Some(Some(x)) if !host.set_persistency(id, x) => {
                        return ControlResponse::error(409, "the face cannot take that persistency")
                    }
                    Some(Some(_)) => {}
                }
                let Some(mut status) = p.mtu.and_then(|m| host.override_mtu(id, m)).or_else(|| host.face(id)) else {
                    return ControlResponse::error(410, "face not found");
                };
                if let (Some(flags), Some(mask)) = (p.flags, p.mask) {
                    if mask & 1 != 0 {
                        let on = flags & 1 != 0;
                        host.apply(Control::LocalFields(id, on));
                        status.flags = (status.flags & !1) | u64::from(on);
                    }
                }
                if let Some(s) = Self::update_link(host, id, &p) {
                    status = s;
                }
                ControlResponse::ok(ControlParameters {
                    face_id: Some(id),
                    face_persistency: Some(status.persistency),
                    flags: Some(status.flags),
                    ..Default::default()
                })
            }
            (b"strategy-choice", b"set") => {
                let (Some(prefix), Some(sname)) = (p.name.clone(), p.strategy.clone()) else {
                    return ControlResponse::error(400, "Name and Strategy are required");
                };
                // NFD answers 404 for a strategy it cannot make, parameters included.
                let strategy = match StrategyName::parse(&sname.as_view()) {
                    Ok(s) => s,
                    Err(why) => return ControlResponse::error(404, why),
                };
                let named = strategy.name().clone();
                self.set_strategy(host, &prefix, strategy);
                ControlResponse::ok(ControlParameters { name: Some(prefix), strategy: Some(named), ..Default::default() })
            }
            (b"strategy-choice", b"unset") => {
                let Some(prefix) = p.name.clone() else { return ControlResponse::error(400, "Name is required") };
                if prefix.is_empty() {
                    return ControlResponse::error(400, "the root strategy cannot be unset");
                }
                self.strategies.unset(&prefix.as_view());
                host.apply(Control::UnsetStrategy(prefix.clone()));
                ControlResponse::ok(ControlParameters { name: Some(prefix), ..Default::default() })
            }
            (b"cs", b"config") => {
                // A flag changes only where Mask has its bit (as NFD reads Flags and Mask).
                let (admit, serve) = (p.flag_bit(CS_ENABLE_ADMIT), p.flag_bit(CS_ENABLE_SERVE));
                let (capacity, flags) = host.configure_cs(p.capacity, admit, serve);
                ControlResponse::ok(ControlParameters { capacity: Some(capacity), flags: Some(flags), ..Default::default() })
            }
            (b"cs", b"erase") => {
                let Some(prefix) = p.name.clone() else { return ControlResponse::error(400, "Name is required") };
                let asked = p.count.unwrap_or(u64::MAX);
                let limit = asked.min(ERASE_LIMIT) as usize;
                let (erased, more) = if limit == 0 { (0, false) } else { host.erase_cs(&prefix, limit) };
                // As NFD: Capacity says the per-command limit stopped the erase.
                let capacity = (erased == limit && asked > ERASE_LIMIT && more).then_some(ERASE_LIMIT);
                ControlResponse::ok(ControlParameters { name: Some(prefix), count: Some(erased as u64), capacity, ..Default::default() })
            }
            _ => ControlResponse::error(501, "unknown command"),
        }
    }

    fn dataset(&mut self, host: &mut impl Host, now_ms: u64, name: &Name, module: &[u8], verb: &[u8]) -> Option<Vec<u8>> {
        // faces/query names its filter in a fifth component, before the version.
        let query = (module, verb) == (&b"faces"[..], &b"query"[..]);
        let base = if query { 5 } else { 4 };
        if name.len() < base {
            return None;
        }
        let last = name.get(name.len() - 1).map(|c| c.kind());
        if name.len() > base && matches!(last, Some(Kind::Version(_) | Kind::Segment(_))) {
            // A segment (or a specific version) of a dataset already made.
            let (_, segs) = self.datasets.iter().find(|(p, _)| p.is_prefix_of(name))?;
            return match last {
                Some(Kind::Segment(s)) => segs.get(s as usize).cloned(),
                _ => segs.first().cloned(),
            };
        }
        // A new version, named `<Interest name>/<version>/<segment>` as NFD's dispatcher names
        // it: the Interest's name may go on past the dataset's (python-ndn's pynfdc asks with a
        // signed Interest, whose name ends in its parameters digest).
        let prefix = name.clone();
        let mut content = Vec::new();
        match (module, verb) {
            (b"faces", b"list") => host.faces().iter().for_each(|f| f.encode_into(&mut content)),
            (b"faces", b"channels") => host.channels().iter().for_each(|uri| dataset::channel_status(&mut content, uri)),
            (b"faces", b"query") => {
                let filter = dataset::FaceQueryFilter::decode(name.get(4)?.value()).ok()?;
                host.faces().iter().filter(|f| filter.matches(f)).for_each(|f| f.encode_into(&mut content));
            }
            (b"fib", b"list") => {
                for (prefix, _) in self.rib.iter() {
                    let hops = self.rib.hops(prefix);
                    dataset::fib_entry(&mut content, prefix.value(), hops.hops().iter().map(|h| (u64::from(h.face), u64::from(h.cost))));
                }
            }
            (b"rib", b"list") => {
                for (prefix, routes) in self.rib.iter() {
                    let r = routes.iter().map(|r| (r.face, r.origin, r.cost, r.flags, r.expires_ms.map(|t| t.saturating_sub(now_ms))));
                    dataset::rib_entry(&mut content, prefix.value(), r);
                }
            }
            (b"strategy-choice", b"list") => {
                let mut choices: Vec<_> = self.strategies.iter().collect();
                choices.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for (p, s) in choices {
                    dataset::strategy_choice(&mut content, p, s.name());
                }
            }
            (b"status", b"general") => {
                let (mut g, _) = host.general();
                g.start_ms = self.started_ms;
                g.now_ms = now_ms;
                g.version = concat!("nexthop ", env!("CARGO_PKG_VERSION")).into();
                content = g.encode();
            }
            (b"cs", b"info") => content = host.general().1.encode(),
            (b"status", b"drops") => content = dataset::labelled_counts(&host.drops()),
            (b"status", b"counters") => content = dataset::labelled_counts(&host.counters()),
            _ => return None,
        }
        self.next_version = self.next_version.max(now_ms) + 1;
        let segs = dataset::segments(&prefix, self.next_version, &content);
        let first = segs.first().cloned();
        let versioned = prefix.with(nexthop_wire::Component::version(self.next_version));
        self.datasets.push_back((versioned, segs));
        if self.datasets.len() > KEPT_DATASETS {
            self.datasets.pop_front();
        }
        first
    }
}

/// Hands each changed FIB entry to the shards.
fn apply_routes(host: &mut impl Host, changes: Changes) {
    for (name, hops) in changes {
        host.apply(Control::SetRoute(name, hops));
    }
}

/// Whether the name FIB can hold a route at `prefix`.
fn check_route_name(prefix: &Name) -> Result<(), String> {
    if prefix.len() > MAX_LEVELS {
        return Err(format!("route {prefix} has {} components, more than the FIB's {MAX_LEVELS}", prefix.len()));
    }
    if prefix.value().len() > DEFAULT_MAX_NAME_BYTES {
        return Err(format!("route name is {} bytes, more than {DEFAULT_MAX_NAME_BYTES}", prefix.value().len()));
    }
    Ok(())
}

/// A refused command's answer, as NFD refuses: none (the drop reason) when it carries no
/// signature or KeyLocator name, else 403.
fn refused(command: &Name, why: Rejection) -> Result<Vec<u8>, DropReason> {
    match why {
        Rejection::Silent(why) => {
            tracing::debug!(%command, "management command dropped: {why}");
            Err(DropReason::ManagementUnsigned)
        }
        Rejection::Forbidden(why) => {
            tracing::debug!(%command, "management command refused: {why}");
            Ok(reply(command.clone(), ControlResponse::error(403, "authorization rejected").encode()))
        }
    }
}

/// A signed (DigestSha256) Data answering a management Interest.
fn reply(name: Name, content: Vec<u8>) -> Vec<u8> {
    let mut d = Data::new(name, content);
    d.sign_digest_sha256();
    d.to_bytes()
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Component, Emit, Interest};
    use proptest::prelude::*;

    use super::*;
    use crate::mgmt::dataset::FaceCounts;

    /// A host with one face (300) and nothing behind it; it keeps what the manager expresses.
    /// A TCP face it is asked to make is face 400, connecting until the test says otherwise.
    #[derive(Default)]
    pub(super) struct NullHost {
        pub(super) expressed: Vec<Vec<u8>>,
        /// Whether face 400 exists, and whether it is still connecting.
        pub(super) tcp_face: Option<bool>,
    }

    impl Host for NullHost {
        fn face(&self, id: FaceId) -> Option<FaceStatus> {
            (id == 300 || (id == 400 && self.tcp_face.is_some())).then(|| FaceStatus {
                face_id: id,
                uri: "unix:///x".into(),
                local_uri: "unix:///x".into(),
                scope: 1,
                persistency: 0,
                link_type: 0,
                flags: 0,
                marking: (0, 0),
                mtu: 8800,
                counters: FaceCounts::default(),
            })
        }
        fn faces(&self) -> Vec<FaceStatus> {
            self.face(300).into_iter().collect()
        }
        fn channels(&self) -> Vec<String> {
            vec!["unix:///x".into()]
        }
        fn create_face(&mut self, uri: &FaceUri, _: Option<&str>, _: Persistency) -> Result<(FaceStatus, bool), Box<ControlResponse>> {
            if !matches!(uri, FaceUri::Tcp(_)) {
                return Err(Box::new(ControlResponse::error(406, "none here")));
            }
            self.tcp_face = Some(true);
            Ok((self.face(400).expect("made"), true))
        }
        fn is_connecting(&self, id: FaceId) -> bool {
            id == 400 && self.tcp_face == Some(true)
        }
        fn destroy_face(&mut self, id: FaceId) -> bool {
            id == 400 && self.tcp_face.take().is_some()
        }
        fn set_persistency(&mut self, _: FaceId, _: Persistency) -> bool {
            false
        }
        fn update_marking(&mut self, id: FaceId, _: Option<bool>, _: Option<u64>, _: Option<u64>) -> Option<FaceStatus> {
            self.face(id)
        }
        fn set_reliability(&mut self, id: FaceId, _: bool) -> Option<FaceStatus> {
            self.face(id)
        }
        fn can_override_mtu(&self, _: FaceId, _: u64) -> bool {
            false
        }
        fn override_mtu(&mut self, _: FaceId, _: u64) -> Option<FaceStatus> {
            None
        }
        fn apply(&mut self, _: Control) {}
        fn general(&self) -> (GeneralStatus, CsInfo) {
            (GeneralStatus::default(), CsInfo::default())
        }
        fn configure_cs(&mut self, capacity: Option<u64>, _: Option<bool>, _: Option<bool>) -> (u64, u64) {
            (capacity.unwrap_or(0), 3)
        }
        fn erase_cs(&mut self, _: &Name, _: usize) -> (usize, bool) {
            (0, false)
        }
        fn drops(&self) -> Vec<(&'static str, u64)> {
            Vec::new()
        }
        fn counters(&self) -> Vec<(&'static str, u64)> {
            Vec::new()
        }
        fn express(&mut self, packet: &[u8]) {
            self.expressed.push(packet.to_vec());
        }
    }

    /// `rib` commands from local faces are checked by `localhost_security` once it is set, and
    /// only `rib` commands: here a rule that takes commands signed by the operator's key, whose
    /// certificate is the trust anchor (nothing to fetch).
    #[test]
    fn rib_commands_from_local_faces_pass_localhost_security_when_set() {
        use p256::ecdsa::signature::Signer as _;
        use p256::pkcs8::EncodePublicKey;
        const NOW: u64 = 1_800_000_000_000;
        let dir = tempfile::tempdir().unwrap();
        let key = p256::ecdsa::SigningKey::from_slice(&[3; 32]).unwrap();
        let spki = key.verifying_key().to_public_key_der().unwrap().into_vec();
        let mut cert = Data::new(Name::from_uri("/op/KEY/k/self/v1").unwrap(), spki);
        cert.sign_digest_sha256();
        let file = dir.path().join("op.cert");
        std::fs::write(&file, cert.to_bytes()).unwrap();
        let text = format!(
            "rule\n{{\n  for interest\n  checker\n  {{\n    type customized\n    sig-type ecdsa-sha256\n    key-locator\n    {{\n      type name\n      name /op\n      relation equal\n    }}\n  }}\n}}\ntrust-anchor\n{{\n  type file\n  file-name {}\n}}\n",
            file.display()
        );
        let v = Validator::from_info(&crate::conf::info::parse_info(&text).unwrap()).unwrap();
        let mut m = Manager::new(0).with_rib_validator(RibTrust::Localhost, v);
        let command = |module: &str, verb: &str, prefix: &str, signed: Option<u64>| {
            let params = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), ..Default::default() }.encode();
            let name = Name::from_uri(&format!("/localhost/nfd/{module}/{verb}")).unwrap().with(Component::generic(params));
            let mut i = Interest::new(name);
            match signed {
                Some(time) => {
                    let info = nexthop_wire::SignatureInfo {
                        signature_type: nexthop_wire::types::signature_type::SHA256_WITH_ECDSA,
                        key_locator: Some(nexthop_wire::KeyLocator::Name(Name::from_uri("/op/KEY/k").unwrap())),
                        time: Some(time),
                        ..nexthop_wire::SignatureInfo::digest_sha256()
                    };
                    i.sign_with(info, |bytes| {
                        let s: p256::ecdsa::Signature = key.sign(bytes);
                        s.to_der().as_bytes().to_vec()
                    });
                }
                None => i.sign_digest_sha256(),
            }
            i.to_bytes()
        };
        let mut ask = |wire: Vec<u8>| {
            let view = InterestView::decode(&wire).unwrap();
            m.handle(&mut NullHost::default(), NOW, 300, FaceScope::Local, None, &view).map(|reply| {
                let data = reply.expect("answered now");
                ControlResponse::decode(nexthop_wire::DataView::decode(&data).unwrap().content().unwrap()).unwrap().code
            })
        };
        assert_eq!(ask(command("rib", "register", "/signed", Some(NOW))), Ok(200));
        assert_eq!(ask(command("rib", "register", "/replayed", Some(NOW))), Ok(403), "not after the last timestamp");
        assert_eq!(ask(command("rib", "register", "/unsigned", None)), Err(DropReason::ManagementUnsigned));
        assert_eq!(ask(command("fib", "add-nexthop", "/fib", None)), Ok(200), "fib: the authorizations (any)");
    }

    /// A manager whose `trust` validator has the rules `rules` and the trust anchor `/root`
    /// (key 4, its self-signed certificate in a file of the returned folder); with the
    /// certificate of `/root/op` (key 5) that `/root` issued.
    fn rooted_manager(trust: RibTrust, rules: &str) -> (tempfile::TempDir, Manager, Vec<u8>) {
        use validator::tests::{certificate, key};
        let dir = tempfile::tempdir().unwrap();
        let root_key = key(4);
        let file = dir.path().join("root.cert");
        std::fs::write(&file, certificate("/root", &root_key, &root_key, "/root/KEY/k1")).unwrap();
        let op = certificate("/root/op", &key(5), &root_key, "/root/KEY/k1");
        let text = format!("{rules}trust-anchor\n{{\n  type file\n  file-name {}\n}}\n", file.display());
        let v = Validator::from_info(&crate::conf::info::parse_info(&text).unwrap()).unwrap();
        (dir, Manager::new(0).with_rib_validator(trust, v), op)
    }

    /// A certificate is asked of the command's face first (NextHopFaceId), then of the network
    /// when that face has not answered within a second, or at once when it Nacks; the network's
    /// answer validates the command, and a Nack from the network refuses it.
    #[test]
    fn certificates_the_commands_face_does_not_serve_are_asked_of_the_network() {
        use validator::tests::{der, key};
        const NOW: u64 = 1_800_000_000_000;
        let rules = "rule\n{\n  for interest\n  checker\n  {\n    type customized\n    sig-type ecdsa-sha256\n    key-locator\n    {\n      type name\n      name /root\n      relation is-strict-prefix-of\n    }\n  }\n}\nrule\n{\n  for data\n  checker\n  {\n    type hierarchical\n    sig-type ecdsa-sha256\n  }\n}\n";
        let (_dir, mut m, op) = rooted_manager(RibTrust::Localhost, rules);
        let op_key = key(5);
        let mut host = NullHost::default();
        let register = |m: &mut Manager, host: &mut NullHost, prefix: &str, time: u64| {
            let params = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), ..Default::default() }.encode();
            let mut i = Interest::new(Name::from_uri("/localhost/nfd/rib/register").unwrap().with(Component::generic(params)));
            let info = nexthop_wire::SignatureInfo {
                signature_type: nexthop_wire::types::signature_type::SHA256_WITH_ECDSA,
                key_locator: Some(nexthop_wire::KeyLocator::Name(Name::from_uri("/root/op/KEY/k1").unwrap())),
                time: Some(time),
                ..nexthop_wire::SignatureInfo::digest_sha256()
            };
            i.sign_with(info, |bytes| der(&op_key, bytes));
            let wire = i.to_bytes();
            assert_eq!(m.handle(host, time, 300, FaceScope::Local, None, &InterestView::decode(&wire).unwrap()), Ok(None), "waits");
        };
        // What was expressed: (NextHopFaceId, lifetime, nonce) of a certificate Interest.
        let asked = |host: &mut NullHost| {
            let packet = host.expressed.pop().expect("an Interest expressed");
            assert!(host.expressed.is_empty());
            let Ok(Some(incoming)) = crate::lp::packet::classify(&packet) else { panic!("not a packet") };
            let crate::lp::packet::Network::Interest(i) = &incoming.packet else { panic!("not an Interest") };
            assert_eq!(i.name().to_name().to_string(), "/root/op/KEY/k1");
            (incoming.link.next_hop_face_id, i.lifetime_ms(), i.nonce().unwrap())
        };
        let code = |d: &[Delivery]| {
            assert_eq!(d.len(), 1);
            ControlResponse::decode(nexthop_wire::DataView::decode(&d[0].data).unwrap().content().unwrap()).unwrap().code
        };

        // The face does not answer: after a second, the network is asked, until the deadline.
        register(&mut m, &mut host, "/a", NOW);
        assert_eq!(asked(&mut host).0, Some(300), "straight from the command's face");
        assert!(m.expire_validations(&mut host, NOW + 999).is_empty() && host.expressed.is_empty());
        assert!(m.expire_validations(&mut host, NOW + 1000).is_empty());
        assert_eq!(asked(&mut host).0, None, "by the FIB");
        assert_eq!(code(&m.on_answer(&mut host, NOW + 1100, &op)), 200);
        assert!(m.expire_validations(&mut host, NOW + 5000).is_empty(), "nothing left waiting");

        // The face Nacks: the network at once; the network Nacks: refused.
        let nack = |name: &str, nonce: [u8; 4]| {
            let mut i = Interest::new(Name::from_uri(name).unwrap());
            i.can_be_prefix = true;
            i.nonce = Some(nonce);
            let mut lp = Vec::new();
            let fields = crate::lp::encode::LpFields { nack: Some(nexthop_wire::NackReason::NoRoute), ..Default::default() };
            crate::lp::encode::put_packet(&mut lp, &fields, &i.to_bytes());
            lp
        };
        register(&mut m, &mut host, "/b", NOW + 2000);
        let (_, _, direct) = asked(&mut host);
        assert!(m.on_answer(&mut host, NOW + 2010, &nack("/root/op/KEY/k1", direct)).is_empty());
        let (to, lifetime, network) = asked(&mut host);
        assert_eq!((to, lifetime), (None, Some(3990)), "the rest of the 4 s");
        assert!(m.on_answer(&mut host, NOW + 2020, &nack("/root/op/KEY/k1", direct)).is_empty(), "a late direct Nack: still waits");
        assert!(host.expressed.is_empty());
        assert_eq!(code(&m.on_answer(&mut host, NOW + 2030, &nack("/root/op/KEY/k1", network))), 403);
    }

    /// An MTU override is refused as NFD refuses it: on a TCP face or below the least MTU when
    /// a face is made (406), on a face that cannot take it when one is updated (409, naming
    /// the Mtu).
    #[test]
    fn mtu_overrides_the_faces_cannot_take_are_refused() {
        let mut m = Manager::new(0);
        let mut ask = |verb: &str, p: ControlParameters| {
            let name = Name::from_uri(&format!("/localhost/nfd/faces/{verb}")).unwrap().with(Component::generic(p.encode()));
            let mut i = Interest::new(name);
            i.sign_digest_sha256();
            let wire = i.to_bytes();
            let data = m.handle(&mut NullHost::default(), 1_000, 300, FaceScope::Local, None, &InterestView::decode(&wire).unwrap());
            ControlResponse::decode(nexthop_wire::DataView::decode(&data.unwrap().unwrap()).unwrap().content().unwrap()).unwrap()
        };
        let create = |uri: &str, mtu| ControlParameters { uri: Some(uri.into()), mtu: Some(mtu), ..Default::default() };
        let r = ask("create", create("tcp4://127.0.0.1:6363", 1000));
        assert_eq!((r.code, r.text.as_str()), (406, "TCP faces do not support MTU overrides"));
        let r = ask("create", create("udp4://127.0.0.1:6363", 100));
        assert_eq!((r.code, r.text.as_str()), (406, "Override MTU cannot be less than 256"));
        let r = ask("update", ControlParameters { face_id: Some(300), mtu: Some(1000), ..Default::default() });
        assert_eq!((r.code, r.body.and_then(|b| b.mtu)), (409, Some(1000)));
    }

    /// `rib/announce` with `prefix_announcement_validation`: an announcement signed by a key
    /// whose certificate (fetched from the announcing face) chains to the anchor makes its
    /// route; one signed by another key, or with DigestSha256, is refused (403) and makes none.
    /// The same for the announcements self-learning brings.
    #[test]
    fn prefix_announcements_are_validated_when_configured() {
        use announce::tests::signed_announcement;
        use validator::tests::key;
        const NOW: u64 = 1_800_000_000_000;
        let rules = "rule\n{\n  for data\n  checker\n  {\n    type hierarchical\n    sig-type ecdsa-sha256\n  }\n}\n";
        let (_dir, mut m, op) = rooted_manager(RibTrust::PrefixAnnouncement, rules);
        let op_key = key(5);
        let mut host = NullHost::default();
        let announce = |m: &mut Manager, host: &mut NullHost, pa: Vec<u8>| {
            let mut i = Interest::new(Name::from_uri("/localhost/nfd/rib/announce").unwrap());
            i.set_app_parameters(pa);
            i.sign_digest_sha256();
            let wire = i.to_bytes();
            m.handle(host, NOW, 300, FaceScope::Local, None, &InterestView::decode(&wire).unwrap()).unwrap()
        };
        let code = |data: &[u8]| ControlResponse::decode(nexthop_wire::DataView::decode(data).unwrap().content().unwrap()).unwrap().code;
        let routed = |m: &Manager, prefix: &str| !m.rib.routes(&Name::from_uri(prefix).unwrap()).is_empty();

        // Signed by the operator: its certificate is fetched, then the route made.
        assert_eq!(announce(&mut m, &mut host, signed_announcement("/root/op/app", &op_key, "/root/op/KEY/k1")), None, "waits");
        assert_eq!(host.expressed.len(), 1, "the certificate asked for");
        let answered = m.on_answer(&mut host, NOW + 10, &op);
        assert_eq!(answered.iter().map(|d| code(&d.data)).collect::<Vec<_>>(), [200]);
        assert!(routed(&m, "/root/op/app"));
        // Signed by another key under the operator's name (the certificate fetched again, the
        // signature does not verify), or with DigestSha256 (no KeyLocator): refused.
        assert_eq!(announce(&mut m, &mut host, signed_announcement("/root/op/other", &key(9), "/root/op/KEY/k1")), None);
        let answered = m.on_answer(&mut host, NOW + 20, &op);
        assert_eq!(answered.iter().map(|d| code(&d.data)).collect::<Vec<_>>(), [403]);
        let mut unsigned = nexthop_wire::Data::decode(&signed_announcement("/root/op/plain", &op_key, "/root/op/KEY/k1")).unwrap();
        unsigned.sign_digest_sha256();
        assert_eq!(announce(&mut m, &mut host, unsigned.to_bytes()).map(|d| code(&d)), Some(403));
        assert!(!routed(&m, "/root/op/other") && !routed(&m, "/root/op/plain"));
        // The self-learning strategy's announcements pass the same validation before a route
        // is learned from them (nothing is answered either way).
        m.learn(&mut host, NOW + 30, 300, &signed_announcement("/root/op/learned", &op_key, "/root/op/KEY/k1"));
        m.learn(&mut host, NOW + 30, 300, &signed_announcement("/root/op/forged", &key(9), "/root/op/KEY/k1"));
        assert!(!routed(&m, "/root/op/learned"), "not before its certificate");
        assert!(m.on_answer(&mut host, NOW + 40, &op).is_empty());
        assert!(routed(&m, "/root/op/learned") && !routed(&m, "/root/op/forged"));
        m.learn(&mut host, NOW + 50, 300, &unsigned.to_bytes());
        assert!(!routed(&m, "/root/op/plain"));
    }

    const VERBS: [(&str, &str); 18] = [
        ("rib", "register"),
        ("rib", "unregister"),
        ("rib", "announce"),
        ("rib", "list"),
        ("fib", "add-nexthop"),
        ("fib", "remove-nexthop"),
        ("faces", "create"),
        ("faces", "destroy"),
        ("faces", "update"),
        ("faces", "query"),
        ("faces", "events"),
        ("faces", "channels"),
        ("strategy-choice", "set"),
        ("strategy-choice", "unset"),
        ("cs", "config"),
        ("cs", "erase"),
        ("cs", "info"),
        ("status", "general"),
    ];

    proptest! {
        /// Any bytes as a command's parameters (in the name, as ControlParameters do, and as
        /// ApplicationParameters, as rib/announce does), from a local face or another: an
        /// answer or a drop, never a panic.
        #[test]
        fn arbitrary_parameters_never_panic(
            which in 0usize..VERBS.len(),
            params in proptest::collection::vec(any::<u8>(), 0..120),
            app_params in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..120)),
            local: bool,
        ) {
            let (module, verb) = VERBS[which];
            let mut m = Manager::new(0);
            let name = Name::from_uri(&format!("/localhost/nfd/{module}/{verb}")).unwrap().with(Component::generic(params));
            let mut i = Interest::new(name);
            i.nonce = Some([1, 2, 3, 4]);
            if let Some(p) = app_params {
                i.set_app_parameters(p);
            }
            let wire = i.to_bytes();
            let view = InterestView::decode(&wire).unwrap();
            let scope = if local { FaceScope::Local } else { FaceScope::NonLocal };
            let _ = m.handle(&mut NullHost::default(), 1_000, 300, scope, Some(&[7]), &view);
            let _ = m.face_event(events::FaceEventKind::Created, &NullHost::default().face(300).unwrap(), 2_000);
        }

        /// Well-formed ControlParameters with any fields and values, for every command: an
        /// answer with a status code, never a panic.
        #[test]
        fn any_well_formed_parameters_get_an_answer(
            which in 0usize..VERBS.len(),
            name in proptest::option::of(proptest::collection::vec("[a-c]{1,3}", 0..4)),
            numbers in proptest::collection::vec(proptest::option::of(any::<u64>()), 8),
            uri in proptest::option::of("(udp4|tcp4|unix|ws)://[a-z0-9.:]{0,12}"),
        ) {
            let (module, verb) = VERBS[which];
            let p = ControlParameters {
                name: name.map(|c| Name::from_uri(&format!("/{}", c.join("/"))).unwrap()),
                face_id: numbers[0],
                origin: numbers[1],
                cost: numbers[2],
                capacity: numbers[3],
                count: numbers[4],
                flags: numbers[5],
                mask: numbers[6],
                expiration_period: numbers[7],
                uri,
                ..Default::default()
            };
            let mut m = Manager::new(0);
            let name = Name::from_uri(&format!("/localhost/nfd/{module}/{verb}")).unwrap().with(Component::generic(p.encode()));
            let mut i = Interest::new(name);
            i.nonce = Some([1, 2, 3, 4]);
            let wire = i.to_bytes();
            let view = InterestView::decode(&wire).unwrap();
            let answer = m.handle(&mut NullHost::default(), 1_000, 300, FaceScope::Local, None, &view);
            let command = !matches!(verb, "list" | "query" | "events" | "channels" | "info" | "general");
            if command {
                let Ok(Some(reply)) = answer else { panic!("{module}/{verb}: {answer:?}") };
                let data = nexthop_wire::DataView::decode(&reply).unwrap();
                prop_assert!(ControlResponse::decode(data.content().unwrap_or_default()).is_ok());
            }
        }
    }
}
