//! Experiment `wire`: decode and encode rates of Interests and Data of realistic sizes.
//!
//! Workloads: Interests with names of 4–10 components (Nonce, lifetime, HopLimit, selectors half
//! the time), and DigestSha256-signed Data with 100 B, 1 KB and 8 KB of content.
//!
//! Contenders, on the same packets:
//! - decode: `nexthop-view` (checked zero-copy view: what the forwarder uses), `nexthop-owned`
//!   (view + owned copy), and `ndn-protocol` (the ndn-protocol crate, a Rust NDN packet library).
//! - encode: `nexthop-emit` (into a reused buffer), `nexthop-to-bytes` (allocating), and
//!   `ndn-protocol` (`TlvEncode::encode`, allocating).
//!
//! Correctness: each decode answers (name components, Nonce or Content length), each encode
//! answers (length, last 8 octets); both are compared with the generated packets.

use bytes::Bytes;
use nexthop_wire::{Data, DataView, Emit, Interest, InterestView};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::harness::{compare, Contender, Outcome};
use crate::plot::{Chart, Plot};
use crate::workload::packets;
use crate::{progress, Report, Row, RunConfig};

/// The `wire` experiment.
#[derive(Debug)]
pub struct Wire;

/// What a decoder must get right about a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decoded {
    components: u32,
    key: u32,
}

/// What an encoder must get right: length and the last 8 octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Encoded {
    len: u32,
    tail: [u8; 8],
}

fn encoded(bytes: &[u8]) -> Encoded {
    let mut tail = [0u8; 8];
    let n = bytes.len().min(8);
    tail[8 - n..].copy_from_slice(&bytes[bytes.len() - n..]);
    Encoded { len: bytes.len() as u32, tail }
}

fn nonce_key(nonce: Option<&[u8; 4]>) -> u32 {
    nonce.map_or(0, |n| u32::from_be_bytes(*n))
}

enum Kind {
    Interest,
    Data(usize),
}

struct Workload {
    label: String,
    kind: Kind,
    count: usize,
}

impl crate::Experiment for Wire {
    fn name(&self) -> &'static str {
        "wire"
    }

    fn about(&self) -> &'static str {
        "NDN packet decode/encode rates (Interest; Data 100 B, 1 KB, 8 KB) vs the ndn-protocol crate"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let budget = if cfg.quick { 4 << 20 } else { 64 << 20 };
        let max = if cfg.quick { 20_000 } else { 300_000 };
        let workloads = [
            Workload { label: "interest".into(), kind: Kind::Interest, count: max },
            Workload { label: "data-100B".into(), kind: Kind::Data(100), count: (budget / 200).min(max) },
            Workload { label: "data-1KB".into(), kind: Kind::Data(1000), count: (budget / 1100).min(max) },
            Workload { label: "data-8KB".into(), kind: Kind::Data(8000), count: (budget / 8100).min(max) },
        ];
        let mut report = Report::default();
        let mut rng = SmallRng::seed_from_u64(0x77697265);
        for w in &workloads {
            let rows = match w.kind {
                Kind::Interest => run_packets::<Interest>(cfg, w, 0, &mut rng),
                Kind::Data(size) => run_packets::<Data>(cfg, w, size, &mut rng),
            };
            report.rows.extend(rows);
        }
        report.plots = plots(&report.rows);
        report.summary = summary(&report.rows);
        Ok(report)
    }
}

/// A packet kind the experiment measures: how to make one, and what each decoder answers.
trait Packet: Emit + Sized {
    /// The peer's type for the same packet.
    type Peer: ::ndn_tlv::TlvDecode + ::ndn_tlv::TlvEncode;
    /// A generated packet (`size`: Content bytes, where that applies).
    fn generate(rng: &mut SmallRng, size: usize) -> Self;
    /// The answer for an owned packet: the reference, and what `nexthop-owned` returns.
    fn answer(&self) -> Decoded;
    /// Decodes the checked view and answers.
    fn view_answer(wire: &[u8]) -> Option<Decoded>;
    /// Decodes the owned form.
    fn decode_owned(wire: &[u8]) -> Option<Self>;
    /// The peer's answer.
    fn peer_answer(p: &Self::Peer) -> Decoded;
}

