//! The runtime: sockets, threads and time around the sans-I/O core.
//!
//! Overview: one I/O thread runs a `mio` poll over the listeners (Unix, TCP, UDP), the stream
//! faces and a waker. It reads packets (stream faces in 128 KiB reads cut into TLV frames; UDP
//! datagrams 64 per `recvmmsg`, at most `UDP_BATCHES_PER_TURN` (4) batches before the other faces
//! get their turn), classifies them, answers `/localhost/nfd` Interests from the [`Manager`],
//! and hands the rest to forwarding:
//! - `threads = 1`: the I/O thread runs the one [`Shard`] itself;
//! - `threads = n > 1`: packets are batched per forwarding thread by [`Dispatch`] and sent over
//!   channels; each thread returns an [`Outbox`] and wakes the poll.
//!
//! What is to be sent is appended to each face's send buffer and written once per loop turn, so
//! many packets leave in one system call; UDP output leaves in `sendmmsg` batches after each
//! receive batch and each turn; a packet larger than `faces.udp_mtu` leaves a UDP face as NDNLPv2
//! fragments, and fragments received on any face are reassembled here before classification
//! ([`crate::lp::fragmentation`]). Every 10 ms (a tick) the PIT expires entries and the strategies'
//! timers fire; every second lapsed routes and idle on-demand UDP faces go.
//!
//! The faces and how packets leave them are in `faces` (one face's state in `face`); each kind
//! of link a face can have (a stream socket, a UDP peer, a multicast group, an Ethernet peer or
//! group) is a module of the face registry, `link`, behind its one interface; which multicast faces and Ethernet ports
//! there are, kept in step with the host's interfaces, in `multicast_faces` and `ether_ports`;
//! the configuration's faces, routes and strategies in `static_config` (routes to a multicast
//! group in `group_routes`), and how a reload changes them in `reload`; what the management
//! protocol sees of the runtime is in `host`; the forwarding threads' loop in `worker`. With
//! nothing to do the loop sleeps, waking once a second ([`Runtime::run`]).

pub mod dispatch;
mod ether_ports;
mod face;
mod faces;
mod group_routes;
mod host;
mod link;
mod listen;
mod multicast_faces;
mod reload;
mod static_config;
mod worker;

pub use mio::Waker;
pub use reload::{LoadConfig, ReportReload};
pub use static_config::{read_route_file, Written};

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, Sender};
use mio::net::{TcpListener, UdpSocket, UnixListener};
use mio::{Events, Interest, Poll, Token};
use nexthop_cs::{HcsConfig, L1Config, L2Config, Policy};
use nexthop_lookup::name::NameFibConfig;
use nexthop_wire::types::LP_PACKET;
use nexthop_wire::{LpPacketView, Name, NameView};

use crate::conf::config::Config;
use crate::counters::{DropCounters, DropReason, ShardCounters};
use crate::face::ether::{Destination, Received};
use crate::face::local_addresses::LocalAddresses;
use crate::face::uri::FaceUri;
use crate::face::MAX_PACKET_BYTES;
use crate::face::{FaceId, FaceScope, Persistency, FIRST_FACE_ID};
use crate::lp::encode::LpFields;
use crate::lp::fragmentation::{reliable_timeout_ms, Reassembler, REASSEMBLY_TIMEOUT_MS};
use crate::lp::packet::{classify, Incoming, Network};
use crate::lp::reliability::{Arrival, Reliability};
use crate::mgmt::authorization::Authorizations;
use crate::mgmt::command_key::CommandKey;
use crate::mgmt::events::Delivery;
use crate::mgmt::keychain::Keychain;
use crate::mgmt::propagate::PropagateSettings;
use crate::mgmt::validator::Validator;
use crate::mgmt::{Host, Manager, PropagationSigner, RibTrust};
use crate::pipeline::outbox::{Outbox, PacketKind};
use crate::pipeline::strategy::registry::StrategyName;
use crate::pipeline::{Control, CsPolicy, Shard, ShardConfig, UnsolicitedPolicy};
use crate::runtime::dispatch::Dispatch;
use crate::sys::interface_watch::InterfaceWatch;
use crate::sys::privileges::Privileges;
use crate::sys::udp_batch::RecvBatch;
use crate::table::fib::{Fib, FibOp};
use crate::table::shared_fib::FibWriter;
use face::Face;
use faces::{Connection, Faces};
use host::{CsState, RuntimeHost};
use link::ether_port::ReceivedFrames;
use link::{EtherLink, EtherLinks, Link, LinkSettings, Links, ReadOutcome, Stream, StreamSocket, UdpLink, UdpLinks};
use worker::{ToWorker, Worker, PARKED_POLL};

/// How often the forwarding threads are told the time (ms): PIT expiry and the strategies'
/// timers (access, ASF) fire on these ticks, so at most this late.
const TICK_MS: u64 = 10;
/// With no packet for this long (ms) and nothing pending — no Interest in a PIT, no partial
/// packet, no face connecting again, no interface change to look at — the loop stops ticking
/// and wakes once a second (for the once-a-second work) or when a packet comes.
const IDLE_AFTER_MS: u64 = 1000;

const UNIX_LISTENER: Token = Token(0);
const TCP_LISTENER: Token = Token(1);
const UDP_SOCKET: Token = Token(2);
const WAKER: Token = Token(3);
/// The inline shard's content store: an SSD read finished.
const CS_SIGNAL: Token = Token(4);
const WS_LISTENER: Token = Token(5);
/// The kernel's notices that the interfaces changed.
const INTERFACE_WATCH: Token = Token(6);
/// How long after the kernel's last interface notice the interfaces are read again (ms):
/// bringing an interface up sends a burst of notices (the link, then each address).
const INTERFACES_SETTLE_MS: u64 = 200;
/// The first of the Ethernet ports' tokens (port i has `ETHER_PORTS + i`; face ids, the
/// other faces' tokens, start at 256).
const ETHER_PORTS: Token = Token(16);
/// Interfaces with Ethernet faces, at most.
const MAX_ETHER_PORTS: usize = FIRST_FACE_ID as usize - 16;

/// Bytes of partial packets (NDNLPv2 fragments) held for reassembly, over every face.
const REASSEMBLY_BYTES: usize = 16 << 20;

/// How long `cs/erase` and `cs/config` wait for a forwarding thread's answer.
const WORKER_WAIT: Duration = Duration::from_secs(5);

/// `recvmmsg` batches read from the UDP socket before other faces get a turn.
const UDP_BATCHES_PER_TURN: usize = 4;
/// Datagrams read from a multicast face per loop turn.
const MULTICAST_READS_PER_TURN: usize = 64;

/// A number that tells apart the senders on a multi-access face (for reassembly).
fn endpoint_key(from: &impl std::hash::Hash) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x6e64_6e5f_6d63_6173).hash_one(from) | 1
}

/// Why the forwarder could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A socket could not be opened.
    #[error("{what}: {error}")]
    Io {
        /// Which.
        what: String,
        /// Why (in the message, not a separate cause, so that it is said once).
        error: io::Error,
    },
    /// The configuration names something unusable.
    #[error("{0}")]
    Config(String),
    /// The content store's SSD tier.
    #[error("content store: {0}")]
    ContentStore(nexthop_cs::L2Error),
}

impl From<nexthop_cs::L2Error> for StartError {
    fn from(e: nexthop_cs::L2Error) -> Self {
        StartError::ContentStore(e)
    }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> StartError {
    let what = what.into();
    move |error| StartError::Io { what, error }
}

/// [`StartError::Config`] for a value of configuration key `key` that is wrong as `why` says.
fn config_err(key: &str) -> impl FnOnce(String) -> StartError + '_ {
    move |why| StartError::Config(format!("{key}: {why}"))
}

