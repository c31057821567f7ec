//! The forwarding pipeline without sockets: a consumer face, the shard, producer faces, with
//! time passed in (quinn's simulated-pair style).

use nexthop_cs::{HcsConfig, L1Config};
use nexthop_fw::counters::DropReason;
use nexthop_fw::face::{FaceId, FaceScope, LinkType};
use nexthop_fw::lp::packet::{classify, Network};
use nexthop_fw::pipeline::outbox::Outbox;
use nexthop_fw::pipeline::{Control, Shard, ShardConfig};
use nexthop_fw::table::fib::Fib;
use nexthop_lookup::name::{NextHop, NextHops};
use nexthop_wire::{Data, Emit, Interest, LpPacket, Nack, NackReason, Name};
use proptest::prelude::*;

const CONSUMER: FaceId = 300;
const CONSUMER2: FaceId = 301;
const PRODUCER: FaceId = 400;
const PRODUCER2: FaceId = 401;

fn shard(cs: bool, pit_max_per_face: usize) -> Shard {
    let cs = cs.then(|| HcsConfig {
        l1: L1Config::with_bytes(1 << 20, 8800),
        l2: None,
        staging_batches: 1,
        read_ahead: false,
        chunk_reads: false,
    });
    let cfg = ShardConfig { cs, pit_max_entries: 10_000, pit_max_per_face, ..ShardConfig::default() };
    let mut s = Shard::new(cfg, Fib::default()).unwrap();
    let hops = NextHops::new([NextHop { face: PRODUCER as u32, cost: 1 }, NextHop { face: PRODUCER2 as u32, cost: 5 }]);
    s.apply(&Control::SetRoute(Name::from_uri("/a").unwrap(), hops));
    s
}

fn interest(uri: &str, nonce: u32) -> Vec<u8> {
    let mut i = Interest::new(Name::from_uri(uri).unwrap());
    i.nonce = Some(nonce.to_be_bytes());
    i.lifetime_ms = Some(1000);
    i.to_bytes()
}

/// The faces packets went out on, in order.
fn sent_to(out: &[(FaceId, Vec<u8>)]) -> Vec<FaceId> {
    out.iter().map(|(f, _)| *f).collect()
}

fn data(uri: &str) -> Vec<u8> {
    let mut d = Data::new(Name::from_uri(uri).unwrap(), b"payload".to_vec());
    d.sign_digest_sha256();
    d.to_bytes()
}

fn feed(s: &mut Shard, now: u64, face: FaceId, bytes: &[u8]) -> Vec<(FaceId, Vec<u8>)> {
    let mut out = Outbox::new();
    if let Ok(Some(inc)) = classify(bytes) {
        s.on_incoming(now, face, FaceScope::Local, &inc, &mut out);
    }
    out.iter().map(|(f, _, b)| (f, b.to_vec())).collect()
}

/// The PIT token on a forwarded packet.
fn token(bytes: &[u8]) -> Vec<u8> {
    LpPacket::decode(bytes).unwrap().pit_token.unwrap()
}

fn with_token(packet: Vec<u8>, token: Vec<u8>) -> Vec<u8> {
    let mut lp = LpPacket::wrap(packet);
    lp.pit_token = Some(token);
    lp.to_bytes()
}

fn nack(interest_wire: &[u8], reason: NackReason, token: Vec<u8>) -> Vec<u8> {
    let lp = LpPacket::decode(interest_wire).unwrap();
    let mut n = LpPacket::wrap(lp.fragment.unwrap());
    n.nack = Some(Nack::new(reason));
    n.pit_token = Some(token);
    n.to_bytes()
}

fn is_data(bytes: &[u8]) -> bool {
    matches!(classify(bytes).unwrap().unwrap().packet, Network::Data(_))
}

fn nack_reason(bytes: &[u8]) -> Option<NackReason> {
    match classify(bytes).unwrap().unwrap().packet {
        Network::Nack(r, _) => Some(r),
        _ => None,
    }
}

#[test]
fn interest_goes_upstream_and_data_comes_back_then_the_cs_answers() {
    let mut s = shard(true, 100);
    let out = feed(&mut s, 0, CONSUMER, &interest("/a/b", 1));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, PRODUCER, "lowest cost next hop");
    assert_eq!(s.pit().len(), 1);
    let back = feed(&mut s, 5, PRODUCER, &with_token(data("/a/b"), token(&out[0].1)));
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, CONSUMER);
    assert!(is_data(&back[0].1));
    assert_eq!(s.pit().len(), 0);
    // Again: the content store answers, nothing goes upstream.
    let again = feed(&mut s, 6, CONSUMER2, &interest("/a/b", 2));
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].0, CONSUMER2);
    assert_eq!(s.counters().cs_hits.get(), 1);
}

#[test]
fn data_without_token_matches_by_name_and_prefix() {
    let mut s = shard(false, 100);
    let mut i = Interest::new(Name::from_uri("/a").unwrap());
    i.can_be_prefix = true;
    i.nonce = Some([9; 4]);
    feed(&mut s, 0, CONSUMER, &i.to_bytes());
    feed(&mut s, 0, CONSUMER2, &interest("/a/b/c", 3));
    let back = feed(&mut s, 1, PRODUCER, &data("/a/b/c"));
    let mut faces: Vec<FaceId> = back.iter().map(|(f, _)| *f).collect();
    faces.sort();
    assert_eq!(faces, [CONSUMER, CONSUMER2]);
    assert!(s.pit().is_empty());
    assert!(feed(&mut s, 2, PRODUCER, &data("/a/b/c")).is_empty());
    assert_eq!(s.counters().drops.get(DropReason::Unsolicited), 1);
}

/// The same nonce again from the same downstream (NFD's): over a point-to-point link a
/// retransmission — aggregated within the suppression interval, forwarded again after it —,
/// over a multi-access one a loop, dropped without a Nack.
#[test]
fn the_same_nonce_again_is_a_retransmission_point_to_point_and_a_loop_on_a_lan() {
    let mut s = shard(false, 100);
    assert_eq!(sent_to(&feed(&mut s, 0, CONSUMER, &interest("/a/same", 5))), [PRODUCER]);
    assert!(feed(&mut s, 5, CONSUMER, &interest("/a/same", 5)).is_empty(), "within 10 ms: aggregated");
    assert_eq!(sent_to(&feed(&mut s, 10, CONSUMER, &interest("/a/same", 5))), [PRODUCER2], "after: forwarded again");
    assert_eq!(s.counters().drops.get(DropReason::Loop), 0);
    let mut s = shard(false, 100);
    s.apply(&Control::LinkType(CONSUMER, LinkType::MultiAccess));
    assert_eq!(sent_to(&feed(&mut s, 0, CONSUMER, &interest("/a/same", 5))), [PRODUCER]);
    assert!(feed(&mut s, 10, CONSUMER, &interest("/a/same", 5)).is_empty(), "a loop on a LAN, and no Nack");
    assert_eq!(s.counters().drops.get(DropReason::Loop), 1);
}

