//! The `forwarder` experiment's series `generator`: satisfied Interests/s through one nexthop
//! forwarding thread whose faces are Ethernet faces on AF_XDP ports, against the same
//! forwarder's UDP faces over the same interfaces, with NDN traffic made and answered by one
//! thread on the other core.
//!
//! # Overview
//! Two network namespaces made for the run, joined by two veth pairs: the generator's `nc0`
//! (consumer side) – the forwarder's `nf0`, and the forwarder's `nf1` – the generator's `np0`
//! (producer side); each end also has an IPv4 address for the UDP rows. The forwarder
//! (`nexthop_fw::runtime::Runtime`, one thread, in this process) runs pinned to core 1 in its
//! namespace, with Ethernet faces on both of its ends (`faces.ether_io = auto`: AF_XDP in native
//! mode here) and a UDP listener; through management it gets a unicast Ethernet face to `np0` for
//! `/gen-ether` and a UDP face to `np0`'s address for `/gen-udp`. Each end's receive work in the
//! kernel is steered to its side's core (RPS; XDP on veth runs in the sender's softirq).
//!
//! The generator thread, pinned to core 0, is both consumer and producer, over frames of its own
//! AF_XDP ports (`ether`) or over two UDP sockets with `recvmmsg`/`sendmmsg` (`udp`):
//! - the consumer keeps [`WINDOW`] Interests outstanding for `/gen-<face>/<seq>` (a template
//!   with the sequence number and nonce written in), sending them to the forwarder's end;
//! - the producer answers each Interest the forwarder passes on with Data of [`PAYLOAD`] bytes
//!   (every byte the sequence number's low byte, signed DigestSha256), echoing its PIT token;
//! - the consumer checks each Data's name and content; an Interest unanswered after 1 s is lost
//!   and its window slot moves on.
//!
//! A row's rate is the Data received intact in the measured window. Beside it: the forwarder's
//! core's busy share over the window and its nanoseconds per satisfied Interest (where its time
//! goes), and the generator's core's, which tells whether the generator was the limit.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::Context;
use nexthop_fw::conf::config::Config;
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::lp::encode::put_tlv;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_fw::runtime::Runtime;
use nexthop_fw::sys::udp_batch::{set_socket_buffers, RecvBatch, SendBatch, SOCKET_BUFFER_BYTES};
use nexthop_io::netns::{veth, Netns};
use nexthop_io::{Backend, PortConfig, PortId, PortSet};
use nexthop_tools::client::Client;
use nexthop_wire::types::{CONTENT, DATA, FRAGMENT, LP_PACKET, NAME, PIT_TOKEN, SIGNATURE_INFO, SIGNATURE_TYPE, SIGNATURE_VALUE};
use nexthop_wire::{Component, DataView, Emit, Interest, InterestView, LpPacketView, Name};
use sha2::{Digest, Sha256};

use super::ports::{mac_text, sh};
use crate::frames::traffic::CoreTicks;
use crate::harness::median;
use crate::machine::pin_current_thread;
use crate::Row;

/// Interests the consumer keeps outstanding.
pub const WINDOW: usize = 1024;
/// Content bytes per Data.
pub const PAYLOAD: usize = 100;
/// Outstanding-Interest slots (a power of two above the window).
const SLOTS: usize = 4096;
/// An Interest unanswered this long is lost.
const TIMEOUT: Duration = Duration::from_secs(1);
/// Interests sent per turn at most.
const SEND_BATCH: usize = 64;
/// NDN's EtherType.
const NDN_ETHERTYPE: u16 = 0x8624;
/// The generator's and the forwarder's cores.
const GEN_CORE: usize = 0;
const FWD_CORE: usize = 1;
/// The forwarder's UDP port.
const UDP_PORT: u16 = 6363;

/// The faces measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Face {
    Ether,
    Udp,
}

impl Face {
    fn name(self) -> &'static str {
        match self {
            Face::Ether => "ether",
            Face::Udp => "udp",
        }
    }

    fn prefix(self) -> String {
        format!("/gen-{}", self.name())
    }
}

