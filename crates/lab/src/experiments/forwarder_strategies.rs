//! The `forwarder` experiment's series `strategies`: one prefix, two upstreams, the cheaper one
//! slow. What each forwarding strategy makes of it, in nexthop and in NDNd (which has
//! best-route and multicast).
//!
//! # Overview
//! Two producers register `/gen/strategy` on the forwarder's Unix socket: *slow* at cost 1,
//! answering every Interest [`SLOW_MS`] after it arrives, and *fast* at cost 10, answering at
//! once. The strategy is chosen for the prefix with `strategy-choice/set`. A consumer keeps
//! [`super::forwarder::WINDOW`] Interests outstanding, first for a warm-up (which ASF needs: its
//! first probe comes 0–5 s after a namespace's first Interest; its probing interval is set to
//! 1 s), then for the measured run, under another name so nothing comes from the content store.
//! Rows carry the rate and round trips the consumer saw and the Interests each producer
//! received: `slow_share` (of all that reached a producer) and `upstream_per_satisfied`
//! (multicast sends each Interest to both).
//!
//! Expected: best-route follows the cost to the slow producer; multicast and access are fast but
//! send the slow one as much (multicast) or some (access relearns per name prefix); ASF moves to
//! the fast one once its probe has measured it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nexthop_fw::lp::encode::{put_packet, LpFields};
use nexthop_fw::lp::packet::{classify, Network};
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::Client;
use nexthop_tools::traffic::{self, PAYLOAD_BYTE};
use nexthop_wire::{Data, Emit, Name};

use super::forwarder_traffic::{with_traffic, WINDOW};
use crate::peers::forwarder::Forwarder;
use crate::plot::{Chart, Plot};
use crate::Row;

/// How long the slow producer takes to answer (ms).
pub(super) const SLOW_MS: u64 = 20;
const PAYLOAD: usize = 100;
const PREFIX: &str = "/gen/strategy";

/// The strategies measured on `system`.
fn strategies(system: &str) -> &'static [&'static str] {
    match system {
        "nexthop" => &["best-route", "multicast", "access", "asf/v=5/probing-interval~1000"],
        _ => &["best-route", "multicast"],
    }
}

