//! Congestion marking on a running nexthop: a consumer that stops reading lets its face's send
//! queue grow past 64 KiB; Data sent to it 100 ms later carries CongestionMark, Data sent
//! before does not, and with marking turned off for the face (faces/update) none does. The same
//! on an Ethernet face and on a UDP face, whose queues are their sockets' kernel queues (behind
//! a throttled veth). And a mark that Data brings from upstream reaches the consumer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{mac_of, scratch, Forwarder, LinkedNetns, VethPair};
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::Client;
use nexthop_tools::traffic;
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Component, Data, DataView, Emit, Interest, InterestView, LpPacketView, Name};

mod common;

/// Sends Interests for `/big/<tag><i>`, i in `range`, without reading anything.
fn ask(c: &mut Client, tag: &str, range: std::ops::Range<u32>) {
    for i in range {
        let mut x = Interest::new(Name::from_uri("/big").unwrap().with(Component::generic(format!("{tag}{i}").into_bytes())));
        x.nonce = Some(c.next_nonce());
        c.send(&x.to_bytes()).unwrap();
    }
}

/// Reads `n` answers: for each Data, its last name component and whether it came marked.
fn answers(c: &mut Client, n: usize) -> Vec<(String, bool)> {
    (0..n)
        .map(|_| {
            let wire = c.recv(Duration::from_secs(5)).unwrap().expect("every Interest is answered");
            let (packet, mark) = match LpPacketView::decode(&wire) {
                Ok(lp) => (lp.fragment.unwrap().to_vec(), lp.congestion_mark == Some(1)),
                Err(_) => (wire, false),
            };
            let d = DataView::decode(&packet).expect("Data");
            let name = d.name();
            (String::from_utf8_lossy(name.get(name.len() - 1).unwrap().value()).into_owned(), mark)
        })
        .collect()
}

/// Congests the consumer's face: 100 Interests for 8 KB Data while it reads nothing, then,
/// 150 ms later, 50 more; returns the answers.
fn congest(c: &mut Client, round: &str) -> Vec<(String, bool)> {
    ask(c, &format!("{round}a"), 0..100);
    std::thread::sleep(Duration::from_millis(150));
    ask(c, &format!("{round}b"), 0..50);
    std::thread::sleep(Duration::from_millis(50));
    answers(c, 150)
}

#[test]
fn a_long_send_queue_marks_data_until_marking_is_turned_off() {
    let dir = scratch("congestion");
    let fw = Forwarder::start(&dir, "s", 1);
    let stop = Arc::new(AtomicBool::new(false));
    let producer = traffic::start_producer(&fw.unix(), &fw.unix(), &Name::from_uri("/big").unwrap(), 8000, stop.clone()).unwrap();
    let mut c = fw.client();

    // Unhurried: nothing marked.
    for i in 0..20 {
        ask(&mut c, "calm", i..i + 1);
        assert!(!answers(&mut c, 1)[0].1, "an Interest at a time");
    }
    let got = congest(&mut c, "r1");
    let marked: Vec<&str> = got.iter().filter(|a| a.1).map(|a| a.0.as_str()).collect();
    assert!(marked.iter().any(|n| n.starts_with("r1b")), "a queue above 64 KiB for 100 ms marks: {marked:?}");
    // The first answers went out before the queue was long (or at the episode's start).
    assert!((0..10).all(|i| !marked.contains(&format!("r1a{i}").as_str())), "{marked:?}");

    let counters = nexthop_fw::mgmt::dataset::parse_labelled_counts(&c.dataset("/localhost/nfd/status/counters").unwrap());
    let counted = counters.iter().find(|(label, _)| label == "congestion_marks").unwrap().1;
    assert_eq!(counted, marked.len() as u64, "status/counters counts the marks");

    // The face as faces/list shows it: marking on, NFD's interval and threshold.
    let face = faces_marking(&mut c);
    assert!(face.iter().any(|&(flags, interval, threshold)| flags & 4 != 0 && interval == 100_000_000 && threshold == 65_536), "{face:?}");

    // faces/update on its own face: marking off.
    let off = ControlParameters { flags: Some(0), mask: Some(4), ..Default::default() };
    let r = c.command("faces", "update", &off).unwrap();
    assert_eq!((r.code, r.body.unwrap().flags.unwrap() & 4), (200, 0));
    let got = congest(&mut c, "r2");
    assert!(got.iter().all(|a| !a.1), "marking is off");
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
}