fn content_len(c: Option<usize>) -> u32 {
    c.map_or(u32::MAX, |n| n as u32)
}

impl Packet for Interest {
    type Peer = ndn_protocol::Interest<Bytes>;
    fn generate(rng: &mut SmallRng, _size: usize) -> Self {
        packets::interest(rng)
    }
    fn answer(&self) -> Decoded {
        Decoded { components: self.name.len() as u32, key: nonce_key(self.nonce.as_ref()) }
    }
    fn view_answer(wire: &[u8]) -> Option<Decoded> {
        let v = InterestView::decode(wire).ok()?;
        Some(Decoded { components: v.name().len() as u32, key: nonce_key(v.nonce().as_ref()) })
    }
    fn decode_owned(wire: &[u8]) -> Option<Self> {
        Interest::decode(wire).ok()
    }
    fn peer_answer(p: &Self::Peer) -> Decoded {
        Decoded { components: p.name().components.len() as u32, key: nonce_key(p.nonce()) }
    }
}

impl Packet for Data {
    type Peer = ndn_protocol::Data<Bytes>;
    fn generate(rng: &mut SmallRng, size: usize) -> Self {
        packets::data(rng, size)
    }
    fn answer(&self) -> Decoded {
        Decoded { components: self.name.len() as u32, key: content_len(self.content.as_ref().map(Vec::len)) }
    }
    fn view_answer(wire: &[u8]) -> Option<Decoded> {
        let v = DataView::decode(wire).ok()?;
        Some(Decoded { components: v.name().len() as u32, key: content_len(v.content().map(<[u8]>::len)) })
    }
    fn decode_owned(wire: &[u8]) -> Option<Self> {
        Data::decode(wire).ok()
    }
    fn peer_answer(p: &Self::Peer) -> Decoded {
        Decoded { components: p.name().components.len() as u32, key: content_len(p.content().map(Bytes::len)) }
    }
}

/// The answer of a decoder that rejected a packet.
const REJECTED: Decoded = Decoded { components: u32::MAX, key: 0 };

fn run_packets<P: Packet>(cfg: &RunConfig, w: &Workload, size: usize, rng: &mut SmallRng) -> Vec<Row> {
    let bar = progress::bar(w.count as u64, &format!("generating {}", w.label));
    let owned: Vec<P> = (0..w.count).map(|_| P::generate(rng, size)).inspect(|_| bar.inc(1)).collect();
    bar.finish_and_clear();
    let wires: Vec<Vec<u8>> = owned.iter().map(Emit::to_bytes).collect();
    let shared: Vec<Bytes> = wires.iter().map(|w| Bytes::copy_from_slice(w)).collect();
    let peer: Vec<P::Peer> = shared.iter().filter_map(peer::decode).collect();
    let reference: Vec<Decoded> = owned.iter().map(P::answer).collect();
    let mut decoders = vec![
        Contender::new("nexthop-view", |out: &mut Vec<Decoded>| out.extend(wires.iter().map(|b| P::view_answer(b).unwrap_or(REJECTED)))),
        Contender::new("nexthop-owned", |out: &mut Vec<Decoded>| {
            out.extend(wires.iter().map(|b| P::decode_owned(b).map_or(REJECTED, |p| p.answer())))
        }),
        Contender::new("ndn-protocol", |out: &mut Vec<Decoded>| {
            out.extend(shared.iter().map(|b| peer::decode::<P::Peer>(b).map_or(REJECTED, |p| P::peer_answer(&p))))
        }),
    ];
    let decode = compare(cfg.reps, &reference, &mut decoders);
    drop(decoders);
    let encode = measure_encoders(cfg, &owned, &peer, &wires);
    let bytes: usize = wires.iter().map(Vec::len).sum();
    rows(w, "decode", &decode, bytes).into_iter().chain(rows(w, "encode", &encode, bytes)).collect()
}

