//! Round-trip time estimates for the strategies that measure their upstreams (access, ASF).
//!
//! RFC 6298's estimator with ndn-cxx's settings (`ndn::util::RttEstimator`): before any
//! sample the retransmission timeout (RTO) is 1 s; after, srtt + 4·rttvar, within 200 ms and
//! 60 s. Plain arithmetic, no clock: callers pass the round trips they measured.

/// RTO before any sample (ms).
pub const INITIAL_RTO_MS: f64 = 1000.0;
/// Bounds of the RTO (ms).
const MIN_RTO_MS: f64 = 200.0;
const MAX_RTO_MS: f64 = 60_000.0;

/// An RFC 6298 round-trip estimator.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RttEstimator {
    /// (srtt, rttvar) in ms, once a sample came.
    stats: Option<(f64, f64)>,
}

impl RttEstimator {
    /// Adds a round trip of `rtt_ms`.
    pub fn add(&mut self, rtt_ms: f64) {
        self.stats = Some(match self.stats {
            None => (rtt_ms, rtt_ms / 2.0),
            Some((srtt, rttvar)) => {
                let rttvar = 0.75 * rttvar + 0.25 * (srtt - rtt_ms).abs();
                (0.875 * srtt + 0.125 * rtt_ms, rttvar)
            }
        });
    }

    /// The smoothed round trip (ms), once a sample came.
    pub fn srtt_ms(&self) -> Option<f64> {
        self.stats.map(|(srtt, _)| srtt)
    }

    /// The retransmission timeout (ms).
    pub fn rto_ms(&self) -> u64 {
        let rto = self.stats.map_or(INITIAL_RTO_MS, |(srtt, rttvar)| srtt + 4.0 * rttvar);
        rto.clamp(MIN_RTO_MS, MAX_RTO_MS) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_follows_rfc_6298_within_bounds() {
        let mut r = RttEstimator::default();
        assert_eq!((r.rto_ms(), r.srtt_ms()), (1000, None));
        r.add(100.0);
        assert_eq!((r.rto_ms(), r.srtt_ms()), (300, Some(100.0)), "srtt 100 + 4 * 50");
        for _ in 0..50 {
            r.add(10.0);
        }
        assert_eq!(r.rto_ms(), 200, "at least 200 ms");
        assert!(r.srtt_ms().unwrap() < 11.0);
    }
}
