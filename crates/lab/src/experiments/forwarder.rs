//! Experiment `forwarder`: satisfied Interests per second through nexthop and through NDNd (the
//! Go NDN forwarder) over real Unix, TCP, UDP and WebSocket sockets, with a FIB of many routes; an Interest
//! flood from one face beside legitimate traffic from another; and the in-process pipeline rate
//! with no sockets, to show where the time goes.
//!
//! Both forwarders run as their own processes ([`Forwarder`]) with the same content-store size
//! and thread count. The traffic generator's producer registers `/gen/...` through management
//! (over UDP: a face made with `faces/create` and a route to it; for the WebSocket rows it stays
//! on the Unix socket and only the consumer uses the WebSocket) and answers every Interest
//! with a Data of `payload_bytes`; its consumer keeps a window of Interests for distinct names
//! outstanding, so every Interest misses the content store and goes through FIB, PIT and back.
//! The FIB also holds `fib_routes` other routes (two-component names): nexthop loads them from a
//! route file at start, NDNd through `rib/register` commands (its only route interface), both
//! timed. Flood: a UDP client sends Interests for distinct names under a prefix routed to a
//! face that never answers — paced at 100K/s, then as fast as one thread sends — while the
//! consumer keeps fetching on the Unix face; rows carry the legitimate rate before and during the
//! flood, the forwarder's peak resident memory and its PIT size. Strategies (series
//! `strategies`, `forwarder_strategies.rs`): two upstreams of one prefix, the cheaper one
//! slow, under each strategy each forwarder has. Two hops (series `two_hops`,
//! `forwarder_hops.rs`): two forwarders joined by a UDP face (both systems), an Ethernet face
//! on a veth pair (nexthop), or a UDP face through a relay that loses datagrams (both systems,
//! and nexthop with NDNLPv2 link reliability), the consumer on one and the producer on the
//! other.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;

use nexthop_fw::face::FaceScope;
use nexthop_fw::lp::encode::{put_packet, LpFields};
use nexthop_fw::lp::packet::classify;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_fw::pipeline::outbox::Outbox;
use nexthop_fw::pipeline::{Control, Shard, ShardConfig};
use nexthop_fw::table::fib::Fib;
use nexthop_lookup::name::NextHops;
use nexthop_tools::client::Client;
use nexthop_tools::traffic::TrafficResult;
use nexthop_wire::{Component, Data, Emit, Interest, LpPacket, Name};

use super::forwarder_traffic::{with_traffic, Producer, SYSTEMS, WINDOW};
use super::{forwarder_hops, forwarder_strategies};
use crate::peers::forwarder::{Forwarder, Setup};
use crate::plot::{Chart, Plot};
use crate::{Report, Row, RunConfig};

/// The experiment.
#[derive(Debug)]
pub struct ForwarderExperiment;

/// Both forwarders' default UDP MTU; every Data measured (≤ 1000-byte payloads) fits in one
/// datagram.
const UDP_MTU: usize = 1420;
/// nexthop's shipped PIT bounds (all threads; per face).
const PIT_BOUND: (usize, usize) = (1_048_576, 262_144);

fn route_name(i: usize) -> Name {
    Name::from_uri(&format!("/r{}/n{}", i % 5000, i)).expect("valid")
}

