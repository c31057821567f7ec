//! The `forwarder` experiment's series `two_hops`: a consumer and a producer on two forwarders
//! joined by one face, as forwarders carry traffic across a network.
//!
//! # Overview
//! Two forwarders of one system, A and B. B's producer registers `/gen/hop-<link>` on B's Unix
//! socket; on A, `faces/create` makes a face to B and `rib/register` routes the prefix to it; A's
//! consumer keeps [`WINDOW`] Interests outstanding on A's Unix socket, so every Interest
//! crosses A, the link and B to the producer, and its Data comes back the same way. Links:
//! - `udp`: B's UDP listener on loopback (`udp4://`), for both systems;
//! - `ether` (nexthop only; NDNd has no Ethernet faces): the two ends of a veth pair made for
//!   the run, a unicast Ethernet face from A's end to B's address, B listening (its face back
//!   is made on demand). Without CAP_NET_ADMIN (to make the pair) the row is left out and the
//!   summary says why;
//! - `udp-loss-<p>`: UDP through a relay that loses each datagram with probability p% each way
//!   ([`nexthop_tools::lossy_link`]; p = 0: the relay's own cost), both faces made with
//!   `faces/create`; for nexthop also
//!   `udp-loss-<p>-reliability`, both faces with NDNLPv2 link reliability on (NDNd has none).
//!   An Interest unanswered after the consumer's 250 ms counts as lost, and its window slot
//!   moves on.
//!
//! Every Data (1000 bytes of content) fits one datagram or frame. Rows carry the consumer's
//! rate and round trips and A's resident memory.

use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::face::FLAG_LP_RELIABILITY;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::Client;
use nexthop_tools::lossy_link::{random_loss, LossyLink};
use nexthop_tools::traffic;

use super::forwarder_traffic::{with_traffic, Producer, WINDOW};
use crate::peers::forwarder::Forwarder;
use crate::peers::veth::VethPair;
use crate::plot::{Chart, Plot};
use crate::Row;

/// Content bytes per Data.
const PAYLOAD: usize = 1000;

/// Makes a face on `from` with `params` through its management: its id.
fn create_face(from: &Forwarder, params: &ControlParameters) -> anyhow::Result<u64> {
    let r = Client::connect(&from.unix)?.command("faces", "create", params)?;
    anyhow::ensure!(matches!(r.code, 200 | 409), "{} faces/create {:?}: {} {}", from.system, params.uri, r.code, r.text);
    r.body.and_then(|b| b.face_id).ok_or_else(|| anyhow::anyhow!("faces/create answered without a FaceId"))
}

/// A's face to B over `link` (through the relay `lossy`, for a lossy link; B's face back to it
/// too), made through management: A's face's id.
fn face_to(a: &Forwarder, b: &Forwarder, link: &Link, lossy: Option<&LossyLink>) -> anyhow::Result<u64> {
    let params = match (link, lossy) {
        (Link::Lossy { reliability, .. }, Some(relay)) => {
            let with = |uri: String| {
                let flag = reliability.then_some(FLAG_LP_RELIABILITY);
                ControlParameters { uri: Some(uri), flags: flag, mask: flag, ..Default::default() }
            };
            create_face(b, &with(format!("udp4://{}", relay.far)))?;
            with(format!("udp4://{}", relay.near))
        }
        (Link::Ether(pair), _) => ControlParameters {
            uri: Some(format!("ether://[{}]", VethPair::mac(&pair.b)?)),
            local_uri: Some(format!("dev://{}", pair.a)),
            ..Default::default()
        },
        _ => ControlParameters { uri: Some(b.udp.to_string()), ..Default::default() },
    };
    create_face(a, &params)
}

/// What joins A and B.
enum Link {
    Udp,
    Ether(VethPair),
    /// UDP through a relay losing `loss_pct`% each way.
    Lossy {
        loss_pct: u32,
        reliability: bool,
    },
}

impl Link {
    fn name(&self) -> String {
        match self {
            Link::Udp => "udp".into(),
            Link::Ether(_) => "ether".into(),
            Link::Lossy { loss_pct, reliability: false } => format!("udp-loss-{loss_pct}"),
            Link::Lossy { loss_pct, reliability: true } => format!("udp-loss-{loss_pct}-reliability"),
        }
    }
}

/// Loss rates of the lossy links (%), quick and full runs (0: the relay alone, what it costs).
const LOSS_PCT_QUICK: [u32; 1] = [5];
const LOSS_PCT: [u32; 3] = [0, 1, 5];

