//! One forwarding shard: the NDN forwarding pipeline over its own PIT, content-store shard,
//! dead-nonce list, and its view of the FIB (its own, or the one all threads share). Sans-I/O: packets come in as classified views with the face
//! they arrived on and the time, packets go out into an [`Outbox`].
//!
//! Overview of the pipeline (after NFD's; one file per packet type, as NDN-DPDK's fwd-interest,
//! fwd-data and fwd-nack):
//! - Interest (`interest.rs`): HopLimit 0 → drop; no Nonce → one is added, and no HopLimit → the configured
//!   default one ([`ShardConfig::default_hop_limit`], NFD's; 0: none); nonce in the dead-nonce
//!   list or in the PIT entry → loop (Nack Duplicate; on a multi-access or ad hoc link dropped
//!   without one), unless it is the same downstream's again over a point-to-point link (a
//!   retransmission, as NFD takes it). New entry: content store (a hit answers and nothing else
//!   happens), the entry is made (or refused at the PIT bound, counted), FIB longest prefix
//!   match (the forwarding hint first when it has one; NextHopFaceId from a local face
//!   overrides the strategy), the strategy picks upstreams — none: the entry goes, Nack NoRoute
//!   — and the Interest goes out with a PIT token naming this shard and entry, HopLimit
//!   decremented (one that would
//!   leave with HopLimit 0 goes only to faces on this host, as NFD drops it on the others).
//!   Existing entry: the in-record is added or refreshed; if an upstream is still pending, the
//!   Interest (any downstream's, a retransmission) is aggregated or the strategy retries, as
//!   the strategy suppresses retransmissions ([`crate::pipeline::strategy::retx_suppression::RetxSuppression`], NFD's:
//!   best-route and ASF within an interval per entry that starts at `retry_interval_ms` and
//!   doubles to 250 ms, multicast per upstream, access 100 ms, random and self-learning never).
//!   A forwarding hint that names a region this forwarder is in
//!   ([`ShardConfig::network_regions`]) is removed first, and the Interest is forwarded by name.
//! - Data (`data.rs`): the PIT token finds its entry directly (checked against the name); without one the
//!   PIT is searched by name (exact, prefixes for CanBePrefix entries, implicit digest). No
//!   match → dropped as unsolicited (and cached if [`ShardConfig::unsolicited`] admits it from
//!   that face). Otherwise it is cached (unless CachePolicy NoCache) and sent to every
//!   downstream with that downstream's PIT token, and the entries go.
//! - Strategies ([`strategy`]): each PIT entry is forwarded by the strategy instance chosen for
//!   its name when it was made ([`StrategyId`]). The pipeline calls the instance's triggers
//!   (Interest, Data, Nack, expiry, its timers, ticks, faces gone) and carries out what it
//!   answers (faces to send to, a probe, NonDiscovery, a silent drop, a retry elsewhere, routes
//!   to learn or forget, handed to the RIB through the [`Outbox`]); a strategy never sends.
//! - Nack (`nack.rs`): marks the upstream's out-record; the strategy may retry another next hop
//!   (best-route) or Nack at once (self-learning); otherwise, once every upstream has Nacked,
//!   each downstream gets a Nack with the least severe reason.
//! - Content store on the SSD tier: with [`ShardConfig::cs_background_reads`], an Interest whose
//!   Data must come from the SSD tier does not hold up the thread: its batch is read in the
//!   background and the Interest is *parked* (a copy, with its face and link fields) until
//!   [`Shard::poll_content_store`] finds the read done; it then goes through the pipeline again
//!   and hits the DRAM tier. (If the read failed or its batch was replaced meanwhile, that second
//!   pass reads and waits, or misses and forwards: a parked Interest is always answered or
//!   forwarded.) The runtime polls while [`Shard::has_parked`] says Interests wait.
//! - Time: [`Shard::expire`] removes expired entries (their nonces go to the dead-nonce list).
//! - Scope (NFD's): a `/localhost` Interest leaves only on local faces, and so does a `/localhop`
//!   Interest that came from another host ([`stays_local`]); with no upstream left it gets a
//!   Nack NoRoute.
//! - Control: strategy choices and face removals arrive as [`Control`] operations, in order
//!   with packets; so do routes for a shard that owns its FIB. A shared FIB is changed by the I/O
//!   thread ([`crate::table::shared_fib::FibWriter`]) while the shards go on looking up.

