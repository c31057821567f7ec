//! The Othello query structure: what the data plane holds. Two arrays of l-bit cells (A, B), the
//! seed and sizes — no names. A lookup is two memory reads and an XOR: τ(k) = A[h_a(k)] ⊕ B[h_b(k)].
//!
//! # Concurrent patching (the paper's section V-C)
//! One writer patches cells in place (an [`Patch`] from the control structure) while readers
//! query. Cells are grouped by `index mod 512`; the writer counts each affected group in `begun`,
//! writes the cells, then counts it in `ended`. A reader reads `ended[g]`, then A[i] and B[j],
//! then `begun[g]`, and retries while they differ — so it never returns an XOR of an A cell
//! half-way through an update. (The paper flips one bit per group; a bit returns to its value
//! after two updates, so a reader overlapping two whole updates could mix them. A 32-bit counter
//! per group closes that window at 4 KB.) B cells need no guard: when A[i] is unchanged, old or
//! new B[j] both give a valid answer. Orderings: the writer's `begun` increments are followed by a
//! release fence before the cell stores, and `ended` is incremented with release; the reader loads
//! `ended` with acquire and puts an acquire fence before loading `begun`.
//!
//! A batch first tries the same check once for the whole structure: the writer also counts every
//! patch in `all_begun` / `all_ended` (around the group counters), and a run of [`BATCH`] names
//! that reads `all_ended`, its cells, a fence, then the same value in `all_begun` overlapped no
//! patch at all — every answer in it stands, at two counter loads per run instead of two per
//! name. Only a run that did overlap a patch checks its names group by group.
//!
//! # The batch pipeline
//! A batch is one software pipeline: the step that reads name t's two cells also hashes name
//! t + [`AHEAD`] and prefetches its cells, so about 2·AHEAD cache misses are in flight at any
//! time and no step waits for one (a ring holds the cell indices in between). It replaced
//! rounds of "hash and prefetch 32 names, then read those 32", whose reads began right after
//! their prefetches: in a probe program (random MACs, cells as large as a Concise FIB's) the
//! pipeline was faster at every size, most with the cells in DRAM (the `flat-fib` figures in
//! docs/flat-fib.md are from `nexthop bench`). Two details mattered as much: the seed's hasher and
//! the sizes are taken into locals (past the loop's atomic loads the compiler reloaded them
//! from `self` for every name), and a whole run with names left to hash ahead is its own loop,
//! without a test per step. Two smaller ones, a few percent each with the cells in L2: the
//! ring's indices, masked when hashed, are read without a second bounds check, and a cell that
//! holds only the action is not masked again.
//!
//! The protocol is model-checked with loom (`make loom`, the `loom_model` tests below): a writer's
//! patch that changes both cells of a name, against single and batch readers, in every
//! interleaving. A reader that skips the check is caught there, and so were (tried by hand) a
//! batch without its whole-structure check and a per-group `ended` load weakened to relaxed.
//!
//! Reconstruction (new seed or sizes) cannot be patched in place: the control structure then
//! ships a whole new query structure ([`super::Delta::Rebuilt`]), which the data plane swaps in.

use core::sync::atomic::{AtomicU64, Ordering};

use super::cell::Cell;
use super::hash::{cells, checksum, key_hash, KeyHasher};
use super::sync::{fence, spin, AtomicU32, Mutex};
use super::FlatError;
use crate::mem::{advise_huge_pages_for, prefetch};

/// Version groups (the paper's 512).
const GROUPS: usize = 512;
/// Names of a batch answered under one whole-structure check in [`OthelloQuery::lookup_batch`].
pub const BATCH: usize = 32;
/// How many names ahead of its reads a batch hashes and prefetches.
pub const AHEAD: usize = 64;
/// Cell indices between hashing and reading: AHEAD, plus a run of BATCH kept until its check.
const RING: usize = 128;
const _: () = assert!(AHEAD + BATCH <= RING && RING.is_power_of_two());
const MAGIC: &[u8; 4] = b"OTHQ";