#[test]
fn interests_aggregate_and_loops_are_nacked() {
    let mut s = shard(false, 100);
    assert_eq!(feed(&mut s, 0, CONSUMER, &interest("/a/x", 7)).len(), 1);
    assert!(feed(&mut s, 1, CONSUMER2, &interest("/a/x", 8)).is_empty(), "aggregated");
    assert_eq!(s.counters().aggregated.get(), 1);
    let looped = feed(&mut s, 2, CONSUMER2, &interest("/a/x", 7));
    assert_eq!(nack_reason(&looped[0].1), Some(NackReason::Duplicate));
    assert_eq!(s.counters().drops.get(DropReason::Loop), 1);
}

/// NFD's random strategy suppresses nothing: a second consumer's Interest for a pending name,
/// and a retransmission at once, each go upstream again (to a next hop picked again) instead
/// of being aggregated; every one is forwarded with its own nonce.
#[test]
fn the_random_strategy_forwards_every_interest_to_a_pending_entry() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    let mut s = shard(false, 100);
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), StrategyName::from_text("random").unwrap()));
    let sent = [(0, CONSUMER, 7), (1, CONSUMER2, 8), (2, CONSUMER, 9)].map(|(now, face, nonce)| {
        let out = feed(&mut s, now, face, &interest("/a/x", nonce));
        assert_eq!(out.len(), 1, "Interest {nonce} forwarded once");
        assert!([PRODUCER, PRODUCER2].contains(&out[0].0));
        let lp = LpPacket::decode(&out[0].1).unwrap();
        nexthop_wire::InterestView::decode(lp.fragment.as_deref().unwrap()).unwrap().nonce()
    });
    assert_eq!(sent, [Some(7u32.to_be_bytes()), Some(8u32.to_be_bytes()), Some(9u32.to_be_bytes())]);
    assert_eq!(s.counters().aggregated.get(), 0);
    assert_eq!(s.pit().len(), 1, "one entry for the name");
}

/// NFD's retransmission suppression, strategy by strategy: another Interest for a pending name
/// (from any downstream, with a new nonce) is aggregated within the suppression interval of
/// the last forwarding and forwarded again after it. Best-route: per entry, 10 ms doubling at
/// each forwarding (to the next unused upstream, then the one used longest ago); multicast:
/// per upstream; access: a fixed 100 ms.
#[test]
fn retransmissions_are_suppressed_as_nfd_suppresses_them() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    // Best-route.
    let mut s = shard(false, 100);
    assert_eq!(sent_to(&feed(&mut s, 0, CONSUMER, &interest("/a/br", 1))), [PRODUCER]);
    assert!(feed(&mut s, 9, CONSUMER2, &interest("/a/br", 2)).is_empty(), "within 10 ms");
    assert_eq!(sent_to(&feed(&mut s, 10, CONSUMER2, &interest("/a/br", 3))), [PRODUCER2], "after 10 ms: the unused upstream");
    assert!(feed(&mut s, 29, CONSUMER, &interest("/a/br", 4)).is_empty(), "within 20 ms now");
    assert_eq!(sent_to(&feed(&mut s, 30, CONSUMER, &interest("/a/br", 5))), [PRODUCER], "after 20: the one used longest ago");
    assert!(feed(&mut s, 69, CONSUMER, &interest("/a/br", 6)).is_empty(), "within 40 ms now");
    assert_eq!(feed(&mut s, 70, CONSUMER, &interest("/a/br", 7)).len(), 1);
    assert_eq!(s.counters().aggregated.get(), 3);
    // Multicast: each upstream on its own interval.
    let mut s = shard(false, 100);
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), StrategyName::from_text("multicast").unwrap()));
    assert_eq!(sent_to(&feed(&mut s, 0, CONSUMER, &interest("/a/mc", 1))), [PRODUCER, PRODUCER2]);
    assert!(feed(&mut s, 9, CONSUMER, &interest("/a/mc", 2)).is_empty());
    assert_eq!(sent_to(&feed(&mut s, 10, CONSUMER, &interest("/a/mc", 3))), [PRODUCER, PRODUCER2]);
    assert!(feed(&mut s, 29, CONSUMER2, &interest("/a/mc", 4)).is_empty(), "both within 20 ms");
    assert_eq!(sent_to(&feed(&mut s, 30, CONSUMER2, &interest("/a/mc", 5))), [PRODUCER, PRODUCER2]);
    // Access: a fixed 100 ms.
    let mut s = shard(false, 100);
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), StrategyName::from_text("access").unwrap()));
    assert!(!feed(&mut s, 0, CONSUMER, &interest("/a/ac", 1)).is_empty());
    assert!(feed(&mut s, 99, CONSUMER, &interest("/a/ac", 2)).is_empty(), "within 100 ms");
    assert!(!feed(&mut s, 100, CONSUMER, &interest("/a/ac", 3)).is_empty(), "after 100 ms");
    // The parameters of the strategy's name, as NFD's best-route and multicast take them.
    let named = |text: &str| StrategyName::from_text(text).unwrap();
    let mut s = shard(false, 100);
    let steady = "/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~50/retx-suppression-multiplier~1";
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), named(steady)));
    assert_eq!(sent_to(&feed(&mut s, 0, CONSUMER, &interest("/a/p", 1))), [PRODUCER]);
    assert!(feed(&mut s, 49, CONSUMER, &interest("/a/p", 2)).is_empty(), "within the first 50 ms");
    assert_eq!(sent_to(&feed(&mut s, 50, CONSUMER, &interest("/a/p", 3))), [PRODUCER2]);
    assert!(feed(&mut s, 99, CONSUMER, &interest("/a/p", 4)).is_empty(), "a factor of 1: still 50 ms");
    assert_eq!(sent_to(&feed(&mut s, 100, CONSUMER, &interest("/a/p", 5))), [PRODUCER]);
    let mut s = shard(false, 100);
    let capped = "/localhost/nfd/strategy/multicast/v=5/retx-suppression-max~15";
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), named(capped)));
    assert_eq!(feed(&mut s, 0, CONSUMER, &interest("/a/q", 1)).len(), 2);
    assert_eq!(feed(&mut s, 10, CONSUMER, &interest("/a/q", 2)).len(), 2, "the forwarder's 10 ms first");
    assert!(feed(&mut s, 24, CONSUMER, &interest("/a/q", 3)).is_empty(), "then at most 15 ms, not 20");
    assert_eq!(feed(&mut s, 25, CONSUMER, &interest("/a/q", 4)).len(), 2);
}

#[test]
fn best_route_retries_after_nack_then_nacks_downstream() {
    let mut s = shard(false, 100);
    let first = feed(&mut s, 0, CONSUMER, &interest("/a/r", 11));
    assert_eq!(first[0].0, PRODUCER);
    let retry = feed(&mut s, 1, PRODUCER, &nack(&first[0].1, NackReason::Congestion, token(&first[0].1)));
    assert_eq!(retry.len(), 1);
    assert_eq!(retry[0].0, PRODUCER2, "next hop after the Nack");
    let down = feed(&mut s, 2, PRODUCER2, &nack(&retry[0].1, NackReason::NoRoute, token(&retry[0].1)));
    assert_eq!(down.len(), 1);
    assert_eq!(down[0].0, CONSUMER);
    assert_eq!(nack_reason(&down[0].1), Some(NackReason::Congestion), "least severe reason");
    assert!(s.pit().is_empty());
}

