//! The L2 on a real file or block device: batch slots read and written whole, with O_DIRECT,
//! through io_uring, or with pread/pwrite where io_uring is unavailable.
//!
//! # I/O
//! - Reads are synchronous for the caller (the request waits for its batch, as in the paper's
//!   serial algorithm): one io_uring read submitted and waited for.
//! - Read-ahead (io_uring only): [`FileDevice::start_read_ahead`] submits a read into one of a
//!   few read-ahead buffers and returns; the caller collects it later, finished
//!   ([`FileDevice::next_read_ahead`]) or waited for ([`FileDevice::wait_read_ahead`]), and
//!   releases the buffer. A write to a slot with a read-ahead in flight waits for the read.
//! - Writes (batch write-back) are asynchronous with io_uring: the batch is copied into one of a
//!   few write buffers and submitted; the caller does not wait. A read of a slot with a write in
//!   flight waits for that write first, and a write to such a slot waits too, so a slot is never
//!   read or written while an older write to it is pending.
//! - Where io_uring cannot be set up (old kernel, seccomp), [`IoEngine::Auto`] falls back to
//!   pread/pwrite on the same O_DIRECT descriptor; [`IoEngine::IoUring`] makes that an error.
//! - O_DIRECT bypasses the page cache, so what is measured is the device. Filesystems that refuse
//!   it (EINVAL at open, e.g. an old tmpfs) are an error with [`DirectIo::Required`] and fall back
//!   to buffered I/O with [`DirectIo::Preferred`].
//! - The file is preallocated with posix_fallocate when it is created or extended.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use io_uring::{opcode, types, IoUring};

use super::buf::{AlignedBuf, ALIGN};
use crate::error::L2Error;

/// Whether the L2 file must be opened with O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirectIo {
    /// Refuse to start on a filesystem without O_DIRECT.
    Required,
    /// Use O_DIRECT where the filesystem allows it, buffered I/O elsewhere.
    #[default]
    Preferred,
}

/// Which system calls move the batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoEngine {
    /// io_uring where the kernel offers it, else pread/pwrite.
    #[default]
    Auto,
    /// io_uring or an error.
    IoUring,
    /// pread/pwrite.
    Pread,
}

/// How the file is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileConfig {
    /// The file or block device.
    pub path: PathBuf,
    /// Create the file (or extend it) to the configured size if it is missing or smaller.
    pub create: bool,
    /// O_DIRECT policy.
    pub direct: DirectIo,
    /// I/O engine.
    pub engine: IoEngine,
}

/// Write buffers, so this many batch writes can be in flight.
const WRITE_BUFFERS: usize = 8;
/// Read-ahead buffers, so this many batch reads can be in flight beside the waited-for one. At
/// the rate one thread consumes batches on the real workload, 8 kept the disk's queue too short
/// (read-aheads were skipped for want of a buffer); 32 and 64 measured alike in a probe.
pub const READ_AHEAD_BUFFERS: usize = 32;
/// `user_data` of the one waited-for read that can be in flight.
const READ_TAG: u64 = u64::MAX;
/// `user_data` of read-ahead i: this + i (writes are 0..WRITE_BUFFERS).
const READ_AHEAD_TAG: u64 = 1 << 32;

/// A read-ahead buffer's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ahead {
    Free,
    /// Reading this many bytes of this slot.
    InFlight(u32, usize),
    /// They were read: the completion's result (bytes, or −errno).
    Done(u32, usize, i32),
}

/// io_uring state: the ring, the write buffers and which slot each one is writing, the
/// read-ahead buffers and theirs.
struct Uring {
    ring: IoUring,
    write_bufs: Vec<AlignedBuf>,
    writing: [Option<u32>; WRITE_BUFFERS],
    ahead_bufs: Vec<AlignedBuf>,
    ahead: [Ahead; READ_AHEAD_BUFFERS],
    /// An eventfd the ring signals on every completion (`None` if the kernel refused one).
    signal: Option<File>,
}