/// Forwarding: in the I/O thread, or in forwarding threads.
#[derive(Debug)]
enum Forwarding {
    Inline(Box<Shard>),
    /// Forwarding threads, and the FIB they share (this thread writes it).
    Threads {
        workers: Vec<Worker>,
        fib: Box<FibWriter>,
        dispatch: Dispatch,
        done: Receiver<Outbox>,
        recycle: Sender<Outbox>,
    },
}

impl Forwarding {
    fn counters(&self) -> Vec<Arc<ShardCounters>> {
        match self {
            Forwarding::Inline(s) => vec![s.counters().clone()],
            Forwarding::Threads { workers, .. } => workers.iter().map(|w| w.counters.clone()).collect(),
        }
    }

    fn apply(&mut self, op: Control) {
        match (self, op) {
            (Forwarding::Inline(s), op) => s.apply(&op),
            (Forwarding::Threads { fib, .. }, Control::SetRoute(name, hops)) => fib.apply(FibOp::Set(name, hops)),
            (Forwarding::Threads { fib, .. }, Control::CompactFib) => fib.apply(FibOp::Compact),
            (Forwarding::Threads { workers, .. }, op) => {
                for w in workers.iter_mut() {
                    w.flush();
                    let _ = w.tx.send(ToWorker::Control(op.clone()));
                }
            }
        }
    }

    /// Returns once every forwarding thread has done what it was handed so far (control
    /// operations included), or [`WORKER_WAIT`] has passed for one.
    fn wait_done(&mut self) {
        if let Forwarding::Threads { workers, .. } = self {
            for w in workers.iter_mut() {
                w.ask(ToWorker::Done, WORKER_WAIT);
            }
        }
    }

    /// Erases up to `max` content-store packets under `prefix`, shard after shard (each after
    /// the packets handed to it before) until `max` are gone; how many went and whether more
    /// may remain.
    fn erase_cs(&mut self, prefix: &Name, max: usize) -> (usize, bool) {
        match self {
            Forwarding::Inline(s) => s.erase_cs(prefix, max),
            Forwarding::Threads { workers, .. } => {
                let (mut erased, mut more) = (0, false);
                for w in workers.iter_mut() {
                    if erased == max {
                        // The count is used up: the other shards are left as they are (their
                        // SSD tiers too), and may hold more.
                        more = true;
                        break;
                    }
                    // The thread answers once it has forwarded what it was handed before.
                    let left = max - erased;
                    if let Some((n, m)) = w.ask(|reply| ToWorker::EraseCs(prefix.clone(), left, reply), WORKER_WAIT) {
                        erased += n;
                        more |= m;
                    }
                }
                (erased, more)
            }
        }
    }

    /// Forwards a packet that arrived on face `id` (`bytes`, classified as `incoming`): the
    /// inline shard appends what it sends to `out`; forwarding threads get it in their batch.
    fn forward(&mut self, now: u64, id: FaceId, scope: FaceScope, incoming: &Incoming<'_>, bytes: &[u8], out: &mut Outbox) {
        match self {
            Forwarding::Inline(shard) => shard.on_incoming(now, id, scope, incoming, out),
            Forwarding::Threads { workers, dispatch, .. } => {
                let mut shards = Vec::with_capacity(2);
                dispatch.packet(incoming, &mut shards);
                for s in shards {
                    workers[s].pending.push(now, id, scope, bytes);
                }
            }
        }
    }

    /// Whether the inline shard has Interests parked for SSD reads (forwarding threads poll
    /// for their own).
    fn has_parked(&self) -> bool {
        matches!(self, Forwarding::Inline(s) if s.has_parked())
    }

    /// Pending Interests, every shard (the threads' as of their latest packet or tick).
    fn pending_interests(&self) -> u64 {
        match self {
            Forwarding::Inline(s) => s.pit().len() as u64,
            Forwarding::Threads { workers, .. } => workers.iter().map(|w| w.counters.pit_entries.get()).sum(),
        }
    }

    /// Makes the shared FIB's changes visible to the forwarding threads (before they are handed
    /// packets, so a packet dispatched after a route change is forwarded with it).
    fn publish_fib(&mut self) {
        if let Forwarding::Threads { workers, fib, .. } = self {
            if let Some(routes) = fib.publish() {
                for w in workers.iter() {
                    w.counters.fib_entries.set(routes as u64);
                }
            }
        }
    }
}

/// The running forwarder.
#[derive(Debug)]
pub struct Runtime {
    poll: Poll,
    waker: Arc<Waker>,
    unix: Option<(UnixListener, String)>,
    tcp: Option<TcpListener>,
    websocket: Option<TcpListener>,
    faces: Faces,
    forwarding: Forwarding,
    manager: Manager,
    io_drops: Arc<DropCounters>,
    outbox: Outbox,
    cfg: Config,
    cs: CsState,
    clock: Clock,
    /// The inline shard's content store wakes the poll when an SSD read completes.
    cs_signal: bool,
    closing: Vec<FaceId>,
    /// Multicast faces that stopped reading with datagrams possibly left.
    multicast_more: Vec<FaceId>,
    /// Ethernet ports that stopped reading with frames possibly left.
    ether_more: Vec<usize>,
    /// The buffer multicast datagrams are received into (kept between reads).
    multicast_buf: Vec<u8>,
    /// Where it listens (as bound; a reload may move a listener).
    listening: Listening,
    /// A reload asked for, and how to read the configuration again ([`Runtime::reload_on`]).
    reloader: Option<reload::Reloader>,
    /// The user and group to forward as once started (`forwarder.user`, `forwarder.group`).
    privileges: Privileges,
    /// The kernel's interface notices (`None` where netlink is refused).
    interface_watch: Option<InterfaceWatch>,
    /// When the multicast faces are next brought in step with the interfaces.
    interfaces_settle_at: Option<u64>,
    /// Static routes to a multicast group's face (`group_routes`).
    group_routes: Vec<group_routes::GroupRoute>,
    /// The configuration's other routes, as applied (`static_config`).
    static_routes: static_config::StaticRoutes,
    /// The faces the configuration made (`static_config`): a reload closes those it no longer
    /// names.
    static_faces: static_config::StaticFaces,
    /// When the loop last had something to do (ms): a packet, a socket event.
    last_activity_ms: u64,
}

impl std::ops::Drop for Runtime {
    /// The Unix socket's file goes with the listener (a later start would find it stale anyway),
    /// removed as the user that made it.
    fn drop(&mut self) {
        if let Some((_, path)) = &self.unix {
            self.privileges.elevated(|| {
                let _ = std::fs::remove_file(path);
            });
        }
    }
}

/// The addresses a runtime listens on (with the ports the OS chose for port 0).
#[derive(Debug, Clone, Default)]
pub struct Listening {
    /// Unix socket path.
    pub unix: Option<String>,
    /// TCP.
    pub tcp: Option<SocketAddr>,
    /// UDP.
    pub udp: Option<SocketAddr>,
    /// WebSocket.
    pub websocket: Option<SocketAddr>,
}

fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The forwarder's time in milliseconds: wall-clock at start, then monotonic (shared by the I/O
/// thread and the forwarding threads).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    start_wall_ms: u64,
}

impl Clock {
    /// Now.
    pub fn now_ms(&self) -> u64 {
        self.start_wall_ms + self.start.elapsed().as_millis() as u64
    }
}

