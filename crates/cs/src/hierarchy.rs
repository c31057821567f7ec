//! The hierarchical content store: an [`L1`] in DRAM in front of an [`L2`] on a file, with batch
//! prefetch.
//!
//! # Operation (the paper's serial algorithm, section 3.2)
//! - **lookup**: an L1 hit serves. On an L1 miss, the request's batch ([`BatchKey`]) is read from
//!   the L2 whole, every valid chunk of it is inserted into the L1, and the request is answered
//!   from the L1 — so the next B−1 requests of a stream hit the L1.
//! - **insert** (Data from the network): admitted into the L1 and staged for write-back: chunks
//!   are gathered per batch in a few aligned batch buffers; a batch is written to the L2 when all
//!   its B positions are filled, or, partially filled, when its buffer is needed for a newer batch
//!   (oldest first). A lookup also finds chunks still staged.
//! - **Read-ahead of the next batch** (the optimisation the paper leaves to its reference \[8\];
//!   [`HcsConfig::read_ahead`]): a request for a batch's second chunk whose first chunk was
//!   asked for lately (a stream: a table of 16384 recent chunks remembers, so several streams of
//!   one content are each followed) starts reading the content's next four batches from the L2
//!   in the background (a file L2 with io_uring, or the emulated L2, whose reads then queue at
//!   its throughput τ) — those not in the L1, staged or being read already. Requests in no order
//!   read nothing ahead. Finished reads are put into the L1 at the next
//!   lookup; an L1 miss on a batch still being read waits for that read instead of reading again.
//!   A stream then meets the device only at its first batch.
//! - **Lookup without waiting** ([`HierarchicalStore::lookup_or_read`]): an L1 miss whose batch
//!   is on the L2 starts reading it in the background (into a read-ahead buffer) and answers
//!   [`Lookup::Reading`] instead of waiting, so a forwarding thread goes on with other packets
//!   and asks again once [`HierarchicalStore::poll_reads`] has put the batch into the L1 (the
//!   forwarder parks the Interest meanwhile). With no buffer free, or a file read with pread,
//!   it reads and waits as `lookup` does.
//! - **Chunk reads** (not the paper's; [`HcsConfig::chunk_reads`]): such a background read
//!   brings only the asked chunk's blocks, not its whole batch, when the request is in no order
//!   (the chunk before it was not asked for lately: the same table as the read-ahead's, noted as
//!   requests arrive). Requests in no order would use one chunk of the B read; the device then
//!   moves a B-th of the bytes. The next chunk of a stream reads the whole batch, beside the
//!   chunk read if that is still in flight.
//! - Chunks that come back from the L2 keep the freshness deadline they arrived with.
//! - The L2 answers by batch, so it serves requests for chunk names (a name ending in a segment
//!   number, or any exact name as a batch of one); a CanBePrefix request for a name that is not
//!   itself stored is answered by the L1 only.
//!
//! - **Erase** ([`HierarchicalStore::erase_prefix`], NFD's `cs/erase`): up to a count of the
//!   L1's packets under a name prefix go; the erase that leaves none there in the L1 also
//!   empties the staged chunks under it and marks the prefix erased on the L2, whose batches
//!   are known by key hash and not by name ([`crate::l2::erased`]): the chunks a mark covers
//!   are skipped when read. So an erase repeated until it erases nothing, as clients do, leaves
//!   nothing under the prefix in any tier, and one that stops at its count leaves the L2 as it
//!   was. Only the L1's packets are counted.
//!
//! One store is owned by one thread; sharding ([`crate::shard`]) gives each thread its own.

use std::collections::VecDeque;

use hashbrown::HashMap;
use nexthop_wire::DataView;

use crate::error::{InsertError, L2Error};
use crate::key::{name_hash, BatchKey};
use crate::l1::{L1Config, L1Stats, L1};
use crate::l2::{BatchBuf, L2Config, L2Stats, L2};
use crate::policy::Arrival;
use crate::request::Request;

/// How a hierarchical store is built.
#[derive(Debug, Clone, PartialEq)]
pub struct HcsConfig {
    /// The DRAM tier.
    pub l1: L1Config,
    /// The SSD tier; `None` = a DRAM-only store.
    pub l2: Option<L2Config>,
    /// Batches being gathered for write-back at once.
    pub staging_batches: usize,
    /// Read streams' next batches ahead (see the module overview; a file L2 with io_uring or
    /// the emulated L2; with pread it does nothing).
    pub read_ahead: bool,
    /// Background reads for requests in no order bring only the asked chunk (see the module
    /// overview).
    pub chunk_reads: bool,
}