#[test]
fn no_route_is_nacked_and_counted() {
    let mut s = shard(false, 100);
    let out = feed(&mut s, 0, CONSUMER, &interest("/zzz", 1));
    assert_eq!(nack_reason(&out[0].1), Some(NackReason::NoRoute));
    assert_eq!(s.counters().drops.get(DropReason::NoRoute), 1);
}

#[test]
fn expired_entries_leave_their_nonce_behind() {
    let mut s = shard(false, 100);
    feed(&mut s, 0, CONSUMER, &interest("/a/e", 5));
    s.expire(999);
    assert_eq!(s.pit().len(), 1);
    s.expire(1000);
    assert!(s.pit().is_empty());
    assert_eq!(s.counters().unsatisfied.get(), 1);
    let again = feed(&mut s, 1001, CONSUMER2, &interest("/a/e", 5));
    assert_eq!(nack_reason(&again[0].1), Some(NackReason::Duplicate));
}

#[test]
fn a_flood_from_one_face_is_bounded_and_others_are_still_served() {
    let mut s = shard(false, 64);
    for n in 0..10_000u32 {
        feed(&mut s, 0, CONSUMER, &interest(&format!("/a/flood/{n}"), n));
    }
    assert_eq!(s.pit().len(), 64, "the flooding face holds at most its share");
    assert_eq!(s.counters().drops.get(DropReason::PitFull), 10_000 - 64);
    let out = feed(&mut s, 1, CONSUMER2, &interest("/a/legit", 1));
    assert_eq!(out.len(), 1);
    let back = feed(&mut s, 2, PRODUCER, &with_token(data("/a/legit"), token(&out[0].1)));
    assert_eq!(back[0].0, CONSUMER2);
    // Expiry gives the flooding face its share back.
    s.expire(2000);
    assert!(s.pit().is_empty());
    assert_eq!(feed(&mut s, 2001, CONSUMER, &interest("/a/flood/again", 99_999)).len(), 1);
}

/// Where an Interest for `uri` from `face` (of `scope`) goes, under multicast to every face.
fn multicast_from(s: &mut Shard, face: FaceId, scope: FaceScope, uri: &str, nonce: u32) -> Vec<FaceId> {
    let mut out = Outbox::new();
    let wire = interest(uri, nonce);
    let inc = classify(&wire).unwrap().unwrap();
    s.on_incoming(0, face, scope, &inc, &mut out);
    out.iter().filter(|(_, _, b)| nack_reason(b).is_none()).map(|(f, _, _)| f).collect()
}

#[test]
fn localhop_interests_go_one_hop_off_the_host_and_localhost_ones_none() {
    let mut s = shard(false, 1000);
    // Faces 400 and 401 reach other hosts; 300 and 301 are apps here.
    s.apply(&Control::NonLocalFace(PRODUCER));
    s.apply(&Control::NonLocalFace(PRODUCER2));
    let everyone = NextHops::new([CONSUMER, CONSUMER2, PRODUCER, PRODUCER2].map(|f| NextHop { face: f as u32, cost: 1 }));
    for prefix in ["/localhop", "/localhost", "/net"] {
        let p = Name::from_uri(prefix).unwrap();
        s.apply(&Control::SetRoute(p.clone(), everyone.clone()));
        s.apply(&Control::SetStrategy(p, nexthop_fw::pipeline::strategy::registry::StrategyName::from_text("multicast").unwrap()));
    }
    let sorted = |mut v: Vec<FaceId>| {
        v.sort_unstable();
        v
    };
    // From an app, /localhop goes to the neighbours too; from a neighbour, only to the apps.
    assert_eq!(sorted(multicast_from(&mut s, CONSUMER, FaceScope::Local, "/localhop/sync", 1)), [CONSUMER2, PRODUCER, PRODUCER2]);
    assert_eq!(sorted(multicast_from(&mut s, PRODUCER, FaceScope::NonLocal, "/localhop/sync/b", 2)), [CONSUMER, CONSUMER2]);
    // /localhost never leaves the host; other names go everywhere but back.
    assert_eq!(sorted(multicast_from(&mut s, CONSUMER, FaceScope::Local, "/localhost/daemon", 3)), [CONSUMER2]);
    assert_eq!(sorted(multicast_from(&mut s, PRODUCER, FaceScope::NonLocal, "/net/x", 4)), [CONSUMER, CONSUMER2, PRODUCER2]);
    // A face gone is forgotten: a new face with its id is local unless said otherwise.
    s.apply(&Control::FaceDown(PRODUCER2));
    assert_eq!(sorted(multicast_from(&mut s, PRODUCER, FaceScope::NonLocal, "/localhop/sync/c", 5)), [CONSUMER, CONSUMER2, PRODUCER2]);
}

#[test]
fn a_face_going_down_cleans_its_pit_entries() {
    let mut s = shard(false, 100);
    feed(&mut s, 0, CONSUMER, &interest("/a/1", 1));
    feed(&mut s, 0, CONSUMER, &interest("/a/2", 2));
    feed(&mut s, 0, CONSUMER2, &interest("/a/2", 3));
    s.apply(&Control::FaceDown(CONSUMER));
    assert_eq!(s.pit().len(), 1, "/a/2 is still wanted by the other consumer");
}

proptest! {
    /// Any bytes from the network: a drop with a reason or a packet, never a panic — with a
    /// default HopLimit given or not, from a point-to-point, ad hoc or multi-access face.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), face in 300u64..303, hop_limit in prop_oneof![Just(0u8), Just(1), Just(255)]) {
        let mut s = shard(true, 100);
        s.apply(&Control::SetDefaultHopLimit(hop_limit));
        s.apply(&Control::LinkType(301, LinkType::AdHoc));
        s.apply(&Control::LinkType(302, LinkType::MultiAccess));
        s.apply(&Control::NonLocalFace(PRODUCER));
        let mut out = Outbox::new();
        if let Ok(Some(inc)) = classify(&bytes) {
            s.on_incoming(0, face, FaceScope::NonLocal, &inc, &mut out);
        }
        s.expire(10_000);
    }

    /// Mutated real packets (the bytes most likely to get deep into the pipeline).
    #[test]
    fn mutated_packets_never_panic(at in 0usize..40, v in any::<u8>(), which in 0usize..3) {
        let mut s = shard(true, 100);
        let base = match which { 0 => interest("/a/b/c", 1), 1 => data("/a/b/c"), _ => nack(&with_token(interest("/a/b", 1), vec![0; 8]), NackReason::NoRoute, vec![0; 8]) };
        let mut b = base.clone();
        let i = at % b.len();
        b[i] = v;
        feed(&mut s, 0, CONSUMER, &interest("/a/b/c", 2));
        feed(&mut s, 0, PRODUCER, &b);
        feed(&mut s, 0, CONSUMER, &b);
    }
}

/// A shard whose content store has an SSD tier in a real file (io_uring), a DRAM tier of 16
/// packets, and background reads on or off.
fn shard_with_ssd(tag: &str, background_reads: bool) -> (Shard, std::path::PathBuf) {
    shard_with_l2(tag, background_reads, None)
}

