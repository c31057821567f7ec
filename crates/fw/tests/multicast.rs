//! Multicast faces between two running forwarders on one host (UDP joined on loopback or the
//! host's interface, Ethernet on the two ends of a veth pair): each
//! makes one multi-access face to the group; an Interest routed to it reaches the other
//! forwarder's producer and the Data comes back the same way, fragmented when large; a
//! forwarder with no route stays silent on the group instead of sending a Nack to the LAN.
//! And NFD's self-learning strategy over them: a consumer's forwarder with no route broadcasts,
//! the producer's forwarder answers with the producer's prefix announcement, and the consumer's
//! forwarder learns a route to the group from it.

use std::time::Duration;

use common::{mac_of, scratch, Forwarder, Netns, VethPair};
use nexthop_fw::lp::encode::put_tlv;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::{Client, ClientError};
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::types::{FRAGMENT, LP_PACKET, PIT_TOKEN};
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Data, DataView, Emit, Interest, InterestView, LpPacketView, Name};

mod common;

/// A face as `faces/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    id: u64,
    uri: String,
    local: String,
    /// (FaceScope, FacePersistency, LinkType).
    kind: (u64, u64, u64),
}

/// The faces of `fw` whose remote URI `wanted` accepts.
fn faces_where(fw: &Forwarder, wanted: impl Fn(&str) -> bool) -> Vec<Listed> {
    let list = fw.client().dataset("/localhost/nfd/faces/list").unwrap();
    TlvReader::new(&list)
        .map(Result::unwrap)
        .filter_map(|f| {
            let fields: Vec<_> = TlvReader::new(f.value).map(Result::unwrap).collect();
            let num = |ty| fields.iter().find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap()).unwrap();
            let text = |ty| fields.iter().find(|t| t.ty == ty).map(|t| String::from_utf8_lossy(t.value).into_owned()).unwrap();
            let uri = text(0x72);
            wanted(&uri).then(|| Listed { id: num(0x69), uri, local: text(0x81), kind: (num(0x84), num(0x85), num(0x86)) })
        })
        .collect()
}

/// The multicast faces of `fw` to the IPv4 `group`.
fn multicast_faces(fw: &Forwarder, group: &str) -> Vec<Listed> {
    let uri = format!("udp4://{group}");
    faces_where(fw, |u| u == uri)
}

/// A non-local, permanent, multi-access face, as `Listed::kind`.
const MULTI_ACCESS: (u64, u64, u64) = (0, 2, 1);

/// Registers `prefix` from `client`'s face (`face_id` None) or to face `face_id`: the status
/// code.
fn register(client: &mut Client, prefix: &str, face_id: Option<u64>) -> u64 {
    let params = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), face_id, ..Default::default() };
    client.command("rib", "register", &params).unwrap().code
}

/// The one multicast face of `fw` to the IPv4 `group`.
fn multicast_face(fw: &Forwarder, group: &str) -> Listed {
    let faces = multicast_faces(fw, group);
    assert_eq!(faces.len(), 1, "one multicast face");
    faces[0].clone()
}

/// With no interfaces listed, every interface that is up, can multicast and is not loopback
/// gets a multicast face (NFD's default), bound to that interface's address; rules widen and
/// narrow that (NFD's whitelist and blacklist).
#[test]
fn with_no_interface_listed_every_multicast_capable_one_gets_a_face() {
    use nexthop_fw::face::interface_rule::InterfaceRules;
    use nexthop_fw::sys::interfaces::{interface_addresses, udp_v4};
    let group = format!("224.0.23.170:{}", 40_000 + std::process::id() % 10_000);
    let port = group.rsplit(':').next().unwrap().to_string();
    let dir = scratch("multicast-any");
    let fw = Forwarder::start_with(&dir, "s", 1, |c| c.faces.udp_multicast = group.clone());
    let all = interface_addresses().unwrap();
    let capable = udp_v4(&all, &InterfaceRules::default()).unwrap();
    let uris = |addresses: &mut dyn Iterator<Item = std::net::Ipv4Addr>| {
        let mut v: Vec<String> = addresses.map(|a| format!("udp4://{a}:{port}")).collect();
        v.sort();
        v
    };
    let local_uris = |fw: &Forwarder| {
        let mut got: Vec<String> = multicast_faces(fw, &group).into_iter().map(|f| f.local).collect();
        got.sort();
        got
    };
    let got = local_uris(&fw);
    assert_eq!(got, uris(&mut capable.iter().map(|c| c.0)));
    assert!(!got.iter().any(|uri| uri.starts_with("udp4://127.")), "not on loopback: {got:?}");
    drop(fw);
    // `*` and loopback by name, less the first multicast-capable interface (by name).
    let left_out = all.iter().find(|a| capable.iter().any(|c| std::net::IpAddr::V4(c.0) == a.address)).map(|a| a.name.clone());
    let dir = scratch("multicast-rules");
    let fw = Forwarder::start_with(&dir, "s", 1, |c| {
        c.faces.udp_multicast = group.clone();
        c.faces.udp_multicast_interfaces = vec!["*".into(), "lo".into()];
        c.faces.udp_multicast_exclude = left_out.iter().cloned().collect();
    });
    let kept = capable
        .iter()
        .map(|c| c.0)
        .filter(|a| !all.iter().any(|i| Some(&i.name) == left_out.as_ref() && i.address == std::net::IpAddr::V4(*a)));
    assert_eq!(local_uris(&fw), uris(&mut kept.chain([std::net::Ipv4Addr::LOCALHOST])));
}