/// Which tier answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The request hit the L1.
    L1,
    /// The request missed the L1 and its batch was read from the L2.
    L2,
}

/// A served packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served<'a> {
    /// Where it came from.
    pub tier: Tier,
    /// The Data packet.
    pub wire: &'a [u8],
}

/// What [`HierarchicalStore::lookup_or_read`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// Answered now.
    Served(Served<'a>),
    /// Its batch is being read from the L2 (the read started now, or was already in flight):
    /// ask again once [`HierarchicalStore::is_reading`] says `false` for this batch.
    Reading(u64),
    /// Not stored.
    Miss,
}

/// What the store counted (the tiers count their own too: [`HierarchicalStore::l1_stats`],
/// [`HierarchicalStore::l2_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HcsStats {
    /// Lookups.
    pub requests: u64,
    /// Answered from the L1.
    pub l1_hits: u64,
    /// Answered after an L2 batch read (or from the write-back staging).
    pub l2_hits: u64,
    /// Not answered.
    pub misses: u64,
    /// Batch reads or writes the device failed (the store keeps serving from L1).
    pub l2_io_errors: u64,
    /// Chunks read from the L2 that did not decode as Data (after passing the checksum).
    pub l2_bad_packets: u64,
    /// L1 misses whose batch was being read ahead: they waited for that read.
    pub read_ahead_waits: u64,
    /// Lookups without waiting answered [`Lookup::Reading`] (each asks again later, and is
    /// counted again then).
    pub reading: u64,
    /// Background reads those lookups started (the L2's `read_aheads` counts them too).
    pub background_reads: u64,
    /// Data admitted to the L1 only: larger than an L2 chunk slot, so never staged or written.
    pub l1_only: u64,
}

/// Chunks the read-ahead remembers as asked for lately (direct-mapped by chunk).
const RECENT: usize = 1 << 14;
/// "Lately": within this many requests (lookups; an Interest parked and retried counts twice).
/// A stream's next chunk comes after the requests of the other streams and Interests in flight
/// meanwhile (a few hundred for one consumer keeping 256 outstanding); requests in no order over
/// a catalogue of n chunks find their chunk's predecessor this recent about 4096 / n of the
/// time.
const STREAM_ASKS: u32 = 4096;
/// How many batches past a stream's current one the read-ahead keeps read: one is not enough
/// when requests come faster than a batch read (a probe program streaming from a real file with
/// no pause between requests was disk-bound with 2 reads in flight, and faster with 4; the
/// `cs` experiment's figures for 2 and 4 are in docs/content-store.md).
const READ_AHEAD_BATCHES: u64 = 4;

