//! `nexthop ctl`: operate a running forwarder over the NFD management protocol (it works
//! against NFD too, except for `status`'s drop counters, which are nexthop's own dataset).

use std::io::Write;

use anyhow::{bail, Context};
use nexthop_fw::face::{Persistency, FLAG_CONGESTION_MARKING, FLAG_LP_RELIABILITY};
use nexthop_fw::mgmt::client_conf::ClientConf;
use nexthop_fw::mgmt::command_key::CommandKey;
use nexthop_fw::mgmt::dataset::parse_labelled_counts;
use nexthop_fw::mgmt::keychain::Keychain;
use nexthop_fw::mgmt::params::{ControlParameters, ControlResponse};
use nexthop_fw::mgmt::rib::{CAPTURE, CHILD_INHERIT};
use nexthop_fw::mgmt::{CS_ENABLE_ADMIT, CS_ENABLE_SERVE};
use nexthop_tools::client::Client;
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Name, NameView};

/// `println!` that ends the program quietly when stdout is gone (`nexthop ctl status | head`):
/// a closed pipe is the reader's choice, not an error worth a panic.
macro_rules! out {
    ($($arg:tt)*) => {
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    };
}

/// Arguments of `nexthop ctl`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The forwarder's face: unix:///path, tcp4://host:port or tcp6://[addr]:port. By default
    /// the client settings' `transport` (NDN_CLIENT_TRANSPORT, else client.conf's, as nfdc and
    /// python-ndn read it), else unix:///run/nfd/nfd.sock.
    #[arg(long)]
    face: Option<String>,
    /// Sign commands with this key (`/<identity>/KEY/<key id>`, as `ndnsec list -k` or
    /// `pyndnsec Get-Default -k` shows it), for a forwarder whose authorizations name its
    /// certificate; the key is read from the keychain's file TPM (ndnsec's and pyndnsec's:
    /// ~/.ndn/ndnsec-key-file, or where client.conf or NDN_CLIENT_TPM says) unless --key-file
    /// says where. Without it or --sign-identity commands are signed with DigestSha256.
    #[arg(long, conflicts_with = "sign_identity")]
    sign_key: Option<String>,
    /// Sign commands as an identity of the keychain (`--sign-identity=/alice`), with its
    /// default key; with no name, as the default identity (as `nfdc` signs).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "", value_name = "IDENTITY")]
    sign_identity: Option<String>,
    /// The file of --sign-key's private key (base64 DER: SEC1 or PKCS#8 for EC, PKCS#1 or
    /// PKCS#8 for RSA).
    #[arg(long, requires = "sign_key")]
    key_file: Option<std::path::PathBuf>,
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Forwarder counters: totals, tables, drops by reason, and each face's in/out counters.
    Status,
    /// Faces with their counters.
    Faces,
    /// Routes (the RIB) and the FIB they make.
    Routes,
    /// Content store.
    Cs,
    /// Strategy choices.
    Strategies,
    /// Channels: where the forwarder listens (its Unix socket, TCP, UDP and WebSocket
    /// listeners, Ethernet ports), as `nfdc channel list` shows them.
    Channels,
    /// Add a route: PREFIX FACE (a face id or a udp4/udp6/tcp4/tcp6 URI, made if needed; a host
    /// name is looked up) [COST].
    RouteAdd {
        prefix: String,
        face: String,
        cost: Option<u64>,
        /// The route's origin (nfdc's: 255, static).
        #[arg(long, default_value_t = 255)]
        origin: u64,
        /// Not inherited by longer prefixes (child-inherit off).
        #[arg(long)]
        no_inherit: bool,
        /// Routes of shorter prefixes are not inherited at or below this one (capture).
        #[arg(long)]
        capture: bool,
        /// The route lapses after this many ms (none: it stays).
        #[arg(long)]
        expires_ms: Option<u64>,
    },
    /// Remove a route: PREFIX FACE-ID.
    RouteRemove {
        prefix: String,
        face: u64,
        /// The route's origin.
        #[arg(long, default_value_t = 255)]
        origin: u64,
    },
    /// Make a face to a udp4/udp6/tcp4/tcp6 URI (a host name is looked up), or an ether://[mac]
    /// one from LOCAL (dev://<interface>, needed when several interfaces have Ethernet faces).
    FaceCreate {
        uri: String,
        local: Option<String>,
        #[command(flatten)]
        options: FaceOptions,
    },
    /// Change a face: its persistency, link reliability, congestion marking, MTU.
    FaceUpdate {
        id: u64,
        #[command(flatten)]
        options: FaceOptions,
    },
    /// Close a face.
    FaceDestroy { id: u64 },
    /// Choose a strategy under a prefix: best-route, multicast, access, asf, self-learning, random, or a strategy
    /// name with its version and parameters (`/localhost/nfd/strategy/asf/v=5/probing-interval~30000`,
    /// `best-route/v=5/retx-suppression-max~500`).
    StrategySet { prefix: String, strategy: String },
    /// Remove the strategy choice of a prefix (it inherits its parent's again).
    StrategyUnset { prefix: String },
    /// Erase the content store's packets under a prefix (all of them, repeating `cs/erase`
    /// until it erases none, or at most --count).
    CsErase {
        prefix: String,
        #[arg(long)]
        count: Option<u64>,
    },
    /// Change the content store: its capacity in packets, whether it admits Data and whether it
    /// answers Interests (on or off); prints what is then in force.
    CsConfig {
        #[arg(long)]
        capacity: Option<u64>,
        #[arg(long, value_parser = on_off)]
        admit: Option<bool>,
        #[arg(long, value_parser = on_off)]
        serve: Option<bool>,
    },
}