mod data;
mod interest;
mod nack;
pub mod outbox;
pub mod strategy;

use std::sync::Arc;

use nexthop_cs::{HcsConfig, HierarchicalStore, L2Error};
use nexthop_lookup::name::NextHops;
use nexthop_wire::types::GENERIC_NAME_COMPONENT;
use nexthop_wire::{InterestView, NackReason, Name, NameView};

use crate::counters::{DropReason, ShardCounters};
use crate::face::{FaceId, FaceScope, LinkType};
use crate::lp::encode::LpFields;
use crate::lp::packet::{Incoming, LinkInfo, Network};
use crate::pipeline::outbox::Outbox;
use crate::pipeline::strategy::registry::StrategyName;
use crate::pipeline::strategy::{Announcement, Draws, ForwardingStrategy, Timer};
use crate::table::dead_nonce::DeadNonceList;
use crate::table::fib::FibOp;
use crate::table::pit::Pit;
use crate::table::pit_token::TokenBuf;
use crate::table::shared_fib::{Route, ShardFib};
use crate::table::strategy_choice::{StrategyId, StrategyTable};

/// How a shard is built.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardConfig {
    /// This shard's number (it goes into PIT tokens).
    pub index: u8,
    /// PIT entries at most.
    pub pit_max_entries: usize,
    /// Pending Interests one face may have at most (so a flood from one face leaves room for
    /// the others).
    pub pit_max_per_face: usize,
    /// The content store; `None` for none.
    pub cs: Option<HcsConfig>,
    /// How long a retired nonce is remembered.
    pub dead_nonce_ms: u64,
    /// Most nonces remembered.
    pub dead_nonce_capacity: usize,
    /// The first retransmission suppression interval (ms; NFD's 10): another Interest for a
    /// pending name sooner than this after the last forwarding is aggregated (see
    /// [`crate::pipeline::strategy::retx_suppression::RetxSuppression`]).
    pub retry_interval_ms: u64,
    /// The HopLimit given to an Interest that arrives without one (NFD's
    /// `default_hop_limit`); 0: none is given.
    pub default_hop_limit: u8,
    /// Park an Interest whose Data is on the SSD tier while its batch is read in the
    /// background, instead of waiting for the read (an io_uring file tier; see the overview).
    pub cs_background_reads: bool,
    /// The producer regions this forwarder is in (NFD's network region table).
    pub network_regions: Vec<Name>,
    /// Whether Data no Interest asked for is cached.
    pub unsolicited: UnsolicitedPolicy,
}

/// What becomes of Data no PIT entry wanted (NFD's unsolicited Data policies): it is never
/// forwarded, and is cached or not by the face it came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnsolicitedPolicy {
    /// Never cached (NFD's default).
    #[default]
    DropAll,
    /// Cached when it comes from a face local to this host (an app).
    AdmitLocal,
    /// Cached when it comes from another host.
    AdmitNetwork,
    /// Always cached.
    AdmitAll,
}

impl UnsolicitedPolicy {
    /// The policy of NFD's name (`drop-all`, `admit-local`, `admit-network`, `admit-all`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "drop-all" => UnsolicitedPolicy::DropAll,
            "admit-local" => UnsolicitedPolicy::AdmitLocal,
            "admit-network" => UnsolicitedPolicy::AdmitNetwork,
            "admit-all" => UnsolicitedPolicy::AdmitAll,
            _ => return None,
        })
    }

    /// Whether Data from a face of `scope` is cached.
    pub fn admits(self, scope: FaceScope) -> bool {
        match self {
            UnsolicitedPolicy::DropAll => false,
            UnsolicitedPolicy::AdmitLocal => scope == FaceScope::Local,
            UnsolicitedPolicy::AdmitNetwork => scope == FaceScope::NonLocal,
            UnsolicitedPolicy::AdmitAll => true,
        }
    }
}