/// Cells changed by one control-plane operation: the paper's FIB update message. It names the
/// structure it applies to — its shape ([`fingerprint`]: seed, array sizes, field widths), and
/// the version (patches applied since the structure was built) it starts from — so that a
/// data plane refuses a patch of another structure, one it already has, or one after a patch
/// it missed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch<C> {
    /// (index, new value) in A.
    pub a: Vec<(u32, C)>,
    /// (index, new value) in B.
    pub b: Vec<(u32, C)>,
    /// The [`fingerprint`] of the structure it applies to.
    pub structure: u64,
    /// The version it applies to; the structure is at the next one after it.
    pub version: u64,
}

impl<C> Patch<C> {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty() && self.b.is_empty()
    }
}

/// A structure's shape in one word: its seed, array sizes and field widths mixed, which a
/// [`Patch`] carries and [`OthelloQuery::apply`] compares.
pub fn fingerprint(seed: u64, ma_bits: u32, mb_bits: u32, value_bits: u32, checksum_bits: u32) -> u64 {
    let shape = u64::from(ma_bits) | u64::from(mb_bits) << 8 | u64::from(value_bits) << 16 | u64::from(checksum_bits) << 24;
    (seed ^ shape.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xff51_afd7_ed55_8ccd)
}

/// Calls `f` with every group whose bit is set.
fn for_each_group(groups: &[u64; GROUPS / 64], f: impl FnMut(usize)) {
    crate::bits::set_bits(groups).for_each(f);
}

/// Where a batch lookup writes its answers: a run's at once, then any it must replace.
trait Answers {
    /// The answers of the keys from `start` on, in order.
    fn group(&mut self, start: usize, answers: &[u32]);
    /// The answer of key `i`, written before, is `answer` instead.
    fn replace(&mut self, i: usize, answer: u32);
}

/// Answers appended to a vector that held `base` items before the batch.
struct Appended<'v> {
    base: usize,
    out: &'v mut Vec<u32>,
}

impl Answers for Appended<'_> {
    #[inline(always)]
    fn group(&mut self, _start: usize, answers: &[u32]) {
        self.out.extend_from_slice(answers);
    }

    fn replace(&mut self, i: usize, answer: u32) {
        self.out[self.base + i] = answer;
    }
}

impl Answers for &mut [u32] {
    #[inline(always)]
    fn group(&mut self, start: usize, answers: &[u32]) {
        self[start..start + answers.len()].copy_from_slice(answers);
    }

    fn replace(&mut self, i: usize, answer: u32) {
        self[i] = answer;
    }
}

/// The data-plane half of an Othello / l-bit Parallel Othello Group.
#[derive(Debug)]
pub struct OthelloQuery<C: Cell> {
    ma_bits: u32,
    mb_bits: u32,
    seed: u64,
    value_bits: u32,
    checksum_bits: u32,
    a: Box<[C::Atomic]>,
    b: Box<[C::Atomic]>,
    begun: Box<[AtomicU32]>,
    ended: Box<[AtomicU32]>,
    all_begun: AtomicU32,
    all_ended: AtomicU32,
    /// Patches applied since the structure was built (changed under `writer`).
    version: AtomicU64,
    writer: Mutex<()>,
}

