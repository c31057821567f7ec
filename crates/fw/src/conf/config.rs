//! Configuration: TOML, with the built-in default (`default.toml`, embedded) so that
//! `nexthop run` works with no file. A file is read on top of the default: what it leaves out
//! keeps the default value; an unknown key is an error naming it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::mgmt::keychain::{Keychain, KeychainError};

/// The embedded default configuration.
pub const DEFAULT_TOML: &str = include_str!("default.toml");

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Threads and tables.
    pub forwarder: ForwarderConfig,
    /// Listeners.
    pub faces: FacesConfig,
    /// The content store.
    pub content_store: CsConfig,
    /// Faces made at start.
    #[serde(default)]
    pub face: Vec<StaticFace>,
    /// Static routes.
    #[serde(default)]
    pub route: Vec<StaticRoute>,
    /// Strategy choices.
    #[serde(default)]
    pub strategy: Vec<StaticStrategy>,
    /// Route files.
    #[serde(default)]
    pub route_files: Vec<PathBuf>,
    /// Who may send management commands to which module (NFD's `authorizations`).
    #[serde(default)]
    pub authorize: Vec<Authorize>,
    /// The keys prefix propagation to a gateway signs with (NFD's `rib.auto_prefix_propagate`;
    /// none, and `forwarder.propagate_keychain` off: nothing is propagated).
    #[serde(default)]
    pub propagate: Vec<PropagateKey>,
    /// Where the keychain is that `[[propagate]]` and `forwarder.propagate_keychain` read.
    pub keychain: KeychainConfig,
    /// The IP router beside the NDN forwarder.
    pub router: RouterConfig,
    /// The Concise switch beside the NDN forwarder.
    pub switch: SwitchConfig,
    /// The TagNet router beside the NDN forwarder.
    pub tagnet: TagnetConfig,
}

/// `[switch]`: the Concise switch (`nexthop_router::l2`) on interfaces of this host, frames
/// forwarded by destination address through an Othello FIB; no interfaces: no switch. Read at
/// start only (a reload leaves it as it is).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// The interfaces switched between (AF_XDP ports; at most 64).
    pub interfaces: Vec<String>,
    /// AF_XDP's mode: `auto`, `native` or `generic`.
    pub xdp_mode: String,
    /// A hosts file (`mac interface` lines): the FIB the switch starts from; empty: none.
    pub hosts_file: String,
    /// Learn hosts from the frames they send: one seen on an interface its FIB entry does not
    /// name is installed (or moved) there, as a controller would (until a controller's FIB
    /// is in force).
    pub learn: bool,
    /// The switch's name on its control channel; empty: the host's name.
    pub name: String,
    /// Its control channel's address (gRPC): `unix:PATH` or `IP:PORT`; empty: none.
    pub control: String,
}

/// The most interfaces a switch has (its FIB's actions are 6 bits).
pub const MAX_SWITCH_INTERFACES: usize = 64;

/// `[tagnet]`: a TagNet router (`nexthop_router::tag`) on interfaces of this host and UDP
/// tunnels; neither: no router. Read at start only (a reload leaves it as it is).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TagnetConfig {
    /// Ethernet interfaces (AF_XDP ports taking TagNet's EtherType): router ports 0, 1, …
    pub interfaces: Vec<String>,
    /// UDP tunnels, `"LOCAL_IP:PORT REMOTE_IP:PORT"` each: router ports after the interfaces.
    pub tunnels: Vec<String>,
    /// AF_XDP's mode: `auto`, `native` or `generic`.
    pub xdp_mode: String,
    /// The router's name on its trees (1 to 32 bytes); empty: the host's name.
    pub name: String,
    /// The trees this router is the root of (ids below 64).
    pub roots: Vec<u16>,
    /// A FIB file (`descriptor -> tree:port` lines) of static entries, for pushes and interests
    /// alike; empty: none.
    pub fib_file: String,
}

/// The most ports (interfaces and tunnels) a TagNet router has.
pub const MAX_TAGNET_PORTS: usize = 64;

impl TagnetConfig {
    /// The tunnels' (local, remote) addresses.
    ///
    /// # Errors
    /// A tunnel that is not two socket addresses.
    pub fn tunnel_addresses(&self) -> Result<Vec<(std::net::SocketAddr, std::net::SocketAddr)>, String> {
        self.tunnels
            .iter()
            .map(|t| parse_tunnel(t).ok_or_else(|| format!("tagnet.tunnels: {t:?} is not \"LOCAL_IP:PORT REMOTE_IP:PORT\"")))
            .collect()
    }
}

/// A UDP tunnel written `"LOCAL_IP:PORT REMOTE_IP:PORT"`: its (local, remote) addresses.
pub fn parse_tunnel(text: &str) -> Option<(std::net::SocketAddr, std::net::SocketAddr)> {
    let mut parts = text.split_whitespace().map(str::parse::<std::net::SocketAddr>);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(local)), Some(Ok(remote)), None) => Some((local, remote)),
        _ => None,
    }
}

/// `[router]`: the IP router (`nexthop_router`) on interfaces of this host, the kernel as its
/// control plane; no interfaces: no router. Read at start only (a reload leaves it as it is).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RouterConfig {
    /// The interfaces routed between (AF_XDP ports).
    pub interfaces: Vec<String>,
    /// AF_XDP's mode: `auto` (native where the driver has it), `native` or `generic`.
    pub xdp_mode: String,
    /// A route file (`prefix/len gateway` lines) written into the kernel's main table at
    /// start; empty: none.
    pub route_file: String,
}

/// The AF_XDP modes `router.xdp_mode` may name.
pub const XDP_MODES: [&str; 3] = ["auto", "native", "generic"];

