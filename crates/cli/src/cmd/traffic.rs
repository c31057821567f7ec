//! `nexthop traffic`: the traffic generator against any running forwarder (nexthop, NFD, NDNd):
//! a producer that registers a prefix and answers every Interest under it, and a consumer that
//! keeps a window of Interests outstanding; prints what the consumer measured as JSON.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use nexthop_tools::traffic;
use nexthop_wire::Name;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The face both ends use: unix:///path, tcp4://host:port, udp4://host:port (or tcp6/udp6 with [addr]:port).
    #[arg(long, default_value = "unix:///run/nfd/nfd.sock")]
    face: String,
    /// A Unix or TCP face for management when `--face` is UDP (the producer's face and route
    /// are made there).
    #[arg(long, default_value = "unix:///run/nfd/nfd.sock")]
    control: String,
    /// The prefix the producer serves; Interests go to <prefix>/seg=N.
    #[arg(long, default_value = "/nexthop/traffic")]
    prefix: String,
    /// Content bytes per Data.
    #[arg(long, default_value_t = 100)]
    payload: usize,
    /// Interests outstanding.
    #[arg(long, default_value_t = 256)]
    window: usize,
    /// Seconds to measure.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
}

/// Runs both ends and prints the consumer's measurement.
///
/// # Errors
/// Bad arguments, or the forwarder cannot be reached or refuses the registration.
pub fn run(args: Args) -> anyhow::Result<()> {
    let face = nexthop_fw::sys::interfaces::resolve_face_uri(&args.face).with_context(|| format!("--face {}", args.face))?;
    let control = nexthop_fw::sys::interfaces::resolve_face_uri(&args.control).with_context(|| format!("--control {}", args.control))?;
    let prefix = Name::from_uri(&args.prefix).with_context(|| format!("--prefix {}", args.prefix))?;
    anyhow::ensure!(args.seconds > 0.0 && args.window > 0, "--seconds and --window must be positive");
    let stop = Arc::new(AtomicBool::new(false));
    let producer = traffic::start_producer(&face, &control, &prefix, args.payload, stop.clone()).context("producer")?;
    let r = traffic::run_consumer(&face, &prefix, args.window, args.payload, Duration::from_secs_f64(args.seconds));
    stop.store(true, Ordering::Relaxed);
    let _ = producer.join();
    let r = r.context("consumer")?;
    let out = serde_json::json!({
        "face": args.face,
        "payload_bytes": args.payload,
        "window": args.window,
        "seconds": r.seconds,
        "satisfied": r.satisfied,
        "kinterests_per_s": r.satisfied as f64 / r.seconds / 1e3,
        "gbps": r.content_bytes as f64 * 8.0 / r.seconds / 1e9,
        "p50_us": r.rtt_percentile_us(0.5),
        "p99_us": r.rtt_percentile_us(0.99),
        "nacks": r.nacks,
        "lost": r.lost,
        "mismatches": r.mismatches,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