impl<C: Cell> OthelloQuery<C> {
    /// A query structure over the given cells (from the control structure or from bytes).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(ma_bits: u32, mb_bits: u32, seed: u64, version: u64, value_bits: u32, checksum_bits: u32, a: &[C], b: &[C]) -> Self {
        // Large arrays on huge pages: a lookup's two reads then miss no TLB.
        let atomics = |v: &[C]| {
            let mut cells = Vec::with_capacity(v.len());
            advise_huge_pages_for(&mut cells);
            cells.extend(v.iter().map(|&c| C::atomic(c)));
            cells.into_boxed_slice()
        };
        let counters = || (0..GROUPS).map(|_| AtomicU32::new(0)).collect::<Box<[_]>>();
        OthelloQuery {
            ma_bits,
            mb_bits,
            seed,
            value_bits,
            checksum_bits,
            a: atomics(a),
            b: atomics(b),
            begun: counters(),
            ended: counters(),
            all_begun: AtomicU32::new(0),
            all_ended: AtomicU32::new(0),
            version: AtomicU64::new(version),
            writer: Mutex::new(()),
        }
    }

    /// The structure's [`fingerprint`].
    pub fn fingerprint(&self) -> u64 {
        fingerprint(self.seed, self.ma_bits, self.mb_bits, self.value_bits, self.checksum_bits)
    }

    /// Patches applied since the structure was built: the version the next patch must start
    /// from.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Relaxed)
    }

    /// Bits of the action a lookup returns (l).
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// r: checksum bits per cell (0: none).
    pub fn checksum_bits(&self) -> u32 {
        self.checksum_bits
    }

    /// Bytes of the cell arrays (what the data plane must hold).
    pub fn bytes(&self) -> usize {
        (self.a.len() + self.b.len()) * (C::BITS as usize / 8)
    }

    /// Cells in A and B.
    pub fn sizes(&self) -> (usize, usize) {
        (self.a.len(), self.b.len())
    }

    /// The cell XOR for `hash`, under the concurrency protocol.
    #[inline(always)]
    fn read(&self, hash: u64) -> u32 {
        let (i, j) = cells(hash, self.ma_bits, self.mb_bits);
        self.read_cells(i, j)
    }

    /// A[i] ⊕ B[j] under the concurrency protocol.
    #[inline(always)]
    fn read_cells(&self, i: usize, j: usize) -> u32 {
        let g = i % GROUPS;
        loop {
            let ended = self.ended[g].load(Ordering::Acquire);
            let x = C::load(&self.a[i]);
            let y = C::load(&self.b[j]);
            fence(Ordering::Acquire);
            if self.begun[g].load(Ordering::Relaxed) == ended {
                return x.to_u32() ^ y.to_u32();
            }
            spin();
        }
    }

    fn action(&self, cell: u32) -> u32 {
        if self.value_bits == 32 {
            cell
        } else {
            cell & ((1u32 << self.value_bits) - 1)
        }
    }

    /// The action of `key` — correct for every name in the FIB, arbitrary for others.
    #[inline]
    pub fn lookup(&self, key: &[u8]) -> u32 {
        self.action(self.read(key_hash(self.seed, key)))
    }

    /// The action of `key`, or `None` when its checksum bits do not match (a name outside the FIB,
    /// detected with probability 1 − 2^−r for r checksum bits; always `Some` when r = 0).
    #[inline]
    pub fn lookup_checked(&self, key: &[u8]) -> Option<u32> {
        let h = key_hash(self.seed, key);
        let cell = self.read(h);
        let stored = if self.checksum_bits == 0 { 0 } else { cell >> self.value_bits };
        (stored == checksum(h, self.checksum_bits)).then(|| self.action(cell))
    }

    /// [`OthelloQuery::lookup`] for many names, pipelined: each name's cells are prefetched
    /// [`AHEAD`] names before they are read, so the cache misses overlap (see the module
    /// overview).
    ///
    /// Keys of a fixed width (`[u8; 6]` MACs, `[u8; 16]` flow IDs) hash with their length known
    /// at compile time; the answers are those of the byte-slice form.
    pub fn lookup_batch<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut Vec<u32>) {
        out.reserve(keys.len());
        self.batch_any(keys, &mut Appended { base: out.len(), out });
    }

    /// [`OthelloQuery::batch`] for this structure's cells: a cell that holds only the action (no
    /// checksum bits above it) needs no mask, one instruction less per name.
    #[inline(always)]
    fn batch_any<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut impl Answers) {
        if self.value_bits >= C::BITS {
            self.batch::<K, false>(keys, out);
        } else {
            self.batch::<K, true>(keys, out);
        }
    }

    /// The batch pipeline: the actions of `keys` into `out`, checked a run of [`BATCH`] at a time,
    /// each cell XOR masked to the action's bits when `MASK`.
    ///
    /// A run's answers are written as its cells are read, before the whole-structure check says
    /// whether they stand; when a patch overlapped the run they are overwritten, name by name,
    /// under the per-group check. Nothing is returned before its check.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn batch<K: AsRef<[u8]>, const MASK: bool>(&self, keys: &[K], out: &mut impl Answers) {
        // The arrays hold 2^bits ≥ 1 cells, and every index below is masked with length − 1
        // before it is used or kept: hashing sees it in bounds and drops the checks, and the
        // ring holds only indices in bounds (zeros before its slots are first written).
        let (a, b) = (&self.a[..], &self.b[..]);
        if a.is_empty() || b.is_empty() {
            unreachable!("an Othello array holds 2^bits cells");
        }
        let (am, bm) = (a.len() - 1, b.len() - 1);
        let action = if self.value_bits == 32 { u32::MAX } else { (1 << self.value_bits) - 1 };
        // Name t's cell indices, from when it is hashed (AHEAD steps before it is read) until its
        // run's check.
        let mut ring = [(0usize, 0usize); RING];
        // In locals: the loop below also does atomic loads, past which the compiler would
        // otherwise reload every field of `self`.
        let (hasher, ma_bits, mb_bits) = (KeyHasher::new(self.seed), self.ma_bits, self.mb_bits);
        let ahead = |t: usize, key: &K, ring: &mut [(usize, usize); RING]| {
            let (i, j) = cells(hasher.hash(key.as_ref()), ma_bits, mb_bits);
            let (i, j) = (i & am, j & bm);
            prefetch(&a[i]);
            prefetch(&b[j]);
            ring[t % RING] = (i, j);
        };
        let read = |t: usize, ring: &[(usize, usize); RING]| {
            let (i, j) = ring[t % RING];
            debug_assert!(i < a.len() && j < b.len());
            // SAFETY: every ring slot holds indices masked with length − 1 when they were hashed
            // (or the zeros it started with), and both arrays hold at least one cell: i and j
            // are in bounds. (Checked reads re-masked them here: two instructions of ~30 a name.)
            let x = unsafe { C::load(a.get_unchecked(i)).to_u32() ^ C::load(b.get_unchecked(j)).to_u32() };
            if MASK {
                x & action
            } else {
                x
            }
        };
        let n = keys.len();
        for (t, key) in keys.iter().enumerate().take(AHEAD) {
            ahead(t, key, &mut ring);
        }
        let mut answers = [0u32; BATCH];
        for start in (0..n).step_by(BATCH) {
            let len = BATCH.min(n - start);
            let ended = self.all_ended.load(Ordering::Acquire);
            match keys.get(start + AHEAD..start + AHEAD + BATCH) {
                // The steady state: a whole run, each step hashing the name AHEAD on.
                Some(later) => {
                    for (k, (answer, key)) in answers.iter_mut().zip(later).enumerate() {
                        ahead(start + AHEAD + k, key, &mut ring);
                        *answer = read(start + k, &ring);
                    }
                    out.group(start, &answers);
                }
                // The last runs: fewer names left to hash than to read.
                None => {
                    let run = &mut answers[..len];
                    for (k, answer) in run.iter_mut().enumerate() {
                        if let Some(key) = keys.get(start + k + AHEAD) {
                            ahead(start + k + AHEAD, key, &mut ring);
                        }
                        *answer = read(start + k, &ring);
                    }
                    out.group(start, run);
                }
            }
            fence(Ordering::Acquire);
            if self.all_begun.load(Ordering::Relaxed) != ended {
                // A patch overlapped the run: each name again under its group's check.
                for t in start..start + len {
                    let (i, j) = ring[t % RING];
                    out.replace(t, self.action(self.read_cells(i, j)));
                }
            }
        }
    }

    /// Applies a patch while readers may be querying (one writer at a time: concurrent `apply`
    /// calls take turns).
    ///
    /// # Errors
    /// Nothing is written when: an index is outside the arrays ([`FlatError::PatchOutOfRange`]);
    /// the patch is of a structure of another shape ([`FlatError::ForeignPatch`]); it starts
    /// from another version than this structure's ([`FlatError::PatchVersion`]: applied
    /// already, or one before it is missing).
    pub fn apply(&self, patch: &Patch<C>) -> Result<(), FlatError> {
        if patch.a.iter().any(|&(i, _)| i as usize >= self.a.len()) || patch.b.iter().any(|&(j, _)| j as usize >= self.b.len()) {
            return Err(FlatError::PatchOutOfRange);
        }
        if patch.structure != self.fingerprint() {
            return Err(FlatError::ForeignPatch);
        }
        let _one_writer = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let version = self.version.load(Ordering::Relaxed);
        if patch.version != version {
            return Err(FlatError::PatchVersion { have: version, patch: patch.version });
        }
        self.version.store(version + 1, Ordering::Relaxed);
        if patch.is_empty() {
            return Ok(());
        }
        // The affected groups as a 512-bit set: each counted once however many cells it has.
        let mut groups = [0u64; GROUPS / 64];
        for &(i, _) in &patch.a {
            let g = i as usize % GROUPS;
            groups[g / 64] |= 1 << (g % 64);
        }
        self.all_begun.fetch_add(1, Ordering::Relaxed);
        for_each_group(&groups, |g| {
            self.begun[g].fetch_add(1, Ordering::Relaxed);
        });
        fence(Ordering::Release);
        for &(i, v) in &patch.a {
            C::store(&self.a[i as usize], v);
        }
        for &(j, v) in &patch.b {
            C::store(&self.b[j as usize], v);
        }
        for_each_group(&groups, |g| {
            self.ended[g].fetch_add(1, Ordering::Release);
        });
        self.all_ended.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// The structure as bytes, to ship to a data plane that never sees the names.
    pub fn to_bytes(&self) -> Vec<u8> {
        let cell_bytes = C::BITS as usize / 8;
        let mut out = Vec::with_capacity(28 + self.bytes());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[
            2,
            C::BITS as u8,
            self.value_bits as u8,
            self.checksum_bits as u8,
            self.ma_bits as u8,
            self.mb_bits as u8,
            0,
            0,
        ]);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.version().to_le_bytes());
        for cell in self.a.iter().chain(self.b.iter()) {
            out.extend_from_slice(&C::load(cell).to_u32().to_le_bytes()[..cell_bytes]);
        }
        out
    }

    /// Loads a structure written by [`OthelloQuery::to_bytes`].
    ///
    /// # Errors
    /// [`FlatError::BadQueryBytes`] naming what does not fit.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FlatError> {
        let bad = |why: &str| FlatError::BadQueryBytes(why.to_string());
        if bytes.len() < 20 || &bytes[..4] != MAGIC {
            return Err(bad("no OTHQ header"));
        }
        let [version, cell_bits, value_bits, checksum_bits, ma_bits, mb_bits] =
            [bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9]].map(u32::from);
        // Format 1 had no structure version (0); format 2 has it after the seed.
        let header = match version {
            1 => 20,
            2 => 28,
            _ => return Err(bad("unknown version")),
        };
        if bytes.len() < header {
            return Err(bad("short header"));
        }
        if cell_bits != C::BITS {
            return Err(bad("cell width differs from this type's"));
        }
        if value_bits == 0 || value_bits + checksum_bits > C::BITS || ma_bits > 31 || mb_bits > 31 {
            return Err(bad("field widths out of range"));
        }
        let seed = u64::from_le_bytes(bytes[12..20].try_into().map_err(|_| bad("short seed"))?);
        let patches = if header == 28 { u64::from_le_bytes(bytes[20..28].try_into().map_err(|_| bad("short version"))?) } else { 0 };
        let cell_bytes = C::BITS as usize / 8;
        let (ma, mb) = (1usize << ma_bits, 1usize << mb_bits);
        if bytes.len() != header + (ma + mb) * cell_bytes {
            return Err(bad("cell arrays do not match the sizes"));
        }
        let cells: Vec<C> = bytes[header..]
            .chunks_exact(cell_bytes)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..cell_bytes].copy_from_slice(c);
                C::from_u32(u32::from_le_bytes(w))
            })
            .collect();
        Ok(OthelloQuery::new(ma_bits, mb_bits, seed, patches, value_bits, checksum_bits, &cells[..ma], &cells[ma..]))
    }
}