/// [`shard_with_ssd`] with the SSD tier on `backing` instead of the file, where one is given.
fn shard_with_l2(tag: &str, background_reads: bool, backing: Option<nexthop_cs::Backing>) -> (Shard, std::path::PathBuf) {
    use nexthop_cs::l2::{DirectIo, FileConfig, IoEngine};
    use nexthop_cs::{Backing, L2Config, Policy};
    let path = std::env::temp_dir().join(format!("nexthop-park-{tag}-{}", std::process::id()));
    let file = FileConfig { path: path.clone(), create: true, direct: DirectIo::Preferred, engine: IoEngine::IoUring };
    let backing = backing.unwrap_or(Backing::File(file));
    let l1 = L1Config { capacity: 16, slot_bytes: 8800, policy: Policy::Fifo, prefix_index: true };
    let cs = HcsConfig { l1, l2: Some(L2Config::new(8 << 20, backing)), staging_batches: 2, read_ahead: false, chunk_reads: false };
    let cfg = ShardConfig { cs: Some(cs), cs_background_reads: background_reads, ..ShardConfig::default() };
    let mut s = Shard::new(cfg, Fib::default()).unwrap();
    s.apply(&Control::SetRoute(Name::from_uri("/a").unwrap(), NextHops::new([NextHop { face: PRODUCER as u32, cost: 1 }])));
    (s, path)
}

fn segment_uri(seg: u64) -> String {
    Name::from_uri("/a/obj").unwrap().with(nexthop_wire::Component::segment(seg)).to_string()
}

/// Fetches segments 0..40 of /a/obj through the producer: four batches of 10 go to the SSD file.
fn fill_ssd(s: &mut Shard) {
    for seg in 0..40 {
        let up = feed(s, 0, CONSUMER, &interest(&segment_uri(seg), seg as u32 + 1));
        assert_eq!(up.len(), 1, "segment {seg} goes upstream");
        let back = feed(s, 1, PRODUCER, &with_token(data(&segment_uri(seg)), token(&up[0].1)));
        assert_eq!(back.len(), 1);
    }
    // The batch writes are done (a batch is not read in the background while its write is in
    // flight: that lookup would read and wait instead).
    s.cs_mut().unwrap().l2_mut().unwrap().sync().unwrap();
}

#[test]
fn an_interest_for_data_on_the_ssd_waits_parked_and_is_answered_when_the_read_is_done() {
    // The SSD tier emulated at 10 Mbit/s (a batch read takes about 70 ms), so that the second
    // Interest surely comes while the read is in flight: a real file can be read back before
    // it (where O_DIRECT falls back to the page cache), and the store would answer it from DRAM.
    let slow = nexthop_cs::Backing::Memory { tau_bits_per_s: Some(10e6) };
    let (mut s, path) = shard_with_l2("answer", true, Some(slow));
    fill_ssd(&mut s);
    // Segment 3 left the 16-packet DRAM tier long ago; its batch is on the SSD tier. The Interest
    // (with a PIT token of the consumer's own) is parked: nothing goes out, nothing upstream.
    let asked = with_token(interest(&segment_uri(3), 1000), vec![7, 7, 7]);
    assert!(feed(&mut s, 2, CONSUMER, &asked).is_empty());
    assert!(s.has_parked());
    // A second consumer asks for another segment of the same batch: it waits for the same read.
    assert!(feed(&mut s, 2, CONSUMER2, &interest(&segment_uri(8), 1001)).is_empty());
    assert_eq!(s.counters().cs_parked.get(), 2);
    let mut answered = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.has_parked() {
        assert!(std::time::Instant::now() < deadline, "the SSD read never finished");
        let mut out = Outbox::new();
        s.poll_content_store(3, &mut out);
        answered.extend(out.iter().map(|(f, _, b)| (f, b.to_vec())));
        std::thread::yield_now();
    }
    answered.sort_by_key(|(f, _)| *f);
    assert_eq!(answered.len(), 2, "both answered, nothing forwarded");
    assert_eq!(answered[0].0, CONSUMER);
    assert_eq!(token(&answered[0].1), vec![7, 7, 7], "the consumer's PIT token comes back");
    assert!(is_data(&answered[0].1) && is_data(&answered[1].1));
    assert_eq!(answered[1].0, CONSUMER2);
    assert_eq!(s.counters().cs_l2_background_reads.get(), 1, "one read for both");
    assert_eq!(s.counters().cs_parked_now.get(), 0);
    assert_eq!(s.counters().interests_out.get(), 40, "only the first fetches went upstream");
    let _ = std::fs::remove_file(path);
}

#[test]
fn without_background_reads_the_ssd_answers_at_once() {
    let (mut s, path) = shard_with_ssd("wait", false);
    fill_ssd(&mut s);
    let back = feed(&mut s, 2, CONSUMER, &interest(&segment_uri(3), 1000));
    assert_eq!(back.len(), 1);
    assert!(is_data(&back[0].1) && !s.has_parked());
    assert_eq!(s.counters().cs_l2_background_reads.get(), 0);
    let _ = std::fs::remove_file(path);
}

#[test]
fn parked_interests_of_a_face_that_goes_down_are_forgotten() {
    let (mut s, path) = shard_with_ssd("down", true);
    fill_ssd(&mut s);
    assert!(feed(&mut s, 2, CONSUMER, &interest(&segment_uri(3), 1000)).is_empty());
    assert!(feed(&mut s, 2, CONSUMER2, &interest(&segment_uri(13), 1001)).is_empty());
    s.apply(&Control::FaceDown(CONSUMER));
    assert_eq!(s.counters().cs_parked_now.get(), 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut to = Vec::new();
    while s.has_parked() {
        assert!(std::time::Instant::now() < deadline, "the SSD read never finished");
        let mut out = Outbox::new();
        s.poll_content_store(3, &mut out);
        to.extend(out.iter().map(|(f, _, _)| f));
    }
    assert_eq!(to, vec![CONSUMER2]);
    let _ = std::fs::remove_file(path);
}

/// NFD's access strategy: the first Interest of a prefix goes to every upstream; once one has
/// brought Data, the prefix's next Interests go to it alone; when it does not answer within its
/// RTO, the Interest goes to the others; a consumer's retransmission goes to every upstream.
#[test]
fn the_access_strategy_learns_the_working_upstream_and_falls_back_on_timeout() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    let mut s = shard(false, 100);
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), StrategyName::from_text("access").unwrap()));
    let faces = |out: &[(FaceId, Vec<u8>)]| {
        let mut f: Vec<FaceId> = out.iter().map(|(f, _)| *f).collect();
        f.sort();
        f
    };
    // Nothing known: every upstream. PRODUCER2 answers first (10 ms).
    let out = feed(&mut s, 0, CONSUMER, &interest("/a/v/0", 1));
    assert_eq!(faces(&out), [PRODUCER, PRODUCER2]);
    let via2 = out.iter().find(|(f, _)| *f == PRODUCER2).unwrap();
    assert!(is_data(&feed(&mut s, 10, PRODUCER2, &with_token(data("/a/v/0"), token(&via2.1)))[0].1));
    // Under /a/v now only PRODUCER2, the last working upstream (not the cheaper PRODUCER).
    let out = feed(&mut s, 20, CONSUMER, &interest("/a/v/1", 2));
    assert_eq!(faces(&out), [PRODUCER2]);
    let back = feed(&mut s, 25, PRODUCER2, &with_token(data("/a/v/1"), token(&out[0].1)));
    assert!(is_data(&back[0].1));
    // Another prefix knows nothing yet.
    assert_eq!(faces(&feed(&mut s, 30, CONSUMER, &interest("/a/w/0", 3))), [PRODUCER, PRODUCER2]);
    // PRODUCER2 goes quiet: within its RTO (200 ms at least) nothing more is sent; after it,
    // the Interest goes to the other upstream.
    let out = feed(&mut s, 100, CONSUMER, &interest("/a/v/2", 4));
    assert_eq!(faces(&out), [PRODUCER2]);
    let mut later = Outbox::new();
    s.fire_timers(250, &mut later);
    assert!(later.is_empty(), "not yet");
    s.fire_timers(300, &mut later);
    let sent: Vec<FaceId> = later.iter().map(|(f, _, _)| f).collect();
    assert_eq!(sent, [PRODUCER], "the others once the RTO has passed");
    let retried = later.iter().next().unwrap().2.to_vec();
    assert!(is_data(&feed(&mut s, 310, PRODUCER, &with_token(data("/a/v/2"), token(&retried)))[0].1));
    // PRODUCER answered: it is now the prefix's upstream; a satisfied entry's timer is moot.
    assert_eq!(faces(&feed(&mut s, 320, CONSUMER, &interest("/a/v/3", 5))), [PRODUCER]);
    // A consumer's retransmission (same name, new nonce) goes to every upstream.
    let out = feed(&mut s, 500, CONSUMER, &interest("/a/v/3", 6));
    assert_eq!(faces(&out), [PRODUCER, PRODUCER2]);
}