/// `on` or `off`.
fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{s:?}: on or off")),
    }
}

/// `on` when `flags` has `bit`, else `off`.
fn on_off_word(flags: u64, bit: u64) -> &'static str {
    if flags & bit != 0 {
        "on"
    } else {
        "off"
    }
}

/// What `face-create` and `face-update` set, each where given (as `nfdc face create` takes
/// them); applied by `face-create` to a face that exists already, too.
#[derive(Debug, clap::Args)]
struct FaceOptions {
    /// persistent, permanent (kept through socket errors) or on-demand (update only).
    #[arg(long, value_parser = persistency)]
    persistency: Option<Persistency>,
    /// NDNLPv2 link reliability (on or off), as `nfdc face create ... reliability on`; the
    /// other end must turn it on too.
    #[arg(long, value_parser = on_off)]
    reliability: Option<bool>,
    /// Congestion marking (on or off).
    #[arg(long, value_parser = on_off)]
    congestion_marking: Option<bool>,
    /// The base interval between congestion marks, in ms (nfdc's congestion-marking-interval).
    #[arg(long)]
    congestion_marking_interval_ms: Option<u64>,
    /// The send queue, in bytes, above which marking starts (nfdc's
    /// default-congestion-threshold).
    #[arg(long)]
    congestion_threshold: Option<u64>,
    /// The largest packet sent whole, in bytes (datagram faces: larger ones go as NDNLPv2
    /// fragments; nfdc's mtu). `faces` shows it.
    #[arg(long)]
    mtu: Option<u64>,
}

impl FaceOptions {
    /// Whether any is given.
    fn asks_anything(&self) -> bool {
        self.params() != ControlParameters::default()
    }

    /// The ControlParameters that ask for these: Flags and Mask carry the two flags.
    fn params(&self) -> ControlParameters {
        let mut flags = 0;
        let mut mask = 0;
        for (on, bit) in [(self.reliability, FLAG_LP_RELIABILITY), (self.congestion_marking, FLAG_CONGESTION_MARKING)] {
            if let Some(on) = on {
                mask |= bit;
                flags |= if on { bit } else { 0 };
            }
        }
        ControlParameters {
            face_persistency: self.persistency.map(Persistency::code),
            flags: (mask != 0).then_some(flags),
            mask: (mask != 0).then_some(mask),
            base_congestion_marking_interval: self.congestion_marking_interval_ms.map(|ms| ms.saturating_mul(1_000_000)),
            default_congestion_threshold: self.congestion_threshold,
            mtu: self.mtu,
            ..Default::default()
        }
    }
}

/// `persistent`, `permanent` or `on-demand`.
fn persistency(s: &str) -> Result<Persistency, String> {
    Persistency::from_name(s).ok_or_else(|| format!("{s:?}: persistent, permanent or on-demand"))
}

