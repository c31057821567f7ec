//! Socket calls every backend makes: a C return value as a result, and socket options set and
//! read as typed values.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// A negative return from a libc call as the error it set.
pub(crate) fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `setsockopt(fd, level, name, value)`.
pub(crate) fn set<T>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` is a live value of the size passed, which the kernel only reads.
    check(unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, std::ptr::from_ref(value).cast(), size_of::<T>() as libc::socklen_t) })
        .map(drop)
}

/// `getsockopt(fd, level, name)` of a plain-data `T` (valid all zeros).
pub(crate) fn get<T: Copy>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int) -> io::Result<T> {
    // SAFETY: the kernel structures read through this are plain data, valid all zeros.
    let mut value: T = unsafe { std::mem::zeroed() };
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is live and `len` its size; the kernel writes at most `len` bytes.
    check(unsafe { libc::getsockopt(fd.as_raw_fd(), level, name, std::ptr::from_mut(&mut value).cast(), &mut len) })?;
    Ok(value)
}
