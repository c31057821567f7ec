//! Management over a real Unix socket with nexthop's own client: bad parameters get the right
//! ControlResponse codes, datasets list what commands changed, and nothing crashes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{scratch, Forwarder};
use nexthop_fw::counters::ShardCounters;
use nexthop_fw::lp::packet::{classify, Incoming, Network};
use nexthop_fw::lp::reliability::ReliabilityCounts;
use nexthop_fw::mgmt::dataset::{parse_labelled_counts, FaceQueryFilter};
use nexthop_fw::mgmt::params::{ControlParameters, ControlResponse};
use nexthop_tools::client::{Answer, Client};
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Component, Data, DataView, Emit, Interest, MetaInfo, Name};

mod common;

/// `rib/announce` with `params` as ApplicationParameters (unsigned command): the answer's code.
fn announce(c: &mut Client, params: Vec<u8>) -> u64 {
    let mut i = Interest::new(Name::from_uri("/localhost/nfd/rib/announce").unwrap());
    i.nonce = Some(c.next_nonce());
    i.set_app_parameters(params);
    i.sign_digest_sha256();
    let Answer::Data(w) = c.express(&i, std::time::Duration::from_secs(2)).unwrap() else { panic!("answered") };
    ControlResponse::decode(DataView::decode(&w).unwrap().content().unwrap()).unwrap().code
}

/// A prefix announcement of `/pa` for 10 s, signed with DigestSha256, its content ending in
/// `validity` (a ValidityPeriod element, or nothing).
fn pa(validity: &[u8]) -> Vec<u8> {
    let name = Name::from_uri("/pa").unwrap().with(Component::keyword(&b"PA"[..])).with(Component::version(1)).with(Component::segment(0));
    let mut content = vec![0x6d, 0x02, 0x27, 0x10]; // ExpirationPeriod 10 s
    content.extend_from_slice(validity);
    let mut d = Data::new(name, content);
    d.meta_info = Some(MetaInfo { content_type: Some(5), ..MetaInfo::default() });
    d.sign_digest_sha256();
    d.to_bytes()
}

