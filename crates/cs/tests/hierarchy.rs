//! The hierarchical store end to end: prefetch from a real L2 file, write-back of admitted Data,
//! corrupted L2 bytes never served, oversize packets refused.

use std::path::PathBuf;

use nexthop_cs::l2::{Backing, DirectIo, FileConfig, IoEngine};
use nexthop_cs::{HcsConfig, HierarchicalStore, InsertError, L1Config, L2Config, Lookup, Policy, Request, Tier};
use nexthop_wire::{Component, Data, Emit, Name};

fn chunk(seg: u64, payload: usize) -> (Name, Vec<u8>) {
    let name = Name::from_uri("/c/v=1").unwrap().with(Component::segment(seg));
    let mut d = Data::new(name.clone(), vec![seg as u8; payload]);
    d.sign_digest_sha256();
    (name, d.to_bytes())
}

fn store(backing: Backing, l1_chunks: u32) -> HierarchicalStore {
    store_with(backing, l1_chunks, false)
}

fn store_with(backing: Backing, l1_chunks: u32, read_ahead: bool) -> HierarchicalStore {
    store_cfg(backing, l1_chunks, read_ahead, false, 4096)
}

fn store_cfg(backing: Backing, l1_chunks: u32, read_ahead: bool, chunk_reads: bool, slot_bytes: u32) -> HierarchicalStore {
    let mut l2 = L2Config::new(0, backing);
    l2.batch_chunks = 10;
    l2.chunk_slot_bytes = slot_bytes;
    l2.capacity_bytes = 20 * l2.batch_bytes() as u64;
    let l1 = L1Config { capacity: l1_chunks, slot_bytes: 4096, policy: Policy::Fifo, prefix_index: true };
    HierarchicalStore::new(HcsConfig { l1, l2: Some(l2), staging_batches: 4, read_ahead, chunk_reads }).unwrap()
}

fn file_backing(tag: &str) -> (PathBuf, Backing) {
    file_backing_with(tag, IoEngine::Auto)
}

