//! The L2: batches of B chunks in fixed slots of a preallocated file (or of emulated memory),
//! indexed in DRAM by batch key.
//!
//! # Overview
//! - A batch slot is B chunk slots ([`layout`]) written and read whole, so one request that
//!   misses L1 moves a whole batch at the device's sequential rate.
//! - The index maps a batch key hash ([`crate::BatchKey::hash`]) to its slot; each slot records
//!   its owner so reuse unlinks the old batch. Slots are reused FIFO (oldest written first) or by
//!   CLOCK (a batch read since the hand last passed gets a second chance).
//! - Every chunk carries a CRC-32C; a chunk that fails it (flipped bytes, torn write) is counted
//!   in [`L2Stats::corrupt_chunks`] and never returned.
//! - Backings: [`file`](mod@file) (real file or block device, O_DIRECT, io_uring or pread) and [`memory`]
//!   (the paper's emulation: DRAM with a busy-wait delay modelling throughput τ).
//! - Read-ahead (a file with io_uring, or the emulation, whose reads queue at throughput τ):
//!   [`L2::start_read_ahead`] begins reading a batch in the background, [`L2::start_chunk_read`]
//!   only the blocks that hold one of its chunks;
//!   [`L2::collect_read_aheads`] hands over the chunks of those that finished,
//!   [`L2::finish_read_ahead`] waits for one. A batch whose slot was reused meanwhile is dropped.
//! - The index is not persisted: an L2 starts empty after a restart (it is a cache).
//! - Erasing a name prefix ([`L2::erase_prefix`], `cs/erase`) leaves a mark that hides the
//!   prefix's chunks in batches written before it when they are read ([`erased`]).

pub mod buf;
pub mod erased;
#[allow(unsafe_code)]
pub mod file;
pub mod layout;
pub mod memory;

use std::io;
use std::ops::Range;

use hashbrown::HashMap;

pub use buf::{AlignedBuf, ALIGN};
pub use erased::Erased;
pub use file::{DirectIo, FileConfig, FileDevice, IoEngine, READ_AHEAD_BUFFERS};
pub use layout::{Decoded, StoredChunk, HEADER_BYTES};
pub use memory::MemoryDevice;

use crate::error::{InsertError, L2Error};

/// How batch slots are reused once the L2 is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlotReuse {
    /// The slot written longest ago.
    #[default]
    Fifo,
    /// CLOCK: slots whose batch was read since the hand's last pass are skipped once.
    Clock,
}

/// Where the batch slots live.
#[derive(Debug, Clone, PartialEq)]
pub enum Backing {
    /// A real file or block device.
    File(FileConfig),
    /// DRAM, with an optional emulated throughput τ in bits per second (the paper's knob).
    Memory {
        /// τ; `None` = as fast as memory.
        tau_bits_per_s: Option<f64>,
    },
}

/// How an L2 is sized and backed.
#[derive(Debug, Clone, PartialEq)]
pub struct L2Config {
    /// Bytes of batch slots.
    pub capacity_bytes: u64,
    /// Chunks per batch (B).
    pub batch_chunks: u32,
    /// Bytes per chunk slot (header + the largest Data packet), more than the header; any size
    /// (a batch slot is padded to whole device blocks).
    pub chunk_slot_bytes: u32,
    /// Slot reuse.
    pub reuse: SlotReuse,
    /// File or memory.
    pub backing: Backing,
}

impl L2Config {
    /// The paper's defaults: B = 10 chunks of 8 KB, FIFO reuse.
    pub fn new(capacity_bytes: u64, backing: Backing) -> Self {
        L2Config { capacity_bytes, batch_chunks: 10, chunk_slot_bytes: 8192, reuse: SlotReuse::Fifo, backing }
    }

    /// Bytes per batch slot: B chunk slots, padded to whole device blocks ([`ALIGN`]) so that
    /// every batch slot starts on one (O_DIRECT).
    pub fn batch_bytes(&self) -> usize {
        (self.batch_chunks as usize * self.chunk_slot_bytes as usize).next_multiple_of(ALIGN)
    }