/// Where shard `index` of `shards` keeps its SSD tier: the configured path itself with one
/// shard, else `<path>.<index>` — each forwarding thread owns its file, as it owns its PIT.
pub fn l2_shard_path(path: &str, shards: usize, index: usize) -> String {
    if shards == 1 {
        path.to_string()
    } else {
        format!("{path}.{index}")
    }
}

/// The content store of shard `index` of `shards`: the L1 capacity and the SSD tier's bytes
/// split evenly, each shard's SSD tier in a file of its own ([`l2_shard_path`]).
fn cs_config(cfg: &Config, shards: usize, index: usize) -> Result<Option<HcsConfig>, StartError> {
    let c = &cfg.content_store;
    if c.capacity == 0 {
        return Ok(None);
    }
    // Checked when the configuration was read.
    let policy = crate::conf::config::cs_policy(&c.policy).unwrap_or(Policy::Lru);
    let per_shard = (c.capacity as usize).div_ceil(shards) as u32;
    let l1 = L1Config { capacity: per_shard, slot_bytes: c.slot_bytes, policy, prefix_index: true };
    let l2 = if c.l2_path.is_empty() {
        None
    } else {
        use std::os::unix::fs::FileTypeExt;
        let is_device = std::fs::metadata(&c.l2_path).is_ok_and(|m| m.file_type().is_block_device());
        if shards > 1 && is_device {
            return Err(StartError::Config(format!(
                "content_store.l2_path {} is a block device, which holds one shard's tier: use forwarder.threads = 1, or a file path (one file per thread is made beside it)",
                c.l2_path
            )));
        }
        let file = nexthop_cs::l2::FileConfig {
            path: l2_shard_path(&c.l2_path, shards, index).into(),
            create: true,
            direct: nexthop_cs::l2::DirectIo::Preferred,
            engine: nexthop_cs::l2::IoEngine::Auto,
        };
        let mut l2 = L2Config::new(c.l2_bytes / shards as u64, nexthop_cs::Backing::File(file));
        l2.chunk_slot_bytes = c.l2_slot_bytes;
        Some(l2)
    };
    Ok(Some(HcsConfig { l1, l2, staging_batches: 4, read_ahead: c.l2_read_ahead, chunk_reads: c.l2_chunk_reads }))
}

/// The Unix listener at `path` (its directory made if need be, a stale socket file replaced),
/// its file readable and writable by everyone, as NFD makes it: the apps of every user on the
/// host connect to it (the forwarder often runs as root or a service user).
fn bind_unix(path: &str) -> Result<UnixListener, StartError> {
    use std::os::unix::fs::PermissionsExt;
    let p = Path::new(path);
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
    }
    if p.exists() {
        if std::os::unix::net::UnixStream::connect(p).is_ok() {
            return Err(StartError::Config(format!("{path}: another forwarder is listening there")));
        }
        std::fs::remove_file(p).map_err(io_err(format!("removing stale {path}")))?;
    }
    let listener = UnixListener::bind(p).map_err(io_err(format!("listening on unix://{path}")))?;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).map_err(io_err(format!("opening {path} to every user")))?;
    Ok(listener)
}

/// A TCP listener on `addr` (the setting `faces.<what>`; "" for none).
fn bind_tcp(addr: &str, what: &str) -> Result<Option<TcpListener>, StartError> {
    if addr.is_empty() {
        return Ok(None);
    }
    let addr: SocketAddr = addr.parse().map_err(|_| StartError::Config(format!("faces.{what}")))?;
    let socket = listen::bind(addr, listen::Kind::Tcp).map_err(io_err(format!("listening for {what} on {addr}")))?;
    Ok(Some(TcpListener::from_std(socket.into())))
}

/// The UDP socket on `addr` (the setting `faces.udp`; "" for none), with large kernel buffers.
fn bind_udp(addr: &str) -> Result<Option<UdpSocket>, StartError> {
    if addr.is_empty() {
        return Ok(None);
    }
    let addr: SocketAddr = addr.parse().map_err(|_| StartError::Config("faces.udp".into()))?;
    let socket = listen::bind(addr, listen::Kind::Udp).map_err(io_err(format!("listening on udp {addr}")))?;
    let s = UdpSocket::from_std(socket.into());
    crate::sys::udp_batch::set_socket_buffers(s.as_raw_fd(), crate::sys::udp_batch::SOCKET_BUFFER_BYTES);
    Ok(Some(s))
}

/// Registers listener `l`, if there is one, as `token`.
fn register_listener(poll: &Poll, l: Option<&mut impl mio::event::Source>, token: Token) -> Result<(), StartError> {
    match l {
        Some(l) => poll.registry().register(l, token, Interest::READABLE).map_err(io_err("registering")),
        None => Ok(()),
    }
}

