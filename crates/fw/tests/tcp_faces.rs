//! TCP faces made by `faces/create`, as NFD makes them: the command is answered once the
//! connection is made (200), or 504 when it is refused, with no face left behind. And a
//! permanent TCP face outlives its connection: a host's face to its hub, made permanent, goes
//! down when the hub stops — it keeps its id and its route, what is sent to it is dropped and
//! counted (`face-down`), and `faces/events` says DOWN (4) — and comes up again (UP, 3) by
//! itself once the hub is back on its port, carrying traffic over the same route. Made
//! persistent instead, the face closes with its connection and takes its route with it. A
//! configured face named by host name waits, down, for a hub that is not up yet; a peer that
//! accepts and closes at once is tried less and less often.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{scratch, Forwarder};
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::{Answer, Client};
use nexthop_tools::traffic;
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Component, DataView, Interest, Name};
use tempfile::TempDir;

mod common;

/// A hub: a forwarder listening on TCP `port`, with a producer for `/hub` on it.
struct Hub {
    forwarder: Option<Forwarder>,
    stop: Arc<AtomicBool>,
    producer: Option<JoinHandle<()>>,
}

impl Hub {
    fn start(dir: &std::path::Path, port: u16) -> Hub {
        let forwarder = Forwarder::start_with(dir, "hub", 1, |cfg| cfg.faces.tcp = format!("127.0.0.1:{port}"));
        let stop = Arc::new(AtomicBool::new(false));
        let prefix = Name::from_uri("/hub").unwrap();
        let producer = traffic::start_producer(&forwarder.unix(), &forwarder.unix(), &prefix, 100, stop.clone()).unwrap();
        Hub { forwarder: Some(forwarder), stop, producer: Some(producer) }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.producer.take() {
            let _ = p.join();
        }
        self.forwarder.take();
    }
}

/// Whether `/hub/<n>` asked of `host` brings Data within 300 ms.
fn fetched(host: &Forwarder, n: u64) -> bool {
    let mut i = Interest::new(Name::from_uri("/hub").unwrap().with(Component::generic(n.to_string().into_bytes())));
    i.lifetime_ms = Some(300);
    matches!(host.client().express(&i, Duration::from_millis(500)), Ok(Answer::Data(_)))
}

/// (FaceEventKind, FaceId) of notification `seq` of `faces/events`, waiting for it.
fn event(c: &mut Client, seq: u64) -> (u64, u64) {
    let mut i = Interest::new(Name::from_uri("/localhost/nfd/faces/events").unwrap().with(Component::sequence_num(seq)));
    i.lifetime_ms = Some(15_000);
    let Ok(Answer::Data(wire)) = c.express(&i, Duration::from_secs(16)) else { panic!("no face event {seq}") };
    let data = DataView::decode(&wire).unwrap();
    let notification = TlvReader::new(data.content().unwrap()).next().unwrap().unwrap();
    let fields: Vec<_> = TlvReader::new(notification.value).map(Result::unwrap).collect();
    let num = |ty| fields.iter().find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap()).unwrap();
    (num(0xc1), num(0x69))
}

/// Face `id`'s FacePersistency in `faces/list`, if it is listed.
fn listed(host: &Forwarder, id: u64) -> Option<u64> {
    let list = host.client().dataset("/localhost/nfd/faces/list").unwrap();
    TlvReader::new(&list).map(Result::unwrap).find_map(|f| {
        let fields: Vec<_> = TlvReader::new(f.value).map(Result::unwrap).collect();
        let num = |ty| fields.iter().find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap());
        (num(0x69) == Some(id)).then(|| num(0x85).unwrap())
    })
}

/// The `faces_down` gauge of `status/counters`.
fn faces_down(host: &Forwarder) -> u64 {
    let counters = nexthop_fw::mgmt::dataset::parse_labelled_counts(&host.client().dataset("/localhost/nfd/status/counters").unwrap());
    counters.iter().find(|(label, _)| label == "faces_down").expect("the gauge").1
}

