//! Bit sets stored as `u64` words: iterating the set bits.

/// The positions of the set bits of `words` (bit `b` of word `i` is position `64·i + b`),
/// ascending; each step clears the lowest set bit, so the cost is one step per set bit.
pub fn set_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(i, &w)| word_bits(w).map(move |b| i * 64 + b))
}

/// The positions of the set bits of one word, ascending.
#[inline(always)]
pub fn word_bits(mut w: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        (w != 0).then(|| {
            let b = w.trailing_zeros() as usize;
            w &= w - 1;
            b
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_ascending() {
        assert_eq!(set_bits(&[0b1010, 0, 1 << 63]).collect::<Vec<_>>(), [1, 3, 191]);
        assert_eq!(set_bits(&[0, 0]).count(), 0);
        assert_eq!(set_bits(&[u64::MAX]).count(), 64);
        assert_eq!(word_bits(0b1001_0000).collect::<Vec<_>>(), [4, 7]);
    }
}