#[test]
fn commands_answer_with_the_right_codes() {
    let dir = scratch("mgmt");
    let fw = Forwarder::start(&dir, "s", 1);
    let mut c = fw.client();

    let name = |s: &str| Some(Name::from_uri(s).unwrap());
    // Missing Name, unknown face, unknown strategy, unknown verb, bad URI.
    assert_eq!(c.command("rib", "register", &ControlParameters::default()).unwrap().code, 400);
    assert_eq!(
        c.command("rib", "register", &ControlParameters { name: name("/x"), face_id: Some(9999), ..Default::default() }).unwrap().code,
        410
    );
    let bad_strategy = ControlParameters { name: name("/x"), strategy: name("/localhost/nfd/strategy/none"), ..Default::default() };
    assert_eq!(c.command("strategy-choice", "set", &bad_strategy).unwrap().code, 404);
    assert_eq!(c.command("rib", "frobnicate", &ControlParameters::default()).unwrap().code, 501);
    assert_eq!(
        c.command("faces", "create", &ControlParameters { uri: Some("udp4://nowhere".into()), ..Default::default() }).unwrap().code,
        400
    );
    // A ControlParameters component that does not decode.
    let mut i = Interest::new(Name::from_uri("/localhost/nfd/rib/register").unwrap().with(Component::generic(vec![0x68, 0x05, 0x07])));
    i.nonce = Some([1, 2, 3, 4]);
    let Answer::Data(_) = c.express(&i, std::time::Duration::from_secs(2)).unwrap() else { panic!("answered") };

    // rib/announce: a prefix announcement in ApplicationParameters, or 400; outside its
    // ValidityPeriod, 403.
    assert_eq!(announce(&mut c, vec![0x06, 0x00]), 400, "not an announcement");
    // ValidityPeriod (TLV-TYPE 253: three octets) holding NotBefore (254) and NotAfter (255).
    let mut validity_2000 = vec![0xfd, 0x00, 0xfd, 0x26, 0xfd, 0x00, 0xfe, 0x0f];
    validity_2000.extend_from_slice(b"20000101T000000");
    validity_2000.extend_from_slice(&[0xfd, 0x00, 0xff, 0x0f]);
    validity_2000.extend_from_slice(b"20001231T000000");
    assert_eq!(announce(&mut c, pa(&validity_2000)), 403, "outside its ValidityPeriod");
    assert!(!fw.has_route(&Name::from_uri("/pa").unwrap()));
    assert_eq!(announce(&mut c, pa(&[])), 200);
    assert!(fw.has_route(&Name::from_uri("/pa").unwrap()));

    // Good commands, visible in the datasets.
    let made = c.command("faces", "create", &ControlParameters { uri: Some("udp4://127.0.0.1:9".into()), ..Default::default() }).unwrap();
    assert_eq!(made.code, 200);
    let face = made.body.unwrap().face_id.unwrap();
    let again = c.command("faces", "create", &ControlParameters { uri: Some("udp4://127.0.0.1:9".into()), ..Default::default() }).unwrap();
    assert_eq!(again.code, 409);
    assert_eq!(
        c.command("fib", "add-nexthop", &ControlParameters { name: name("/m"), face_id: Some(face), cost: Some(7), ..Default::default() })
            .unwrap()
            .code,
        200
    );
    let fib = c.dataset("/localhost/nfd/fib/list").unwrap();
    assert!(fib.windows(3).any(|w| w == [0x08, 0x01, b'm']), "route listed");
    // faces/query: the faces a FaceQueryFilter matches (percent-encoded into the name).
    let query = |c: &mut Client, filter: FaceQueryFilter| -> Vec<u64> {
        let encoded: String = filter.encode().iter().map(|b| format!("%{b:02X}")).collect();
        let content = c.dataset(&format!("/localhost/nfd/faces/query/{encoded}")).unwrap();
        let face_id = |f: &[u8]| TlvReader::new(f).map(Result::unwrap).find(|t| t.ty == 0x69).map(|t| read_nonneg(t.ty, t.value).unwrap());
        TlvReader::new(&content).map(Result::unwrap).filter_map(|f| face_id(f.value)).collect()
    };
    assert_eq!(query(&mut c, FaceQueryFilter { face_id: Some(face), ..Default::default() }), [face]);
    assert_eq!(query(&mut c, FaceQueryFilter { uri_scheme: Some("udp4".into()), ..Default::default() }), [face]);
    assert_eq!(
        query(&mut c, FaceQueryFilter { uri: Some("udp4://127.0.0.1:9".into()), scope: Some(1), ..Default::default() }),
        [] as [u64; 0]
    );
    assert!(!query(&mut c, FaceQueryFilter { uri_scheme: Some("unix".into()), ..Default::default() }).contains(&face));
    let ms = ControlParameters { name: name("/m"), strategy: name("/localhost/nfd/strategy/multicast"), ..Default::default() };
    assert_eq!(c.command("strategy-choice", "set", &ms).unwrap().code, 200);
    assert!(!c.dataset("/localhost/nfd/faces/list").unwrap().is_empty());
    assert!(!c.dataset("/localhost/nfd/status/general").unwrap().is_empty());
    assert!(!c.dataset("/localhost/nfd/cs/info").unwrap().is_empty());
    // faces/channels: a ChannelStatus (LocalUri) per listener.
    let channels: Vec<String> = TlvReader::new(&c.dataset("/localhost/nfd/faces/channels").unwrap())
        .map(Result::unwrap)
        .map(|ch| {
            assert_eq!(ch.ty, 0x82);
            let uri = TlvReader::new(ch.value).next().unwrap().unwrap();
            String::from_utf8(uri.value.to_vec()).unwrap()
        })
        .collect();
    assert_eq!(channels, [format!("unix://{}", fw.socket), format!("udp4://{}", fw.udp), format!("ws://{}", fw.websocket)]);
    assert_eq!(c.command("faces", "destroy", &ControlParameters { face_id: Some(face), ..Default::default() }).unwrap().code, 200);
    let fib = c.dataset("/localhost/nfd/fib/list").unwrap();
    assert!(!fib.windows(3).any(|w| w == [0x08, 0x01, b'm']), "routes through a destroyed face go");
    // A malformed packet and an oversize one are dropped and counted; the face keeps working.
    c.send(&[0x05, 0x03, 0x07, 0x01, 0x08]).unwrap();
    let drops = parse_labelled_counts(&c.dataset("/localhost/nfd/status/drops").unwrap());
    assert!(drops.iter().map(|d| d.1).sum::<u64>() >= 1, "{drops:?}");
    // Every forwarding counter and gauge is listed, by label.
    let counters = parse_labelled_counts(&c.dataset("/localhost/nfd/status/counters").unwrap());
    let labels: Vec<&str> = counters.iter().map(|c| c.0.as_str()).collect();
    let mut expected: Vec<&str> = ShardCounters::default().snapshot().iter().map(|c| c.0).collect();
    expected.extend(["congestion_marks", "faces_down"]);
    expected.extend(ReliabilityCounts::default().labelled().map(|c| c.0));
    assert_eq!(labels, expected);
}