/// Each face's (Flags, BaseCongestionMarkingInterval, DefaultCongestionThreshold).
fn faces_marking(c: &mut Client) -> Vec<(u64, u64, u64)> {
    let list = c.dataset("/localhost/nfd/faces/list").unwrap();
    TlvReader::new(&list)
        .map(Result::unwrap)
        .map(|f| {
            let field =
                |ty| TlvReader::new(f.value).map(Result::unwrap).find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap()).unwrap();
            (field(0x6c), field(0x87), field(0x88))
        })
        .collect()
}

#[test]
fn a_mark_from_upstream_reaches_the_consumer() {
    let dir = scratch("congestion-upstream");
    let fw = Forwarder::start(&dir, "s", 1);
    let prefix = Name::from_uri("/marked").unwrap();
    let mut producer = fw.client();
    let r = producer.command("rib", "register", &ControlParameters { name: Some(prefix.clone()), ..Default::default() }).unwrap();
    assert_eq!(r.code, 200);
    let mut consumer = fw.client();
    let mut x = Interest::new(prefix.clone().with(Component::generic(&b"x"[..])));
    x.nonce = Some(consumer.next_nonce());
    consumer.send(&x.to_bytes()).unwrap();
    // The producer answers in an LpPacket with CongestionMark 1 and the forwarder's PIT token.
    let wire = producer.recv(Duration::from_secs(2)).unwrap().expect("the Interest");
    let lp = LpPacketView::decode(&wire).expect("with a PIT token");
    let interest = InterestView::decode(lp.fragment.unwrap()).unwrap();
    let mut d = Data::new(interest.name().to_name(), b"hi".to_vec());
    d.sign_digest_sha256();
    let mut answer = Vec::new();
    let mut fields = Vec::new();
    nexthop_fw::lp::encode::put_tlv(&mut fields, nexthop_wire::types::PIT_TOKEN, lp.pit_token.unwrap());
    nexthop_fw::lp::encode::put_nonneg(&mut fields, nexthop_wire::types::CONGESTION_MARK, 1);
    nexthop_fw::lp::encode::put_tlv(&mut fields, nexthop_wire::types::FRAGMENT, &d.to_bytes());
    nexthop_fw::lp::encode::put_tlv(&mut answer, nexthop_wire::types::LP_PACKET, &fields);
    producer.send(&answer).unwrap();
    let got = answers(&mut consumer, 1);
    assert_eq!(got, [("x".to_string(), true)]);
}

/// NFD marks on datagram faces by their socket's kernel queue, and so does nexthop: on an
/// Ethernet face by its interface port's socket, on a UDP face by the UDP faces' socket. A's end
/// of the link is throttled (tbf, 8 Mbit/s), so the 8 KB Data A's producer sends back to B's
/// consumer (each as six fragments) wait in the interface's queue, charged to A's socket: the
/// second round of Interests, 150 ms into the backlog, is answered with marks (A's: the consumer
/// keeps reading, so B's face to it never queues).
fn marks_behind_a_slow_link(a: &Forwarder, b: &Forwarder, face: &ControlParameters) {
    let stop = Arc::new(AtomicBool::new(false));
    let producer = traffic::start_producer(&a.unix(), &a.unix(), &Name::from_uri("/big").unwrap(), 8000, stop.clone()).unwrap();
    let mut c = b.client();
    let made = c.command("faces", "create", face).unwrap();
    assert_eq!(made.code, 200, "{}", made.text);
    let face = made.body.unwrap().face_id.unwrap();
    let route = ControlParameters { name: Some(Name::from_uri("/big").unwrap()), face_id: Some(face), ..Default::default() };
    assert_eq!(c.command("rib", "register", &route).unwrap().code, 200);

    for i in 0..5 {
        ask(&mut c, "calm", i..i + 1);
        assert!(!answers(&mut c, 1)[0].1, "an Interest at a time");
    }
    // The consumer reads as Data arrive, so that B's face to it never queues: every mark is A's.
    ask(&mut c, "r1a", 0..100);
    let mut got = Vec::new();
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(150) {
        got.extend(answers(&mut c, 1));
    }
    ask(&mut c, "r1b", 0..50);
    got.extend(answers(&mut c, 150 - got.len()));
    let marked: Vec<&str> = got.iter().filter(|a| a.1).map(|a| a.0.as_str()).collect();
    assert!(marked.iter().any(|n| n.starts_with("r1b")), "a queue above 64 KiB for 100 ms marks: {marked:?}");
    assert!((0..5).all(|i| !marked.contains(&format!("r1a{i}").as_str())), "{marked:?}");
    let marks = |fw: &Forwarder| {
        let counters = nexthop_fw::mgmt::dataset::parse_labelled_counts(&fw.client().dataset("/localhost/nfd/status/counters").unwrap());
        counters.iter().find(|(label, _)| label == "congestion_marks").unwrap().1
    };
    assert_eq!((marks(a), marks(b)), (marked.len() as u64, 0), "A made every mark");
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
}