impl Default for ShardConfig {
    fn default() -> Self {
        ShardConfig {
            index: 0,
            pit_max_entries: 1 << 20,
            pit_max_per_face: 1 << 18,
            cs: None,
            dead_nonce_ms: 6000,
            dead_nonce_capacity: 1 << 18,
            retry_interval_ms: 10,
            default_hop_limit: 0,
            cs_background_reads: true,
            network_regions: Vec::new(),
            unsolicited: UnsolicitedPolicy::DropAll,
        }
    }
}

/// A change to a shard's tables, applied in order with packets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Set the next hops of a route (an empty set removes it).
    SetRoute(Name, NextHops),
    /// Choose a strategy under a prefix.
    SetStrategy(Name, StrategyName),
    /// Remove the strategy choice at a prefix.
    UnsetStrategy(Name),
    /// A face has gone: forget it in the PIT.
    FaceDown(FaceId),
    /// Put IncomingFaceId on packets sent to this face (NFD's local fields), or stop.
    LocalFields(FaceId, bool),
    /// A face that reaches beyond this host is up: `/localhost` Interests never leave on it, nor
    /// `/localhop` Interests from another host (see [`stays_local`]).
    NonLocalFace(FaceId),
    /// A face whose link is not point-to-point is up ([`LinkType`]): the same nonce again from
    /// it is a loop, and from an ad hoc one an Interest and its Data may leave on the face they
    /// came from (on a wireless medium a neighbour may not hear another).
    LinkType(FaceId, LinkType),
    /// Give back the FIB's spare capacity after a bulk load of routes (answers do not change).
    CompactFib,
    /// NFD's `cs/config`: the content store's packet limit and whether it admits and serves.
    ConfigureCs(CsPolicy),
    /// What becomes of unsolicited Data from now on (a reloaded configuration's).
    SetUnsolicited(UnsolicitedPolicy),
    /// The HopLimit given from now on to an Interest that arrives without one (a reloaded
    /// configuration's; 0: none).
    SetDefaultHopLimit(u8),
    /// A prefix announcement the RIB holds (a producer's `rib/announce`, or one learned by the
    /// self-learning strategy), until `expires_ms` or its face goes: the self-learning strategy
    /// attaches it to Data that answers a discovery Interest from another host.
    Announce {
        /// The announced prefix.
        prefix: Name,
        /// The face its route goes to.
        face: FaceId,
        /// The announcement (a Data packet).
        announcement: Vec<u8>,
        /// When it lapses.
        expires_ms: u64,
    },
}

/// How a shard uses its content store (NFD's `cs/config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsPolicy {
    /// Packets the shard's store may hold (its L1; at most the slots it allocated).
    pub limit: u32,
    /// Data that arrives is stored (NFD's CS_ENABLE_ADMIT).
    pub admit: bool,
    /// Interests are answered from the store (NFD's CS_ENABLE_SERVE).
    pub serve: bool,
}

/// Most Interests parked at once for SSD reads (beyond it, a lookup waits for its read).
pub const MAX_PARKED: usize = 1 << 14;

/// An Interest waiting for its content-store batch to be read from the SSD tier.
#[derive(Debug)]
struct Parked {
    face: FaceId,
    scope: FaceScope,
    pit_token: Option<TokenBuf>,
    next_hop_face_id: Option<u64>,
    non_discovery: bool,
    wire: Vec<u8>,
}

