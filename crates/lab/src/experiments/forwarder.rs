//! Experiment `forwarder`: satisfied Interests per second through a running nexthop, over real
//! sockets, with a FIB of many routes — and the in-process pipeline rate with no sockets, to
//! show where the time goes.
//!
//! A nexthop runtime runs in this process (its own threads); the traffic generator's producer
//! registers `/gen` through management and answers every Interest with a Data of
//! `payload_bytes`; its consumer keeps a window of Interests for distinct names outstanding
//! (so every Interest misses the content store and goes through FIB, PIT and back). The FIB
//! also holds `fib_routes` other routes (two-component names through another face), so each
//! lookup is a binary search among them. NFD and NDNd are not installed on this machine; their
//! published figures are quoted in the README, not measured here.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nexthop_fw::config::Config;
use nexthop_fw::face::{FaceScope, FaceUri};
use nexthop_fw::fib::Fib;
use nexthop_fw::outbox::Outbox;
use nexthop_fw::packet::classify;
use nexthop_fw::runtime::Runtime;
use nexthop_fw::shard::{Control, Shard, ShardConfig};
use nexthop_fw::tlv::{put_packet, LpFields};
use nexthop_fw::traffic;
use nexthop_lookup::name::NextHops;
use nexthop_wire::{Component, Data, Emit, Interest, LpPacket, Name};

