//! `nexthop tag`: a TagNet host on one link to a TagNet router (an Ethernet interface, or a UDP
//! tunnel): subscribe, publish, serve, get.
//!
//! Each waits until its router's tree has labelled it (its locator, printed to standard error),
//! then does its part; what it receives goes to standard output, a line each:
//! - `subscribe DESCRIPTOR...`: `push PAYLOAD` for every push its descriptors match; on exit it
//!   withdraws them and prints (to standard error) how many packets came that were not for it.
//! - `publish DESCRIPTOR... --payload TEXT`: pushes TEXT by each descriptor (`TEXT #i` for the
//!   i-th of several).
//! - `serve DESCRIPTOR... --payload TEXT`: answers every interest its descriptors are the
//!   largest subset of, and every follow-up by its locator, with TEXT: `interest PAYLOAD` each.
//! - `get DESCRIPTOR --payload TEXT`: an interest by descriptor, then `--follow-ups` interests
//!   by the producer's locator: `data PAYLOAD from TREE:ID` for each answer. It fails when one
//!   is not answered in time.
//!
//! Descriptors are written as `nexthop fib tag` reads them: tags separated by spaces (one
//! argument: `"news sport"`), a `/name`, or a 192-bit string.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use nexthop_fw::conf::config::parse_tunnel;
use nexthop_lookup::tag::{parse_descriptor, Descriptor, Fanout, FANOUT_ALL};
use nexthop_router::tag::host::{HostError, Received, TagHost};
use nexthop_router::tag::link::HostLink;
use nexthop_router::tag::packet::{Kind, Locator};
use nexthop_router::tag::ports::Tunnel;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

/// The link and the tree, common to every subcommand.
#[derive(Debug, clap::Args)]
struct Link {
    /// The Ethernet interface to the router.
    #[arg(long, short, conflicts_with = "udp", required_unless_present = "udp")]
    interface: Option<String>,
    /// A UDP tunnel to the router instead: "LOCAL_IP:PORT REMOTE_IP:PORT".
    #[arg(long)]
    udp: Option<String>,
    /// The tree.
    #[arg(long, default_value_t = 0)]
    tree: u16,
    /// The host's name on the tree (unique on it; 1 to 32 bytes). Default: pid@hostname.
    #[arg(long)]
    name: Option<String>,
    /// Seconds to wait for the tree's labels.
    #[arg(long, default_value_t = 10.0)]
    attach_seconds: f64,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Receive the pushes that match any of the descriptors.
    Subscribe {
        #[command(flatten)]
        link: Link,
        /// The descriptors.
        #[arg(required = true)]
        descriptors: Vec<String>,
        /// Exit after this many pushes (0: no limit).
        #[arg(long, default_value_t = 0)]
        count: u64,
        /// Exit after this many seconds (0: no limit).
        #[arg(long, default_value_t = 0.0)]
        seconds: f64,
        /// Withdraw the subscriptions after this many seconds and go on listening (printing
        /// `withdrawn`): any push after that is one the routers should not have sent.
        #[arg(long)]
        withdraw_after: Option<f64>,
    },
    /// Push content by descriptor.
    Publish {
        #[command(flatten)]
        link: Link,
        /// The descriptors: `--count` pushes by each, in turn.
        #[arg(required = true)]
        descriptors: Vec<String>,
        /// The content.
        #[arg(long)]
        payload: String,
        /// Pushes by each descriptor.
        #[arg(long, default_value_t = 1)]
        count: u64,
        /// Milliseconds between pushes.
        #[arg(long, default_value_t = 0)]
        interval_ms: u64,
        /// The fan-out limit (255: none).
        #[arg(long, default_value_t = FANOUT_ALL)]
        fanout: u8,
    },
    /// Answer interests by the descriptors, and follow-ups by this host's locator.
    Serve {
        #[command(flatten)]
        link: Link,
        /// The descriptors.
        #[arg(required = true)]
        descriptors: Vec<String>,
        /// The content of every answer.
        #[arg(long)]
        payload: String,
        /// Exit after this many answers (0: no limit).
        #[arg(long, default_value_t = 0)]
        count: u64,
        /// Exit after this many seconds (0: no limit).
        #[arg(long, default_value_t = 0.0)]
        seconds: f64,
    },
    /// Pull: an interest by descriptor, then follow-ups by the producer's locator.
    Get {
        #[command(flatten)]
        link: Link,
        /// The descriptor.
        descriptor: String,
        /// The interest's content.
        #[arg(long, default_value = "")]
        payload: String,
        /// Follow-up interests by the producer's locator.
        #[arg(long, default_value_t = 0)]
        follow_ups: u32,
        /// Milliseconds to wait for each answer.
        #[arg(long, default_value_t = 2000)]
        timeout_ms: u64,
    },
}

