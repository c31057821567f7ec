//! A traffic generator: a producer and a consumer end that speak NDN to any forwarder (nexthop,
//! NFD) over a Unix or TCP face. The producer registers a prefix and answers every Interest
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

/// What the consumer measured.
#[derive(Debug, Clone, Default)]
pub struct TrafficResult {
    /// Interests answered with Data.
    pub satisfied: u64,
    /// Interests answered with a Nack.
    pub nacks: u64,
    /// Seconds measured.
    pub seconds: f64,
    /// Content bytes received.
    pub content_bytes: u64,
    /// Round-trip times, microseconds.
    pub rtt_us: Vec<f64>,
}

/// Starts a producer for `prefix` on `face`; it answers until `stop` is set. Returns once the
/// prefix is registered.
///
/// # Errors
/// Connection or registration failure.
pub fn start_producer(face: &FaceUri, prefix: &Name, payload_bytes: usize, stop: Arc<AtomicBool>) -> Result<JoinHandle<()>, ClientError> {
    let mut c = Client::connect(face)?;
    let r = c.command("rib", "register", &ControlParameters { name: Some(prefix.clone()), ..Default::default() })?;
    if r.code != 200 {
        return Err(ClientError::Bad(format!("register: {} {}", r.code, r.text)));
    }
    let payload = vec![0x5a; payload_bytes];
    Ok(std::thread::spawn(move || {
        let mut out = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let Ok(Some(first)) = c.recv(Duration::from_millis(50)) else { continue };
            let mut next = Some(first);
            while let Some(p) = next.take() {
                if let Ok(Some(inc)) = classify(&p) {
                    if let Network::Interest(i) = inc.packet {
                        let d = Data::new(i.name().to_name(), payload.clone()).to_bytes();
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
    }))
}

/// Runs a consumer for `duration`: `window` Interests for `prefix/<seq>` outstanding.
///
/// # Errors
/// Connection failure, or no answer for a second.
pub fn run_consumer(face: &FaceUri, prefix: &Name, window: usize, duration: Duration) -> Result<TrafficResult, ClientError> {
    let mut c = Client::connect(face)?;
    let mut sent_at: Vec<Option<Instant>> = vec![None; window.max(1)];
    let mut seq = 0u64;
    let mut res = TrafficResult::default();
    let mut out = Vec::new();
    let interest = |c: &mut Client, seq: u64, out: &mut Vec<u8>| {
        let mut i = Interest::new(prefix.clone().with(Component::segment(seq)));
        i.nonce = Some(c.next_nonce());
        i.lifetime_ms = Some(2000);
        out.extend_from_slice(&i.to_bytes());
    };
    let start = Instant::now();
    for _ in 0..window {
        interest(&mut c, seq, &mut out);
        sent_at[(seq % window as u64) as usize] = Some(Instant::now());
        seq += 1;
    }
    c.send(&out)?;
    out.clear();
    while start.elapsed() < duration {
        let Some(first) = c.recv(Duration::from_secs(1))? else { return Err(ClientError::Timeout(format!("{prefix}/…"))) };
        let mut next = Some(first);
        let now = Instant::now();
        while let Some(p) = next.take() {
            if let Ok(Some(inc)) = classify(&p) {
                let (name, data) = match inc.packet {
                    Network::Data(d) => {
                        res.content_bytes += d.content().map_or(0, |x| x.len()) as u64;
                        (d.name(), true)
                    }
                    Network::Nack(_, i) => (i.name(), false),
                    Network::Interest(_) => {
                        next = c.recv_buffered();
                        continue;
                    }
                };
                if let Some(Kind::Segment(s)) = name.last().map(|x| x.kind()) {
                    if let Some(t) = sent_at[(s % window as u64) as usize].take() {
                        res.rtt_us.push(now.duration_since(t).as_secs_f64() * 1e6);
                        if data {
                            res.satisfied += 1;
                        } else {
                            res.nacks += 1;
                        }
                        interest(&mut c, seq, &mut out);
                        sent_at[(seq % window as u64) as usize] = Some(Instant::now());
                        seq += 1;
                    }
                }
            }
            next = c.recv_buffered();
        }
        if !out.is_empty() {
            c.send(&out)?;
            out.clear();
        }
    }
    res.seconds = start.elapsed().as_secs_f64();
    Ok(res)
}
