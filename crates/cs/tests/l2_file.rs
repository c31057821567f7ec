//! The L2 on real files: both I/O engines, O_DIRECT, slot reuse, and the faults a disk brings
//! (flipped bytes, a missing or short file, a filesystem without O_DIRECT).

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use nexthop_cs::l2::{Backing, DirectIo, FileConfig, IoEngine, L2Config, SlotReuse, L2};
use nexthop_cs::{BatchKey, L2Error};
use nexthop_wire::{Component, Data, Emit, Name};

fn temp_path(tag: &str) -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
    dir.join(format!("nexthop-l2-{tag}-{}", std::process::id()))
}

fn chunk(content: &str, seg: u64) -> Vec<u8> {
    let mut d = Data::new(Name::from_uri(content).unwrap().with(Component::segment(seg)), vec![seg as u8; 3000]);
    d.sign_digest_sha256();
    d.to_bytes()
}

fn file_config(path: PathBuf, engine: IoEngine, reuse: SlotReuse, batches: u64) -> L2Config {
    let backing = Backing::File(FileConfig { path, create: true, direct: DirectIo::Preferred, engine });
    let mut cfg = L2Config::new(0, backing);
    cfg.batch_chunks = 4;
    cfg.chunk_slot_bytes = 4096;
    cfg.capacity_bytes = batches * cfg.batch_bytes() as u64;
    cfg.reuse = reuse;
    cfg
}

/// Writes batch `batch` of `/c` (positions 0..4) and returns its key.
fn write_batch(l2: &mut L2, batch: u64) -> u64 {
    let first = chunk("/c", batch * 4);
    let key = BatchKey::of(nexthop_wire::DataView::decode(&first).unwrap().name().value(), 4).hash();
    let mut b = l2.batch_buf(key);
    for p in 0..4 {
        b.put(p as u32, 1000 + p, &chunk("/c", batch * 4 + p)).unwrap();
    }
    assert!(b.is_full());
    l2.write(&b).unwrap();
    key
}

#[test]
fn batches_round_trip_with_both_engines() {
    for engine in [IoEngine::Auto, IoEngine::Pread] {
        let path = temp_path(&format!("rt-{engine:?}"));
        let mut l2 = L2::open(file_config(path.clone(), engine, SlotReuse::Fifo, 8)).unwrap();
        if engine == IoEngine::Pread {
            assert!(l2.describe().starts_with("file pread"), "{}", l2.describe());
        }
        eprintln!("{engine:?}: {}", l2.describe());
        let keys: Vec<u64> = (0..8).map(|b| write_batch(&mut l2, b)).collect();
        for (b, &key) in keys.iter().enumerate() {
            let read = l2.read(key).unwrap().expect("stored");
            let got: Vec<_> = read.iter().map(|c| (c.position, c.fresh_until_ms, c.wire.to_vec())).collect();
            let want: Vec<_> = (0..4u64).map(|p| (p as u16, 1000 + p, chunk("/c", b as u64 * 4 + p))).collect();
            assert_eq!(got, want, "{engine:?} batch {b}: {}", l2.describe());
        }
        assert_eq!(l2.stats().corrupt_chunks, 0);
        assert!(l2.read(12345).unwrap().is_none());
        drop(l2);
        std::fs::remove_file(path).unwrap();
    }
}

#[test]
fn fifo_and_clock_reuse() {
    for reuse in [SlotReuse::Fifo, SlotReuse::Clock] {
        let path = temp_path(&format!("reuse-{reuse:?}"));
        let mut l2 = L2::open(file_config(path.clone(), IoEngine::Auto, reuse, 3)).unwrap();
        let k: Vec<u64> = (0..3).map(|b| write_batch(&mut l2, b)).collect();
        assert!(l2.read(k[0]).unwrap().is_some(), "batch 0 read: CLOCK gives it a second chance");
        let k3 = write_batch(&mut l2, 3);
        assert!(l2.contains(k3));
        match reuse {
            SlotReuse::Fifo => assert!(!l2.contains(k[0]) && l2.contains(k[1])),
            SlotReuse::Clock => assert!(l2.contains(k[0]) && !l2.contains(k[1])),
        }
        assert_eq!(l2.batches(), 3);
        assert_eq!(l2.stats().replaced, 1);
        drop(l2);
        std::fs::remove_file(path).unwrap();
    }
}

