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

/// The longest an exponential retransmission suppression interval grows by default (NFD's
/// 250 ms).
pub const RETX_SUPPRESSION_MAX_MS: u32 = 250;

/// The factor an exponential interval grows by at each forwarding, by default (NFD's 2).
pub const RETX_SUPPRESSION_MULTIPLIER: f32 = 2.0;

/// The parameters of exponential retransmission suppression, from a strategy's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetxParams {
    /// The first interval in ms; 0: the forwarder's `retry_interval_ms`.
    initial_ms: u32,
    /// The longest interval in ms.
    max_ms: u32,
    /// The factor, as the bits of an `f32` (so that the parameters hash and compare).
    multiplier_bits: u32,
}

impl Default for RetxParams {
    fn default() -> Self {
        RetxParams::DEFAULT
    }
}

impl RetxParams {
    /// NFD's defaults: the forwarder's first interval, doubling up to 250 ms.
    pub const DEFAULT: RetxParams =
        RetxParams { initial_ms: 0, max_ms: RETX_SUPPRESSION_MAX_MS, multiplier_bits: RETX_SUPPRESSION_MULTIPLIER.to_bits() };

    /// Parameters with this first interval (None: the forwarder's), longest interval and factor.
    ///
    /// # Errors
    /// What NFD refuses: a first interval of 0, a longest interval shorter than the first, a
    /// factor below 1 (or not a number).
    pub fn new(initial_ms: Option<u32>, max_ms: u32, multiplier: f32) -> Result<RetxParams, String> {
        let p = RetxParams { initial_ms: initial_ms.unwrap_or(0), max_ms, multiplier_bits: multiplier.to_bits() };
        if initial_ms == Some(0) {
            return Err("retx-suppression-initial must be more than 0 ms".into());
        }
        p.check()?;
        Ok(p)
    }

    /// The first interval in ms, if the name gives one (else the forwarder's `retry_interval_ms`).
    pub fn initial(&self) -> Option<u32> {
        (self.initial_ms != 0).then_some(self.initial_ms)
    }

    /// The factor the interval grows by at each forwarding.
    pub fn multiplier(&self) -> f32 {
        f32::from_bits(self.multiplier_bits)
    }

    /// Takes one `name~value` parameter if it is one of retransmission suppression's; whether
    /// it was (others are the strategy's own, or unknown).
    ///
    /// # Errors
    /// A value that is not a number of the parameter's kind.
    pub fn parse_parameter(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let ms = || value.parse::<u32>().map_err(|_| format!("parameter {key}: {value:?} is not a whole number of ms"));
        match key {
            "retx-suppression-initial" => {
                self.initial_ms = ms()?;
                if self.initial_ms == 0 {
                    return Err("retx-suppression-initial must be more than 0 ms".into());
                }
            }
            "retx-suppression-max" => self.max_ms = ms()?,
            "retx-suppression-multiplier" => {
                let m: f32 = value.parse().map_err(|_| format!("parameter {key}: {value:?} is not a number"))?;
                self.multiplier_bits = m.to_bits();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The parameters a strategy's name gives (`kind` names it in errors).
    ///
    /// # Errors
    /// A parameter that is not retransmission suppression's, a bad value, or values that do
    /// not go together ([`RetxParams::check`]).
    pub fn from_parameters(kind: &str, parameters: &[(&str, &str)]) -> Result<RetxParams, String> {
        let mut p = RetxParams::DEFAULT;
        for &(key, value) in parameters {
            if !p.parse_parameter(key, value)? {
                return Err(format!("{kind} has no parameter {key:?}"));
            }
        }
        p.check()?;
        Ok(p)
    }

    /// Checks the parameters together, once all are read.
    ///
    /// # Errors
    /// A longest interval shorter than the first, or a factor below 1.
    pub fn check(&self) -> Result<(), String> {
        if !(self.multiplier() >= 1.0 && self.multiplier().is_finite()) {
            return Err("retx-suppression-multiplier must be at least 1".into());
        }
        if self.initial().is_some_and(|i| self.max_ms < i) {
            return Err("retx-suppression-max must be at least retx-suppression-initial".into());
        }
        Ok(())
    }

    /// The parameters that differ from the defaults, as name components' text.
    pub fn components(&self) -> Vec<String> {
        let d = RetxParams::default();
        let mut out = Vec::new();
        if let Some(i) = self.initial() {
            out.push(format!("retx-suppression-initial~{i}"));
        }
        if self.max_ms != d.max_ms {
            out.push(format!("retx-suppression-max~{}", self.max_ms));
        }
        if self.multiplier_bits != d.multiplier_bits {
            out.push(format!("retx-suppression-multiplier~{}", self.multiplier()));
        }
        out
    }

    /// Whether forwarding again is due at `now_ms`, for an entry or upstream last forwarded at
    /// `last_sent_ms` whose interval is `interval_ms` (0: not yet widened, so the first
    /// interval: the parameters', else `default_initial_ms`); if it is, the interval grows by
    /// the factor, up to the longest (never below the first).
    pub fn due(&self, interval_ms: &mut u64, last_sent_ms: u64, now_ms: u64, default_initial_ms: u64) -> bool {
        let initial = self.initial().map_or(default_initial_ms, u64::from).max(1);
        let current = if *interval_ms == 0 { initial } else { *interval_ms };
        let due = now_ms >= last_sent_ms + current;
        if due {
            // As NFD: the product truncated to whole ms.
            let grown = (current as f64 * f64::from(self.multiplier())) as u64;
            *interval_ms = grown.min(u64::from(self.max_ms).max(initial));
        }
        due
    }
}

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
