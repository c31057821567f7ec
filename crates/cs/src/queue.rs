//! Intrusive doubly linked queues over slot numbers.
//!
//! The replacement policies keep their order (FIFO insertion order, LRU recency, S3-FIFO's small
//! and main queues) as linked lists threaded through two arrays indexed by slot, so moving a slot
//! costs a few array writes and no allocation. A slot is in at most one queue at a time; which one
//! is the policy's business. New entries go in at the head, victims come from the tail.

/// "No slot" in the link arrays.
const NIL: u32 = u32::MAX;

/// The link arrays shared by every queue of one policy.
#[derive(Debug, Clone)]
pub(crate) struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

/// One queue: its ends and length; the links live in [`Links`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queue {
    head: u32,
    tail: u32,
    len: u32,
}

impl Links {
    /// Links for `slots` slots.
    pub(crate) fn new(slots: u32) -> Self {
        Links { prev: vec![NIL; slots as usize], next: vec![NIL; slots as usize] }
    }

    /// Puts `slot` (in no queue) at the head of `q`.
    pub(crate) fn push_head(&mut self, q: &mut Queue, slot: u32) {
        let s = slot as usize;
        self.prev[s] = NIL;
        self.next[s] = q.head;
        if q.head == NIL {
            q.tail = slot;
        } else {
            self.prev[q.head as usize] = slot;
        }
        q.head = slot;
        q.len += 1;
    }

    /// Takes `slot` out of `q`, which must hold it.
    pub(crate) fn unlink(&mut self, q: &mut Queue, slot: u32) {
        let s = slot as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p == NIL {
            q.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            q.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[s] = NIL;
        self.next[s] = NIL;
        q.len -= 1;
    }

    /// Takes the tail (oldest) slot out of `q`.
    pub(crate) fn pop_tail(&mut self, q: &mut Queue) -> Option<u32> {
        let t = q.tail;
        if t == NIL {
            return None;
        }
        self.unlink(q, t);
        Some(t)
    }
}

impl Queue {
    /// An empty queue.
    pub(crate) const fn new() -> Self {
        Queue { head: NIL, tail: NIL, len: 0 }
    }

    /// Slots in the queue.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_and_unlink() {
        let mut links = Links::new(8);
        let mut q = Queue::new();
        for s in [3, 1, 4, 5] {
            links.push_head(&mut q, s);
        }
        assert_eq!(q.len(), 4);
        links.unlink(&mut q, 4);
        links.unlink(&mut q, 3);
        assert_eq!(links.pop_tail(&mut q), Some(1));
        assert_eq!(links.pop_tail(&mut q), Some(5));
        assert_eq!(links.pop_tail(&mut q), None);
        assert_eq!(q.len(), 0);
        links.push_head(&mut q, 4);
        assert_eq!(links.pop_tail(&mut q), Some(4));
    }
}