/// One shard of the forwarder.
#[derive(Debug)]
pub struct Shard {
    cfg: ShardConfig,
    fib: ShardFib,
    strategies: StrategyTable<StrategyId>,
    /// The strategy instances, by [`StrategyId`]: one per distinct name.
    instances: Vec<(StrategyName, Box<dyn ForwardingStrategy>)>,
    pit: Pit,
    dead_nonces: DeadNonceList,
    cs: Option<HierarchicalStore>,
    counters: Arc<ShardCounters>,
    local_fields: Vec<FaceId>,
    /// Faces that reach beyond this host.
    nonlocal: hashbrown::HashSet<FaceId>,
    /// The faces whose link is not point-to-point, and what it is.
    links: hashbrown::HashMap<FaceId, LinkType>,
    pending_by_face: hashbrown::HashMap<FaceId, usize>,
    matched: Vec<u32>,
    hops: Vec<FaceId>,
    fired: Vec<Timer>,
    /// Nonces and the strategies' random draws.
    draws: Draws,
    /// Parked Interests by the batch being read for them.
    parked: hashbrown::HashMap<u64, Vec<Parked>>,
    parked_count: usize,
    /// Set while parked Interests go through the pipeline again (they do not park twice).
    resuming: bool,
    /// Data is stored in the content store ([`Control::ConfigureCs`]).
    cs_admit: bool,
    /// Interests are answered from the content store.
    cs_serve: bool,
    /// Prefix announcements by prefix (TLV-VALUE), for the self-learning strategy.
    announcements: hashbrown::HashMap<Box<[u8]>, Announcement>,
}

/// How a forwarder sends its copy of an Interest: where its HopLimit and Nonce are (to
/// rewrite), and whether it carries NonDiscovery.
#[derive(Debug, Clone, Copy)]
struct SendAs {
    hop_limit: Option<usize>,
    nonce: Option<usize>,
    non_discovery: bool,
}

impl SendAs {
    fn of(interest: &InterestView<'_>) -> Self {
        SendAs { hop_limit: interest.hop_limit_offset(), nonce: interest.nonce_offset(), non_discovery: false }
    }
}

impl Shard {
    /// A shard with empty tables.
    ///
    /// # Errors
    /// [`L2Error`] when the content store's SSD tier cannot be opened.
    pub fn new(cfg: ShardConfig, fib: impl Into<ShardFib>) -> Result<Self, L2Error> {
        let fib = fib.into();
        let cs = cfg.cs.clone().map(HierarchicalStore::new).transpose()?;
        let counters = Arc::new(ShardCounters::default());
        let cfg_index = cfg.index;
        counters.fib_entries.set(fib.len() as u64);
        Ok(Shard {
            pit: Pit::new(cfg.pit_max_entries),
            dead_nonces: DeadNonceList::new(cfg.dead_nonce_ms, cfg.dead_nonce_capacity),
            draws: Draws::new(0x853c_49e6_748f_ea9b ^ u64::from(cfg.index)),
            cfg,
            fib,
            strategies: StrategyTable::default(),
            instances: vec![{
                let root = StrategyName::default();
                let instance = root.instantiate(strategy_seed(cfg_index));
                (root, instance)
            }],
            cs,
            counters,
            local_fields: Vec::new(),
            nonlocal: hashbrown::HashSet::new(),
            links: hashbrown::HashMap::new(),
            pending_by_face: hashbrown::HashMap::new(),
            matched: Vec::new(),
            hops: Vec::new(),
            fired: Vec::new(),
            parked: hashbrown::HashMap::new(),
            parked_count: 0,
            resuming: false,
            cs_admit: true,
            cs_serve: true,
            announcements: hashbrown::HashMap::new(),
        })
    }

    /// The counters (shared with whoever reports them).
    pub fn counters(&self) -> &Arc<ShardCounters> {
        &self.counters
    }

    /// The PIT.
    pub fn pit(&self) -> &Pit {
        &self.pit
    }

    /// The content store.
    pub fn cs(&self) -> Option<&HierarchicalStore> {
        self.cs.as_ref()
    }

    /// The content store, writable (tests wait for its writes with it).
    pub fn cs_mut(&mut self) -> Option<&mut HierarchicalStore> {
        self.cs.as_mut()
    }