impl<C: Cell> crate::Lookup<[u8]> for OthelloQuery<C> {
    type Answer = u32;

    fn lookup(&self, key: &[u8]) -> u32 {
        OthelloQuery::lookup(self, key)
    }

    fn lookup_batch(&self, keys: &[&[u8]], out: &mut [u32]) {
        let n = keys.len().min(out.len());
        self.batch_any(&keys[..n], &mut &mut out[..n]);
    }
}

/// The concurrency protocol under the loom model checker, which runs the writer and a reader in
/// every interleaving (and every value a relaxed load may return): `make loom`.
///
/// The scenario is one where a torn read is possible: an alter whose patch changes both cells of
/// another name (so that name's answer stays the same, but A-new ⊕ B-old is wrong). The readers
/// must see every name's old or new action, through single and batch lookups; a reader that reads
/// the two cells without the protocol is caught (the model is not vacuous).
#[cfg(all(test, loom))]
mod loom_model {
    use loom::sync::Arc;

    use super::*;
    use crate::flat::{Delta, Othello, OthelloConfig};

    /// A name with its action before and after the patch.
    type Watched = (Vec<u8>, u32, u32);

    /// [`find_scenario`], run inside a one-thread model: taking a delta builds a query structure,
    /// and loom's atomics exist only inside a model.
    fn scenario() -> (Othello<u8>, Patch<u8>, Vec<Watched>) {
        let found = std::sync::Arc::new(std::sync::Mutex::new(None));
        let slot = found.clone();
        loom::model(move || *slot.lock().unwrap() = Some(find_scenario()));
        let found = found.lock().unwrap().take();
        found.expect("the model ran")
    }