/// Answers the next Interest `producer` receives with Data of `size` bytes of content.
fn answer_next(producer: &mut Client, size: usize) -> String {
    let wire = producer.recv(Duration::from_secs(3)).unwrap().expect("the Interest crosses the group");
    let lp = LpPacketView::decode(&wire).expect("with the forwarder's PIT token");
    let interest = InterestView::decode(lp.fragment.unwrap()).unwrap();
    let mut d = Data::new(interest.name().to_name(), vec![b'm'; size]);
    d.sign_digest_sha256();
    let (mut fields, mut out) = (Vec::new(), Vec::new());
    put_tlv(&mut fields, PIT_TOKEN, lp.pit_token.unwrap());
    put_tlv(&mut fields, FRAGMENT, &d.to_bytes());
    put_tlv(&mut out, LP_PACKET, &fields);
    producer.send(&out).unwrap();
    interest.name().to_string()
}

/// `consumer` fetches `<prefix>/small` (100 bytes) and `<prefix>/large` (5000 bytes, which
/// cross as NDNLPv2 fragments) from `producer`, across the group.
fn fetch_small_and_large(consumer: &mut Client, producer: &mut Client, prefix: &str) {
    for (n, size) in [("small", 100), ("large", 5000)] {
        let mut i = Interest::new(Name::from_uri(&format!("{prefix}/{n}")).unwrap());
        i.nonce = Some(consumer.next_nonce());
        consumer.send(&i.to_bytes()).unwrap();
        assert_eq!(answer_next(producer, size), format!("{prefix}/{n}"));
        let wire = consumer.recv(Duration::from_secs(3)).unwrap().expect("the Data crosses the group");
        let packet = LpPacketView::decode(&wire).ok().and_then(|lp| lp.fragment).map_or(wire.clone(), <[u8]>::to_vec);
        let data = DataView::decode(&packet).unwrap();
        assert_eq!(data.content().map(<[u8]>::len), Some(size), "{n}");
    }
}

/// B has a producer of `prefix`; A routes `prefix` and `/nowhere` to its multi-access face
/// `face_a`. A's consumer fetches small and large Data across the link; B has no route for
/// `/nowhere`, and sends no Nack to the link, so A's consumer hears nothing (B counts it).
fn across_the_link(a: &Forwarder, b: &Forwarder, face_a: u64, prefix: &str) {
    let mut producer = b.client();
    assert_eq!(register(&mut producer, prefix, None), 200);
    let mut operator = a.client();
    assert_eq!(register(&mut operator, prefix, Some(face_a)), 200);
    assert_eq!(register(&mut operator, "/nowhere", Some(face_a)), 200);
    let mut consumer = a.client();
    fetch_small_and_large(&mut consumer, &mut producer, prefix);

    let mut i = Interest::new(Name::from_uri("/nowhere/x").unwrap());
    i.nonce = Some(consumer.next_nonce());
    i.lifetime_ms = Some(400);
    match consumer.express(&i, Duration::from_millis(800)) {
        Err(ClientError::Timeout(_)) => {}
        other => panic!("no Nack crosses the link: {other:?}"),
    }
    assert!(b.drops("nack-on-multi-access") >= 1, "B's Nack stayed home, counted");
}

