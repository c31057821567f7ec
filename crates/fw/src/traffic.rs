//! A traffic generator: a producer and a consumer end that speak NDN to any forwarder (nexthop,
//! NFD, NDNd) over a Unix, TCP or UDP face. The producer registers a prefix and answers every Interest
//! under it with a Data of the configured size (PIT token echoed); the consumer keeps a window
//! of Interests for distinct names outstanding and measures satisfied Interests per second and
//! each one's round-trip time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nexthop_wire::{Component, Data, Emit, Interest, Kind, Name};

use crate::client::{Client, ClientError};
use crate::face::FaceUri;
use crate::mgmt::params::ControlParameters;
use crate::packet::{classify, Network};
use crate::tlv::{put_packet, LpFields};

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

/// Runs a consumer for `duration`: `window` Interests for `prefix/<seq>` outstanding, each
/// Data checked to carry `payload_bytes` × [`PAYLOAD_BYTE`]. Slot `i` of the window carries
/// sequence numbers i, i + window, i + 2·window, …: an answer frees its slot, which sends the
/// next. An Interest with no answer after [`GIVE_UP`] counts as lost and
/// its slot moves on, so a lossy forwarder measures a lower rate rather than stalling.
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
    let window = window.max(1) as u64;
    let mut c = Client::connect(face)?;
    let mut slots: Vec<(u64, Instant)> = Vec::with_capacity(window as usize);
    let mut res = TrafficResult::default();
    let mut out = Vec::new();
    let interest = |c: &mut Client, seq: u64, out: &mut Vec<u8>| {
        let mut i = Interest::new(prefix.clone().with(Component::segment(seq)));
        i.nonce = Some(c.next_nonce());
        i.lifetime_ms = Some(GIVE_UP.as_millis() as u64 * 2);
        out.extend_from_slice(&i.to_bytes());
    };
    let start = Instant::now();
    for seq in 0..window {
        interest(&mut c, seq, &mut out);
        slots.push((seq, start));
    }
    let mut last_scan = start;
    while start.elapsed() < duration {
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
                    if let Some(Kind::Segment(s)) = name.last().map(|x| x.kind()) {
                        let slot = &mut slots[(s % window) as usize];
                        if slot.0 == s {
                            res.rtt_us.push(now.duration_since(slot.1).as_secs_f64() * 1e6);
                            if data {
                                res.satisfied += 1;
                            } else {
                                res.nacks += 1;
                            }
                            *slot = (s + window, Instant::now());
                            interest(&mut c, s + window, &mut out);
                        }
                    }
                }
            }
            next = c.recv_buffered();
        }
        if now.duration_since(last_scan) >= Duration::from_millis(100) {
            last_scan = now;
            for slot in slots.iter_mut().filter(|(_, t)| now.duration_since(*t) >= GIVE_UP) {
                res.lost += 1;
                *slot = (slot.0 + window, now);
                interest(&mut c, slot.0, &mut out);
            }
        }
        if !out.is_empty() {
            c.send(&out)?;
            out.clear();
        }
    }
    res.seconds = start.elapsed().as_secs_f64();
    res.rtt_us.sort_by(f64::total_cmp);
    Ok(res)
}
