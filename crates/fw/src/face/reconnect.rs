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
//! One change of ours: a connection lost again sooner than the time its attempt was given
//! (a peer that accepts and closes at once) does not start over at once with 1 s, as NFD's
//! would — in a loop as fast as the peer answers — but goes on backing off: the next attempt
//! starts after twice that time ([`Reconnect::resume`]).
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

    /// A face that went down at `now_ms` having been up for less than `wait_ms`, the time
    /// given to the attempt that connected it: no attempt now; the next one starts after
    /// twice that time (at most [`MAX_WAIT_MS`]), and is given twice as much again, as
    /// [`Reconnect::next_attempt`] gives. A peer that accepts and closes at once is so tried
    /// less and less often, at most every 5 minutes at the end.
    pub fn resume(now_ms: u64, wait_ms: u64) -> Self {
        let wait_ms = (wait_ms * 2).min(MAX_WAIT_MS);
        Reconnect { down_since_ms: now_ms, wait_ms, attempt_ends_ms: now_ms + wait_ms, attempts: 0 }
    }

    /// Whether a connection made by the attempt given `wait_ms`, up since `up_ms`, lost at
    /// `now_ms`, lasted too little to start over ([`Reconnect::resume`] rather than
    /// [`Reconnect::start`]).
    pub fn lost_early(up_ms: u64, wait_ms: u64, now_ms: u64) -> bool {
        now_ms.saturating_sub(up_ms) < wait_ms
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
    fn a_connection_lost_early_goes_on_backing_off() {
        // Connected by an attempt given 4 s, lost after 1 s: the next attempt starts after 8 s.
        assert!(Reconnect::lost_early(10_000, 4000, 11_000));
        let mut r = Reconnect::resume(11_000, 4000);
        assert_eq!((r.wait_ms(), r.attempts), (8000, 0));
        assert!(!r.attempt_over(18_999));
        assert!(r.attempt_over(19_000));
        r.next_attempt(19_000);
        assert_eq!((r.wait_ms(), r.attempts), (16_000, 1));
        assert_eq!(Reconnect::resume(0, MAX_WAIT_MS).wait_ms(), MAX_WAIT_MS);
        // Up for as long as its attempt's time, or longer: the next loss starts over.
        assert!(!Reconnect::lost_early(10_000, 4000, 14_000));
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
