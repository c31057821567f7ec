//! Experiment `forwarder-ssd`: a running nexthop serving Data from its content store's SSD tier,
//! with the forwarding thread waiting for each batch read or parking the Interest while the read
//! goes on in the background; against nexthop and NDNd serving the same Data from DRAM.
//!
//! Each forwarder runs as its own process ([`Forwarder`]), one forwarding thread. A producer
//! registers `/gen/ssd` and the consumer fetches `objects` segments once (1000-byte payloads),
//! so every Data passes through the content store; then the producer goes, and the consumer
//! fetches those segments again for `seconds`, 256 Interests outstanding, in ascending order
//! (a stream) or in a shuffled order (every Interest for a different place), and with 8
//! outstanding in ascending order (one consumer fetching a stream): whatever is
//! answered comes from the content store (a miss would be a Nack: the route left with the
//! producer). The SSD configurations keep 4096 packets in DRAM (nexthop's L1) and the rest in
//! a file (O_DIRECT, io_uring, batches of 10 packets in 8 KiB slots, or 2 KiB slots), with
//! read-ahead, background reads and chunk reads (an Interest in no order reads only its own
//! chunk) on or off; the DRAM references hold every object in their content store. SSD rows
//! carry the tier's kilobytes read per Interest answered (from nexthop's `status/counters`).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use nexthop_tools::traffic::{self, Segments, TrafficResult};
use nexthop_wire::Name;