/// A face's state after `face-create` or `face-update`, from the answer's body.
fn face_line(body: Option<&ControlParameters>) -> String {
    let flags = body.and_then(|b| b.flags).unwrap_or(0);
    let persistency = body.and_then(|b| b.face_persistency).and_then(Persistency::from_code).map_or("?", Persistency::name);
    format!(
        "persistency={persistency} reliability={} congestion-marking={}",
        on_off_word(flags, FLAG_LP_RELIABILITY),
        on_off_word(flags, FLAG_CONGESTION_MARKING)
    )
}

/// `uri` as `faces/create` takes it, a host name looked up as nfdc canonizes it
/// (`udp4://hub.example.net` → `udp4://192.0.2.1:6363`; [`FaceUri::resolve`]).
fn canonical(uri: &str) -> anyhow::Result<String> {
    Ok(nexthop_fw::sys::interfaces::resolve_face_uri(uri).with_context(|| format!("face URI {uri}"))?.to_string())
}

/// Runs `nexthop ctl`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let face = match &args.face {
        Some(face) => face.clone(),
        None => ClientConf::load().transport.unwrap_or_else(|| "unix:///run/nfd/nfd.sock".into()),
    };
    let uri = nexthop_fw::sys::interfaces::resolve_face_uri(&face).with_context(|| format!("the forwarder's face {face}"))?;
    let mut c = Client::connect(&uri).with_context(|| format!("connecting to {uri}"))?;
    if let Some(name) = &args.sign_key {
        let name = Name::from_uri(name).with_context(|| format!("--sign-key {name}"))?;
        let key = match &args.key_file {
            Some(path) => CommandKey::load(name, path)?,
            None => Keychain::locate()?.private_key(name)?,
        };
        c.set_command_key(Some(key));
    }
    if let Some(identity) = &args.sign_identity {
        let keychain = Keychain::locate()?;
        let identity = match identity.as_str() {
            "" => keychain.default_identity()?,
            name => Name::from_uri(name).with_context(|| format!("--sign-identity {name}"))?,
        };
        let key = keychain.default_key(&identity)?;
        c.set_command_key(Some(keychain.private_key(key)?));
    }
    match args.what {
        What::Status => {
            print_dataset(&c.dataset("/localhost/nfd/status/general")?, GENERAL, false);
            for what in ["counters", "drops"] {
                out!("{what}:");
                for (label, n) in parse_labelled_counts(&c.dataset(&format!("/localhost/nfd/status/{what}"))?) {
                    out!("  {label:<22} {n}");
                }
            }
            out!("faces:");
            print_dataset(&c.dataset("/localhost/nfd/faces/list")?, FACE, true);
        }
        What::Faces => print_dataset(&c.dataset("/localhost/nfd/faces/list")?, FACE, true),
        What::Routes => {
            out!("rib:");
            print_dataset(&c.dataset("/localhost/nfd/rib/list")?, RIB, true);
            out!("fib:");
            print_dataset(&c.dataset("/localhost/nfd/fib/list")?, FIB, true);
        }
        What::Cs => print_dataset(&c.dataset("/localhost/nfd/cs/info")?, CS, true),
        What::Strategies => print_dataset(&c.dataset("/localhost/nfd/strategy-choice/list")?, STRATEGY, true),
        What::Channels => {
            // ChannelStatus (0x82) elements, each a LocalUri.
            let list = c.dataset("/localhost/nfd/faces/channels")?;
            for channel in TlvReader::new(&list).filter_map(Result::ok).filter(|t| t.ty == 0x82) {
                out!("  {}", fields(channel.value, &[(0x81, F::Text("local"))]));
            }
        }
        What::RouteAdd { prefix, face, cost, origin, no_inherit, capture, expires_ms } => {
            let face_id = match face.parse::<u64>() {
                Ok(id) => id,
                Err(_) => {
                    let r = c.command("faces", "create", &ControlParameters { uri: Some(canonical(&face)?), ..Default::default() })?;
                    check(&r, &[200, 409])?;
                    r.body.and_then(|b| b.face_id).context("faces/create answered without a FaceId")?
                }
            };
            // Route flags: child-inherit (NFD's default when none are given) and capture.
            let flags = (no_inherit || capture).then_some(if no_inherit { 0 } else { CHILD_INHERIT } | if capture { CAPTURE } else { 0 });
            let p = ControlParameters {
                name: Some(Name::from_uri(&prefix)?),
                face_id: Some(face_id),
                cost,
                origin: Some(origin),
                flags,
                expiration_period: expires_ms,
                ..Default::default()
            };
            show(c.command("rib", "register", &p)?)?;
        }
        What::RouteRemove { prefix, face, origin } => {
            let p =
                ControlParameters { name: Some(Name::from_uri(&prefix)?), face_id: Some(face), origin: Some(origin), ..Default::default() };
            show(c.command("rib", "unregister", &p)?)?;
        }
        What::FaceCreate { uri, local, options } => {
            let p = ControlParameters { uri: Some(canonical(&uri)?), local_uri: local, ..options.params() };
            let mut r = c.command("faces", "create", &p)?;
            check(&r, &[200, 409])?;
            let id = r.body.as_ref().and_then(|b| b.face_id).unwrap_or(0);
            // A face that exists is answered 409 and keeps its persistency: what was asked is
            // then asked of faces/update, as nfdc does.
            if r.code == 409 && options.asks_anything() {
                let update = c.command("faces", "update", &ControlParameters { face_id: Some(id), ..options.params() })?;
                check(&update, &[200])?;
                r.body = update.body;
            }
            out!("{} {}: face {id} {}", r.code, r.text, face_line(r.body.as_ref()));
        }
        What::FaceUpdate { id, options } => {
            let r = c.command("faces", "update", &ControlParameters { face_id: Some(id), ..options.params() })?;
            check(&r, &[200])?;
            out!("face {id} {}", face_line(r.body.as_ref()));
        }
        What::FaceDestroy { id } => show(c.command("faces", "destroy", &ControlParameters { face_id: Some(id), ..Default::default() })?)?,
        What::StrategySet { prefix, strategy } => {
            let s = nexthop_fw::pipeline::strategy::registry::full_name(&strategy);
            let p = ControlParameters { name: Some(Name::from_uri(&prefix)?), strategy: Some(Name::from_uri(&s)?), ..Default::default() };
            show(c.command("strategy-choice", "set", &p)?)?;
        }
        What::StrategyUnset { prefix } => {
            let p = ControlParameters { name: Some(Name::from_uri(&prefix)?), ..Default::default() };
            show(c.command("strategy-choice", "unset", &p)?)?;
        }
        What::CsErase { prefix, count } => {
            let name = Name::from_uri(&prefix)?;
            let mut erased = 0;
            // The forwarder erases at most 256 a command: ask again until none is left (or
            // --count are gone).
            loop {
                let left = count.map(|c| c - erased);
                if left == Some(0) {
                    break;
                }
                let r = c.command("cs", "erase", &ControlParameters { name: Some(name.clone()), count: left, ..Default::default() })?;
                check(&r, &[200])?;
                let n = r.body.and_then(|b| b.count).context("cs/erase answered without a Count")?;
                if n == 0 {
                    break;
                }
                erased += n;
            }
            out!("erased {erased}");
        }
        What::CsConfig { capacity, admit, serve } => {
            let (mut flags, mut mask) = (0, 0);
            for (bit, on) in [(CS_ENABLE_ADMIT, admit), (CS_ENABLE_SERVE, serve)] {
                if let Some(on) = on {
                    mask |= bit;
                    flags |= if on { bit } else { 0 };
                }
            }
            let p = ControlParameters { capacity, flags: Some(flags), mask: Some(mask), ..Default::default() };
            let r = c.command("cs", "config", &p)?;
            check(&r, &[200])?;
            let body = r.body.context("cs/config answered without parameters")?;
            let (capacity, flags) = (body.capacity.unwrap_or(0), body.flags.unwrap_or(0));
            out!("capacity={capacity} admit={} serve={}", on_off_word(flags, CS_ENABLE_ADMIT), on_off_word(flags, CS_ENABLE_SERVE));
        }
    }
    Ok(())
}