#[test]
fn two_forwarders_reach_each_other_through_their_multicast_faces() {
    let group = format!("224.0.23.170:{}", 30_000 + std::process::id() % 10_000);
    let configure = |c: &mut nexthop_fw::conf::config::Config| {
        c.faces.udp_multicast = group.clone();
        c.faces.udp_multicast_interfaces = vec!["127.0.0.1".into()];
    };
    let a_dir = scratch("multicast-a");
    let a = Forwarder::start_with(&a_dir, "a", 1, configure);
    let b_dir = scratch("multicast-b");
    // B lists the loopback interface by name (nfd.conf's `whitelist { ifname lo }`), and its
    // face is ad hoc (`mcast_ad_hoc yes`).
    let b = Forwarder::start_with(&b_dir, "b", 1, |c| {
        configure(c);
        c.faces.udp_multicast_interfaces = vec!["lo".into()];
        c.faces.udp_multicast_ad_hoc = true;
    });
    let port = group.rsplit(':').next().unwrap();
    let on_a = multicast_face(&a, &group);
    assert_eq!((on_a.local, on_a.kind), (format!("udp4://127.0.0.1:{port}"), MULTI_ACCESS));
    let face_a = on_a.id;
    let on_b = multicast_face(&b, &group);
    assert_eq!((on_b.local, on_b.kind), (format!("udp4://127.0.0.1:{port}"), (MULTI_ACCESS.0, MULTI_ACCESS.1, 2)), "`lo`, ad hoc");

    across_the_link(&a, &b, face_a, "/mc");
    assert!(b.drops("no-route") >= 1, "B had no route for /nowhere");
    let mut operator = a.client();
    // Management refuses to make another face to the group.
    let create = ControlParameters { uri: Some(format!("udp4://{group}")), ..Default::default() };
    let r = operator.command("faces", "create", &create).unwrap();
    assert_eq!((r.code, r.body.and_then(|p| p.face_id)), (409, Some(face_a)), "the multicast face exists");
}

/// The same over IPv6 (NFD's ff02::1234), on the link-local address of the host's first
/// interface that can carry it (IPv6 multicast does not loop back on `lo`): large Data crosses
/// as fragments.
#[test]
fn two_forwarders_reach_each_other_through_ipv6_multicast_faces() {
    use nexthop_fw::sys::interfaces::{interface_addresses, udp_v6};
    let chosen = udp_v6(&interface_addresses().unwrap(), &nexthop_fw::face::interface_rule::InterfaceRules::default()).unwrap();
    let Some(&(index, address, _)) = chosen.first() else {
        eprintln!("no interface with an IPv6 link-local address that can multicast: nothing to join");
        return;
    };
    let port = 30_000 + std::process::id() % 10_000;
    let configure = |c: &mut nexthop_fw::conf::config::Config| c.faces.udp6_multicast = format!("[ff02::1234]:{port}");
    let a_dir = scratch("multicast6-a");
    let a = Forwarder::start_with(&a_dir, "a", 1, configure);
    let b_dir = scratch("multicast6-b");
    let b = Forwarder::start_with(&b_dir, "b", 1, configure);
    let group = format!("udp6://[ff02::1234%{index}]:{port}");
    let on_a = faces_where(&a, |u| u == group);
    assert_eq!(on_a.len(), 1, "one IPv6 multicast face on interface {index}: {on_a:?}");
    assert_eq!((on_a[0].local.clone(), on_a[0].kind), (format!("udp6://[{address}%{index}]:{port}"), MULTI_ACCESS));
    assert_eq!(faces_where(&b, |u| u == group).len(), 1);

    let mut producer = b.client();
    assert_eq!(register(&mut producer, "/mc6", None), 200);
    assert_eq!(register(&mut a.client(), "/mc6", Some(on_a[0].id)), 200);
    fetch_small_and_large(&mut a.client(), &mut producer, "/mc6");
}

