//! NDNLPv2 link reliability between two forwarders over a lossy UDP link: a relay between them
//! loses a quarter of the packets each way, and every fifth IDLE packet (Acks alone), from the
//! first. Without reliability the consumer's Interests go unanswered in proportion; with it
//! turned on at both ends (`faces/update`, Flags bit 1), every Interest is answered with no
//! retransmission by the consumer, the forwarders having sent the lost packets again —
//! 5000-byte Data too, whose fragments are each acknowledged and sent again alone; a lost last
//! fragment sent again after the sender's first 1 s timeout still completes its packet. And a
//! face's MTU overridden by management cuts what it sends to that size.

mod common;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{scratch, Forwarder};
use nexthop_fw::face::FLAG_LP_RELIABILITY;
use nexthop_fw::mgmt::dataset::parse_labelled_counts;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::Client;
use nexthop_tools::lossy_link::{LossRule, LossyLink};
use nexthop_tools::traffic;
use nexthop_wire::{Component, DataView, Emit, Interest, LpPacketView, Name};

/// What the relay loses on one direction of the link.
#[derive(Default)]
struct Loss {
    /// Packets sent without reliability, counted.
    plain: u64,
    /// First transmissions of reliable pieces (by Sequence), counted; and the Sequences seen.
    first: u64,
    seen: HashSet<u64>,
    /// IDLE packets, counted.
    idle: u64,
}

impl Loss {
    /// Whether the relay passes `datagram` on: it loses every fourth packet — with reliability,
    /// every fourth piece's first transmission, never a retransmission — and every fifth IDLE
    /// packet, from the first.
    fn passes(&mut self, datagram: &[u8]) -> bool {
        match LpPacketView::decode(datagram) {
            Ok(lp) if lp.fragment.is_none() => {
                // The first, sixth, … (the first one always: however the Acks were carried).
                self.idle += 1;
                self.idle % 5 != 1
            }
            Ok(LpPacketView { sequence: Some(seq), tx_sequence: Some(_), .. }) => {
                if !self.seen.insert(seq) {
                    return true;
                }
                self.first += 1;
                !self.first.is_multiple_of(4)
            }
            _ => {
                self.plain += 1;
                !self.plain.is_multiple_of(4)
            }
        }
    }
}

/// Makes a UDP face to `remote`; its id.
fn face_to(operator: &mut Client, remote: SocketAddr) -> u64 {
    let create = ControlParameters { uri: Some(format!("udp4://{remote}")), ..Default::default() };
    let r = operator.command("faces", "create", &create).unwrap();
    assert_eq!(r.code, 200, "{r:?}");
    let body = r.body.unwrap();
    assert_eq!(body.flags.unwrap() & FLAG_LP_RELIABILITY, 0, "off unless asked");
    body.face_id.unwrap()
}

/// Turns link reliability on for face `id`, checking the answer says so.
fn reliability_on(operator: &mut Client, id: u64) {
    let update =
        ControlParameters { face_id: Some(id), flags: Some(FLAG_LP_RELIABILITY), mask: Some(FLAG_LP_RELIABILITY), ..Default::default() };
    let r = operator.command("faces", "update", &update).unwrap();
    assert_eq!(r.code, 200, "{r:?}");
    assert_eq!(r.body.unwrap().flags.unwrap() & FLAG_LP_RELIABILITY, FLAG_LP_RELIABILITY);
}

/// Sends one Interest (lifetime 4 s, never repeated) for each of `<prefix>/0` … `<prefix>/<n-1>`
/// at once, and counts the Data that come back within `wait`.
fn fetch(consumer: &mut Client, prefix: &str, n: usize, wait: Duration) -> usize {
    let mut waiting = HashSet::new();
    for i in 0..n {
        let name = Name::from_uri(prefix).unwrap().with(Component::generic(i.to_string().into_bytes()));
        let mut interest = Interest::new(name.clone());
        interest.nonce = Some(consumer.next_nonce());
        interest.lifetime_ms = Some(4000);
        consumer.send(&interest.to_bytes()).unwrap();
        waiting.insert(name);
    }
    let deadline = Instant::now() + wait;
    while !waiting.is_empty() && Instant::now() < deadline {
        let Some(wire) = consumer.recv(Duration::from_millis(100)).unwrap() else { continue };
        let packet = LpPacketView::decode(&wire).ok().and_then(|lp| lp.fragment).map_or(wire.clone(), <[u8]>::to_vec);
        if let Ok(data) = DataView::decode(&packet) {
            waiting.remove(&data.name().to_name());
        }
    }
    n - waiting.len()
}