/// NFD's ASF strategy: Interests go to the best-ranked upstream (unmeasured ones by cost); a
/// probe with a fresh nonce goes to the other upstream within 5 s of the namespace's first
/// Interest; the faster upstream takes over, Data that comes late from the slower one still
/// measures it; an upstream that times out three times in a row, or Nacks, drops behind.
#[test]
fn asf_follows_the_fastest_upstream_probes_and_drops_a_silent_one() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    use nexthop_wire::InterestView;
    let mut s = shard(false, 100);
    let asf = StrategyName::from_text("asf/v=5/probing-interval~1000").unwrap();
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), asf));
    let nonce_of = |wire: &[u8]| {
        let lp = LpPacket::decode(wire).unwrap();
        InterestView::decode(&lp.fragment.unwrap()).unwrap().nonce().unwrap()
    };
    // Unmeasured: the cheaper PRODUCER, alone, answering in 50 ms; until the first probe.
    let mut now = 0;
    let mut n = 0u32;
    let probe = loop {
        n += 1;
        let out = feed(&mut s, now, CONSUMER, &interest(&format!("/a/{n}"), n));
        assert_eq!(out[0].0, PRODUCER, "the best upstream first");
        assert_eq!(nonce_of(&out[0].1), n.to_be_bytes(), "the consumer's nonce");
        if out.len() == 2 {
            break out;
        }
        assert_eq!(out.len(), 1);
        assert!(now <= 5000, "a probe within 5 s of the first Interest");
        let back = feed(&mut s, now + 50, PRODUCER, &with_token(data(&format!("/a/{n}")), token(&out[0].1)));
        assert!(is_data(&back[0].1));
        now += 100;
    };
    assert_eq!(probe[1].0, PRODUCER2, "the probe goes to the unmeasured upstream");
    assert_ne!(nonce_of(&probe[1].1), n.to_be_bytes(), "with a fresh nonce");
    // PRODUCER2 answers in 10 ms and satisfies the consumer; PRODUCER's Data, 50 ms on, is late
    // but measured.
    let back = feed(&mut s, now + 10, PRODUCER2, &with_token(data(&format!("/a/{n}")), token(&probe[1].1)));
    assert!(is_data(&back[0].1));
    assert!(feed(&mut s, now + 50, PRODUCER, &with_token(data(&format!("/a/{n}")), token(&probe[0].1))).is_empty());
    assert_eq!(s.counters().drops.get(DropReason::Unsolicited), 1);
    // PRODUCER2 is faster: it gets the next Interests, and no probe for a second.
    now += 100;
    n += 1;
    let out = feed(&mut s, now, CONSUMER, &interest(&format!("/a/{n}"), n));
    assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), [PRODUCER2]);
    assert!(is_data(&feed(&mut s, now + 10, PRODUCER2, &with_token(data(&format!("/a/{n}")), token(&out[0].1)))[0].1));
    // PRODUCER2 goes silent. Its timer (RTO 200 ms at least) fires three times, once per
    // Interest it is waiting for; at the third it counts as timed out and PRODUCER takes over.
    for round in 0..3 {
        now += 20;
        n += 1;
        let out = feed(&mut s, now, CONSUMER, &interest(&format!("/a/{n}"), n));
        assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), [PRODUCER2], "round {round}");
        let mut nothing = Outbox::new();
        s.fire_timers(now + 199, &mut nothing);
        now += 250;
        s.fire_timers(now, &mut nothing);
        assert!(nothing.is_empty(), "ASF's timers send nothing");
    }
    n += 1;
    let out = feed(&mut s, now, CONSUMER, &interest(&format!("/a/{n}"), n));
    assert_eq!(out[0].0, PRODUCER, "PRODUCER2 timed out");
    // The consumer retransmits (new nonce, past the retry interval): the upstream not yet tried.
    let again = feed(&mut s, now + 20, CONSUMER, &interest(&format!("/a/{n}"), 77));
    assert_eq!(again.iter().map(|o| o.0).collect::<Vec<_>>(), [PRODUCER2]);
    assert_eq!(nonce_of(&again[0].1), 77u32.to_be_bytes());
}

/// ASF passes a Nack on once every upstream it used has Nacked, and a Nacked upstream drops
/// behind an unmeasured one at once.
#[test]
fn asf_takes_a_nack_as_a_timeout() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    let mut s = shard(false, 100);
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), StrategyName::from_text("asf").unwrap()));
    let wire = interest("/a/1", 1);
    let out = feed(&mut s, 0, CONSUMER, &wire);
    assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), [PRODUCER]);
    let back = feed(&mut s, 5, PRODUCER, &nack(&out[0].1, NackReason::Congestion, token(&out[0].1)));
    assert_eq!(back.len(), 1);
    assert_eq!((back[0].0, nack_reason(&back[0].1)), (CONSUMER, Some(NackReason::Congestion)));
    let out = feed(&mut s, 10, CONSUMER, &interest("/a/2", 2));
    assert_eq!(out[0].0, PRODUCER2, "the Nacked upstream ranks last");
}