/// A listed interface that cannot carry the group (UDP over IPv4 or IPv6, Ethernet) stops the
/// forwarder from starting, naming it.
#[test]
fn a_listed_interface_that_cannot_carry_the_group_is_an_error() {
    let dir = scratch("multicast-bad");
    let mut cfg = nexthop_fw::conf::config::Config::default();
    cfg.faces.unix = dir.path().join("s.sock").to_string_lossy().into_owned();
    cfg.faces.tcp = String::new();
    cfg.faces.udp = String::new();
    cfg.faces.udp6_multicast = "[ff02::1234]:56363".into();
    cfg.faces.udp6_multicast_interfaces = vec!["no-such-if0".into()];
    let e = nexthop_fw::runtime::Runtime::new(cfg.clone()).unwrap_err().to_string();
    assert!(e.contains("faces.udp6_multicast_interfaces: \"no-such-if0\" is no interface with an IPv6 link-local address"), "{e}");
    cfg.faces.udp6_multicast = String::new();
    cfg.faces.udp_multicast = "224.0.23.170:56363".into();
    cfg.faces.udp_multicast_interfaces = vec!["192.0.2.254".into()];
    let e = nexthop_fw::runtime::Runtime::new(cfg.clone()).unwrap_err().to_string();
    assert!(e.contains("joining 224.0.23.170:56363 on 192.0.2.254"), "{e}");
    // Ethernet: an interface that is not there, or is loopback (no Ethernet address).
    cfg.faces.udp_multicast = String::new();
    cfg.faces.ether_multicast = "01:00:5e:00:17:aa".into();
    for name in ["no-such-if0", "lo"] {
        cfg.faces.ether_interfaces = vec![name.into()];
        let e = nexthop_fw::runtime::Runtime::new(cfg.clone()).unwrap_err().to_string();
        assert!(e.contains(&format!("faces.ether_interfaces: {name:?} is no interface with an Ethernet address")), "{e}");
    }
}

/// Both forwarders run NFD's self-learning strategy. The producer announces `/sl` to its own
/// forwarder (`rib/announce`); the consumer's forwarder, with no route, broadcasts the first
/// Interest on its multicast face; the Data comes back with the announcement, and the consumer's
/// forwarder has a route to `/sl` through the group from then on, which the next Interest
/// follows.
#[test]
fn self_learning_finds_a_producer_across_the_lan() {
    self_learning_across_the_lan(1, "224.0.23.171");
}

/// The same with two forwarding threads in each forwarder: the Data's announcement reaches the
/// RIB from a forwarding thread, and the producer's announcement every thread.
#[test]
fn self_learning_finds_a_producer_across_the_lan_from_forwarding_threads() {
    self_learning_across_the_lan(2, "224.0.23.172");
}

fn self_learning_across_the_lan(threads: usize, group_address: &str) {
    use nexthop_fw::conf::config::StaticStrategy;
    use nexthop_wire::{Component, MetaInfo};
    let group = format!("{group_address}:{}", 30_000 + std::process::id() % 10_000);
    let configure = |c: &mut nexthop_fw::conf::config::Config| {
        c.faces.udp_multicast = group.clone();
        c.faces.udp_multicast_interfaces = vec!["127.0.0.1".into()];
        c.strategy.push(StaticStrategy { prefix: "/".into(), strategy: "self-learning".into() });
    };
    let a_dir = scratch(&format!("self-learning-a{threads}"));
    let a = Forwarder::start_with(&a_dir, "a", threads, configure);
    let b_dir = scratch(&format!("self-learning-b{threads}"));
    let b = Forwarder::start_with(&b_dir, "b", threads, configure);
    let face_a = multicast_face(&a, &group).id;

    // The producer announces /sl to B (a prefix announcement in rib/announce's parameters).
    let mut producer = b.client();
    let pa_name =
        Name::from_uri("/sl").unwrap().with(Component::keyword(&b"PA"[..])).with(Component::version(1)).with(Component::segment(0));
    let mut content = Vec::new();
    nexthop_fw::lp::encode::put_nonneg(&mut content, 0x6d, 3_600_000);
    let mut pa = Data::new(pa_name, content);
    pa.meta_info = Some(MetaInfo { content_type: Some(5), ..MetaInfo::default() });
    pa.sign_digest_sha256();
    let mut announce = Interest::new(Name::from_uri("/localhost/nfd/rib/announce").unwrap());
    announce.set_app_parameters(pa.to_bytes());
    announce.nonce = Some(producer.next_nonce());
    producer.send(&announce.to_bytes()).unwrap();
    let reply = producer.recv(Duration::from_secs(2)).unwrap().expect("rib/announce answered");
    assert!(DataView::decode(&reply).is_ok());
    assert!(b.has_route(&Name::from_uri("/sl").unwrap()));
    let sl = Name::from_uri("/sl").unwrap();
    assert!(!a.has_route(&sl), "A knows no route yet");

    let mut consumer = a.client();
    for n in 1..=3 {
        let mut i = Interest::new(Name::from_uri(&format!("/sl/{n}")).unwrap());
        i.nonce = Some(consumer.next_nonce());
        consumer.send(&i.to_bytes()).unwrap();
        assert_eq!(answer_next(&mut producer, 10), format!("/sl/{n}"));
        let wire = consumer.recv(Duration::from_secs(3)).unwrap().expect("the Data comes back");
        let packet = LpPacketView::decode(&wire).ok().and_then(|lp| lp.fragment).map_or(wire.clone(), <[u8]>::to_vec);
        assert!(DataView::decode(&packet).is_ok());
        // After the first, A has learned /sl through its multicast face (origin prefixann).
        let rib = a.client().dataset("/localhost/nfd/rib/list").unwrap();
        let learned = TlvReader::new(&rib).map(Result::unwrap).any(|entry| {
            let fields: Vec<_> = TlvReader::new(entry.value).map(Result::unwrap).collect();
            fields.first().is_some_and(|f| f.value == sl.value())
                && fields.iter().filter(|f| f.ty == 0x81).any(|route| {
                    let r: Vec<_> = TlvReader::new(route.value).map(Result::unwrap).collect();
                    let num = |ty| r.iter().find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap());
                    num(0x69) == Some(face_a) && num(0x6f) == Some(129)
                })
        });
        assert!(learned, "after Interest {n}, A routes /sl to the group, learned");
    }
}