/// Addresses of the four ends: generator consumer, forwarder (consumer side), forwarder
/// (producer side), generator producer.
const NC0: Ipv4Addr = Ipv4Addr::new(10, 71, 0, 1);
const NF0: Ipv4Addr = Ipv4Addr::new(10, 71, 0, 2);
const NF1: Ipv4Addr = Ipv4Addr::new(10, 71, 1, 2);
const NP0: Ipv4Addr = Ipv4Addr::new(10, 71, 1, 1);

/// The two namespaces and their links.
struct Topology {
    generator: Netns,
    forwarder: Netns,
}

impl Topology {
    fn new() -> anyhow::Result<Topology> {
        let tag = std::process::id() % 100_000;
        let ns = |role: &str| Netns::new(&format!("nxn{role}{tag}")).context("making a network namespace (needs root)");
        let t = Topology { generator: ns("g")?, forwarder: ns("f")? };
        veth(&t.generator, "nc0", &t.forwarder, "nf0", 1)?;
        veth(&t.forwarder, "nf1", &t.generator, "np0", 1)?;
        for (ns, dev, addr, core) in [
            (&t.generator, "nc0", NC0, GEN_CORE),
            (&t.forwarder, "nf0", NF0, FWD_CORE),
            (&t.forwarder, "nf1", NF1, FWD_CORE),
            (&t.generator, "np0", NP0, GEN_CORE),
        ] {
            ns.ip(&["addr", "add", &format!("{addr}/24"), "dev", dev])?;
            sh(ns, &format!("echo {:x} > /sys/class/net/{dev}/queues/rx-0/rps_cpus", 1u64 << core))?;
        }
        Ok(t)
    }
}

/// The forwarder, running in its namespace on its core.
struct RunningForwarder {
    unix: FaceUri,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl RunningForwarder {
    fn start(t: &Topology, dir: &std::path::Path) -> anyhow::Result<RunningForwarder> {
        let mut cfg = Config::default();
        cfg.faces.unix = dir.join("generator-fw.sock").to_string_lossy().into_owned();
        cfg.faces.tcp = String::new();
        cfg.faces.websocket = String::new();
        cfg.faces.udp = format!("0.0.0.0:{UDP_PORT}");
        cfg.faces.ether_interfaces = vec!["nf0".into(), "nf1".into()];
        cfg.faces.ether_listen = true;
        let unix = FaceUri::Unix(cfg.faces.unix.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready) = mpsc::channel();
        let (name, halt) = (t.forwarder.name().to_string(), stop.clone());
        let thread = std::thread::spawn(move || -> anyhow::Result<()> {
            pin_current_thread(FWD_CORE);
            let made = nexthop_io::netns::enter(&name).map_err(anyhow::Error::from).and_then(|()| Ok(Runtime::new(cfg)?));
            match made {
                Ok(mut rt) => {
                    let _ = ready_tx.send(Ok(()));
                    rt.run(&halt)?;
                    Ok(())
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("{e:#}")));
                    Err(e)
                }
            }
        });
        ready.recv().context("the forwarder thread is gone")?.map_err(|e| anyhow::anyhow!("starting the forwarder: {e}"))?;
        Ok(RunningForwarder { unix, stop, thread: Some(thread) })
    }

    /// A face made through management and `prefix` routed to it.
    fn route(&self, face: &ControlParameters, prefix: &str) -> anyhow::Result<()> {
        let mut c = Client::connect(&self.unix)?;
        let r = c.command("faces", "create", face)?;
        anyhow::ensure!(r.code == 200, "faces/create {:?}: {} {}", face.uri, r.code, r.text);
        let id = r.body.and_then(|b| b.face_id).context("faces/create answered without a FaceId")?;
        let route = ControlParameters { name: Some(Name::from_uri(prefix)?), face_id: Some(id), ..Default::default() };
        let r = c.command("rib", "register", &route)?;
        anyhow::ensure!(r.code == 200, "rib/register {prefix}: {} {}", r.code, r.text);
        Ok(())
    }

    /// The backend of the forwarder's Ethernet ports, as its log would say: read from the
    /// interfaces (an XDP program attached in native mode shows as `xdp`).
    fn ether_backend(t: &Topology) -> String {
        let out = t.forwarder.exec(&["ip", "-d", "link", "show", "nf0"]).map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        match out {
            Ok(text) if text.contains("prog/xdp ") && text.contains(" xdp ") => "af-xdp (native)".into(),
            Ok(text) if text.contains("prog/xdp ") => "af-xdp (generic)".into(),
            Ok(_) => "af-packet".into(),
            Err(_) => "unknown".into(),
        }
    }
}

