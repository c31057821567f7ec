//! The paper's emulated L2: batch slots in DRAM, allocated up front ("Static" memory), and an
//! optional busy-wait after every batch read that models an L2 of throughput τ
//! (d = B·|c| / τ, the paper's equation (1)). Busy waiting, not sleeping: the paper found sleep
//! unreliable above 4 Gbps.
//!
//! Read-ahead is emulated too: [`MemoryDevice::start_read_ahead`] copies the slot (or part of
//! it) into a buffer at once and marks it done after the device is next free plus the time its
//! bytes take at τ, so reads queue behind each other at throughput τ; a waited-for read also
//! queues behind the read-aheads in flight.

use std::ops::Range;
use std::time::{Duration, Instant};

/// Read-ahead buffers of the emulated L2 (as many as the file L2's).
const READ_AHEAD_BUFFERS: usize = super::file::READ_AHEAD_BUFFERS;

/// A read-ahead buffer: the slot it read, how many bytes, and when the emulated read is done.
#[derive(Debug, Clone, Copy)]
struct Ahead {
    slot: u32,
    len: usize,
    done_at: Instant,
}

/// Batch slots in memory with an emulated read delay.
#[derive(Debug)]
pub struct MemoryDevice {
    bytes: Vec<u8>,
    batch_bytes: usize,
    delay: Option<Duration>,
    /// When the emulated device finishes the reads queued so far.
    busy_until: Instant,
    ahead_bufs: Vec<Vec<u8>>,
    ahead: Vec<Option<Ahead>>,
}

impl MemoryDevice {
    /// `slots` slots of `batch_bytes`; reads take at least `batch_bytes·8/τ` when `tau_bits_per_s`
    /// is given.
    pub fn new(slots: u32, batch_bytes: usize, tau_bits_per_s: Option<f64>) -> Self {
        let delay = tau_bits_per_s.filter(|t| *t > 0.0).map(|t| Duration::from_secs_f64(batch_bytes as f64 * 8.0 / t));
        MemoryDevice {
            bytes: vec![0; slots as usize * batch_bytes],
            batch_bytes,
            delay,
            busy_until: Instant::now(),
            ahead_bufs: Vec::new(),
            ahead: vec![None; READ_AHEAD_BUFFERS],
        }
    }

    /// The emulated delay per batch read.
    pub fn delay(&self) -> Option<Duration> {
        self.delay
    }

    /// When a read of `bytes` queued now is done: after the device is next free, plus d for a
    /// whole batch (in proportion for part of one).
    fn queue_read(&mut self, bytes: usize) -> Instant {
        let now = Instant::now();
        let d = self.delay.unwrap_or_default();
        let d = Duration::from_nanos((d.as_nanos() * bytes as u128 / self.batch_bytes.max(1) as u128) as u64);
        let done = now.max(self.busy_until) + d;
        self.busy_until = done;
        done
    }

    /// Copies slot `slot` into `dst`, then waits out the rest of the emulated delay (after the
    /// read-aheads queued before it).
    pub fn read(&mut self, slot: u32, dst: &mut [u8]) {
        let done = self.queue_read(self.batch_bytes);
        let at = slot as usize * self.batch_bytes;
        dst.copy_from_slice(&self.bytes[at..at + self.batch_bytes]);
        if self.delay.is_some() {
            while Instant::now() < done {
                std::hint::spin_loop();
            }
        }
    }

    /// Copies `src` into slot `slot`.
    pub fn write(&mut self, slot: u32, src: &[u8]) {
        let at = slot as usize * self.batch_bytes;
        self.bytes[at..at + self.batch_bytes].copy_from_slice(src);
    }