/// A host on its link.
struct Session {
    link: HostLink,
    host: TagHost,
    packets: Vec<Vec<u8>>,
}

impl Session {
    fn open(l: &Link) -> anyhow::Result<Session> {
        let link = match (&l.interface, &l.udp) {
            (Some(i), _) => HostLink::ethernet(i).with_context(|| format!("--interface {i}"))?,
            (None, Some(u)) => {
                let Some((local, remote)) = parse_tunnel(u) else { bail!("--udp {u:?}: \"LOCAL_IP:PORT REMOTE_IP:PORT\"") };
                HostLink::udp(Tunnel { local, remote }).with_context(|| format!("--udp {u}"))?
            }
            (None, None) => bail!("--interface or --udp"),
        };
        let name = l.name.clone().unwrap_or_else(default_name);
        anyhow::ensure!(!name.is_empty() && name.len() <= 32, "--name {name:?}: 1 to 32 bytes");
        Ok(Session { link, host: TagHost::new(l.tree, &name), packets: Vec::new() })
    }

    /// Runs the host for up to `wait`: its control plane, what arrives; the packets for it.
    fn step(&mut self, wait: Duration) -> Vec<Received> {
        let now = Instant::now();
        self.host.maintain(now);
        for b in self.host.take_outbox() {
            self.link.send(&b);
        }
        self.packets.clear();
        self.link.receive(wait.min(Duration::from_millis(20)), &mut self.packets);
        let now = Instant::now();
        let packets = std::mem::take(&mut self.packets);
        let got = packets.iter().filter_map(|p| self.host.receive(now, p)).collect();
        self.packets = packets;
        got
    }

    /// Waits for the tree's labels.
    fn attach(&mut self, seconds: f64) -> anyhow::Result<Locator> {
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < seconds {
            self.step(Duration::from_millis(20));
            if let Some(l) = self.host.locator() {
                eprintln!("nexthop tag: on tree {} with locator {}:{}", l.tree, l.tree, l.label.id);
                return Ok(l);
            }
        }
        bail!("no labels from tree {} in {seconds} s: is a TagNet router on the link, and its tree's root up?", self.host.tree().tree())
    }

    fn send(&mut self, packet: Result<Vec<u8>, HostError>) -> anyhow::Result<()> {
        let p = packet?;
        anyhow::ensure!(self.link.send(&p), "the link did not take the packet");
        Ok(())
    }
}

fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let mut name = format!("{}@{}", std::process::id(), host.trim());
    name.truncate(32);
    while !name.is_char_boundary(name.len()) {
        name.pop();
    }
    name
}

fn descriptors(texts: &[String]) -> anyhow::Result<Vec<Descriptor>> {
    texts.iter().map(|t| parse_descriptor(t).with_context(|| format!("descriptor {t:?}"))).collect()
}

/// Whether a run limited to `count` items and `seconds` is over.
fn done(n: u64, count: u64, t0: Instant, seconds: f64) -> bool {
    (count > 0 && n >= count) || (seconds > 0.0 && t0.elapsed().as_secs_f64() >= seconds)
}