impl Runtime {
    /// Opens the listeners, builds the shards and applies the configuration's faces, routes
    /// and strategies.
    ///
    /// # Errors
    /// [`StartError`] naming the socket, file or setting at fault.
    pub fn new(cfg: Config) -> Result<Self, StartError> {
        cfg.validate().map_err(|e| StartError::Config(e.to_string()))?;
        let authorizations = authorizations_of(&cfg)?;
        let signers = propagation_signers(&cfg)?;
        let validators = validators_of(&cfg)?;
        let privileges = Privileges::lookup(&cfg.forwarder.user, &cfg.forwarder.group).map_err(StartError::Config)?;
        let poll = Poll::new().map_err(io_err("creating the poll"))?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(io_err("creating the waker"))?);
        let mut unix = None;
        if !cfg.faces.unix.is_empty() {
            let mut l = bind_unix(&cfg.faces.unix)?;
            register_listener(&poll, Some(&mut l), UNIX_LISTENER)?;
            unix = Some((l, cfg.faces.unix.clone()));
        }
        let mut tcp = bind_tcp(&cfg.faces.tcp, "tcp")?;
        register_listener(&poll, tcp.as_mut(), TCP_LISTENER)?;
        let mut websocket = bind_tcp(&cfg.faces.websocket, "websocket")?;
        register_listener(&poll, websocket.as_mut(), WS_LISTENER)?;
        let mut udp = bind_udp(&cfg.faces.udp)?;
        register_listener(&poll, udp.as_mut(), UDP_SOCKET)?;
        let clock = Clock { start: Instant::now(), start_wall_ms: wall_ms() };
        let threads = cfg.forwarder.threads;
        let shard_cfgs = (0..threads)
            .map(|index| {
                Ok(ShardConfig {
                    index: index as u8,
                    pit_max_entries: cfg.forwarder.pit_max_entries.div_ceil(threads),
                    pit_max_per_face: cfg.forwarder.pit_max_per_face.div_ceil(threads),
                    cs: cs_config(&cfg, threads, index)?,
                    retry_interval_ms: cfg.forwarder.retry_interval_ms,
                    default_hop_limit: cfg.forwarder.default_hop_limit,
                    cs_background_reads: cfg.content_store.l2_background_reads,
                    network_regions: cfg
                        .forwarder
                        .network_regions
                        .iter()
                        .map(|r| Name::from_uri(r).map_err(|e| StartError::Config(format!("forwarder.network_regions {r:?}: {e}"))))
                        .collect::<Result<_, _>>()?,
                    unsolicited: UnsolicitedPolicy::from_name(&cfg.content_store.unsolicited_policy)
                        .ok_or_else(|| StartError::Config("content_store.unsolicited_policy".into()))?,
                    ..ShardConfig::default()
                })
            })
            .collect::<Result<Vec<ShardConfig>, StartError>>()?;
        let allocated = shard_cfgs.iter().map(|c| c.cs.as_ref().map_or(0, |c| c.l1.capacity)).min().unwrap_or(0);
        let cs = CsState { allocated, shards: threads as u32, policy: CsPolicy { limit: allocated, admit: true, serve: true } };
        let fib = || Fib::new(NameFibConfig::default());
        let forwarding = if threads == 1 {
            let only = shard_cfgs.into_iter().next().expect("one shard");
            Forwarding::Inline(Box::new(Shard::new(only, fib())?))
        } else {
            let (done_tx, done) = crossbeam_channel::unbounded();
            let (recycle, recycled) = crossbeam_channel::unbounded();
            let (fib, reader) = FibWriter::new(fib());
            let mut workers = Vec::new();
            for (i, shard_cfg) in shard_cfgs.into_iter().enumerate() {
                let shard = Shard::new(shard_cfg, reader.clone())?;
                workers.push(
                    Worker::spawn(i, shard, clock, done_tx.clone(), recycled.clone(), waker.clone())
                        .map_err(io_err("starting a forwarding thread"))?,
                );
            }
            Forwarding::Threads {
                workers,
                fib: Box::new(fib),
                dispatch: Dispatch::new(threads, cfg.forwarder.dispatch_components),
                done,
                recycle,
            }
        };
        let mut rt = Runtime {
            poll,
            waker,
            unix,
            tcp,
            websocket,
            faces: Faces {
                faces: HashMap::new(),
                links: Links {
                    udp: UdpLinks::new(udp),
                    ether: EtherLinks::default(),
                    dirty: Vec::new(),
                    settings: LinkSettings::of(&cfg.faces),
                },
                next_id: FIRST_FACE_ID,
                reassembler: Reassembler::new(REASSEMBLY_BYTES),
                fragments: Vec::new(),
                congestion_marking: cfg.faces.congestion_marking,
                tcp_local: LocalAddresses::parse(&cfg.faces.tcp_local, &cfg.faces.tcp_local_exclude).map_err(StartError::Config)?,
                now_ns: 0,
                marked: Vec::new(),
                events: Vec::new(),
                reliable: Vec::new(),
                down: Vec::new(),
                connecting: Vec::new(),
                to_manager: Vec::new(),
            },
            forwarding,
            manager: {
                let m =
                    Manager::new(clock.start_wall_ms).with_authorizations(authorizations).with_readvertise(cfg.forwarder.readvertise_nlsr);
                let m = validators.into_iter().fold(m, |m, (trust, v)| m.with_rib_validator(trust, v));
                if signers.is_empty() {
                    m
                } else {
                    let f = &cfg.forwarder;
                    let settings = PropagateSettings {
                        cost: f.propagate_cost,
                        timeout_ms: f.propagate_timeout_ms,
                        refresh_ms: f.propagate_refresh_ms,
                        retry_min_ms: f.propagate_base_retry_ms,
                        retry_max_ms: f.propagate_max_retry_ms,
                    };
                    m.with_propagation(signers, settings)
                }
            },
            io_drops: Arc::new(DropCounters::default()),
            outbox: Outbox::new(),
            cfg,
            cs,
            clock,
            cs_signal: false,
            closing: Vec::new(),
            multicast_more: Vec::new(),
            ether_more: Vec::new(),
            multicast_buf: Vec::new(),
            listening: Listening::default(),
            reloader: None,
            privileges,
            interface_watch: None,
            interfaces_settle_at: None,
            group_routes: Vec::new(),
            static_routes: static_config::StaticRoutes::default(),
            static_faces: static_config::StaticFaces::default(),
            last_activity_ms: 0,
        };
        rt.listening = rt.bound();
        match InterfaceWatch::open() {
            Ok(watch) => {
                let fd = watch.as_raw_fd();
                rt.poll
                    .registry()
                    .register(&mut mio::unix::SourceFd(&fd), INTERFACE_WATCH, Interest::READABLE)
                    .map_err(io_err("registering"))?;
                rt.interface_watch = Some(watch);
            }
            Err(e) => tracing::warn!("no notices of interface changes (multicast faces stay on the interfaces of the start): {e}"),
        }
        if let (Forwarding::Inline(shard), true) = (&rt.forwarding, rt.cfg.content_store.l2_background_reads) {
            if let Some(fd) = shard.cs().and_then(nexthop_cs::HierarchicalStore::signal_fd) {
                rt.poll.registry().register(&mut mio::unix::SourceFd(&fd), CS_SIGNAL, Interest::READABLE).map_err(io_err("registering"))?;
                rt.cs_signal = true;
            }
        }
        rt.apply_static_config()?;
        // Everything of the start is open: from here on, as the configured user.
        rt.privileges.become_user().map_err(io_err("running as forwarder.user and forwarder.group"))?;
        Ok(rt)
    }

    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Where it listens.
    pub fn listening(&self) -> Listening {
        self.listening.clone()
    }

    /// The listeners' addresses, as bound.
    fn bound(&self) -> Listening {
        Listening {
            unix: self.unix.as_ref().map(|(_, p)| p.clone()),
            tcp: self.tcp.as_ref().and_then(|l| l.local_addr().ok()),
            websocket: self.websocket.as_ref().and_then(|l| l.local_addr().ok()),
            udp: self.faces.links.udp.local,
        }
    }

    fn host(&mut self) -> (&mut Manager, RuntimeHost<'_>) {
        let now_ms = self.now_ms();
        (
            &mut self.manager,
            RuntimeHost {
                faces: &mut self.faces,
                forwarding: &mut self.forwarding,
                registry: self.poll.registry(),
                io_drops: &self.io_drops,
                cs: &mut self.cs,
                listening: &self.listening,
                now_ms,
            },
        )
    }

    /// Runs until `stop` is set. An idle loop (no packet for a second, nothing pending) looks
    /// at `stop` once a second: wake it ([`Runtime::waker`]) after setting `stop` to stop at
    /// once.
    ///
    /// # Errors
    /// A poll failure.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut udp_batch = RecvBatch::default();
        // Made at the first Ethernet frame (a forwarder without Ethernet faces needs none).
        let mut ether_batch: Option<Box<ReceivedFrames>> = None;
        let mut udp_more = false;
        // When link reliability next has something to send (ms on the faces' clock).
        let mut reliability_due: Option<u64> = None;
        let mut last_tick = 0u64;
        let mut last_second = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let wait = if udp_more || !self.multicast_more.is_empty() || !self.ether_more.is_empty() {
                Duration::ZERO
            } else if (self.forwarding.has_parked() && !self.cs_signal) || self.faces.links.ether.unsent() {
                // Parked Interests, or frames an Ethernet port's kernel queue had no room for
                // yet (it gives no sign when it has).
                PARKED_POLL // (epoll rounds it up to 1 ms)
            } else if self.idle(self.now_ms()) {
                Duration::from_millis((last_second + 1000).saturating_sub(self.now_ms()).max(TICK_MS))
            } else {
                Duration::from_millis(TICK_MS)
            };
            let wait = match reliability_due {
                Some(at) => wait.min(Duration::from_millis(at.saturating_sub(self.clock.start.elapsed().as_millis() as u64))),
                None => wait,
            };
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let now = self.now_ms();
            self.faces.now_ns = self.clock.start.elapsed().as_nanos() as u64;
            if !events.is_empty() || udp_more || !self.multicast_more.is_empty() || !self.ether_more.is_empty() {
                self.last_activity_ms = now;
            }
            let mut cs_ready = false;
            if udp_more {
                udp_more = self.read_udp(now, &mut udp_batch);
            }
            for id in std::mem::take(&mut self.multicast_more) {
                self.read_multicast(now, id);
            }
            for port in std::mem::take(&mut self.ether_more) {
                self.read_ether(now, port, ether_batch.get_or_insert_default());
            }
            for ev in events.iter() {
                match ev.token() {
                    UNIX_LISTENER => self.accept_unix(now),
                    TCP_LISTENER => self.accept_tcp(now, false),
                    WS_LISTENER => self.accept_tcp(now, true),
                    INTERFACE_WATCH => self.interfaces_changed(now),
                    UDP_SOCKET => udp_more = self.read_udp(now, &mut udp_batch),
                    WAKER => {}
                    CS_SIGNAL => cs_ready = true,
                    Token(t) if (ETHER_PORTS.0..ETHER_PORTS.0 + MAX_ETHER_PORTS).contains(&t) => {
                        self.read_ether(now, t - ETHER_PORTS.0, ether_batch.get_or_insert_default())
                    }
                    Token(t) => {
                        let id = t as FaceId;
                        if self.faces.connecting.contains(&id) {
                            self.on_connect_event(now, id);
                            continue;
                        }
                        if ev.is_readable() || ev.is_read_closed() {
                            self.read_stream(now, id);
                        }
                        if ev.is_writable() {
                            self.faces.links.dirty.push(id);
                        }
                    }
                }
            }
            self.forwarding.publish_fib();
            if cs_ready || (self.forwarding.has_parked() && !self.cs_signal) {
                self.poll_content_store(now);
            }
            self.drain_workers();
            self.answer_manager(now);
            reliability_due = if self.faces.reliable.is_empty() { None } else { self.faces.poll_reliability(&self.io_drops) };
            self.flush_faces();
            self.close_faces();
            if self.publish_face_events(now) {
                self.flush_faces();
            }
            if now >= last_tick + TICK_MS {
                last_tick = now;
                self.tick(now);
            }
            if now >= last_second + 1000 {
                last_second = now;
                self.every_second(now);
            }
            self.reload_if_requested();
        }
        Ok(())
    }

    fn tick(&mut self, now: u64) {
        if !self.faces.down.is_empty() {
            let closing = self.faces.retry_reconnects(self.poll.registry(), now);
            self.closing.extend(closing);
            self.close_faces();
        }
        self.follow_interfaces(now);
        self.faces.reassembler.expire(now);
        for _ in 0..self.faces.reassembler.take_timeouts() {
            self.io_drops.count(DropReason::ReassemblyTimeout);
        }
        match &mut self.forwarding {
            Forwarding::Inline(s) => {
                s.expire(now);
                let mut out = std::mem::take(&mut self.outbox);
                s.fire_timers(now, &mut out);
                self.send_outbox(&mut out);
                self.outbox = out;
            }
            Forwarding::Threads { workers, .. } => {
                for w in workers.iter_mut() {
                    let _ = w.tx.send(ToWorker::Tick(now));
                }
            }
        }
    }

    /// Whether nothing needs the tick now (see [`IDLE_AFTER_MS`]).
    fn idle(&self, now: u64) -> bool {
        now >= self.last_activity_ms + IDLE_AFTER_MS
            && self.faces.reassembler.is_empty()
            && self.faces.down.is_empty()
            && self.faces.connecting.is_empty()
            && self.interfaces_settle_at.is_none()
            && self.forwarding.pending_interests() == 0
    }

    /// The kernel said the interfaces changed: they are looked at again [`INTERFACES_SETTLE_MS`]
    /// after the last such notice.
    fn interfaces_changed(&mut self, now: u64) {
        if self.interface_watch.as_ref().is_some_and(InterfaceWatch::drain) {
            self.interfaces_settle_at = Some(now + INTERFACES_SETTLE_MS);
        }
    }

    /// Once the interfaces have settled, brings the multicast faces and the Ethernet ports in
    /// step with them (`multicast_faces`, `ether_ports`).
    fn follow_interfaces(&mut self, now: u64) {
        if self.interfaces_settle_at.is_some_and(|at| now >= at) {
            self.interfaces_settle_at = None;
            // Opening sockets on an interface may take root (Ethernet ports, binding to a device).
            let privileges = std::mem::take(&mut self.privileges);
            privileges.elevated(|| {
                if let Err(e) = self.sync_multicast_faces(false) {
                    tracing::warn!("multicast faces not brought in step with the interfaces: {e}");
                }
                if let Err(e) = self.sync_ether_ports(false) {
                    tracing::warn!("Ethernet ports not brought in step with the interfaces: {e}");
                }
            });
            self.privileges = privileges;
            self.route_groups();
        }
    }

    fn every_second(&mut self, now: u64) {
        let (manager, mut host) = self.host();
        manager.expire(&mut host, now);
        let mut refused = manager.expire_validations(&mut host, now);
        refused.extend(manager.expire_connections(&mut host, now));
        for d in refused {
            self.deliver(&d);
        }
        self.flush_workers();
        let settings = &self.faces.links.settings;
        let idle_faces: Vec<FaceId> = self
            .faces
            .faces
            .values()
            .filter(|f| {
                let Some(idle) = f.link.transport().idle_timeout_ms(settings) else { return false };
                f.persistency == Persistency::OnDemand && now.saturating_sub(f.last_rx_ms) > idle
            })
            .map(|f| f.id)
            .collect();
        self.closing.extend(idle_faces);
        self.close_faces();
    }

    fn accept_unix(&mut self, now: u64) {
        loop {
            let Some((l, path)) = self.unix.as_ref() else { return };
            match l.accept() {
                Ok((s, _)) => {
                    let uri = FaceUri::Unix(path.clone());
                    let link = Link::Stream(Box::new(Stream::new(StreamSocket::Unix(s))));
                    let local = format!("unix://{path}");
                    if let Err(e) = self.faces.add(self.poll.registry(), uri, local, Persistency::OnDemand, link, now, &mut self.forwarding)
                    {
                        tracing::warn!("unix face: {e}");
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    tracing::warn!("accepting on the unix socket: {e}");
                    return;
                }
            }
        }
    }

    /// Accepts TCP connections: NDN over TCP, or (`websocket`) on the WebSocket listener, where
    /// each connection starts with its upgrade request.
    fn accept_tcp(&mut self, now: u64, websocket: bool) {
        loop {
            let Some(l) = (if websocket { self.websocket.as_ref() } else { self.tcp.as_ref() }) else { return };
            match l.accept() {
                Ok((s, peer)) => {
                    let _ = s.set_nodelay(true);
                    // A dual-stack listener's IPv4 peers are named as IPv4 (`listen`).
                    let peer = listen::canonical(peer);
                    let local = s.local_addr().ok().map(listen::canonical);
                    let (uri, local, stream) = if websocket {
                        let local = local.map(|a| format!("ws://{a}")).unwrap_or_default();
                        (FaceUri::WebSocket(peer), local, Stream::websocket(StreamSocket::Tcp(s)))
                    } else {
                        let local = local.map(|a| FaceUri::Tcp(a).to_string()).unwrap_or_default();
                        (FaceUri::Tcp(peer), local, Stream::new(StreamSocket::Tcp(s)))
                    };
                    let link = Link::Stream(Box::new(stream));
                    if let Err(e) = self.faces.add(self.poll.registry(), uri, local, Persistency::OnDemand, link, now, &mut self.forwarding)
                    {
                        tracing::warn!("tcp face: {e}");
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    tracing::warn!("accepting on tcp: {e}");
                    return;
                }
            }
        }
    }

    /// Reads datagrams `recvmmsg` batch by batch, forwarding each batch and flushing what it
    /// produced with `sendmmsg`. Returns `true` if it stopped with datagrams possibly left (after
    /// [`UDP_BATCHES_PER_TURN`] batches, so one busy UDP face cannot starve the others); the run
    /// loop then comes back without waiting.
    fn read_udp(&mut self, now: u64, batch: &mut RecvBatch) -> bool {
        for _ in 0..UDP_BATCHES_PER_TURN {
            let Some(fd) = self.faces.links.udp.socket.as_ref().map(|s| s.as_raw_fd()) else { return false };
            match batch.recv(fd) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // ICMP errors surface here on Linux (ECONNREFUSED); the next datagram may be fine.
                Err(_) => continue,
            }
            for i in 0..batch.len() {
                let (bytes, from, cut) = batch.get(i);
                let Some(from) = from else { continue };
                if cut || bytes.len() > MAX_PACKET_BYTES {
                    self.io_drops.count(DropReason::Oversize);
                    continue;
                }
                let id = match self.faces.links.udp.by_remote.get(&from) {
                    Some(&id) => id,
                    None => {
                        // Named by its own family; kept in the socket's form (`listen`).
                        let peer = listen::canonical(from);
                        let dual = self.faces.links.udp.dual;
                        let local =
                            self.faces.links.udp.local.map(|a| FaceUri::Udp(dual.local_for(a, peer)).to_string()).unwrap_or_default();
                        match self.faces.add(
                            self.poll.registry(),
                            FaceUri::Udp(peer),
                            local,
                            Persistency::OnDemand,
                            Link::Udp(UdpLink(from)),
                            now,
                            &mut self.forwarding,
                        ) {
                            Ok(id) => id,
                            Err(_) => continue,
                        }
                    }
                };
                self.on_packet(now, id, bytes);
            }
            self.flush_workers();
            self.faces.links.udp.flush(&self.io_drops);
        }
        true
    }

    /// Reads what the group sent a multicast face: at most [`MULTICAST_READS_PER_TURN`]
    /// datagrams a turn, so a flooding LAN cannot starve the other faces; a face with more
    /// waiting is read again next turn (the poll reports a socket only when it becomes
    /// readable).
    fn read_multicast(&mut self, now: u64, id: FaceId) {
        let mut buf = std::mem::take(&mut self.multicast_buf);
        buf.resize(MAX_PACKET_BYTES + 1, 0);
        for i in 0.. {
            if i == MULTICAST_READS_PER_TURN {
                self.multicast_more.push(id);
                break;
            }
            let Some(Face { link: Link::Multicast(m), .. }) = self.faces.faces.get(&id) else { break };
            let (n, from) = match m.recv(&mut buf) {
                Ok(Some(got)) => got,
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(face = id, "multicast receive: {e}");
                    break;
                }
            };
            if n > MAX_PACKET_BYTES {
                self.io_drops.count(DropReason::Oversize);
                continue;
            }
            self.on_packet_from(now, id, endpoint_key(&from), &buf[..n]);
        }
        self.multicast_buf = buf;
        self.flush_workers();
    }

    /// Reads what arrived at Ethernet port `port`: one batch of frames a turn, as a multicast
    /// face reads; a port with more waiting is read again next turn. A frame goes to the face
    /// of its group or of its sender; a sender with no face gets an on-demand one with
    /// `faces.ether_listen`, and is otherwise counted as a drop.
    fn read_ether(&mut self, now: u64, port: usize, batch: &mut ReceivedFrames) {
        let Some(p) = self.faces.links.ether.port_mut(port) else { return };
        if p.receive(batch) {
            self.ether_more.push(port);
        }
        for i in 0..batch.len() {
            let frame = batch.get(i);
            let Some(p) = self.faces.links.ether.port(port) else { break };
            let (at, from, to) = match p.take(frame) {
                None => continue,
                Some(Received::Packet { at, from, to }) => (at, from, to),
                Some(Received::Malformed) => {
                    self.io_drops.count(DropReason::Malformed);
                    continue;
                }
                Some(Received::Oversize) => {
                    self.io_drops.count(DropReason::Oversize);
                    continue;
                }
            };
            let peer = match to {
                Destination::Group(group) => group,
                Destination::Us => from,
            };
            let id = match self.faces.links.ether.by_peer.get(&(port, peer)) {
                Some(&id) => id,
                None if to == Destination::Us && self.cfg.faces.ether_listen => {
                    let (uri, local, link) = (FaceUri::Ether(peer), p.local_uri(), Link::Ether(EtherLink { port, peer }));
                    match self.faces.add(self.poll.registry(), uri, local, Persistency::OnDemand, link, now, &mut self.forwarding) {
                        Ok(id) => id,
                        Err(e) => {
                            tracing::warn!("no on-demand Ethernet face to {peer}: {e}");
                            continue;
                        }
                    }
                }
                None => {
                    self.io_drops.count(DropReason::UnknownPeer);
                    continue;
                }
            };
            self.on_packet_from(now, id, endpoint_key(&from), &frame[at]);
        }
        self.flush_workers();
    }

    fn read_stream(&mut self, now: u64, id: FaceId) {
        let Some(face) = self.faces.faces.get_mut(&id) else { return };
        if matches!(face.link, Link::Multicast(_)) {
            return self.read_multicast(now, id);
        }
        let Link::Stream(stream) = &mut face.link else { return };
        // Frames are collected first (the face is borrowed while reading), then processed.
        let mut frames: Vec<u8> = Vec::new();
        let mut bounds: Vec<(usize, usize)> = Vec::new();
        let drops = self.io_drops.clone();
        let was_pending = stream.pending() > 0;
        let outcome = stream.read_frames(|f| match f {
            Ok(bytes) => {
                bounds.push((frames.len(), bytes.len()));
                frames.extend_from_slice(bytes);
            }
            Err(_) => drops.count(DropReason::Oversize),
        });
        if !was_pending && stream.pending() > 0 {
            // A WebSocket face's answers to the peer (its upgrade, pongs) wait to be written (a
            // face with bytes already waiting is on the dirty list, as `send` keeps it).
            self.faces.links.dirty.push(id);
        }
        for (at, len) in bounds {
            self.on_packet(now, id, &frames[at..at + len]);
        }
        self.flush_workers();
        if outcome == ReadOutcome::Closed {
            self.closing.push(id);
        }
    }

    /// A TCP face's connection, made or failed: a new face's `faces/create` is answered (200,
    /// or 504 with the face closed); a face made at start that could not connect is handled as
    /// a lost connection (a permanent one goes down and tries again); a down face that
    /// connected is up again. A face just connected reads what may have come already.
    fn on_connect_event(&mut self, now: u64, id: FaceId) {
        let first = self.faces.faces.get(&id).is_some_and(|f| f.down.is_none());
        match self.faces.on_connect_event(self.poll.registry(), id, now) {
            Connection::Pending => {}
            Connection::Made => {
                if let Some(d) = self.manager.face_connected(id) {
                    self.deliver(&d);
                }
                self.read_stream(now, id);
                self.faces.links.dirty.push(id);
            }
            Connection::Failed(why) if first => {
                let (manager, mut host) = self.host();
                match manager.face_connect_failed(&mut host, id, &why) {
                    Some(d) => self.deliver(&d),
                    None => self.closing.push(id),
                }
            }
            // A down face's attempt: the next one starts when this one's time is up.
            Connection::Failed(_) => {}
        }
    }

    fn flush_workers(&mut self) {
        self.forwarding.publish_fib();
        if let Forwarding::Threads { workers, .. } = &mut self.forwarding {
            for w in workers.iter_mut() {
                w.flush();
            }
        }
    }

    fn on_packet(&mut self, now: u64, id: FaceId, bytes: &[u8]) {
        self.on_packet_from(now, id, 0, bytes);
    }

    /// [`Runtime::on_packet`] for a packet from sender `endpoint` on a multi-access face (0 on
    /// others): its fragments are reassembled apart from other senders'.
    fn on_packet_from(&mut self, now: u64, id: FaceId, endpoint: u64, bytes: &[u8]) {
        // (Most forwarders have no face with reliability: no lookup for them.)
        let reliability =
            if self.faces.reliable.is_empty() { None } else { self.faces.faces.get_mut(&id).and_then(|f| f.reliability.as_deref_mut()) };
        if let Some(reliability) = reliability {
            // Acks and TxSequence are read before reassembly: each fragment has its own.
            if bytes.first() == Some(&(LP_PACKET as u8)) {
                if let Ok(lp) = LpPacketView::decode(bytes) {
                    match reliability.incoming(self.faces.now_ns / 1_000_000, &lp) {
                        Arrival::New => {}
                        Arrival::Idle => return,
                        Arrival::Repeat => return self.io_drops.count(DropReason::DuplicateSequence),
                    }
                }
            }
        }
        self.on_link_packet(now, id, endpoint, bytes);
    }

    /// [`Runtime::on_packet_from`] past link reliability: a fragment to reassemble, or a packet
    /// to classify and forward.
    fn on_link_packet(&mut self, now: u64, id: FaceId, endpoint: u64, bytes: &[u8]) {
        let incoming = match classify(bytes) {
            Ok(Some(i)) => i,
            Ok(None) => return,
            Err(DropReason::Fragment) => {
                // A face with link reliability waits for a lost fragment's retransmission.
                let rto = self.faces.faces.get(&id).and_then(|f| f.reliability.as_deref()).map(Reliability::rto_ms);
                let timeout = rto.map_or(REASSEMBLY_TIMEOUT_MS, reliable_timeout_ms);
                match self.faces.reassembler.feed_from(now, id, endpoint, bytes, timeout) {
                    Ok(Some(whole)) => self.on_link_packet(now, id, endpoint, &whole),
                    Ok(None) => {}
                    Err(why) => self.io_drops.count(why),
                }
                return;
            }
            Err(why) => {
                self.io_drops.count(why);
                return;
            }
        };
        let Some(face) = self.faces.faces.get_mut(&id) else { return };
        let scope = face.scope;
        let kind = match incoming.packet {
            Network::Interest(_) => PacketKind::Interest,
            Network::Data(_) => PacketKind::Data,
            Network::Nack(..) => PacketKind::Nack,
        };
        face.count_in(kind, bytes.len(), now);
        let name = incoming.name();
        let localhop_rib = self.cfg.forwarder.localhop_prefix_registration && is_localhop_rib(&name);
        if is_localhost(&name) || localhop_rib {
            if scope != FaceScope::Local && !localhop_rib {
                self.io_drops.count(DropReason::LocalhostViolation);
                return;
            }
            if let Network::Interest(interest) = incoming.packet {
                if is_management(&name) {
                    let (manager, mut host) = self.host();
                    match manager.handle(&mut host, now, id, scope, incoming.link.pit_token, &interest) {
                        Ok(Some(reply)) => {
                            self.send_one(id, &LpFields { pit_token: incoming.link.pit_token, ..Default::default() }, &reply);
                        }
                        Ok(None) => {} // Held for a face event (faces/events).
                        Err(why) => self.io_drops.count(why),
                    }
                    return;
                }
            }
        }
        let mut out = std::mem::take(&mut self.outbox);
        self.forwarding.forward(now, id, scope, &incoming, bytes, &mut out);
        self.send_outbox(&mut out);
        self.outbox = out;
    }

    /// Sends a management answer decided later than its command (or a face event
    /// notification), with the PIT token its Interest carried.
    fn deliver(&mut self, d: &Delivery) {
        self.send_one(d.face, &LpFields { pit_token: d.pit_token.as_deref(), ..Default::default() }, &d.data);
    }

    /// Sends one packet the I/O thread made (a management answer, a notification) to `face`.
    fn send_one(&mut self, face: FaceId, fields: &LpFields<'_>, packet: &[u8]) {
        let mut out = std::mem::take(&mut self.outbox);
        out.push(face, fields, packet);
        self.send_outbox(&mut out);
        self.outbox = out;
    }

    fn send_outbox(&mut self, out: &mut Outbox) {
        for (face, kind, bytes) in out.iter() {
            self.faces.send(&self.io_drops, face, kind, bytes);
        }
        if !out.learned.is_empty() || !out.unlearned.is_empty() {
            // What the self-learning strategy learned goes to the RIB (which changes the FIB).
            let (learned, unlearned) = (std::mem::take(&mut out.learned), std::mem::take(&mut out.unlearned));
            let now = self.now_ms();
            let (manager, mut host) = self.host();
            for (face, announcement) in learned {
                manager.learn(&mut host, now, face, &announcement);
            }
            for (face, name) in unlearned {
                manager.unlearn(&mut host, face, &name);
            }
        }
        out.clear();
    }

    /// Inline forwarding: SSD reads that have finished go into the DRAM tier, and the
    /// Interests parked for them go on.
    fn poll_content_store(&mut self, now: u64) {
        if let Forwarding::Inline(shard) = &mut self.forwarding {
            let mut out = std::mem::take(&mut self.outbox);
            shard.poll_content_store(now, &mut out);
            self.send_outbox(&mut out);
            self.outbox = out;
        }
    }

    fn drain_workers(&mut self) {
        let Forwarding::Threads { done, recycle, .. } = &self.forwarding else { return };
        let ready: Vec<Outbox> = done.try_iter().collect();
        let recycle = recycle.clone();
        for mut out in ready {
            self.send_outbox(&mut out);
            let _ = recycle.send(out);
        }
    }

    fn flush_faces(&mut self) {
        self.faces.links.udp.flush(&self.io_drops);
        for (index, port) in self.faces.links.ether.ports.iter_mut().enumerate() {
            if let Some(p) = port {
                p.flush(self.poll.registry(), ether_ports::ether_token(index));
            }
        }
        let dirty = std::mem::take(&mut self.faces.links.dirty);
        for id in dirty {
            // A face still connecting is written once connected.
            if self.faces.connecting.contains(&id) {
                continue;
            }
            let Some(face) = self.faces.faces.get_mut(&id).filter(|f| f.down.is_none()) else { continue };
            let Link::Stream(s) = &mut face.link else { continue };
            if s.flush().is_err() {
                self.closing.push(id);
                continue;
            }
            let want = s.pending() > 0;
            if want != s.want_write {
                s.want_write = want;
                let interest = if want { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
                let _ = self.poll.registry().reregister(s.socket.source(), Token(id as usize), interest);
            }
        }
    }

    /// Hands the manager the Data and Nacks that came back to the management face (the
    /// certificates its validations fetch), and sends the answers of the commands decided.
    fn answer_manager(&mut self, now: u64) {
        while !self.faces.to_manager.is_empty() {
            for packet in std::mem::take(&mut self.faces.to_manager) {
                let (manager, mut host) = self.host();
                for d in manager.on_answer(&mut host, now, &packet) {
                    self.deliver(&d);
                }
            }
        }
    }

    /// Tells the manager of the faces made and closed since last time, and queues the
    /// notifications held Interests were waiting for (`faces/events`); whether it queued any.
    fn publish_face_events(&mut self, now: u64) -> bool {
        let mut sent = false;
        for (kind, status) in std::mem::take(&mut self.faces.events) {
            for d in self.manager.face_event(kind, &status, now) {
                self.deliver(&d);
                sent = true;
            }
        }
        sent
    }

    fn close_faces(&mut self) {
        if self.closing.is_empty() {
            return;
        }
        let now = self.now_ms();
        for id in std::mem::take(&mut self.closing) {
            // A permanent TCP face goes down and connects again instead.
            if self.faces.go_down(self.poll.registry(), id, now) {
                continue;
            }
            let (manager, mut host) = self.host();
            if host.destroy_face(id) {
                manager.face_gone(&mut host, id);
            }
        }
        // The manager's withdrawals (readvertisements) go to the forwarding threads now.
        self.flush_workers();
    }

    /// Drops counted on the I/O thread (decode errors, scope violations, management).
    pub fn io_drops(&self) -> &DropCounters {
        &self.io_drops
    }

    /// Counters of every forwarding shard.
    pub fn shard_counters(&self) -> Vec<Arc<ShardCounters>> {
        self.forwarding.counters()
    }

    /// A handle that wakes the poll (used to stop a runtime running in another thread).
    pub fn waker(&self) -> Arc<Waker> {
        self.waker.clone()
    }
}