/// The tag of chunk `segment` of the content whose name hash is `content` (never 0, the empty
/// slot, in practice).
fn recent_tag(content: u64, segment: u64) -> u64 {
    content ^ segment.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Where that chunk's tag goes in the table.
fn recent_slot(content: u64, segment: u64) -> usize {
    (recent_tag(content, segment) >> 40) as usize % RECENT
}

/// Batches being gathered for write-back.
#[derive(Debug)]
struct Staging {
    bufs: Vec<BatchBuf>,
    by_key: HashMap<u64, usize>,
    order: VecDeque<usize>,
    free: Vec<usize>,
}

/// DRAM L1 + SSD L2 with batch prefetch.
#[derive(Debug)]
pub struct HierarchicalStore {
    l1: L1,
    l2: Option<L2>,
    staging: Staging,
    batch_chunks: u32,
    read_ahead: bool,
    chunk_reads: bool,
    /// Scratch for the name of the next batch's first chunk.
    next_name: Vec<u8>,
    /// Chunks asked for lately ([`recent_tag`]s) and when (the request count [`Self::asks`]
    /// then), for the read-ahead and the chunk reads to tell streams.
    recent: Vec<(u64, u32)>,
    /// Requests noted in `recent` so far (wrapping).
    asks: u32,
    stats: HcsStats,
}

impl HierarchicalStore {
    /// Builds the tiers (opens the L2 file).
    ///
    /// # Errors
    /// Any [`L2::open`] error.
    pub fn new(cfg: HcsConfig) -> Result<Self, L2Error> {
        let l2 = cfg.l2.map(L2::open).transpose()?;
        let batch_chunks = l2.as_ref().map_or(1, |l2| l2.config().batch_chunks);
        // Streams are told apart only for the L2 (the table is for its reads).
        let l2_present = l2.is_some();
        let bufs: Vec<BatchBuf> = match &l2 {
            Some(l2) => (0..cfg.staging_batches.max(1)).map(|_| l2.batch_buf(0)).collect(),
            None => Vec::new(),
        };
        let staging = Staging { free: (0..bufs.len()).rev().collect(), bufs, by_key: HashMap::new(), order: VecDeque::new() };
        Ok(HierarchicalStore {
            l1: L1::new(cfg.l1),
            l2,
            staging,
            batch_chunks,
            read_ahead: cfg.read_ahead,
            chunk_reads: cfg.chunk_reads,
            next_name: Vec::new(),
            recent: if l2_present && (cfg.read_ahead || cfg.chunk_reads) { vec![(0, 0); RECENT] } else { Vec::new() },
            asks: 0,
            stats: HcsStats::default(),
        })
    }

    /// The L1.
    pub fn l1(&self) -> &L1 {
        &self.l1
    }

    /// The L2, if any.
    pub fn l2(&self) -> Option<&L2> {
        self.l2.as_ref()
    }

    /// The L2, writable (tests inject faults).
    pub fn l2_mut(&mut self) -> Option<&mut L2> {
        self.l2.as_mut()
    }

    /// What the store counted.
    pub fn stats(&self) -> HcsStats {
        self.stats
    }

    /// What the L1 counted.
    pub fn l1_stats(&self) -> L1Stats {
        self.l1.stats()
    }

    /// What the L2 counted.
    pub fn l2_stats(&self) -> L2Stats {
        self.l2.as_ref().map(L2::stats).unwrap_or_default()
    }

    /// Chunks per batch.
    pub fn batch_chunks(&self) -> u32 {
        self.batch_chunks
    }

    /// The packet answering `req` at `now_ms`, from the L1 or, prefetching its batch, the L2
    /// (waiting for the read).
    pub fn lookup(&mut self, req: &Request<'_>, now_ms: u64) -> Option<Served<'_>> {
        match self.answer(req, now_ms, true) {
            Lookup::Served(s) => Some(s),
            Lookup::Reading(_) | Lookup::Miss => None,
        }
    }

    /// As [`HierarchicalStore::lookup`], but an L1 miss whose batch must come from the L2
    /// starts that read and answers [`Lookup::Reading`] without waiting for it (see the module
    /// overview); it waits only when the read cannot run in the background.
    pub fn lookup_or_read(&mut self, req: &Request<'_>, now_ms: u64) -> Lookup<'_> {
        self.answer(req, now_ms, false)
    }

    /// Puts the batches whose background reads have finished into the L1 (without waiting),
    /// after resetting [`HierarchicalStore::signal_fd`]; returns how many.
    pub fn poll_reads(&mut self) -> usize {
        if let Some(l2) = self.l2.as_mut() {
            l2.clear_signal();
        }
        self.collect_reads()
    }

    /// A file descriptor that becomes readable when a background read of the L2 completes (a
    /// file with io_uring; `None` otherwise: poll instead), for an event loop to wait on.
    pub fn signal_fd(&self) -> Option<std::os::fd::RawFd> {
        self.l2.as_ref().and_then(L2::signal_fd)
    }

    /// Puts the batches whose background reads have finished into the L1.
    fn collect_reads(&mut self) -> usize {
        let (l1, stats) = (&mut self.l1, &mut self.stats);
        let Some(l2) = self.l2.as_mut() else { return 0 };
        l2.collect_read_aheads(&mut |c| {
            insert_chunk(l1, stats, c.wire, c.fresh_until_ms);
        })
    }

    /// Whether batch `batch` (from [`Lookup::Reading`]) is still being read.
    pub fn is_reading(&self, batch: u64) -> bool {
        self.l2.as_ref().is_some_and(|l2| l2.is_reading_ahead(batch))
    }

    fn answer(&mut self, req: &Request<'_>, now_ms: u64, wait: bool) -> Lookup<'_> {
        self.stats.requests += 1;
        if self.read_ahead || !wait {
            self.collect_reads();
        }
        // Where the request sits on the L2 (parsed once per lookup, and only with an L2), and
        // whether it continues a stream.
        let batch = self.l2.is_some().then(|| BatchKey::of(req.name, self.batch_chunks));
        let stream = batch.as_ref().is_some_and(|b| self.note_asked(b, req.name));
        if let Some(slot) = self.l1.lookup_slot(req, now_ms) {
            self.stats.l1_hits += 1;
            if let Some(b) = &batch {
                self.read_next_batch_ahead(b, stream);
            }
            return Lookup::Served(Served { tier: Tier::L1, wire: self.l1.slot_wire(slot) });
        }
        if let Some(batch) = &batch {
            if !wait {
                if let Some(key) = self.start_reading(batch, stream) {
                    self.stats.reading += 1;
                    return Lookup::Reading(key);
                }
            }
            if self.prefetch(batch) {
                if let Some(slot) = self.l1.lookup_slot(req, now_ms) {
                    self.stats.l2_hits += 1;
                    self.read_next_batch_ahead(batch, stream);
                    return Lookup::Served(Served { tier: Tier::L2, wire: self.l1.slot_wire(slot) });
                }
            }
        }
        self.stats.misses += 1;
        Lookup::Miss
    }

    /// The key of `batch` if it is now being read from the L2 in the background (the read
    /// started here or earlier: the whole batch, or with chunk reads and no `stream` only the
    /// chunk's blocks); `None` when it is staged, not on the L2, or cannot be read in the
    /// background (no free buffer, pread, a failed submission — counted).
    fn start_reading(&mut self, batch: &BatchKey<'_>, stream: bool) -> Option<u64> {
        let key = batch.hash();
        if self.staging.by_key.contains_key(&key) {
            return None;
        }
        let l2 = self.l2.as_mut()?;
        if l2.read_ahead_covers(key, batch.position) {
            return Some(key);
        }
        // Not brought by a read in flight (none, or another chunk's): read beside it.
        let chunk = self.chunk_reads && !stream;
        let started = if chunk { l2.start_chunk_read(key, batch.position) } else { l2.start_read_ahead(key) };
        match started {
            Ok(true) => {
                self.stats.background_reads += 1;
                Some(key)
            }
            // No buffer free: wait for a read in flight, if any, then ask again.
            Ok(false) => l2.is_reading_ahead(key).then_some(key),
            Err(_) => {
                self.stats.l2_io_errors += 1;
                None
            }
        }
    }

    /// Notes that the chunk named `name` (at `key`) was asked for; whether the chunk before it
    /// was asked for lately — within the last [`STREAM_ASKS`] requests (a stream: whoever asked
    /// for it, so several streams of one content are each followed). `false` for a content of
    /// one chunk, and with neither read-ahead nor chunk reads (no table).
    fn note_asked(&mut self, key: &BatchKey<'_>, name: &[u8]) -> bool {
        if self.recent.is_empty() || !key.is_segmented(name) {
            return false;
        }
        let content = name_hash(key.content);
        let segment = key.batch * u64::from(self.batch_chunks) + u64::from(key.position);
        self.asks = self.asks.wrapping_add(1);
        let follows = segment > 0 && {
            let (tag, at) = self.recent[recent_slot(content, segment - 1)];
            tag == recent_tag(content, segment - 1) && self.asks.wrapping_sub(at) <= STREAM_ASKS
        };
        self.recent[recent_slot(content, segment)] = (recent_tag(content, segment), self.asks);
        follows
    }

    /// After serving the chunk at `key`: if it is in a `stream` and its batch's second, starts
    /// reading the content's next [`READ_AHEAD_BATCHES`] batches that are not read yet.
    fn read_next_batch_ahead(&mut self, key: &BatchKey<'_>, stream: bool) {
        if !self.read_ahead || !stream {
            return;
        }
        // Once per batch of a stream: keep the next READ_AHEAD_BATCHES batches read (those read
        // already, in the L1 or in flight, are passed over).
        if key.position == 1.min(self.batch_chunks - 1) {
            for ahead in 1..=READ_AHEAD_BATCHES {
                self.start_read_ahead(key.batch_after(ahead));
            }
        }
    }

    /// Starts reading batch `next` ahead unless its first chunk is in the L1, it is staged, the
    /// L2 does not hold it or is reading it already.
    fn start_read_ahead(&mut self, next: BatchKey<'_>) {
        let hash = next.hash();
        let Some(l2) = self.l2.as_mut() else { return };
        if self.staging.by_key.contains_key(&hash) || !l2.contains(hash) || l2.is_reading_ahead(hash) {
            return;
        }
        next.chunk_name(0, self.batch_chunks, &mut self.next_name);
        if self.l1.contains(&self.next_name) {
            return;
        }
        if l2.start_read_ahead(hash).is_err() {
            self.stats.l2_io_errors += 1;
        }
    }

    /// Brings `batch` into the L1 from the staging buffers or the L2; whether any chunk came.
    fn prefetch(&mut self, batch: &BatchKey<'_>) -> bool {
        let key = batch.hash();
        if let Some(&i) = self.staging.by_key.get(&key) {
            let buf = &self.staging.bufs[i];
            let mut any = false;
            for p in 0..self.batch_chunks {
                if let Some(c) = buf.get(p) {
                    any |= insert_chunk(&mut self.l1, &mut self.stats, c.wire, c.fresh_until_ms);
                }
            }
            return any;
        }
        let Some(l2) = self.l2.as_mut() else { return false };
        if l2.is_reading_ahead(key) {
            self.stats.read_ahead_waits += 1;
            let covers = l2.read_ahead_covers(key, batch.position);
            let (l1, stats) = (&mut self.l1, &mut self.stats);
            let mut any = false;
            let res = l2.finish_read_ahead(key, &mut |c| any |= insert_chunk(l1, stats, c.wire, c.fresh_until_ms));
            match res {
                Ok(true) if covers => return any,
                Ok(true) => {}  // Another chunk's read: read the batch below.
                Ok(false) => {} // No longer its batch's copy: read it below.
                Err(_) => {
                    self.stats.l2_io_errors += 1;
                    return false;
                }
            }
        }
        match l2.read(key) {
            Ok(Some(batch)) => {
                let mut any = false;
                for c in batch.iter() {
                    any |= insert_chunk(&mut self.l1, &mut self.stats, c.wire, c.fresh_until_ms);
                }
                any
            }
            Ok(None) => false,
            Err(_) => {
                self.stats.l2_io_errors += 1;
                false
            }
        }
    }

    /// Erases up to `max` of the L1's packets whose names start with `prefix` (TLV-VALUE,
    /// whole components) and returns how many it erased and whether more remain in the L1.
    /// When none remain, the prefix is also erased from the staging buffers and the L2 (see
    /// the module overview) — unless `max` is 0: an erase of nothing erases nothing.
    pub fn erase_prefix(&mut self, prefix: &[u8], max: usize) -> (usize, bool) {
        let (erased, more) = self.l1.erase_prefix(prefix, max);
        if !more && max > 0 {
            let emptied: Vec<usize> = self
                .staging
                .order
                .iter()
                .copied()
                .filter(|&i| {
                    let buf = &mut self.staging.bufs[i];
                    buf.erase_prefix(prefix);
                    buf.filled() == 0
                })
                .collect();
            for i in emptied {
                self.unstage(i);
            }
            if let Some(l2) = self.l2.as_mut() {
                l2.erase_prefix(prefix);
            }
        }
        (erased, more)
    }

    /// Packets the L1 may hold ([`HierarchicalStore::set_l1_limit`]).
    pub fn l1_limit(&self) -> u32 {
        self.l1.limit()
    }

    /// Lets the L1 hold at most `limit` packets (no more than its slots; 0: nothing is stored,
    /// in either tier), evicting down to it; returns the limit taken.
    pub fn set_l1_limit(&mut self, limit: u32) -> u32 {
        self.l1.set_limit(limit)
    }

    /// Admits a Data packet that arrived at `now_ms` into the L1 and stages it for the L2 — or,
    /// larger than an L2 chunk slot, into the L1 only ([`HcsStats::l1_only`]): it is served while
    /// the L1 keeps it, and not from the L2 after.
    ///
    /// # Errors
    /// [`InsertError`] when the packet is malformed or larger than an L1 slot; nothing changes
    /// then.
    pub fn insert(&mut self, wire: &[u8], now_ms: u64) -> Result<(), InsertError> {
        self.insert_arrived(wire, now_ms, Arrival::Solicited)
    }

    /// [`HierarchicalStore::insert`] for a packet that arrived as `arrival` (unsolicited Data
    /// an unsolicited-Data policy admits: the first to go under [`crate::Policy::PriorityFifo`]).
    ///
    /// # Errors
    /// As [`HierarchicalStore::insert`].
    pub fn insert_arrived(&mut self, wire: &[u8], now_ms: u64, arrival: Arrival) -> Result<(), InsertError> {
        let data = DataView::decode(wire)?;
        if wire.len() > self.l1_max() {
            return Err(InsertError::TooLarge { len: wire.len(), max: self.l1_max() });
        }
        if self.l1.limit() == 0 {
            return Ok(()); // Configured to hold nothing.
        }
        self.l1.insert_arrived(&data, now_ms, arrival)?;
        if wire.len() > self.l2_max() {
            self.stats.l1_only += 1; // (never without an L2: no limit then)
            return Ok(());
        }
        self.stage(&data, now_ms)
    }

    /// Stores a Data packet in the L2 only (through the staging buffers), as when filling the
    /// L2 with a catalogue before a run.
    ///
    /// # Errors
    /// As [`HierarchicalStore::insert`].
    pub fn insert_l2_only(&mut self, wire: &[u8], now_ms: u64) -> Result<(), InsertError> {
        let data = DataView::decode(wire)?;
        self.check_fits(wire)?;
        self.stage(&data, now_ms)
    }

    /// The largest packet an L1 slot holds.
    fn l1_max(&self) -> usize {
        self.l1.config().slot_bytes as usize
    }

    /// The largest packet an L2 chunk slot holds (no limit without an L2).
    fn l2_max(&self) -> usize {
        self.l2.as_ref().map_or(usize::MAX, |l2| l2.config().chunk_slot_bytes as usize - crate::l2::HEADER_BYTES)
    }

    fn check_fits(&self, wire: &[u8]) -> Result<(), InsertError> {
        let max = self.l1_max().min(self.l2_max());
        if wire.len() > max {
            return Err(InsertError::TooLarge { len: wire.len(), max });
        }
        Ok(())
    }

    fn stage(&mut self, data: &DataView<'_>, now_ms: u64) -> Result<(), InsertError> {
        if self.l2.is_none() {
            return Ok(());
        }
        let key = BatchKey::of(data.name().value(), self.batch_chunks);
        let hash = key.hash();
        let i = match self.staging.by_key.get(&hash) {
            Some(&i) => i,
            None => {
                let i = match self.staging.free.pop() {
                    Some(i) => i,
                    None => {
                        let oldest = self.staging.order.front().copied().expect("staging holds a batch");
                        self.write_back(oldest);
                        self.staging.free.pop().expect("a buffer was freed")
                    }
                };
                self.staging.bufs[i].reset(hash);
                self.staging.by_key.insert(hash, i);
                self.staging.order.push_back(i);
                i
            }
        };
        let fresh_until = now_ms.saturating_add(data.freshness_period_ms());
        self.staging.bufs[i].put(key.position, fresh_until, data.wire())?;
        if self.staging.bufs[i].is_full() {
            self.write_back(i);
        }
        Ok(())
    }

    /// Writes staged batch `i` to the L2 and frees its buffer. A partial batch whose key the L2
    /// already holds is first completed from the stored copy, so re-admitting one chunk of a
    /// stored batch does not drop the others.
    fn write_back(&mut self, i: usize) {
        let buf = &mut self.staging.bufs[i];
        if let Some(l2) = self.l2.as_mut() {
            if !buf.is_full() && l2.contains(buf.key()) {
                match l2.read(buf.key()) {
                    Ok(Some(stored)) => {
                        for c in stored.iter() {
                            if !buf.has(u32::from(c.position)) {
                                // Same slot size on both sides: a stored chunk fits.
                                let _ = buf.put(u32::from(c.position), c.fresh_until_ms, c.wire);
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(_) => self.stats.l2_io_errors += 1,
                }
            }
            if l2.write(buf).is_err() {
                self.stats.l2_io_errors += 1;
            }
        }
        self.unstage(i);
    }

    /// Frees staging buffer `i` (written back or emptied).
    fn unstage(&mut self, i: usize) {
        let key = self.staging.bufs[i].key();
        self.staging.by_key.remove(&key);
        self.staging.order.retain(|&j| j != i);
        self.staging.free.push(i);
    }

    /// Writes every staged batch and waits for the writes.
    ///
    /// # Errors
    /// When waiting for the device fails.
    pub fn flush(&mut self) -> std::io::Result<()> {
        while let Some(&i) = self.staging.order.front() {
            self.write_back(i);
        }
        self.l2.as_mut().map_or(Ok(()), L2::sync)
    }
}

/// Inserts a chunk read back from the staging or the L2 into the L1; whether it was taken.
fn insert_chunk(l1: &mut L1, stats: &mut HcsStats, wire: &[u8], fresh_until_ms: u64) -> bool {
    match DataView::decode(wire) {
        Ok(data) => l1.insert_until(&data, fresh_until_ms).is_ok(),
        Err(_) => {
            stats.l2_bad_packets += 1;
            false
        }
    }
}