enum Engine {
    Uring(Box<Uring>),
    Pread,
}

/// A file of `slots` batch slots of `batch_bytes` each.
pub struct FileDevice {
    file: File,
    path: PathBuf,
    batch_bytes: usize,
    direct: bool,
    engine: Engine,
    write_errors: u64,
}

impl core::fmt::Debug for FileDevice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FileDevice")
            .field("path", &self.path)
            .field("direct", &self.direct)
            .field("engine", &self.engine_name())
            .finish_non_exhaustive()
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> L2Error + '_ {
    move |error| L2Error::Io { path: path.to_path_buf(), error }
}

impl FileDevice {
    /// Opens (or creates) the file for `capacity` bytes of `batch_bytes`-byte slots.
    ///
    /// # Errors
    /// Missing or too small file (without `create`), O_DIRECT refused with [`DirectIo::Required`],
    /// io_uring unavailable with [`IoEngine::IoUring`], any I/O error.
    pub fn open(cfg: &FileConfig, capacity: u64, batch_bytes: usize) -> Result<Self, L2Error> {
        if batch_bytes == 0 || !batch_bytes.is_multiple_of(ALIGN) {
            return Err(L2Error::Config(format!("batch slot of {batch_bytes} bytes is not a multiple of {ALIGN}")));
        }
        let path = &cfg.path;
        let exists = path.exists();
        if !exists && !cfg.create {
            return Err(L2Error::Missing(path.clone()));
        }
        let open = |direct: bool| {
            let mut o = OpenOptions::new();
            o.read(true).write(true).create(cfg.create);
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            o.open(path)
        };
        let (file, direct) = match open(true) {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match cfg.direct {
                DirectIo::Required => return Err(L2Error::NoDirectIo(path.clone())),
                DirectIo::Preferred => (open(false).map_err(io_err(path))?, false),
            },
            Err(e) => return Err(io_err(path)(e)),
        };
        let meta = file.metadata().map_err(io_err(path))?;
        let is_file = meta.file_type().is_file();
        let actual = if is_file { meta.len() } else { block_device_len(&file).map_err(io_err(path))? };
        if actual < capacity {
            if !(cfg.create && is_file) {
                return Err(L2Error::TooSmall { path: path.clone(), actual, wanted: capacity });
            }
            preallocate(&file, capacity).map_err(io_err(path))?;
        }
        let engine = match cfg.engine {
            IoEngine::Pread => Engine::Pread,
            // Room for every write, read-ahead and the waited-for read at once.
            IoEngine::Auto | IoEngine::IoUring => match IoUring::new((2 * (WRITE_BUFFERS + READ_AHEAD_BUFFERS)) as u32) {
                Ok(ring) => Engine::Uring(Box::new(Uring {
                    signal: completion_eventfd(&ring),
                    ring,
                    write_bufs: (0..WRITE_BUFFERS).map(|_| AlignedBuf::new(batch_bytes)).collect(),
                    writing: [None; WRITE_BUFFERS],
                    ahead_bufs: (0..READ_AHEAD_BUFFERS).map(|_| AlignedBuf::new(batch_bytes)).collect(),
                    ahead: [Ahead::Free; READ_AHEAD_BUFFERS],
                })),
                Err(e) if cfg.engine == IoEngine::IoUring => return Err(io_err(path)(e)),
                Err(_) => Engine::Pread,
            },
        };
        Ok(FileDevice { file, path: path.clone(), batch_bytes, direct, engine, write_errors: 0 })
    }