fn is_localhost(name: &NameView<'_>) -> bool {
    name.get(0).is_some_and(|c| c.value() == b"localhost" && c.ty() == nexthop_wire::types::GENERIC_NAME_COMPONENT)
}

/// `/localhop/nfd/rib/…`: prefix registration by an app one hop away.
fn is_localhop_rib(name: &NameView<'_>) -> bool {
    let generic = |i: usize, v: &[u8]| name.get(i).is_some_and(|c| c.value() == v && c.ty() == nexthop_wire::types::GENERIC_NAME_COMPONENT);
    generic(0, b"localhop") && generic(1, b"nfd") && generic(2, b"rib")
}

fn is_management(name: &NameView<'_>) -> bool {
    name.get(1).is_some_and(|c| c.value() == b"nfd")
}

/// The configuration's management authorizations (`[[authorize]]`).
fn authorizations_of(cfg: &Config) -> Result<Authorizations, StartError> {
    let grants = cfg.authorize.iter().map(|a| (a.certfile.as_str(), a.privileges.as_slice()));
    Authorizations::from_config(grants).map_err(|e| config_err("authorize")(e.to_string()))
}

/// The configuration's `rib` validators, for each trust that has one.
fn validators_of(cfg: &Config) -> Result<Vec<(RibTrust, Validator)>, StartError> {
    let f = &cfg.forwarder;
    let mut validators = Vec::new();
    for (trust, key, text) in [
        (RibTrust::Localhop, "forwarder.localhop_security", &f.localhop_security),
        (RibTrust::Localhost, "forwarder.localhost_security", &f.localhost_security),
        (RibTrust::PrefixAnnouncement, "forwarder.prefix_announcement_security", &f.prefix_announcement_security),
    ] {
        if !text.trim().is_empty() {
            let nodes = crate::conf::info::parse_info(text).map_err(|e| config_err(key)(e.to_string()))?;
            validators.push((trust, Validator::from_info(&nodes).map_err(|e| config_err(key)(e.to_string()))?));
        }
    }
    Ok(validators)
}