fn file_backing_with(tag: &str, engine: IoEngine) -> (PathBuf, Backing) {
    let dir = std::env::var_os("CARGO_TARGET_TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let path = dir.join(format!("nexthop-hcs-{tag}-{}", std::process::id()));
    (path.clone(), Backing::File(FileConfig { path, create: true, direct: DirectIo::Preferred, engine }))
}

fn tier(s: &mut HierarchicalStore, seg: u64) -> Option<Tier> {
    let (name, wire) = chunk(seg, 1000);
    let served = s.lookup(&Request::exact(name.as_view()), 0)?;
    assert_eq!(served.wire, wire.as_slice());
    Some(served.tier)
}

#[test]
fn a_miss_prefetches_its_batch_from_a_real_file() {
    let (path, backing) = file_backing("prefetch");
    let mut s = store(backing, 30);
    for seg in 0..100 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    assert_eq!(s.l2().unwrap().batches(), 10);
    assert_eq!(tier(&mut s, 0), Some(Tier::L2));
    for seg in 1..10 {
        assert_eq!(tier(&mut s, seg), Some(Tier::L1), "seg {seg} was prefetched");
    }
    assert_eq!(tier(&mut s, 57), Some(Tier::L2));
    assert_eq!(tier(&mut s, 59), Some(Tier::L1));
    assert_eq!(tier(&mut s, 100), None);
    let st = s.stats();
    assert_eq!((st.requests, st.l1_hits, st.l2_hits, st.misses), (13, 10, 2, 1));
    assert_eq!(s.l2_stats().reads, 2);
    drop(s);
    std::fs::remove_file(path).unwrap();
}

/// Stores segments 0..n in the L2 only, then requests each in order, every one served.
fn stream_from_the_l2(s: &mut HierarchicalStore, n: u64) {
    for seg in 0..n {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    for seg in 0..n {
        assert!(tier(s, seg).is_some(), "seg {seg}");
    }
}

#[test]
fn a_stream_meets_the_device_only_at_its_first_batch_with_read_ahead() {
    for (engine, read_ahead) in [(IoEngine::IoUring, true), (IoEngine::IoUring, false), (IoEngine::Pread, true)] {
        let (path, backing) = file_backing_with(&format!("ahead-{engine:?}-{read_ahead}"), engine);
        // Room in the L1 for the batch being read and the four read ahead (a smaller L1 would
        // drop chunks read ahead before their requests came).
        let mut s = store_with(backing, 60, read_ahead);
        stream_from_the_l2(&mut s, 100);
        let (st, l2) = (s.stats(), s.l2_stats());
        assert_eq!(st.l1_hits + st.l2_hits, 100);
        assert_eq!(l2.reads, 10, "each batch read once");
        let waited_for_by_a_request = st.l2_hits - st.read_ahead_waits;
        if read_ahead && engine == IoEngine::IoUring {
            // Batch 0 read on its first request; batches 1–9 ahead, from chunks 1, 11, … on.
            assert_eq!((l2.read_aheads, waited_for_by_a_request), (9, 1), "{st:?} {l2:?}");
        } else {
            assert_eq!((l2.read_aheads, waited_for_by_a_request), (0, 10), "{engine:?} {read_ahead}");
        }
        drop(s);
        std::fs::remove_file(path).unwrap();
    }
}

#[test]
fn the_emulated_l2_reads_ahead_too() {
    let mut s = store_with(Backing::Memory { tau_bits_per_s: Some(4e9) }, 60, true);
    stream_from_the_l2(&mut s, 100);
    let (st, l2) = (s.stats(), s.l2_stats());
    assert_eq!((l2.reads, l2.read_aheads, st.l2_hits - st.read_ahead_waits), (10, 9, 1), "{st:?} {l2:?}");
}

#[test]
fn no_read_ahead_for_a_batch_already_in_the_l1() {
    let (path, backing) = file_backing_with("ahead-l1", IoEngine::IoUring);
    let mut s = store_with(backing, 40, true);
    for seg in 0..20 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    assert_eq!(tier(&mut s, 10), Some(Tier::L2)); // Batch 1 into the L1.
    assert_eq!(tier(&mut s, 4), Some(Tier::L2)); // Batch 0; then a stream through it.
    assert_eq!(tier(&mut s, 5), Some(Tier::L1));
    assert_eq!(tier(&mut s, 6), Some(Tier::L1));
    assert_eq!(s.l2_stats().read_aheads, 0, "batch 1's first chunk is in the L1 already");
    drop(s);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn requests_in_no_order_read_nothing_ahead_and_a_stream_reads_one_batch_ahead() {
    let (path, backing) = file_backing_with("ahead-order", IoEngine::IoUring);
    let mut s = store_with(backing, 100, true);
    for seg in 0..100 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    for seg in [53, 7, 88, 21, 65, 2, 39, 74, 16, 94] {
        assert!(tier(&mut s, seg).is_some());
    }
    assert_eq!(s.l2_stats().read_aheads, 0, "no stream, no read-ahead");
    // A stream from segment 30 (batch 3, in the L1 since 39 was read): its second request
    // reads the next four batches ahead but for those in the L1 already (5, 6 and 7, read for
    // 53, 65 and 74): batch 4 only, and only once however far through batch 3 it goes.
    for seg in 30..36 {
        assert!(tier(&mut s, seg).is_some());
    }
    assert_eq!(s.l2_stats().read_aheads, 1);
    drop(s);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn admitted_data_is_written_back_and_found_after_l1_eviction() {
    let (path, backing) = file_backing("writeback");
    let mut s = store(backing, 12);
    for seg in 0..25 {
        s.insert(&chunk(seg, 1000).1, 0).unwrap();
    }
    // Batches 0 and 1 were complete and written; batch 2 (20..25) is still staged.
    assert_eq!(s.l2_stats().writes, 2);
    assert_eq!(tier(&mut s, 24), Some(Tier::L1));
    assert_eq!(tier(&mut s, 3), Some(Tier::L2), "evicted from L1, back from L2");
    assert_eq!(tier(&mut s, 4), Some(Tier::L1));
    for seg in 13..23 {
        let _ = tier(&mut s, seg);
    }
    // Chunk 20 may have left the L1; the staging buffer still answers.
    assert!(tier(&mut s, 21).is_some());
    drop(s);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn corrupt_l2_chunks_are_counted_and_never_served() {
    let mut s = store(Backing::Memory { tau_bits_per_s: None }, 30);
    for seg in 0..10 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    let key = nexthop_cs::BatchKey::of(chunk(0, 0).0.value(), 10).hash();
    let slot = s.l2_mut().unwrap().memory_slot_mut(key).unwrap();
    slot[3 * 4096 + 200] ^= 0xff; // payload of segment 3
    slot[7 * 4096 + 5] ^= 0x01; // header of segment 7
    assert_eq!(tier(&mut s, 0), Some(Tier::L2));
    assert_eq!(tier(&mut s, 3), None, "corrupt chunk not served");
    assert_eq!(tier(&mut s, 7), None, "corrupt chunk not served");
    assert_eq!(tier(&mut s, 9), Some(Tier::L1));
    assert_eq!(s.l2_stats().corrupt_chunks, 6, "two chunks, counted on each of the three batch reads");
}

#[test]
fn oversize_and_malformed_packets_change_nothing() {
    let mut s = store(Backing::Memory { tau_bits_per_s: None }, 30);
    let big = chunk(1, 5000).1;
    assert!(matches!(s.insert(&big, 0), Err(InsertError::TooLarge { max: 4096, .. })));
    assert!(matches!(s.insert_l2_only(&chunk(1, 4080).1, 0), Err(InsertError::TooLarge { max: 4064, .. })));
    assert!(matches!(s.insert(&[6, 0], 0), Err(InsertError::Malformed(_))));
    assert!(s.l1().is_empty());
    s.flush().unwrap();
    assert_eq!(s.l2().unwrap().batches(), 0);
}

/// Data larger than an SSD chunk slot but not than a DRAM slot is cached in DRAM only: served
/// from the L1 while it stays, never written to the L2, and counted.
#[test]
fn data_too_large_for_the_l2_is_kept_in_the_l1_only() {
    let mut s = store_cfg(Backing::Memory { tau_bits_per_s: None }, 30, false, false, 2048);
    let (big_name, big) = chunk(1, 3000);
    s.insert(&big, 0).unwrap();
    s.insert(&chunk(2, 1000).1, 0).unwrap();
    let served = s.lookup(&Request::exact(big_name.as_view()), 0).unwrap();
    assert_eq!((served.wire, served.tier), (big.as_slice(), Tier::L1));
    assert_eq!(s.stats().l1_only, 1);
    s.flush().unwrap();
    assert_eq!(s.l2().unwrap().batches(), 1, "the small chunk's batch only");
    // Once the L1 lets it go, it is gone: the L2 never had it; its small neighbour comes back.
    s.set_l1_limit(0);
    s.set_l1_limit(30);
    let (small_name, _) = chunk(2, 1000);
    assert_eq!(s.lookup(&Request::exact(small_name.as_view()), 0).map(|d| d.tier), Some(Tier::L2));
    assert!(s.lookup(&Request::exact(big_name.as_view()), 0).is_none());
}

#[test]
fn readmitting_one_chunk_keeps_the_rest_of_its_stored_batch() {
    let (path, backing) = file_backing("merge");
    let mut s = store(backing, 30);
    for seg in 0..10 {
        s.insert(&chunk(seg, 1000).1, 0).unwrap();
    }
    assert_eq!(s.l2_stats().writes, 1);
    s.insert(&chunk(3, 1000).1, 5).unwrap();
    s.flush().unwrap();
    let key = nexthop_cs::BatchKey::of(chunk(0, 0).0.value(), 10).hash();
    let stored = s.l2_mut().unwrap().read(key).unwrap().unwrap();
    assert_eq!(stored.iter().map(|c| c.position).collect::<Vec<_>>(), (0..10).collect::<Vec<u16>>());
    drop(s);
    std::fs::remove_file(path).unwrap();
}

/// Waits (a bounded time) until the store's background read of `batch` has been collected.
fn wait_for_read(s: &mut HierarchicalStore, batch: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.is_reading(batch) {
        s.poll_reads();
        assert!(std::time::Instant::now() < deadline, "the background read never finished");
        std::thread::yield_now();
    }
}

#[test]
fn a_lookup_without_waiting_reads_in_the_background_then_serves_from_the_l1() {
    for (tag, engine) in [("bg-uring", IoEngine::IoUring), ("bg-pread", IoEngine::Pread)] {
        let (path, backing) = file_backing_with(tag, engine);
        let mut s = store(backing, 30);
        for seg in 0..30 {
            s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
        }
        s.flush().unwrap();
        let (name, wire) = chunk(13, 1000);
        let req = Request::exact(name.as_view());
        if engine == IoEngine::IoUring {
            let Lookup::Reading(batch) = s.lookup_or_read(&req, 0) else { panic!("{tag}: an L2 batch is read in the background") };
            // A second request for the same batch joins the read in flight — or, if the read
            // has finished already (a fast device: CI once saw it), is served from the L1.
            let (other, _) = chunk(17, 1000);
            let joined = match s.lookup_or_read(&Request::exact(other.as_view()), 0) {
                Lookup::Reading(b) => {
                    assert_eq!(b, batch, "{tag}");
                    true
                }
                Lookup::Served(served) => {
                    assert_eq!(served.tier, Tier::L1, "{tag}: the finished read's batch");
                    false
                }
                Lookup::Miss => panic!("{tag}: a stored chunk missed"),
            };
            wait_for_read(&mut s, batch);
            let Lookup::Served(served) = s.lookup_or_read(&req, 0) else { panic!("{tag}: served once read") };
            assert_eq!((served.tier, served.wire), (Tier::L1, wire.as_slice()));
            assert_eq!((s.stats().reading, s.stats().background_reads), (1 + u64::from(joined), 1), "{tag}");
        } else {
            // pread has no background reads: the lookup reads and waits, as `lookup` does.
            let Lookup::Served(served) = s.lookup_or_read(&req, 0) else { panic!("{tag}: pread waits") };
            assert_eq!((served.tier, served.wire), (Tier::L2, wire.as_slice()));
            assert_eq!(s.stats().reading, 0);
        }
        // Not stored at all: a miss, no read.
        let (absent, _) = chunk(95, 1000);
        assert_eq!(s.lookup_or_read(&Request::exact(absent.as_view()), 0), Lookup::Miss);
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn a_background_read_of_a_replaced_batch_ends_and_the_lookup_reads_again() {
    let (path, backing) = file_backing_with("bg-replaced", IoEngine::IoUring);
    let mut s = store(backing, 30);
    for seg in 0..10 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    let (name, wire) = chunk(4, 1000);
    let req = Request::exact(name.as_view());
    let Lookup::Reading(batch) = s.lookup_or_read(&req, 0) else { panic!("read in the background") };
    // The batch is written again (the write waits for the read of its slot): the read in flight
    // no longer stands for it, so it is not reading, and the next lookup reads afresh.
    for seg in 0..10 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    wait_for_read(&mut s, batch);
    match s.lookup_or_read(&req, 0) {
        Lookup::Served(served) => assert_eq!(served.wire, wire.as_slice()),
        Lookup::Reading(b) => {
            wait_for_read(&mut s, b);
            let Lookup::Served(served) = s.lookup_or_read(&req, 0) else { panic!("served once read") };
            assert_eq!(served.wire, wire.as_slice());
        }
        Lookup::Miss => panic!("the batch is stored"),
    }
    let _ = std::fs::remove_file(path);
}

#[test]
fn two_streams_of_one_content_are_each_read_ahead() {
    let (path, backing) = file_backing_with("ahead-two", IoEngine::IoUring);
    let mut s = store_with(backing, 100, true);
    for seg in 0..200 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    // Two viewers of one content, at segments 0… and 100…, their requests interleaved.
    for i in 0..5 {
        assert!(tier(&mut s, i).is_some());
        assert!(tier(&mut s, 100 + i).is_some());
    }
    // Each stream's second request read its next four batches: 1–4 and 11–14.
    assert_eq!(s.l2_stats().read_aheads, 8, "{:?}", s.l2_stats());
    drop(s);
    std::fs::remove_file(path).unwrap();
}

/// The answer to a lookup without waiting for segment `seg`, once any background read it
/// started is done: the tier it came from and whether it had to be read.
fn read_then_serve(s: &mut HierarchicalStore, seg: u64) -> (Tier, bool) {
    let (name, wire) = chunk(seg, 1000);
    let req = Request::exact(name.as_view());
    let mut read = false;
    for _ in 0..3 {
        match s.lookup_or_read(&req, 0) {
            Lookup::Served(served) => {
                assert_eq!(served.wire, wire.as_slice(), "seg {seg}");
                return (served.tier, read);
            }
            Lookup::Reading(batch) => {
                read = true;
                wait_for_read(s, batch);
            }
            Lookup::Miss => panic!("seg {seg} is stored"),
        }
    }
    panic!("seg {seg} never served");
}

#[test]
fn requests_in_no_order_read_only_their_chunk_and_a_stream_its_whole_batch() {
    for (tag, backing) in
        [("chunk-file", file_backing_with("chunk-file", IoEngine::IoUring).1), ("chunk-mem", Backing::Memory { tau_bits_per_s: None })]
    {
        let mut s = store_cfg(backing.clone(), 100, false, true, 4096);
        for seg in 0..100 {
            s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
        }
        s.flush().unwrap();
        // Segment 13 alone: only its 4096-byte slot is read.
        assert_eq!(read_then_serve(&mut s, 13), (Tier::L1, true), "{tag}");
        assert_eq!((s.l2_stats().chunk_reads, s.l2_stats().read_bytes), (1, 4096), "{tag}");
        // 15, another chunk of that batch, was not read with it.
        assert_eq!(read_then_serve(&mut s, 15), (Tier::L1, true), "{tag}");
        assert_eq!((s.l2_stats().chunk_reads, s.l2_stats().read_bytes), (2, 8192), "{tag}");
        // 16 follows 15: a stream, whose whole batch is read (so 17–19 are in the L1).
        assert_eq!(read_then_serve(&mut s, 16), (Tier::L1, true), "{tag}");
        assert_eq!((s.l2_stats().chunk_reads, s.l2_stats().read_bytes), (2, 8192 + 40960), "{tag}");
        for seg in 17..20 {
            assert_eq!(read_then_serve(&mut s, seg), (Tier::L1, false), "{tag}: seg {seg}");
        }
        // A waiting lookup of another chunk of a batch whose chunk read is in flight (not yet
        // collected) finishes that read, finds it did not bring its chunk, and reads the batch.
        let (a, _) = chunk(41, 1000);
        let (b, b_wire) = chunk(47, 1000);
        assert!(matches!(s.lookup_or_read(&Request::exact(a.as_view()), 0), Lookup::Reading(_)), "{tag}: 41 is read");
        let served = s.lookup(&Request::exact(b.as_view()), 0).expect("47 is stored");
        assert_eq!((served.tier, served.wire), (Tier::L2, b_wire.as_slice()), "{tag}");
        assert_eq!(read_then_serve(&mut s, 41), (Tier::L1, false), "{tag}");
        if let Backing::File(FileConfig { path, .. }) = backing {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[test]
fn a_chunk_read_brings_the_whole_block_around_a_small_slot() {
    let (path, backing) = file_backing_with("chunk-small", IoEngine::IoUring);
    // 2048-byte slots: two to a 4096-byte block.
    let mut s = store_cfg(backing, 100, false, true, 2048);
    for seg in 0..30 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    assert_eq!(read_then_serve(&mut s, 13), (Tier::L1, true));
    assert_eq!(s.l2_stats().read_bytes, 4096);
    // 12 shares 13's block; 14 does not.
    assert_eq!(read_then_serve(&mut s, 12), (Tier::L1, false));
    assert_eq!(read_then_serve(&mut s, 25), (Tier::L1, true));
    assert_eq!(read_then_serve(&mut s, 24), (Tier::L1, false));
    assert_eq!(s.l2_stats().chunk_reads, 2);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_stream_beside_a_chunk_read_reads_its_batch_at_once_and_lately_means_recent() {
    let (path, backing) = file_backing_with("chunk-beside", IoEngine::IoUring);
    let mut s = store_cfg(backing, 100, false, true, 4096);
    for seg in 0..200 {
        s.insert_l2_only(&chunk(seg, 1000).1, 0).unwrap();
    }
    s.flush().unwrap();
    // 20 (a batch's first, in no order) starts a chunk read; 21 follows it, so the whole batch
    // is read beside that read instead of after it; both are parked on the batch.
    let (a, _) = chunk(20, 1000);
    let (b, _) = chunk(21, 1000);
    let Lookup::Reading(batch) = s.lookup_or_read(&Request::exact(a.as_view()), 0) else { panic!("20 is read") };
    assert_eq!(s.lookup_or_read(&Request::exact(b.as_view()), 0), Lookup::Reading(batch));
    assert_eq!((s.stats().background_reads, s.l2_stats().chunk_reads), (2, 1));
    wait_for_read(&mut s, batch);
    for seg in 20..30 {
        assert_eq!(read_then_serve(&mut s, seg), (Tier::L1, false), "seg {seg}");
    }
    // A predecessor asked more than 4096 requests ago is not "lately": 101 after 100 is then
    // in no order, and reads only its chunk.
    assert_eq!(read_then_serve(&mut s, 100), (Tier::L1, true));
    let (other, _) = chunk(20, 1000);
    for _ in 0..4096 {
        let _ = s.lookup_or_read(&Request::exact(other.as_view()), 0);
    }
    let before = s.l2_stats().chunk_reads;
    assert_eq!(read_then_serve(&mut s, 101), (Tier::L1, true));
    assert_eq!(s.l2_stats().chunk_reads, before + 1);
    std::fs::remove_file(path).unwrap();
}

/// Segment `seg` of content `/<content>/v=1`, its payload bytes all `fill`.
fn chunk_of(content: &str, seg: u64, fill: u8) -> (Name, Vec<u8>) {
    let name = Name::from_uri(&format!("/{content}/v=1")).unwrap().with(Component::segment(seg));
    let mut d = Data::new(name.clone(), vec![fill; 1000]);
    d.sign_digest_sha256();
    (name, d.to_bytes())
}

/// The payload byte of what the store serves for that segment, if anything.
fn served_fill(s: &mut HierarchicalStore, content: &str, seg: u64) -> Option<u8> {
    let (name, _) = chunk_of(content, seg, 0);
    let served = s.lookup(&Request::exact(name.as_view()), 0)?;
    let data = nexthop_wire::DataView::decode(served.wire).unwrap();
    data.content()?.first().copied()
}

#[test]
fn an_erase_that_empties_the_l1_of_a_prefix_erases_it_from_the_l2_too() {
    let (path, backing) = file_backing("erase");
    let mut s = store(backing, 12);
    for seg in 0..25 {
        s.insert(&chunk_of("c", seg, 1).1, 0).unwrap();
    }
    for seg in 0..10 {
        s.insert(&chunk_of("d", seg, 1).1, 0).unwrap();
    }
    // The L1 (12, FIFO) holds /c 23 and 24 and /d 0..9; /c batches 0 and 1 are on the L2,
    // batch 2 (20..24) is staged, and so is /d's batch 0 (complete: written).
    let c = Name::from_uri("/c").unwrap();
    assert_eq!(s.erase_prefix(c.value(), 1), (1, true), "stops at its count");
    assert_eq!(served_fill(&mut s, "c", 3), Some(1), "an erase stopped by its count leaves the L2");
    // That read brought /c batch 0 back into the L1, evicting the oldest nine: the other /c
    // packet and /d 0..7 (on the L2: /d's one batch was complete, so written).
    assert_eq!(s.erase_prefix(c.value(), 256), (10, false));
    for seg in 0..25 {
        assert_eq!(served_fill(&mut s, "c", seg), None, "segment {seg} erased from every tier");
    }
    assert!(s.l2_stats().erased_chunks >= 10, "the L2's chunks were read and skipped");
    for seg in 0..10 {
        assert_eq!(served_fill(&mut s, "d", seg), Some(1), "another prefix keeps its packets");
    }
    assert_eq!(s.l2().unwrap().pending_erases(), 1);
    // New packets under the erased prefix are stored and served, from the L2 too.
    for seg in 0..10 {
        s.insert(&chunk_of("c", seg, 2).1, 0).unwrap();
    }
    for seg in 0..12 {
        s.insert(&chunk_of("e", seg, 3).1, 0).unwrap();
    }
    s.flush().unwrap();
    assert_eq!(served_fill(&mut s, "c", 5), Some(2), "written after the erase");
    assert_eq!(served_fill(&mut s, "c", 15), None);
    drop(s);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_limit_of_zero_stores_nothing_in_either_tier() {
    let mut s = store(Backing::Memory { tau_bits_per_s: None }, 30);
    assert_eq!(s.set_l1_limit(0), 0);
    for seg in 0..10 {
        s.insert(&chunk_of("z", seg, 1).1, 0).unwrap();
    }
    s.flush().unwrap();
    assert!(s.l1().is_empty());
    assert_eq!(s.l2().unwrap().batches(), 0);
    assert_eq!(s.set_l1_limit(1000), 30, "no more than the L1's slots");
}

/// A store (in memory, 30 DRAM slots) whose L2 holds one batch: segments 0–9 of `content`, none
/// in the DRAM tier.
fn with_batch_on_l2(content: &str) -> HierarchicalStore {
    let mut s = store(Backing::Memory { tau_bits_per_s: None }, 30);
    for seg in 0..10 {
        s.insert_l2_only(&chunk_of(content, seg, 1).1, 0).unwrap();
    }
    s.flush().unwrap();
    s
}

#[test]
fn too_many_pending_erases_empty_the_l2() {
    let mut s = with_batch_on_l2("kept");
    let max = nexthop_cs::l2::erased::MAX_MARKS;
    for i in 0..max {
        s.erase_prefix(Name::from_uri(&format!("/other/{i}")).unwrap().value(), 256);
    }
    assert_eq!(s.l2().unwrap().pending_erases(), max);
    assert_eq!(served_fill(&mut s, "kept", 4), Some(1), "marks of other prefixes hide nothing");
    s.erase_prefix(Name::from_uri("/other/last").unwrap().value(), 256);
    assert_eq!(s.l2().unwrap().batches(), 0, "emptied instead of a mark more");
    assert_eq!((s.l2().unwrap().pending_erases(), s.l2_stats().erase_clears), (0, 1));
}

#[test]
fn an_erase_of_nothing_erases_nothing_even_on_the_l2() {
    let mut s = with_batch_on_l2("z");
    assert_eq!(s.erase_prefix(Name::from_uri("/z").unwrap().value(), 0), (0, false));
    assert_eq!(s.l2().unwrap().pending_erases(), 0);
    assert_eq!(served_fill(&mut s, "z", 3), Some(1));
}
