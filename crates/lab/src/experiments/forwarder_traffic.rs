//! What the `forwarder` experiment's series share: the generator's producer on a forwarder, the
//! consumer's window, the systems measured, and a row filled from a consumer's run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_tools::traffic::{self, TrafficResult};
use nexthop_wire::Name;

use crate::peers::forwarder::Forwarder;
use crate::Row;

/// Interests each consumer keeps outstanding.
pub(super) const WINDOW: usize = 256;
/// The forwarders measured.
pub(super) const SYSTEMS: [&str; 2] = ["nexthop", "ndnd"];
/// The forwarder's face for `transport` (`unix`, `tcp`, `ws`, else UDP).
pub(super) fn face<'f>(fw: &'f Forwarder, transport: &str) -> &'f nexthop_fw::face::uri::FaceUri {
    match transport {
        "unix" => &fw.unix,
        "tcp" => &fw.tcp,
        "ws" => &fw.websocket,
        _ => &fw.udp,
    }
}

/// The generator's producer for `/gen/<tag>` on a forwarder, registered (over UDP its face and
/// route made through the Unix face) and answering until dropped.
pub(super) struct Producer {
    /// `/gen/<tag>`.
    pub(super) prefix: Name,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Producer {
    pub(super) fn start(fw: &Forwarder, transport: &str, tag: &str, payload: usize) -> anyhow::Result<Producer> {
        let prefix = Name::from_uri(&format!("/gen/{tag}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        // A WebSocket is an app's face, not a producer's (NDNd takes no management over it):
        // the producer stays on the Unix socket and only the consumer uses the WebSocket.
        let at = if transport == "ws" { &fw.unix } else { face(fw, transport) };
        let thread = traffic::start_producer(at, &fw.unix, &prefix, payload, stop.clone())?;
        Ok(Producer { prefix, stop, thread: Some(thread) })
    }

    /// The consumer's run against it over `transport`.
    pub(super) fn consume(&self, fw: &Forwarder, transport: &str, payload: usize, seconds: f64) -> anyhow::Result<TrafficResult> {
        Ok(traffic::run_consumer(face(fw, transport), &self.prefix, WINDOW, payload, Duration::from_secs_f64(seconds))?)
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `row` with what a consumer run measured (rate, latency, losses, checks) and the forwarder's
/// resident memory.
pub(super) fn with_traffic(row: Row, r: &TrafficResult, fw: &Forwarder) -> Row {
    row.with("kinterests_per_s", r.satisfied as f64 / r.seconds / 1e3)
        .with("gbps", r.content_bytes as f64 * 8.0 / r.seconds / 1e9)
        .with("p50_us", r.rtt_percentile_us(0.5))
        .with("p99_us", r.rtt_percentile_us(0.99))
        .with("nacks", r.nacks)
        .with("lost", r.lost)
        .with("mismatches", r.mismatches)
        .with("rss_mb", fw.rss_bytes().unwrap_or(0) as f64 / 1048576.0)
}
