//! When a permanent TCP face tries to connect again, as NFD's `TcpTransport` does.
//!
//! # Overview
//! A face made *permanent* (`faces/create` or `faces/update` with FacePersistency 2, and the
//! faces of the configuration) outlives its connection: when the peer closes it or the socket
//! fails, the face goes *down* — it keeps its id, its routes and its counters, and what is sent
//! to it meanwhile is dropped and counted (`face-down`) — and the runtime connects again.
//! The first attempt starts at once and is given [`INITIAL_WAIT_MS`]; an attempt that has not
//! connected by then (refused, unreachable, or no answer) is abandoned and the next one starts
//! with twice the time, up to [`MAX_WAIT_MS`]. Once connected the face is up again and the
//! next failure starts from [`INITIAL_WAIT_MS`]. These are NFD's figures (1 s, doubling, at
//! most 5 minutes).
//!
//! No I/O and no clock here: [`Reconnect`] is told the time and says when an attempt is over;
//! the runtime owns the sockets (`runtime::faces`).

/// Time given to the first attempt after a face goes down (NFD's `INITIAL_RECONNECT_DELAY`).
pub const INITIAL_WAIT_MS: u64 = 1000;
/// The most time one attempt is given (NFD's `MAX_RECONNECT_DELAY`).
pub const MAX_WAIT_MS: u64 = 5 * 60 * 1000;

/// A down face's attempts to connect again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconnect {
    /// When the face went down (ms).
    pub down_since_ms: u64,
    /// Time the current attempt is given (ms).
    wait_ms: u64,
    /// When the current attempt is abandoned (ms).
    attempt_ends_ms: u64,
    /// Attempts started, the current one included.
    pub attempts: u64,
}

impl Reconnect {
    /// A face that went down at `now_ms`: its first attempt starts now.
    pub fn start(now_ms: u64) -> Self {
        Reconnect { down_since_ms: now_ms, wait_ms: INITIAL_WAIT_MS, attempt_ends_ms: now_ms + INITIAL_WAIT_MS, attempts: 1 }
    }

    /// Whether the current attempt has had its time at `now_ms` (the next one is due).
    pub fn attempt_over(&self, now_ms: u64) -> bool {
        now_ms >= self.attempt_ends_ms
    }

    /// Abandons the current attempt and starts the next at `now_ms`, given twice the time (at
    /// most [`MAX_WAIT_MS`]).
    pub fn next_attempt(&mut self, now_ms: u64) {
        self.wait_ms = (self.wait_ms * 2).min(MAX_WAIT_MS);
        self.attempt_ends_ms = now_ms + self.wait_ms;
        self.attempts += 1;
    }

    /// Time the current attempt is given (ms).
    pub fn wait_ms(&self) -> u64 {
        self.wait_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_double_their_time_up_to_five_minutes() {
        let mut r = Reconnect::start(10_000);
        assert!(!r.attempt_over(10_999));
        assert!(r.attempt_over(11_000));
        let mut now = 11_000;
        let mut waits = Vec::new();
        for _ in 0..12 {
            r.next_attempt(now);
            waits.push(r.wait_ms());
            assert!(!r.attempt_over(now + r.wait_ms() - 1));
            now += r.wait_ms();
            assert!(r.attempt_over(now));
        }
        assert_eq!(waits[..9], [2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, MAX_WAIT_MS]);
        assert!(waits[9..].iter().all(|&w| w == MAX_WAIT_MS));
        assert_eq!((r.attempts, r.down_since_ms), (13, 10_000));
    }

    #[test]
    fn a_late_check_starts_the_next_attempt_from_when_it_is_made() {
        let mut r = Reconnect::start(0);
        // The runtime looks every tick; one that comes late gives the next attempt its full time.
        r.next_attempt(1500);
        assert!(!r.attempt_over(3499));
        assert!(r.attempt_over(3500));
    }
}
