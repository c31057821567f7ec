//! The FIB as forwarding threads see it: owned by the one shard of a single-threaded forwarder,
//! or shared, read-mostly, by every forwarding thread and changed by the I/O thread without
//! stopping their lookups.
//!
//! Overview: sharing uses the `left-right` primitive (two copies of the FIB; readers enter
//! whichever copy is published, wait-free; the single writer changes the other copy, publishes
//! by swapping, waits until no reader is still in the old copy, then replays the same changes on
//! it). Memory is two FIBs however many threads forward — with a replica per thread it was one
//! per thread, which a 100M-route FIB cannot afford. Every change is a [`FibOp`] that both copies
//! absorb in the same order.
//!
//! - [`FibWriter`]: the I/O thread's handle. [`FibWriter::apply`] logs a change;
//!   [`FibWriter::publish`] makes what was logged visible. The runtime publishes before it hands
//!   packets to the forwarding threads, so a packet dispatched after a route change is forwarded
//!   with it.
//! - [`ShardFib`]: a shard's view (its own FIB, or a reader of the shared one);
//!   [`ShardFib::find`] runs a lookup and keeps the copy it read entered while the caller holds
//!   the answer ([`Route`]).

use std::ops::Deref;

use left_right::{Absorb, ReadGuard, ReadHandle, WriteHandle};
use nexthop_lookup::name::NextHops;
use nexthop_wire::NameView;

use crate::table::fib::{Fib, FibOp};

impl Absorb<FibOp> for Fib {
    fn absorb_first(&mut self, op: &mut FibOp, _: &Self) {
        self.apply(op);
    }

    fn absorb_second(&mut self, op: FibOp, _: &Self) {
        self.apply(&op);
    }

    fn sync_with(&mut self, first: &Self) {
        self.clone_from(first);
    }
}

/// The writing side of the shared FIB.
pub struct FibWriter {
    handle: WriteHandle<Fib, FibOp>,
    unpublished: bool,
}

impl std::fmt::Debug for FibWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FibWriter").field("unpublished", &self.unpublished).finish_non_exhaustive()
    }
}

impl FibWriter {
    /// A shared FIB starting as `fib`, and its first reader (clone it for more threads).
    pub fn new(fib: Fib) -> (FibWriter, ReadHandle<Fib>) {
        let (handle, reader) = left_right::new_from_empty::<Fib, FibOp>(fib);
        (FibWriter { handle, unpublished: false }, reader)
    }

    /// Logs a change; readers see it after the next [`FibWriter::publish`].
    pub fn apply(&mut self, op: FibOp) {
        self.handle.append(op);
        self.unpublished = true;
    }

    /// Makes every logged change visible to readers (waits until no reader is still in the copy
    /// being retired; readers leave it after one lookup). Returns the route count when it
    /// published, `None` when there was nothing to publish.
    pub fn publish(&mut self) -> Option<usize> {
        if !self.unpublished {
            return None;
        }
        self.handle.publish();
        self.unpublished = false;
        Some(self.handle.enter().map_or(0, |fib| fib.len()))
    }
}

/// A shard's FIB: its own, or a reader of the shared one.
#[derive(Debug)]
pub enum ShardFib {
    /// The shard's own FIB (a single-threaded forwarder, tests).
    Own(Box<Fib>),
    /// A reader of the FIB every forwarding thread shares.
    Shared(ReadHandle<Fib>),
}

impl From<Fib> for ShardFib {
    fn from(fib: Fib) -> Self {
        ShardFib::Own(Box::new(fib))
    }
}

impl From<ReadHandle<Fib>> for ShardFib {
    fn from(reader: ReadHandle<Fib>) -> Self {
        ShardFib::Shared(reader)
    }
}

/// Next hops found in the FIB; a shared FIB's copy stays entered while this is held.
#[derive(Debug)]
pub enum Route<'a> {
    /// From the shard's own FIB.
    Own(&'a NextHops),
    /// From the shared FIB.
    Shared(ReadGuard<'a, NextHops>),
}

impl Deref for Route<'_> {
    type Target = NextHops;

    fn deref(&self) -> &NextHops {
        match self {
            Route::Own(h) => h,
            Route::Shared(g) => g,
        }
    }
}

impl ShardFib {
    /// Runs `lookup` on the FIB; its answer, if any.
    #[inline]
    pub fn find(&self, lookup: impl for<'f> FnOnce(&'f Fib) -> Option<&'f NextHops>) -> Option<Route<'_>> {
        match self {
            ShardFib::Own(fib) => lookup(fib).map(Route::Own),
            ShardFib::Shared(reader) => ReadGuard::try_map(reader.enter()?, lookup).map(Route::Shared),
        }
    }