fn route_file(dir: &std::path::Path, routes: usize) -> anyhow::Result<std::path::PathBuf> {
    let path = dir.join(format!("routes-{routes}.txt"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for i in 0..routes {
        writeln!(f, "{} udp4://127.0.0.1:9 {}", route_name(i), i % 7)?;
    }
    f.flush()?;
    Ok(path)
}

fn start(system: &str, dir: &std::path::Path, setup: &Setup) -> anyhow::Result<Forwarder> {
    match system {
        "nexthop" => Forwarder::nexthop(dir, setup),
        _ => Forwarder::ndnd(dir, setup),
    }
}

/// Fills the FIB with `routes` routes: nexthop read them from its route file at start; NDNd
/// gets them as `rib/register` commands toward a loader face, which must stay open.
fn load_routes(fw: &Forwarder, routes: usize) -> anyhow::Result<(Option<Client>, f64)> {
    if routes == 0 || fw.system == "nexthop" {
        return Ok((None, fw.start_s));
    }
    let t0 = Instant::now();
    let mut loader = Client::connect(&fw.unix)?;
    let ok = loader.register_many((0..routes).map(route_name), 256)?;
    anyhow::ensure!(ok == routes as u64, "{}: {ok} of {routes} routes registered", fw.system);
    Ok((Some(loader), t0.elapsed().as_secs_f64()))
}

/// One producer + consumer run over `transport`.
fn fetch(fw: &Forwarder, transport: &str, tag: &str, payload: usize, seconds: f64) -> anyhow::Result<TrafficResult> {
    Producer::start(fw, transport, tag, payload)?.consume(fw, transport, payload, seconds)
}

impl super::Experiment for ForwarderExperiment {
    fn name(&self) -> &'static str {
        "forwarder"
    }

    fn about(&self) -> &'static str {
        "satisfied Interests/s through nexthop and NDNd over Unix, TCP, UDP and WebSocket with a large FIB; Interest flood; strategies; two forwarders over UDP, Ethernet and a lossy UDP link (with and without link reliability); one forwarding thread between an NDN traffic generator's AF_XDP ports and its Ethernet faces vs its UDP faces; in-process pipeline rate"
    }

    fn run(&self, cfg: &RunConfig) -> anyhow::Result<Report> {
        let (big, seconds, payloads): (usize, f64, &[usize]) =
            if cfg.quick { (10_000, 1.0, &[100]) } else { (1_000_000, 5.0, &[100, 1000]) };
        let dir = std::env::temp_dir().join(format!("nexthop-forwarder-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mut rows = Vec::new();
        let mut left_out = Vec::new();
        for system in SYSTEMS {
            for (threads, routes) in [(1usize, 0usize), (1, big), (2, big)] {
                let setup = Setup {
                    threads,
                    cs_capacity: 4096,
                    route_file: (routes > 0).then(|| route_file(&dir, routes)).transpose()?,
                    pit_max: PIT_BOUND,
                    udp_mtu: UDP_MTU,
                    ssd: None,
                    ether_interface: None,
                };
                let fw = start(system, &dir, &setup)?;
                let (_loader, load_s) = load_routes(&fw, routes)?;
                for &payload in payloads {
                    for transport in ["unix", "tcp", "udp", "ws"] {
                        let r = fetch(&fw, transport, &format!("{transport}{payload}t{threads}"), payload, seconds)
                            .with_context(|| format!("{system} over {transport}"))?;
                        let kips = r.satisfied as f64 / r.seconds / 1e3;
                        eprintln!("  {system} {transport} threads={threads} routes={routes} payload={payload}: {kips:.1} k/s");
                        let row = Row::new(system)
                            .with("transport", transport)
                            .with("fib_routes", routes as u64)
                            .with("payload_bytes", payload as u64)
                            .with("threads", threads as u64)
                            .with("window", WINDOW as u64);
                        rows.push(with_traffic(row, &r, &fw).with("fib_load_s", load_s));
                    }
                }
            }
            for rate in [Some(100_000.0), None] {
                rows.push(flood(system, &dir, if cfg.quick { 1.0 } else { 10.0 }, rate)?);
            }
            let plain = Setup {
                threads: 1,
                cs_capacity: 4096,
                route_file: None,
                pit_max: PIT_BOUND,
                udp_mtu: UDP_MTU,
                ssd: None,
                ether_interface: None,
            };
            let (warmup, measured) = if cfg.quick { (1.0, 1.0) } else { (6.0, seconds) };
            rows.extend(forwarder_strategies::measure(system, || start(system, &dir, &plain), warmup, measured)?);
            let hop = |name: &str, ether: Option<String>| {
                let at = dir.join(format!("{system}-hop-{name}"));
                std::fs::create_dir_all(&at)?;
                start(system, &at, &Setup { ether_interface: ether, ..plain.clone() })
            };
            let (hop_rows, hop_notes) = forwarder_hops::measure(system, hop, seconds, cfg.quick)?;
            rows.extend(hop_rows);
            left_out.extend(hop_notes);
        }
        match super::forwarder_frames::measure(&dir, cfg.quick) {
            Ok(r) => rows.extend(r),
            Err(e) => left_out.push(format!("nexthop with a traffic generator over Ethernet and UDP faces: left out ({e:#})")),
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
        let mut summary: Vec<String> = rows
            .iter()
            .filter(|r| r.num("fib_routes") == Some(big as f64) && r.num("threads") == Some(1.0) && r.num("payload_bytes") == Some(100.0))
            .map(|r| {
                format!(
                    "{} {} 1 thread 100B routes={big}: {:.0}k satisfied Interests/s, p50 {:.0} µs",
                    r.str("system").unwrap_or(""),
                    r.str("transport").unwrap_or(""),
                    r.num("kinterests_per_s").unwrap_or(0.0),
                    r.num("p50_us").unwrap_or(0.0)
                )
            })
            .collect();
        for r in rows.iter().filter(|r| r.str("transport") == Some("flood")) {
            summary.push(format!(
                "{} under a {:.0}k/s UDP Interest flood: legitimate {:.0}k/s (before {:.0}k/s), PIT {} entries, RSS {:.0} → {:.0} MB",
                r.str("system").unwrap_or(""),
                r.num("flood_kinterests_per_s").unwrap_or(0.0),
                r.num("kinterests_per_s").unwrap_or(0.0),
                r.num("kinterests_per_s_before").unwrap_or(0.0),
                r.num("pit_entries_end").map_or("(no answer)".to_string(), |p| p.to_string()),
                r.num("rss_mb_before").unwrap_or(0.0),
                r.num("rss_mb_peak").unwrap_or(0.0),
            ));
        }
        for r in rows.iter().filter(|r| r.str("transport") == Some("two-hops")) {
            summary.push(format!(
                "{} two hops over {} (1000 B): {:.0}k satisfied Interests/s, p50 {:.0} µs",
                r.str("system").unwrap_or(""),
                r.str("link").unwrap_or(""),
                r.num("kinterests_per_s").unwrap_or(0.0),
                r.num("p50_us").unwrap_or(0.0)
            ));
        }
        let generator = |face: &str| rows.iter().find(|r| r.str("transport") == Some("generator") && r.str("face") == Some(face));
        for r in ["ether", "udp"].into_iter().filter_map(generator) {
            summary.push(format!(
                "nexthop 1 thread, traffic generator on the other core, {} face ({}): {:.0}k satisfied Interests/s, p50 {:.0} µs, forwarding core {:.0}% busy ({:.0} ns per Interest, {:.0}% of it in the forwarder's code, the rest in the kernel), generator core {:.0}% busy, {} lost",
                r.str("face").unwrap_or(""),
                r.str("backend").unwrap_or(""),
                r.num("kinterests_per_s").unwrap_or(0.0),
                r.num("p50_us").unwrap_or(0.0),
                100.0 * r.num("fwd_core_busy").unwrap_or(0.0),
                r.num("fwd_ns_per_interest").unwrap_or(0.0),
                100.0 * r.num("fwd_user_share").unwrap_or(0.0),
                100.0 * r.num("gen_core_busy").unwrap_or(0.0),
                r.num("lost").unwrap_or(0.0),
            ));
        }
        if let (Some(e), Some(u)) = (generator("ether"), generator("udp")) {
            let (e, u) = (e.num("kinterests_per_s").unwrap_or(0.0), u.num("kinterests_per_s").unwrap_or(0.0));
            summary.push(format!("Ethernet (AF_XDP) / UDP faces, same forwarder and generator: {:.2}×", e / u.max(1e-9)));
        }
        summary.extend(left_out);
        for r in rows.iter().filter(|r| r.str("transport") == Some("strategy")) {
            summary.push(format!(
                "{} {} (cheaper upstream {} ms slower): {:.1}k/s, p50 {:.0} µs, {:.0}% of Interests to the slow upstream, {:.2} sent upstream per satisfied",
                r.str("system").unwrap_or(""),
                r.str("strategy").unwrap_or(""),
                forwarder_strategies::SLOW_MS,
                r.num("kinterests_per_s").unwrap_or(0.0),
                r.num("p50_us").unwrap_or(0.0),
                100.0 * r.num("slow_share").unwrap_or(0.0),
                r.num("upstream_per_satisfied").unwrap_or(0.0),
            ));
        }
        Ok(Report { rows, plots, summary })
    }
}

/// An Interest flood over UDP (paced to `rate` per second, or as fast as one thread sends) toward a prefix routed to a face that never answers (the discard
/// port), while a consumer on the Unix face keeps fetching: the legitimate rate before and
/// during, the forwarder's peak resident memory (sampled every 50 ms), and its PIT size at the
/// end of the flood.
fn flood(system: &str, dir: &std::path::Path, seconds: f64, rate: Option<f64>) -> anyhow::Result<Row> {
    let setup =
        Setup { threads: 1, cs_capacity: 4096, route_file: None, pit_max: PIT_BOUND, udp_mtu: UDP_MTU, ssd: None, ether_interface: None };
    let fw = start(system, dir, &setup)?;
    let mut ctl = Client::connect(&fw.unix)?;
    let sink = ctl.command("faces", "create", &ControlParameters { uri: Some("udp4://127.0.0.1:9".into()), ..Default::default() })?;
    let sink = sink.body.and_then(|b| b.face_id).ok_or_else(|| anyhow::anyhow!("{system}: faces/create {} {}", sink.code, sink.text))?;
    let flood_prefix = Name::from_uri("/flood")?;
    let r =
        ctl.command("rib", "register", &ControlParameters { name: Some(flood_prefix.clone()), face_id: Some(sink), ..Default::default() })?;
    anyhow::ensure!(r.code == 200, "{system}: register /flood: {} {}", r.code, r.text);
    let before = fetch(&fw, "unix", "before", 100, seconds)?;
    let rss_before = fw.rss_bytes().unwrap_or(0);
    // Registered before the flood: a forwarder drowning in it may not answer management.
    let producer = Producer::start(&fw, "unix", "during", 100)?;

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let flooder = {
        let (stop, sent, udp) = (stop.clone(), sent.clone(), fw.udp.clone());
        std::thread::spawn(move || -> anyhow::Result<()> {
            let mut c = Client::connect(&udp)?;
            let mut out = Vec::new();
            let mut seq = 0u64;
            let t0 = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                if let Some(rate) = rate {
                    let due = t0 + Duration::from_secs_f64(seq as f64 / rate);
                    std::thread::sleep(due.saturating_duration_since(Instant::now()));
                }
                for _ in 0..64 {
                    let mut i = Interest::new(flood_prefix.clone().with(Component::segment(seq)));
                    i.nonce = Some(c.next_nonce());
                    i.lifetime_ms = Some(10_000);
                    out.extend_from_slice(&i.to_bytes());
                    seq += 1;
                }
                // A full socket buffer is the flood outrunning the forwarder: keep going.
                let _ = c.send(&out);
                out.clear();
                sent.store(seq, Ordering::Relaxed);
            }
            Ok(())
        })
    };
    let t0 = Instant::now();
    let peak = Arc::new(AtomicU64::new(rss_before));
    let sampler = {
        let (stop, peak, pid) = (stop.clone(), peak.clone(), fw.pid());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(crate::machine::rss_bytes_of(pid).unwrap_or(0), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let during = producer.consume(&fw, "unix", 100, seconds);
    let flood_s = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    flooder.join().map_err(|_| anyhow::anyhow!("flooder panicked"))??;
    let _ = sampler.join();
    drop(producer);
    let during = during?;
    // The PIT as the flood left it (its Interests live 10 s): read once the flood has stopped,
    // since a forwarder drowning in it may not answer management in time; a few tries.
    let pit = (0..3).find_map(|_| fw.pit_entries().ok());
    if pit.is_none() {
        eprintln!("  {system} flood: no answer to status/general after the flood");
    }
    let kips = |r: &TrafficResult| r.satisfied as f64 / r.seconds / 1e3;
    eprintln!("  {system} flood: legitimate {:.1} → {:.1} k/s", kips(&before), kips(&during));
    Ok(Row::new(system)
        .with("transport", "flood")
        .with("fib_routes", 0u64)
        .with("payload_bytes", 100u64)
        .with("threads", 1u64)
        .with("pit_bound", if system == "nexthop" { PIT_BOUND.1 as u64 } else { 0 })
        .with("flood_paced_kinterests_per_s", rate.map_or(0.0, |r| r / 1e3))
        .with("flood_kinterests_per_s", sent.load(Ordering::Relaxed) as f64 / flood_s / 1e3)
        .with("kinterests_per_s_before", kips(&before))
        .with("kinterests_per_s", kips(&during))
        .with("p99_us", during.rtt_percentile_us(0.99))
        .with("lost", during.lost)
        .with("mismatches", before.mismatches + during.mismatches)
        .with("rss_mb_before", rss_before as f64 / 1048576.0)
        .with("rss_mb_peak", peak.load(Ordering::Relaxed) as f64 / 1048576.0)
        .with("pit_entries_end", pit.map_or(f64::NAN, |p| p as f64)))
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
    // Rate: one group per (threads, payload, routes), one bar per system × transport.
    let mut groups: Vec<String> = Vec::new();
    let mut series: Vec<(String, Vec<f64>)> = Vec::new();
    let measured = rows.iter().filter(|r| {
        SYSTEMS.contains(&r.str("system").unwrap_or("")) && !matches!(r.str("transport"), Some("flood" | "strategy" | "two-hops"))
    });
    for r in measured {
        let g = format!(
            "{}t {}B {}r",
            r.num("threads").unwrap_or(0.0),
            r.num("payload_bytes").unwrap_or(0.0),
            r.num("fib_routes").unwrap_or(0.0)
        );
        let at = groups.iter().position(|x| *x == g).unwrap_or_else(|| {
            groups.push(g);
            series.iter_mut().for_each(|(_, v)| v.push(f64::NAN));
            groups.len() - 1
        });
        let name = format!("{} {}", r.str("system").unwrap_or(""), r.str("transport").unwrap_or(""));
        let si = series.iter().position(|(n, _)| *n == name).unwrap_or_else(|| {
            series.push((name, vec![f64::NAN; groups.len()]));
            series.len() - 1
        });
        series[si].1[at] = r.num("kinterests_per_s").unwrap_or(f64::NAN);
    }
    let mut plots = vec![Plot {
        file_tag: "rate".into(),
        title: "Satisfied Interests/s through nexthop and NDNd (threads, payload, FIB routes)".into(),
        y_label: "thousand Interests/s".into(),
        chart: Chart::Bars { groups, series },
    }];
    let floods: Vec<&Row> = rows.iter().filter(|r| r.str("transport") == Some("flood")).collect();
    if !floods.is_empty() {
        let groups = floods
            .iter()
            .map(|r| match r.num("flood_paced_kinterests_per_s") {
                Some(k) if k > 0.0 => format!("{} {k:.0}k/s flood", r.str("system").unwrap_or("")),
                _ => format!("{} unpaced flood", r.str("system").unwrap_or("")),
            })
            .collect();
        let col = |k: &str| floods.iter().map(|r| r.num(k).unwrap_or(f64::NAN)).collect::<Vec<_>>();
        plots.push(Plot {
            file_tag: "flood".into(),
            title: "Interest flood over UDP: legitimate Interests/s on another face, and memory".into(),
            y_label: "thousand Interests/s; MB".into(),
            chart: Chart::Bars {
                groups,
                series: vec![
                    ("legitimate before (k/s)".into(), col("kinterests_per_s_before")),
                    ("legitimate during flood (k/s)".into(), col("kinterests_per_s")),
                    ("RSS before (MB)".into(), col("rss_mb_before")),
                    ("RSS peak (MB)".into(), col("rss_mb_peak")),
                ],
            },
        });
    }
    plots.extend(forwarder_strategies::plot(rows));
    plots.extend(forwarder_hops::plot(rows));
    plots
}