/// A token bucket of 8 Mbit/s on interface `dev` (of namespace `netns`, if any).
fn throttle(netns: Option<&str>, dev: &str) {
    let mut args = netns.map_or(Vec::new(), |n| vec!["-n", n]);
    args.extend(["qdisc", "add", "dev", dev, "root", "tbf", "rate", "8mbit", "burst", "32kbit", "latency", "2s"]);
    let out = std::process::Command::new("tc").args(&args).output().expect("tc runs (iproute2)");
    assert!(out.status.success(), "tc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Across a veth pair: B makes a unicast Ethernet face to A's end, A (listening) one back. The
/// ports are AF_PACKET, which sends through the interface's qdisc (as NFD's pcap faces do);
/// AF_XDP frames go straight to the driver, and its backlog is its transmit ring.
#[test]
fn an_ethernet_face_marks_when_its_interface_queue_stays_long() {
    let Some(veth) = VethPair::new("c") else { return };
    throttle(None, &veth.a);
    let listen_on = |end: &str| {
        let end = end.to_string();
        move |c: &mut nexthop_fw::conf::config::Config| {
            c.faces.ether_listen = true;
            c.faces.ether_interfaces = vec![end];
            // Through the qdisc that throttles the link (AF_XDP frames skip it).
            c.faces.ether_io = "af-packet".into();
        }
    };
    let a_dir = scratch("congestion-ether-a");
    let a = Forwarder::start_with(&a_dir, "a", 1, listen_on(&veth.a));
    let b_dir = scratch("congestion-ether-b");
    let b = Forwarder::start_with(&b_dir, "b", 1, listen_on(&veth.b));
    let face = ControlParameters {
        uri: Some(format!("ether://[{}]", mac_of(&veth.a))),
        local_uri: Some(format!("dev://{}", veth.b)),
        ..Default::default()
    };
    marks_behind_a_slow_link(&a, &b, &face);
}

/// Across a veth pair into a network namespace, where A runs: B makes a UDP face to A's
/// address, A an on-demand one back, which shares A's UDP socket and its kernel queue.
#[test]
fn a_udp_face_marks_when_its_socket_queue_stays_long() {
    let Some(ns) = LinkedNetns::new("cu") else { return };
    throttle(Some(&ns.netns.name), &ns.inside);
    let a_dir = scratch("congestion-udp-a");
    let inside = ns.inside_ip;
    let a = Forwarder::start_in(Some(&ns.netns), &a_dir, "a", 1, |c| c.faces.udp = format!("{inside}:0"));
    let b_dir = scratch("congestion-udp-b");
    let b = Forwarder::start_with(&b_dir, "b", 1, |c| c.faces.udp = "0.0.0.0:0".into());
    let face = ControlParameters { uri: Some(format!("udp4://{}", a.udp)), ..Default::default() };
    marks_behind_a_slow_link(&a, &b, &face);
}