/// Waits up to 5 s for `done`, failing with `what`.
fn within(what: &str, done: &dyn Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what} within 5 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Multicast faces follow the host's interfaces after the start, as NFD's network monitor
/// makes them: an interface the rules choose that appears and gets an address gets its face
/// (the kernel's notice, then the interfaces read again), and a static route to the group,
/// waiting since the start, goes on it; the face outlives its interface going down and up
/// again (same id); it closes, with the route, when its address is removed. (In a network
/// namespace of its own, so that no other test sees the interface.)
#[test]
fn a_multicast_face_follows_an_interface_that_comes_and_goes() {
    let Some(ns) = Netns::new("mf") else { return };
    let group = format!("224.0.23.170:{}", 40_000 + std::process::id() % 20_000);
    let dir = scratch("multicast-follows");
    let fw = Forwarder::start_in(Some(&ns), &dir, "s", 1, |c| {
        c.faces.udp_multicast = group.clone();
        c.faces.udp_multicast_interfaces = vec!["lan*".into()];
        c.route.push(nexthop_fw::conf::config::StaticRoute { prefix: "/lan".into(), face: format!("udp4://{group}"), cost: 0 });
    });
    let lan = Name::from_uri("/lan").unwrap();
    assert!(multicast_faces(&fw, &group).is_empty(), "no such interface yet");
    assert!(!fw.has_route(&lan), "the route waits for its face");
    ns.ip(&["link", "add", "lan0", "type", "veth", "peer", "name", "lan0peer"]);
    ns.ip(&["addr", "add", "10.78.0.1/24", "dev", "lan0"]);
    ns.ip(&["link", "set", "lan0peer", "up"]);
    ns.ip(&["link", "set", "lan0", "up"]);
    let local = format!("udp4://10.78.0.1:{}", group.rsplit(':').next().unwrap());
    let face_on = |fw: &Forwarder| multicast_faces(fw, &group).into_iter().find(|f| f.local == local);
    within("a face on the new interface", &|| face_on(&fw).is_some());
    let face = face_on(&fw).unwrap();
    assert_eq!(face.kind, MULTI_ACCESS);
    within("the route on the new face", &|| fw.has_route(&lan));
    // Down and up again: the same face.
    ns.ip(&["link", "set", "lan0", "down"]);
    std::thread::sleep(Duration::from_millis(600));
    ns.ip(&["link", "set", "lan0", "up"]);
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(face_on(&fw).map(|f| f.id), Some(face.id), "kept while its interface was down");
    ns.ip(&["addr", "del", "10.78.0.1/24", "dev", "lan0"]);
    within("the face closed with its address", &|| face_on(&fw).is_none());
    assert!(!fw.has_route(&lan), "its route went with it");
}