    /// How many components of `name` the longest route that is a prefix of it has (the
    /// namespace a measuring strategy keeps its measurements under); one exact lookup per
    /// length tried, longest first.
    pub fn route_prefix_len(&self, name: &NameView<'_>) -> Option<usize> {
        (0..=name.len()).rev().find(|&n| self.find(|fib| fib.get(&name.prefix(n))).is_some())
    }

    /// Routes held.
    pub fn len(&self) -> usize {
        match self {
            ShardFib::Own(fib) => fib.len(),
            ShardFib::Shared(reader) => reader.enter().map_or(0, |fib| fib.len()),
        }
    }

    /// True when there is no route.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies a change to the shard's own FIB. A shared FIB is changed by its [`FibWriter`]
    /// only; there this does nothing.
    pub fn apply_own(&mut self, op: &FibOp) {
        if let ShardFib::Own(fib) = self {
            fib.apply(op);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    use nexthop_wire::Name;

    use super::*;

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    #[test]
    fn readers_see_a_change_once_it_is_published() {
        let (mut w, r) = FibWriter::new(Fib::default());
        let shard = ShardFib::from(r.clone());
        let face_of = |f: &ShardFib, n: &str| f.find(|fib| fib.lookup(&name(n).as_view())).map(|h| h.best().unwrap().face);
        w.apply(FibOp::Set(name("/a"), NextHops::single(300, 1)));
        assert_eq!(face_of(&shard, "/a/b"), None, "not yet published");
        assert_eq!(w.publish(), Some(1));
        assert_eq!(w.publish(), None, "nothing new");
        assert_eq!(face_of(&shard, "/a/b"), Some(300));
        w.apply(FibOp::Set(name("/a/b"), NextHops::single(301, 1)));
        w.apply(FibOp::Set(name("/a"), NextHops::new([])));
        w.apply(FibOp::Compact);
        assert_eq!(w.publish(), Some(1));
        assert_eq!(face_of(&shard, "/a/b/c"), Some(301));
        assert_eq!(face_of(&shard, "/a/c"), None);
        // The retired copy caught up too: after another swap the answers are the same.
        w.apply(FibOp::Set(name("/z"), NextHops::single(302, 1)));
        w.publish();
        assert_eq!((face_of(&shard, "/a/b/c"), face_of(&shard, "/a/c"), face_of(&shard, "/z")), (Some(301), None, Some(302)));
        assert_eq!(ShardFib::from(r).len(), 2);
    }

    /// Readers on other threads look up a name whose route the writer keeps moving between two
    /// faces, with the route of a second name removed and added back: every answer is one the
    /// FIB held, lookups never stop, and the last published state is what they end on.
    #[test]
    fn lookups_go_on_while_the_writer_publishes() {
        let (mut w, r) = FibWriter::new(Fib::default());
        w.apply(FibOp::Set(name("/moving"), NextHops::single(300, 1)));
        w.publish();
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let shard = ShardFib::from(r.clone());
                let stop = stop.clone();
                let lookups = Arc::new(AtomicU64::new(0));
                let seen = lookups.clone();
                let t = std::thread::spawn(move || {
                    let moving = name("/moving/x");
                    let blinking = name("/blinking/x");
                    while !stop.load(Ordering::Relaxed) {
                        let face = shard.find(|fib| fib.lookup(&moving.as_view())).map(|h| h.best().unwrap().face);
                        assert!(matches!(face, Some(300 | 301)), "{face:?}");
                        let face = shard.find(|fib| fib.lookup(&blinking.as_view())).map(|h| h.best().unwrap().face);
                        assert!(matches!(face, None | Some(400)), "{face:?}");
                        seen.fetch_add(1, Ordering::Relaxed);
                    }
                });
                (t, lookups)
            })
            .collect();
        // At least 2000 publications, and on until every reader has looked up while they go on
        // (on a loaded machine a reader thread may start late) or has stopped (a failed check,
        // which its join reports).
        let mut i = 0u32;
        loop {
            w.apply(FibOp::Set(name("/moving"), NextHops::single(300 + i % 2, 1)));
            let hops = if i.is_multiple_of(3) { NextHops::new([]) } else { NextHops::single(400, 1) };
            w.apply(FibOp::Set(name("/blinking"), hops));
            w.publish();
            if i >= 1999 && readers.iter().all(|(t, lookups)| lookups.load(Ordering::Relaxed) > 0 || t.is_finished()) {
                break;
            }
            i += 1;
        }
        stop.store(true, Ordering::Relaxed);
        for (t, _) in readers {
            t.join().unwrap();
        }
        let shard = ShardFib::from(r);
        // The last publication's state.
        assert_eq!(shard.find(|fib| fib.lookup(&name("/moving/x").as_view())).unwrap().best().unwrap().face, 300 + i % 2);
        let blinking = shard.find(|fib| fib.lookup(&name("/blinking/x").as_view())).map(|h| h.best().unwrap().face);
        assert_eq!(blinking, (!i.is_multiple_of(3)).then_some(400));
    }
}