use crate::plot::{Chart, Plot};
use crate::{Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct ForwarderExperiment;

const WINDOW: usize = 256;

fn route_file(dir: &std::path::Path, routes: usize) -> anyhow::Result<std::path::PathBuf> {
    let path = dir.join(format!("routes-{routes}.txt"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for i in 0..routes {
        writeln!(f, "/r{}/n{} udp4://127.0.0.1:9 {}", i % 5000, i, i % 7)?;
    }
    f.flush()?;
    Ok(path)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

impl super::Experiment for ForwarderExperiment {
    fn name(&self) -> &'static str {
        "forwarder"
    }

    fn about(&self) -> &'static str {
        "satisfied Interests/s through nexthop over Unix and TCP faces with a large FIB; in-process pipeline rate"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let (big, seconds, payloads): (usize, f64, &[usize]) =
            if cfg.quick { (10_000, 1.0, &[100]) } else { (1_000_000, 5.0, &[100, 1000]) };
        let dir = std::env::temp_dir().join(format!("nexthop-forwarder-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mut rows = Vec::new();
        for (threads, routes) in [(1usize, 0usize), (1, big), (2, big)] {
            let mut c = Config::default();
            c.forwarder.threads = threads;
            c.faces.unix = dir.join("fw.sock").to_string_lossy().into_owned();
            c.faces.tcp = "127.0.0.1:0".into();
            c.faces.udp = "127.0.0.1:0".into();
            c.content_store.capacity = 4096;
            if routes > 0 {
                c.route_files = vec![route_file(&dir, routes)?];
            }
            let t0 = Instant::now();
            let mut rt = Runtime::new(c.clone())?;
            let load_s = t0.elapsed().as_secs_f64();
            let tcp = rt.listening().tcp.expect("tcp listener");
            let stop = Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            let fw = std::thread::spawn(move || rt.run(&s));
            for &payload in payloads {
                for (transport, face) in [("unix", FaceUri::Unix(c.faces.unix.clone())), ("tcp", FaceUri::Tcp(tcp))] {
                    let prefix = Name::from_uri(&format!("/gen/{transport}{payload}")).expect("valid");
                    let pstop = Arc::new(AtomicBool::new(false));
                    let producer = traffic::start_producer(&face, &prefix, payload, pstop.clone())?;
                    let run = traffic::run_consumer(&face, &prefix, WINDOW, Duration::from_secs_f64(seconds));
                    pstop.store(true, Ordering::Relaxed);
                    let _ = producer.join();
                    let mut r = run?;
                    r.rtt_us.sort_by(f64::total_cmp);
                    let kips = r.satisfied as f64 / r.seconds / 1e3;
                    eprintln!("  forwarder {transport} threads={threads} routes={routes} payload={payload}: {kips:.1} k/s");
                    rows.push(
                        Row::new("nexthop")
                            .with("transport", transport)
                            .with("fib_routes", routes as u64)
                            .with("payload_bytes", payload as u64)
                            .with("threads", threads as u64)
                            .with("window", WINDOW as u64)
                            .with("kinterests_per_s", kips)
                            .with("gbps", r.content_bytes as f64 * 8.0 / r.seconds / 1e9)
                            .with("p50_us", percentile(&r.rtt_us, 0.5))
                            .with("p99_us", percentile(&r.rtt_us, 0.99))
                            .with("nacks", r.nacks)
                            .with("fib_load_s", load_s),
                    );
                }
            }
            stop.store(true, Ordering::Relaxed);
            fw.join().map_err(|_| anyhow::anyhow!("forwarder thread panicked"))??;
        }
        for routes in [0, big] {
            let kpps = pipeline_rate(routes, if cfg.quick { 100_000 } else { 1_000_000 })?;
            rows.push(
                Row::new("nexthop-pipeline")
                    .with("transport", "none")
                    .with("fib_routes", routes as u64)
                    .with("threads", 1u64)
                    .with("kpackets_per_s", kpps),
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        let plots = plots(&rows);
        let summary = rows
            .iter()
            .filter(|r| r.str("system") == Some("nexthop") && r.num("fib_routes") == Some(big as f64))
            .map(|r| {
                format!(
                    "forwarder {} threads={} payload={}B routes={}: {:.0}k satisfied Interests/s, p50 {:.0} µs",
                    r.str("transport").unwrap_or(""),
                    r.num("threads").unwrap_or(0.0),
                    r.num("payload_bytes").unwrap_or(0.0),
                    big,
                    r.num("kinterests_per_s").unwrap_or(0.0),
                    r.num("p50_us").unwrap_or(0.0)
                )
            })
            .collect();
        Ok(Report { rows, plots, summary })
    }
}

/// Interest in, Interest out, Data in, Data out through one shard with no sockets: packets per
/// second (each Interest and each Data counts once).
fn pipeline_rate(routes: usize, n: usize) -> anyhow::Result<f64> {
    let mut shard = Shard::new(ShardConfig::default(), Fib::default())?;
    for i in 0..routes {
        let name = Name::from_uri(&format!("/r{}/n{}", i % 5000, i))?;
        shard.apply(&Control::SetRoute(name, NextHops::single(400, (i % 7) as u32)));
    }
    shard.apply(&Control::SetRoute(Name::from_uri("/gen")?, NextHops::single(401, 0)));
    let interests: Vec<Vec<u8>> = (0..n as u64)
        .map(|i| {
            let mut x = Interest::new(Name::from_uri("/gen/pipe").expect("valid").with(Component::segment(i)));
            x.nonce = Some((i as u32).to_be_bytes());
            x.to_bytes()
        })
        .collect();
    let data: Vec<Vec<u8>> = (0..n as u64)
        .map(|i| Data::new(Name::from_uri("/gen/pipe").expect("valid").with(Component::segment(i)), vec![0; 100]).to_bytes())
        .collect();
    let mut out = Outbox::new();
    let mut with_token = Vec::new();
    let mut satisfied = 0u64;
    let start = Instant::now();
    for (i, d) in interests.iter().zip(&data) {
        out.clear();
        let inc = classify(i).map_err(|e| anyhow::anyhow!("{e:?}"))?.expect("an Interest");
        shard.on_incoming(0, 300, FaceScope::Local, &inc, &mut out);
        let (_, _, fwd) = out.iter().next().expect("forwarded");
        let token = LpPacket::decode(fwd)?.pit_token.expect("token");
        with_token.clear();
        put_packet(&mut with_token, &LpFields { pit_token: Some(&token), ..Default::default() }, d);
        out.clear();
        let inc = classify(&with_token).map_err(|e| anyhow::anyhow!("{e:?}"))?.expect("a Data");
        shard.on_incoming(0, 401, FaceScope::Local, &inc, &mut out);
        satisfied += out.len() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    anyhow::ensure!(satisfied == n as u64, "pipeline satisfied {satisfied} of {n}");
    Ok(2.0 * n as f64 / secs / 1e3)
}

fn plots(rows: &[Row]) -> Vec<Plot> {
    let mut groups = Vec::new();
    let mut unix = Vec::new();
    let mut tcp = Vec::new();
    for r in rows.iter().filter(|r| r.str("system") == Some("nexthop")) {
        let g = format!(
            "{}t {}B {}r",
            r.num("threads").unwrap_or(0.0),
            r.num("payload_bytes").unwrap_or(0.0),
            r.num("fib_routes").unwrap_or(0.0)
        );
        if !groups.contains(&g) {
            groups.push(g.clone());
            unix.push(f64::NAN);
            tcp.push(f64::NAN);
        }
        let at = groups.iter().position(|x| *x == g).expect("added");
        let v = r.num("kinterests_per_s").unwrap_or(f64::NAN);
        if r.str("transport") == Some("unix") {
            unix[at] = v;
        } else {
            tcp[at] = v;
        }
    }
    vec![Plot {
        file_tag: "rate".into(),
        title: "nexthop: satisfied Interests/s (threads, payload, FIB routes)".into(),
        y_label: "thousand Interests/s".into(),
        chart: Chart::Bars { groups, series: vec![("unix".into(), unix), ("tcp".into(), tcp)] },
    }]
}