    /// Applies a control operation.
    pub fn apply(&mut self, op: &Control) {
        match op {
            Control::SetRoute(name, hops) => {
                self.fib.apply_own(&FibOp::Set(name.clone(), hops.clone()));
                self.counters.fib_entries.set(self.fib.len() as u64);
            }
            Control::SetStrategy(prefix, name) => {
                let id = self.instance_of(name);
                self.strategies.set(&prefix.as_view(), id);
            }
            Control::UnsetStrategy(prefix) => {
                self.strategies.unset(&prefix.as_view());
            }
            Control::FaceDown(face) => self.face_down(*face),
            Control::LocalFields(face, on) => {
                self.local_fields.retain(|f| f != face);
                if *on {
                    self.local_fields.push(*face);
                }
            }
            Control::NonLocalFace(face) => {
                self.nonlocal.insert(*face);
            }
            Control::LinkType(face, link) => {
                self.links.insert(*face, *link);
            }
            Control::CompactFib => self.fib.apply_own(&FibOp::Compact),
            Control::Announce { prefix, face, announcement, expires_ms } => {
                let a = Announcement { face: *face, wire: announcement.clone(), expires_ms: *expires_ms };
                self.announcements.insert(prefix.value().into(), a);
            }
            Control::SetUnsolicited(policy) => self.cfg.unsolicited = *policy,
            Control::SetDefaultHopLimit(limit) => self.cfg.default_hop_limit = *limit,
            Control::ConfigureCs(policy) => {
                self.cs_admit = policy.admit;
                self.cs_serve = policy.serve;
                if let Some(cs) = self.cs.as_mut() {
                    cs.set_l1_limit(policy.limit);
                    self.counters.cs_entries.set(cs.l1().len() as u64);
                }
            }
        }
    }

    /// NFD's `cs/erase`: erases up to `max` packets whose names start with `prefix` from the
    /// content store; returns how many and whether more remain (see
    /// [`HierarchicalStore::erase_prefix`] for the SSD tier).
    pub fn erase_cs(&mut self, prefix: &Name, max: usize) -> (usize, bool) {
        let Some(cs) = self.cs.as_mut() else { return (0, false) };
        let erased = cs.erase_prefix(prefix.value(), max);
        self.counters.cs_entries.set(cs.l1().len() as u64);
        erased
    }

    /// Processes one classified packet from `face`.
    pub fn on_incoming(&mut self, now_ms: u64, face: FaceId, scope: FaceScope, incoming: &Incoming<'_>, out: &mut Outbox) {
        match incoming.packet {
            Network::Interest(i) => self.on_interest(now_ms, face, scope, &incoming.link, &i, out),
            Network::Data(d) => self.on_data(now_ms, face, scope, &incoming.link, &d, out),
            Network::Nack(r, i) => self.on_nack(now_ms, face, &incoming.link, r, &i, out),
        }
        self.counters.pit_entries.set(self.pit.len() as u64);
    }