/// The configuration's strategy choices (`[[strategy]]`), parsed.
fn strategies_of(cfg: &Config) -> Result<Vec<(Name, StrategyName)>, StartError> {
    cfg.strategy
        .iter()
        .map(|s| {
            let prefix = Name::from_uri(&s.prefix).map_err(|e| StartError::Config(format!("strategy {:?}: {e}", s.prefix)))?;
            let strategy =
                StrategyName::from_text(&s.strategy).map_err(|why| StartError::Config(format!("strategy {:?}: {why}", s.strategy)))?;
            Ok((prefix, strategy))
        })
        .collect()
}

/// What prefix propagation signs with: each `[[propagate]]` entry's key and certificate, then,
/// with `forwarder.propagate_keychain`, every other identity of the keychain (its default key
/// and certificate). An entry that cannot be read stops the start; a keychain identity whose
/// key cannot be read is left out with a warning, as is the whole keychain when it has no PIB
/// or cannot be found.
fn propagation_signers(cfg: &Config) -> Result<Vec<PropagationSigner>, StartError> {
    // Found only once needed: entries with their own files need no HOME.
    let located = cfg.keychain.keychain().map_err(|e| format!("keychain: {e}"));
    let keychain = || located.as_ref().map_err(|e| StartError::Config(e.clone()));
    let mut signers = Vec::new();
    for entry in &cfg.propagate {
        signers.push(propagation_signer(entry, &keychain)?);
    }
    if cfg.forwarder.propagate_keychain {
        // As a missing PIB, a keychain that cannot be found (no HOME, as under some service
        // managers) propagates nothing rather than stopping the start.
        let keychain = match keychain() {
            Ok(k) => k,
            Err(e) => {
                tracing::warn!("forwarder.propagate_keychain: {e}: nothing propagated for it");
                return Ok(signers);
            }
        };
        if !keychain.exists() {
            tracing::warn!("forwarder.propagate_keychain: no PIB at {}: nothing propagated for it", keychain.pib_file().display());
            return Ok(signers);
        }
        let identities = keychain.identities().map_err(|e| StartError::Config(format!("forwarder.propagate_keychain: {e}")))?;
        for identity in identities {
            let named = signers.iter().any(|s| crate::mgmt::validator::identity_of(s.key.name()) == identity.name);
            if named {
                continue;
            }
            match keychain.signer(&identity.name) {
                Ok((key, certificate)) => signers.push(PropagationSigner { key, certificate }),
                Err(e) => tracing::warn!("forwarder.propagate_keychain: identity {} left out: {e}", identity.name),
            }
        }
    }
    Ok(signers)
}

