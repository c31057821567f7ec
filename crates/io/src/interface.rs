//! A network interface as a port sees it: index, Ethernet address, MTU and receive queues, read
//! with `ioctl`s on a socket of the calling thread's network namespace (not `/sys`, which shows
//! the namespace it was mounted in).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::PortError;

/// What a port needs to know of its interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// Its name.
    pub name: String,
    /// Its index (another one if the interface is deleted and made again).
    pub index: u32,
    /// Its Ethernet address.
    pub mac: [u8; 6],
    /// Its MTU.
    pub mtu: u32,
    /// Its receive queues (at least 1).
    pub queues: u32,
}

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

const ETHTOOL_GCHANNELS: u32 = 0x3c;

pub(crate) fn request(name: &str) -> Result<libc::ifreq, PortError> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.bytes().any(|b| b == 0 || b == b'/') {
        return Err(PortError::Config(format!("{name:?} is not an interface name")));
    }
    // SAFETY: ifreq is plain data, valid all zeros.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(r)
}

pub(crate) fn ioctl(fd: &impl AsRawFd, op: libc::c_ulong, r: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: `r` is a live ifreq, which the request reads and writes (for SIOCETHTOOL, through
    // the pointer it holds to a live ethtool structure).
    if unsafe { libc::ioctl(fd.as_raw_fd(), op as _, std::ptr::from_mut(r)) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A datagram socket for interface ioctls, in the calling thread's network namespace.
fn control_socket() -> Result<OwnedFd, PortError> {
    // SAFETY: a plain datagram socket for ioctls, owned right after.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(PortError::os("a socket for interface ioctls", io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Gives interface `name` Ethernet address `mac`.
///
/// # Errors
/// A name that cannot be one; a failed `ioctl` (no such interface, no CAP_NET_ADMIN).
pub(crate) fn set_mac(name: &str, mac: [u8; 6]) -> Result<(), PortError> {
    let fd = control_socket()?;
    let mut r = request(name)?;
    r.ifr_ifru.ifru_hwaddr.sa_family = libc::ARPHRD_ETHER;
    // SAFETY: writing the plain bytes of the union's address field, which the request reads.
    unsafe {
        for (d, s) in r.ifr_ifru.ifru_hwaddr.sa_data.iter_mut().zip(mac) {
            *d = s as libc::c_char;
        }
    }
    ioctl(&fd, libc::SIOCSIFHWADDR, &mut r).map_err(|e| PortError::os(format!("setting the address of {name}"), e))
}

/// Brings interface `name` up.
///
/// # Errors
/// A name that cannot be one; a failed `ioctl` (no such interface, no CAP_NET_ADMIN).
pub(crate) fn set_up(name: &str) -> Result<(), PortError> {
    let fd = control_socket()?;
    let failed = |what: &'static str| move |e| PortError::os(format!("{what} of {name}"), e);
    let mut r = request(name)?;
    ioctl(&fd, libc::SIOCGIFFLAGS, &mut r).map_err(failed("reading the flags"))?;
    // SAFETY: SIOCGIFFLAGS filled the flags field of the union.
    unsafe { r.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    ioctl(&fd, libc::SIOCSIFFLAGS, &mut r).map_err(failed("bringing up"))
}

impl Interface {
    /// The interface named `name` in the calling thread's network namespace.
    ///
    /// # Errors
    /// [`PortError::NoSuchInterface`]; a name that cannot be one; a failed `ioctl`.
    pub fn lookup(name: &str) -> Result<Interface, PortError> {
        let mut r = request(name)?;
        let fd = control_socket()?;
        let missing = |e: io::Error| {
            if e.raw_os_error() == Some(libc::ENODEV) {
                PortError::NoSuchInterface(name.to_string())
            } else {
                PortError::os(format!("reading interface {name}"), e)
            }
        };
        ioctl(&fd, libc::SIOCGIFINDEX, &mut r).map_err(missing)?;
        // SAFETY: SIOCGIFINDEX filled the union's index.
        let index = unsafe { r.ifr_ifru.ifru_ifindex } as u32;
        ioctl(&fd, libc::SIOCGIFHWADDR, &mut r).map_err(missing)?;
        // SAFETY: SIOCGIFHWADDR filled the union's hardware address.
        let hw = unsafe { r.ifr_ifru.ifru_hwaddr };
        if hw.sa_family != libc::ARPHRD_ETHER {
            return Err(PortError::Config(format!("{name} is not an Ethernet interface")));
        }
        let mut mac = [0u8; 6];
        for (m, b) in mac.iter_mut().zip(hw.sa_data) {
            *m = b as u8;
        }
        ioctl(&fd, libc::SIOCGIFMTU, &mut r).map_err(missing)?;
        // SAFETY: SIOCGIFMTU filled the union's MTU.
        let mtu = unsafe { r.ifr_ifru.ifru_mtu } as u32;
        let mut channels = EthtoolChannels { cmd: ETHTOOL_GCHANNELS, ..EthtoolChannels::default() };
        r.ifr_ifru.ifru_data = std::ptr::from_mut(&mut channels).cast();
        // A driver without channels has one queue.
        let queues = match ioctl(&fd, libc::SIOCETHTOOL, &mut r) {
            Ok(()) => channels.rx_count.max(channels.combined_count).max(1),
            Err(_) => 1,
        };
        Ok(Interface { name: name.to_string(), index, mac, mtu, queues })
    }

    /// The index of the interface named `name` now, if there is one.
    pub fn index_of(name: &str) -> Option<u32> {
        let c = std::ffi::CString::new(name).ok()?;
        // SAFETY: `c` is a live NUL-terminated string.
        let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
        (i != 0).then_some(i)
    }
}
