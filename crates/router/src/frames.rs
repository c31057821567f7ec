//! A batch of received frames as a pipeline reads it: what the port layer (or a test) hands
//! the IP router and the switch.

/// A batch of received frames.
pub trait Frames {
    /// Frames in the batch.
    fn count(&self) -> usize;
    /// Frame `i`'s bytes.
    fn bytes(&self, i: usize) -> &[u8];
    /// Frame `i`'s bytes, to rewrite.
    fn bytes_mut(&mut self, i: usize) -> &mut [u8];
}

impl Frames for [Vec<u8>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn bytes(&self, i: usize) -> &[u8] {
        &self[i]
    }
    fn bytes_mut(&mut self, i: usize) -> &mut [u8] {
        &mut self[i]
    }
}
