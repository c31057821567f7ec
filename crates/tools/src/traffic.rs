//! A traffic generator: a producer and a consumer end that speak NDN to any forwarder (nexthop,
//! NFD, NDNd) over a Unix, TCP or UDP face. The producer registers a prefix and answers every Interest
//! under it with a Data of the configured size (PIT token echoed); the consumer keeps a window
//! of Interests for distinct names outstanding and measures satisfied Interests per second and
//! each one's round-trip time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nexthop_wire::{Component, Data, Emit, Interest, Kind, Name};

use crate::client::{Client, ClientError};
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::lp::encode::{put_packet, LpFields};
use nexthop_fw::lp::packet::{classify, Network};
use nexthop_fw::mgmt::params::ControlParameters;

/// Every content byte the producer sends.
pub const PAYLOAD_BYTE: u8 = 0x5a;

/// How long the consumer waits for an answer before it counts the Interest as lost.
pub const GIVE_UP: Duration = Duration::from_millis(250);

/// What the consumer measured.
#[derive(Debug, Clone, Default)]
pub struct TrafficResult {
    /// Interests answered with Data.
    pub satisfied: u64,
    /// Interests answered with a Nack.
    pub nacks: u64,
    /// Data whose content was not the producer's (`payload_bytes` × [`PAYLOAD_BYTE`]).
    pub mismatches: u64,
    /// Interests given up after [`GIVE_UP`] with no answer.
    pub lost: u64,
    /// Seconds measured.
    pub seconds: f64,
    /// Content bytes received.
    pub content_bytes: u64,
    /// Round-trip times, microseconds, ascending.
    pub rtt_us: Vec<f64>,
}

impl TrafficResult {
    /// The `p` quantile (0–1) of the round-trip times, microseconds; NaN with none.
    pub fn rtt_percentile_us(&self, p: f64) -> f64 {
        let last = self.rtt_us.len().saturating_sub(1);
        self.rtt_us.get((last as f64 * p).round() as usize).copied().unwrap_or(f64::NAN)
    }
}

/// Starts a producer for `prefix` on `face`; it answers until `stop` is set. Returns once the
/// prefix is registered. Over Unix and TCP the producer registers on its own face; over UDP
/// (where forwarders take no management commands) it asks the forwarder through `control`
/// (a Unix or TCP face) to create a UDP face toward the producer's socket and routes the
/// prefix there, as an operator would.
///
/// # Errors
/// Connection or registration failure.
pub fn start_producer(
    face: &FaceUri,
    control: &FaceUri,
    prefix: &Name,
    payload_bytes: usize,
    stop: Arc<AtomicBool>,
) -> Result<JoinHandle<()>, ClientError> {
    let mut c = Client::connect(face)?;
    let register = ControlParameters { name: Some(prefix.clone()), ..Default::default() };
    // Over UDP: the control connection and the face made for the producer, destroyed when it
    // stops (a made face is persistent, and its route would outlive the producer).
    let mut made: Option<(Client, u64)> = None;
    let r = match (face, c.local_udp()) {
        (FaceUri::Udp(_), Some(me)) => {
            let mut ctl = Client::connect(control)?;
            let uri = FaceUri::Udp(me).to_string();
            let created = ctl.command("faces", "create", &ControlParameters { uri: Some(uri), ..Default::default() })?;
            let face_id = created.body.and_then(|b| b.face_id).filter(|_| matches!(created.code, 200 | 409));
            let Some(face_id) = face_id else { return Err(ClientError::Bad(format!("faces/create: {} {}", created.code, created.text))) };
            let r = ctl.command("rib", "register", &ControlParameters { face_id: Some(face_id), ..register })?;
            made = Some((ctl, face_id));
            r
        }
        _ => c.command("rib", "register", &register)?,
    };
    if r.code != 200 {
        return Err(ClientError::Bad(format!("register: {} {}", r.code, r.text)));
    }
    let payload = vec![PAYLOAD_BYTE; payload_bytes];
    Ok(std::thread::spawn(move || {
        serve(&mut c, &payload, &stop);
        if let Some((mut ctl, face_id)) = made {
            let _ = ctl.command("faces", "destroy", &ControlParameters { face_id: Some(face_id), ..Default::default() });
        }
    }))
}