/// Waits up to `limit` for `done`.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A hub on a free port (its scratch directory, port and forwarder) and a host whose permanent
/// TCP face to it (its id) carries the route `/hub`, once traffic goes through.
fn host_routed_to_hub(tag: &str) -> (TempDir, u16, Hub, Forwarder, u64) {
    let dir = scratch(tag);
    let port = free_port();
    let hub = Hub::start(dir.path(), port);
    let host = Forwarder::start(dir.path(), "host", 1);
    let mut c = host.client();
    let params = ControlParameters { uri: Some(tcp_uri(port)), face_persistency: Some(2), ..Default::default() };
    let made = c.command("faces", "create", &params).unwrap();
    assert_eq!(made.code, 200, "{}", made.text);
    let id = made.body.unwrap().face_id.unwrap();
    let route = ControlParameters { name: Some(Name::from_uri("/hub").unwrap()), face_id: Some(id), ..Default::default() };
    assert_eq!(c.command("rib", "register", &route).unwrap().code, 200);
    assert!(eventually(Duration::from_secs(5), || fetched(&host, 1)), "traffic through the hub");
    (dir, port, hub, host, id)
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `tcp4://127.0.0.1:<port>`.
fn tcp_uri(port: u16) -> String {
    FaceUri::Tcp(([127, 0, 0, 1], port).into()).to_string()
}

#[test]
fn a_permanent_tcp_face_connects_again_and_keeps_its_route() {
    let (dir, port, hub, host, id) = host_routed_to_hub("reconnect");
    let mut c = host.client();
    // The face's notifications from here on (the test's own connections have theirs too): its
    // creation was one of those before.
    let mut events = host.client();
    let mut seq = (1..).find(|&s| event(&mut events, s) == (1, id)).unwrap();
    let mut next_event = || loop {
        seq += 1;
        let (kind, face) = event(&mut events, seq);
        if face == id {
            break (kind, face);
        }
    };

    // The hub stops: the face goes down and stays, with its route.
    drop(hub);
    assert_eq!(next_event(), (4, id), "DOWN");
    assert_eq!(listed(&host, id), Some(2), "still listed, permanent");
    assert!(host.has_route(&Name::from_uri("/hub").unwrap()), "the route stays");
    assert!(!fetched(&host, 2));
    assert!(host.drops("face-down") >= 1, "the Interest sent to the down face is counted");
    assert_eq!(faces_down(&host), 1, "status/counters' gauge");

    // The hub comes back on its port: the face connects by itself (the first attempt after
    // the loss was refused; the next comes within a second or two) and the route carries
    // traffic again.
    let hub = Hub::start(dir.path(), port);
    assert_eq!(next_event(), (3, id), "UP");
    assert!(eventually(Duration::from_secs(5), || fetched(&host, 3)), "traffic through the hub again");
    assert_eq!(faces_down(&host), 0);
    assert_eq!(listed(&host, id), Some(2));

    // Made persistent, the face closes with its connection, and its route goes.
    let update = ControlParameters { face_id: Some(id), face_persistency: Some(0), ..Default::default() };
    assert_eq!(c.command("faces", "update", &update).unwrap().code, 200);
    drop(hub);
    assert_eq!(next_event(), (2, id), "DESTROYED");
    assert_eq!(listed(&host, id), None);
    assert!(!host.has_route(&Name::from_uri("/hub").unwrap()));
}

/// A down permanent face made persistent by `faces/update` is closed, as NFD closes it: it can
/// no longer wait for its connection.
#[test]
fn a_down_face_made_persistent_closes() {
    let (_dir, _, hub, host, id) = host_routed_to_hub("reconnect-update");
    let mut c = host.client();
    drop(hub);
    // Down once what is routed to it is dropped as such.
    assert!(eventually(Duration::from_secs(5), || !fetched(&host, 2) && host.drops("face-down") > 0), "down");
    assert_eq!(listed(&host, id), Some(2), "down, still listed");
    let update = ControlParameters { face_id: Some(id), face_persistency: Some(0), ..Default::default() };
    assert_eq!(c.command("faces", "update", &update).unwrap().code, 200);
    assert!(eventually(Duration::from_secs(2), || listed(&host, id).is_none()), "closed");
    assert!(!host.has_route(&Name::from_uri("/hub").unwrap()), "with its route");
}

/// `faces/create` of a TCP face is answered once connected: 504 for a port nobody listens on
/// (and no face made), 200 with the face for one a forwarder listens on.
#[test]
fn faces_create_answers_once_connected() {
    let dir = scratch("tcp-create");
    let (closed, port) = (free_port(), free_port());
    let _hub = Hub::start(dir.path(), port);
    let host = Forwarder::start(dir.path(), "host", 1);
    let mut c = host.client();
    let uri = tcp_uri;
    let faces_to = |uri: &str| {
        let list = host.client().dataset("/localhost/nfd/faces/list").unwrap();
        TlvReader::new(&list).map(Result::unwrap).filter(|f| f.value.windows(uri.len()).any(|w| w == uri.as_bytes())).count()
    };
    let refused = c.command("faces", "create", &ControlParameters { uri: Some(uri(closed)), ..Default::default() }).unwrap();
    assert_eq!(refused.code, 504, "{}", refused.text);
    assert!(refused.text.starts_with("Connection failed: "), "{}", refused.text);
    assert_eq!(faces_to(&uri(closed)), 0, "no face left behind");
    let made = c.command("faces", "create", &ControlParameters { uri: Some(uri(port)), ..Default::default() }).unwrap();
    assert_eq!(made.code, 200, "{}", made.text);
    let body = made.body.unwrap();
    assert_eq!(body.uri.as_deref(), Some(uri(port).as_str()));
    assert!(body.local_uri.unwrap().starts_with("tcp4://127.0.0.1:"));
    assert_eq!(faces_to(&uri(port)), 1);
    // Asked again: the face there (409).
    let again = c.command("faces", "create", &ControlParameters { uri: Some(uri(port)), ..Default::default() }).unwrap();
    assert_eq!((again.code, again.body.unwrap().face_id), (409, body.face_id));
}

/// A peer that accepts each connection and closes it at once: the permanent face does not
/// connect again as fast as it is closed (NFD's would start over at once each time) but backs
/// off — 1 s, then 2 s before the next attempt, and so on.
#[test]
fn a_peer_that_closes_at_once_is_tried_less_and_less_often() {
    let dir = scratch("tcp-flapping");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            counted.fetch_add(1, Ordering::Relaxed);
            drop(conn);
        }
    });
    let host = Forwarder::start(dir.path(), "host", 1);
    let uri = tcp_uri(port);
    let params = ControlParameters { uri: Some(uri), face_persistency: Some(2), ..Default::default() };
    let made = host.client().command("faces", "create", &params).unwrap();
    assert_eq!(made.code, 200, "{}", made.text);
    let id = made.body.unwrap().face_id.unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // The connection faces/create made, the attempt at once after it closed, and the one 2 s
    // after that attempt's connection closed (it had lasted less than its 1 s).
    let n = accepted.load(Ordering::Relaxed);
    assert!((2..=3).contains(&n), "{n} connections in 2.5 s");
    assert_eq!(listed(&host, id), Some(2), "the face stays, down");
}