use super::forwarder_traffic::Producer;
use crate::peers::forwarder::{Forwarder, Setup, SsdTier};
use crate::plot::{Chart, Plot};
use crate::{Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct ForwarderSsdExperiment;

/// Interests the consumer keeps outstanding: many (a fast consumer, or many consumers), and a
/// few (one consumer fetching a stream, as a segment fetcher does).
const WINDOWS: [usize; 2] = [256, 8];
/// The window of the fill.
const WINDOW: usize = 256;
/// The measured (order, window) pairs: the plot's groups.
const RUNS: [(&str, usize); 3] = [("sequential", WINDOWS[0]), ("random", WINDOWS[0]), ("sequential", WINDOWS[1])];
const PAYLOAD: usize = 1000;
/// Packets nexthop's DRAM tier holds in the SSD configurations.
const L1_PACKETS: usize = 4096;
/// Packets per batch on the SSD tier (nexthop's default).
const BATCH_PACKETS: u64 = 10;

/// One forwarder configuration measured.
struct Contender {
    system: &'static str,
    /// "ssd" or "dram".
    tier: &'static str,
    /// How the SSD tier is read ("-" for DRAM).
    mode: &'static str,
    read_ahead: bool,
    background_reads: bool,
    chunk_reads: bool,
    /// Bytes per packet slot on the SSD tier.
    slot_bytes: u32,
}

/// nexthop reading its SSD tier in `mode`.
const fn ssd(mode: &'static str, read_ahead: bool, background_reads: bool, chunk_reads: bool, slot_bytes: u32) -> Contender {
    Contender { system: "nexthop", tier: "ssd", mode, read_ahead, background_reads, chunk_reads, slot_bytes }
}

/// `system` holding everything in DRAM.
const fn dram(system: &'static str) -> Contender {
    Contender { system, tier: "dram", mode: "-", read_ahead: false, background_reads: false, chunk_reads: false, slot_bytes: 0 }
}

const CONTENDERS: [Contender; 9] = [
    ssd("wait", false, false, false, 8192),
    ssd("read-ahead", true, false, false, 8192),
    ssd("parked", false, true, false, 8192),
    ssd("parked+read-ahead", true, true, false, 8192),
    // The same with 2 KiB slots (`l2_slot_bytes`): a 1 KB packet's batch is a quarter the bytes.
    ssd("parked+read-ahead, 2 KiB slots", true, true, false, 2048),
    // Interests in no order read only their own chunk (`l2_chunk_reads`; nexthop's default).
    ssd("parked+read-ahead+chunk reads", true, true, true, 8192),
    ssd("parked+read-ahead+chunk reads, 2 KiB slots", true, true, true, 2048),
    dram("nexthop"),
    dram("ndnd"),
];

impl Contender {
    fn label(&self) -> String {
        label(self.system, self.tier, self.mode)
    }

    fn setup(&self, dir: &Path, objects: usize) -> Setup {
        let ssd = (self.tier == "ssd").then(|| SsdTier {
            path: dir.join("l2.cs"),
            // Every batch with a quarter to spare: nothing is replaced.
            bytes: (objects as u64 / BATCH_PACKETS + 64) * BATCH_PACKETS * u64::from(self.slot_bytes) * 5 / 4,
            read_ahead: self.read_ahead,
            background_reads: self.background_reads,
            slot_bytes: self.slot_bytes,
            chunk_reads: self.chunk_reads,
        });
        let cs_capacity = if ssd.is_some() { L1_PACKETS } else { objects + L1_PACKETS };
        Setup { threads: 1, cs_capacity, route_file: None, pit_max: (1 << 20, 1 << 18), udp_mtu: 1420, ssd, ether_interface: None }
    }
}

/// Fetches segments 0..objects of `/gen/ssd` once through a producer, then stops the producer;
/// the prefix and seconds.
fn fill(fw: &Forwarder, objects: usize) -> anyhow::Result<(Name, f64)> {
    let producer = Producer::start(fw, "unix", "ssd", PAYLOAD)?;
    let all: Vec<u64> = (0..objects as u64).collect();
    let r = traffic::run_consumer_over(&fw.unix, &producer.prefix, WINDOW, PAYLOAD, Duration::from_secs(300), Segments::Once(&all));
    let prefix = producer.prefix.clone();
    drop(producer);
    let r = r?;
    anyhow::ensure!(
        r.satisfied == objects as u64 && r.mismatches == 0,
        "{}: filling fetched {} of {objects} ({} lost, {} mismatches)",
        fw.system,
        r.satisfied,
        r.lost,
        r.mismatches
    );
    // The producer's face is gone once the forwarder has seen it close (then its route too).
    std::thread::sleep(Duration::from_millis(200));
    Ok((prefix, r.seconds))
}

impl super::Experiment for ForwarderSsdExperiment {
    fn name(&self) -> &'static str {
        "forwarder-ssd"
    }

    fn about(&self) -> &'static str {
        "a running nexthop serving from its content store's SSD tier (waiting for reads vs parking Interests) against nexthop and NDNd serving from DRAM"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        // NDNd's content-store capacity is a 16-bit number: at most 65,535 packets, so the DRAM
        // references can hold every object only up to about 60,000.
        let (objects, seconds) = if cfg.quick { (20_000usize, 1.0) } else { (60_000, 5.0) };
        let dir = std::env::var_os("NEXTHOP_CS_DIR")
            .map_or_else(std::env::temp_dir, std::path::PathBuf::from)
            .join(format!("nexthop-forwarder-ssd-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let sequential: Vec<u64> = (0..objects as u64).collect();
        let mut shuffled = sequential.clone();
        shuffled.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(7));
        let mut rows = Vec::new();
        for c in &CONTENDERS {
            let _ = std::fs::remove_file(dir.join("l2.cs"));
            let setup = c.setup(&dir, objects);
            let fw = match c.system {
                "nexthop" => Forwarder::nexthop(&dir, &setup)?,
                _ => Forwarder::ndnd(&dir, &setup)?,
            };
            let (prefix, fill_s) = fill(&fw, objects).with_context(|| c.label())?;
            for (order, window) in RUNS {
                let list = if order == "random" { &shuffled } else { &sequential };
                let before = ssd_reads(&fw, c);
                let r: TrafficResult =
                    traffic::run_consumer_over(&fw.unix, &prefix, window, PAYLOAD, Duration::from_secs_f64(seconds), Segments::Cycle(list))
                        .with_context(|| format!("{} {order} window {window}", c.label()))?;
                let kips = r.satisfied as f64 / r.seconds / 1e3;
                eprintln!("  {} {order} window {window}: {kips:.1} k/s (lost {}, nacks {})", c.label(), r.lost, r.nacks);
                let row = Row::new(c.system)
                    .with("tier", c.tier)
                    .with("mode", c.mode)
                    .with("order", order)
                    .with("objects", objects as u64)
                    .with("dram_packets", setup.cs_capacity as u64)
                    .with("window", window as u64)
                    .with("payload_bytes", PAYLOAD as u64)
                    .with("fill_s", fill_s);
                let mut row = super::forwarder_traffic::with_traffic(row, &r, &fw);
                if let (Some(before), Some(after)) = (before, ssd_reads(&fw, c)) {
                    // The SSD tier's reads in the run, per Interest answered.
                    let per = |key: &str| {
                        let (a, b) = (after.get(key).copied().unwrap_or(0), before.get(key).copied().unwrap_or(0));
                        a.saturating_sub(b) as f64 / r.satisfied.max(1) as f64
                    };
                    row = row
                        .with("l2_kb_read_per_interest", per("cs_l2_read_bytes") / 1e3)
                        .with("l2_chunk_reads_per_interest", per("cs_l2_chunk_reads"));
                }
                rows.push(row);
            }
            drop(fw);
        }
        let _ = std::fs::remove_dir_all(&dir);
        let summary = summary(&rows);
        Ok(Report { plots: plots(&rows), rows, summary })
    }
}

