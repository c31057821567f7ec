//! DP-CPE (the paper's section 4.2): choose n expansion levels for an IPv6 table so that
//! expanding every prefix to the next level at or above its length makes as few prefixes as
//! possible. /64 is always a level (every prefix of up to 64 bits can be expanded to it).
//!
//! The cost of levels L is Σ_l c_l · 2^(q(l) − l), where c_l counts prefixes of length l and q(l)
//! is the smallest level ≥ l — the paper's cost function, which ignores prefix capture and so
//! over-estimates (the paper's Table 4 shows estimate and actual side by side). The paper grows
//! the level set one greedy choice at a time; here a dynamic program over (levels used, highest
//! level) finds the set of exactly n levels that minimises the cost: best[j][b] is the cheapest
//! way to cover lengths 1..=b with j levels the highest of which is b, and
//! best[j][b] = min over a < b of best[j−1][a] + cost(a, b], with cost(a, b] the expansion of
//! lengths a+1..=b to b. O(n · 64²).

/// The cost of expanding lengths `a+1..=b` to `b`.
fn span_cost(counts: &[u64; 65], a: usize, b: usize) -> u128 {
    (a + 1..=b).fold(0u128, |acc, l| acc.saturating_add(u128::from(counts[l]) << (b - l).min(100)))
}

/// The prefixes `counts` (by length, 1..=64; index 0 ignored) expand to at `levels` (ascending,
/// ending with 64), ignoring prefix capture.
pub fn expanded_count(counts: &[u64; 65], levels: &[u8]) -> u128 {
    let mut prev = 0usize;
    let mut total = 0u128;
    for &q in levels {
        total = total.saturating_add(span_cost(counts, prev, usize::from(q)));
        prev = usize::from(q);
    }
    total
}

/// The `n` levels (ascending, the last 64) that minimise [`expanded_count`]; fewer when fewer
/// than `n` are useful (a level no prefix expands to saves nothing).
pub fn dp_cpe(counts: &[u64; 65], n: usize) -> Vec<u8> {
    let n = n.clamp(1, 64);
    const INF: u128 = u128::MAX;
    // best[j][b], from[j][b]: j levels, the highest b.
    let mut best = vec![[INF; 65]; n + 1];
    let mut from = vec![[0usize; 65]; n + 1];
    for (b, cost) in best[1].iter_mut().enumerate().skip(1) {
        *cost = span_cost(counts, 0, b);
    }
    for j in 2..=n {
        for b in j..=64 {
            for a in j - 1..b {
                if best[j - 1][a] == INF {
                    continue;
                }
                let c = best[j - 1][a].saturating_add(span_cost(counts, a, b));
                if c < best[j][b] {
                    best[j][b] = c;
                    from[j][b] = a;
                }
            }
        }
    }
    // The fewest levels that reach the lowest cost.
    let j = (1..=n).min_by_key(|&j| (best[j][64], j)).unwrap_or(1);
    let mut levels = vec![64u8];
    let (mut j, mut b) = (j, 64usize);
    while j > 1 {
        b = from[j][b];
        levels.push(b as u8);
        j -= 1;
    }
    levels.reverse();
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(usize, u64)]) -> [u64; 65] {
        let mut c = [0; 65];
        for &(l, n) in pairs {
            c[l] = n;
        }
        c
    }

    #[test]
    fn one_level_is_64() {
        let c = counts(&[(48, 10), (32, 2)]);
        assert_eq!(dp_cpe(&c, 1), vec![64]);
        assert_eq!(expanded_count(&c, &[64]), 10 * (1 << 16) + 2 * (1u128 << 32));
    }

    #[test]
    fn used_lengths_become_levels() {
        let c = counts(&[(48, 10), (32, 2), (29, 5)]);
        assert_eq!(dp_cpe(&c, 4), vec![29, 32, 48, 64]);
        assert_eq!(expanded_count(&c, &[29, 32, 48, 64]), 17);
        // Three levels: the cheapest drop is 29 → 32 (5 · 8 = 40).
        assert_eq!(dp_cpe(&c, 3), vec![32, 48, 64]);
        // More levels than useful: no extra level is added.
        assert_eq!(dp_cpe(&c, 10), vec![29, 32, 48, 64]);
    }

    #[test]
    fn matches_brute_force_on_small_histograms() {
        // Every 3-level set over lengths in 40..=64 with a fixed histogram.
        let c = counts(&[(40, 3), (44, 7), (47, 1), (48, 20), (52, 2), (56, 9), (60, 1), (64, 4)]);
        let mut best = u128::MAX;
        for a in 1..64u8 {
            for b in a + 1..64u8 {
                best = best.min(expanded_count(&c, &[a, b, 64]));
            }
        }
        assert_eq!(expanded_count(&c, &dp_cpe(&c, 3)), best);
    }
}