impl Drop for RunningForwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            match t.join() {
                Ok(Err(e)) => eprintln!("  the generator's forwarder: {e:#}"),
                Err(_) => eprintln!("  the generator's forwarder panicked"),
                Ok(Ok(())) => {}
            }
        }
    }
}

/// Which side of the generator a packet goes out of or came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Consumer,
    Producer,
}

/// Packets received, copied out: bytes and where each lies.
#[derive(Default)]
struct Received {
    bytes: Vec<u8>,
    at: Vec<std::ops::Range<usize>>,
}

impl Received {
    fn push(&mut self, p: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(p);
        self.at.push(start..self.bytes.len());
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.at.clear();
    }
}

/// How the generator's packets travel.
enum Link {
    /// Its AF_XDP ports on `nc0` and `np0`; the forwarder's ends' addresses.
    Ether { set: PortSet, consumer: PortId, producer: PortId, own: [[u8; 6]; 2], to: [[u8; 6]; 2], frames: Vec<nexthop_io::Frame> },
    /// Two UDP sockets.
    Udp { sockets: [UdpSocket; 2], out: [SendBatch; 2], batch: Box<RecvBatch> },
}

impl Link {
    fn ether(generator: &str, forwarder_macs: [[u8; 6]; 2]) -> anyhow::Result<Link> {
        nexthop_io::netns::enter(generator)?;
        let mut set = PortSet::new(16384)?;
        let port = |dev: &str| PortConfig {
            backend: Some(Backend::AfXdp),
            ethertypes: vec![NDN_ETHERTYPE],
            busy_poll: true,
            ..PortConfig::new(dev)
        };
        let consumer = set.open(port("nc0"))?;
        let producer = set.open(port("np0"))?;
        let own = [set.info(consumer).interface.mac, set.info(producer).interface.mac];
        Ok(Link::Ether { set, consumer, producer, own, to: forwarder_macs, frames: Vec::with_capacity(64) })
    }

    fn udp(generator: &str) -> anyhow::Result<Link> {
        nexthop_io::netns::enter(generator)?;
        let open = |addr: SocketAddrV4| -> anyhow::Result<UdpSocket> {
            let s = UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
            s.set_nonblocking(true)?;
            set_socket_buffers(s.as_raw_fd(), SOCKET_BUFFER_BYTES);
            Ok(s)
        };
        let sockets = [open(SocketAddrV4::new(NC0, 0))?, open(SocketAddrV4::new(NP0, UDP_PORT))?];
        Ok(Link::Udp { sockets, out: [SendBatch::default(), SendBatch::default()], batch: Box::default() })
    }

    /// Receives a batch on `side` into `out` (emptied first).
    fn receive(&mut self, side: Side, out: &mut Received) {
        out.clear();
        match self {
            Link::Ether { set, consumer, producer, frames, .. } => {
                let port = if side == Side::Consumer { *consumer } else { *producer };
                set.receive(port, frames, 64);
                for f in frames.drain(..) {
                    if let Some(packet) = set.pool_ref().bytes(&f).get(14..) {
                        out.push(packet);
                    }
                    set.pool().free(f);
                }
            }
            Link::Udp { sockets, batch, .. } => {
                if batch.recv(sockets[side as usize].as_raw_fd()).is_ok() {
                    for i in 0..batch.len() {
                        out.push(batch.get(i).0);
                    }
                }
            }
        }
    }