    /// Batch slots that fit.
    pub fn slots(&self) -> u64 {
        self.capacity_bytes / self.batch_bytes().max(1) as u64
    }
}

/// What the L2 counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Stats {
    /// Batch reads.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Batch writes.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Chunks that failed the checksum or framing: counted, not served.
    pub corrupt_chunks: u64,
    /// Batch reads that failed at the device.
    pub read_errors: u64,
    /// Batches overwritten to make room.
    pub replaced: u64,
    /// Read-aheads started (their reads count in `reads` once collected).
    pub read_aheads: u64,
    /// Read-aheads whose batch was replaced before they were collected (dropped unread).
    pub read_aheads_stale: u64,
    /// Of `read_aheads`, those that read one chunk's blocks, not the whole batch.
    pub chunk_reads: u64,
    /// Chunks read back that an erase had covered: skipped.
    pub erased_chunks: u64,
    /// Times the L2 emptied itself because too many erases were pending ([`erased::MAX_MARKS`]).
    pub erase_clears: u64,
}

enum Device {
    File(FileDevice),
    Memory(MemoryDevice),
}

/// A batch being assembled for write-back: B chunk slots in an aligned buffer.
#[derive(Debug)]
pub struct BatchBuf {
    buf: AlignedBuf,
    chunk_slot: usize,
    key: u64,
    filled: Vec<bool>,
}

impl BatchBuf {
    /// An empty batch of `cfg`'s shape: its batch slot's bytes ([`L2Config::batch_bytes`], the
    /// padding staying zero).
    fn new(cfg: &L2Config) -> Self {
        BatchBuf {
            buf: AlignedBuf::new(cfg.batch_bytes()),
            chunk_slot: cfg.chunk_slot_bytes as usize,
            key: 0,
            filled: vec![false; cfg.batch_chunks as usize],
        }
    }

    /// Empties it and gives it to batch `key`.
    pub fn reset(&mut self, key: u64) {
        self.key = key;
        for p in 0..self.filled.len() {
            layout::clear(&mut self.buf.as_mut_slice()[p * self.chunk_slot..]);
            self.filled[p] = false;
        }
    }

    /// The batch key.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Puts a chunk at `position`.
    ///
    /// # Errors
    /// [`InsertError::TooLarge`] when it does not fit a chunk slot (the batch is unchanged).
    pub fn put(&mut self, position: u32, fresh_until_ms: u64, wire: &[u8]) -> Result<(), InsertError> {
        let p = position as usize;
        if p >= self.filled.len() {
            return Err(InsertError::TooLarge { len: p, max: self.filled.len() });
        }
        let slot = &mut self.buf.as_mut_slice()[p * self.chunk_slot..(p + 1) * self.chunk_slot];
        layout::encode(slot, self.key, position as u16, fresh_until_ms, wire)?;
        self.filled[p] = true;
        Ok(())
    }

    /// The chunk staged at `position`, if any.
    pub fn get(&self, position: u32) -> Option<StoredChunk<'_>> {
        let p = position as usize;
        if !*self.filled.get(p)? {
            return None;
        }
        match layout::decode(&self.buf.as_slice()[p * self.chunk_slot..(p + 1) * self.chunk_slot], self.key, position as u16) {
            Decoded::Chunk(c) => Some(c),
            Decoded::Empty | Decoded::Corrupt => None,
        }
    }

    /// Whether `position` is filled.
    pub fn has(&self, position: u32) -> bool {
        self.filled.get(position as usize).copied().unwrap_or(false)
    }

    /// Positions filled.
    pub fn filled(&self) -> usize {
        self.filled.iter().filter(|&&f| f).count()
    }

    /// Whether every position is filled.
    pub fn is_full(&self) -> bool {
        self.filled.iter().all(|&f| f)
    }

    /// Empties the positions whose chunk's name starts with `prefix` (TLV-VALUE, whole
    /// components).
    pub fn erase_prefix(&mut self, prefix: &[u8]) {
        for p in 0..self.filled.len() as u32 {
            if self.get(p).is_some_and(|c| erased::is_under(c.wire, prefix)) {
                layout::clear(&mut self.buf.as_mut_slice()[p as usize * self.chunk_slot..]);
                self.filled[p as usize] = false;
            }
        }
    }
}