/// Ethernet ports follow the interfaces too: an interface the rules choose that appears gets
/// its port and multicast face, which outlives the interface going down and up again and
/// closes when the interface is removed. (In a network namespace of its own; with two
/// forwarding threads, which learn of the faces as they come and go.)
#[test]
fn an_ethernet_port_follows_an_interface_that_comes_and_goes() {
    let Some(ns) = Netns::new("ef") else { return };
    let group = "01:00:5e:00:17:aa";
    let dir = scratch("ether-follows");
    let fw = Forwarder::start_in(Some(&ns), &dir, "s", 2, |c| {
        c.faces.ether_multicast = group.into();
        c.faces.ether_interfaces = vec!["lan*".into()];
    });
    let face_on = |fw: &Forwarder| faces_where(fw, |u| u.starts_with("ether://")).into_iter().find(|f| f.local == "dev://lan1");
    assert!(face_on(&fw).is_none(), "no such interface yet");
    ns.ip(&["link", "add", "lan1", "type", "veth", "peer", "name", "lan1peer"]);
    ns.ip(&["link", "set", "lan1peer", "up"]);
    ns.ip(&["link", "set", "lan1", "up"]);
    within("a port and face on the new interface", &|| face_on(&fw).is_some());
    let face = face_on(&fw).unwrap();
    assert_eq!((face.uri.as_str(), face.kind), (format!("ether://[{group}]").as_str(), MULTI_ACCESS));
    ns.ip(&["link", "set", "lan1", "down"]);
    std::thread::sleep(Duration::from_millis(600));
    ns.ip(&["link", "set", "lan1", "up"]);
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(face_on(&fw).map(|f| f.id), Some(face.id), "kept while its interface was down");
    ns.ip(&["link", "del", "lan1"]);
    within("the face closed with its interface", &|| face_on(&fw).is_none());
}

/// Two forwarders on the two ends of a veth pair, each with an Ethernet multicast face (NFD's
/// group and EtherType) on its end, which has no IP address: an Interest routed to the face
/// reaches the other forwarder's producer, and the Data comes back, in NDNLPv2 fragments when
/// it is over the interface's 1500-byte MTU; no Nack goes out on it.
#[test]
fn two_forwarders_reach_each_other_through_ethernet_multicast_faces() {
    let Some(veth) = VethPair::new("e") else { return };
    let group = "01:00:5e:00:17:aa";
    let start = |dir: &tempfile::TempDir, name: &str, interface: &str| {
        Forwarder::start_with(dir, name, 1, |c| {
            c.faces.ether_multicast = group.into();
            c.faces.ether_interfaces = vec![interface.into()];
        })
    };
    let a_dir = scratch("ether-a");
    let a = start(&a_dir, "a", &veth.a);
    let b_dir = scratch("ether-b");
    let b = start(&b_dir, "b", &veth.b);
    let on_a = faces_where(&a, |u| u.starts_with("ether://"));
    assert_eq!(on_a.len(), 1, "{on_a:?}");
    let face_a = on_a[0].id;
    assert_eq!(on_a[0].uri, format!("ether://[{group}]"));
    assert_eq!((on_a[0].local.clone(), on_a[0].kind), (format!("dev://{}", veth.a), MULTI_ACCESS));
    assert_eq!(faces_where(&b, |u| u.starts_with("ether://")).len(), 1);

    across_the_link(&a, &b, face_a, "/eth");
    // Management finds the multicast face for the group's URI (409, with it), and lists the
    // interface's port among the channels.
    let create = ControlParameters { uri: Some(format!("ether://[{group}]")), ..Default::default() };
    let r = a.client().command("faces", "create", &create).unwrap();
    assert_eq!((r.code, r.body.and_then(|p| p.face_id)), (409, Some(face_a)));
    let channels = a.client().dataset("/localhost/nfd/faces/channels").unwrap();
    let local_uris: Vec<String> = TlvReader::new(&channels)
        .map(Result::unwrap)
        .filter_map(|c| TlvReader::new(c.value).map(Result::unwrap).find(|t| t.ty == 0x81))
        .map(|t| String::from_utf8_lossy(t.value).into_owned())
        .collect();
    assert!(local_uris.contains(&format!("dev://{}", veth.a)), "{local_uris:?}");
}