/// NFD's network region table: an Interest whose forwarding hint names a region this forwarder
/// is in (or a prefix of one) is forwarded by its own name and leaves without the hint; any
/// other hint still routes it.
#[test]
fn a_forwarding_hint_that_reaches_its_region_is_dropped() {
    use nexthop_wire::InterestView;
    let cfg = ShardConfig { network_regions: vec![Name::from_uri("/campus/lab").unwrap()], ..ShardConfig::default() };
    let mut s = Shard::new(cfg, Fib::default()).unwrap();
    let via = |face: FaceId| NextHops::new([NextHop { face: face as u32, cost: 1 }]);
    s.apply(&Control::SetRoute(Name::from_uri("/a").unwrap(), via(PRODUCER)));
    s.apply(&Control::SetRoute(Name::from_uri("/campus").unwrap(), via(PRODUCER2)));
    let hinted = |n: &str, hint: &str, nonce: u32| {
        let mut i = Interest::new(Name::from_uri(n).unwrap());
        i.nonce = Some(nonce.to_be_bytes());
        i.forwarding_hint = vec![Name::from_uri(hint).unwrap()];
        i.to_bytes()
    };
    let hints = |wire: &[u8]| {
        let lp = LpPacket::decode(wire).unwrap();
        let hints: Vec<String> = InterestView::decode(&lp.fragment.unwrap()).unwrap().forwarding_hint().map(|n| n.to_string()).collect();
        hints
    };
    // /campus is a prefix of the region /campus/lab: arrived.
    let out = feed(&mut s, 0, CONSUMER, &hinted("/a/1", "/campus", 1));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, PRODUCER, "by its name");
    assert!(hints(&out[0].1).is_empty(), "without the hint");
    // /campus/lab/room is not (the region is not under it): the hint routes it, and stays.
    let out = feed(&mut s, 0, CONSUMER, &hinted("/a/2", "/campus/lab/room", 2));
    assert_eq!(out[0].0, PRODUCER2);
    assert_eq!(hints(&out[0].1), ["/campus/lab/room"]);
    // The stripped Interest's Data comes back as usual.
    let back = feed(&mut s, 1, PRODUCER, &data("/a/1"));
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, CONSUMER);
}

/// NFD's unsolicited Data policies: Data no Interest asked for is never forwarded, counted as
/// unsolicited, and cached or not by where it came from.
#[test]
fn unsolicited_data_is_cached_as_the_policy_says() {
    use nexthop_fw::pipeline::UnsolicitedPolicy;
    for (policy, from, cached) in [
        (UnsolicitedPolicy::DropAll, FaceScope::Local, false),
        (UnsolicitedPolicy::AdmitLocal, FaceScope::Local, true),
        (UnsolicitedPolicy::AdmitLocal, FaceScope::NonLocal, false),
        (UnsolicitedPolicy::AdmitNetwork, FaceScope::NonLocal, true),
        (UnsolicitedPolicy::AdmitNetwork, FaceScope::Local, false),
        (UnsolicitedPolicy::AdmitAll, FaceScope::NonLocal, true),
    ] {
        let cs = Some(HcsConfig {
            l1: L1Config::with_bytes(1 << 20, 8800),
            l2: None,
            staging_batches: 1,
            read_ahead: false,
            chunk_reads: false,
        });
        let mut s = Shard::new(ShardConfig { cs, unsolicited: policy, ..ShardConfig::default() }, Fib::default()).unwrap();
        let mut out = Outbox::new();
        let wire = data("/pushed/1");
        let inc = classify(&wire).unwrap().unwrap();
        s.on_incoming(0, PRODUCER, from, &inc, &mut out);
        assert!(out.is_empty(), "{policy:?}: never forwarded");
        assert_eq!(s.counters().drops.get(DropReason::Unsolicited), 1);
        let answer = feed(&mut s, 1, CONSUMER, &interest("/pushed/1", 1));
        assert_eq!(answer.len() == 1 && is_data(&answer[0].1), cached, "{policy:?} from {from:?}");
    }
}

/// NFD's priority FIFO (`cs_policy priority_fifo`): Data pushed unsolicited, and admitted, is
/// the first to go when the store is full — before older Data that was asked for, which FIFO
/// would drop first.
#[test]
fn priority_fifo_drops_pushed_data_first() {
    use nexthop_cs::Policy;
    use nexthop_fw::pipeline::UnsolicitedPolicy;
    let l1 = L1Config { capacity: 2, slot_bytes: 8800, policy: Policy::PriorityFifo, prefix_index: true };
    let cs = Some(HcsConfig { l1, l2: None, staging_batches: 1, read_ahead: false, chunk_reads: false });
    let mut s = Shard::new(ShardConfig { cs, unsolicited: UnsolicitedPolicy::AdmitAll, ..ShardConfig::default() }, Fib::default()).unwrap();
    let hops = NextHops::new([NextHop { face: PRODUCER as u32, cost: 1 }]);
    s.apply(&Control::SetRoute(Name::from_uri("/a").unwrap(), hops));
    feed(&mut s, 0, CONSUMER, &interest("/a/1", 1));
    feed(&mut s, 1, PRODUCER, &data("/a/1"));
    assert!(feed(&mut s, 2, PRODUCER, &data("/a/pushed")).is_empty(), "unsolicited: cached, not forwarded");
    feed(&mut s, 3, CONSUMER, &interest("/a/2", 2));
    feed(&mut s, 4, PRODUCER, &data("/a/2"));
    let asked = feed(&mut s, 5, CONSUMER2, &interest("/a/1", 3));
    assert!(asked.len() == 1 && asked[0].0 == CONSUMER2 && is_data(&asked[0].1), "/a/1 is still stored");
    let pushed = feed(&mut s, 6, CONSUMER2, &interest("/a/pushed", 4));
    assert_eq!(sent_to(&pushed), [PRODUCER], "/a/pushed went: the Interest goes on to the producer");
}

/// An unsatisfied entry's nonces go to the dead-nonce list when it expires — those it went out
/// with too, so an ASF probe (sent with a fresh nonce) that comes back around is a loop.
#[test]
fn a_probes_nonce_outlives_its_entry_in_the_dead_nonce_list() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    use nexthop_wire::InterestView;
    let mut s = shard(false, 100);
    s.apply(&Control::SetStrategy(Name::from_uri("/a").unwrap(), StrategyName::from_text("asf").unwrap()));
    let mut now = 0;
    let (n, probe) = (1u32..)
        .find_map(|n| {
            now += 100;
            let out = feed(&mut s, now, CONSUMER, &interest(&format!("/a/{n}"), n));
            (out.len() == 2).then(|| (n, out[1].1.clone()))
        })
        .unwrap();
    let lp = LpPacket::decode(&probe).unwrap();
    let probe_nonce = InterestView::decode(&lp.fragment.unwrap()).unwrap().nonce().unwrap();
    s.expire(now + 5000);
    let back = feed(&mut s, now + 5001, CONSUMER2, &interest(&format!("/a/{n}"), u32::from_be_bytes(probe_nonce)));
    assert_eq!(nack_reason(&back[0].1), Some(NackReason::Duplicate));
    assert_eq!(s.counters().drops.get(DropReason::Loop), 1);
}

/// A prefix announcement Data for `prefix` (ContentType PrefixAnn, ExpirationPeriod 1 h).
fn announcement(prefix: &str) -> Vec<u8> {
    use nexthop_wire::{Component, MetaInfo};
    let name = Name::from_uri(prefix).unwrap().with(Component::keyword(&b"PA"[..])).with(Component::version(1)).with(Component::segment(0));
    let mut content = Vec::new();
    nexthop_fw::lp::encode::put_nonneg(&mut content, 0x6d, 3_600_000);
    let mut d = Data::new(name, content);
    d.meta_info = Some(MetaInfo { content_type: Some(5), ..MetaInfo::default() });
    d.sign_digest_sha256();
    d.to_bytes()
}

