//! The synchronisation primitives the query structure uses: core's and std's, or loom's when the
//! crate is built with `--cfg loom` for the model check of its concurrency protocol
//! (`make loom`; the model is in `query.rs`).

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU8};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU8};
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;

/// Waits a moment in a retry loop (under loom, lets the other threads run).
#[inline(always)]
pub(crate) fn spin() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}
