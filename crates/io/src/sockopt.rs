//! Socket calls every backend makes: a C return value as a result, and socket options set and
//! read as typed values.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

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

/// Sets the receive buffer of any socket to `bytes`: beyond `net.core.rmem_max` where the
/// caller may (`CAP_NET_ADMIN`, `SO_RCVBUFFORCE`), else as far as that limit allows — for a
/// netlink socket that must hold a burst of a whole table's notifications.
///
/// # Errors
/// The socket refused both options.
pub fn set_receive_buffer(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<()> {
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    let size = size_of::<libc::c_int>() as libc::socklen_t;
    for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: `value` is a live c_int of the size passed, which the kernel only reads.
        let ret = unsafe { libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, option, std::ptr::from_ref(&value).cast(), size) };
        if ret == 0 {
            return Ok(());
        }
    }
    Err(io::Error::last_os_error())
}