/// The LP fields a forwarded packet carries: (NonDiscovery, PrefixAnnouncement).
fn self_learning_fields(wire: &[u8]) -> (bool, Option<Vec<u8>>) {
    match LpPacket::decode(wire) {
        Ok(lp) => (lp.non_discovery, lp.prefix_announcement),
        Err(_) => (false, None), // a bare packet: no field
    }
}

/// NFD's self-learning strategy at a consumer's forwarder: a discovery Interest with no route
/// is broadcast to every face to another host; the Data that answers it with a prefix
/// announcement teaches a route (handed to the RIB through the outbox) and carries the
/// announcement on; an Interest with a route goes to its next hops marked NonDiscovery; a
/// NonDiscovery Interest with no route is Nacked; a Nack NoRoute unlearns the route.
#[test]
fn self_learning_broadcasts_discovers_and_unlearns() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    let mut s = Shard::new(ShardConfig::default(), Fib::default()).unwrap();
    s.apply(&Control::SetStrategy(Name::new(), StrategyName::from_text("self-learning").unwrap()));
    for f in [PRODUCER, PRODUCER2] {
        s.apply(&Control::NonLocalFace(f));
    }
    // No route: broadcast on both faces to other hosts, unmarked (a discovery Interest).
    let mut out = Outbox::new();
    let wire = interest("/sl/1", 1);
    s.on_incoming(0, CONSUMER, FaceScope::Local, &classify(&wire).unwrap().unwrap(), &mut out);
    let sent: Vec<(FaceId, Vec<u8>)> = out.iter().map(|(f, _, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.iter().map(|s| s.0).collect::<Vec<_>>(), [PRODUCER, PRODUCER2]);
    assert!(sent.iter().all(|s| !self_learning_fields(&s.1).0), "discovery Interests");
    // PRODUCER2 answers with an announcement of /sl: learned, and passed on to the consumer.
    let pa = announcement("/sl");
    let mut lp = LpPacket::wrap(data("/sl/1"));
    lp.pit_token = Some(token(&sent[1].1));
    lp.prefix_announcement = Some(pa.clone());
    let mut out = Outbox::new();
    s.on_incoming(5, PRODUCER2, FaceScope::NonLocal, &classify(&lp.to_bytes()).unwrap().unwrap(), &mut out);
    assert_eq!(out.learned, [(PRODUCER2, pa.clone())]);
    let back: Vec<_> = out.iter().map(|(f, _, b)| (f, b.to_vec())).collect();
    assert_eq!((back.len(), back[0].0), (1, CONSUMER));
    assert_eq!(self_learning_fields(&back[0].1).1, Some(pa), "the announcement travels on");
    // The RIB made the route (here by hand): the next Interest follows it, marked.
    let via2 = NextHops::new([NextHop { face: PRODUCER2 as u32, cost: 2048 }]);
    s.apply(&Control::SetRoute(Name::from_uri("/sl").unwrap(), via2));
    let out = feed(&mut s, 10, CONSUMER, &interest("/sl/2", 2));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, PRODUCER2);
    assert!(self_learning_fields(&out[0].1).0, "NonDiscovery along a known route");
    // A Nack NoRoute back along it: the consumer is told at once, and the route is unlearned.
    let mut o = Outbox::new();
    let n = nack(&out[0].1, NackReason::NoRoute, token(&out[0].1));
    s.on_incoming(12, PRODUCER2, FaceScope::NonLocal, &classify(&n).unwrap().unwrap(), &mut o);
    assert_eq!(o.unlearned, [(PRODUCER2, Name::from_uri("/sl/2").unwrap().value().to_vec())]);
    let told: Vec<_> = o.iter().map(|(f, _, b)| (f, nack_reason(b))).collect();
    assert_eq!(told, [(CONSUMER, Some(NackReason::NoRoute))]);
    // A NonDiscovery Interest for a name with no route: Nack NoRoute, nothing broadcast.
    let mut lp = LpPacket::wrap(interest("/other/1", 3));
    lp.non_discovery = true;
    let out = feed(&mut s, 20, PRODUCER, &lp.to_bytes());
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].0, nack_reason(&out[0].1)), (PRODUCER, Some(NackReason::NoRoute)));
}

/// Self-learning as NFD's: an Interest whose route, or whose broadcast, leaves no eligible face
/// (it came from the only one) is dropped without a Nack — a Nack NoRoute would make the
/// self-learning forwarder downstream unlearn its route — and counted as such; best-route
/// Nacks the same Interest.
#[test]
fn self_learning_drops_without_a_nack_when_no_face_is_eligible() {
    use nexthop_fw::counters::DropReason;
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    let mut s = Shard::new(ShardConfig::default(), Fib::default()).unwrap();
    s.apply(&Control::SetStrategy(Name::from_uri("/sl").unwrap(), StrategyName::from_text("self-learning").unwrap()));
    s.apply(&Control::NonLocalFace(PRODUCER));
    s.apply(&Control::SetRoute(Name::from_uri("/sl/known").unwrap(), NextHops::new([NextHop { face: PRODUCER as u32, cost: 1 }])));
    s.apply(&Control::SetRoute(Name::from_uri("/br").unwrap(), NextHops::new([NextHop { face: PRODUCER as u32, cost: 1 }])));
    // Its route's only next hop is where it came from.
    assert!(feed(&mut s, 0, PRODUCER, &interest("/sl/known/1", 1)).is_empty());
    // A discovery Interest with no route, from the only face to another host.
    assert!(feed(&mut s, 1, PRODUCER, &interest("/sl/unknown/1", 2)).is_empty());
    assert_eq!(s.counters().drops.get(DropReason::NoEligibleHop), 2);
    assert_eq!(s.counters().drops.get(DropReason::NoRoute), 0);
    // NonDiscovery with no route is still Nacked, and so is best-route's Interest.
    let mut lp = LpPacket::wrap(interest("/sl/unknown/2", 3));
    lp.non_discovery = true;
    for wire in [lp.to_bytes(), interest("/br/1", 4)] {
        let out = feed(&mut s, 2, PRODUCER, &wire);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0, nack_reason(&out[0].1)), (PRODUCER, Some(NackReason::NoRoute)));
    }
    assert_eq!(s.counters().drops.get(DropReason::NoRoute), 2);
}