/// nexthop's counters when `c` reads an SSD tier (the gauges the forwarding thread last set:
/// at its latest tick or SSD poll, every few milliseconds while a run goes on).
fn ssd_reads(fw: &Forwarder, c: &Contender) -> Option<hashbrown::HashMap<String, u64>> {
    if c.tier != "ssd" {
        return None;
    }
    std::thread::sleep(Duration::from_millis(50)); // A tick after the last packet.
    fw.counters().ok()
}

/// A contender's name in the summary and the plot: "<system> ssd <mode>" or "<system> dram".
fn label(system: &str, tier: &str, mode: &str) -> String {
    match tier {
        "ssd" => format!("{system} ssd {mode}"),
        _ => format!("{system} dram"),
    }
}

fn label_of(r: &Row) -> String {
    label(r.str("system").unwrap_or(""), r.str("tier").unwrap_or(""), r.str("mode").unwrap_or(""))
}

fn rate(rows: &[Row], label: &str, (order, window): (&str, usize)) -> f64 {
    rows.iter()
        .find(|r| label_of(r) == label && r.str("order") == Some(order) && r.num("window") == Some(window as f64))
        .and_then(|r| r.num("kinterests_per_s"))
        .unwrap_or(f64::NAN)
}

fn summary(rows: &[Row]) -> Vec<String> {
    RUNS.iter()
        .map(|&run| {
            let default = rate(rows, "nexthop ssd parked+read-ahead+chunk reads", run);
            format!(
                "{} ({} outstanding): nexthop from SSD as by default (parked+read-ahead+chunk reads) {default:.1}k/s — {:.2}× waiting, {:.2}× without chunk reads, {:.2}× read-ahead alone, {:.2}× parked alone; 2 KiB slots {:.1}k/s; nexthop DRAM {:.1}k/s, NDNd DRAM {:.1}k/s",
                run.0,
                run.1,
                default / rate(rows, "nexthop ssd wait", run),
                default / rate(rows, "nexthop ssd parked+read-ahead", run),
                default / rate(rows, "nexthop ssd read-ahead", run),
                default / rate(rows, "nexthop ssd parked", run),
                rate(rows, "nexthop ssd parked+read-ahead+chunk reads, 2 KiB slots", run),
                rate(rows, "nexthop dram", run),
                rate(rows, "ndnd dram", run),
            )
        })
        .collect()
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let groups: Vec<String> = RUNS.iter().map(|(order, window)| format!("{order}, {window} outstanding")).collect();
    let series = CONTENDERS.iter().map(|c| (c.label(), RUNS.iter().map(|&run| rate(rows, &c.label(), run)).collect())).collect();
    vec![Plot {
        file_tag: "rate".into(),
        title: "Interests/s answered from the content store: nexthop's SSD tier (4096 packets in DRAM) and DRAM-only stores".into(),
        y_label: "thousand Interests/s".into(),
        chart: Chart::Bars { groups, series },
    }]
}