/// Runs the subcommand.
///
/// # Errors
/// Bad arguments, a link that cannot open, no labels in time, an answer not in time.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::Subscribe { link, descriptors: d, count, seconds, withdraw_after } => {
            let mut s = Session::open(&link)?;
            s.host.subscribe(descriptors(&d)?);
            s.attach(link.attach_seconds)?;
            let (t0, mut n) = (Instant::now(), 0);
            let mut withdraw = withdraw_after.map(Duration::from_secs_f64);
            while !done(n, count, t0, seconds) {
                for r in s.step(Duration::from_millis(20)) {
                    if r.kind == Kind::Push {
                        println!("push {}", String::from_utf8_lossy(&r.payload));
                        n += 1;
                    }
                }
                if withdraw.is_some_and(|w| t0.elapsed() >= w) {
                    withdraw = None;
                    s.host.subscribe(Vec::new());
                    println!("withdrawn");
                }
            }
            let c = &s.host.counters;
            eprintln!("nexthop tag: {} packets for this host, {} not for it, {} not TagNet", c.received, c.not_mine, c.bad);
            // Withdraw: the empty set, sent at once.
            s.host.subscribe(Vec::new());
            let until = Instant::now() + Duration::from_millis(250);
            while Instant::now() < until {
                s.step(Duration::from_millis(20));
            }
            Ok(())
        }
        Command::Publish { link, descriptors: texts, payload, count, interval_ms, fanout } => {
            let mut s = Session::open(&link)?;
            let ds = descriptors(&texts)?;
            let fanout = if fanout == FANOUT_ALL { Fanout::ALL } else { Fanout::new(usize::from(fanout)).context("--fanout")? };
            s.attach(link.attach_seconds)?;
            let several = ds.len() as u64 * count > 1;
            let mut i = 0;
            for d in &ds {
                for _ in 0..count {
                    let text = if several { format!("{payload} #{i}") } else { payload.clone() };
                    s.send(s.host.push(*d, fanout, text.as_bytes()))?;
                    s.step(Duration::from_millis(interval_ms));
                    i += 1;
                }
            }
            Ok(())
        }
        Command::Serve { link, descriptors: d, payload, count, seconds } => {
            let mut s = Session::open(&link)?;
            s.host.serve(descriptors(&d)?);
            s.attach(link.attach_seconds)?;
            let (t0, mut n) = (Instant::now(), 0);
            while !done(n, count, t0, seconds) {
                for r in s.step(Duration::from_millis(20)) {
                    let (Kind::Interest, Some(consumer)) = (r.kind, r.reply) else { continue };
                    println!("interest {}", String::from_utf8_lossy(&r.payload));
                    s.send(s.host.data(consumer, payload.as_bytes()))?;
                    n += 1;
                }
            }
            Ok(())
        }
        Command::Get { link, descriptor, payload, follow_ups, timeout_ms } => {
            let mut s = Session::open(&link)?;
            let d = parse_descriptor(&descriptor).with_context(|| format!("descriptor {descriptor:?}"))?;
            s.attach(link.attach_seconds)?;
            let timeout = Duration::from_millis(timeout_ms);
            let mut producer = None;
            for i in 0..=follow_ups {
                let text = if i == 0 { payload.clone() } else { format!("{payload} #{i}") };
                let interest = match producer {
                    None => s.host.interest(d, text.as_bytes()),
                    Some(p) => s.host.interest_to(p, text.as_bytes()),
                };
                s.send(interest)?;
                let t0 = Instant::now();
                let answer = loop {
                    if let Some(r) = s.step(Duration::from_millis(20)).into_iter().find(|r| r.kind == Kind::Data) {
                        break r;
                    }
                    if t0.elapsed() > timeout {
                        bail!("interest {i} ({text:?}) not answered in {timeout_ms} ms");
                    }
                };
                let from = answer.reply.context("data without its producer's locator")?;
                println!("data {} from {}:{}", String::from_utf8_lossy(&answer.payload), from.tree, from.label.id);
                producer = Some(from);
            }
            Ok(())
        }
    }
}