    fn fields<'t>(&self, token: Option<&'t [u8]>, nack: Option<NackReason>, to: FaceId, from: FaceId) -> LpFields<'t> {
        let incoming_face_id = (!self.local_fields.is_empty() && self.local_fields.contains(&to)).then_some(from);
        LpFields { pit_token: token, nack, incoming_face_id, ..LpFields::default() }
    }

    /// The shard's instance of the strategy `name` (made the first time it is chosen).
    fn instance_of(&mut self, name: &StrategyName) -> StrategyId {
        let index = match self.instances.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.instances.push((name.clone(), name.instantiate(strategy_seed(self.cfg.index))));
                self.instances.len() - 1
            }
        };
        StrategyId(index as u32)
    }

    /// The instance of strategy `id`.
    fn strategy(&mut self, id: StrategyId) -> &mut dyn ForwardingStrategy {
        &mut *self.instances[id.0 as usize].1
    }

    /// An Interest the strategy found no hop for: Nack NoRoute back, or, where the strategy
    /// said so (self-learning), dropped without one.
    fn no_hop(&mut self, face: FaceId, link: &LinkInfo<'_>, silent: bool, interest: &InterestView<'_>, out: &mut Outbox) {
        if silent {
            self.counters.drops.count(DropReason::NoEligibleHop);
        } else {
            self.counters.drops.count(DropReason::NoRoute);
            self.nack_back(face, link, NackReason::NoRoute, interest.wire(), out);
        }
    }

    fn nack_back(&self, face: FaceId, link: &LinkInfo<'_>, reason: NackReason, interest: &[u8], out: &mut Outbox) {
        out.push(face, &self.fields(link.pit_token, Some(reason), face, face), interest);
        self.counters.nacks_out.inc();
    }

    /// Whether `face`'s link is ad hoc ([`LinkType::AdHoc`]).
    fn is_ad_hoc(&self, face: FaceId) -> bool {
        self.links.get(&face) == Some(&LinkType::AdHoc)
    }

    /// Whether `face`'s link is point-to-point (every face not told otherwise).
    fn is_point_to_point(&self, face: FaceId) -> bool {
        !self.links.contains_key(&face)
    }

    /// Whether `face` may have one more pending Interest.
    fn face_has_room(&self, face: FaceId) -> bool {
        self.pending_by_face.get(&face).copied().unwrap_or(0) < self.cfg.pit_max_per_face
    }

    fn hold(&mut self, face: FaceId) {
        *self.pending_by_face.entry(face).or_default() += 1;
    }

    fn release(&mut self, face: FaceId) {
        if let hashbrown::hash_map::Entry::Occupied(mut e) = self.pending_by_face.entry(face) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
    }

    fn release_entry(&mut self, entry: &crate::table::pit::Entry) {
        for r in &entry.in_records {
            self.release(r.face);
        }
    }

    fn next_nonce(&mut self) -> [u8; 4] {
        // Nonces need to differ, not to be secret.
        self.draws.next_u32().to_be_bytes()
    }

    /// Whether Interests are parked for SSD reads (the runtime then calls
    /// [`Shard::poll_content_store`] without waiting for packets).
    pub fn has_parked(&self) -> bool {
        self.parked_count > 0
    }

    /// Collects the content store's finished SSD reads (and resets its
    /// [`HierarchicalStore::signal_fd`]) and sends every Interest parked for them through the
    /// pipeline again.
    pub fn poll_content_store(&mut self, now_ms: u64, out: &mut Outbox) {
        let Some(cs) = self.cs.as_mut() else { return };
        cs.poll_reads();
        if self.parked.is_empty() {
            return;
        }
        let done: Vec<u64> = self.parked.keys().copied().filter(|&b| !cs.is_reading(b)).collect();
        for batch in done {
            for p in self.parked.remove(&batch).unwrap_or_default() {
                self.parked_count -= 1;
                let Ok(interest) = InterestView::decode(&p.wire) else { continue }; // Decoded once already.
                let link = LinkInfo {
                    pit_token: p.pit_token.as_ref().map(TokenBuf::as_slice),
                    next_hop_face_id: p.next_hop_face_id,
                    non_discovery: p.non_discovery,
                    ..LinkInfo::default()
                };
                self.resuming = true;
                self.process_interest(now_ms, p.face, p.scope, &link, &interest, out);
                self.resuming = false;
            }
        }
        self.update_cs_gauges();
    }

    /// Sets the SSD tier's gauges (on each tick, poll, parking and face removal: not on the
    /// content-store hit path).
    fn update_cs_gauges(&self) {
        let Some(cs) = self.cs.as_ref() else { return };
        if cs.l2().is_some() {
            let (stats, l2) = (cs.stats(), cs.l2_stats());
            let background = stats.background_reads;
            self.counters.cs_l2_read_aheads.set(l2.read_aheads - background);
            self.counters.cs_dram_only.set(stats.l1_only);
            self.counters.cs_l2_background_reads.set(background);
            self.counters.cs_l2_chunk_reads.set(l2.chunk_reads);
            self.counters.cs_l2_read_bytes.set(l2.read_bytes);
            self.counters.cs_parked_now.set(self.parked_count as u64);
        }
    }

    /// Removes entries that expired by `now_ms`; their nonces go to the dead-nonce list.
    pub fn expire(&mut self, now_ms: u64) {
        while let Some(entry) = self.pit.pop_expired(now_ms) {
            self.strategy(entry.strategy).before_expiry(now_ms, &entry);
            self.release_entry(&entry);
            self.counters.unsatisfied.inc();
            // Every nonce it went out with (NFD adds the out-records'; a probe's is its own); the
            // list keeps a pair once.
            for nonce in entry.in_records.iter().map(|r| r.nonce).chain(entry.out_records.iter().map(|r| r.nonce)) {
                self.dead_nonces.add(&entry.name, nonce, now_ms);
            }
            self.pit.recycle(entry);
        }
        self.dead_nonces.expire(now_ms);
        self.counters.pit_entries.set(self.pit.len() as u64);
        self.update_cs_gauges();
    }

    /// The strategies' ticks: their timers due at `now_ms` fire (the access strategy's: an
    /// Interest whose one upstream has not answered within its RTO goes to every other next hop)
    /// and their measurements lapse.
    pub fn fire_timers(&mut self, now_ms: u64, out: &mut Outbox) {
        let mut fired = std::mem::take(&mut self.fired);
        for id in 0..self.instances.len() {
            fired.clear();
            self.instances[id].1.tick(now_ms, &mut fired);
            for t in &fired {
                self.strategy_timer(now_ms, StrategyId(id as u32), t, out);
            }
        }
        self.fired = fired;
    }

    fn face_down(&mut self, face: FaceId) {
        for (_, s) in &mut self.instances {
            s.face_down(face);
        }
        self.announcements.retain(|_, a| a.face != face);
        for slot in self.pit.slots_with_face(face) {
            let Some(e) = self.pit.get_mut(slot) else { continue };
            e.in_records.retain(|r| r.face != face);
            e.out_records.retain(|r| r.face != face);
            if e.in_records.is_empty() {
                self.pit.remove(slot);
            }
        }
        self.pending_by_face.remove(&face);
        self.local_fields.retain(|&f| f != face);
        self.nonlocal.remove(&face);
        self.links.remove(&face);
        self.counters.pit_entries.set(self.pit.len() as u64);
        // Parked Interests from the face are forgotten (their batch reads finish regardless).
        for waiting in self.parked.values_mut() {
            let before = waiting.len();
            waiting.retain(|p| p.face != face);
            self.parked_count -= before - waiting.len();
        }
        self.parked.retain(|_, waiting| !waiting.is_empty());
        self.update_cs_gauges();
    }
}