/// The series for `system`, its forwarders started by `start(name, Ethernet interface)` ("a" or
/// "b"; an interface for the `ether` link): one row per link it has, and for each link left
/// out, why.
pub(super) fn measure(
    system: &str,
    start: impl Fn(&str, Option<String>) -> anyhow::Result<Forwarder>,
    seconds: f64,
    quick: bool,
) -> anyhow::Result<(Vec<Row>, Vec<String>)> {
    let mut links = vec![Link::Udp];
    let mut left_out = Vec::new();
    if system == "nexthop" {
        match VethPair::new(&format!("nxh{}", std::process::id() % 100_000)) {
            Ok(pair) => links.push(Link::Ether(pair)),
            Err(e) => left_out.push(format!("{system} two hops over ether: left out, no veth pair ({e})")),
        }
    }
    for &loss_pct in if quick { &LOSS_PCT_QUICK[..] } else { &LOSS_PCT[..] } {
        links.push(Link::Lossy { loss_pct, reliability: false });
        if system == "nexthop" {
            links.push(Link::Lossy { loss_pct, reliability: true });
        }
    }
    let mut rows = Vec::new();
    for (i, link) in links.iter().enumerate() {
        let (a_if, b_if) = match link {
            Link::Ether(pair) => (Some(pair.a.clone()), Some(pair.b.clone())),
            _ => (None, None),
        };
        let a = start("a", a_if)?;
        let b = start("b", b_if)?;
        let lossy = match link {
            Link::Lossy { loss_pct, .. } => {
                let (p, seed) = (f64::from(*loss_pct) / 100.0, 0x5eed + i as u64);
                let (FaceUri::Udp(near), FaceUri::Udp(far)) = (&a.udp, &b.udp) else { anyhow::bail!("a UDP listener") };
                Some(LossyLink::start(*near, *far, random_loss(p, seed), random_loss(p, seed ^ 0xffff))?)
            }
            _ => None,
        };
        let producer = Producer::start(&b, "unix", &format!("hop-{}", link.name()), PAYLOAD)?;
        let face = face_to(&a, &b, link, lossy.as_ref())?;
        let route = ControlParameters { name: Some(producer.prefix.clone()), face_id: Some(face), ..Default::default() };
        let r = Client::connect(&a.unix)?.command("rib", "register", &route)?;
        anyhow::ensure!(r.code == 200, "{system} rib/register: {} {}", r.code, r.text);
        let r = traffic::run_consumer(&a.unix, &producer.prefix, WINDOW, PAYLOAD, std::time::Duration::from_secs_f64(seconds))?;
        let kips = r.satisfied as f64 / r.seconds / 1e3;
        eprintln!("  {system} two hops over {}: {kips:.1} k/s", link.name());
        let (loss_pct, reliability) = match link {
            Link::Lossy { loss_pct, reliability } => (*loss_pct, *reliability),
            _ => (0, false),
        };
        let row = Row::new(system)
            .with("transport", "two-hops")
            .with("link", link.name())
            .with("loss_pct", u64::from(loss_pct))
            .with("reliability", reliability)
            .with("datagrams_lost", lossy.as_ref().map_or(0, LossyLink::lost))
            .with("fib_routes", 0u64)
            .with("payload_bytes", PAYLOAD as u64)
            .with("threads", 1u64)
            .with("window", WINDOW as u64);
        rows.push(with_traffic(row, &r, &a));
    }
    Ok((rows, left_out))
}

/// The series' chart: thousand satisfied Interests/s by link, one bar per system.
pub(super) fn plot(rows: &[Row]) -> Option<Plot> {
    let hops: Vec<&Row> = rows.iter().filter(|r| r.str("transport") == Some("two-hops")).collect();
    if hops.is_empty() {
        return None;
    }
    let mut groups: Vec<String> = Vec::new();
    for r in &hops {
        if let Some(l) = r.str("link") {
            if !groups.iter().any(|g| g == l) {
                groups.push(l.to_string());
            }
        }
    }
    let series = super::forwarder_traffic::SYSTEMS
        .iter()
        .map(|&system| {
            let at = |link: &String| {
                hops.iter()
                    .find(|r| r.str("system") == Some(system) && r.str("link") == Some(link.as_str()))
                    .and_then(|r| r.num("kinterests_per_s"))
                    .unwrap_or(f64::NAN)
            };
            (system.to_string(), groups.iter().map(at).collect())
        })
        .collect();
    Some(Plot {
        file_tag: "two-hops".into(),
        title: format!("Two forwarders joined by one face, lossy or not: satisfied Interests/s ({PAYLOAD}-byte Data, 1 thread each)"),
        y_label: "thousand Interests/s".into(),
        chart: Chart::Bars { groups, series },
    })
}