/// With two forwarding threads reading one shared FIB, a route registered through management
/// reaches both threads, and when its producer goes away the route's removal does too: Interests
/// dispatched to either thread are then refused with Nack NoRoute.
#[test]
fn route_changes_reach_every_forwarding_thread() {
    let dir = scratch("shared-fib");
    let fw = Forwarder::start(&dir, "s", 2);
    let unix = fw.unix();
    let prefix = Name::from_uri("/shared").unwrap();
    let mut c = Client::connect(&unix).unwrap();
    // Interest i: the name /shared/n<i>, nonce i.
    let ask_within = |c: &mut Client, i: u32, wait: std::time::Duration| {
        let mut interest = Interest::new(prefix.clone().with(Component::generic(format!("n{i}").into_bytes())));
        interest.nonce = Some(i.to_be_bytes());
        c.express(&interest, wait)
    };
    let ask = |c: &mut Client, i: u32| ask_within(c, i, std::time::Duration::from_secs(2)).unwrap();
    let no_route = Answer::Nack(nexthop_wire::NackReason::NoRoute);
    assert_eq!(ask(&mut c, 0), no_route);

    let pstop = Arc::new(AtomicBool::new(false));
    let producer = nexthop_tools::traffic::start_producer(&unix, &unix, &prefix, 100, pstop.clone()).unwrap();
    let r = nexthop_tools::traffic::run_consumer(&unix, &prefix, 32, 100, std::time::Duration::from_millis(300)).unwrap();
    assert!(r.satisfied > 100, "{} satisfied", r.satisfied);
    assert_eq!((r.nacks, r.lost, r.mismatches), (0, 0, 0));

    // The producer's face closes; its route goes from the one FIB both threads read. Until the
    // forwarder has seen the face close, an Interest may still go to it and get no answer.
    pstop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    let t0 = std::time::Instant::now();
    for attempt in 1000.. {
        if ask_within(&mut c, attempt, std::time::Duration::from_millis(300)).ok() == Some(no_route.clone()) {
            break;
        }
        assert!(t0.elapsed() < std::time::Duration::from_secs(10), "the route outlived its face");
    }
    // Names spread over both threads (dispatch hashes the first two components).
    for i in 2..40 {
        assert_eq!(ask(&mut c, i), no_route, "Interest {i}");
    }
}

/// The next Interest the fake daemon receives (in an LpPacket with the forwarder's PIT token;
/// the answers to its own commands are passed over): its verb and the prefix and face it names.
fn announced(daemon: &mut Client) -> (String, Name, u64) {
    let name = loop {
        let wire = daemon.recv(std::time::Duration::from_secs(2)).unwrap().expect("an announcement");
        if let Ok(Some(Incoming { packet: Network::Interest(i), .. })) = classify(&wire) {
            break i.name().to_name();
        }
    };
    assert!(Name::from_uri("/localhost/nlsr/rib").unwrap().is_prefix_of(&name), "{name}");
    let verb = String::from_utf8(name.get(3).unwrap().value().to_vec()).unwrap();
    let p = ControlParameters::decode(name.get(4).unwrap().value()).unwrap();
    (verb, p.name.unwrap(), p.face_id.unwrap())
}

#[test]
fn client_routes_are_readvertised_to_the_routing_daemon() {
    let dir = scratch("readvertise");
    let fw = Forwarder::start(&dir, "s", 1);
    let register = |c: &mut Client, prefix: &str, origin: u64| {
        let p = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), origin: Some(origin), ..Default::default() };
        let r = c.command("rib", "register", &p).unwrap();
        assert_eq!(r.code, 200);
        r.body.unwrap().face_id.unwrap()
    };

    // A client route made before any daemon is there is announced when one registers.
    let mut app = fw.client();
    let app_face = register(&mut app, "/x", 65);
    let mut daemon = fw.client();
    let nlsr = ControlParameters { name: Some(Name::from_uri("/localhost/nlsr").unwrap()), origin: Some(128), ..Default::default() };
    let command = daemon.command_interest("rib", "register", &nlsr).to_bytes();
    daemon.send(&command).unwrap();
    assert_eq!(announced(&mut daemon), ("register".into(), Name::from_uri("/x").unwrap(), app_face));
    // A new one at once; an app's own route (origin app) not at all.
    register(&mut app, "/z", 0);
    register(&mut app, "/y", 65);
    assert_eq!(announced(&mut daemon), ("register".into(), Name::from_uri("/y").unwrap(), app_face));
    // Withdrawn when unregistered, and when its face goes.
    let gone = ControlParameters { name: Some(Name::from_uri("/y").unwrap()), origin: Some(65), ..Default::default() };
    assert_eq!(app.command("rib", "unregister", &gone).unwrap().code, 200);
    assert_eq!(announced(&mut daemon), ("unregister".into(), Name::from_uri("/y").unwrap(), app_face));
    drop(app);
    assert_eq!(announced(&mut daemon), ("unregister".into(), Name::from_uri("/x").unwrap(), app_face));
    assert!(daemon.recv(std::time::Duration::from_millis(300)).unwrap().is_none(), "nothing else is announced");

    // With `readvertise_nlsr` off (NFD's sample nfd.conf), the daemon hears of none.
    let quiet = Forwarder::start_with(&dir, "quiet", 1, |c| c.forwarder.readvertise_nlsr = false);
    let mut daemon = quiet.client();
    assert_eq!(daemon.command("rib", "register", &nlsr).unwrap().code, 200);
    let mut app = quiet.client();
    register(&mut app, "/w", 65);
    assert!(daemon.recv(std::time::Duration::from_millis(300)).unwrap().is_none(), "readvertise_nlsr off: nothing announced");
}