/// Unicast Ethernet faces on a veth pair, as NFD makes them: A creates one to B's address with
/// `faces/create ether://[mac]` and LocalUri `dev://<interface>` (persistent, point-to-point); B,
/// listening (`faces.ether_listen`), makes an on-demand face to A when A's first frame arrives.
/// Data crosses back through it, in fragments when large, and so does a Nack (a unicast face
/// is point-to-point). A forwarder there without `ether_listen` counts A's frames as
/// `unknown-peer` drops.
#[test]
fn unicast_ethernet_faces_are_created_by_management_and_on_demand() {
    let Some(veth) = VethPair::new("u") else { return };
    // Listening, or with a multicast face and not listening.
    let start = |dir: &tempfile::TempDir, name: &str, interface: &str, listen: bool| {
        Forwarder::start_with(dir, name, 1, |c| {
            c.faces.ether_listen = listen;
            c.faces.ether_interfaces = vec![interface.into()];
            if !listen {
                c.faces.ether_multicast = "01:00:5e:00:17:aa".into();
            }
        })
    };
    let a_dir = scratch("ether-unicast-a");
    let a = start(&a_dir, "a", &veth.a, true);
    let b_dir = scratch("ether-unicast-b");
    let b = start(&b_dir, "b", &veth.b, true);
    let (mac_a, mac_b) = (mac_of(&veth.a), mac_of(&veth.b));
    assert!(faces_where(&a, |u| u.starts_with("ether://")).is_empty(), "no multicast face without a group");

    let mut operator = a.client();
    let create = |op: &mut Client, local: Option<String>| {
        let params = ControlParameters { uri: Some(format!("ether://[{mac_b}]")), local_uri: local, ..Default::default() };
        let r = op.command("faces", "create", &params).unwrap();
        (r.code, r.body)
    };
    let (code, body) = create(&mut operator, Some(format!("dev://{}", veth.a)));
    assert_eq!(code, 200);
    let body = body.unwrap();
    assert_eq!(
        (body.uri.as_deref(), body.local_uri.clone()),
        (Some(format!("ether://[{mac_b}]").as_str()), Some(format!("dev://{}", veth.a)))
    );
    let face_a = body.face_id.unwrap();
    assert_eq!(create(&mut operator, None).0, 409, "the one Ethernet port is found without a LocalUri, and the face exists");
    assert_eq!(create(&mut operator, Some("dev://nowhere0".into())).0, 406);
    let listed = faces_where(&a, |u| u.starts_with("ether://"));
    assert_eq!(listed.iter().map(|f| (f.id, f.kind)).collect::<Vec<_>>(), [(face_a, (0, 0, 0))], "non-local, persistent, point-to-point");

    let mut producer = b.client();
    assert_eq!(register(&mut producer, "/uni", None), 200);
    assert_eq!(register(&mut operator, "/uni", Some(face_a)), 200);
    assert_eq!(register(&mut operator, "/nowhere", Some(face_a)), 200);
    let mut consumer = a.client();
    fetch_small_and_large(&mut consumer, &mut producer, "/uni");
    let on_b = faces_where(&b, |u| u.starts_with("ether://"));
    assert_eq!(on_b.len(), 1, "{on_b:?}");
    assert_eq!(
        (on_b[0].uri.clone(), on_b[0].local.clone(), on_b[0].kind),
        (format!("ether://[{mac_a}]"), format!("dev://{}", veth.b), (0, 1, 0)),
        "on-demand"
    );

    // B has no route for /nowhere: its Nack crosses the point-to-point face.
    let mut i = Interest::new(Name::from_uri("/nowhere/x").unwrap());
    i.nonce = Some(consumer.next_nonce());
    match consumer.express(&i, Duration::from_secs(2)) {
        Ok(nexthop_tools::client::Answer::Nack(nexthop_wire::NackReason::NoRoute)) => {}
        other => panic!("a Nack NoRoute from B: {other:?}"),
    }
    drop(b);
    // A forwarder that does not listen takes no frame from a peer it has no face to.
    let quiet_dir = scratch("ether-unicast-quiet");
    let quiet = start(&quiet_dir, "q", &veth.b, false);
    let mut i = Interest::new(Name::from_uri("/uni/again").unwrap());
    i.nonce = Some(consumer.next_nonce());
    i.lifetime_ms = Some(300);
    assert!(matches!(consumer.express(&i, Duration::from_millis(600)), Err(ClientError::Timeout(_))));
    assert!(quiet.drops("unknown-peer") >= 1, "counted");
    assert_eq!(faces_where(&quiet, |u| u.starts_with("ether://")).len(), 1, "its multicast face alone");
}

