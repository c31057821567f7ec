//! The `bpf(2)` commands an AF_XDP port needs: an XSKMAP, its entries, loading the redirect
//! program, and attaching it to an interface with a BPF link (detached when the link's
//! descriptor closes, so a port that goes leaves nothing attached).
//!
//! # Overview
//! Each command's attribute is a `#[repr(C)]` prefix of the kernel's `union bpf_attr`: the
//! kernel reads the size given and treats the rest as zero.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::insn::Insn;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;

const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;

/// `XDP_FLAGS_SKB_MODE`: the generic hook, after the kernel made an skb.
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: the driver's own hook.
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

#[repr(C)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

#[repr(C)]
struct MapElem {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

#[repr(C)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// `bpf(cmd, attr, sizeof attr)`: a new descriptor or 0.
fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a live, initialised #[repr(C)] prefix of `union bpf_attr` of the size
    // passed; the kernel reads it (and, for PROG_LOAD, writes the log through the pointer and
    // size inside it, which point at a live buffer of that size).
    let ret = unsafe { libc::syscall(libc::SYS_bpf, cmd, std::ptr::from_mut(attr).cast::<libc::c_void>(), size_of::<T>()) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("a descriptor out of range"))?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn name16(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, b) in out.iter_mut().zip(name.bytes().take(15)) {
        *o = b;
    }
    out
}

/// A new XSKMAP of `entries` slots (one per receive queue).
///
/// # Errors
/// The kernel's refusal (`EPERM` without `CAP_BPF`/`CAP_NET_ADMIN`).
pub fn xsk_map(entries: u32) -> io::Result<OwnedFd> {
    let mut attr = MapCreate {
        map_type: BPF_MAP_TYPE_XSKMAP,
        key_size: 4,
        value_size: 4,
        max_entries: entries,
        map_flags: 0,
        inner_map_fd: 0,
        numa_node: 0,
        map_name: name16("nexthop_xsks"),
    };
    owned(bpf(BPF_MAP_CREATE, &mut attr)?)
}

fn elem(map: &OwnedFd, key: &u32, value: &u32) -> MapElem {
    MapElem {
        map_fd: map.as_raw_fd() as u32,
        _pad: 0,
        key: std::ptr::from_ref(key) as u64,
        value: std::ptr::from_ref(value) as u64,
        flags: 0,
    }
}

/// Puts socket `xsk` in slot `queue` of `map`.
///
/// # Errors
/// The kernel's refusal (a slot out of range; a socket not bound).
pub fn set_xsk(map: &OwnedFd, queue: u32, xsk: &OwnedFd) -> io::Result<()> {
    let fd = xsk.as_raw_fd() as u32;
    bpf(BPF_MAP_UPDATE_ELEM, &mut elem(map, &queue, &fd)).map(drop)
}

/// Loads `insns` as an XDP program; a refusal carries the verifier's log.
///
/// # Errors
/// The verifier's refusal, its log in the message; `EPERM` without the capability.
pub fn load_xdp(insns: &[Insn], name: &str) -> io::Result<OwnedFd> {
    let license = c"Dual MIT/GPL";
    let mut log = vec![0u8; 64 * 1024];
    let mut attr = ProgLoad {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        kern_version: 0,
        prog_flags: 0,
        prog_name: name16(name),
        prog_ifindex: 0,
        expected_attach_type: BPF_XDP,
    };
    match bpf(BPF_PROG_LOAD, &mut attr) {
        Ok(fd) => owned(fd),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            Err(io::Error::new(e.kind(), format!("{e}; the verifier says: {}", text.trim())))
        }
    }
}

/// Attaches `prog` to interface `ifindex` in the mode of `flags`; it stays attached while the
/// returned link is open.
///
/// # Errors
/// The kernel's refusal (`EOPNOTSUPP`: no such mode for this driver; `EBUSY`: a program
/// already attached; `ENODEV`: no such interface).
pub fn attach_xdp(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    let mut attr = LinkCreate { prog_fd: prog.as_raw_fd() as u32, target_ifindex: ifindex, attach_type: BPF_XDP, flags };
    owned(bpf(BPF_LINK_CREATE, &mut attr)?)
}