/// One chunk's place in the read buffer.
#[derive(Debug, Clone, Copy)]
struct ChunkRef {
    position: u16,
    fresh_until_ms: u64,
    start: usize,
    len: usize,
}

/// The valid chunks of a batch just read.
#[derive(Debug)]
pub struct ReadBatch<'a> {
    buf: &'a [u8],
    chunks: &'a [ChunkRef],
}

impl<'a> ReadBatch<'a> {
    /// Valid chunks read.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether no valid chunk was read.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The chunks, in position order.
    pub fn iter(&self) -> impl Iterator<Item = StoredChunk<'a>> + '_ {
        self.chunks.iter().map(|c| StoredChunk {
            position: c.position,
            fresh_until_ms: c.fresh_until_ms,
            wire: &self.buf[c.start..c.start + c.len],
        })
    }
}

/// The SSD tier.
pub struct L2 {
    cfg: L2Config,
    device: Device,
    slots: u32,
    index: HashMap<u64, u32>,
    owner: Vec<Option<u64>>,
    referenced: Vec<bool>,
    /// Per slot, the number of the write that put its batch there (writes count from 1).
    written: Vec<u64>,
    /// The last write's number.
    writes: u64,
    /// Erased prefixes that may cover stored batches.
    erased: Erased,
    next_fresh: u32,
    hand: u32,
    read_buf: AlignedBuf,
    read_chunks: Vec<ChunkRef>,
    /// Per read-ahead buffer, the batch it is reading for and which bytes of its slot (started
    /// and not yet collected); `None` for a free buffer or one whose batch was rewritten
    /// meanwhile.
    reading_ahead: Vec<Option<Pending>>,
    stats: L2Stats,
}

impl core::fmt::Debug for L2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("L2").field("cfg", &self.cfg).field("batches", &self.index.len()).field("stats", &self.stats).finish_non_exhaustive()
    }
}

