//! Real NDN applications through nexthop, in another library: NDNts, the TypeScript NDN library
//! of browser and Node.js apps (its Node.js transports, NFD prefix registration, segmented
//! objects and StateVectorSync; `scripts/setup.sh` installs them in `.peers/ndnts`). The programs are
//! `tests/ndnts_apps.mjs`, run by Node.js. A producer registers its prefix over the Unix socket
//! and serves a 3 MB object; consumers fetch it over the Unix socket, over UDP (where the
//! forwarder cuts its 8 KB segments into NDNLPv2 fragments and NDNts puts them back together)
//! and over a WebSocket (NDNts's `WsTransport`, what browser apps use), and must get every byte.
//! NDNts's `FaceQuery` then lists the faces of one URI scheme through `faces/query`, and its
//! `ChannelStatus` the listeners through `faces/channels`. A producer
//! over a WebSocket (as a browser app publishes) registers under `/localhop/nfd`, which a
//! forwarder serves only when configured to. A producer registers with a prefix announcement
//! (`rib/announce`) instead of ControlParameters. And NDNts's management of the content store, as an
//! operator's tool would: `cs/info`, `invokeCsErase` and `cs/config`. And NDNts's UDP multicast
//! face on the LAN nexthop's multicast face joins: a producer there serves a consumer behind
//! nexthop, and a consumer there fetches from a producer behind nexthop. And StateVectorSync
//! (`@ndn/svs`, `tests/ndnts_svs.mjs`): three participants of a sync group with the multicast
//! strategy, on one forwarder and across two, each learning the others' publications and
//! fetching them (with best-route instead, tried by hand, the group did not sync).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, Forwarder};
use nexthop_tools::client::Answer;
use nexthop_wire::{Interest, NackReason, Name};

mod common;

const NDNTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.peers/ndnts");
const APPS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ndnts_apps.mjs");
const SVS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ndnts_svs.mjs");
const OBJECT_BYTES: &str = "3000000";

/// A child process, killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `node <script> <args>`, the script copied next to NDNts's `node_modules` (an ES module finds
/// its packages from where it lies).
fn node(script: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("node");
    c.arg(script).args(args);
    c
}

/// The apps' script, copied into `.peers/ndnts` under a name of this test and process.
fn installed_script(test: &str) -> PathBuf {
    install(APPS, test)
}

/// Script `source`, copied into `.peers/ndnts` under a name of this test and process.
fn install(source: &str, test: &str) -> PathBuf {
    assert!(Path::new(NDNTS).join("node_modules/@ndn/svs").is_dir(), "NDNts is in {NDNTS} (scripts/setup.sh installs it)");
    let script = Path::new(NDNTS).join(format!("apps-{test}-{}.mjs", std::process::id()));
    std::fs::copy(source, &script).unwrap();
    script
}