    /// A small FIB, an alter whose patch changes both cells of some other name, and the names to
    /// watch: the altered one and the one whose cells both change.
    fn find_scenario() -> (Othello<u8>, Patch<u8>, Vec<Watched>) {
        for first_seed in 0..1000u64 {
            let cfg = OthelloConfig { seed: first_seed, ..OthelloConfig::new(2) };
            let names: Vec<Vec<u8>> = (0..12u8).map(|i| vec![b'n', i]).collect();
            let mut before = Othello::<u8>::construct(cfg, names.iter().map(|k| (k.as_slice(), u32::from(k[1] % 4)))).unwrap();
            // Construction's delta (the whole structure) is shipped: what follows is a patch.
            let _ = before.take_delta();
            let mut after = before.clone();
            after.alter(&names[0], (u32::from(names[0][1]) + 1) % 4).unwrap();
            let Delta::Patch(patch) = after.take_delta() else { continue };
            let torn = names[1..].iter().find(|k| {
                let (i, j) = before.cells_of(k);
                patch.a.iter().any(|&(x, _)| x as usize == i) && patch.b.iter().any(|&(y, _)| y as usize == j)
            });
            // The smallest such patch (two cells) keeps the model's state space small.
            if let Some(torn) = torn.filter(|_| patch.a.len() + patch.b.len() == 2) {
                let watch = [&names[0], torn].iter().map(|k| ((*k).clone(), before.get(k).unwrap(), after.get(k).unwrap())).collect();
                return (before, patch, watch);
            }
        }
        panic!("no seed gives a patch that changes both cells of another name");
    }

