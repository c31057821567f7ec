//! Forwarding threads: each owns a [`Shard`] and receives batches of packets (and control
//! operations, in order with them) from the I/O thread over a channel; what it sends goes back
//! as an [`Outbox`] with a wake-up of the I/O thread's poll. While its shard has Interests parked
//! for SSD reads, a thread waits for the channel at most [`PARKED_POLL`] at a time and collects
//! the finished reads in between.

use std::ops::Range;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::counters::{DropReason, ShardCounters};
use crate::face::{FaceId, FaceScope};
use crate::lp::packet::classify;
use crate::pipeline::outbox::Outbox;
use crate::pipeline::{Control, Shard};

use super::Clock;

/// How long a forwarding thread with parked Interests waits for packets before it looks for
/// finished SSD reads (a batch read takes about this long).
pub const PARKED_POLL: Duration = Duration::from_micros(100);

/// Packets for one forwarding thread, as received.
#[derive(Debug, Default)]
pub struct Batch {
    now_ms: u64,
    bytes: Vec<u8>,
    items: Vec<(FaceId, FaceScope, Range<usize>)>,
}

impl Batch {
    /// Adds a packet.
    pub fn push(&mut self, now_ms: u64, face: FaceId, scope: FaceScope, packet: &[u8]) {
        self.now_ms = now_ms;
        let start = self.bytes.len();
        self.bytes.extend_from_slice(packet);
        self.items.push((face, scope, start..self.bytes.len()));
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// What a forwarding thread is told.
#[derive(Debug)]
pub enum ToWorker {
    /// Packets to forward.
    Packets(Batch),
    /// A table change.
    Control(Control),
    /// Erase up to this many content-store packets under a prefix, and say how many went and
    /// whether more remain ([`Shard::erase_cs`]).
    EraseCs(nexthop_wire::Name, usize, Sender<(usize, bool)>),
    /// Answer once everything sent before it is done (a barrier for the I/O thread).
    Done(Sender<()>),
    /// The time: expire PIT entries, fire the access strategy's timers.
    Tick(u64),
    /// Stop.
    Stop,
}

/// The I/O thread's handle on a forwarding thread.
#[derive(Debug)]
pub struct Worker {
    /// Where to send work.
    pub tx: Sender<ToWorker>,
    /// The shard's counters.
    pub counters: Arc<ShardCounters>,
    /// Packets waiting to be sent to it.
    pub pending: Batch,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts a thread around `shard`; its outboxes go to `done`, then `wake` is called.
    pub fn spawn(
        index: usize,
        mut shard: Shard,
        clock: Clock,
        done: Sender<Outbox>,
        recycled: Receiver<Outbox>,
        wake: Arc<mio::Waker>,
    ) -> std::io::Result<Self> {
        let (tx, rx) = crossbeam_channel::unbounded::<ToWorker>();
        let counters = shard.counters().clone();
        let name = format!("nexthop-fwd-{index}");
        let thread = std::thread::Builder::new().name(name).spawn(move || loop {
            let msg = if shard.has_parked() {
                match rx.recv_timeout(PARKED_POLL) {
                    Ok(msg) => Some(msg),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match rx.recv() {
                    Ok(msg) => Some(msg),
                    Err(_) => break,
                }
            };
            let mut out = recycled.try_recv().unwrap_or_default();
            out.clear();
            match msg {
                Some(ToWorker::Packets(batch)) => {
                    let now = batch.now_ms;
                    for (face, scope, range) in &batch.items {
                        match classify(&batch.bytes[range.clone()]) {
                            Ok(Some(inc)) => shard.on_incoming(now, *face, *scope, &inc, &mut out),
                            Ok(None) => {}
                            Err(why) => shard.counters().drops.count(why),
                        }
                    }
                }
                Some(ToWorker::Control(op)) => shard.apply(&op),
                Some(ToWorker::EraseCs(prefix, max, reply)) => {
                    let _ = reply.send(shard.erase_cs(&prefix, max));
                }
                Some(ToWorker::Done(reply)) => {
                    let _ = reply.send(());
                }
                Some(ToWorker::Tick(now)) => {
                    shard.expire(now);
                    shard.fire_timers(now, &mut out);
                }
                Some(ToWorker::Stop) => break,
                None => {}
            }
            if shard.has_parked() {
                shard.poll_content_store(clock.now_ms(), &mut out);
            }
            if !out.is_empty() && done.send(out).is_ok() {
                let _ = wake.wake();
            }
        })?;
        Ok(Worker { tx, counters, pending: Batch::default(), thread: Some(thread) })
    }

    /// Sends the pending packets, then `make(reply)` and waits at most `wait` for the thread's
    /// answer on `reply` (it answers after what it was handed before).
    pub fn ask<T>(&mut self, make: impl FnOnce(Sender<T>) -> ToWorker, wait: Duration) -> Option<T> {
        self.flush();
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.tx.send(make(tx)).ok()?;
        rx.recv_timeout(wait).ok()
    }

    /// Sends the pending packets.
    pub fn flush(&mut self) {
        if !self.pending.is_empty() {
            let batch = std::mem::take(&mut self.pending);
            if self.tx.send(ToWorker::Packets(batch)).is_err() {
                self.counters.drops.count(DropReason::FaceGone);
            }
        }
    }
}

impl std::ops::Drop for Worker {
    fn drop(&mut self) {
        let _ = self.tx.send(ToWorker::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