/// `[keychain]`: the keychain of ndnsec and pyndnsec ([`crate::mgmt::keychain`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KeychainConfig {
    /// The folder of its PIB (`pib.db`); empty: where ndn-cxx and python-ndn find it.
    pub pib: String,
    /// The folder of its file TPM; empty: likewise.
    pub tpm: String,
}

impl KeychainConfig {
    /// The keychain these settings name, the located one ([`Keychain::locate`]) where they are
    /// empty.
    ///
    /// # Errors
    /// As [`Keychain::locate`], when a setting is empty.
    pub fn keychain(&self) -> Result<Keychain, KeychainError> {
        let located = if self.pib.is_empty() || self.tpm.is_empty() { Some(Keychain::locate()?) } else { None };
        let pick = |set: &str, found: fn(&Keychain) -> &Path| match &located {
            Some(k) if set.is_empty() => found(k).to_path_buf(),
            _ => PathBuf::from(set),
        };
        Ok(Keychain::at(&pick(&self.pib, Keychain::pib_dir), &pick(&self.tpm, Keychain::tpm_dir)))
    }
}

/// `[[propagate]]`: a key that propagates its identity's prefix to the gateway
/// ([`crate::mgmt::propagate`]), named by `key` or by `identity`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PropagateKey {
    /// The key's name, `/<identity>/KEY/<key id>` (as `ndnsec list -k` shows it).
    #[serde(default)]
    pub key: String,
    /// Instead of `key`: an identity of the keychain, which signs with its default key.
    #[serde(default)]
    pub identity: String,
    /// The private key's file (base64 DER, as ndnsec's file TPM keeps it); empty: the
    /// keychain's file TPM.
    #[serde(default)]
    pub key_file: String,
    /// Its certificate's file (base64, as `ndnsec cert-dump` writes it), which the forwarder
    /// answers for when the gateway fetches it to validate; empty: the key's default
    /// certificate in the keychain's PIB, if it has one (else none is served here).
    #[serde(default)]
    pub certificate: String,
}

/// `[forwarder]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForwarderConfig {
    /// Forwarding threads.
    pub threads: usize,
    /// Leading components hashed for dispatch.
    pub dispatch_components: usize,
    /// PIT bound (all threads).
    pub pit_max_entries: usize,
    /// Pending Interests per face (all threads).
    pub pit_max_per_face: usize,
    /// The first retransmission suppression interval (ms; NFD's 10; see
    /// [`crate::pipeline::strategy::retx_suppression::RetxSuppression`]).
    pub retry_interval_ms: u64,
    /// The HopLimit given to an Interest that arrives without one (NFD's
    /// `forwarder.default_hop_limit`); 0: none is given.
    pub default_hop_limit: u8,
    /// Serve `rib/register` and `rib/unregister` under `/localhop/nfd` to faces one hop away.
    pub localhop_prefix_registration: bool,
    /// What checks those registrations: an ndn-cxx validator configuration (INFO text: `rule`
    /// and `trust-anchor` sections, as nfd.conf's `rib.localhop_security`,
    /// [`crate::mgmt::validator`]); empty: they are not checked.
    pub localhop_security: String,
    /// What checks `rib` commands from local faces (nfd.conf's `rib.localhost_security`), the
    /// same way; empty: the local face is enough (NFD's sample trusts any).
    pub localhost_security: String,
    /// What checks the prefix announcement a `rib/announce` carries (nfd.conf's
    /// `rib.prefix_announcement_validation`: `for data` rules and trust anchors); empty: not
    /// checked (NFD's sample trusts any).
    pub prefix_announcement_security: String,
    /// Prefix propagation signing as every identity of the keychain (its default key), as NFD
    /// does; besides [`Config::propagate`]'s keys.
    pub propagate_keychain: bool,
    /// Prefix propagation ([`Config::propagate`]): the cost of the routes on the gateway.
    pub propagate_cost: u64,
    /// … how long an answer is waited for (ms).
    pub propagate_timeout_ms: u64,
    /// … how often a registration is refreshed (ms).
    pub propagate_refresh_ms: u64,
    /// … how long after a refusal or a timeout a command is sent again at first (ms; NFD's
    /// `base_retry_wait`) …
    pub propagate_base_retry_ms: u64,
    /// … doubling up to this (ms; NFD's `max_retry_wait`).
    pub propagate_max_retry_ms: u64,
    /// The producer regions this forwarder is in (NFD's `tables.network_region`): an Interest
    /// whose forwarding hint names one of them, or a prefix of one, is forwarded by its name
    /// and leaves without the hint.
    pub network_regions: Vec<String>,
    /// Tell a routing daemon that registers `/localhost/nlsr` (NLSR, NDNd's `ndnd dv`) of the
    /// routes apps register with origin client (NFD's `rib.readvertise_nlsr`).
    pub readvertise_nlsr: bool,
    /// The user to forward as once started (NFD's `general.user`; "": the one that started it;
    /// [`crate::sys::privileges`]).
    pub user: String,
    /// The group to forward as (NFD's `general.group`; "": the user's own).
    pub group: String,
    /// What `nexthop run` logs to stderr: off, error, warn, info, debug or trace (NFD's
    /// `log.default_level`), optionally with levels of their own for some modules, as
    /// `RUST_LOG` writes them (`warn,nexthop_fw::pipeline=debug`; [`log_filter_ok`]); `RUST_LOG`,
    /// where set, decides instead.
    pub log_level: String,
}

/// The levels `forwarder.log_level` takes, least first.
pub const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The values of `faces.ether_io`.
pub const ETHER_IO: [&str; 3] = ["auto", "af-xdp", "af-packet"];