/// A `[[propagate]]` entry's key and certificate, read (from the keychain where the entry
/// names no file).
fn propagation_signer<'k>(
    k: &crate::conf::config::PropagateKey,
    keychain: &impl Fn() -> Result<&'k Keychain, StartError>,
) -> Result<PropagationSigner, StartError> {
    let shown = if k.identity.is_empty() { &k.key } else { &k.identity };
    let bad = |why: String| StartError::Config(format!("propagate {shown}: {why}"));
    let (key, pib_certificate) = if !k.identity.is_empty() {
        let identity = Name::from_uri(&k.identity).map_err(|e| bad(e.to_string()))?;
        keychain()?.signer(&identity).map_err(|e| bad(e.to_string()))?
    } else {
        let name = Name::from_uri(&k.key).map_err(|e| bad(e.to_string()))?;
        let key = if k.key_file.is_empty() {
            keychain()?.private_key(name).map_err(|e| bad(e.to_string()))?
        } else {
            CommandKey::load(name, Path::new(&k.key_file)).map_err(|e| bad(e.to_string()))?
        };
        (key, None)
    };
    let certificate = if !k.certificate.is_empty() {
        let wire = crate::mgmt::authorization::certificate_file(Path::new(&k.certificate)).map_err(|e| bad(e.to_string()))?;
        let data = nexthop_wire::DataView::decode(&wire).map_err(|e| bad(format!("{}: {e}", k.certificate)))?;
        if !key.name().is_prefix_of(&data.name().to_name()) {
            return Err(bad(format!("{} is the certificate of another key", k.certificate)));
        }
        Some(wire)
    } else if pib_certificate.is_some() {
        pib_certificate
    } else {
        // A key named by name: its certificate from the PIB, when there is one.
        match keychain() {
            Ok(k) if k.exists() => k.default_certificate(key.name()).map_err(|e| bad(e.to_string()))?,
            _ => None,
        }
    };
    Ok(PropagationSigner { key, certificate })
}