#[test]
fn flipped_bytes_are_detected_counted_and_not_served() {
    let path = temp_path("flip");
    let mut l2 = L2::open(file_config(path.clone(), IoEngine::Auto, SlotReuse::Fifo, 4)).unwrap();
    let key = write_batch(&mut l2, 0);
    l2.sync().unwrap();
    let offset = l2.file_offset(key).unwrap();
    // Flip one byte in the payload of position 1 and one in the header of position 3.
    let f = OpenOptions::new().read(true).write(true).open(&path).unwrap();
    for at in [offset + 4096 + 500, offset + 3 * 4096 + 10] {
        let mut b = [0u8];
        f.read_exact_at(&mut b, at).unwrap();
        f.write_all_at(&[b[0] ^ 0x20], at).unwrap();
    }
    f.sync_all().unwrap();
    let read = l2.read(key).unwrap().unwrap();
    let positions: Vec<u16> = read.iter().map(|c| c.position).collect();
    assert_eq!(positions, vec![0, 2]);
    assert_eq!(l2.stats().corrupt_chunks, 2);
    drop(l2);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn start_up_errors_are_clear() {
    let path = temp_path("missing");
    let mut cfg = file_config(path.clone(), IoEngine::Auto, SlotReuse::Fifo, 4);
    if let Backing::File(f) = &mut cfg.backing {
        f.create = false;
    }
    assert!(matches!(L2::open(cfg.clone()), Err(L2Error::Missing(_))));
    std::fs::write(&path, [0u8; 4096]).unwrap();
    let err = L2::open(cfg.clone()).unwrap_err();
    assert!(matches!(err, L2Error::TooSmall { actual: 4096, .. }), "{err}");
    assert!(err.to_string().contains("4096"));
    std::fs::remove_file(&path).unwrap();
    let mut bad = cfg.clone();
    bad.chunk_slot_bytes = nexthop_cs::l2::HEADER_BYTES as u32;
    assert!(matches!(L2::open(bad), Err(L2Error::Config(e)) if e.contains("header")));
    let mut empty = cfg;
    empty.capacity_bytes = 100;
    assert!(matches!(L2::open(empty), Err(L2Error::Config(_))));
}

/// tmpfs refused O_DIRECT before Linux 6.6; either way the configured policy holds.
#[test]
fn direct_io_policy_on_tmpfs() {
    let shm = PathBuf::from("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let path = shm.join(format!("nexthop-l2-direct-{}", std::process::id()));
    let mut cfg = file_config(path.clone(), IoEngine::Auto, SlotReuse::Fifo, 2);
    if let Backing::File(f) = &mut cfg.backing {
        f.direct = DirectIo::Required;
    }
    match L2::open(cfg.clone()) {
        Ok(l2) => assert!(l2.describe().contains("O_DIRECT")),
        Err(e) => assert!(matches!(e, L2Error::NoDirectIo(_)), "{e}"),
    }
    if let Backing::File(f) = &mut cfg.backing {
        f.direct = DirectIo::Preferred;
    }
    let mut l2 = L2::open(cfg).unwrap();
    let key = write_batch(&mut l2, 0);
    assert_eq!(l2.read(key).unwrap().unwrap().len(), 4);
    drop(l2);
    let _ = std::fs::remove_file(path);
}

/// (position, freshness, wire) of every chunk `f` is handed.
type Chunks = Vec<(u16, u64, Vec<u8>)>;

fn want_batch(batch: u64) -> Chunks {
    (0..4u64).map(|p| (p as u16, 1000 + p, chunk("/c", batch * 4 + p))).collect()
}

#[test]
fn read_ahead_returns_what_a_read_returns() {
    let path = temp_path("ahead");
    let mut l2 = L2::open(file_config(path.clone(), IoEngine::IoUring, SlotReuse::Fifo, 8)).unwrap();
    let keys: Vec<u64> = (0..8).map(|b| write_batch(&mut l2, b)).collect();
    l2.sync().unwrap();
    // Waited for by key.
    assert!(l2.start_read_ahead(keys[1]).unwrap());
    assert!(l2.is_reading_ahead(keys[1]));
    assert!(!l2.start_read_ahead(keys[1]).unwrap(), "one read-ahead per batch");
    let mut got = Chunks::new();
    assert!(l2.finish_read_ahead(keys[1], &mut |c| got.push((c.position, c.fresh_until_ms, c.wire.to_vec()))).unwrap());
    assert_eq!(got, want_batch(1));
    assert!(!l2.is_reading_ahead(keys[1]));
    // Collected when finished: every buffer's worth, then one more once a buffer is free.
    let started: Vec<usize> = (0..8).filter(|&b| l2.start_read_ahead(keys[b]).unwrap()).collect();
    assert_eq!(started.len(), nexthop_cs::l2::READ_AHEAD_BUFFERS.min(8));
    l2.sync().unwrap();
    let mut batches = Vec::new();
    assert_eq!(l2.collect_read_aheads(&mut |c| batches.push((c.position, c.wire.to_vec()))), started.len());
    assert_eq!(batches.len(), 4 * started.len());
    for b in started {
        assert!(batches.contains(&(2, chunk("/c", b as u64 * 4 + 2))));
    }
    assert!(!l2.start_read_ahead(12345).unwrap(), "not stored");
    let s = l2.stats();
    assert_eq!((s.read_aheads, s.read_aheads_stale, s.corrupt_chunks, s.read_errors), (9, 0, 0, 0));
    drop(l2);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_chunk_read_brings_one_chunk_and_a_whole_read_can_run_beside_it() {
    let path = temp_path("ahead-chunk");
    let mut l2 = L2::open(file_config(path.clone(), IoEngine::IoUring, SlotReuse::Fifo, 4)).unwrap();
    let k0 = write_batch(&mut l2, 0);
    let k1 = write_batch(&mut l2, 1);
    l2.sync().unwrap();
    assert!(l2.start_chunk_read(k0, 2).unwrap());
    assert!(l2.read_ahead_covers(k0, 2) && !l2.read_ahead_covers(k0, 1));
    assert!(!l2.start_chunk_read(k0, 2).unwrap(), "already coming");
    // The whole batch is not: it is read beside the chunk, and waiting finishes both.
    assert!(l2.start_read_ahead(k0).unwrap());
    assert!(l2.read_ahead_covers(k0, 1));
    let mut got = Chunks::new();
    assert!(l2.finish_read_ahead(k0, &mut |c| got.push((c.position, c.fresh_until_ms, c.wire.to_vec()))).unwrap());
    got.sort();
    let want = want_batch(0);
    assert_eq!(got, [&want[..2], &want[2..3], &want[2..]].concat(), "chunk 2 from both reads, the rest from the whole one");
    assert!(!l2.is_reading_ahead(k0));
    // A chunk read collected in the background hands over that chunk alone.
    assert!(l2.start_chunk_read(k1, 3).unwrap());
    l2.sync().unwrap();
    let mut handed = Chunks::new();
    assert_eq!(l2.collect_read_aheads(&mut |c| handed.push((c.position, c.fresh_until_ms, c.wire.to_vec()))), 1);
    assert_eq!(handed, want_batch(1)[3..]);
    let s = l2.stats();
    assert_eq!((s.read_aheads, s.chunk_reads, s.read_bytes), (3, 2, 4096 + 16384 + 4096));
    // Rewriting a batch with two reads in flight drops both.
    assert!(l2.start_chunk_read(k1, 0).unwrap() && l2.start_read_ahead(k1).unwrap());
    let _ = write_batch(&mut l2, 1);
    assert!(!l2.is_reading_ahead(k1));
    l2.sync().unwrap();
    assert_eq!(l2.collect_read_aheads(&mut |_| panic!("a stale read is not handed over")), 2);
    assert_eq!(l2.stats().read_aheads_stale, 2);
    drop(l2);
    std::fs::remove_file(path).unwrap();
}

/// Chunk slots of any size: a batch slot is padded to whole blocks, and a chunk read brings
/// the blocks its slot straddles.
#[test]
fn slots_that_do_not_divide_blocks_round_trip() {
    for engine in [IoEngine::IoUring, IoEngine::Pread] {
        let path = temp_path(&format!("odd-{engine:?}"));
        let mut cfg = file_config(path.clone(), engine, SlotReuse::Fifo, 0);
        cfg.chunk_slot_bytes = 3200; // 4 × 3200 = 12,800 bytes: a 16,384-byte batch slot
        assert_eq!(cfg.batch_bytes(), 16384);
        cfg.capacity_bytes = 5 * cfg.batch_bytes() as u64;
        let mut l2 = L2::open(cfg).unwrap();
        let keys: Vec<u64> = (0..5).map(|b| write_batch(&mut l2, b)).collect();
        for (b, &key) in keys.iter().enumerate() {
            let got: Chunks =
                l2.read(key).unwrap().expect("stored").iter().map(|c| (c.position, c.fresh_until_ms, c.wire.to_vec())).collect();
            assert_eq!(got, want_batch(b as u64), "{engine:?} batch {b}");
        }
        if engine == IoEngine::IoUring {
            // Chunk 2 lies in bytes 6,400..9,600: the blocks 4,096..12,288.
            l2.sync().unwrap();
            let before = l2.stats().read_bytes;
            assert!(l2.start_chunk_read(keys[3], 2).unwrap());
            let mut got = Chunks::new();
            assert!(l2.finish_read_ahead(keys[3], &mut |c| got.push((c.position, c.fresh_until_ms, c.wire.to_vec()))).unwrap());
            assert_eq!(got, want_batch(3)[2..3]);
            assert_eq!(l2.stats().read_bytes - before, 8192);
        }
        assert_eq!(l2.stats().corrupt_chunks, 0);
        drop(l2);
        std::fs::remove_file(path).unwrap();
    }
}

#[test]
fn a_read_ahead_of_a_replaced_batch_is_dropped() {
    let path = temp_path("ahead-stale");
    let mut l2 = L2::open(file_config(path.clone(), IoEngine::IoUring, SlotReuse::Fifo, 2)).unwrap();
    let k0 = write_batch(&mut l2, 0);
    let _k1 = write_batch(&mut l2, 1);
    l2.sync().unwrap(); // No read-ahead starts while a write to its slot is in flight.
    assert!(l2.start_read_ahead(k0).unwrap());
    // Batch 2 takes batch 0's slot (FIFO): its write waits for the read, which read batch 0.
    let _k2 = write_batch(&mut l2, 2);
    assert!(!l2.contains(k0));
    l2.sync().unwrap();
    let mut handed = 0;
    assert_eq!(l2.collect_read_aheads(&mut |_| handed += 1), 1);
    assert_eq!(handed, 0);
    assert_eq!(l2.stats().read_aheads_stale, 1);
    drop(l2);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn there_is_no_read_ahead_with_pread() {
    let path = temp_path("ahead-pread");
    let mut l2 = L2::open(file_config(path.clone(), IoEngine::Pread, SlotReuse::Fifo, 2)).unwrap();
    let k0 = write_batch(&mut l2, 0);
    assert!(!l2.start_read_ahead(k0).unwrap());
    assert!(!l2.is_reading_ahead(k0));
    assert_eq!(l2.read(k0).unwrap().unwrap().len(), 4);
    drop(l2);
    std::fs::remove_file(path).unwrap();
}