/// Starts the NDNts producer `role` (`produce` or `announce`) of `prefix` (an object of `bytes`)
/// on `fw`'s Unix socket and waits until its route is in the FIB.
fn registered_producer(fw: &Forwarder, script: &Path, role: &str, prefix: &str, bytes: &str) -> Killed {
    let producer =
        Killed(node(script, &[role, &fw.socket, prefix, bytes]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("node runs"));
    fw.wait_for_route(prefix, &format!("the NDNts producer ({role})"));
    producer
}

#[test]
fn an_ndnts_producer_serves_ndnts_consumers_over_unix_udp_and_websocket() {
    let dir = scratch("ndnts");
    let fw = Forwarder::start(&dir, "fw", 1);
    let script = installed_script("fetch");
    let prefix = "/ndnts/object";
    let _producer = registered_producer(&fw, &script, "produce", prefix, OBJECT_BYTES);
    for face in [fw.socket.clone(), format!("udp:{}:{}", fw.udp.ip(), fw.udp.port()), format!("ws://{}", fw.websocket)] {
        let out = node(&script, &["fetch", &face, prefix, OBJECT_BYTES]).output().expect("node runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(said.trim(), format!("intact {OBJECT_BYTES}"), "over {face}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // NDNts's faces/query: the Unix faces (the producer's and its own), and no UDP face.
    for (scheme, at_least) in [("unix", 2), ("udp4", 0)] {
        let out = node(&script, &["faces", &fw.socket, scheme, "0"]).output().expect("node runs");
        let said = String::from_utf8_lossy(&out.stdout);
        let uris: Vec<&str> = said.lines().collect();
        assert!(
            uris.len() >= at_least && uris.iter().all(|u| u.starts_with(&format!("{scheme}://"))),
            "{scheme}: {said:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // NDNts's ChannelStatus dataset: every listener.
    let out = node(&script, &["channels", &fw.socket]).output().expect("node runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        [format!("unix://{}", fw.socket), format!("udp4://{}", fw.udp), format!("ws://{}", fw.websocket)],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_file(&script);
}

#[test]
fn an_ndnts_producer_over_a_websocket_registers_under_localhop_when_allowed() {
    let dir = scratch("ndnts-localhop");
    let script = installed_script("localhop");
    let prefix = "/browser/object";
    for allowed in [false, true] {
        let fw = Forwarder::start_with(&dir, &format!("fw{allowed}"), 1, |c| c.forwarder.localhop_prefix_registration = allowed);
        let ws = format!("ws://{}", fw.websocket);
        let _producer = Killed(
            node(&script, &["produce", &ws, prefix, "200000"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("node runs"),
        );
        let started = Instant::now();
        while !fw.has_route(&Name::from_uri(prefix).unwrap()) && started.elapsed() < Duration::from_secs(if allowed { 20 } else { 3 }) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(fw.has_route(&Name::from_uri(prefix).unwrap()), allowed, "registered over the WebSocket: allowed = {allowed}");
        if allowed {
            let out = node(&script, &["fetch", &fw.socket, prefix, "200000"]).output().expect("node runs");
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "intact 200000", "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let _ = std::fs::remove_file(&script);
}

#[test]
fn ndnts_erases_and_configures_the_content_store() {
    let dir = scratch("ndnts-cs");
    let fw = Forwarder::start(&dir, "fw", 2);
    let script = installed_script("cs");
    let prefix = "/ndnts/cached";
    let name = Name::from_uri(prefix).unwrap();
    let producer = registered_producer(&fw, &script, "produce", prefix, "200000");
    let started = Instant::now();
    let fetch = || node(&script, &["fetch", &fw.socket, prefix, "200000"]).output().expect("node runs");
    assert_eq!(String::from_utf8_lossy(&fetch().stdout).trim(), "intact 200000");
    drop(producer);
    while fw.has_route(&name) {
        assert!(started.elapsed() < Duration::from_secs(30), "the producer's route outlived it");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = fetch();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "intact 200000",
        "from the content store: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = node(&script, &["cs", &fw.socket, prefix, "1001"]).output().expect("node runs");
    let said = String::from_utf8_lossy(&out.stdout);
    let line = |label: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(&format!("{label} ")))
            .unwrap_or_else(|| panic!("{label}: {said} {}", String::from_utf8_lossy(&out.stderr)))
            .to_string()
    };
    let entries = |info: &str| info.split(' ').find_map(|f| f.strip_prefix("entries=")).unwrap().parse::<u64>().unwrap();
    let before = line("before");
    assert!(before.ends_with("capacity=16384 admit=true serve=true"), "{before}");
    let erased: u64 = line("erased").parse().unwrap();
    assert!(erased >= 20, "the object's segments: {erased}");
    assert_eq!(entries(&line("after")), entries(&before) - erased);
    assert_eq!(line("config"), "200");
    assert!(line("configured").ends_with("capacity=1002 admit=true serve=false"), "rounded up for two threads: {said}");
    // Erased, and its producer gone: a Nack.
    let mut c = fw.client();
    let mut i = Interest::new(name);
    i.can_be_prefix = true;
    i.nonce = Some(c.next_nonce());
    assert_eq!(c.express(&i, Duration::from_secs(2)).unwrap(), Answer::Nack(NackReason::NoRoute));
    let _ = std::fs::remove_file(&script);
}

#[test]
fn an_ndnts_producer_registers_with_a_prefix_announcement() {
    let dir = scratch("ndnts-announce");
    let fw = Forwarder::start(&dir, "fw", 1);
    let script = installed_script("announce");
    let prefix = "/announced/object";
    let name = Name::from_uri(prefix).unwrap();
    let _producer = registered_producer(&fw, &script, "announce", prefix, "200000");
    // The route is the announcement's: origin prefixann (129), cost 2048, child-inherit, with
    // the announcement's ten minutes to live.
    use nexthop_wire::tlv::TlvReader;
    use nexthop_wire::varnum::read_nonneg;
    let rib = fw.client().dataset("/localhost/nfd/rib/list").unwrap();
    let entry =
        TlvReader::new(&rib).map(Result::unwrap).find(|e| TlvReader::new(e.value).next().unwrap().unwrap().value == name.value()).unwrap();
    let route = TlvReader::new(entry.value).map(Result::unwrap).find(|t| t.ty == 0x81).expect("a route");
    let field = |ty| TlvReader::new(route.value).map(Result::unwrap).find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap());
    assert_eq!((field(0x6f), field(0x6a), field(0x6c)), (Some(129), Some(2048), Some(1)));
    assert!(field(0x6d).is_some_and(|ms| ms > 500_000 && ms <= 600_000), "{:?}", field(0x6d));
    let out = node(&script, &["fetch", &fw.socket, prefix, "200000"]).output().expect("node runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "intact 200000", "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_file(&script);
}

/// NDNts's own UDP multicast face (`UdpTransport.createMulticastFace`) and nexthop's, in one
/// group on loopback. An NDNts producer on the LAN (no registration: nexthop routes the prefix
/// to its multicast face) serves an NDNts consumer on nexthop's Unix socket; an NDNts consumer
/// on the LAN fetches from an NDNts producer registered on nexthop's Unix socket — nexthop
/// cutting the 8 KB segments it sends to the group into NDNLPv2 fragments, NDNts putting them
/// back together.
#[test]
fn ndnts_multicast_faces_meet_nexthops_on_the_lan() {
    use nexthop_fw::mgmt::params::ControlParameters;
    let dir = scratch("ndnts-multicast");
    let port = 20_000 + std::process::id() % 10_000;
    let fw = Forwarder::start_with(&dir, "fw", 1, |c| {
        c.faces.udp_multicast = format!("224.0.23.170:{port}");
        c.faces.udp_multicast_interfaces = vec!["127.0.0.1".into()];
    });
    let script = installed_script("multicast");
    let lan = format!("mcast:127.0.0.1:{port}");
    // The multicast face: the one whose URI is the group's.
    let list = fw.client().dataset("/localhost/nfd/faces/list").unwrap();
    let group_uri = format!("udp4://224.0.23.170:{port}");
    let face_id = nexthop_wire::tlv::TlvReader::new(&list)
        .map(Result::unwrap)
        .find_map(|f| {
            let fields: Vec<_> = nexthop_wire::tlv::TlvReader::new(f.value).map(Result::unwrap).collect();
            let is_group = fields.iter().any(|t| t.ty == 0x72 && t.value == group_uri.as_bytes());
            let id = fields.iter().find(|t| t.ty == 0x69).map(|t| nexthop_wire::varnum::read_nonneg(t.ty, t.value).unwrap());
            is_group.then_some(id).flatten()
        })
        .expect("a multicast face");

    // An NDNts producer on the LAN, a consumer behind nexthop.
    let _on_lan = Killed(
        node(&script, &["produce", &lan, "/lan/object", "300000"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("node runs"),
    );
    let route = ControlParameters { name: Some(Name::from_uri("/lan").unwrap()), face_id: Some(face_id), ..Default::default() };
    assert_eq!(fw.client().command("rib", "register", &route).unwrap().code, 200);
    std::thread::sleep(Duration::from_millis(500)); // the producer's sockets open
    let out = node(&script, &["fetch", &fw.socket, "/lan/object", "300000"]).output().expect("node runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "intact 300000", "{}", String::from_utf8_lossy(&out.stderr));

    // An NDNts producer behind nexthop, a consumer on the LAN.
    let _producer = registered_producer(&fw, &script, "produce", "/behind/object", "300000");
    let out = node(&script, &["fetch", &lan, "/behind/object", "300000"]).output().expect("node runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "intact 300000", "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_file(&script);
}

/// The StateVectorSync group's prefix, with the multicast strategy (as SVS's documentation has
/// operators set it: each sync Interest must reach every other participant).
const SVS_GROUP: &str = "/svs-group";

/// Sets the multicast strategy on [`SVS_GROUP`] at `fw`.
fn multicast_group(fw: &Forwarder) {
    use nexthop_fw::mgmt::params::ControlParameters;
    let set = ControlParameters {
        name: Some(Name::from_uri(SVS_GROUP).unwrap()),
        strategy: Some(Name::from_uri("/localhost/nfd/strategy/multicast").unwrap()),
        ..Default::default()
    };
    assert_eq!(fw.client().command("strategy-choice", "set", &set).unwrap().code, 200);
}

/// Starts one NDNts SVS participant (tests/ndnts_svs.mjs) per (forwarder socket, name), `rounds`
/// sequence numbers each, and waits (at most 30 s) until every one has fetched every other's.
fn sync_participants(script: &Path, participants: &[(&str, &str)], rounds: usize) {
    use std::io::{BufRead, BufReader};
    let (tx, rx) = std::sync::mpsc::channel();
    let mut running = Vec::new();
    // What the participants wrote to stderr (the updates each heard), for a failure's message.
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    for &(socket, name) in participants {
        let args = [socket, SVS_GROUP, name, &participants.len().to_string(), &rounds.to_string()];
        let mut child = node(script, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("node runs");
        let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let tx = tx.clone();
        let name = name.to_string();
        let said = said.clone();
        let who = name.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                said.lock().unwrap().push(format!("{who}: {line}"));
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send((name.clone(), line));
            }
        });
        running.push(Killed(child));
    }
    let want = format!("SYNCED {} peers {rounds} each", participants.len() - 1);
    let mut synced = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while synced.len() < participants.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let (who, line) = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("synced by 30 s: only {synced:?}; they heard:\n{}", said.lock().unwrap().join("\n")));
        assert_eq!(line, want, "{who}");
        synced.insert(who);
    }
}

/// StateVectorSync (NDNts's `@ndn/svs`, the sync of NDN's chat and workspace apps) among three
/// participants on one forwarder: each registers its name and the group, publishes five sequence
/// numbers, learns the others' from the sync Interests the forwarder multicasts, and fetches
/// each new Data from its publisher.
#[test]
fn ndnts_state_vector_sync_through_one_forwarder() {
    let dir = scratch("ndnts-svs");
    let fw = Forwarder::start(&dir, "fw", 2);
    multicast_group(&fw);
    let script = install(SVS, "svs");
    sync_participants(&script, &[(&fw.socket, "/alice"), (&fw.socket, "/bob"), (&fw.socket, "/carol")], 5);
    let _ = std::fs::remove_file(&script);
}

/// The same with one participant behind a second forwarder, joined to the first by UDP faces:
/// the group and the participants' names are routed across both ways, so a sync Interest from
/// alice reaches bob beside her and, through both forwarders, carol.
#[test]
fn ndnts_state_vector_sync_across_two_forwarders() {
    use nexthop_fw::mgmt::params::ControlParameters;
    let dir = scratch("ndnts-svs2");
    let (a, b) = (Forwarder::start(&dir, "a", 1), Forwarder::start(&dir, "b", 1));
    let link = |from: &Forwarder, to: &Forwarder, prefixes: &[&str]| {
        let mut ctl = from.client();
        let made =
            ctl.command("faces", "create", &ControlParameters { uri: Some(format!("udp4://{}", to.udp)), ..Default::default() }).unwrap();
        assert_eq!(made.code, 200, "{}", made.text);
        let face_id = made.body.unwrap().face_id;
        for p in prefixes {
            let route = ControlParameters { name: Some(Name::from_uri(p).unwrap()), face_id, ..Default::default() };
            assert_eq!(ctl.command("rib", "register", &route).unwrap().code, 200);
        }
    };
    link(&a, &b, &[SVS_GROUP, "/carol"]);
    link(&b, &a, &[SVS_GROUP, "/alice", "/bob"]);
    multicast_group(&a);
    multicast_group(&b);
    let script = install(SVS, "svs2");
    sync_participants(&script, &[(&a.socket, "/alice"), (&a.socket, "/bob"), (&b.socket, "/carol")], 5);
    let _ = std::fs::remove_file(&script);
}