impl L2 {
    /// Opens the L2.
    ///
    /// # Errors
    /// An inconsistent configuration, or any [`FileDevice::open`] error.
    pub fn open(cfg: L2Config) -> Result<Self, L2Error> {
        let batch_bytes = cfg.batch_bytes();
        if !(1..=1024).contains(&cfg.batch_chunks) {
            return Err(L2Error::Config(format!("batch of {} chunks (1..=1024)", cfg.batch_chunks)));
        }
        if (cfg.chunk_slot_bytes as usize) <= HEADER_BYTES {
            return Err(L2Error::Config(format!(
                "chunk slot of {} bytes holds no more than its {HEADER_BYTES}-byte header",
                cfg.chunk_slot_bytes
            )));
        }
        let slots = u32::try_from(cfg.slots()).map_err(|_| L2Error::Config("more than 2^32 batch slots".into()))?;
        if slots == 0 {
            return Err(L2Error::Config(format!("{} bytes hold no {batch_bytes}-byte batch", cfg.capacity_bytes)));
        }
        let device = match &cfg.backing {
            Backing::File(f) => Device::File(FileDevice::open(f, u64::from(slots) * batch_bytes as u64, batch_bytes)?),
            Backing::Memory { tau_bits_per_s } => Device::Memory(MemoryDevice::new(slots, batch_bytes, *tau_bits_per_s)),
        };
        Ok(L2 {
            device,
            slots,
            index: HashMap::with_capacity(slots as usize),
            owner: vec![None; slots as usize],
            referenced: vec![false; slots as usize],
            written: vec![0; slots as usize],
            writes: 0,
            erased: Erased::default(),
            next_fresh: 0,
            hand: 0,
            read_buf: AlignedBuf::new(batch_bytes),
            read_chunks: Vec::with_capacity(cfg.batch_chunks as usize),
            reading_ahead: vec![None; READ_AHEAD_BUFFERS],
            stats: L2Stats::default(),
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &L2Config {
        &self.cfg
    }

    /// What it counted.
    pub fn stats(&self) -> L2Stats {
        self.stats
    }

    /// Batches stored.
    pub fn batches(&self) -> usize {
        self.index.len()
    }

    /// Batch slots.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// What backs it, in words: `file io_uring O_DIRECT`, `memory τ=4 Gbps`, ….
    pub fn describe(&self) -> String {
        match &self.device {
            Device::File(f) => format!("file {} {}", f.engine_name(), if f.is_direct() { "O_DIRECT" } else { "buffered" }),
            Device::Memory(m) => match m.delay() {
                Some(_) => format!("memory τ={:.0} Gbps", self.tau_bits_per_s().unwrap_or(0.0) / 1e9),
                None => "memory".to_string(),
            },
        }
    }

    fn tau_bits_per_s(&self) -> Option<f64> {
        match &self.cfg.backing {
            Backing::Memory { tau_bits_per_s } => *tau_bits_per_s,
            Backing::File(_) => None,
        }
    }

    /// An empty batch buffer for [`L2::write`].
    pub fn batch_buf(&self, key: u64) -> BatchBuf {
        let mut b = BatchBuf::new(&self.cfg);
        b.reset(key);
        b
    }

    /// Whether batch `key` is stored.
    pub fn contains(&self, key: u64) -> bool {
        self.index.contains_key(&key)
    }

    /// Writes a batch (replacing an older copy of the same batch, else taking the next slot).
    ///
    /// # Errors
    /// When the device refuses the write; the batch is then not indexed.
    pub fn write(&mut self, batch: &BatchBuf) -> io::Result<()> {
        let key = batch.key;
        let slot = match self.index.get(&key) {
            Some(&slot) => slot,
            None => self.take_slot(),
        };
        let res = match &mut self.device {
            Device::File(f) => f.write(slot, batch.buf.as_slice()),
            Device::Memory(m) => {
                m.write(slot, batch.buf.as_slice());
                Ok(())
            }
        };
        if let Err(e) = res {
            self.index.remove(&key);
            self.owner[slot as usize] = None;
            return Err(e);
        }
        self.index.insert(key, slot);
        self.owner[slot as usize] = Some(key);
        self.referenced[slot as usize] = false;
        self.writes += 1;
        self.written[slot as usize] = self.writes;
        while let Some(i) = self.read_ahead_of(key) {
            // It read the copy this write replaces; its buffer is freed when collected.
            self.reading_ahead[i] = None;
            self.stats.read_aheads_stale += 1;
        }
        self.stats.writes += 1;
        self.stats.write_bytes += batch.buf.len() as u64;
        Ok(())
    }

    /// Erases every chunk whose name starts with `prefix` (TLV-VALUE, whole components) from
    /// the batches stored now: they are skipped when read ([`erased`]). Batches written later
    /// are not affected. With [`erased::MAX_MARKS`] erases pending the L2 is emptied instead.
    pub fn erase_prefix(&mut self, prefix: &[u8]) {
        let oldest = self.owner.iter().zip(&self.written).filter(|(owner, _)| owner.is_some()).map(|(_, &w)| w).min();
        self.erased.prune(oldest);
        if oldest.is_none() {
            return;
        }
        if self.erased.is_full() {
            self.clear();
            self.stats.erase_clears += 1;
            return;
        }
        self.erased.mark(prefix, self.writes);
    }

    /// Erase marks that may still cover stored batches.
    pub fn pending_erases(&self) -> usize {
        self.erased.len()
    }

    /// Forgets every batch (reads in flight are dropped when collected).
    fn clear(&mut self) {
        self.index.clear();
        self.owner.fill(None);
        self.erased.clear();
        for r in &mut self.reading_ahead {
            if r.take().is_some() {
                self.stats.read_aheads_stale += 1;
            }
        }
    }

    /// A slot for a new batch: a never-used one, else FIFO's or CLOCK's choice (unindexed).
    fn take_slot(&mut self) -> u32 {
        if self.next_fresh < self.slots {
            self.next_fresh += 1;
            return self.next_fresh - 1;
        }
        if self.cfg.reuse == SlotReuse::Clock {
            while self.referenced[self.hand as usize] {
                self.referenced[self.hand as usize] = false;
                self.hand = (self.hand + 1) % self.slots;
            }
        }
        let slot = self.hand;
        self.hand = (self.hand + 1) % self.slots;
        if let Some(old) = self.owner[slot as usize].take() {
            self.index.remove(&old);
            self.stats.replaced += 1;
        }
        slot
    }

    /// Reads batch `key`: `Ok(None)` when it is not stored, else its chunks that pass the
    /// checksum (corrupt ones counted and skipped).
    ///
    /// # Errors
    /// When the device read fails (counted; the batch is dropped from the index).
    pub fn read(&mut self, key: u64) -> io::Result<Option<ReadBatch<'_>>> {
        let Some(&slot) = self.index.get(&key) else { return Ok(None) };
        let res = match &mut self.device {
            Device::File(f) => f.read(slot, &mut self.read_buf),
            Device::Memory(m) => {
                m.read(slot, self.read_buf.as_mut_slice());
                Ok(())
            }
        };
        if let Err(e) = res {
            self.stats.read_errors += 1;
            self.index.remove(&key);
            self.owner[slot as usize] = None;
            return Err(e);
        }
        self.referenced[slot as usize] = true;
        let read = Read { key, first: 0, erased: &self.erased, written: self.written[slot as usize] };
        read.decode(&self.cfg, &mut self.stats, self.read_buf.as_slice(), &mut self.read_chunks);
        Ok(Some(ReadBatch { buf: self.read_buf.as_slice(), chunks: &self.read_chunks }))
    }

    /// Starts reading batch `key` in the background; whether it started (not when the batch is
    /// not stored, a read of it in flight already brings those bytes, no read-ahead buffer is
    /// free, a write to its slot is in flight, or the backing has no read-ahead: a file with
    /// pread). A batch can have a chunk read and a whole read in flight at once.
    ///
    /// # Errors
    /// A failure to submit the read (counted as a read error; the batch stays indexed).
    pub fn start_read_ahead(&mut self, key: u64) -> io::Result<bool> {
        self.start_read(key, 0..self.cfg.batch_bytes())
    }

    /// As [`L2::start_read_ahead`], but reads only the blocks that hold the chunk at `position`
    /// (one slot, or the device blocks around it when slots are smaller than a block): for a
    /// request in no order, where the rest of the batch would be read for nothing.
    ///
    /// # Errors
    /// As [`L2::start_read_ahead`].
    pub fn start_chunk_read(&mut self, key: u64, position: u32) -> io::Result<bool> {
        let started = self.start_read(key, self.chunk_blocks(position))?;
        self.stats.chunk_reads += u64::from(started);
        Ok(started)
    }

    /// The bytes of a batch slot, aligned to device blocks, that hold the chunk at `position`.
    fn chunk_blocks(&self, position: u32) -> Range<usize> {
        let cs = self.cfg.chunk_slot_bytes as usize;
        let p = (position as usize).min(self.cfg.batch_chunks as usize - 1);
        (p * cs / ALIGN * ALIGN)..((p + 1) * cs).next_multiple_of(ALIGN)
    }

    fn start_read(&mut self, key: u64, bytes: Range<usize>) -> io::Result<bool> {
        let Some(&slot) = self.index.get(&key) else { return Ok(false) };
        if self.reads_of(key).any(|r| r.start <= bytes.start && bytes.end <= r.end) {
            return Ok(false);
        }
        let started = match &mut self.device {
            Device::File(f) => f.start_read_ahead(slot, bytes.clone()),
            Device::Memory(m) => Ok(m.start_read_ahead(slot, bytes.clone())),
        };
        match started {
            Ok(Some(i)) => {
                self.reading_ahead[i] = Some(Pending { key, bytes });
                self.stats.read_aheads += 1;
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => {
                self.stats.read_errors += 1;
                Err(e)
            }
        }
    }

    /// Whether batch `key` is being read ahead (started and not yet collected).
    pub fn is_reading_ahead(&self, key: u64) -> bool {
        self.read_ahead_of(key).is_some()
    }

    /// Whether a read of batch `key` in flight brings the chunk at `position` (a chunk read
    /// brings only its own chunk's blocks: [`L2::start_chunk_read`]).
    pub fn read_ahead_covers(&self, key: u64, position: u32) -> bool {
        let cs = self.cfg.chunk_slot_bytes as usize;
        let p = position as usize;
        self.reads_of(key).any(|r| r.start <= p * cs && (p + 1) * cs <= r.end)
    }

    /// The bytes of batch `key` that reads in flight bring, read by read.
    fn reads_of(&self, key: u64) -> impl Iterator<Item = &Range<usize>> {
        self.reading_ahead.iter().flatten().filter(move |r| r.key == key).map(|r| &r.bytes)
    }

    /// A read-ahead buffer reading batch `key` (the first of them).
    fn read_ahead_of(&self, key: u64) -> Option<usize> {
        self.reading_ahead.iter().position(|r| r.as_ref().is_some_and(|r| r.key == key))
    }

    /// A file descriptor that becomes readable when a background read completes (a file with
    /// io_uring), for an event loop to wait on; [`L2::clear_signal`] resets it.
    pub fn signal_fd(&self) -> Option<std::os::fd::RawFd> {
        match &self.device {
            Device::File(f) => f.signal_fd(),
            Device::Memory(_) => None,
        }
    }

    /// Resets [`L2::signal_fd`] (before collecting, so a later completion signals again).
    pub fn clear_signal(&mut self) {
        if let Device::File(f) = &mut self.device {
            f.clear_signal();
        }
    }

    /// Hands `f` the chunks of every read-ahead that has finished (without waiting), batch by
    /// batch; returns how many batches were collected.
    pub fn collect_read_aheads(&mut self, f: &mut dyn FnMut(StoredChunk<'_>)) -> usize {
        let mut n = 0;
        loop {
            let (i, slot, res) = match &mut self.device {
                Device::File(f) => match f.next_read_ahead() {
                    Some(done) => done,
                    None => break,
                },
                Device::Memory(m) => match m.next_read_ahead() {
                    Some((i, slot)) => (i, slot, Ok(())),
                    None => break,
                },
            };
            self.take_read_ahead(i, slot, res.is_ok(), f);
            n += 1;
        }
        n
    }

    /// Waits for the reads of batch `key` in flight and hands `f` their chunks; whether there
    /// was one.
    ///
    /// # Errors
    /// When waiting fails or a read failed (counted; the batch is dropped from the index).
    pub fn finish_read_ahead(&mut self, key: u64, f: &mut dyn FnMut(StoredChunk<'_>)) -> io::Result<bool> {
        let mut any = false;
        while let Some(i) = self.read_ahead_of(key) {
            let Some(slot) = self.index.get(&key).copied() else {
                // Unindexed since (its slot taken by a newer batch, or a failed read): the caller
                // reads afresh, and the read-ahead is dropped as stale when collected.
                return Ok(any);
            };
            let res = match &mut self.device {
                Device::File(f) => f.wait_read_ahead(i),
                Device::Memory(m) => match m.wait_read_ahead(i) {
                    true => Ok(()),
                    false => return Ok(any),
                },
            };
            self.take_read_ahead(i, slot, res.is_ok(), f);
            res?;
            any = true;
        }
        Ok(any)
    }

    /// Consumes finished read-ahead buffer `i` of `slot`: its chunks to `f` if its batch still
    /// owns the slot and the read succeeded; then frees the buffer.
    fn take_read_ahead(&mut self, i: usize, slot: u32, read_ok: bool, f: &mut dyn FnMut(StoredChunk<'_>)) {
        if let Some(Pending { key, bytes: range }) = self.reading_ahead[i].take() {
            if self.owner.get(slot as usize).copied().flatten() != Some(key) {
                self.stats.read_aheads_stale += 1;
            } else if !read_ok {
                self.stats.read_errors += 1;
                self.index.remove(&key);
                self.owner[slot as usize] = None;
            } else {
                self.referenced[slot as usize] = true;
                let bytes = match &self.device {
                    Device::File(dev) => dev.read_ahead_buf(i),
                    Device::Memory(m) => m.read_ahead_buf(i),
                };
                let read = Read { key, first: range.start, erased: &self.erased, written: self.written[slot as usize] };
                read.decode(&self.cfg, &mut self.stats, bytes, &mut self.read_chunks);
                let batch = ReadBatch { buf: bytes, chunks: &self.read_chunks };
                batch.iter().for_each(&mut *f);
            }
        }
        match &mut self.device {
            Device::File(dev) => dev.release_read_ahead(i),
            Device::Memory(m) => m.release_read_ahead(i),
        }
    }

    /// Waits for write-backs in flight.
    ///
    /// # Errors
    /// When waiting fails.
    pub fn sync(&mut self) -> io::Result<()> {
        match &mut self.device {
            Device::File(f) => f.sync(),
            Device::Memory(_) => Ok(()),
        }
    }

    /// The memory backing's bytes of the slot holding `key` (tests inject faults there).
    pub fn memory_slot_mut(&mut self, key: u64) -> Option<&mut [u8]> {
        let slot = *self.index.get(&key)?;
        match &mut self.device {
            Device::Memory(m) => Some(m.slot_mut(slot)),
            Device::File(_) => None,
        }
    }

    /// The byte offset of batch `key` in the file (tests inject faults there).
    pub fn file_offset(&self, key: u64) -> Option<u64> {
        let slot = *self.index.get(&key)?;
        Some(u64::from(slot) * self.cfg.batch_bytes() as u64)
    }
}

/// A background read: its batch and the bytes of the batch slot it reads.
#[derive(Debug, Clone)]
struct Pending {
    key: u64,
    bytes: Range<usize>,
}

/// A batch read: which batch, the byte of its slot the read started at, and what decides
/// which of its chunks were erased.
struct Read<'a> {
    key: u64,
    first: usize,
    erased: &'a Erased,
    /// The number of the write that stored the batch.
    written: u64,
}

impl Read<'_> {
    /// Decodes the bytes read (`bytes`, from byte `first` of the slot): counts the read, records
    /// in `out` the valid chunks whose slots it holds whole (corrupt ones counted and skipped,
    /// erased ones counted and skipped).
    fn decode(&self, cfg: &L2Config, stats: &mut L2Stats, bytes: &[u8], out: &mut Vec<ChunkRef>) {
        stats.reads += 1;
        stats.read_bytes += bytes.len() as u64;
        out.clear();
        let cs = cfg.chunk_slot_bytes as usize;
        for p in self.first.div_ceil(cs)..cfg.batch_chunks as usize {
            let start = p * cs - self.first;
            let Some(slot) = bytes.get(start..start + cs) else { break };
            match layout::decode(slot, self.key, p as u16) {
                Decoded::Empty => {}
                Decoded::Corrupt => stats.corrupt_chunks += 1,
                Decoded::Chunk(c) if self.erased.hides(c.wire, self.written) => stats.erased_chunks += 1,
                Decoded::Chunk(c) => out.push(ChunkRef {
                    position: c.position,
                    fresh_until_ms: c.fresh_until_ms,
                    start: start + HEADER_BYTES,
                    len: c.wire.len(),
                }),
            }
        }
    }
}