    /// The slot bytes, writable (tests inject faults here).
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let at = slot as usize * self.batch_bytes;
        &mut self.bytes[at..at + self.batch_bytes]
    }

    /// Starts an emulated read-ahead of bytes `range` of slot `slot` into a free buffer: its
    /// number, or `None` when every buffer is taken.
    pub fn start_read_ahead(&mut self, slot: u32, range: Range<usize>) -> Option<usize> {
        let i = self.ahead.iter().position(Option::is_none)?;
        if self.ahead_bufs.len() <= i {
            self.ahead_bufs.resize_with(i + 1, || vec![0; self.batch_bytes]);
        }
        let at = slot as usize * self.batch_bytes;
        let len = range.len();
        self.ahead_bufs[i][..len].copy_from_slice(&self.bytes[at + range.start..at + range.end]);
        let done_at = self.queue_read(len);
        self.ahead[i] = Some(Ahead { slot, len, done_at });
        Some(i)
    }

    /// A read-ahead whose emulated read is done (without waiting): its buffer and slot.
    pub fn next_read_ahead(&self) -> Option<(usize, u32)> {
        if self.ahead.iter().all(Option::is_none) {
            return None; // Nothing in flight: no clock read on every lookup.
        }
        let now = Instant::now();
        self.ahead.iter().enumerate().find_map(|(i, a)| a.filter(|a| a.done_at <= now).map(|a| (i, a.slot)))
    }

    /// Waits until read-ahead `i` is done; whether it was started.
    pub fn wait_read_ahead(&self, i: usize) -> bool {
        let Some(Some(a)) = self.ahead.get(i) else { return false };
        while Instant::now() < a.done_at {
            std::hint::spin_loop();
        }
        true
    }

    /// The bytes read-ahead `i` read.
    pub fn read_ahead_buf(&self, i: usize) -> &[u8] {
        match self.ahead.get(i) {
            Some(Some(a)) => &self.ahead_bufs[i][..a.len],
            _ => &[],
        }
    }

    /// Frees read-ahead buffer `i`.
    pub fn release_read_ahead(&mut self, i: usize) {
        if let Some(a) = self.ahead.get_mut(i) {
            *a = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_models_throughput() {
        let mut d = MemoryDevice::new(2, 81920, Some(4e9));
        assert_eq!(d.delay(), Some(Duration::from_nanos(163_840)));
        d.write(1, &[7; 81920]);
        let mut out = vec![0; 81920];
        let t = Instant::now();
        d.read(1, &mut out);
        assert!(t.elapsed() >= Duration::from_nanos(163_840));
        assert!(out.iter().all(|&b| b == 7));
    }

    #[test]
    fn read_aheads_queue_at_the_emulated_throughput() {
        let mut d = MemoryDevice::new(2, 81920, Some(4e9));
        d.write(0, &[1; 81920]);
        d.write(1, &[2; 81920]);
        let t = Instant::now();
        let a = d.start_read_ahead(0, 0..81920).unwrap();
        let b = d.start_read_ahead(1, 0..81920).unwrap();
        assert!(d.next_read_ahead().is_none() || t.elapsed() >= Duration::from_nanos(163_840));
        assert!(d.wait_read_ahead(b));
        // The second read was queued behind the first: two delays in all.
        assert!(t.elapsed() >= Duration::from_nanos(2 * 163_840));
        assert!(d.read_ahead_buf(a).iter().all(|&x| x == 1) && d.read_ahead_buf(b).iter().all(|&x| x == 2));
        assert!(d.next_read_ahead().is_some());
        d.release_read_ahead(a);
        d.release_read_ahead(b);
        assert!(d.next_read_ahead().is_none() && !d.wait_read_ahead(a));
    }

    #[test]
    fn part_of_a_slot_takes_its_share_of_the_delay() {
        let mut d = MemoryDevice::new(1, 81920, Some(4e9));
        d.write(0, &(0..81920).map(|i| (i / 8192) as u8).collect::<Vec<_>>());
        let before = Instant::now();
        let a = d.start_read_ahead(0, 8192..16384).unwrap();
        let after = Instant::now();
        // A tenth of the batch's 163,840 ns.
        let done_at = d.ahead[a].unwrap().done_at;
        assert!(done_at >= before + Duration::from_nanos(16_384) && done_at <= after + Duration::from_nanos(16_384));
        assert!(d.wait_read_ahead(a));
        assert_eq!(d.read_ahead_buf(a), &[1u8; 8192][..]);
    }
}