fn check(r: &ControlResponse, ok: &[u64]) -> anyhow::Result<()> {
    if !ok.contains(&r.code) {
        bail!("{} {}", r.code, r.text);
    }
    Ok(())
}

fn show(r: ControlResponse) -> anyhow::Result<()> {
    check(&r, &[200])?;
    out!("{} {}", r.code, r.text);
    Ok(())
}

/// Field names by TLV-TYPE; `Text` fields print as text, `Name` as a name, `Nested` recurse.
#[derive(Clone, Copy)]
enum F {
    Num(&'static str),
    Text(&'static str),
    Name(&'static str),
    Nested(&'static str, &'static [(u32, F)]),
}

const GENERAL: &[(u32, F)] = &[
    (0x80, F::Text("version")),
    (0x81, F::Num("start_ms")),
    (0x82, F::Num("now_ms")),
    (0x84, F::Num("fib_entries")),
    (0x85, F::Num("pit_entries")),
    (0x87, F::Num("cs_entries")),
    (0x90, F::Num("in_interests")),
    (0x91, F::Num("in_data")),
    (0x97, F::Num("in_nacks")),
    (0x92, F::Num("out_interests")),
    (0x93, F::Num("out_data")),
    (0x98, F::Num("out_nacks")),
    (0x99, F::Num("satisfied")),
    (0x9a, F::Num("unsatisfied")),
];
const FACE: &[(u32, F)] = &[
    (0x69, F::Num("id")),
    (0x72, F::Text("remote")),
    (0x81, F::Text("local")),
    (0x84, F::Num("scope")),
    (0x85, F::Num("persistency")),
    (0x86, F::Num("link_type")),
    (0x6c, F::Num("flags")),
    (0x89, F::Num("mtu")),
    (0x90, F::Num("in_interests")),
    (0x91, F::Num("in_data")),
    (0x97, F::Num("in_nacks")),
    (0x92, F::Num("out_interests")),
    (0x93, F::Num("out_data")),
    (0x98, F::Num("out_nacks")),
    (0x94, F::Num("in_bytes")),
    (0x95, F::Num("out_bytes")),
];
const HOP: &[(u32, F)] =
    &[(0x69, F::Num("face")), (0x6f, F::Num("origin")), (0x6a, F::Num("cost")), (0x6c, F::Num("flags")), (0x6d, F::Num("expires_ms"))];
const FIB: &[(u32, F)] = &[(0x07, F::Name("prefix")), (0x81, F::Nested("nexthop", HOP))];
const RIB: &[(u32, F)] = &[(0x07, F::Name("prefix")), (0x81, F::Nested("route", HOP))];
const CS: &[(u32, F)] =
    &[(0x83, F::Num("capacity")), (0x6c, F::Num("flags")), (0x87, F::Num("entries")), (0x81, F::Num("hits")), (0x82, F::Num("misses"))];
const STRATEGY: &[(u32, F)] = &[(0x07, F::Name("prefix")), (0x6b, F::Nested("strategy", &[(0x07, F::Name("name"))]))];

fn elements(content: &[u8]) -> Vec<Vec<u8>> {
    TlvReader::new(content).filter_map(Result::ok).filter(|t| t.ty == 0x80).map(|t| t.value.to_vec()).collect()
}

fn fields(value: &[u8], table: &[(u32, F)]) -> String {
    field_list(value, table).iter().map(|(n, sep, v)| format!("{n}{sep}{v}")).collect::<Vec<_>>().join(" ")
}

/// (name, separator, value) of each field of `value` that `table` names, in order: `=` before a
/// plain value, nothing before a nested element's own fields in braces.
fn field_list(value: &[u8], table: &[(u32, F)]) -> Vec<(&'static str, &'static str, String)> {
    let mut parts = Vec::new();
    for t in TlvReader::new(value).filter_map(Result::ok) {
        let Some((_, f)) = table.iter().find(|(ty, _)| *ty == t.ty) else { continue };
        parts.push(match *f {
            F::Num(n) => (n, "=", read_nonneg(t.ty, t.value).unwrap_or(0).to_string()),
            F::Text(n) => (n, "=", String::from_utf8_lossy(t.value).into_owned()),
            F::Name(n) => (n, "=", NameView::from_value(t.value).map(|v| v.to_string()).unwrap_or_default()),
            F::Nested(n, inner) => (n, "", format!("{{{}}}", fields(t.value, inner))),
        });
    }
    parts
}

fn print_dataset(content: &[u8], table: &[(u32, F)], per_element: bool) {
    if per_element {
        for e in elements(content) {
            out!("  {}", fields(&e, table));
        }
    } else {
        for (name, _, value) in field_list(content, table) {
            out!("{name}: {value}");
        }
    }
}