    /// Queues `packet` out of `side`, to the forwarder.
    fn send(&mut self, side: Side, packet: &[u8]) {
        match self {
            Link::Ether { set, consumer, producer, own, to, .. } => {
                let (port, i) = if side == Side::Consumer { (*consumer, 0) } else { (*producer, 1) };
                let pool = set.pool();
                let Some(mut f) = pool.alloc() else { return };
                if pool.set_len(&mut f, 14 + packet.len()).is_err() {
                    pool.free(f);
                    return;
                }
                let d = pool.bytes_mut(&mut f);
                d[..6].copy_from_slice(&to[i]);
                d[6..12].copy_from_slice(&own[i]);
                d[12..14].copy_from_slice(&NDN_ETHERTYPE.to_be_bytes());
                d[14..].copy_from_slice(packet);
                let _ = set.transmit(port, f); // a drop shows as a lost Interest
            }
            Link::Udp { out, .. } => {
                let to = if side == Side::Consumer { SocketAddrV4::new(NF0, UDP_PORT) } else { SocketAddrV4::new(NF1, UDP_PORT) };
                out[side as usize].push(packet, Some(SocketAddr::V4(to)));
            }
        }
    }

    fn flush(&mut self) {
        match self {
            Link::Ether { set, .. } => set.flush(),
            Link::Udp { sockets, out, .. } => {
                for (s, o) in sockets.iter().zip(out.iter_mut()) {
                    if !o.is_empty() {
                        o.flush(s.as_raw_fd());
                    }
                }
            }
        }
    }
}

/// The consumer's Interest: its wire form with the sequence number and nonce at known places.
struct InterestTemplate {
    wire: Vec<u8>,
    seq_at: usize,
    nonce_at: usize,
}

impl InterestTemplate {
    fn new(prefix: &str) -> anyhow::Result<InterestTemplate> {
        const SEQ_MARK: [u8; 8] = [0xa5, 0x5a, 0xa5, 0x5a, 0xa5, 0x5a, 0xa5, 0x5a];
        const NONCE_MARK: [u8; 4] = [0xc3, 0x3c, 0x96, 0x69];
        let mut i = Interest::new(Name::from_uri(prefix)?.with(Component::generic(&SEQ_MARK[..])));
        i.nonce = Some(NONCE_MARK);
        i.lifetime_ms = Some(TIMEOUT.as_millis() as u64);
        let wire = i.to_bytes();
        let find = |pattern: &[u8]| wire.windows(pattern.len()).position(|w| w == pattern).context("a field of the Interest template");
        let (seq_at, nonce_at) = (find(&SEQ_MARK)?, find(&NONCE_MARK)?);
        Ok(InterestTemplate { wire, seq_at, nonce_at })
    }

    fn write(&mut self, seq: u64) -> &[u8] {
        self.wire[self.seq_at..self.seq_at + 8].copy_from_slice(&seq.to_be_bytes());
        let nonce = (seq as u32).wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995;
        self.wire[self.nonce_at..self.nonce_at + 4].copy_from_slice(&nonce.to_be_bytes());
        &self.wire
    }
}

