//! A memory mapping owned by one value and unmapped when it drops: the frame pool's anonymous
//! region, and the rings the kernel shares through a socket (AF_XDP, TPACKET_V3).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;

/// A readable, writable mapping, populated when made.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone; moving it to another thread moves that
// ownership (whoever writes it through the kernel synchronises through the rings' own words).
unsafe impl Send for Mapping {}

impl Mapping {
    fn new(len: usize, flags: libc::c_int, fd: libc::c_int, offset: libc::off_t) -> io::Result<Mapping> {
        // SAFETY: a new mapping at an address the kernel picks; nothing else refers to it.
        let p =
            unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags | libc::MAP_POPULATE, fd, offset) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Mapping { ptr, len })
    }

    /// `len` bytes of private anonymous memory.
    pub(crate) fn anonymous(len: usize) -> io::Result<Mapping> {
        Mapping::new(len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    }

    /// `len` bytes at `offset` of what socket `fd` shares with the kernel.
    pub(crate) fn shared(fd: &OwnedFd, len: usize, offset: libc::off_t) -> io::Result<Mapping> {
        Mapping::new(len, libc::MAP_SHARED, fd.as_raw_fd(), offset)
    }

    /// Its first byte.
    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Its length.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping this value made, of this length; its owner holds no reference
        // into it past its own drop (pools, rings and ports keep only derived pointers).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