/// Times the encoders; the reference is the generated packets' own bytes.
fn measure_encoders<T: Emit, P: ::ndn_tlv::TlvEncode>(cfg: &RunConfig, owned: &[T], peer: &[P], wires: &[Vec<u8>]) -> Vec<Outcome> {
    let reference: Vec<Encoded> = wires.iter().map(|w| encoded(w)).collect();
    let max = owned.iter().map(Emit::encoded_len).max().unwrap_or(0);
    let mut buf = vec![0u8; max];
    let mut encoders = vec![
        Contender::new("nexthop-emit", |out: &mut Vec<Encoded>| {
            out.extend(owned.iter().map(|p| {
                let n = p.emit(&mut buf).unwrap_or(0);
                encoded(&buf[..n])
            }))
        }),
        Contender::new("nexthop-to-bytes", |out: &mut Vec<Encoded>| out.extend(owned.iter().map(|p| encoded(&p.to_bytes())))),
        Contender::new("ndn-protocol", |out: &mut Vec<Encoded>| out.extend(peer.iter().map(|p| encoded(&p.encode())))),
    ];
    compare(cfg.reps, &reference, &mut encoders)
}

fn rows(w: &Workload, op: &str, outcomes: &[Outcome], bytes: usize) -> Vec<Row> {
    outcomes
        .iter()
        .map(|o| {
            Row::new(&o.system)
                .with("packet", w.label.as_str())
                .with("op", op)
                .with("packets", w.count)
                .with("mean_bytes", (bytes as f64 / w.count.max(1) as f64).round())
                .with("name_components", "4-10")
                .with("mpackets_per_s", o.per_second(w.count) / 1e6)
                .with("gbytes_per_s", o.per_second(bytes) / 1e9)
                .with("ns_per_packet", o.ns_per_op(w.count))
                .with("mismatches", o.mismatches)
        })
        .collect()
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    ["decode", "encode"]
        .iter()
        .map(|op| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.str("op") == Some(op)).collect();
            let mut groups: Vec<String> = Vec::new();
            let mut systems: Vec<String> = Vec::new();
            for r in &mine {
                let g = r.str("packet").unwrap_or_default().to_string();
                let s = r.str("system").unwrap_or_default().to_string();
                if !groups.contains(&g) {
                    groups.push(g);
                }
                if !systems.contains(&s) {
                    systems.push(s);
                }
            }
            let series = systems
                .iter()
                .map(|s| {
                    let values = groups
                        .iter()
                        .map(|g| {
                            mine.iter()
                                .find(|r| r.str("system") == Some(s) && r.str("packet") == Some(g))
                                .and_then(|r| r.num("mpackets_per_s"))
                                .unwrap_or(f64::NAN)
                        })
                        .collect();
                    (s.clone(), values)
                })
                .collect();
            Plot {
                file_tag: op.to_string(),
                title: format!("NDN packet {op}, one core"),
                y_label: "million packets/s".into(),
                chart: Chart::Bars { groups, series },
            }
        })
        .collect()
}

fn summary(rows: &[Row]) -> Vec<String> {
    let get = |sys: &str, packet: &str, op: &str| {
        rows.iter().find(|r| r.str("system") == Some(sys) && r.str("packet") == Some(packet) && r.str("op") == Some(op))
    };
    let mut out = Vec::new();
    for packet in ["interest", "data-1KB", "data-8KB"] {
        for (op, mine) in [("decode", "nexthop-view"), ("encode", "nexthop-emit")] {
            let (Some(a), Some(b)) = (get(mine, packet, op), get("ndn-protocol", packet, op)) else {
                continue;
            };
            let (ma, mb) = (a.num("mpackets_per_s").unwrap_or(0.0), b.num("mpackets_per_s").unwrap_or(0.0));
            out.push(format!(
                "{packet} {op}: {mine} {ma:.2} Mpkt/s ({:.2} GB/s), {:.1}x ndn-protocol; mismatches {}/{}",
                a.num("gbytes_per_s").unwrap_or(0.0),
                if mb > 0.0 { ma / mb } else { f64::INFINITY },
                a.num("mismatches").unwrap_or(0.0),
                b.num("mismatches").unwrap_or(0.0),
            ));
        }
    }
    out
}

/// The peer's decoding entry point, wrapped so a failure is an answer (`None`), not a panic.
mod peer {
    use bytes::Bytes;

    pub fn decode<T: ndn_tlv::TlvDecode>(b: &Bytes) -> Option<T> {
        let mut b = b.clone();
        T::decode(&mut b).ok()
    }
}