    /// Whether O_DIRECT is in use.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// `io_uring` or `pread`.
    pub fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Uring(_) => "io_uring",
            Engine::Pread => "pread",
        }
    }

    /// Asynchronous writes that failed (their slots then fail the checksum when read).
    pub fn write_errors(&self) -> u64 {
        self.write_errors
    }

    fn offset(&self, slot: u32) -> u64 {
        u64::from(slot) * self.batch_bytes as u64
    }

    /// Reads batch slot `slot` into `buf` (`batch_bytes` long).
    ///
    /// # Errors
    /// Any I/O error, or a short read.
    pub fn read(&mut self, slot: u32, buf: &mut AlignedBuf) -> io::Result<()> {
        debug_assert_eq!(buf.len(), self.batch_bytes);
        let offset = self.offset(slot);
        let fd = types::Fd(self.file.as_raw_fd());
        match &mut self.engine {
            Engine::Pread => self.file.read_exact_at(buf.as_mut_slice(), offset),
            Engine::Uring(u) => {
                u.wait_for_slot(slot, &mut self.write_errors)?;
                let dst = buf.as_mut_slice();
                let read = opcode::Read::new(fd, dst.as_mut_ptr(), dst.len() as u32).offset(offset).build().user_data(READ_TAG);
                // SAFETY: `dst` is borrowed mutably for this whole call and the call does not
                // return before the read's completion has been reaped below, so the kernel writes
                // only into live memory nobody else touches.
                unsafe { u.ring.submission().push(&read) }.map_err(|_| io::Error::other("io_uring submission queue full"))?;
                loop {
                    u.ring.submit_and_wait(1)?;
                    if let Some(res) = u.reap(&mut self.write_errors) {
                        return read_result(res, dst.len());
                    }
                }
            }
        }
    }

    /// Writes `data` (`batch_bytes` long) to batch slot `slot`; with io_uring it returns once
    /// the write is submitted.
    ///
    /// # Errors
    /// Any I/O error (pread engine) or a failure to submit.
    pub fn write(&mut self, slot: u32, data: &[u8]) -> io::Result<()> {
        debug_assert_eq!(data.len(), self.batch_bytes);
        let offset = self.offset(slot);
        let fd = types::Fd(self.file.as_raw_fd());
        match &mut self.engine {
            Engine::Pread => self.file.write_all_at(data, offset),
            Engine::Uring(u) => {
                u.wait_for_slot(slot, &mut self.write_errors)?;
                let i = u.free_buffer(&mut self.write_errors)?;
                u.write_bufs[i].as_mut_slice().copy_from_slice(data);
                let src = u.write_bufs[i].as_slice();
                let write = opcode::Write::new(fd, src.as_ptr(), src.len() as u32).offset(offset).build().user_data(i as u64);
                // SAFETY: buffer `i` is owned by this device, is not resized or dropped while
                // `writing[i]` is set (drop drains every write first), and is not written again
                // until its completion has been reaped and `writing[i]` cleared.
                unsafe { u.ring.submission().push(&write) }.map_err(|_| io::Error::other("io_uring submission queue full"))?;
                u.writing[i] = Some(slot);
                u.ring.submit()?;
                Ok(())
            }
        }
    }

    /// Waits until every submitted write and read-ahead has completed (read-aheads stay to be
    /// collected).
    ///
    /// # Errors
    /// When waiting fails.
    pub fn sync(&mut self) -> io::Result<()> {
        if let Engine::Uring(u) = &mut self.engine {
            while u.writing.iter().any(Option::is_some) || u.ahead.iter().any(|a| matches!(a, Ahead::InFlight(..))) {
                u.ring.submit_and_wait(1)?;
                u.reap(&mut self.write_errors);
            }
        }
        Ok(())
    }

    /// A file descriptor that becomes readable when a read-ahead (or write) completes, for an
    /// event loop to wait on (io_uring only); [`FileDevice::clear_signal`] resets it.
    pub fn signal_fd(&self) -> Option<RawFd> {
        match &self.engine {
            Engine::Uring(u) => u.signal.as_ref().map(AsRawFd::as_raw_fd),
            Engine::Pread => None,
        }
    }

    /// Resets the completion signal (before collecting what completed, so a later completion
    /// signals again).
    pub fn clear_signal(&mut self) {
        if let Engine::Uring(u) = &self.engine {
            if let Some(mut fd) = u.signal.as_ref() {
                let mut count = [0u8; 8];
                // Non-blocking: with nothing signalled the read fails with EAGAIN, which is fine.
                let _ = fd.read(&mut count);
            }
        }
    }

    /// Starts reading bytes `range` of batch slot `slot` (block-aligned; the whole slot is
    /// `0..batch_bytes`) into a free read-ahead buffer and returns the buffer's number without
    /// waiting; `None` when there is no free buffer, a write to the slot is in flight, or the
    /// engine is pread (no read-ahead).
    ///
    /// # Errors
    /// A failure to submit.
    pub fn start_read_ahead(&mut self, slot: u32, range: Range<usize>) -> io::Result<Option<usize>> {
        debug_assert!(range.start.is_multiple_of(ALIGN) && range.end.is_multiple_of(ALIGN) && range.end <= self.batch_bytes);
        let offset = self.offset(slot) + range.start as u64;
        let fd = types::Fd(self.file.as_raw_fd());
        let Engine::Uring(u) = &mut self.engine else { return Ok(None) };
        u.reap(&mut self.write_errors); // Writes that have finished free their slots.
        if u.writing.contains(&Some(slot)) {
            return Ok(None);
        }
        let Some(i) = u.ahead.iter().position(|a| *a == Ahead::Free) else { return Ok(None) };
        let dst = &mut u.ahead_bufs[i].as_mut_slice()[..range.len()];
        let read = opcode::Read::new(fd, dst.as_mut_ptr(), dst.len() as u32).offset(offset).build().user_data(READ_AHEAD_TAG + i as u64);
        // SAFETY: read-ahead buffer `i` is owned by this device, is not resized or dropped while
        // `ahead[i]` is `InFlight` (drop drains every read first), and is not read or handed out
        // until its completion has been reaped and `ahead[i]` set to `Done`.
        unsafe { u.ring.submission().push(&read) }.map_err(|_| io::Error::other("io_uring submission queue full"))?;
        u.ahead[i] = Ahead::InFlight(slot, range.len());
        u.ring.submit()?;
        Ok(Some(i))
    }

    /// A finished read-ahead, if any (without waiting): its buffer number, slot and result.
    /// Its buffer stays taken until [`FileDevice::release_read_ahead`].
    pub fn next_read_ahead(&mut self) -> Option<(usize, u32, io::Result<()>)> {
        let Engine::Uring(u) = &mut self.engine else { return None };
        u.reap(&mut self.write_errors);
        u.ahead.iter().enumerate().find_map(|(i, a)| match *a {
            Ahead::Done(slot, len, res) => Some((i, slot, read_result(res, len))),
            _ => None,
        })
    }

    /// Waits for read-ahead `i` and returns its result (its buffer stays taken until
    /// [`FileDevice::release_read_ahead`]).
    ///
    /// # Errors
    /// The read's error, a short read, a failure to wait, or `i` not started.
    pub fn wait_read_ahead(&mut self, i: usize) -> io::Result<()> {
        let Engine::Uring(u) = &mut self.engine else { return Err(io::Error::other("no read-ahead with pread")) };
        loop {
            match u.ahead.get(i) {
                Some(Ahead::Done(_, len, res)) => return read_result(*res, *len),
                Some(Ahead::InFlight(..)) => {
                    u.ring.submit_and_wait(1)?;
                    u.reap(&mut self.write_errors);
                }
                _ => return Err(io::Error::other(format!("read-ahead {i} was not started"))),
            }
        }
    }

    /// The bytes read-ahead `i` read (valid once it is done).
    pub fn read_ahead_buf(&self, i: usize) -> &[u8] {
        match &self.engine {
            Engine::Uring(u) => match u.ahead.get(i) {
                Some(&Ahead::Done(_, len, _)) => &u.ahead_bufs[i].as_slice()[..len],
                _ => &[],
            },
            Engine::Pread => &[],
        }
    }

    /// Frees read-ahead buffer `i` once it is done (a read still in flight keeps it).
    pub fn release_read_ahead(&mut self, i: usize) {
        if let Engine::Uring(u) = &mut self.engine {
            if let Some(a @ Ahead::Done(..)) = u.ahead.get_mut(i) {
                *a = Ahead::Free;
            }
        }
    }
}