/// Answers every Interest on `c` with a Data of `payload` until `stop` is set or the
/// connection fails.
fn serve(c: &mut Client, payload: &[u8], stop: &AtomicBool) {
    let mut out = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let first = match c.recv(Duration::from_millis(50)) {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            Err(_) => return,
        };
        let mut next = Some(first);
        while let Some(p) = next.take() {
            if let Ok(Some(inc)) = classify(&p) {
                if let Network::Interest(i) = inc.packet {
                    let d = Data::new(i.name().to_name(), payload.to_vec()).to_bytes();
                    put_packet(&mut out, &LpFields { pit_token: inc.link.pit_token, ..Default::default() }, &d);
                }
            }
            next = c.recv_buffered();
        }
        if !out.is_empty() {
            if c.send(&out).is_err() {
                return;
            }
            out.clear();
        }
    }
}

/// Which segments a consumer asks for, in what order.
#[derive(Debug, Clone, Copy)]
pub enum Segments<'a> {
    /// 0, 1, 2, … (every name new: each Interest goes to the producer).
    Ascending,
    /// The list's segments in its order, round and round until the time is up.
    Cycle(&'a [u64]),
    /// The list's segments in its order, once each; the run ends when all are answered (or lost).
    Once(&'a [u64]),
}

impl Segments<'_> {
    /// The segment of the consumer's `seq`-th Interest, if there is one.
    fn at(&self, seq: u64) -> Option<u64> {
        match self {
            Segments::Ascending => Some(seq),
            Segments::Cycle(l) => (!l.is_empty()).then(|| l[(seq % l.len() as u64) as usize]),
            Segments::Once(l) => l.get(seq as usize).copied(),
        }
    }
}

/// A consumer's outstanding Interests: a slot per Interest in flight, each asking for the next
/// sequence number when its answer comes.
struct Window<'a> {
    segments: Segments<'a>,
    window: u64,
    /// The sequence number the next Interest carries.
    next: u64,
    /// Per slot: the segment asked for (`None`: retired) and when.
    slots: Vec<(Option<u64>, Instant)>,
    /// Which slot asked for a segment.
    slot_of: HashMap<u64, usize>,
}

impl<'a> Window<'a> {
    fn new(segments: Segments<'a>, window: usize) -> Self {
        let window = window.max(1) as u64;
        Window { segments, window, next: 0, slots: Vec::with_capacity(window as usize), slot_of: HashMap::new() }
    }

    /// Whether any slot still waits for an answer.
    fn busy(&self) -> bool {
        self.slots.iter().any(|s| s.0.is_some())
    }

    /// Slot `slot` asks for the next sequence number's segment (or retires when the list is
    /// done), giving up what it asked for before.
    fn ask_next(&mut self, c: &mut Client, prefix: &Name, slot: usize, out: &mut Vec<u8>) {
        let seg = self.segments.at(self.next);
        self.next += 1;
        if let Some(&(Some(before), _)) = self.slots.get(slot) {
            if self.slot_of.get(&before) == Some(&slot) {
                self.slot_of.remove(&before);
            }
        }
        if let Some(seg) = seg {
            self.slot_of.insert(seg, slot);
            let mut i = Interest::new(prefix.clone().with(Component::segment(seg)));
            i.nonce = Some(c.next_nonce());
            i.lifetime_ms = Some(GIVE_UP.as_millis() as u64 * 2);
            out.extend_from_slice(&i.to_bytes());
        }
        let entry = (seg, Instant::now());
        match self.slots.get_mut(slot) {
            Some(s) => *s = entry,
            None => self.slots.push(entry),
        }
    }

