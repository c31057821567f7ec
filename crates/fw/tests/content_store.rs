//! The content store behind a running nexthop. The SSD tier with two forwarding threads: each
//! thread owns its own file, and Data far beyond the DRAM tier's capacity is served from the
//! files after the producer is gone: each object's first batch read in the background while its
//! Interest waits parked, its later batches read ahead. And NFD's management of it: `cs/erase`
//! and `cs/config` (capacity, admit, serve), checked by what is served afterwards. And NFD's
//! unsolicited Data policy: an app pushes Data no one asked for into the store.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{scratch, Forwarder};
use nexthop_fw::conf::config::Config;
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_fw::runtime::{l2_shard_path, Runtime};
use nexthop_tools::client::{Answer, Client};
use nexthop_tools::traffic;
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Component, Data, DataView, Emit, Interest, NackReason, Name};

mod common;

#[test]
fn two_threads_each_serve_from_their_own_ssd_file() {
    serve_from_ssd(2);
}

/// One thread: the I/O thread forwards, and waits in its poll for the SSD reads' signal.
#[test]
fn one_thread_serves_from_its_ssd_file() {
    serve_from_ssd(1);
}

fn serve_from_ssd(threads: usize) {
    let ssd = scratch(&format!("l2-{threads}"));
    let dir = ssd.path();
    let mut cfg = Config::default();
    cfg.forwarder.threads = threads;
    cfg.forwarder.dispatch_components = 2;
    cfg.faces.unix = dir.join("c.sock").to_string_lossy().into_owned();
    cfg.faces.tcp = String::new();
    cfg.faces.udp = String::new();
    cfg.content_store.capacity = 64;
    cfg.content_store.l2_path = dir.join("l2.cs").to_string_lossy().into_owned();
    cfg.content_store.l2_bytes = 64 << 20;
    // One thread with 2 KiB slots (1000-byte Data fit), two with the default 8 KiB.
    cfg.content_store.l2_slot_bytes = if threads == 1 { 2048 } else { 8192 };
    let mut rt = Runtime::new(cfg.clone()).unwrap();
    let shards = rt.shard_counters();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let t = std::thread::spawn(move || rt.run(&s).unwrap());
    let face = FaceUri::Unix(cfg.faces.unix.clone());

    let prefix = Name::from_uri("/l2").unwrap();
    let pstop = Arc::new(AtomicBool::new(false));
    let producer = traffic::start_producer(&face, &face, &prefix, 1000, pstop.clone()).unwrap();
    let mut c = Client::connect(&face).unwrap();
    let fetch = |c: &mut Client, i: usize| {
        // Objects of 30 segments: three batches of the SSD tier's 10 each, so fetching one in
        // order also reads its next batches ahead (`content_store.l2_read_ahead`, on by default).
        let mut x = Interest::new(Name::from_uri(&format!("/l2/o{}", i / 30)).unwrap().with(Component::segment(i as u64 % 30)));
        x.nonce = Some(c.next_nonce());
        match c.express(&x, Duration::from_secs(2)) {
            Ok(Answer::Data(w)) => DataView::decode(&w).unwrap().content().map(<[u8]>::len),
            _ => None,
        }
    };
    const N: usize = 1500;
    for i in 0..N {
        assert_eq!(fetch(&mut c, i), Some(1000), "first fetch of {i}");
    }
    pstop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    // The producer is gone: every answer now comes from the content store, nearly all of it
    // from the SSD files (the DRAM tier holds 64 packets).
    let served = (0..N).filter(|&i| fetch(&mut c, i) == Some(1000)).count();
    assert!(served >= N - 64, "{served} of {N} served from the content store");
    for (shard, counters) in shards.iter().enumerate() {
        assert!(counters.cs_hits.get() > 100, "shard {shard}: {} hits", counters.cs_hits.get());
        assert!(counters.cs_l2_read_aheads.get() > 10, "shard {shard}: {} read-aheads", counters.cs_l2_read_aheads.get());
        // Each object's first batch was read in the background while its Interest was parked
        // (`content_store.l2_background_reads`, on by default), and none is parked now.
        assert!(counters.cs_l2_background_reads.get() > 5, "shard {shard}: {} background reads", counters.cs_l2_background_reads.get());
        assert_eq!(counters.cs_parked_now.get(), 0, "shard {shard}");
        // An object's first segment follows no stream: its read brought that chunk alone
        // (`content_store.l2_chunk_reads`, on by default); the second then read the batch.
        let chunk_reads = counters.cs_l2_chunk_reads.get();
        assert!(chunk_reads > 5 && chunk_reads < counters.cs_l2_background_reads.get(), "shard {shard}: {chunk_reads} chunk reads");
        let p = l2_shard_path(&cfg.content_store.l2_path, threads, shard);
        let len = std::fs::metadata(&p).unwrap().len();
        assert!(len >= (64 << 20) / threads as u64 - (1 << 20), "{p}: {len} bytes");
    }
    if threads == 1 {
        // Data too large for a 2 KiB slot is still cached, in DRAM only, and counted.
        let big = Name::from_uri("/big").unwrap();
        let bstop = Arc::new(AtomicBool::new(false));
        let producer = traffic::start_producer(&face, &face, &big, 3000, bstop.clone()).unwrap();
        let mut x = Interest::new(big.clone().with(Component::segment(0)));
        let mut fetch_big = |c: &mut Client| {
            x.nonce = Some(c.next_nonce());
            matches!(c.express(&x, Duration::from_secs(2)), Ok(Answer::Data(w)) if DataView::decode(&w).unwrap().content().map(<[u8]>::len) == Some(3000))
        };
        assert!(fetch_big(&mut c), "from the producer");
        bstop.store(true, Ordering::Relaxed);
        producer.join().unwrap();
        assert!(fetch_big(&mut c), "from the DRAM tier, the producer gone");
        let t0 = std::time::Instant::now();
        while shards[0].cs_dram_only.get() == 0 {
            assert!(t0.elapsed() < Duration::from_secs(5), "the gauge shows the DRAM-only Data");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
}

/// The `cs/info` dataset's Capacity, Flags and NCsEntries.
fn cs_info(c: &mut Client) -> (u64, u64, u64) {
    let content = c.dataset("/localhost/nfd/cs/info").unwrap();
    let info = TlvReader::new(&content).next().unwrap().unwrap();
    assert_eq!(info.ty, 0x80, "a CsInfo element");
    let field = |ty| TlvReader::new(info.value).map(Result::unwrap).find(|t| t.ty == ty).map(|t| read_nonneg(t.ty, t.value).unwrap());
    (field(0x83).unwrap(), field(0x6c).unwrap(), field(0x87).unwrap())
}

/// One Interest for `uri`: Some(true) for Data, Some(false) for a Nack NoRoute, None otherwise.
fn served(c: &mut Client, uri: &str) -> Option<bool> {
    let mut i = Interest::new(Name::from_uri(uri).unwrap());
    i.nonce = Some(c.next_nonce());
    match c.express(&i, Duration::from_secs(2)) {
        Ok(Answer::Data(_)) => Some(true),
        Ok(Answer::Nack(NackReason::NoRoute)) => Some(false),
        _ => None,
    }
}

/// A producer for `/cs` that answers every name under it, stopped by the returned closure
/// once its route has left the FIB.
fn producer(fw: &Forwarder) -> impl FnOnce() + '_ {
    let prefix = Name::from_uri("/cs").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let thread = traffic::start_producer(&fw.unix(), &fw.unix(), &prefix, 100, stop.clone()).unwrap();
    move || {
        stop.store(true, Ordering::Relaxed);
        thread.join().unwrap();
        let t0 = std::time::Instant::now();
        while fw.has_route(&prefix) {
            assert!(t0.elapsed() < Duration::from_secs(10), "the producer's route outlived it");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[test]
fn operators_erase_and_configure_the_content_store_through_management() {
    // Two forwarding threads: each has its own store, and names spread over both.
    let dir = scratch("cs-mgmt");
    let fw = Forwarder::start(&dir, "s", 2);
    let mut c = fw.client();
    let a: Vec<String> = (0..300).map(|i| format!("/cs/a/{i}")).collect();
    let b: Vec<String> = (0..50).map(|i| format!("/cs/b/{i}")).collect();
    let stop = producer(&fw);
    for uri in a.iter().chain(&b) {
        assert_eq!(served(&mut c, uri), Some(true), "{uri} from the producer");
    }
    stop();
    let (capacity, flags, entries) = cs_info(&mut c);
    assert_eq!((capacity, flags, entries), (16384, 3, 350), "the default capacity, admitting and serving");
    assert!(a.iter().chain(&b).all(|uri| served(&mut c, uri) == Some(true)), "the producer is gone: all from the store");

    // cs/erase: at most 256 a command (NFD's limit, Capacity saying it stopped there), then
    // the rest, then none; a Count erases no more than it says.
    let erase = |c: &mut Client, uri: &str, count: Option<u64>| {
        let p = ControlParameters { name: Some(Name::from_uri(uri).unwrap()), count, ..Default::default() };
        let r = c.command("cs", "erase", &p).unwrap();
        assert_eq!(r.code, 200, "{}", r.text);
        let body = r.body.unwrap();
        (body.count.unwrap(), body.capacity)
    };
    assert_eq!(erase(&mut c, "/cs/a", None), (256, Some(256)));
    assert_eq!(erase(&mut c, "/cs/a", None), (44, None));
    assert_eq!(erase(&mut c, "/cs/a", None), (0, None));
    assert_eq!(erase(&mut c, "/cs/b", Some(10)), (10, None));
    assert_eq!(erase(&mut c, "/cs/b", Some(0)), (0, None), "a Count of 0 erases nothing");
    assert_eq!(c.command("cs", "erase", &ControlParameters::default()).unwrap().code, 400, "Name is required");
    assert_eq!(cs_info(&mut c).2, 40);
    assert!(a.iter().step_by(10).all(|uri| served(&mut c, uri) == Some(false)), "erased, and no route");
    assert_eq!(b.iter().filter(|uri| served(&mut c, uri) == Some(true)).count(), 40);

    // cs/config: a capacity (rounded up to a multiple of the threads) and serving off; a flag
    // changes only where Mask has its bit.
    let config = |c: &mut Client, capacity: Option<u64>, flags: u64, mask: u64| {
        let p = ControlParameters { capacity, flags: Some(flags), mask: Some(mask), ..Default::default() };
        let r = c.command("cs", "config", &p).unwrap();
        assert_eq!(r.code, 200, "{}", r.text);
        let body = r.body.unwrap();
        (body.capacity.unwrap(), body.flags.unwrap())
    };
    assert_eq!(config(&mut c, Some(11), 0, 0b10), (12, 0b01));
    let (capacity, flags, entries) = cs_info(&mut c);
    assert_eq!((capacity, flags), (12, 0b01));
    assert!(entries <= 12, "{entries} entries");
    assert!(b.iter().all(|uri| served(&mut c, uri) == Some(false)), "not served");
    assert_eq!(config(&mut c, None, 0b10, 0b10), (12, 0b11), "serving again");
    assert_eq!(b.iter().filter(|uri| served(&mut c, uri) == Some(true)).count() as u64, entries);
    assert_eq!(config(&mut c, Some(1 << 40), 0, 0), (16384, 0b11), "no more than the stores allocated");

    // Admitting off: Data passes through to the consumer and is not stored.
    assert_eq!(config(&mut c, None, 0, 0b01), (16384, 0b10));
    let stop = producer(&fw);
    assert!((0..20).all(|i| served(&mut c, &format!("/cs/c/{i}")) == Some(true)));
    stop();
    assert!((0..20).all(|i| served(&mut c, &format!("/cs/c/{i}")) == Some(false)), "not stored");
}

/// `content_store.unsolicited_policy = "admit-local"`: Data an app on this host sends without
/// an Interest is cached (on the forwarding thread its name is dispatched to) and answers the
/// next Interest for it; with NFD's default, drop-all, it is dropped and the Interest finds no
/// route.
#[test]
fn an_app_pushes_data_into_the_store_when_the_policy_admits_it() {
    for (threads, policy, cached) in
        [(1, "admit-local", true), (2, "admit-local", true), (1, "drop-all", false), (1, "admit-network", false)]
    {
        let dir = scratch(&format!("push-{threads}-{policy}"));
        let fw = Forwarder::start_with(&dir, "s", threads, |c| {
            c.content_store.unsolicited_policy = policy.into();
        });
        let mut producer = fw.client();
        let mut consumer = fw.client();
        for i in 0..20 {
            let mut d = Data::new(Name::from_uri(&format!("/pushed/{i}")).unwrap(), b"pushed".to_vec());
            d.sign_digest_sha256();
            producer.send(&d.to_bytes()).unwrap();
        }
        // The pushes and the Interests come on different faces: ask until the store has them
        // (or, where it must not, until the pushes were counted as dropped).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while fw.drops("unsolicited-data") < 20 {
            assert!(std::time::Instant::now() < deadline, "the pushes never arrived");
            std::thread::sleep(Duration::from_millis(10));
        }
        for i in 0..20 {
            let mut interest = Interest::new(Name::from_uri(&format!("/pushed/{i}")).unwrap());
            interest.nonce = Some(consumer.next_nonce());
            let answer = consumer.express(&interest, Duration::from_secs(2)).unwrap();
            match (cached, answer) {
                (true, Answer::Data(wire)) => assert_eq!(DataView::decode(&wire).unwrap().content(), Some(&b"pushed"[..])),
                (false, Answer::Nack(NackReason::NoRoute)) => {}
                (_, other) => panic!("{threads} threads, {policy}, /pushed/{i}: {other:?}"),
            }
        }
    }
}