/// The `lp_*` counters of a forwarder's `status/counters`.
fn lp_counts(fw: &Forwarder) -> Vec<(String, u64)> {
    let all = parse_labelled_counts(&fw.client().dataset("/localhost/nfd/status/counters").unwrap());
    all.into_iter().filter(|(label, _)| label.starts_with("lp_")).collect()
}

fn count(counts: &[(String, u64)], label: &str) -> u64 {
    counts.iter().find(|(l, _)| l == label).map_or(0, |c| c.1)
}

/// Two forwarders joined through a relay (`to_producer` and `to_consumer` decide what it passes
/// each way): the consumer's forwarder talks to the relay's near end, the producer's to its
/// far end, each with a UDP face made through management; the consumer's routes `prefix`
/// through the link, and a producer of `prefix` with `payload`-byte Data runs at the far end
/// until `stop`.
struct OverRelay {
    near_producer: Forwarder,
    near_consumer: Forwarder,
    relay: LossyLink,
    consumer_face: u64,
    producer_face: u64,
    stop: Arc<AtomicBool>,
    producer: std::thread::JoinHandle<()>,
}

impl OverRelay {
    fn start(dir: &std::path::Path, to_producer: LossRule, to_consumer: LossRule, prefix: &str, payload: usize) -> OverRelay {
        let near_producer = Forwarder::start(dir, "p", 1);
        let near_consumer = Forwarder::start(dir, "c", 1);
        let relay = LossyLink::start(near_consumer.udp, near_producer.udp, to_producer, to_consumer).unwrap();
        let consumer_face = face_to(&mut near_consumer.client(), relay.near);
        let producer_face = face_to(&mut near_producer.client(), relay.far);
        let name = Name::from_uri(prefix).unwrap();
        let route = ControlParameters { name: Some(name.clone()), face_id: Some(consumer_face), ..Default::default() };
        assert_eq!(near_consumer.client().command("rib", "register", &route).unwrap().code, 200);
        let stop = Arc::new(AtomicBool::new(false));
        let producer = traffic::start_producer(&near_producer.unix(), &near_producer.unix(), &name, payload, stop.clone()).unwrap();
        OverRelay { near_producer, near_consumer, relay, consumer_face, producer_face, stop, producer }
    }
}

#[test]
fn link_reliability_recovers_what_a_lossy_link_loses() {
    let dir = scratch("reliability");
    let rule = || -> LossRule {
        let mut loss = Loss::default();
        Box::new(move |d: &[u8]| loss.passes(d))
    };
    let OverRelay { near_producer, near_consumer, relay, consumer_face, producer_face, stop, producer } =
        OverRelay::start(dir.path(), rule(), rule(), "/lossy", 1000);
    let mut consumer = near_consumer.client();

    const N: usize = 200;
    let without = fetch(&mut consumer, "/lossy/plain", N, Duration::from_secs(2));
    let lost_without = relay.lost();
    assert!(lost_without > 0 && without < N * 9 / 10, "{without} of {N} answered with {lost_without} lost");

    reliability_on(&mut near_consumer.client(), consumer_face);
    reliability_on(&mut near_producer.client(), producer_face);
    let with = fetch(&mut consumer, "/lossy/reliable", N, Duration::from_secs(6));
    let lost_with = relay.lost() - lost_without;
    // Data of 5000 bytes cross the link as fragments (UDP MTU 1420), each piece sent again
    // alone when lost; the consumer's forwarder puts every packet back together.
    let big = Name::from_uri("/lossy/big").unwrap();
    let big_producer = traffic::start_producer(&near_producer.unix(), &near_producer.unix(), &big, 5000, stop.clone()).unwrap();
    let fragmented = fetch(&mut consumer, "/lossy/big", N / 4, Duration::from_secs(6));
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    big_producer.join().unwrap();
    assert_eq!(fragmented, N / 4, "{} lost", relay.lost() - lost_without - lost_with);

    let (c, p) = (lp_counts(&near_consumer), lp_counts(&near_producer));
    assert_eq!(with, N, "{with} of {N} answered with {lost_with} lost; consumer side {c:?}, producer side {p:?}");
    assert!(lost_with >= (N / 4) as u64, "the relay lost {lost_with}");
    assert!(count(&c, "lp_retransmissions") > 0 && count(&p, "lp_retransmissions") > 0, "{c:?} {p:?}");
    assert_eq!(count(&c, "lp_retx_exhausted") + count(&p, "lp_retx_exhausted"), 0, "{c:?} {p:?}");
    for side in [&c, &p] {
        // Each of the packets sent reliably one way, once all its pieces' Acks are in.
        assert!(count(side, "lp_acknowledged") + count(side, "lp_retransmitted") <= (N + N / 4) as u64, "{side:?}");
    }
    // Acks lost with the Data they rode on (and every fifth IDLE packet) bring repeats, dropped
    // and counted as such.
    let duplicates = count(&c, "lp_duplicates") + count(&p, "lp_duplicates");
    assert!(duplicates > 0, "{c:?} {p:?}");
    assert_eq!(duplicates, near_consumer.drops("duplicate-sequence") + near_producer.drops("duplicate-sequence"));
}