/// A completion's result for a read of `len` bytes.
fn read_result(res: i32, len: usize) -> io::Result<()> {
    match usize::try_from(res) {
        Ok(n) if n == len => Ok(()),
        Ok(n) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("short read of {n} bytes"))),
        Err(_) => Err(io::Error::from_raw_os_error(-res)),
    }
}

impl Uring {
    /// Reaps completions: frees write buffers (counting failed writes), marks read-aheads done,
    /// returns the waited-for read's result.
    fn reap(&mut self, write_errors: &mut u64) -> Option<i32> {
        let mut read = None;
        for cqe in self.ring.completion() {
            let tag = cqe.user_data();
            if tag == READ_TAG {
                read = Some(cqe.result());
            } else if let Some(a) = tag.checked_sub(READ_AHEAD_TAG).and_then(|i| self.ahead.get_mut(i as usize)) {
                if let Ahead::InFlight(slot, len) = *a {
                    *a = Ahead::Done(slot, len, cqe.result());
                }
            } else if let Some(w) = self.writing.get_mut(tag as usize) {
                *w = None;
                if cqe.result() < 0 {
                    *write_errors += 1;
                }
            }
        }
        read
    }

    /// Waits for a write or read-ahead in flight to or from `slot`, if any.
    fn wait_for_slot(&mut self, slot: u32, write_errors: &mut u64) -> io::Result<()> {
        while self.writing.contains(&Some(slot)) || self.ahead.iter().any(|a| matches!(*a, Ahead::InFlight(s, _) if s == slot)) {
            self.ring.submit_and_wait(1)?;
            self.reap(write_errors);
        }
        Ok(())
    }

