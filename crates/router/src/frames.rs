//! A batch of received frames as a pipeline reads it: what the port layer (or a test) hands
//! the IP router and the switch.

use nexthop_io::{Frame, FramePool};

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

/// A received batch of the port layer: frames of its pool.
#[derive(Debug)]
pub struct PoolFrames<'a> {
    /// The pool the frames live in.
    pub pool: &'a mut FramePool,
    /// The batch.
    pub frames: &'a mut [Frame],
}

impl Frames for PoolFrames<'_> {
    fn count(&self) -> usize {
        self.frames.len()
    }
    fn bytes(&self, i: usize) -> &[u8] {
        self.pool.bytes(&self.frames[i])
    }
    fn bytes_mut(&mut self, i: usize) -> &mut [u8] {
        self.pool.bytes_mut(&mut self.frames[i])
    }
}