/// A face's MTU overridden through management, as `nfdc face create ... mtu 600` does
/// (`faces/update` with Mtu): the producer's forwarder cuts 5000-byte Data into datagrams of at
/// most 600 bytes on that face, which the relay measures, and the consumer's puts them back
/// together. Before the override the same face sends up to the configured 1420.
#[test]
fn a_faces_mtu_override_cuts_what_it_sends() {
    let dir = scratch("mtu");
    let largest = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = largest.clone();
    let measured: LossRule = Box::new(move |d: &[u8]| {
        seen.fetch_max(d.len(), Ordering::Relaxed);
        true
    });
    // The relay must outlive the test (dropped, it stops).
    let OverRelay { near_producer, near_consumer, relay: _relay, producer_face, stop, producer, .. } =
        OverRelay::start(dir.path(), Box::new(|_| true), measured, "/mtu", 5000);
    let mut consumer = near_consumer.client();

    assert_eq!(fetch(&mut consumer, "/mtu/default", 20, Duration::from_secs(4)), 20);
    let before = largest.swap(0, Ordering::Relaxed);
    assert!(before > 1000 && before <= 1420, "{before}");
    let update = ControlParameters { face_id: Some(producer_face), mtu: Some(600), ..Default::default() };
    assert_eq!(near_producer.client().command("faces", "update", &update).unwrap().code, 200);
    assert_eq!(fetch(&mut consumer, "/mtu/overridden", 20, Duration::from_secs(4)), 20);
    let after = largest.load(Ordering::Relaxed);
    assert!(after > 400 && after <= 600, "{after}");
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    // faces/list shows it; a stream face has no MTU to override.
    let listed = near_producer.client().dataset("/localhost/nfd/faces/list").unwrap();
    assert!(listed.windows(4).any(|w| w == [0x89, 0x02, 0x02, 0x58]), "Mtu 600 in faces/list");
    let unix = ControlParameters { mtu: Some(600), ..Default::default() };
    assert_eq!(near_producer.client().command("faces", "update", &unix).unwrap().code, 409, "the asking Unix face");
}

/// A lost last fragment, sent again after the sender's first retransmission timeout (1 s: no
/// round trip measured yet on its side), still completes its packet: on a face with link
/// reliability the receiver keeps the partial packet for twice that, where NFD's 500 ms would
/// have forgotten it (and the Data would be lost though resent).
#[test]
fn a_resent_last_fragment_completes_its_packet() {
    let dir = scratch("resent-fragment");
    // Toward the consumer: the first transmission of the first last fragment is lost.
    let mut lost_one = false;
    let lose_a_last_fragment: LossRule = Box::new(move |d: &[u8]| {
        let last =
            LpPacketView::decode(d).is_ok_and(|lp| lp.fragment.is_some() && lp.frag_count.is_some_and(|n| lp.frag_index == Some(n - 1)));
        let lose = last && !lost_one;
        lost_one |= lose;
        !lose
    });
    let OverRelay { near_producer, near_consumer, relay, consumer_face, producer_face, stop, producer } =
        OverRelay::start(dir.path(), Box::new(|_| true), lose_a_last_fragment, "/resent", 5000);
    reliability_on(&mut near_consumer.client(), consumer_face);
    reliability_on(&mut near_producer.client(), producer_face);
    let started = Instant::now();
    assert_eq!(fetch(&mut near_consumer.client(), "/resent/big", 1, Duration::from_secs(3)), 1, "the Data came");
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    assert_eq!(relay.lost(), 1);
    assert!(took >= Duration::from_millis(900), "it waited for the resent fragment: {took:?}");
    assert_eq!(near_consumer.drops("reassembly-timeout"), 0);
    assert!(count(&lp_counts(&near_producer), "lp_retransmissions") >= 1);
}
