//! The paper's emulated L2: batch slots in DRAM, allocated up front ("Static" memory), and an
//! optional busy-wait after every batch read that models an L2 of throughput τ
//! (d = B·|c| / τ, the paper's equation (1)). Busy waiting, not sleeping: the paper found sleep
//! unreliable above 4 Gbps.

use std::time::{Duration, Instant};

/// Batch slots in memory with an emulated read delay.
#[derive(Debug)]
pub struct MemoryDevice {
    bytes: Vec<u8>,
    batch_bytes: usize,
    delay: Option<Duration>,
}

impl MemoryDevice {
    /// `slots` slots of `batch_bytes`; reads take at least `batch_bytes·8/τ` when `tau_bits_per_s`
    /// is given.
    pub fn new(slots: u32, batch_bytes: usize, tau_bits_per_s: Option<f64>) -> Self {
        let delay = tau_bits_per_s.filter(|t| *t > 0.0).map(|t| Duration::from_secs_f64(batch_bytes as f64 * 8.0 / t));
        MemoryDevice { bytes: vec![0; slots as usize * batch_bytes], batch_bytes, delay }
    }

    /// The emulated delay per batch read.
    pub fn delay(&self) -> Option<Duration> {
        self.delay
    }

    /// Copies slot `slot` into `dst`, then waits out the rest of the emulated delay.
    pub fn read(&self, slot: u32, dst: &mut [u8]) {
        let start = Instant::now();
        let at = slot as usize * self.batch_bytes;
        dst.copy_from_slice(&self.bytes[at..at + self.batch_bytes]);
        if let Some(d) = self.delay {
            while start.elapsed() < d {
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
}