    /// The slot that waits for segment `seg`, with when it asked.
    fn answered(&self, seg: u64) -> Option<(usize, Instant)> {
        let slot = *self.slot_of.get(&seg)?;
        let (asked, sent) = *self.slots.get(slot)?;
        (asked == Some(seg)).then_some((slot, sent))
    }
}

/// Runs a consumer for `duration`: `window` Interests for `prefix/<seq>` outstanding, each
/// Data checked to carry `payload_bytes` × [`PAYLOAD_BYTE`]. An answer frees its slot, which
/// sends the next sequence number not yet asked for, so Interests leave in ascending order
/// whatever order the answers come in (as a pipelined segment fetcher sends them). An Interest
/// with no answer after [`GIVE_UP`] counts as lost and its slot moves on, so a lossy forwarder
/// measures a lower rate rather than stalling.
///
/// # Errors
/// Connection or socket failure.
pub fn run_consumer(
    face: &FaceUri,
    prefix: &Name,
    window: usize,
    payload_bytes: usize,
    duration: Duration,
) -> Result<TrafficResult, ClientError> {
    run_consumer_over(face, prefix, window, payload_bytes, duration, Segments::Ascending)
}

/// [`run_consumer`] over the segments `segments` names: the consumer's i-th Interest asks for
/// `prefix/<segments.at(i)>` (a list must not repeat a segment within any `window` in a row).
///
/// # Errors
/// Connection or socket failure.
pub fn run_consumer_over(
    face: &FaceUri,
    prefix: &Name,
    window: usize,
    payload_bytes: usize,
    duration: Duration,
    segments: Segments<'_>,
) -> Result<TrafficResult, ClientError> {
    let mut c = Client::connect(face)?;
    let mut w = Window::new(segments, window);
    let mut res = TrafficResult::default();
    let mut out = Vec::new();
    let start = Instant::now();
    for slot in 0..w.window {
        w.ask_next(&mut c, prefix, slot as usize, &mut out);
    }
    let mut last_scan = start;
    while start.elapsed() < duration && w.busy() {
        if !out.is_empty() {
            c.send(&out)?;
            out.clear();
        }
        let left = duration.saturating_sub(start.elapsed());
        let mut next = c.recv(Duration::from_millis(100).min(left))?;
        let now = Instant::now();
        while let Some(p) = next.take() {
            if let Ok(Some(inc)) = classify(&p) {
                let answer = match inc.packet {
                    Network::Data(d) => {
                        let content = d.content().unwrap_or_default();
                        res.content_bytes += content.len() as u64;
                        if content.len() != payload_bytes || content.iter().any(|&b| b != PAYLOAD_BYTE) {
                            res.mismatches += 1;
                        }
                        Some((d.name(), true))
                    }
                    Network::Nack(_, i) => Some((i.name(), false)),
                    Network::Interest(_) => None,
                };
                if let Some((name, data)) = answer {
                    if let Some(Kind::Segment(seg)) = name.last().map(|x| x.kind()) {
                        if let Some((slot, sent)) = w.answered(seg) {
                            res.rtt_us.push(now.duration_since(sent).as_secs_f64() * 1e6);
                            if data {
                                res.satisfied += 1;
                            } else {
                                res.nacks += 1;
                            }
                            w.ask_next(&mut c, prefix, slot, &mut out);
                        }
                    }
                }
            }
            next = c.recv_buffered();
        }
        if now.duration_since(last_scan) >= Duration::from_millis(100) {
            last_scan = now;
            for slot in 0..w.slots.len() {
                let (seg, sent) = w.slots[slot];
                if seg.is_some() && now.duration_since(sent) >= GIVE_UP {
                    res.lost += 1;
                    w.ask_next(&mut c, prefix, slot, &mut out);
                }
            }
        }
    }
    res.seconds = start.elapsed().as_secs_f64();
    res.rtt_us.sort_by(f64::total_cmp);
    Ok(res)
}
