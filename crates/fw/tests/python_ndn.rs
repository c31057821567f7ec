//! Real NDN applications through nexthop: unmodified python-ndn programs (tests/ndn_apps.py,
//! both its current `appv2` API and the older `NDNApp`) from the virtual environment that
//! scripts/setup.sh makes, with a keychain made by python-ndn's `pyndnsec`. Each test starts
//! its own forwarder(s) in-process on a private Unix socket.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{mac_of, scratch, Forwarder, VethPair};
use nexthop_fw::mgmt::command_key::CommandKey;
use nexthop_fw::mgmt::keychain::Keychain;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::Answer;
use nexthop_wire::{Component, DataView, Interest, Name};
use tempfile::TempDir;

mod common;

const VENV_BIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin");
const APPS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ndn_apps.py");

/// A private HOME with a python-ndn keychain (made by `pyndnsec`).
fn keychain_home(test: &str) -> TempDir {
    keychain_with(test, "/nexthop-test", "e")
}

/// A private HOME whose python-ndn keychain's default identity is `identity`, with a key of
/// `key_type` (`pyndnsec New-Item -t`: `e` ECDSA P-256, `r` RSA).
fn keychain_with(test: &str, identity: &str, key_type: &str) -> TempDir {
    let dir = scratch(&format!("pyndn-{test}"));
    for args in [&["Init-Pib"][..], &["New-Item", "-t", key_type, identity]] {
        pyndnsec(dir.path(), args);
    }
    dir
}

/// Runs `pyndnsec` on the keychain in `home`; its output.
fn pyndnsec(home: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(format!("{VENV_BIN}/pyndnsec"))
        .args(args)
        .env("HOME", home)
        .stderr(Stdio::null())
        .output()
        .expect("pyndnsec runs (scripts/setup.sh installs python-ndn in .venv)");
    assert!(out.status.success(), "pyndnsec {args:?}");
    out.stdout
}

fn app(home: &Path, socket: &str, args: &[&str]) -> Command {
    let mut c = Command::new(format!("{VENV_BIN}/python"));
    c.arg(APPS).args(args).env("HOME", home).env("NDN_CLIENT_TRANSPORT", format!("unix://{socket}"));
    c
}

/// A producer process, killed on drop.
struct Producer(Child);

impl Drop for Producer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn producer(home: &Path, socket: &str, api: &str, prefix: &str) -> Producer {
    ready_app(home, socket, &[&format!("produce-{api}"), prefix])
}

