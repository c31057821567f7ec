//! The SSD tier of the content store behind a running nexthop with two forwarding threads:
//! each thread owns its own file, and Data far beyond the DRAM tier's capacity is served from
//! the files after the producer is gone: each object's first batch read in the background while
//! its Interest waits parked, its later batches read ahead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_fw::client::{Answer, Client};
use nexthop_fw::config::Config;
use nexthop_fw::face::FaceUri;
use nexthop_fw::runtime::{l2_shard_path, Runtime};
use nexthop_fw::traffic;
use nexthop_wire::{Component, DataView, Interest, Name};

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
    let dir = std::env::temp_dir().join(format!("nexthop-l2-{threads}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
