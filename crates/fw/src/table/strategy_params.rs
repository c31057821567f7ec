//! A strategy's parameters, as its name carries them after the version: retransmission
//! suppression's (`retx-suppression-initial~20/retx-suppression-max~500/retx-suppression-multiplier~1.5`)
//! and ASF's own (`probing-interval~30000/max-timeouts~2/measurements-lifetime~120000`).
//!
//! # Overview
//! Plain values that hash and compare, so that a [`crate::table::strategy_choice::Strategy`] with
//! its parameters is one: each reads its name components (`parse_parameter`), refuses what NFD
//! refuses (`check`) and writes back those that differ from the defaults (`components`). What
//! they make a strategy do is `crate::pipeline::strategy`'s.

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

/// NFD's default probing interval (ms).
pub const DEFAULT_PROBING_INTERVAL_MS: u32 = 60_000;
/// The shortest probing interval NFD allows (ms).
pub const MIN_PROBING_INTERVAL_MS: u32 = 1_000;
/// Timeouts in a row that mark a face timed out, by default.
pub const DEFAULT_MAX_TIMEOUTS: u32 = 3;
/// How long measurements live past their last use, by default (ms).
pub const DEFAULT_MEASUREMENTS_LIFETIME_MS: u32 = 300_000;
/// ASF's parameters, from the strategy's name
/// (`/localhost/nfd/strategy/asf/v=5/probing-interval~30000/max-timeouts~2/measurements-lifetime~120000`,
/// and retransmission suppression's `retx-suppression-…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AsfParams {
    /// How retransmissions are suppressed (per entry, exponentially).
    pub retx: RetxParams,
    /// How often a namespace sends a probe (ms; at least 1 s).
    pub probing_interval_ms: u32,
    /// Timeouts in a row before a face counts as timed out (at least 1).
    pub max_timeouts: u32,
    /// How long measurements live past their last use (ms; more than the probing interval).
    pub measurements_lifetime_ms: u32,
}

impl Default for AsfParams {
    fn default() -> Self {
        AsfParams {
            retx: RetxParams::DEFAULT,
            probing_interval_ms: DEFAULT_PROBING_INTERVAL_MS,
            max_timeouts: DEFAULT_MAX_TIMEOUTS,
            measurements_lifetime_ms: DEFAULT_MEASUREMENTS_LIFETIME_MS,
        }
    }
}

impl AsfParams {
    /// Takes one `name~value` parameter if it is ASF's; whether it was.
    ///
    /// # Errors
    /// A value that is not a number of the parameter's kind.
    pub fn parse_parameter(&mut self, key: &str, value: &str) -> Result<bool, String> {
        if self.retx.parse_parameter(key, value)? {
            return Ok(true);
        }
        let field = match key {
            "probing-interval" => &mut self.probing_interval_ms,
            "max-timeouts" => &mut self.max_timeouts,
            "measurements-lifetime" => &mut self.measurements_lifetime_ms,
            _ => return Ok(false),
        };
        *field = value.parse().map_err(|_| format!("parameter {key}: {value:?} is not a non-negative integer"))?;
        Ok(true)
    }

    /// Checks the parameters together, once all are read.
    ///
    /// # Errors
    /// A sentence naming the first parameter out of range.
    pub fn check(&self) -> Result<(), String> {
        self.retx.check()?;
        if self.probing_interval_ms < MIN_PROBING_INTERVAL_MS {
            return Err(format!("probing-interval must be at least {MIN_PROBING_INTERVAL_MS} ms"));
        }
        if self.max_timeouts == 0 {
            return Err("max-timeouts must be at least 1".into());
        }
        if self.measurements_lifetime_ms <= self.probing_interval_ms {
            return Err("measurements-lifetime must be longer than probing-interval".into());
        }
        Ok(())
    }

    /// The parameters that differ from the defaults, as name components' text.
    pub fn components(&self) -> Vec<String> {
        let d = AsfParams::default();
        let mut out = self.retx.components();
        if self.probing_interval_ms != d.probing_interval_ms {
            out.push(format!("probing-interval~{}", self.probing_interval_ms));
        }
        if self.max_timeouts != d.max_timeouts {
            out.push(format!("max-timeouts~{}", self.max_timeouts));
        }
        if self.measurements_lifetime_ms != d.measurements_lifetime_ms {
            out.push(format!("measurements-lifetime~{}", self.measurements_lifetime_ms));
        }
        out
    }
}