/// A producer of [`PREFIX`] registered at `cost`, answering each Interest `delay` after it
/// arrives, counting what it received.
struct Upstream {
    received: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Upstream {
    fn start(fw: &Forwarder, cost: u64, delay: Duration) -> anyhow::Result<Upstream> {
        let mut c = Client::connect(&fw.unix)?;
        let register = ControlParameters { name: Some(Name::from_uri(PREFIX)?), cost: Some(cost), ..Default::default() };
        let r = c.command("rib", "register", &register)?;
        anyhow::ensure!(r.code == 200, "{}: register {PREFIX} at cost {cost}: {} {}", fw.system, r.code, r.text);
        let (received, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let (count, halt) = (received.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let payload = vec![PAYLOAD_BYTE; PAYLOAD];
            // Answers not yet due: (when, the LpPacket to send).
            let mut held: std::collections::VecDeque<(Instant, Vec<u8>)> = std::collections::VecDeque::new();
            while !halt.load(Ordering::Relaxed) {
                let wait = held.front().map_or(Duration::from_millis(20), |(due, _)| due.saturating_duration_since(Instant::now()));
                let got = match c.recv(wait.max(Duration::from_micros(100))) {
                    Ok(p) => p,
                    Err(_) => return,
                };
                let mut next = got;
                while let Some(p) = next.take() {
                    if let Ok(Some(inc)) = classify(&p) {
                        if let Network::Interest(i) = inc.packet {
                            count.fetch_add(1, Ordering::Relaxed);
                            let d = Data::new(i.name().to_name(), payload.clone()).to_bytes();
                            let mut wire = Vec::new();
                            put_packet(&mut wire, &LpFields { pit_token: inc.link.pit_token, ..Default::default() }, &d);
                            held.push_back((Instant::now() + delay, wire));
                        }
                    }
                    next = c.recv_buffered();
                }
                let now = Instant::now();
                let mut out = Vec::new();
                while held.front().is_some_and(|(due, _)| *due <= now) {
                    out.extend_from_slice(&held.pop_front().expect("looked").1);
                }
                if !out.is_empty() && c.send(&out).is_err() {
                    return;
                }
            }
        });
        Ok(Upstream { received, stop, thread: Some(thread) })
    }

    fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Measures every strategy of `system` on a forwarder `start` makes (a fresh one each).
pub(super) fn measure(
    system: &str,
    start: impl Fn() -> anyhow::Result<Forwarder>,
    warmup_s: f64,
    seconds: f64,
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &strategy in strategies(system) {
        let fw = start()?;
        let slow = Upstream::start(&fw, 1, Duration::from_millis(SLOW_MS))?;
        let fast = Upstream::start(&fw, 10, Duration::ZERO)?;
        let mut ctl = Client::connect(&fw.unix)?;
        let choice = ControlParameters {
            name: Some(Name::from_uri(PREFIX)?),
            strategy: Some(Name::from_uri(&nexthop_fw::pipeline::strategy::registry::full_name(strategy))?),
            ..Default::default()
        };
        let r = ctl.command("strategy-choice", "set", &choice)?;
        anyhow::ensure!(r.code == 200, "{system}: strategy {strategy}: {} {}", r.code, r.text);
        let warm = Name::from_uri(&format!("{PREFIX}/warm"))?;
        traffic::run_consumer(&fw.unix, &warm, WINDOW, PAYLOAD, Duration::from_secs_f64(warmup_s))?;
        let before = (slow.received(), fast.received());
        let run = Name::from_uri(&format!("{PREFIX}/run"))?;
        let r = traffic::run_consumer(&fw.unix, &run, WINDOW, PAYLOAD, Duration::from_secs_f64(seconds))?;
        let (to_slow, to_fast) = (slow.received() - before.0, fast.received() - before.1);
        let name = strategy.split('/').next().unwrap_or(strategy);
        eprintln!(
            "  {system} strategy {name}: {:.1} k/s, p50 {:.0} µs, {to_slow} to the slow upstream, {to_fast} to the fast",
            r.satisfied as f64 / r.seconds / 1e3,
            r.rtt_percentile_us(0.5)
        );
        let row = Row::new(system)
            .with("transport", "strategy")
            .with("strategy", name)
            .with("slow_upstream_ms", SLOW_MS)
            .with("threads", 1u64)
            .with("payload_bytes", PAYLOAD as u64)
            .with("window", WINDOW as u64)
            .with("slow_share", to_slow as f64 / (to_slow + to_fast).max(1) as f64)
            .with("upstream_per_satisfied", (to_slow + to_fast) as f64 / r.satisfied.max(1) as f64);
        rows.push(with_traffic(row, &r, &fw));
    }
    Ok(rows)
}

/// The rate and the slow upstream's share, per system and strategy.
pub(super) fn plot(rows: &[Row]) -> Option<Plot> {
    let measured: Vec<&Row> = rows.iter().filter(|r| r.str("transport") == Some("strategy")).collect();
    if measured.is_empty() {
        return None;
    }
    let groups = measured.iter().map(|r| format!("{} {}", r.str("system").unwrap_or(""), r.str("strategy").unwrap_or(""))).collect();
    let col = |k: &str, scale: f64| measured.iter().map(|r| r.num(k).map_or(f64::NAN, |v| v * scale)).collect::<Vec<_>>();
    Some(Plot {
        file_tag: "strategies".into(),
        title: format!("Two upstreams, the cheaper {SLOW_MS} ms slower: rate, and % of Interests to the slow one"),
        y_label: "thousand Interests/s; %".into(),
        chart: Chart::Bars {
            groups,
            series: vec![
                ("satisfied (k/s)".into(), col("kinterests_per_s", 1.0)),
                ("to the slow upstream (%)".into(), col("slow_share", 100.0)),
            ],
        },
    })
}
