//! The analytical model against the hierarchical store it models: measured L1 hit ratios on the
//! paper's Unif and Real workloads stay within the paper's error of Che's approximation and
//! equations (2) and (4) across L1 sizes.

use nexthop_cs::l2::Backing;
use nexthop_cs::model::{real_hit_ratio, unif_hit_ratio, CacheKind};
use nexthop_cs::{HcsConfig, HierarchicalStore, L1Config, L2Config, Policy, Request};
use nexthop_lab::workload::chunks::{chunk_data, chunk_name, ChunkWorkload, Pattern};

const B: u32 = 8;
const SLOT: u32 = 512;

/// Measured L1 hit ratio after the paper's 10·|L1| warm-up, over |C| requests.
fn measured(w: &ChunkWorkload, l1_chunks: u32) -> f64 {
    let mut l2 = L2Config::new(0, Backing::Memory { tau_bits_per_s: None });
    l2.batch_chunks = B;
    l2.chunk_slot_bytes = SLOT;
    l2.capacity_bytes = w.catalogue().div_ceil(u64::from(B)) * u64::from(B * SLOT);
    let l1 = L1Config { capacity: l1_chunks, slot_bytes: SLOT, policy: Policy::Fifo, prefix_index: false };
    let mut store =
        HierarchicalStore::new(HcsConfig { l1, l2: Some(l2), staging_batches: 4, read_ahead: false, chunk_reads: false }).unwrap();
    for c in 0..w.contents {
        for k in 0..w.chunks_per_content {
            store.insert_l2_only(&chunk_data(c, k, 200), 0).unwrap();
        }
    }
    store.flush().unwrap();
    let warmup = 10 * l1_chunks as usize;
    let requests = w.requests(warmup + w.catalogue() as usize);
    let mut hits_at_warmup = 0;
    for (i, r) in requests.iter().enumerate() {
        if i == warmup {
            hits_at_warmup = store.stats().l1_hits;
        }
        let name = chunk_name(r.content, r.chunk);
        assert!(store.lookup(&Request::exact(name.as_view()), 0).is_some(), "the L2 holds the catalogue");
    }
    (store.stats().l1_hits - hits_at_warmup) as f64 / (requests.len() - warmup) as f64
}

fn rmse(pairs: &[(f64, f64)]) -> f64 {
    (pairs.iter().map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / pairs.len() as f64).sqrt()
}

#[test]
fn measured_l1_hit_ratio_matches_the_model() {
    let contents = 24;
    let real = ChunkWorkload { chunks_per_content: 320, ..ChunkWorkload::paper(Pattern::Real, contents, 7) };
    let unif = ChunkWorkload { pattern: Pattern::Unif, ..real.clone() };
    let catalogue = real.catalogue() as f64;
    let mut real_pairs = Vec::new();
    let mut unif_pairs = Vec::new();
    for fraction in [1.0 / 16.0, 1.0 / 8.0, 1.0 / 4.0, 1.0 / 2.0] {
        let l1 = (catalogue * fraction) as u32;
        let model = real_hit_ratio(&real.content_rates(), (real.chunks_per_content / B) as usize, f64::from(l1), B, CacheKind::Fifo);
        real_pairs.push((measured(&real, l1), model));
        unif_pairs.push((measured(&unif, l1), unif_hit_ratio(f64::from(l1), catalogue)));
    }
    assert!(rmse(&real_pairs) <= 0.02, "Real: {real_pairs:?}");
    assert!(rmse(&unif_pairs) <= 0.02, "Unif: {unif_pairs:?}");
    // The model is not trivially satisfied: hit ratios move with the L1 size.
    assert!(real_pairs[3].0 > real_pairs[0].0 + 0.01 && unif_pairs[3].0 > unif_pairs[0].0 + 0.3);
}