#[test]
fn apps_one_hop_away_may_register_under_localhop_only_when_allowed_and_only_toward_themselves() {
    let dir = scratch("localhop");
    for allowed in [false, true] {
        let fw = Forwarder::start_with(&dir, &format!("s{allowed}"), 1, |c| c.forwarder.localhop_prefix_registration = allowed);
        // Over UDP: a face of another host's scope.
        let mut remote = Client::connect(&nexthop_fw::face::uri::FaceUri::Udp(fw.udp)).unwrap();
        let command = |c: &mut Client, prefix: &str, params: &ControlParameters| {
            let name = Name::from_uri(prefix).unwrap().with(Component::generic(params.encode()));
            let mut i = Interest::new(name);
            i.nonce = Some(c.next_nonce());
            i.set_app_parameters(Vec::new());
            i.sign_digest_sha256();
            c.express(&i, std::time::Duration::from_millis(500)).ok()
        };
        let elsewhere = ControlParameters { name: Some(Name::from_uri("/far").unwrap()), face_id: Some(1), ..Default::default() };
        let answer = command(&mut remote, "/localhop/nfd/rib/register", &elsewhere);
        // /localhost from another host, and anything but rib commands under /localhop: no
        // management answer (dropped, or forwarded and refused with a Nack for want of a route).
        let answered = |a: &Option<Answer>| matches!(a, Some(Answer::Data(_)));
        assert!(!answered(&command(&mut remote, "/localhost/nfd/rib/register", &elsewhere)));
        let destroy = ControlParameters { face_id: Some(1), ..Default::default() };
        assert!(!answered(&command(&mut remote, "/localhop/nfd/faces/destroy", &destroy)));
        let routed = fw.client().dataset("/localhost/nfd/rib/list").unwrap();
        if !allowed {
            assert!(!answered(&answer), "refused unless allowed: {answer:?}");
            assert!(!routed.windows(5).any(|w| w == b"\x08\x03far"));
            continue;
        }
        let Some(Answer::Data(wire)) = answer else { panic!("allowed: answered, got {answer:?}") };
        let response =
            nexthop_fw::mgmt::params::ControlResponse::decode(nexthop_wire::DataView::decode(&wire).unwrap().content().unwrap()).unwrap();
        assert_eq!(response.code, 200);
        let toward = response.body.unwrap().face_id.unwrap();
        assert_ne!(toward, 1, "routed to the asking face, not the one it named");
        assert!(routed.windows(5).any(|w| w == b"\x08\x03far"));
    }
}