/// A configured face (`[[face]]`, permanent) to its hub by host name, with a route through it:
/// the hub is not up yet when the host starts, so the face goes down at once and keeps trying;
/// once the hub is up, the route carries traffic.
#[test]
fn a_configured_face_waits_for_its_hub() {
    use nexthop_fw::conf::config::{StaticFace, StaticRoute};
    let dir = scratch("tcp-configured");
    let port = free_port();
    let by_name = format!("tcp4://localhost:{port}");
    let host = Forwarder::start_with(dir.path(), "host", 1, |cfg| {
        cfg.face.push(StaticFace { uri: by_name.clone(), local: None });
        cfg.route.push(StaticRoute { prefix: "/hub".into(), face: by_name.clone(), cost: 0 });
    });
    let hub_uri = tcp_uri(port);
    let (id, persistency) = {
        let list = host.client().dataset("/localhost/nfd/faces/list").unwrap();
        TlvReader::new(&list)
            .map(Result::unwrap)
            .find_map(|f| {
                let fields: Vec<_> = TlvReader::new(f.value).map(Result::unwrap).collect();
                let num = |ty| fields.iter().find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap()).unwrap();
                fields.iter().any(|t| t.ty == 0x72 && t.value == hub_uri.as_bytes()).then(|| (num(0x69), num(0x85)))
            })
            .expect("the configured face, by its address")
    };
    assert_eq!(persistency, 2, "permanent");
    assert!(!fetched(&host, 1), "no hub yet");
    let _hub = Hub::start(dir.path(), port);
    assert!(eventually(Duration::from_secs(10), || fetched(&host, 2)), "traffic once the hub is up");
    assert_eq!(listed(&host, id), Some(2), "the same face");
}

/// A TCP face is local when both its ends' addresses are in `faces.tcp_local` and not in
/// `tcp_local_exclude` (NFD's `face_system.tcp.local`): by default a client on loopback is, and
/// may ask for `/localhost/nfd` datasets over TCP; with loopback excluded the same client's
/// face is of another host's scope, and its `/localhost` Interest is dropped.
#[test]
fn the_tcp_local_rules_decide_a_tcp_faces_scope() {
    let dir = scratch("tcp-local");
    for (exclude, local) in [(vec![], true), (vec!["127.0.0.0/8".to_string()], false)] {
        let port = free_port();
        let fw = Forwarder::start_with(dir.path(), &format!("local-{local}"), 1, |cfg| {
            cfg.faces.tcp = format!("127.0.0.1:{port}");
            cfg.faces.tcp_local_exclude = exclude;
        });
        let mut over_tcp = Client::connect(&nexthop_fw::sys::interfaces::parse_face_uri(&tcp_uri(port)).unwrap()).unwrap();
        let mut status = Interest::new(Name::from_uri("/localhost/nfd/status/general").unwrap());
        status.can_be_prefix = true;
        status.must_be_fresh = true;
        status.lifetime_ms = Some(500);
        let answered = matches!(over_tcp.express(&status, Duration::from_secs(1)), Ok(Answer::Data(_)));
        assert_eq!(answered, local, "a /localhost Interest over TCP answered");
        let list = fw.client().dataset("/localhost/nfd/faces/list").unwrap();
        let scopes: Vec<(String, u64)> = TlvReader::new(&list)
            .map(Result::unwrap)
            .map(|f| {
                let fields: Vec<_> = TlvReader::new(f.value).map(Result::unwrap).collect();
                let field = |ty| fields.iter().find(|t| t.ty == ty).unwrap();
                (String::from_utf8_lossy(field(0x72).value).into_owned(), read_nonneg(0x84, field(0x84).value).unwrap())
            })
            .filter(|(uri, _)| uri.starts_with("tcp"))
            .collect();
        assert_eq!(scopes.len(), 1, "{scopes:?}");
        assert_eq!(scopes[0].1, u64::from(local), "FaceScope: 1 local, 0 non-local ({scopes:?})");
    }
}