    /// A write buffer with no write in flight, waiting for one if all are busy.
    fn free_buffer(&mut self, write_errors: &mut u64) -> io::Result<usize> {
        loop {
            if let Some(i) = self.writing.iter().position(Option::is_none) {
                return Ok(i);
            }
            self.ring.submit_and_wait(1)?;
            self.reap(write_errors);
        }
    }
}

impl Drop for FileDevice {
    fn drop(&mut self) {
        // The kernel must be done with every write and read-ahead buffer before they are freed.
        let _ = self.sync();
    }
}

/// Preallocates `len` bytes (posix_fallocate; set_len where the filesystem cannot).
fn preallocate(file: &File, len: u64) -> io::Result<()> {
    let off_len = libc::off_t::try_from(len).map_err(|_| io::Error::other("file size out of range"))?;
    // SAFETY: posix_fallocate only reads its integer arguments; the descriptor is open and owned
    // by `file` for the duration of the call.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, off_len) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => file.set_len(len),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// The size of a block device (seek to its end).
fn block_device_len(file: &File) -> io::Result<u64> {
    use std::io::Seek;
    let mut f = file;
    f.seek(io::SeekFrom::End(0))
}

/// A non-blocking eventfd registered with `ring`, signalled on each completion; `None` when
/// either step fails (an event loop then polls instead of waiting on it).
fn completion_eventfd(ring: &IoUring) -> Option<File> {
    // SAFETY: eventfd(2) takes no pointers; a negative result is an error, checked below.
    let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    ring.submitter().register_eventfd(fd.as_raw_fd()).ok()?;
    Some(File::from(fd))
}
