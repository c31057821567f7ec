//! XDP programs and array maps for tools built on them: a program assembled with
//! [`super::insn`] is loaded, attached to an interface, or run on frames it transmits.
//!
//! # Overview
//! - [`XdpProgram::load`] hands the instructions to the verifier (its log in the error).
//! - [`XdpProgram::attach`] puts it on an interface; it stays there while the [`XdpLink`]
//!   lives.
//! - [`XdpProgram::run_live`] runs it on copies of one frame as if they had arrived on an
//!   interface (`BPF_PROG_RUN` with live frames): each it answers `XDP_TX` leaves by that
//!   interface, with no socket buffer made. This is how a traffic generator outruns the
//!   system it loads (the kernel's own `xdp-trafficgen` works so).
//! - [`ArrayMap`]: the kernel's array map, which programs read and count into and the
//!   program that made them reads back.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::insn::Insn;
use super::syscall;
use crate::XdpMode;

/// An XDP program the kernel verified.
#[derive(Debug)]
pub struct XdpProgram {
    fd: OwnedFd,
}

/// A program attached to an interface; detached when dropped.
#[derive(Debug)]
pub struct XdpLink {
    _fd: OwnedFd,
}

/// Frames one live run transmits before they are flushed.
const LIVE_BATCH: u32 = 64;

impl XdpProgram {
    /// Loads `insns`, named `name` (15 bytes kept).
    ///
    /// # Errors
    /// The verifier's refusal, its log in the message; `EPERM` without the capability.
    pub fn load(insns: &[Insn], name: &str) -> io::Result<XdpProgram> {
        Ok(XdpProgram { fd: syscall::load_xdp(insns, name)? })
    }

    /// Attaches the program to interface `ifindex` (of the calling thread's namespace).
    ///
    /// # Errors
    /// The kernel's refusal (`EOPNOTSUPP`: no such mode for the driver; `EBUSY`: a program
    /// already attached).
    pub fn attach(&self, ifindex: u32, mode: XdpMode) -> io::Result<XdpLink> {
        let flags = if mode == XdpMode::Native { syscall::XDP_FLAGS_DRV_MODE } else { syscall::XDP_FLAGS_SKB_MODE };
        Ok(XdpLink { _fd: syscall::attach_xdp(&self.fd, ifindex, flags)? })
    }

    /// Runs the program `repeat` times on copies of `frame` arriving on interface `ifindex` (of
    /// the calling thread's namespace), on this thread's core; what it answers `XDP_TX` for is
    /// transmitted out of that interface. The copies live in pages the kernel recycles, so a
    /// program that writes into a frame must write every byte that varies.
    ///
    /// # Errors
    /// The kernel's refusal (`EINVAL`: a frame too short or too long for a page, `ENODEV`: no
    /// such interface).
    pub fn run_live(&self, frame: &[u8], ifindex: u32, repeat: u32) -> io::Result<()> {
        syscall::run_live(&self.fd, frame, ifindex, repeat, LIVE_BATCH)
    }

    /// [`XdpProgram::run_live`] without end until `deadline` (the program paces and stops
    /// itself; a run is interrupted there by a signal to this thread), calling each of `at` at
    /// its instant, in order, from another thread on this thread's cores while frames flow. A
    /// run costs an RCU grace period to set up (tens of milliseconds), so one long run it is.
    ///
    /// # Errors
    /// The kernel's refusal of the run.
    pub fn run_live_until(
        &self,
        frame: &[u8],
        ifindex: u32,
        deadline: std::time::Instant,
        at: &mut [(std::time::Instant, &mut (dyn FnMut() + Send))],
    ) -> io::Result<()> {
        syscall::run_live_until(&self.fd, frame, ifindex, deadline, at)
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock a program reads with `bpf_ktime_get_ns`.
pub fn monotonic_ns() -> u64 {
    syscall::monotonic_ns()
}

/// An array map: `entries` values of `value_size` bytes, slots `0..entries`.
#[derive(Debug)]
pub struct ArrayMap {
    fd: OwnedFd,
    value_size: usize,
    entries: u32,
}

impl ArrayMap {
    /// A new map, every value zero.
    ///
    /// # Errors
    /// The kernel's refusal (`EPERM` without the capability, `ENOMEM`).
    pub fn new(value_size: usize, entries: u32, name: &str) -> io::Result<ArrayMap> {
        let size = u32::try_from(value_size).map_err(|_| io::Error::other("a value too large"))?;
        Ok(ArrayMap { fd: syscall::array_map(size, entries, name)?, value_size, entries })
    }

    /// The descriptor a program's instructions name the map by ([`super::insn::Assembler::load_map_fd`]).
    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// The number of slots.
    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// Writes slot `key`.
    ///
    /// # Errors
    /// `value` not of the map's value size; a slot out of range.
    pub fn set(&self, key: u32, value: &[u8]) -> io::Result<()> {
        if value.len() != self.value_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} bytes for a map of {}-byte values", value.len(), self.value_size),
            ));
        }
        syscall::set_elem(&self.fd, key, value)
    }

    /// Reads slot `key`.
    ///
    /// # Errors
    /// A slot out of range.
    pub fn get(&self, key: u32) -> io::Result<Vec<u8>> {
        let mut v = vec![0; self.value_size];
        syscall::get_elem(&self.fd, key, &mut v)?;
        Ok(v)
    }

    /// The first eight bytes of slot `key`, as a native-endian counter.
    ///
    /// # Errors
    /// A slot out of range; values shorter than eight bytes.
    pub fn get_u64(&self, key: u32) -> io::Result<u64> {
        let v = self.get(key)?;
        let b: [u8; 8] = v.get(..8).and_then(|b| b.try_into().ok()).ok_or_else(|| io::Error::other("values shorter than a counter"))?;
        Ok(u64::from_ne_bytes(b))
    }
}