/// The seed of a shard's strategies' random draws.
fn strategy_seed(shard: u8) -> u64 {
    0x2545_f491_4f6c_dd1d ^ u64::from(shard)
}

/// The FIB route of an Interest and the name it was found by: the forwarding hint's first
/// delegation that has a route, else the Interest's name.
fn route_of<'f, 'i>(fib: &'f ShardFib, interest: &InterestView<'i>) -> Option<(NameView<'i>, Route<'f>)> {
    interest
        .forwarding_hint()
        .find_map(|d| fib.find(|f| f.lookup(&d)).map(|r| (d, r)))
        .or_else(|| fib.find(|f| f.lookup(&interest.name())).map(|r| (interest.name(), r)))
}

/// The name an Interest or Data is dispatched by: its first `components` components.
pub fn dispatch_prefix<'a>(name: &NameView<'a>, components: usize) -> NameView<'a> {
    name.prefix(components.min(name.len()))
}
/// Whether an Interest for `name` that came in on a face of scope `from` may leave only on faces
/// local to this host (NFD's scope control): `/localhost` never leaves the host, and `/localhop`
/// goes at most one hop off it, so one from another host goes only to local faces. (A routing
/// daemon's sync Interests under `/localhop` thus reach its neighbours and stop there.)
pub fn stays_local(name: &NameView<'_>, from: FaceScope) -> bool {
    name.get(0).is_some_and(|c| {
        c.ty() == GENERIC_NAME_COMPONENT && (c.value() == b"localhost" || (c.value() == b"localhop" && from == FaceScope::NonLocal))
    })
}