/// An app of `ndn_apps.py` that serves until killed, once it has printed READY.
fn ready_app(home: &Path, socket: &str, args: &[&str]) -> Producer {
    let mut child = app(home, socket, args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python runs");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(Duration::from_secs(20)).expect("producer prints READY");
    assert_eq!(line, "READY");
    Producer(child)
}

/// A `pyndntools` command (python-ndn's tools) with the keychain in `home`, through the
/// forwarder's Unix socket `socket`.
fn pyndntools(home: &Path, socket: &str, args: &[&str]) -> Command {
    let mut c = Command::new(format!("{VENV_BIN}/pyndntools"));
    c.args(args).env("HOME", home).env("NDN_CLIENT_TRANSPORT", format!("unix://{socket}"));
    c
}

fn run(home: &Path, socket: &str, args: &[&str]) -> String {
    let out = app(home, socket, args).output().expect("python runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn apps_register_and_fetch_by_exact_name_and_prefix_with_both_apis() {
    let keychain = keychain_home("fetch");
    let home = keychain.path();
    let fw = Forwarder::start(home, "fw", 1);
    let _p2 = producer(home, &fw.socket, "v2", "/app2");
    let _p1 = producer(home, &fw.socket, "v1", "/app1");
    assert_eq!(run(home, &fw.socket, &["consume-v2", "/app2/x"]), "DATA /app2/x hello /app2/x");
    assert_eq!(run(home, &fw.socket, &["consume-v1", "/app1/y"]), "DATA /app1/y hello /app1/y");
    assert_eq!(run(home, &fw.socket, &["consume-v1", "/app2/z"]), "DATA /app2/z hello /app2/z");
    // By prefix: any Data under the name answers (here from the content store: /app2/x or /app2/z).
    let by_prefix = run(home, &fw.socket, &["consume-v2", "/app2", "prefix"]);
    assert!(by_prefix.starts_with("DATA /app2/"), "{by_prefix}");
    // The routes are in the RIB as apps registered them.
    let rib = fw.client().dataset("/localhost/nfd/rib/list").unwrap();
    for p in ["/app1", "/app2"] {
        let n = Name::from_uri(p).unwrap();
        assert!(rib.windows(n.value().len()).any(|w| w == n.value()), "{p} registered");
    }
}

#[test]
fn interest_without_route_gets_nack_no_route() {
    let keychain = keychain_home("nack");
    let home = keychain.path();
    let fw = Forwarder::start(home, "fw", 1);
    assert_eq!(run(home, &fw.socket, &["consume-v2", "/no/route/here"]), "NACK 150");
    assert_eq!(run(home, &fw.socket, &["consume-v1", "/no/route/here"]), "NACK 150");
}

#[test]
fn segmented_object_of_several_megabytes_arrives_intact() {
    let keychain = keychain_home("big");
    let home = keychain.path();
    let fw = Forwarder::start(home, "fw", 1);
    let _p = producer(home, &fw.socket, "v1", "/obj");
    let want = run(home, &fw.socket, &["big-sha256"]);
    let got = run(home, &fw.socket, &["fetch-v1", "/obj/big"]);
    assert_eq!(got, format!("FETCHED {want}"));
    assert!(want.split(' ').next().unwrap().parse::<usize>().unwrap() > 3_000_000);
}

/// A's producer serves `/far`; on B, `faces/create` with `face` makes a face to A and a route
/// for `/far` goes over it; then B's consumer (`consume`: consume-v1 or consume-v2) and segment
/// fetcher reach the producer through it.
fn across(home: &Path, a: &Forwarder, b: &Forwarder, face: &ControlParameters, consume: &str) {
    let _p = producer(home, &a.socket, "v2", "/far");
    let mut ctl = b.client();
    let made = ctl.command("faces", "create", face).unwrap();
    assert_eq!(made.code, 200, "{}", made.text);
    let face_id = made.body.unwrap().face_id.unwrap();
    let route = ControlParameters { name: Some(Name::from_uri("/far").unwrap()), face_id: Some(face_id), ..Default::default() };
    let reg = ctl.command("rib", "register", &route).unwrap();
    assert_eq!(reg.code, 200, "{}", reg.text);
    assert_eq!(run(home, &b.socket, &[consume, "/far/away"]), "DATA /far/away hello /far/away");
    let got = run(home, &b.socket, &["fetch-v1", "/far/big"]);
    let want = run(home, &b.socket, &["big-sha256"]);
    assert_eq!(got, format!("FETCHED {want}"));
}

#[test]
fn two_forwarders_over_a_udp_face() {
    let keychain = keychain_home("udp");
    let home = keychain.path();
    let a = Forwarder::start(home, "a", 1);
    let b = Forwarder::start(home, "b", 1);
    across(home, &a, &b, &ControlParameters { uri: Some(format!("udp4://{}", a.udp)), ..Default::default() }, "consume-v1");
}

/// The same across an Ethernet link (the two ends of a veth pair, no IP addresses): B makes a
/// unicast Ethernet face to A's interface; A, listening, makes one back when B's first frame
/// arrives; the several-megabyte object's 8000-byte segments cross as NDNLPv2 fragments.
#[test]
fn two_forwarders_over_an_ethernet_face() {
    let Some(veth) = VethPair::new("p") else { return };
    let keychain = keychain_home("ether");
    let home = keychain.path();
    let listen_on = |end: &str| {
        let end = end.to_string();
        move |c: &mut nexthop_fw::conf::config::Config| {
            c.faces.ether_listen = true;
            c.faces.ether_interfaces = vec![end];
        }
    };
    let a = Forwarder::start_with(home, "a", 1, listen_on(&veth.a));
    let b = Forwarder::start_with(home, "b", 1, listen_on(&veth.b));
    let face = ControlParameters {
        uri: Some(format!("ether://[{}]", mac_of(&veth.a))),
        local_uri: Some(format!("dev://{}", veth.b)),
        ..Default::default()
    };
    across(home, &a, &b, &face, "consume-v2");
}

/// python-ndn's `pynfdc` (its nfdc, an operator's tool) against nexthop: status, faces, routes
/// and strategies, each command checked by what the datasets then show. Its dataset requests
/// are signed Interests whose names end in a parameters digest (answered under that name, as
/// NFD's dispatcher does), and it decodes ControlParameters in its own element order.
#[test]
fn pynfdc_manages_the_forwarder() {
    let dir = scratch("pynfdc");
    let fw = Forwarder::start(&dir, "fw", 1);
    let pynfdc = |args: &[&str]| -> String {
        let out = Command::new(format!("{VENV_BIN}/pynfdc"))
            .args(args)
            .env("HOME", dir.path())
            .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", fw.socket))
            .output()
            .expect("pynfdc runs (scripts/setup.sh installs python-ndn in .venv)");
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success() && !said.contains("Timeout"), "pynfdc {args:?}: {said} {}", String::from_utf8_lossy(&out.stderr));
        said
    };
    assert!(pynfdc(&["status"]).contains("nexthop"), "version");
    assert!(pynfdc(&["nf", "udp4://127.0.0.1:9"]).contains("200 OK"));
    let faces = pynfdc(&["gf"]);
    let id = faces.lines().find(|l| l.contains("udp4://127.0.0.1:9")).and_then(|l| l.split_whitespace().next()).expect("the new face");
    assert!(pynfdc(&["gf", id]).contains("NON_LOCAL"));
    assert!(pynfdc(&["nr", "/pyroute", id]).contains("200 OK"));
    assert!(fw.has_route(&Name::from_uri("/pyroute").unwrap()));
    assert!(pynfdc(&["route"]).contains("/pyroute"));
    assert!(pynfdc(&["ss", "/pyroute", "multicast"]).contains("200 OK"));
    assert!(pynfdc(&["gs"]).contains("/localhost/nfd/strategy/multicast"));
    assert!(pynfdc(&["ss", "/pyasf", "asf"]).contains("200 OK"));
    assert!(pynfdc(&["gs"]).contains("/localhost/nfd/strategy/asf"));
    assert!(pynfdc(&["rs", "/pyasf"]).contains("200 OK"));
    assert!(pynfdc(&["ss", "/pysl", "self-learning"]).contains("200 OK"));
    assert!(pynfdc(&["gs"]).contains("/localhost/nfd/strategy/self-learning"));
    assert!(pynfdc(&["rs", "/pysl"]).contains("200 OK"));
    assert!(pynfdc(&["rs", "/pyroute"]).contains("200 OK"));
    assert!(pynfdc(&["rr", "/pyroute", id]).contains("200 OK"));
    assert!(!fw.has_route(&Name::from_uri("/pyroute").unwrap()));
    assert!(pynfdc(&["rf", id]).contains("200 OK"));
    assert!(!pynfdc(&["gf"]).contains("udp4://127.0.0.1:9"));
}

/// python-ndn's own tools through nexthop: `pyndntools putchunks` serves a 300 kB file as an
/// RDR object (versioned segments and a metadata packet), and `catchunks` finds the version
/// through the metadata and fetches it intact; `poke` and `peek` exchange one Data.
#[test]
fn pyndntools_serve_and_fetch_through_the_forwarder() {
    let keychain = keychain_home("tools");
    let home = keychain.path();
    let fw = Forwarder::start(home, "fw", 1);
    let tools = |args: &[&str]| pyndntools(home, &fw.socket, args);
    let object: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let file = home.join("object");
    std::fs::write(&file, &object).unwrap();
    let _server = Producer(
        tools(&["putchunks", "/pytools/object", &file.to_string_lossy()]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap(),
    );
    fw.wait_for_route("/pytools/object", "putchunks");
    let got = home.join("got");
    let out = tools(&["catchunks", "-o", &got.to_string_lossy(), "/pytools/object"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(&got).unwrap() == object, "fetched intact: {}", String::from_utf8_lossy(&out.stdout));

    let mut poke =
        tools(&["poke", "/pytools/poke", "-"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    std::io::Write::write_all(poke.stdin.as_mut().unwrap(), b"hello from poke").unwrap();
    drop(poke.stdin.take());
    let _poke = Producer(poke);
    fw.wait_for_route("/pytools/poke", "poke");
    let out = tools(&["peek", "/pytools/poke"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Received Data Name: /pytools/poke") && said.contains("size 15"), "{said}");
}

/// python-ndn's largest segments in the SSD tier, with the default slot: `putchunks -s 8600`
/// serves a 1 MB object in segments of about 8.7 kB (NDN allows 8800; the paper's 8 KiB slot
/// holds 8160) and `catchunks` fetches it intact; the producer goes, and every segment is
/// fetched again, intact, although the DRAM tier holds 16 packets: from the SSD tier, which
/// kept them all (no Data cached in DRAM only).
#[test]
fn segments_of_up_to_8800_bytes_are_kept_by_the_ssd_tier() {
    let keychain = keychain_home("ssd");
    let home = keychain.path();
    let fw = Forwarder::start_with(home, "fw", 1, |c| {
        c.content_store.capacity = 16;
        c.content_store.l2_path = home.join("l2.cs").to_string_lossy().into_owned();
        c.content_store.l2_bytes = 16 << 20;
    });
    let tools = |args: &[&str]| pyndntools(home, &fw.socket, args);
    let object: Vec<u8> = (0..1_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    let file = home.join("object");
    std::fs::write(&file, &object).unwrap();
    let server = Producer(
        tools(&["putchunks", "-s", "8600", "/ssd/object", &file.to_string_lossy()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    fw.wait_for_route("/ssd/object", "putchunks");
    let got = home.join("got");
    let out = tools(&["catchunks", "-o", &got.to_string_lossy(), "/ssd/object"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(&got).unwrap() == object, "fetched intact from the producer");
    drop(server);

    // Again, segment by segment, with the producer gone: the version from any stored segment.
    let mut c = fw.client();
    let mut ask = |name: Name, prefix: bool| {
        let mut i = Interest::new(name);
        (i.can_be_prefix, i.nonce) = (prefix, Some(c.next_nonce()));
        match c.express(&i, Duration::from_secs(2)).unwrap() {
            Answer::Data(wire) => wire,
            Answer::Nack(r) => panic!("{}: Nack {r:?}", i.name),
        }
    };
    let any = ask(Name::from_uri("/ssd/object").unwrap(), true);
    let any = DataView::decode(&any).unwrap();
    let version = any.name().prefix(any.name().len() - 1).to_name();
    let mut fetched = Vec::new();
    for seg in 0.. {
        let wire = ask(version.clone().with(Component::segment(seg)), false);
        let data = DataView::decode(&wire).unwrap();
        fetched.extend_from_slice(data.content().unwrap());
        if data.meta_info().and_then(|m| m.final_block_id) == data.name().last() {
            break;
        }
        assert!(wire.len() > 8160, "segment {seg}: {} bytes, more than an 8 KiB slot holds", wire.len());
        assert!(seg < 200, "no final block");
    }
    assert!(fetched == object, "fetched intact from the content store: {} of {} bytes", fetched.len(), object.len());
    let counters = nexthop_fw::mgmt::dataset::parse_labelled_counts(&fw.client().dataset("/localhost/nfd/status/counters").unwrap());
    let counter = |label: &str| counters.iter().find(|(l, _)| l == label).map_or(0, |c| c.1);
    assert_eq!(counter("cs_dram_only"), 0, "every segment fits the SSD tier's slot");
    assert!(counter("cs_l2_read_bytes") > 1_000_000, "the second fetch read the SSD tier: {counters:?}");
}

/// NFD's face event stream (`faces/events`), followed as ndn-cxx's FaceMonitor follows it
/// (NLSR watches its neighbours' faces so) by a python-ndn program decoding each notification
/// with python-ndn's FaceEventNotification: its own face's creation, then the faces an operator
/// makes and destroys, in order, each Interest waiting for the next event.
#[test]
fn a_subscriber_follows_face_events() {
    let keychain = keychain_home("events");
    let home = keychain.path();
    let fw = Forwarder::start(home, "fw", 1);
    let mut child = app(home, &fw.socket, &["face-events", "4"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python runs");
    let out = child.stdout.take().unwrap();
    let _child = Producer(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    assert_eq!(rx.recv_timeout(Duration::from_secs(20)).unwrap(), "SUBSCRIBED");
    let first = rx.recv_timeout(Duration::from_secs(10)).expect("its own face's creation");
    assert!(first.starts_with("EVENT 1 1 ") && first.contains("unix://"), "{first}");
    // An operator's connection (a face made: event 2), then a UDP face made and destroyed.
    let mut c = fw.client();
    let made = c.command("faces", "create", &ControlParameters { uri: Some("udp4://127.0.0.1:9".into()), ..Default::default() }).unwrap();
    let id = made.body.unwrap().face_id.unwrap();
    assert_eq!(c.command("faces", "destroy", &ControlParameters { face_id: Some(id), ..Default::default() }).unwrap().code, 200);
    let events: Vec<String> = (0..3).map(|_| rx.recv_timeout(Duration::from_secs(10)).expect("an event")).collect();
    assert!(events[0].starts_with("EVENT 2 1 ") && events[0].contains("unix://"), "{events:?}");
    assert_eq!(events[1], format!("EVENT 3 1 {id} udp4://127.0.0.1:9"));
    assert_eq!(events[2], format!("EVENT 4 2 {id} udp4://127.0.0.1:9"));
}

/// A python-ndn consumer takes Data that carries an NDNLPv2 CongestionMark (which nexthop adds
/// on a congested face, and passes on from upstream): here the producer marks its answer.
#[test]
fn python_ndn_accepts_data_with_a_congestion_mark() {
    use nexthop_wire::types::{CONGESTION_MARK, FRAGMENT, LP_PACKET, PIT_TOKEN};
    use nexthop_wire::{Data, Emit, InterestView, LpPacketView};
    let keychain = keychain_home("marked");
    let home = keychain.path();
    let fw = Forwarder::start(home, "fw", 1);
    let mut producer = fw.client();
    let register = ControlParameters { name: Some(Name::from_uri("/marked").unwrap()), ..Default::default() };
    assert_eq!(producer.command("rib", "register", &register).unwrap().code, 200);
    let consumer = app(home, &fw.socket, &["consume-v2", "/marked/x"]).stdout(Stdio::piped()).spawn().unwrap();
    let wire = producer.recv(Duration::from_secs(20)).unwrap().expect("the consumer's Interest");
    let lp = LpPacketView::decode(&wire).expect("with the forwarder's PIT token");
    let interest = InterestView::decode(lp.fragment.unwrap()).unwrap();
    let mut d = Data::new(interest.name().to_name(), b"marked".to_vec());
    d.sign_digest_sha256();
    let (mut fields, mut answer) = (Vec::new(), Vec::new());
    nexthop_fw::lp::encode::put_tlv(&mut fields, PIT_TOKEN, lp.pit_token.unwrap());
    nexthop_fw::lp::encode::put_nonneg(&mut fields, CONGESTION_MARK, 1);
    nexthop_fw::lp::encode::put_tlv(&mut fields, FRAGMENT, &d.to_bytes());
    nexthop_fw::lp::encode::put_tlv(&mut answer, LP_PACKET, &fields);
    producer.send(&answer).unwrap();
    let out = consumer.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "DATA /marked/x marked");
}

/// NFD's `authorizations` with real signatures. The operator's identity is made by python-ndn
/// and its certificate exported with `pyndnsec Export-Cert` (base64, what `ndnsec cert-dump`
/// writes for nfd.conf); the forwarder grants that certificate `fib` only. Commands signed by
/// its key in both signed forms are accepted (replays and stale timestamps are refused too:
/// the unit tests); python-ndn's own
/// DigestSha256 commands are dropped unanswered and counted; another key, and another module,
/// get 403. An RSA identity's certificate works the same, and nexthop's client signs with both
/// keys from pyndnsec's file TPM.
/// Has the root in `root` issue a certificate to the key in `home` (its sign request signed as
/// an operator's `ndnsec cert-gen` does), imported there and made the default (python-ndn names
/// the default certificate in KeyLocator); the certificate's file, `<dir>/<who>.ndncert`.
fn issue(root: &Path, home: &Path, dir: &Path, who: &str) -> std::path::PathBuf {
    let request = dir.join(format!("{who}.req"));
    std::fs::write(&request, pyndnsec(home, &["Get-SignReq"])).unwrap();
    let issued = pyndnsec(root, &["Sign-Cert", "-i", "root", "/testbed", &request.display().to_string()]);
    let file = dir.join(format!("{who}.ndncert"));
    std::fs::write(&file, &issued).unwrap();
    pyndnsec(home, &["Import-Cert", &file.display().to_string()]);
    let text: Vec<u8> = issued.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    let name = DataView::decode(&data_encoding::BASE64.decode(&text).unwrap()).unwrap().name().to_name();
    pyndnsec(home, &["Set-Default", &name.to_string()]);
    file
}

/// A testbed: a root identity (the trust anchor, its certificate in `anchor`) and alice, whose
/// certificate (`alice_cert`) the root issued, in keychains and a scratch directory for `tag`.
struct Testbed {
    root: TempDir,
    alice: TempDir,
    dir: TempDir,
    anchor: std::path::PathBuf,
    alice_cert: std::path::PathBuf,
}

fn testbed(tag: &str) -> Testbed {
    let root = keychain_with(&format!("{tag}-root"), "/testbed", "e");
    let alice = keychain_with(&format!("{tag}-alice"), "/testbed/alice", "e");
    let dir = scratch(tag);
    let anchor = dir.path().join("root.ndncert");
    std::fs::write(&anchor, pyndnsec(root.path(), &["Export-Cert"])).unwrap();
    let alice_cert = issue(root.path(), alice.path(), dir.path(), "alice");
    Testbed { root, alice, dir, anchor, alice_cert }
}

/// The sample `localhop_security` rules anchored at the certificate file `anchor`.
fn localhop_rules(anchor: &Path) -> String {
    format!("{}trust-anchor\n{{\n  type file\n  file-name \"{}\"\n}}\n", nexthop_fw::mgmt::validator::SAMPLE_RULES, anchor.display())
}

/// NFD's automatic prefix propagation, host to gateway, both ends nexthop: a python-ndn app on
/// the host registers `/testbed/alice/app`; the host registers alice's identity prefix
/// `/testbed/alice` on the hub over UDP (`/localhop/nfd/rib/register`, signed by alice's key),
/// answering for her certificate when the hub fetches it to validate the command up to the
/// testbed root. A consumer on the hub then reaches the app; when the app goes, the host
/// withdraws the prefix from the hub. `sign` tells the host what to sign with.
fn propagation(tag: &str, sign: impl FnOnce(&mut nexthop_fw::conf::config::Config, &Testbed)) {
    let testbed = testbed(tag);
    let hub = Forwarder::start_with(testbed.dir.path(), "hub", 1, |c| {
        c.forwarder.localhop_prefix_registration = true;
        c.forwarder.localhop_security = localhop_rules(&testbed.anchor);
    });
    let host = Forwarder::start_with(testbed.dir.path(), "host", 1, |c| {
        sign(c, &testbed);
        // The route to the hub (what ndn-autoconfig makes): the gateway is reachable.
        c.route.push(nexthop_fw::conf::config::StaticRoute {
            prefix: "/localhop/nfd".into(),
            face: format!("udp4://{}", hub.udp),
            cost: 0,
        });
    });

    let alice = testbed.alice.path();
    let app = producer(alice, &host.socket, "v2", "/testbed/alice/app");
    hub.wait_for_route("/testbed/alice", "the host's propagation");
    assert!(!hub.has_route(&Name::from_uri("/testbed/alice/app").unwrap()), "the identity's prefix, not the app's");
    let fetched = run(alice, &hub.socket, &["consume-v2", "/testbed/alice/app/x"]);
    assert_eq!(fetched, "DATA /testbed/alice/app/x hello /testbed/alice/app/x");
    drop(app);
    let wait = std::time::Instant::now();
    while hub.has_route(&Name::from_uri("/testbed/alice").unwrap()) {
        assert!(wait.elapsed() < Duration::from_secs(20), "the host did not withdraw /testbed/alice");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Propagation signing with a key and certificate named by their files.
#[test]
fn a_host_propagates_its_identity_prefix_to_a_validating_hub() {
    propagation("propagate", |c, testbed| {
        let home = testbed.alice.path();
        let key = Name::from_uri(String::from_utf8(pyndnsec(home, &["Get-Default", "-k"])).unwrap().trim()).unwrap();
        let key_file = CommandKey::tpm_file(&home.join(".ndn/ndnsec-key-file"), &key);
        c.propagate = vec![nexthop_fw::conf::config::PropagateKey {
            key: key.to_string(),
            key_file: key_file.display().to_string(),
            certificate: testbed.alice_cert.display().to_string(),
            ..Default::default()
        }];
    });
}

/// Propagation as NFD's, signing as every identity of the keychain (pyndnsec's, alice's with
/// her issued certificate as default): what `--nfd-conf` makes of `auto_prefix_propagate`.
#[test]
fn a_host_propagates_as_the_identities_of_its_keychain() {
    propagation("propagate-keychain", |c, testbed| {
        let ndn = testbed.alice.path().join(".ndn");
        c.keychain = nexthop_fw::conf::config::KeychainConfig {
            pib: ndn.display().to_string(),
            tpm: ndn.join("ndnsec-key-file").display().to_string(),
        };
        c.forwarder.propagate_keychain = true;
    });
}

/// Prefix registration one hop away checked as NFD's `rib.localhop_security` checks it: the
/// command's signer must chain to the trust anchor through certificates the forwarder fetches
/// from the registering face. A testbed root (the anchor) issues alice's certificate; alice
/// registers, answering the forwarder's Interest for her certificate. A self-signed identity is
/// refused (403), an unsigned command dropped unanswered and counted, and a signer who does not
/// answer for his certificate is refused when neither his face nor the network has it — and
/// accepted once a repository on the network serves it.
#[test]
fn localhop_registrations_are_validated_up_to_the_trust_anchor() {
    let Testbed { root, alice, dir, anchor, alice_cert } = testbed("localhop");
    let mallory = keychain_with("localhop-mallory", "/testbed/mallory", "e");
    let bob = keychain_with("localhop-bob", "/testbed/bob", "e");
    let bob_cert = issue(root.path(), bob.path(), dir.path(), "bob");
    let mallory_cert = dir.path().join("mallory.ndncert");
    std::fs::write(&mallory_cert, pyndnsec(mallory.path(), &["Export-Cert"])).unwrap();
    let rules = localhop_rules(&anchor);
    let fw = Forwarder::start_with(dir.path(), "hub", 1, |c| {
        c.forwarder.localhop_prefix_registration = true;
        c.forwarder.localhop_security = rules;
    });
    let register = |home: &Path, args: &[&str]| run(home, &fw.socket, &[&["localhop-register"][..], args].concat());
    let cert = |p: &Path| p.display().to_string();

    // (The route goes to the app's face, and goes with it when the app exits.)
    assert_eq!(register(alice.path(), &["v03", "/alice", &cert(&alice_cert)]), "STATUS 200");
    assert_eq!(register(mallory.path(), &["v03", "/mallory", &cert(&mallory_cert)]), "STATUS 403", "self-signed, no anchor");
    let unsigned = fw.drops("management-unsigned");
    assert_eq!(register(alice.path(), &["digest", "/digest"]), "TIMEOUT");
    assert_eq!(fw.drops("management-unsigned"), unsigned + 1);
    // Signed by bob, whose certificate the root issued but who does not answer for it (nor has
    // the content store it, as it has alice's now): refused once his face has had a second to
    // answer and the network has no route to it either.
    let t0 = std::time::Instant::now();
    assert_eq!(register(bob.path(), &["v03", "/unserved"]), "STATUS 403");
    assert!(t0.elapsed() >= Duration::from_secs(1), "{:?}", t0.elapsed());
    // Bob's certificate in a repository the forwarder routes to: asked of bob's face first,
    // which stays silent, then of the network, which has it.
    let _repository = ready_app(bob.path(), &fw.socket, &["serve-cert", &cert(&bob_cert)]);
    let t0 = std::time::Instant::now();
    assert_eq!(register(bob.path(), &["v03", "/served"]), "STATUS 200");
    assert!(t0.elapsed() >= Duration::from_secs(1), "after the direct fetch's second: {:?}", t0.elapsed());
}

#[test]
fn commands_need_a_granted_certificates_key() {
    let op = keychain_with("authorize-op", "/operator", "e");
    let stranger = keychain_with("authorize-stranger", "/stranger", "e");
    let rsa = keychain_with("authorize-rsa", "/rsa-operator", "r");
    let dir = scratch("authorize");
    let grant = |home: &Path, file: &str| {
        let path = dir.path().join(file);
        std::fs::write(&path, pyndnsec(home, &["Export-Cert"])).unwrap();
        nexthop_fw::conf::config::Authorize { certfile: path.display().to_string(), privileges: vec!["fib".into()] }
    };
    let grants = vec![grant(op.path(), "operator.ndncert"), grant(rsa.path(), "rsa.ndncert")];
    let fw = Forwarder::start_with(dir.path(), "fw", 1, |c| c.authorize = grants);
    let command = |home: &Path, args: &[&str]| run(home, &fw.socket, &[&["command"][..], args].concat());

    for form in ["v03", "v02"] {
        let prefix = format!("/granted/{form}");
        assert_eq!(command(op.path(), &[form, "fib", "add-nexthop", &prefix]), "STATUS 200", "{form}");
    }
    assert_eq!(command(rsa.path(), &["v03", "fib", "add-nexthop", "/granted/rsa"]), "STATUS 200");
    assert_eq!(command(stranger.path(), &["v03", "fib", "add-nexthop", "/stranger"]), "STATUS 403");
    assert_eq!(command(op.path(), &["v03", "faces", "destroy", "/x", "1"]), "STATUS 403", "faces is not granted");
    assert!(!fw.has_route(&Name::from_uri("/stranger").unwrap()));
    let unsigned = fw.drops("management-unsigned");
    assert_eq!(command(op.path(), &["digest", "fib", "add-nexthop", "/digest"]), "TIMEOUT");
    assert_eq!(fw.drops("management-unsigned"), unsigned + 1);
    assert!(!fw.has_route(&Name::from_uri("/digest").unwrap()));
    // nexthop's own client (`nexthop ctl --sign-key`, `--sign-identity`) signs with the same
    // keys, found through the keychain pyndnsec keeps (its PIB names the default identity, key
    // and certificate, its file TPM holds the key); unsigned, its command goes unanswered.
    for (home, identity, prefix) in [(op.path(), "/operator", "/client/ec"), (rsa.path(), "/rsa-operator", "/client/rsa")] {
        let ndn = home.join(".ndn");
        let keychain = Keychain::at(&ndn, &ndn.join("ndnsec-key-file"));
        assert_eq!(keychain.default_identity().unwrap().to_string(), identity);
        let key_name = keychain.default_key(&Name::from_uri(identity).unwrap()).unwrap();
        assert_eq!(key_name.to_string(), String::from_utf8(pyndnsec(home, &["Get-Default", "-k"])).unwrap().trim());
        let exported = data_encoding::BASE64
            .decode(&pyndnsec(home, &["Export-Cert"]).into_iter().filter(|b| !b.is_ascii_whitespace()).collect::<Vec<_>>());
        assert_eq!(keychain.default_certificate(&key_name).unwrap(), Some(exported.unwrap()), "{identity}");
        let mut client = fw.client();
        client.set_command_key(Some(keychain.private_key(key_name).unwrap()));
        let params = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), ..Default::default() };
        assert_eq!(client.command("fib", "add-nexthop", &params).unwrap().code, 200, "{prefix}");
        assert!(fw.has_route(&Name::from_uri(prefix).unwrap()), "{prefix}");
    }
    let params = ControlParameters { name: Some(Name::from_uri("/client/unsigned").unwrap()), ..Default::default() };
    let refused = fw.client().command("fib", "add-nexthop", &params).unwrap_err().to_string();
    assert!(refused.contains("signed with no key"), "{refused}");
    // rib commands need only the local face (python-ndn registers with DigestSha256).
    let _p = producer(op.path(), &fw.socket, "v2", "/registered");
    assert_eq!(run(op.path(), &fw.socket, &["consume-v1", "/registered/x"]), "DATA /registered/x hello /registered/x");
}