/// Self-learning at the producer's forwarder: a discovery Interest from another host follows
/// the producer's route (marked NonDiscovery on to the app), and the Data goes back with the
/// producer's prefix announcement; Data for a NonDiscovery Interest goes back without one.
#[test]
fn self_learning_announces_the_producers_prefix_to_a_discovery() {
    use nexthop_fw::pipeline::strategy::registry::StrategyName;
    const APP: FaceId = 500;
    let mut s = Shard::new(ShardConfig::default(), Fib::default()).unwrap();
    s.apply(&Control::SetStrategy(Name::new(), StrategyName::from_text("self-learning").unwrap()));
    s.apply(&Control::NonLocalFace(PRODUCER));
    s.apply(&Control::SetRoute(Name::from_uri("/sl").unwrap(), NextHops::new([NextHop { face: APP as u32, cost: 2048 }])));
    let pa = announcement("/sl");
    s.apply(&Control::Announce { prefix: Name::from_uri("/sl").unwrap(), face: APP, announcement: pa.clone(), expires_ms: 60_000 });
    for (n, discovery, expected) in [(1, true, Some(pa.clone())), (2, false, None)] {
        let mut lp = LpPacket::wrap(interest(&format!("/sl/{n}"), n));
        lp.non_discovery = !discovery;
        let mut out = Outbox::new();
        s.on_incoming(0, PRODUCER, FaceScope::NonLocal, &classify(&lp.to_bytes()).unwrap().unwrap(), &mut out);
        let sent: Vec<_> = out.iter().map(|(f, _, b)| (f, b.to_vec())).collect();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, APP);
        assert!(self_learning_fields(&sent[0].1).0, "to the app along its route");
        let back = feed(&mut s, 1, APP, &with_token(data(&format!("/sl/{n}")), token(&sent[0].1)));
        assert_eq!(back[0].0, PRODUCER);
        assert_eq!(self_learning_fields(&back[0].1).1, expected, "Interest {n}, discovery {discovery}");
    }
    // Once the app's face is gone, so is its announcement.
    s.apply(&Control::FaceDown(APP));
    s.apply(&Control::SetRoute(Name::from_uri("/sl").unwrap(), NextHops::new([NextHop { face: CONSUMER as u32, cost: 1 }])));
    let out = feed(&mut s, 2, PRODUCER, &interest("/sl/3", 3));
    let back = feed(&mut s, 3, CONSUMER, &with_token(data("/sl/3"), token(&out[0].1)));
    assert_eq!(self_learning_fields(&back[0].1).1, None);
}

/// The HopLimit an Interest left with.
fn hop_limit_sent(bytes: &[u8]) -> Option<u8> {
    let lp = LpPacket::decode(bytes).unwrap();
    nexthop_wire::InterestView::decode(&lp.fragment.unwrap()).unwrap().hop_limit()
}

/// HopLimit as NFD keeps it: each hop takes one off; an Interest that would leave with 0 goes
/// to an app on this host but not to another host (dropped, counted `hop-limit`); one that
/// arrives with none gets the configured `default_hop_limit`, which it leaves with.
#[test]
fn hop_limits_are_taken_off_given_and_spent() {
    let with_hop_limit = |uri: &str, nonce: u32, hops: Option<u8>| {
        let mut i = Interest::new(Name::from_uri(uri).unwrap());
        i.nonce = Some(nonce.to_be_bytes());
        i.hop_limit = hops;
        i.to_bytes()
    };
    // PRODUCER reaches another host; PRODUCER2 (the /b route) is an app here.
    let mut s = shard(false, 100);
    s.apply(&Control::NonLocalFace(PRODUCER));
    s.apply(&Control::SetRoute(Name::from_uri("/b").unwrap(), NextHops::new([NextHop { face: PRODUCER2 as u32, cost: 1 }])));
    let out = feed(&mut s, 0, CONSUMER, &with_hop_limit("/a/x", 1, Some(3)));
    assert_eq!(out.iter().map(|(f, b)| (*f, hop_limit_sent(b))).collect::<Vec<_>>(), [(PRODUCER, Some(2))]);
    assert!(feed(&mut s, 0, CONSUMER, &with_hop_limit("/a/y", 2, Some(1))).is_empty(), "it would reach another host with 0");
    assert_eq!(s.counters().drops.get(DropReason::HopLimit), 1);
    let out = feed(&mut s, 0, CONSUMER, &with_hop_limit("/b/y", 3, Some(1)));
    assert_eq!(out.iter().map(|(f, b)| (*f, hop_limit_sent(b))).collect::<Vec<_>>(), [(PRODUCER2, Some(0))], "an app here");
    assert!(feed(&mut s, 0, CONSUMER, &with_hop_limit("/b/z", 4, Some(0))).is_empty(), "arrived with 0");
    assert_eq!(s.counters().drops.get(DropReason::HopLimit), 2);
    assert_eq!(hop_limit_sent(&feed(&mut s, 0, CONSUMER, &with_hop_limit("/a/n", 5, None))[0].1), None, "none given by default");
    // default_hop_limit: given to one that has none, kept by one that has one.
    let mut s = Shard::new(ShardConfig { default_hop_limit: 5, ..ShardConfig::default() }, Fib::default()).unwrap();
    s.apply(&Control::SetRoute(Name::from_uri("/a").unwrap(), NextHops::new([NextHop { face: PRODUCER as u32, cost: 1 }])));
    assert_eq!(hop_limit_sent(&feed(&mut s, 0, CONSUMER, &with_hop_limit("/a/1", 1, None))[0].1), Some(5));
    assert_eq!(hop_limit_sent(&feed(&mut s, 0, CONSUMER, &with_hop_limit("/a/2", 2, Some(9)))[0].1), Some(8));
    let mut no_nonce = Interest::new(Name::from_uri("/a/3").unwrap());
    no_nonce.nonce = None;
    assert_eq!(hop_limit_sent(&feed(&mut s, 0, CONSUMER, &no_nonce.to_bytes())[0].1), Some(5), "and a Nonce too");
    s.apply(&Control::SetDefaultHopLimit(0));
    assert_eq!(hop_limit_sent(&feed(&mut s, 0, CONSUMER, &with_hop_limit("/a/4", 4, None))[0].1), None, "turned off");
}

/// NFD's ad hoc link type (a wireless medium where one neighbour may not hear another): an
/// Interest from an ad hoc face may go back out on it, and its Data too; on any other face it
/// never does.
#[test]
fn an_ad_hoc_face_takes_packets_back_out() {
    for ad_hoc in [false, true] {
        let mut s = shard(false, 100);
        if ad_hoc {
            s.apply(&Control::LinkType(PRODUCER, LinkType::AdHoc));
        }
        // Best-route: the cheapest next hop is the face the Interest came from.
        let out = feed(&mut s, 0, PRODUCER, &interest("/a/br", 1));
        assert_eq!(sent_to(&out), if ad_hoc { [PRODUCER] } else { [PRODUCER2] }, "ad hoc: {ad_hoc}");
        // Its Data goes back to the asker — when ad hoc, out on the face it came in on.
        let back = feed(&mut s, 1, out[0].0, &with_token(data("/a/br"), token(&out[0].1)));
        assert_eq!(sent_to(&back), [PRODUCER], "ad hoc: {ad_hoc}");
        // Multicast: every next hop, the face it came from only when ad hoc.
        s.apply(&Control::SetStrategy(
            Name::from_uri("/a").unwrap(),
            nexthop_fw::pipeline::strategy::registry::StrategyName::from_text("multicast").unwrap(),
        ));
        let out = feed(&mut s, 2, PRODUCER, &interest("/a/mc", 2));
        let want = if ad_hoc { vec![PRODUCER, PRODUCER2] } else { vec![PRODUCER2] };
        assert_eq!(sent_to(&out), want, "ad hoc: {ad_hoc}");
    }
}
