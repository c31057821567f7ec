//! Retransmission suppression: whether another Interest for a name already pending upstream is
//! forwarded again or aggregated into the pending entry (NFD's `RetxSuppressionExponential` and
//! `RetxSuppressionFixed`).
//!
//! # Overview
//! A consumer that gets no answer sends its Interest again, with a new nonce; another consumer
//! may ask for the same name meanwhile. Forwarding every one of them floods the upstreams,
//! forwarding none leaves a lost Interest lost until it expires. NFD's strategies forward again
//! only once an interval has passed since the last forwarding:
//! - [`RetxSuppression::PerEntry`] (best-route, ASF): one interval per PIT entry; it starts at
//!   [`RetxParams::initial`] and each forwarding again multiplies it by
//!   [`RetxParams::multiplier`], up to its longest (`retx-suppression-max`);
//! - [`RetxSuppression::PerUpstream`] (multicast): the same interval kept per out-record, so an
//!   upstream is skipped within its own interval of its last forwarding;
//! - [`RetxSuppression::Fixed`] (access): a fixed 100 ms;
//! - [`RetxSuppression::None`] (random, self-learning): every such Interest is forwarded.
//!
//! The exponential strategies take NFD's parameters after their version component
//! (`/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~20/retx-suppression-max~500/retx-suppression-multiplier~1.5`);
//! [`RetxParams::parse_parameter`] reads them and [`RetxParams::check`] refuses what NFD refuses.
//! Without `retx-suppression-initial` the interval starts at the forwarder's `retry_interval_ms`
//! (NFD's 10 ms by default).

use crate::table::strategy_params::RetxParams;

/// The access strategy's fixed retransmission suppression interval (NFD's 100 ms).
pub const ACCESS_RETX_SUPPRESSION_MS: u64 = 100;

/// How a strategy treats an Interest for a name already pending upstream: aggregated into the
/// pending entry, or forwarded again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetxSuppression {
    /// Every such Interest is forwarded again (NFD's random and self-learning strategies).
    None,
    /// Aggregated within this many ms of the entry's last forwarding (NFD's
    /// `RetxSuppressionFixed`, as its access strategy uses it).
    Fixed(u64),
    /// Aggregated within the entry's interval of its last forwarding, the interval growing
    /// exponentially (NFD's `RetxSuppressionExponential` per PIT entry, as best-route and ASF
    /// use it).
    PerEntry(RetxParams),
    /// The same interval kept per upstream: an upstream is skipped within its own interval of
    /// its last forwarding (as NFD's multicast strategy uses it).
    PerUpstream(RetxParams),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_doubles_up_to_the_longest() {
        let p = RetxParams::default();
        let mut interval = 0;
        assert!(!p.due(&mut interval, 100, 109, 10), "within the first 10 ms");
        assert_eq!(interval, 0, "a suppressed retransmission does not widen it");
        let mut sent = 100;
        let mut seen = Vec::new();
        for _ in 0..7 {
            let now = sent + interval.max(10);
            assert!(p.due(&mut interval, sent, now, 10));
            seen.push(interval);
            sent = now;
        }
        assert_eq!(seen, [20, 40, 80, 160, 250, 250, 250]);
        assert!(!p.due(&mut interval, sent, sent + 249, 10));
    }

    #[test]
    fn parameters_set_the_first_interval_the_longest_and_the_factor() {
        let mut p = RetxParams::default();
        for (k, v) in [("retx-suppression-initial", "20"), ("retx-suppression-max", "100"), ("retx-suppression-multiplier", "1.5")] {
            assert_eq!(p.parse_parameter(k, v), Ok(true));
        }
        assert_eq!(p.parse_parameter("probing-interval", "1000"), Ok(false), "not retransmission suppression's");
        p.check().unwrap();
        assert_eq!(p, RetxParams::new(Some(20), 100, 1.5).unwrap());
        assert_eq!(p.components(), ["retx-suppression-initial~20", "retx-suppression-max~100", "retx-suppression-multiplier~1.5"]);
        let mut interval = 0;
        let mut sent = 0;
        let mut seen = Vec::new();
        for _ in 0..6 {
            let now = sent + interval.max(20);
            assert!(!p.due(&mut interval, sent, now - 1, 10), "the forwarder's 10 ms is not used");
            assert!(p.due(&mut interval, sent, now, 10));
            seen.push(interval);
            sent = now;
        }
        assert_eq!(seen, [30, 45, 67, 100, 100, 100], "× 1.5, truncated to whole ms, up to 100");
        assert!(RetxParams::default().components().is_empty());
    }

    #[test]
    fn bad_parameters_are_refused() {
        let mut p = RetxParams::default();
        assert!(p.parse_parameter("retx-suppression-initial", "0").is_err());
        assert!(p.parse_parameter("retx-suppression-initial", "-5").is_err());
        assert!(p.parse_parameter("retx-suppression-max", "soon").is_err());
        assert!(p.parse_parameter("retx-suppression-multiplier", "x").is_err());
        assert!(RetxParams::new(Some(100), 50, 2.0).is_err(), "longest below the first");
        assert!(RetxParams::new(None, 250, 0.5).is_err(), "a factor below 1");
        assert!(RetxParams::new(None, 250, f32::NAN).is_err());
        assert!(RetxParams::new(None, 250, f32::INFINITY).is_err());
        assert!(RetxParams::new(Some(0), 250, 2.0).is_err());
        assert!(RetxParams::new(None, 5, 2.0).is_ok(), "the forwarder's first interval is not checked against it");
    }
}