/// A unicast Ethernet face and a route through it from the configuration (`[[face]]` with its
/// LocalUri, `[[route]]` naming it by URI): the face is permanent, and the route carries an
/// Interest to the forwarder at the other end, whose listening port makes a face for it.
#[test]
fn a_configured_unicast_ethernet_face_carries_its_route() {
    use nexthop_fw::conf::config::{StaticFace, StaticRoute};
    let Some(veth) = VethPair::new("s") else { return };
    let peer = format!("ether://[{}]", mac_of(&veth.b));
    let a_dir = scratch("ether-static-a");
    let a = Forwarder::start_with(&a_dir, "a", 1, |c| {
        c.faces.ether_listen = true;
        c.faces.ether_interfaces = vec![veth.a.clone()];
        c.face.push(StaticFace { uri: peer.clone(), local: Some(format!("dev://{}", veth.a)) });
        c.route.push(StaticRoute { prefix: "/cfg".into(), face: peer.clone(), cost: 0 });
    });
    let b_dir = scratch("ether-static-b");
    let b = Forwarder::start_with(&b_dir, "b", 1, |c| {
        c.faces.ether_listen = true;
        c.faces.ether_interfaces = vec![veth.b.clone()];
    });
    let on_a = faces_where(&a, |u| u == peer);
    assert_eq!(on_a.iter().map(|f| f.kind).collect::<Vec<_>>(), [(0, 2, 0)], "permanent, point-to-point");
    assert!(a.has_route(&Name::from_uri("/cfg").unwrap()));
    let mut producer = b.client();
    assert_eq!(register(&mut producer, "/cfg", None), 200);
    fetch_small_and_large(&mut a.client(), &mut producer, "/cfg");
}

/// On-demand Ethernet faces close when idle (`faces.ether_idle_timeout_ms`),
/// and one that management made persistent (`faces/update`) stays: B's on-demand face to A's
/// address goes 1 s after A's last frame, and comes back, persistent this time, at the next.
#[test]
fn an_idle_on_demand_ethernet_face_closes_unless_made_persistent() {
    let Some(veth) = VethPair::new("i") else { return };
    let a_dir = scratch("ether-idle-a");
    let a = Forwarder::start_with(&a_dir, "a", 1, |c| {
        c.faces.ether_listen = true;
        c.faces.ether_interfaces = vec![veth.a.clone()];
    });
    let b_dir = scratch("ether-idle-b");
    let b = Forwarder::start_with(&b_dir, "b", 1, |c| {
        c.faces.ether_listen = true;
        c.faces.ether_interfaces = vec![veth.b.clone()];
        c.faces.ether_idle_timeout_ms = 1000;
    });
    let to_b = ControlParameters {
        uri: Some(format!("ether://[{}]", mac_of(&veth.b))),
        local_uri: Some(format!("dev://{}", veth.a)),
        ..Default::default()
    };
    let mut operator = a.client();
    let face_a = operator.command("faces", "create", &to_b).unwrap().body.unwrap().face_id.unwrap();
    assert_eq!(register(&mut operator, "/idle", Some(face_a)), 200);
    let from_a = format!("ether://[{}]", mac_of(&veth.a));
    let ping = |consumer: &mut Client| {
        let mut i = Interest::new(Name::from_uri("/idle/x").unwrap());
        i.nonce = Some(consumer.next_nonce());
        i.lifetime_ms = Some(200);
        let _ = consumer.express(&i, Duration::from_millis(400)); // B has no route: a Nack or nothing
    };
    let mut consumer = a.client();
    ping(&mut consumer);
    let on_b = faces_where(&b, |u| u == from_a);
    assert_eq!(on_b.iter().map(|f| f.kind.1).collect::<Vec<_>>(), [1], "on demand");
    std::thread::sleep(Duration::from_millis(2600));
    assert!(faces_where(&b, |u| u == from_a).is_empty(), "closed when idle");
    assert_eq!(faces_where(&a, |u| u.starts_with("ether://")).len(), 1, "A's persistent face stays");

    ping(&mut consumer);
    let id = faces_where(&b, |u| u == from_a)[0].id;
    let persistent = ControlParameters { face_id: Some(id), face_persistency: Some(0), ..Default::default() };
    assert_eq!(b.client().command("faces", "update", &persistent).unwrap().code, 200);
    std::thread::sleep(Duration::from_millis(2600));
    assert_eq!(faces_where(&b, |u| u == from_a).iter().map(|f| f.kind.1).collect::<Vec<_>>(), [0], "persistent, kept");
}