/// faces/update changes a face's persistency where its kind allows: an on-demand UDP face (a
/// peer that just showed up) made persistent shows so in `faces/list`; a Unix face keeps its own.
#[test]
fn faces_update_changes_persistency_where_the_face_allows() {
    let dir = scratch("persistency");
    let fw = Forwarder::start(&dir, "s", 1);
    let mut c = fw.client();
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut i = Interest::new(Name::from_uri("/nowhere").unwrap());
    i.nonce = Some([5; 4]);
    peer.send_to(&i.to_bytes(), fw.udp).unwrap();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    // Its face (on-demand, code 1) once the datagram has arrived.
    let face_of = |c: &mut Client| -> Option<(u64, u64)> {
        let list = c.dataset("/localhost/nfd/faces/list").unwrap();
        TlvReader::new(&list).map(Result::unwrap).find_map(|f| {
            let fields: Vec<_> = TlvReader::new(f.value).map(Result::unwrap).collect();
            let has_uri = fields.iter().any(|t| t.ty == 0x72 && t.value == uri.as_bytes());
            let num = |ty| fields.iter().find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap());
            has_uri.then(|| (num(0x69).unwrap(), num(0x85).unwrap()))
        })
    };
    let started = std::time::Instant::now();
    let (id, persistency) = loop {
        if let Some(f) = face_of(&mut c) {
            break f;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "no face for the UDP peer");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(persistency, 1, "on-demand");
    let update = |c: &mut Client, face_id: Option<u64>, code: u64| {
        c.command("faces", "update", &ControlParameters { face_id, face_persistency: Some(code), ..Default::default() }).unwrap()
    };
    let r = update(&mut c, Some(id), 0);
    assert_eq!((r.code, r.body.unwrap().face_persistency), (200, Some(0)));
    assert_eq!(face_of(&mut c), Some((id, 0)), "persistent now");
    assert_eq!(update(&mut c, None, 2).code, 409, "the asking Unix face stays on-demand");
    assert_eq!(update(&mut c, Some(id), 7).code, 400, "no such persistency");
}

/// `forwarder.prefix_announcement_security` (NFD's `prefix_announcement_validation`) checks the
/// announcement `rib/announce` carries: with a rule asking for an ECDSA signature under `/pa`,
/// one signed with DigestSha256 is refused (403) and makes no route.
#[test]
fn announcements_are_checked_by_the_configured_validator() {
    use p256::pkcs8::EncodePublicKey;
    let dir = scratch("mgmt-pa");
    let key = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
    let spki = key.verifying_key().to_public_key_der().unwrap().into_vec();
    let mut anchor = Data::new(Name::from_uri("/pa/KEY/k/self/v1").unwrap(), spki);
    anchor.sign_digest_sha256();
    let anchor_file = dir.path().join("pa.ndncert");
    std::fs::write(&anchor_file, anchor.to_bytes()).unwrap();
    let rules = format!(
        "rule\n{{\n  for data\n  checker\n  {{\n    type customized\n    sig-type ecdsa-sha256\n    key-locator\n    {{\n      type name\n      name /pa\n      relation is-prefix-of\n    }}\n  }}\n}}\ntrust-anchor\n{{\n  type file\n  file-name {}\n}}\n",
        anchor_file.display()
    );
    let fw = Forwarder::start_with(&dir, "s", 1, |c| c.forwarder.prefix_announcement_security = rules);
    assert_eq!(announce(&mut fw.client(), pa(&[])), 403);
    assert!(!fw.has_route(&Name::from_uri("/pa").unwrap()));
}

/// `forwarder.propagate_keychain` (what nfd.conf's `auto_prefix_propagate` turns on) with no
/// keychain to read: the forwarder starts all the same and propagates nothing, as NFD with an
/// empty keychain would.
#[test]
fn a_missing_keychain_does_not_stop_the_start() {
    let dir = scratch("mgmt-keychain");
    let fw = Forwarder::start_with(&dir, "s", 1, |c| {
        c.forwarder.propagate_keychain = true;
        let nowhere = dir.path().join("no-keychain").display().to_string();
        c.keychain = nexthop_fw::conf::config::KeychainConfig { pib: nowhere.clone(), tpm: nowhere };
    });
    let r = fw.client().command("rib", "register", &ControlParameters { name: Some(Name::from_uri("/up").unwrap()), ..Default::default() });
    assert_eq!(r.unwrap().code, 200);
}

/// The Unix socket is open to every user, as NFD makes it (mode 0666): an app running as
/// another user than the forwarder (here `nobody`, through `setpriv`) connects.
#[test]
fn apps_of_every_user_reach_the_unix_socket() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("socket-mode");
    // (The scratch directory is the test's own; its path must let others through.)
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let fw = Forwarder::start(&dir, "s", 1);
    assert_eq!(std::fs::metadata(&fw.socket).unwrap().permissions().mode() & 0o777, 0o666);
    // The system's Python (any user may run it), connecting as `nobody`.
    let python = "/usr/bin/python3";
    if !std::path::Path::new(python).exists() {
        eprintln!("no {python}: only the mode is checked");
        return;
    }
    let connect = format!("import socket; socket.socket(socket.AF_UNIX).connect({:?})", fw.socket);
    let out =
        std::process::Command::new("setpriv").args(["--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", &connect]).output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("setpriv:") => {
            eprintln!("setpriv cannot change user here: only the mode is checked")
        }
        Ok(o) => panic!("nobody could not connect: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("no setpriv ({e}): only the mode is checked"),
    }
}