/// Whether `text` is a `forwarder.log_level`: comma-separated items, each a level of
/// [`LOG_LEVELS`] (the default) or `module=level`, a module path of nexthop's
/// (`nexthop_fw::pipeline`) with its own level — what `RUST_LOG` takes, less its span filters.
pub fn log_filter_ok(text: &str) -> bool {
    let level = |l: &str| LOG_LEVELS.contains(&l);
    let module = |m: &str| !m.is_empty() && m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
    text.split(',').all(|item| match item.trim().split_once('=') {
        Some((m, l)) => module(m) && level(l),
        None => level(item.trim()),
    })
}

/// The content store's replacement policy named `name` in `content_store.policy` (`fifo`, `lru`,
/// `s3fifo`, `priority_fifo`), if it is one.
pub fn cs_policy(name: &str) -> Option<nexthop_cs::Policy> {
    use nexthop_cs::Policy;
    Some(match name {
        "fifo" => Policy::Fifo,
        "lru" => Policy::Lru,
        "s3fifo" => Policy::S3Fifo,
        "priority_fifo" => Policy::PriorityFifo,
        _ => return None,
    })
}

/// `[faces]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FacesConfig {
    /// Unix socket path ("" = none).
    pub unix: String,
    /// TCP listen address ("" = none; `[::]:port` is dual-stack, IPv6 and IPv4).
    pub tcp: String,
    /// UDP listen address ("" = none; `[::]:port` is dual-stack, IPv6 and IPv4).
    pub udp: String,
    /// WebSocket listen address ("" = none): browser and Node.js apps (NFD's port is 9696).
    pub websocket: String,
    /// The addresses a TCP face is local between, both its ends (NFD's `face_system.tcp.local`
    /// whitelist: subnets, addresses or `*`; [`crate::face::local_addresses`]): such a face may
    /// send management commands and `/localhost` packets.
    pub tcp_local: Vec<String>,
    /// … less these (NFD's blacklist there).
    pub tcp_local_exclude: Vec<String>,
    /// Idle timeout of on-demand UDP faces.
    pub udp_idle_timeout_ms: u64,
    /// Idle timeout of on-demand unicast Ethernet faces (NFD's `face_system.ether`
    /// `idle_timeout`).
    pub ether_idle_timeout_ms: u64,
    /// Send-buffer bound per stream face.
    pub send_buffer_bytes: usize,
    /// Largest datagram sent on a UDP face; larger packets are cut into NDNLPv2 fragments
    /// (0: never cut).
    pub udp_mtu: usize,
    /// The UDP multicast group NDN nodes on a LAN meet in (NFD's `224.0.23.170:56363`; "" =
    /// no multicast faces).
    pub udp_multicast: String,
    /// Rules for the interfaces to make an IPv4 multicast face on, one face per address: names
    /// (an interface's IPv4 addresses), name patterns, IPv4 addresses, subnets (the addresses in
    /// them) or Ethernet addresses ([`crate::face::interface_rule`]; none: every interface that is up,
    /// can multicast and is not loopback).
    pub udp_multicast_interfaces: Vec<String>,
    /// The IPv6 UDP multicast group (NFD's `[ff02::1234]:56363`; "" = no IPv6 multicast faces).
    pub udp6_multicast: String,
    /// Rules for the interfaces to make an IPv6 multicast face on, from their link-local
    /// address (as `udp_multicast_interfaces`; none: every interface that is up, can multicast
    /// and is not loopback).
    pub udp6_multicast_interfaces: Vec<String>,
    /// Rules for what no UDP multicast face (IPv4 or IPv6) goes on, whatever includes it (NFD's
    /// `face_system.udp` `blacklist`).
    pub udp_multicast_exclude: Vec<String>,
    /// UDP multicast faces are of the ad hoc link type (NFD's `mcast_ad_hoc`): a wireless
    /// medium where neighbours may not hear each other, so an Interest or Data may leave on the
    /// face it came from.
    pub udp_multicast_ad_hoc: bool,
    /// Rules for the interfaces Ethernet faces go on (as `udp_multicast_interfaces`; none: every
    /// interface that is up, can multicast, has an Ethernet address and is not loopback).
    pub ether_interfaces: Vec<String>,
    /// Rules for the interfaces no Ethernet face goes on, whatever includes them (NFD's
    /// `face_system.ether` `blacklist`).
    pub ether_exclude: Vec<String>,
    /// Whether an interface the include lists above name exactly (a plain name or an address)
    /// must exist and get its face whatever its state (true), or is taken only while it is up,
    /// can multicast and is not loopback, and skipped otherwise, as NFD's `ifname` (false; what
    /// an nfd.conf gives).
    pub named_interfaces_required: bool,
    /// The group of one Ethernet multicast face per interface (NFD's `01:00:5e:00:17:aa`; "" =
    /// none).
    pub ether_multicast: String,
    /// A peer's frame to an interface's own address makes an on-demand unicast face to it (NFD's
    /// `listen`).
    pub ether_listen: bool,
    /// Ethernet multicast faces are of the ad hoc link type (as `udp_multicast_ad_hoc`).
    pub ether_multicast_ad_hoc: bool,
    /// What moves the Ethernet faces' frames ([`ETHER_IO`]): `auto` (AF_XDP where its program
    /// attaches, AF_PACKET otherwise), `af-xdp` or `af-packet`.
    pub ether_io: String,
    /// Mark packets sent on a face whose send queue stays long (NDNLPv2 CongestionMark, as
    /// NFD's `enable_congestion_marking`; see [`crate::lp::congestion`]).
    pub congestion_marking: bool,
}