    fn check(watch: &[Watched], got: &[u32]) {
        for ((name, old, new), &got) in watch.iter().zip(got) {
            assert!(got == *old || got == *new, "{name:?}: {got} is neither {old} nor {new}");
        }
    }

    /// Every interleaving of the writer's patch with `read`, whose answers must be old or new.
    fn model(read: fn(&OthelloQuery<u8>, &[&[u8]]) -> Vec<u32>) {
        let (before, patch, watch) = scenario();
        loom::model(move || {
            let q = Arc::new(before.query());
            let writer = {
                let (q, patch) = (q.clone(), patch.clone());
                loom::thread::spawn(move || q.apply(&patch).unwrap())
            };
            let names: Vec<&[u8]> = watch.iter().map(|(k, _, _)| k.as_slice()).collect();
            check(&watch, &read(&q, &names));
            writer.join().unwrap();
        });
    }

    #[test]
    fn single_lookups_see_old_or_new_under_every_interleaving() {
        model(|q, names| names.iter().map(|k| q.lookup(k)).collect());
    }

    #[test]
    fn batch_lookups_see_old_or_new_under_every_interleaving() {
        model(|q, names| {
            let mut out = Vec::new();
            q.lookup_batch(names, &mut out);
            out
        });
    }

    #[test]
    #[should_panic(expected = "is neither")]
    fn a_reader_without_the_protocol_is_caught() {
        model(|q, names| {
            names
                .iter()
                .map(|k| {
                    let (i, j) = cells(key_hash(q.seed, k), q.ma_bits, q.mb_bits);
                    q.action(u8::load(&q.a[i]).to_u32() ^ u8::load(&q.b[j]).to_u32())
                })
                .collect()
        });
    }
}