/// The producer's answer to `packet` (an Interest, bare or in an LpPacket with a PIT token),
/// written into `out`: Data of [`PAYLOAD`] bytes of the sequence number's low byte, signed
/// DigestSha256, with the token echoed. `false`: not an Interest of the generator's.
fn answer(packet: &[u8], out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> bool {
    let (token, interest) = match LpPacketView::decode(packet) {
        Ok(lp) => (lp.pit_token, lp.fragment),
        Err(_) => (None, Some(packet)),
    };
    let Some(Ok(interest)) = interest.map(InterestView::decode) else { return false };
    let name = interest.name();
    let Some(seq) = name.last().and_then(|c| <[u8; 8]>::try_from(c.value()).ok()) else { return false };
    scratch.clear();
    put_tlv(scratch, NAME, name.value());
    put_tlv(scratch, CONTENT, &[seq[7]; PAYLOAD]);
    put_tlv(scratch, SIGNATURE_INFO, &[SIGNATURE_TYPE as u8, 1, 0]);
    let digest = Sha256::digest(&scratch[..]);
    put_tlv(scratch, SIGNATURE_VALUE, &digest);
    out.clear();
    match token {
        Some(token) => {
            let mut data = Vec::with_capacity(scratch.len() + 4);
            put_tlv(&mut data, DATA, scratch);
            let mut fields = Vec::with_capacity(data.len() + token.len() + 8);
            put_tlv(&mut fields, PIT_TOKEN, token);
            put_tlv(&mut fields, FRAGMENT, &data);
            put_tlv(out, LP_PACKET, &fields);
        }
        None => put_tlv(out, DATA, scratch),
    }
    true
}

/// The sequence number of a Data the consumer received, if it is intact (its content the
/// producer's).
fn satisfied(packet: &[u8]) -> Option<u64> {
    let data = match LpPacketView::decode(packet) {
        Ok(lp) => lp.fragment?,
        Err(_) => packet,
    };
    let d = DataView::decode(data).ok()?;
    let seq = u64::from_be_bytes(d.name().last()?.value().try_into().ok()?);
    let content = d.content()?;
    (content.len() == PAYLOAD && content.iter().all(|&b| b == seq as u8)).then_some(seq)
}

/// What one run counted.
#[derive(Clone, Debug, Default)]
struct Outcome {
    satisfied_in_window: u64,
    window_s: f64,
    sent: u64,
    lost: u64,
    corrupted: u64,
    rtt_us: Vec<f64>,
    fwd_core_busy: Option<f64>,
    /// The user-space share of the forwarder core's busy time (the rest: the kernel's).
    fwd_core_user: Option<f64>,
    gen_core_busy: Option<f64>,
}

/// The generator's loop over `link` for `prefix` (see the module overview).
fn generate(link: &mut Link, prefix: &str, warmup: Duration, window: Duration) -> anyhow::Result<Outcome> {
    let mut template = InterestTemplate::new(prefix)?;
    let mut sent_at: Vec<Option<(u64, Instant)>> = vec![None; SLOTS];
    let (mut next, mut oldest, mut outstanding) = (0u64, 0u64, 0usize);
    let (mut received, mut answer_buf, mut scratch) = (Received::default(), Vec::new(), Vec::new());
    let mut out = Outcome::default();
    let start = Instant::now();
    let (window_start, window_end) = (start + warmup, start + warmup + window);
    let (mut ticks_fwd, mut ticks_gen) = ((None, None), (None, None));
    let mut in_window = false;
    loop {
        let now = Instant::now();
        if now >= window_end {
            break;
        }
        if !in_window && now >= window_start {
            in_window = true;
            ticks_fwd.0 = CoreTicks::of(FWD_CORE);
            ticks_gen.0 = CoreTicks::of(GEN_CORE);
        }
        link.receive(Side::Producer, &mut received);
        for at in received.at.iter().cloned() {
            if answer(&received.bytes[at], &mut answer_buf, &mut scratch) {
                link.send(Side::Producer, &answer_buf);
            }
        }
        link.receive(Side::Consumer, &mut received);
        for at in received.at.iter().cloned() {
            let (received_seq, slot) = match satisfied(&received.bytes[at]) {
                Some(seq) => (seq, &mut sent_at[seq as usize % SLOTS]),
                None => {
                    out.corrupted += 1;
                    continue;
                }
            };
            let seq = received_seq;
            if let Some((_, at)) = slot.take_if(|(s, _)| *s == seq) {
                outstanding -= 1;
                if in_window {
                    out.satisfied_in_window += 1;
                    if out.satisfied_in_window % 64 == 0 {
                        out.rtt_us.push(now.duration_since(at).as_secs_f64() * 1e6);
                    }
                }
            }
        }
        while oldest < next && sent_at[oldest as usize % SLOTS].is_none_or(|(_, at)| now.duration_since(at) > TIMEOUT) {
            if sent_at[oldest as usize % SLOTS].take().is_some() {
                outstanding -= 1;
                out.lost += 1;
            }
            oldest += 1;
        }
        let mut n = 0;
        while outstanding < WINDOW && next - oldest < SLOTS as u64 && n < SEND_BATCH {
            link.send(Side::Consumer, template.write(next));
            sent_at[next as usize % SLOTS] = Some((next, now));
            next += 1;
            outstanding += 1;
            n += 1;
        }
        out.sent += n as u64;
        link.flush();
    }
    ticks_fwd.1 = CoreTicks::of(FWD_CORE);
    ticks_gen.1 = CoreTicks::of(GEN_CORE);
    out.window_s = window.as_secs_f64();
    let fwd = CoreTicks::shares(ticks_fwd.0, ticks_fwd.1);
    out.fwd_core_busy = fwd.map(|(busy, _)| busy);
    out.fwd_core_user = fwd.map(|(_, user)| user);
    out.gen_core_busy = CoreTicks::shares(ticks_gen.0, ticks_gen.1).map(|(busy, _)| busy);
    Ok(out)
}

/// The generator's thread: opens each link in its namespace on its core and runs it.
fn run_generator(
    generator: String,
    forwarder_macs: [[u8; 6]; 2],
    face: Face,
    warmup: Duration,
    window: Duration,
) -> anyhow::Result<Outcome> {
    std::thread::spawn(move || -> anyhow::Result<Outcome> {
        pin_current_thread(GEN_CORE);
        let mut link = match face {
            Face::Ether => Link::ether(&generator, forwarder_macs)?,
            Face::Udp => Link::udp(&generator)?,
        };
        generate(&mut link, &face.prefix(), warmup, window)
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the generator thread panicked"))?
}

fn mac_of(ns: &Netns, dev: &str) -> anyhow::Result<[u8; 6]> {
    let out = ns.exec(&["cat", &format!("/sys/class/net/{dev}/address")])?;
    let text = String::from_utf8(out.stdout)?;
    let v: Vec<u8> = text.trim().split(':').map(|h| u8::from_str_radix(h, 16)).collect::<Result<_, _>>()?;
    v.try_into().map_err(|_| anyhow::anyhow!("{dev}'s address: {text:?}"))
}

/// The series: for each face, `repetitions` runs (faces taking turns), the median rate.
/// Rows: `transport` = `generator`, `face`, `backend`, `kinterests_per_s`, `p50_us`, `lost`,
/// `corrupted`, `fwd_core_busy`, `fwd_ns_per_interest`, `fwd_user_share` (of the forwarding
/// core's busy time, the forwarder's own code; the rest is the kernel's), `gen_core_busy`.
pub fn measure(dir: &std::path::Path, quick: bool) -> anyhow::Result<Vec<Row>> {
    let (warmup, window, repetitions) =
        if quick { (Duration::from_millis(500), Duration::from_secs(1), 1) } else { (Duration::from_secs(2), Duration::from_secs(5), 3) };
    let t = Topology::new()?;
    let fw = RunningForwarder::start(&t, dir)?;
    let np0 = mac_of(&t.generator, "np0")?;
    fw.route(
        &ControlParameters { uri: Some(format!("ether://[{}]", mac_text(np0))), local_uri: Some("dev://nf1".into()), ..Default::default() },
        &Face::Ether.prefix(),
    )?;
    fw.route(&ControlParameters { uri: Some(format!("udp4://{NP0}:{UDP_PORT}")), ..Default::default() }, &Face::Udp.prefix())?;
    let backend = RunningForwarder::ether_backend(&t);
    let forwarder_macs = [mac_of(&t.forwarder, "nf0")?, mac_of(&t.forwarder, "nf1")?];
    let mut runs: Vec<(Face, Outcome)> = Vec::new();
    for r in 0..repetitions {
        for face in [Face::Ether, Face::Udp] {
            let o = run_generator(t.generator.name().to_string(), forwarder_macs, face, warmup, window)?;
            eprintln!(
                "  generator {} #{r}: {:.0}k satisfied/s, forwarder core {:.0}% busy ({:.0}% user), generator core {:.0}%, lost {}",
                face.name(),
                o.satisfied_in_window as f64 / o.window_s / 1e3,
                100.0 * o.fwd_core_busy.unwrap_or(0.0),
                100.0 * o.fwd_core_user.unwrap_or(0.0),
                100.0 * o.gen_core_busy.unwrap_or(0.0),
                o.lost
            );
            runs.push((face, o));
        }
    }
    drop(fw);
    let mut rows = Vec::new();
    for face in [Face::Ether, Face::Udp] {
        let of: Vec<&Outcome> = runs.iter().filter(|(f, _)| *f == face).map(|(_, o)| o).collect();
        let rate = |o: &Outcome| o.satisfied_in_window as f64 / o.window_s;
        let rates: Vec<f64> = of.iter().map(|o| rate(o)).collect();
        let ns: Vec<f64> = of.iter().filter_map(|o| o.fwd_core_busy.map(|b| b * 1e9 / rate(o).max(1.0))).collect();
        let rtts: Vec<f64> = of.iter().flat_map(|o| o.rtt_us.iter().copied()).collect();
        let busy = |get: fn(&Outcome) -> Option<f64>| median(&of.iter().filter_map(|o| get(o)).collect::<Vec<_>>());
        rows.push(
            Row::new("nexthop")
                .with("transport", "generator")
                .with("face", face.name())
                .with("backend", if face == Face::Ether { backend.clone() } else { "kernel udp".into() })
                .with("threads", 1u64)
                .with("payload_bytes", PAYLOAD as u64)
                .with("window", WINDOW as u64)
                .with("kinterests_per_s", median(&rates) / 1e3)
                .with("p50_us", median(&rtts))
                .with("lost", of.iter().map(|o| o.lost).sum::<u64>())
                .with("corrupted", of.iter().map(|o| o.corrupted).sum::<u64>())
                .with("fwd_core_busy", busy(|o| o.fwd_core_busy))
                .with("fwd_ns_per_interest", median(&ns))
                .with("fwd_user_share", busy(|o| o.fwd_core_user))
                .with("gen_core_busy", busy(|o| o.gen_core_busy)),
        );
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The producer answers the template's Interest (bare, and in an LpPacket with a PIT token)
    /// with Data the consumer takes as intact; anything else is no answer.
    #[test]
    fn an_interest_of_the_template_is_answered_with_data_the_consumer_checks() {
        let mut t = InterestTemplate::new("/gen-x").unwrap();
        let interest = t.write(0x0102_0304_0506_0708).to_vec();
        assert_eq!(InterestView::decode(&interest).unwrap().name().to_name().to_string(), "/gen-x/%01%02%03%04%05%06%07%08");
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        assert!(answer(&interest, &mut out, &mut scratch));
        assert_eq!(satisfied(&out), Some(0x0102_0304_0506_0708));
        let d = DataView::decode(&out).unwrap();
        assert_eq!(Sha256::digest(d.signed_portion()).as_slice(), d.signature_value(), "a true DigestSha256");

        let mut fields = Vec::new();
        put_tlv(&mut fields, PIT_TOKEN, &[9, 9]);
        put_tlv(&mut fields, FRAGMENT, &interest);
        let mut lp = Vec::new();
        put_tlv(&mut lp, LP_PACKET, &fields);
        assert!(answer(&lp, &mut out, &mut scratch));
        assert_eq!(LpPacketView::decode(&out).unwrap().pit_token, Some(&[9u8, 9][..]));
        assert_eq!(satisfied(&out), Some(0x0102_0304_0506_0708));

        assert!(!answer(&[0x05, 0x00], &mut out, &mut scratch));
        let mut bad = Vec::new();
        answer(&interest, &mut bad, &mut scratch);
        let last = bad.len() - 40;
        bad[last] ^= 1;
        assert_eq!(satisfied(&bad), None, "a changed content byte");
    }
}