/// `[content_store]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CsConfig {
    /// Packets (0 = none).
    pub capacity: u32,
    /// Bytes per slot.
    pub slot_bytes: u32,
    /// fifo | lru | s3fifo | priority_fifo.
    pub policy: String,
    /// SSD tier file ("" = none).
    pub l2_path: String,
    /// SSD tier bytes.
    pub l2_bytes: u64,
    /// Bytes of one packet's slot on the SSD tier (a 32-byte header, then the packet; a batch
    /// of 10 is padded to whole 4096-byte blocks); larger Data is cached in DRAM only (counted
    /// as `cs_dram_only`).
    pub l2_slot_bytes: u32,
    /// Read the next batch of a content ahead from the SSD tier.
    pub l2_read_ahead: bool,
    /// Park an Interest whose Data is on the SSD tier while its batch is read in the background.
    pub l2_background_reads: bool,
    /// With background reads, read only an Interest's own chunk when it is in no order.
    pub l2_chunk_reads: bool,
    /// What becomes of Data no Interest asked for (NFD's `tables.cs_unsolicited_policy`):
    /// drop-all, admit-local, admit-network or admit-all (into the content store).
    pub unsolicited_policy: String,
}

/// `[[face]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StaticFace {
    /// FaceUri (udp4/udp6/tcp4/tcp6, or ether for a unicast Ethernet face).
    pub uri: String,
    /// An Ethernet face's interface, `dev://<interface>` (needed when several interfaces have
    /// Ethernet faces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<String>,
}

/// `[[route]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StaticRoute {
    /// Name prefix.
    pub prefix: String,
    /// FaceUri of the next hop (made if not listed under `[[face]]`).
    pub face: String,
    /// Cost.
    #[serde(default)]
    pub cost: u64,
}

/// `[[strategy]]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StaticStrategy {
    /// Name prefix.
    pub prefix: String,
    /// best-route | multicast | access | asf | self-learning | random, or a strategy name with
    /// its version and parameters (`/localhost/nfd/strategy/asf/v=5/probing-interval~30000`,
    /// `best-route/v=5/retx-suppression-max~500`).
    pub strategy: String,
}

/// `[[authorize]]`: one signer's management privileges (NFD's `authorize`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Authorize {
    /// `any`, or an NDN certificate file whose key must sign the commands (relative to the
    /// configuration file's folder).
    pub certfile: String,
    /// The modules it may command: `faces`, `fib`, `cs`, `strategy-choice`.
    pub privileges: Vec<String>,
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (in the message, not a separate cause, so it is said once).
        error: std::io::Error,
    },
    /// TOML syntax, a wrong type or an unknown key.
    #[error("{path}: {error}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What, with the line and column in the file and the line itself.
        error: Box<toml::de::Error>,
    },
    /// A value out of range.
    #[error("{0}")]
    Invalid(String),
}

/// Lays `top` over `base`: tables merge key by key, anything else is replaced. What comes from
/// `top` keeps its place in `top`'s text (a merged table takes `top`'s), so an error in the
/// merged document points at the line of the file that caused it.
fn merge<'a>(base: &mut DeTable<'a>, top: DeTable<'a>) {
    for (key, value) in top {
        let span = value.span();
        let value = match (base.remove(&key).map(Spanned::into_inner), value.into_inner()) {
            (Some(DeValue::Table(mut b)), DeValue::Table(t)) => {
                merge(&mut b, t);
                DeValue::Table(b)
            }
            (_, v) => v,
        };
        base.insert(key, Spanned::new(span, value));
    }
}

impl Default for Config {
    fn default() -> Self {
        let raw: toml::Table = toml::from_str(DEFAULT_TOML).expect("the embedded default parses");
        raw.try_into().expect("the embedded default is a whole configuration")
    }
}

