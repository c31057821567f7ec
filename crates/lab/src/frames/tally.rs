//! The sink's accounting: per flow, which sequence numbers came, so that frames lost,
//! duplicated and reordered are counted exactly (a bit per sequence number sent).

/// One flow's record.
#[derive(Clone, Debug, Default)]
struct Flow {
    seen: Vec<u64>,
    unique: u64,
    /// The highest sequence number seen, plus one (0: none yet).
    next: u64,
}

/// What the sink counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Intact generator frames received (duplicates included).
    pub received: u64,
    /// Sequence numbers received at least once.
    pub unique: u64,
    /// Frames received again.
    pub duplicated: u64,
    /// Frames that came after a higher sequence number of their flow.
    pub reordered: u64,
    /// Generator frames with a damaged header or payload.
    pub corrupted: u64,
    /// Intact generator frames that came out of the wrong port or with the wrong addresses
    /// (also counted as received: they are not lost).
    pub misrouted: u64,
    /// Frames of other traffic.
    pub foreign: u64,
}

/// The sink's tally over a number of flows.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    flows: Vec<Flow>,
    counts: Counts,
}

/// The most flows a tally follows (a frame of a higher flow is counted as corrupted).
pub const MAX_FLOWS: usize = 1024;

impl Tally {
    /// An empty tally.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Counts frame `seq` of `flow`.
    pub fn intact(&mut self, flow: u16, seq: u64) {
        let f = usize::from(flow);
        if f >= MAX_FLOWS {
            self.counts.corrupted += 1;
            return;
        }
        if self.flows.len() <= f {
            self.flows.resize_with(f + 1, Flow::default);
        }
        let flow = &mut self.flows[f];
        self.counts.received += 1;
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if flow.seen.len() <= word {
            flow.seen.resize(word + 1, 0);
        }
        if flow.seen[word] >> bit & 1 == 1 {
            self.counts.duplicated += 1;
            return;
        }
        flow.seen[word] |= 1 << bit;
        flow.unique += 1;
        self.counts.unique += 1;
        if seq + 1 < flow.next {
            self.counts.reordered += 1;
        }
        flow.next = flow.next.max(seq + 1);
    }

    /// Counts a damaged generator frame.
    pub fn corrupted(&mut self) {
        self.counts.corrupted += 1;
    }

    /// Counts frame `seq` of `flow`, which arrived intact but misrouted.
    pub fn misrouted(&mut self, flow: u16, seq: u64) {
        self.counts.misrouted += 1;
        self.intact(flow, seq);
    }

    /// Counts a frame of other traffic.
    pub fn foreign(&mut self) {
        self.counts.foreign += 1;
    }

    /// The counts so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Frames lost of `sent` sent in all (over every flow).
    pub fn lost(&self, sent: u64) -> u64 {
        sent.saturating_sub(self.counts.unique)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_duplicates_and_reordering_are_each_counted() {
        let mut t = Tally::new();
        for seq in [0, 1, 3, 2, 2, 5] {
            t.intact(0, seq);
        }
        t.intact(1, 0);
        t.corrupted();
        let c = t.counts().clone();
        assert_eq!((c.received, c.unique, c.duplicated, c.reordered, c.corrupted), (7, 6, 1, 1, 1));
        // Sent: 0..6 on flow 0 (4 missing? no: 0,1,2,3,5 came, 4 lost) and 0 on flow 1.
        assert_eq!(t.lost(7), 1);
        t.intact(5000, 1);
        assert_eq!(t.counts().corrupted, 2, "a flow out of range");
    }
}
