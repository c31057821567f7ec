//! The analytical L1 hit-ratio model of the paper (section 4.3.1).
//!
//! - **Che's approximation** under the independent reference model: item m is requested as a
//!   Poisson process of rate λ_m; a cache of C items behaves as if every item stayed for a
//!   characteristic time T, the one solution of Σ_m p_m(T) = C, where p_m(T) is
//!   1 − e^{−λ_m T} for LRU and λ_m T / (1 + λ_m T) for FIFO and RANDOM (the paper's equation (6),
//!   after Martina et al.). The hit ratio is Σ λ_m p_m(T) / Σ λ_m (equation (5), normalised).
//!   T is found by bisection to relative precision 1e-12.
//! - The paper's workload equations: Unif (2) = |L1|/|C|; Seq (3) = 1 − 1/B (1 when the whole
//!   catalogue fits); Real (4) = 1 − (1 − P1st)/B, where P1st is Che's hit ratio of the first chunk
//!   of a batch, the items being batches (a content's batches are each requested at the rate the
//!   content is) and the capacity |L1|/B batches.

/// Which replacement the model assumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    /// Least recently used.
    Lru,
    /// FIFO (and RANDOM, which has the same approximation).
    Fifo,
}

fn occupancy(kind: CacheKind, rate: f64, t: f64) -> f64 {
    let x = rate * t;
    match kind {
        CacheKind::Lru => -(-x).exp_m1(),
        CacheKind::Fifo => x / (1.0 + x),
    }
}

/// Che's characteristic time T for items requested at `rates` in a cache of `capacity` items;
/// `f64::INFINITY` when everything requested fits.
pub fn characteristic_time(rates: &[f64], capacity: f64, kind: CacheKind) -> f64 {
    let requested = rates.iter().filter(|&&r| r > 0.0).count() as f64;
    if capacity >= requested {
        return f64::INFINITY;
    }
    if capacity <= 0.0 {
        return 0.0;
    }
    let filled = |t: f64| rates.iter().map(|&r| occupancy(kind, r, t)).sum::<f64>();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while filled(hi) < capacity {
        lo = hi;
        hi *= 2.0;
    }
    while (hi - lo) > hi * 1e-12 {
        let mid = 0.5 * (lo + hi);
        if filled(mid) < capacity {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Che's hit ratio for items requested at `rates` in a cache of `capacity` items.
pub fn che_hit_ratio(rates: &[f64], capacity: f64, kind: CacheKind) -> f64 {
    let total: f64 = rates.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let t = characteristic_time(rates, capacity, kind);
    if t.is_infinite() {
        return 1.0;
    }
    rates.iter().map(|&r| r * occupancy(kind, r, t)).sum::<f64>() / total
}

/// Equation (2): uniform requests over a catalogue of `catalogue` chunks.
pub fn unif_hit_ratio(l1_chunks: f64, catalogue: f64) -> f64 {
    (l1_chunks / catalogue).clamp(0.0, 1.0)
}

/// Equation (3): every content read in sequence, batches of `batch` chunks.
pub fn seq_hit_ratio(l1_chunks: f64, catalogue: f64, batch: u32) -> f64 {
    if l1_chunks >= catalogue {
        1.0
    } else {
        1.0 - 1.0 / f64::from(batch.max(1))
    }
}

/// Equation (4) with (5)–(6): the Real workload. `content_rates[c]` is the rate at which streams
/// of content c start; every content has `batches_per_content` batches of `batch` chunks.
pub fn real_hit_ratio(content_rates: &[f64], batches_per_content: usize, l1_chunks: f64, batch: u32, kind: CacheKind) -> f64 {
    let b = f64::from(batch.max(1));
    let rates: Vec<f64> = content_rates.iter().flat_map(|&r| std::iter::repeat_n(r, batches_per_content)).collect();
    let first = che_hit_ratio(&rates, l1_chunks / b, kind);
    1.0 - (1.0 - first) / b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_rates_give_the_cached_fraction() {
        // With equal rates every policy holds C of N items: hit ratio C/N.
        let rates = vec![1.0; 1000];
        for kind in [CacheKind::Lru, CacheKind::Fifo] {
            let h = che_hit_ratio(&rates, 250.0, kind);
            assert!((h - 0.25).abs() < 1e-9, "{kind:?} {h}");
        }
        assert_eq!(che_hit_ratio(&rates, 2000.0, CacheKind::Lru), 1.0);
        assert_eq!(che_hit_ratio(&rates, 0.0, CacheKind::Lru), 0.0);
    }

    #[test]
    fn skew_helps_and_lru_beats_fifo() {
        let zipf: Vec<f64> = (1..=10_000).map(|k| 1.0 / f64::from(k)).collect();
        let lru = che_hit_ratio(&zipf, 100.0, CacheKind::Lru);
        let fifo = che_hit_ratio(&zipf, 100.0, CacheKind::Fifo);
        assert!(lru > 0.3 && lru < 0.6, "{lru}");
        assert!(fifo < lru && fifo > 0.2, "{fifo}");
        let t = characteristic_time(&zipf, 100.0, CacheKind::Lru);
        let filled: f64 = zipf.iter().map(|&r| -(-r * t).exp_m1()).sum();
        assert!((filled - 100.0).abs() < 1e-6);
    }

    #[test]
    fn workload_equations() {
        assert_eq!(unif_hit_ratio(10.0, 100.0), 0.1);
        assert_eq!(seq_hit_ratio(10.0, 100.0, 10), 0.9);
        assert_eq!(seq_hit_ratio(100.0, 100.0, 10), 1.0);
        let h = real_hit_ratio(&[1.0, 1.0], 5, 1000.0, 10, CacheKind::Fifo);
        assert_eq!(h, 1.0);
        let h = real_hit_ratio(&[1.0; 10], 10, 0.0, 10, CacheKind::Fifo);
        assert!((h - 0.9).abs() < 1e-12);
    }
}