impl Config {
    /// Parses TOML text on top of the default.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] (syntax, types, unknown keys) or [`ConfigError::Invalid`].
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let parse_err = |mut error: toml::de::Error| {
            error.set_input(Some(text));
            ConfigError::Parse { path: path.to_owned(), error: Box::new(error) }
        };
        let mut merged = DeTable::parse(DEFAULT_TOML).expect("the embedded default parses").into_inner();
        let top = DeTable::parse(text).map_err(parse_err)?;
        let span = top.span();
        merge(&mut merged, top.into_inner());
        let mut c = Config::deserialize(toml::de::Deserializer::from(Spanned::new(span, merged))).map_err(parse_err)?;
        c.validate()?;
        c.resolve_paths(path.parent().unwrap_or(Path::new("")));
        Ok(c)
    }

    /// Makes the relative certificate paths of `authorize` relative to `dir` (the folder of the
    /// file that names them, as NFD reads `certfile`).
    pub fn resolve_paths(&mut self, dir: &Path) {
        for a in &mut self.authorize {
            if a.certfile != "any" && Path::new(&a.certfile).is_relative() {
                a.certfile = dir.join(&a.certfile).display().to_string();
            }
        }
        let files = self.propagate.iter_mut().flat_map(|k| [&mut k.key_file, &mut k.certificate]);
        let own = [
            &mut self.keychain.pib,
            &mut self.keychain.tpm,
            &mut self.router.route_file,
            &mut self.switch.hosts_file,
            &mut self.tagnet.fib_file,
        ];
        for file in files.chain(own) {
            if !file.is_empty() && Path::new(file.as_str()).is_relative() {
                *file = dir.join(file.as_str()).display().to_string();
            }
        }
        // The localhop validator's trust-anchor files and directories, as ndn-cxx resolves a
        // validator file's (text that does not parse is left for the runtime to refuse).
        let f = &mut self.forwarder;
        for text in [&mut f.localhop_security, &mut f.localhost_security, &mut f.prefix_announcement_security] {
            let Ok(mut nodes) = crate::conf::info::parse_info(text) else { continue };
            let mut changed = false;
            for anchor in nodes.iter_mut().filter(|n| n.key == "trust-anchor") {
                for n in anchor.children.iter_mut().filter(|n| matches!(n.key.as_str(), "file-name" | "dir")) {
                    if Path::new(&n.value).is_relative() {
                        n.value = dir.join(&n.value).display().to_string();
                        changed = true;
                    }
                }
            }
            if changed {
                *text = crate::conf::info::info_text(&nodes);
            }
        }
    }

    /// The configuration as TOML: a whole file, which [`Config::parse`] reads back to the same.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a configuration is plain TOML values")
    }

    /// Reads a file on top of the default.
    ///
    /// # Errors
    /// As [`Config::parse`], or [`ConfigError::Read`].
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read { path: path.to_owned(), error })?;
        Self::parse(&text, path)
    }

    /// Checks ranges.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the value.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: String| Err(ConfigError::Invalid(s));
        if !(1..=64).contains(&self.forwarder.threads) {
            return bad(format!("forwarder.threads = {} (1 to 64)", self.forwarder.threads));
        }
        if !log_filter_ok(&self.forwarder.log_level) {
            return bad(format!(
                "forwarder.log_level = {:?} (one of {}, optionally with module=level items: \"warn,nexthop_fw::pipeline=debug\")",
                self.forwarder.log_level,
                LOG_LEVELS.join(", ")
            ));
        }
        if self.forwarder.pit_max_entries == 0 {
            return bad("forwarder.pit_max_entries must be at least 1".into());
        }
        if self.forwarder.pit_max_entries.div_ceil(self.forwarder.threads) > crate::table::pit_token::MAX_SLOTS {
            return bad(format!(
                "forwarder.pit_max_entries / threads must be at most {} (PIT tokens name 24-bit slots)",
                crate::table::pit_token::MAX_SLOTS
            ));
        }
        for r in &self.forwarder.network_regions {
            if nexthop_wire::Name::from_uri(r).is_err() {
                return bad(format!("forwarder.network_regions: {r:?} is not a name"));
            }
        }
        if self.forwarder.propagate_timeout_ms == 0 || self.forwarder.propagate_refresh_ms == 0 {
            return bad("forwarder.propagate_timeout_ms and propagate_refresh_ms must be above 0".into());
        }
        if self.forwarder.propagate_base_retry_ms == 0 || self.forwarder.propagate_max_retry_ms < self.forwarder.propagate_base_retry_ms {
            return bad("forwarder.propagate_base_retry_ms must be above 0, and propagate_max_retry_ms at least as long".into());
        }
        for k in &self.propagate {
            if k.key.is_empty() == k.identity.is_empty() {
                return bad(format!("[[propagate]]: give either key or identity (key = {:?}, identity = {:?})", k.key, k.identity));
            }
            if !k.identity.is_empty() {
                if nexthop_wire::Name::from_uri(&k.identity).is_err() {
                    return bad(format!("propagate.identity = {:?}: not a name", k.identity));
                }
                continue;
            }
            let key = nexthop_wire::Name::from_uri(&k.key).ok();
            if !key.is_some_and(|n| (0..n.len()).any(|i| n.get(i).is_some_and(|c| c.value() == b"KEY"))) {
                return bad(format!("propagate.key = {:?}: not a key name (/<identity>/KEY/<key id>)", k.key));
            }
        }
        if crate::pipeline::UnsolicitedPolicy::from_name(&self.content_store.unsolicited_policy).is_none() {
            return bad(format!(
                "content_store.unsolicited_policy = {:?} (drop-all, admit-local, admit-network or admit-all)",
                self.content_store.unsolicited_policy
            ));
        }
        if !XDP_MODES.contains(&self.router.xdp_mode.as_str()) {
            return bad(format!("router.xdp_mode = {:?} ({})", self.router.xdp_mode, XDP_MODES.join(", ")));
        }
        if self.router.interfaces.iter().any(|i| i.is_empty() || i.len() >= 16) {
            return bad(format!("router.interfaces = {:?}: interface names have 1 to 15 bytes", self.router.interfaces));
        }
        if !XDP_MODES.contains(&self.switch.xdp_mode.as_str()) {
            return bad(format!("switch.xdp_mode = {:?} ({})", self.switch.xdp_mode, XDP_MODES.join(", ")));
        }
        let control = &self.switch.control;
        if !control.is_empty() && control.strip_prefix("unix:").map_or(control.parse::<std::net::SocketAddr>().is_err(), str::is_empty) {
            return bad(format!("switch.control = {control:?}: unix:PATH or IP:PORT"));
        }
        let names = &self.switch.interfaces;
        if names.iter().any(|i| i.is_empty() || i.len() >= 16) || names.len() > MAX_SWITCH_INTERFACES {
            return bad(format!("switch.interfaces = {names:?}: at most {MAX_SWITCH_INTERFACES}, names of 1 to 15 bytes"));
        }
        if names.iter().any(|i| self.router.interfaces.contains(i)) {
            return bad(format!("switch.interfaces = {names:?}: an interface is the router's too"));
        }
        let t = &self.tagnet;
        if !XDP_MODES.contains(&t.xdp_mode.as_str()) {
            return bad(format!("tagnet.xdp_mode = {:?} ({})", t.xdp_mode, XDP_MODES.join(", ")));
        }
        if t.interfaces.iter().any(|i| i.is_empty() || i.len() >= 16) || t.interfaces.len() + t.tunnels.len() > MAX_TAGNET_PORTS {
            return bad(format!(
                "tagnet.interfaces = {:?}: names of 1 to 15 bytes, at most {MAX_TAGNET_PORTS} with the tunnels",
                t.interfaces
            ));
        }
        if t.interfaces.iter().any(|i| self.router.interfaces.contains(i) || self.switch.interfaces.contains(i)) {
            return bad(format!("tagnet.interfaces = {:?}: an interface is the IP router's or the switch's too", t.interfaces));
        }
        if let Err(e) = t.tunnel_addresses() {
            return bad(e);
        }
        if t.name.len() > 32 {
            return bad(format!("tagnet.name = {:?}: at most 32 bytes", t.name));
        }
        if let Some(r) = t.roots.iter().find(|&&r| r >= 64) {
            return bad(format!("tagnet.roots: tree {r}: tree ids are below 64"));
        }
        if cs_policy(&self.content_store.policy).is_none() {
            return bad(format!("content_store.policy = {:?} (fifo, lru, s3fifo or priority_fifo)", self.content_store.policy));
        }
        if self.content_store.capacity > 0 && self.content_store.slot_bytes < 64 {
            return bad("content_store.slot_bytes must be at least 64".into());
        }
        // The SSD tier's own rule (L2::open), checked here to name the key.
        let (l2_slot, header) = (self.content_store.l2_slot_bytes, nexthop_cs::l2::HEADER_BYTES);
        if !self.content_store.l2_path.is_empty() && l2_slot as usize <= header {
            return bad(format!("content_store.l2_slot_bytes = {l2_slot}: must be more than the {header}-byte header"));
        }
        for a in &self.authorize {
            if a.certfile.is_empty() {
                return bad("authorize.certfile is empty (\"any\" or a certificate file)".into());
            }
            if let Some(p) = a.privileges.iter().find(|p| crate::mgmt::authorization::Module::parse(p.as_bytes()).is_none()) {
                return bad(format!("authorize.privileges: {p:?} (faces, fib, cs or strategy-choice)"));
            }
        }
        if let Err(e) = crate::face::local_addresses::LocalAddresses::parse(&self.faces.tcp_local, &self.faces.tcp_local_exclude) {
            return bad(format!("faces.tcp_local: {e}"));
        }
        let mtu = self.faces.udp_mtu;
        if mtu != 0 && !(crate::lp::fragmentation::MIN_MTU..=65_507).contains(&mtu) {
            return bad(format!("faces.udp_mtu = {mtu} (0, or {} to 65507)", crate::lp::fragmentation::MIN_MTU));
        }
        if !self.faces.udp_multicast.is_empty() {
            let group = self.faces.udp_multicast.parse::<std::net::SocketAddrV4>();
            if !group.is_ok_and(|g| g.ip().is_multicast()) {
                return bad(format!("faces.udp_multicast = {:?} is not an IPv4 multicast address:port", self.faces.udp_multicast));
            }
        }
        let f = &self.faces;
        for (key, rules) in [
            ("faces.udp_multicast_interfaces", &f.udp_multicast_interfaces),
            ("faces.udp6_multicast_interfaces", &f.udp6_multicast_interfaces),
            ("faces.udp_multicast_exclude", &f.udp_multicast_exclude),
            ("faces.ether_interfaces", &f.ether_interfaces),
            ("faces.ether_exclude", &f.ether_exclude),
        ] {
            if let Err(e) = crate::face::interface_rule::InterfaceRules::parse(rules, &[]) {
                return bad(format!("{key}: {e}"));
            }
        }
        if !self.faces.udp6_multicast.is_empty() {
            let group = self.faces.udp6_multicast.parse::<std::net::SocketAddrV6>();
            if !group.is_ok_and(|g| g.ip().is_multicast()) {
                return bad(format!("faces.udp6_multicast = {:?} is not an IPv6 multicast [address]:port", self.faces.udp6_multicast));
            }
        }
        if !self.faces.ether_multicast.is_empty()
            && !crate::face::ether::Mac::parse(&self.faces.ether_multicast).is_some_and(crate::face::ether::Mac::is_multicast)
        {
            return bad(format!("faces.ether_multicast = {:?} is not an Ethernet multicast address", self.faces.ether_multicast));
        }
        if !ETHER_IO.contains(&self.faces.ether_io.as_str()) {
            return bad(format!("faces.ether_io = {:?} is not one of {}", self.faces.ether_io, ETHER_IO.join(", ")));
        }
        for (k, v) in [("faces.tcp", &self.faces.tcp), ("faces.udp", &self.faces.udp)] {
            if !v.is_empty() && v.parse::<std::net::SocketAddr>().is_err() {
                return bad(format!("{k} = {v:?} is not an address:port"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ssd_slot_must_hold_more_than_its_header_and_the_default_holds_any_packet() {
        let mut c = Config::default();
        assert_eq!(c.content_store.l2_slot_bytes as usize, nexthop_cs::l2::HEADER_BYTES + crate::face::MAX_PACKET_BYTES);
        c.content_store.l2_path = "/tmp/l2".into();
        c.content_store.l2_slot_bytes = 32;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("l2_slot_bytes = 32"), "{e}");
        c.content_store.l2_slot_bytes = 3000;
        c.validate().unwrap();
    }

    #[test]
    fn default_parses_and_validates() {
        let c = Config::default();
        c.validate().unwrap();
        assert_eq!(c.faces.unix, "/run/nfd/nfd.sock");
        assert_eq!(c.forwarder.threads, 1);
    }

    #[test]
    fn file_overrides_only_what_it_says() {
        let c =
            Config::parse("[faces]\nunix = \"/tmp/x.sock\"\n[[route]]\nprefix = \"/a\"\nface = \"udp4://10.0.0.1\"\n", Path::new("t.toml"))
                .unwrap();
        assert_eq!(c.faces.unix, "/tmp/x.sock");
        assert_eq!(c.faces.udp, "[::]:6363");
        assert_eq!(c.route.len(), 1);
        assert_eq!(c.route[0].cost, 0);
    }

    #[test]
    fn authorizations_default_to_any_and_a_file_replaces_them() {
        let all = ["faces", "fib", "cs", "strategy-choice"].map(String::from).to_vec();
        assert_eq!(Config::default().authorize, [Authorize { certfile: "any".into(), privileges: all }]);
        let text = "[[authorize]]\ncertfile = \"op.ndncert\"\nprivileges = [\"fib\"]\n[[authorize]]\ncertfile = \"/abs/x.ndncert\"\nprivileges = []\n";
        let c = Config::parse(text, Path::new("/etc/nexthop/n.toml")).unwrap();
        let files: Vec<&str> = c.authorize.iter().map(|a| a.certfile.as_str()).collect();
        assert_eq!(files, ["/etc/nexthop/op.ndncert", "/abs/x.ndncert"], "relative to the file's folder");
        assert!(Config::parse("authorize = []\n", Path::new("t.toml")).unwrap().authorize.is_empty());
        let e = Config::parse("[[authorize]]\ncertfile = \"any\"\nprivileges = [\"rib\"]\n", Path::new("t.toml")).unwrap_err();
        assert!(e.to_string().contains("authorize.privileges: \"rib\""), "{e}");
    }

    #[test]
    fn propagation_keys_are_key_names_and_their_files_follow_the_configuration() {
        let text = "[[propagate]]\nkey = \"/alice/KEY/k1\"\ncertificate = \"alice.ndncert\"\n";
        let c = Config::parse(text, Path::new("/etc/nexthop/n.toml")).unwrap();
        assert_eq!(c.propagate[0].certificate, "/etc/nexthop/alice.ndncert");
        assert_eq!(c.propagate[0].key_file, "", "the file TPM");
        let e = Config::parse("[[propagate]]\nkey = \"/alice\"\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("not a key name"), "{e}");
        // Or an identity of the keychain, whose folders follow the configuration too.
        let text = "[[propagate]]\nidentity = \"/alice\"\n[keychain]\npib = \"keys\"\ntpm = \"/var/tpm\"\n";
        let c = Config::parse(text, Path::new("/etc/nexthop/n.toml")).unwrap();
        assert_eq!((c.propagate[0].identity.as_str(), c.propagate[0].key.as_str()), ("/alice", ""));
        let keychain = c.keychain.keychain().unwrap();
        assert_eq!((keychain.pib_file(), keychain.tpm_dir()), (Path::new("/etc/nexthop/keys/pib.db"), Path::new("/var/tpm")));
        for both_or_neither in ["key = \"/a/KEY/k\"\nidentity = \"/a\"", "certificate = \"a.ndncert\""] {
            let e = Config::parse(&format!("[[propagate]]\n{both_or_neither}\n"), Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.contains("give either key or identity"), "{e}");
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Config::parse("[faces]\nunx = \"/tmp\"\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("unx"), "{e}");
        let e = Config::parse("[forwarder]\nthreads = 0\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("threads"), "{e}");
        let e = Config::parse("[faces]\ntcp = \"nowhere\"\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("faces.tcp"), "{e}");
        let e = Config::parse("[content_store]\nunsolicited_policy = \"keep\"\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("unsolicited_policy"), "{e}");
        let e = Config::parse("[forwarder]\nnetwork_regions = [\"no-slash\"]\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("network_regions"), "{e}");
        for group in ["[fe80::1]:56363", "ff02::1234", "224.0.23.170:56363"] {
            let e = Config::parse(&format!("[faces]\nudp6_multicast = {group:?}\n"), Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.contains("udp6_multicast"), "{e}");
        }
        let c = Config::parse("[faces]\nudp6_multicast = \"[ff02::1234]:56363\"\n", Path::new("t.toml")).unwrap();
        assert_eq!(c.faces.udp6_multicast, "[ff02::1234]:56363");
        for group in ["02:00:00:00:00:01", "01:00:5e:00:17", "eth0"] {
            let e = Config::parse(&format!("[faces]\nether_multicast = {group:?}\n"), Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.contains("ether_multicast"), "{e}");
        }
        let c = Config::parse("[faces]\nether_multicast = \"01:00:5e:00:17:aa\"\n", Path::new("t.toml")).unwrap();
        assert_eq!(c.faces.ether_multicast, "01:00:5e:00:17:aa");
        assert_eq!(c.faces.ether_io, "auto");
        for io in ETHER_IO {
            assert_eq!(Config::parse(&format!("[faces]\nether_io = {io:?}\n"), Path::new("t.toml")).unwrap().faces.ether_io, io);
        }
        let e = Config::parse("[faces]\nether_io = \"dpdk\"\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("faces.ether_io") && e.contains("af-xdp"), "{e}");
        let text = "[[face]]\nuri = \"ether://[02:00:00:00:00:01]\"\nlocal = \"dev://eth0\"\n[[face]]\nuri = \"udp4://192.0.2.1\"\n";
        let c = Config::parse(text, Path::new("t.toml")).unwrap();
        assert_eq!(c.face[0], StaticFace { uri: "ether://[02:00:00:00:00:01]".into(), local: Some("dev://eth0".into()) });
        assert_eq!(c.face[1].local, None);
    }

    #[test]
    fn the_tagnet_section_is_checked_and_its_fib_file_follows_the_configuration() {
        let c = Config::parse(
            "[tagnet]\ninterfaces = [\"t1\"]\ntunnels = [\"10.0.0.1:6464 10.0.0.2:6464\"]\nroots = [0, 3]\nfib_file = \"tags.fib\"\n",
            Path::new("/etc/nexthop/n.toml"),
        )
        .unwrap();
        assert_eq!(c.tagnet.fib_file, "/etc/nexthop/tags.fib");
        assert_eq!(c.tagnet.roots, vec![0, 3]);
        let (local, remote) = c.tagnet.tunnel_addresses().unwrap()[0];
        assert_eq!((local.to_string().as_str(), remote.to_string().as_str()), ("10.0.0.1:6464", "10.0.0.2:6464"));
        for (section, key) in [
            ("tunnels = [\"10.0.0.1:6464\"]", "tagnet.tunnels"),
            ("tunnels = [\"a b\"]", "tagnet.tunnels"),
            ("roots = [64]", "tagnet.roots"),
            ("name = \"a-name-that-is-longer-than-32-bytes\"", "tagnet.name"),
            ("xdp_mode = \"fast\"", "tagnet.xdp_mode"),
            ("interfaces = [\"eth0\"]\n[switch]\ninterfaces = [\"eth0\"]", "tagnet.interfaces"),
        ] {
            let e = Config::parse(&format!("[tagnet]\n{section}\n"), Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.contains(key), "{section}: {e}");
        }
    }

    #[test]
    fn the_switch_section_is_checked_and_its_hosts_file_follows_the_configuration() {
        let c = Config::parse(
            "[switch]
interfaces = [\"s1\", \"s2\"]
hosts_file = \"h.txt\"
",
            Path::new("/etc/nexthop/n.toml"),
        )
        .unwrap();
        assert_eq!((c.switch.hosts_file.as_str(), c.switch.learn, c.switch.xdp_mode.as_str()), ("/etc/nexthop/h.txt", true, "auto"));
        let e = Config::parse(
            "[switch]
xdp_mode = \"fast\"
",
            Path::new("t.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("switch.xdp_mode"), "{e}");
        for (control, ok) in [("unix:/run/s1.sock", true), ("127.0.0.1:50051", true), ("unix:", false), ("s1.sock", false)] {
            let r = Config::parse(&format!("[switch]\ncontrol = {control:?}\n"), Path::new("t.toml"));
            assert_eq!(r.is_ok(), ok, "{control}: {r:?}");
        }
        let e = Config::parse(
            "[switch]
interfaces = [\"eth0\"]
[router]
interfaces = [\"eth0\"]
",
            Path::new("t.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("the router's too"), "{e}");
        let many: Vec<String> = (0..65).map(|i| format!("s{i}")).collect();
        let e = Config::parse(
            &format!(
                "[switch]
interfaces = {many:?}
"
            ),
            Path::new("t.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at most 64"), "{e}");
    }

    #[test]
    fn type_errors_and_unknown_keys_name_their_line() {
        let text = "# comment\n[faces]\nunix = \"/tmp/x.sock\"\n\n[forwarder]\nthreads = \"two\"\n";
        let e = Config::parse(text, Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.starts_with("t.toml: TOML parse error at line 6"), "{e}");
        assert!(e.contains("threads = \"two\""), "the line itself: {e}");
        let e = Config::parse("[faces]\nudp = \"\"\nunx = \"/tmp\"\n", Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("unx"), "{e}");
        let e = Config::parse("[[route]]\nprefix = \"/a\"\nface = \"udp4://10.0.0.1\"\ncost = -1\n", Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4"), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_shape_anywhere_is_refused_at_its_line() {
        for (text, line) in [
            ("forwarder = 5\n", 1),
            ("[[forwarder]]\nthreads = 1\n", 1),
            ("forwarder = { threads = \"x\" }\n", 1),
            ("faces.unix = 3\n", 1),
            ("route = 1\n", 1),
            ("[[route]]\n", 1),
            ("[[route]]\nprefix = 1\nface = \"udp4://10.0.0.1\"\n", 2),
            ("route_files = [1]\n", 1),
            ("[content_store]\ncapacity = 99999999999999\n", 2),
            ("[forwarder]\nthreads = 1.5\n", 2),
            ("[faces]\ncongestion_marking = \"yes\"\n", 2),
        ] {
            let e = Config::parse(text, Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.starts_with(&format!("t.toml: TOML parse error at line {line},")), "{text:?}: {e}");
        }
        assert_eq!(Config::parse("", Path::new("t.toml")).unwrap(), Config::default());
    }

    #[test]
    fn log_levels_may_name_modules() {
        for ok in ["error", "warn,nexthop_fw::pipeline=debug", "off, nexthop_fw=info , nexthop_cs::l2=trace"] {
            assert!(log_filter_ok(ok), "{ok}");
            let text = format!("[forwarder]\nlog_level = {ok:?}\n");
            assert!(Config::parse(&text, Path::new("t.toml")).is_ok(), "{ok}");
        }
        for bad in ["", "loud", "warn,", "nexthop_fw::pipeline=loud", "=debug", "warn,nexthop fw=debug", "warn,a[span]=debug"] {
            assert!(!log_filter_ok(bad), "{bad}");
            let text = format!("[forwarder]\nlog_level = {bad:?}\n");
            let e = Config::parse(&text, Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.contains("forwarder.log_level"), "{bad}: {e}");
        }
    }
}
