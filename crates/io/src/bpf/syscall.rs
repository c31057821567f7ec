//! The `bpf(2)` commands an AF_XDP port needs: an XSKMAP, its entries, loading the redirect
//! program, and attaching it to an interface with a BPF link (detached when the link's
//! descriptor closes, so a port that goes leaves nothing attached); and for the XDP traffic
//! tools ([`super::program`]): array maps and their elements, and running a program on frames
//! that it transmits (`BPF_PROG_RUN` in live-frames mode).
//!
//! # Overview
//! Each command's attribute is a `#[repr(C)]` prefix of the kernel's `union bpf_attr`: the
//! kernel reads the size given and treats the rest as zero.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::insn::Insn;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;

const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
/// `BPF_F_TEST_XDP_LIVE_FRAMES`: frames the program returns `XDP_TX` or `XDP_REDIRECT` for
/// are sent for real.
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;
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
struct TestRun {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    /// Explicit, so that the kernel's check that the bytes past the last field are zero holds.
    _pad: u32,
}

/// The kernel's `struct xdp_md`, as a test run's context.
#[repr(C)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
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

/// A new array map of `entries` values of `value_size` bytes each, all zero.
///
/// # Errors
/// The kernel's refusal (`EPERM` without the capability, `ENOMEM`, a size it does not take).
pub fn array_map(value_size: u32, entries: u32, name: &str) -> io::Result<OwnedFd> {
    let mut attr = MapCreate {
        map_type: BPF_MAP_TYPE_ARRAY,
        key_size: 4,
        value_size,
        max_entries: entries,
        map_flags: 0,
        inner_map_fd: 0,
        numa_node: 0,
        map_name: name16(name),
    };
    owned(bpf(BPF_MAP_CREATE, &mut attr)?)
}

/// Writes `value` (the map's value size) to slot `key` of array map `map`.
///
/// # Errors
/// The kernel's refusal (a slot out of range).
pub fn set_elem(map: &OwnedFd, key: u32, value: &[u8]) -> io::Result<()> {
    let mut attr =
        MapElem { map_fd: map.as_raw_fd() as u32, _pad: 0, key: std::ptr::from_ref(&key) as u64, value: value.as_ptr() as u64, flags: 0 };
    bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(drop)
}

/// Reads slot `key` of array map `map` into `value` (the map's value size).
///
/// # Errors
/// The kernel's refusal (a slot out of range).
pub fn get_elem(map: &OwnedFd, key: u32, value: &mut [u8]) -> io::Result<()> {
    let mut attr = MapElem {
        map_fd: map.as_raw_fd() as u32,
        _pad: 0,
        key: std::ptr::from_ref(&key) as u64,
        value: value.as_mut_ptr() as u64,
        flags: 0,
    };
    bpf(BPF_MAP_LOOKUP_ELEM, &mut attr).map(drop)
}

/// Runs XDP program `prog` `repeat` times on copies of `frame` as if each had arrived on
/// interface `ifindex` (of the calling thread's namespace), transmitting those it returns
/// `XDP_TX` for (out of that interface) or redirects, in batches of `batch`.
///
/// # Errors
/// The kernel's refusal (`EINVAL`: a frame it does not take, `ENODEV`: no such interface).
pub fn run_live(prog: &OwnedFd, frame: &[u8], ifindex: u32, repeat: u32, batch: u32) -> io::Result<()> {
    let mut ctx =
        XdpMd { data: 0, data_end: frame.len() as u32, data_meta: 0, ingress_ifindex: ifindex, rx_queue_index: 0, egress_ifindex: 0 };
    let mut attr = TestRun {
        prog_fd: prog.as_raw_fd() as u32,
        retval: 0,
        data_size_in: frame.len() as u32,
        data_size_out: 0,
        data_in: frame.as_ptr() as u64,
        data_out: 0,
        repeat,
        duration: 0,
        ctx_size_in: size_of::<XdpMd>() as u32,
        ctx_size_out: 0,
        ctx_in: std::ptr::from_mut(&mut ctx) as u64,
        ctx_out: 0,
        flags: BPF_F_TEST_XDP_LIVE_FRAMES,
        cpu: 0,
        batch_size: batch,
        _pad: 0,
    };
    bpf(BPF_PROG_TEST_RUN, &mut attr).map(drop)
}

/// The time of `CLOCK_MONOTONIC` in nanoseconds: what the `bpf_ktime_get_ns` helper reads.
pub fn monotonic_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a live timespec the call writes; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The signal that ends a live run early (a real-time one: nothing else here uses it).
fn stop_signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

extern "C" fn on_stop_signal(_: libc::c_int) {}

/// Makes [`stop_signal`] interrupt system calls (no `SA_RESTART`) and do nothing else.
fn install_stop_handler() -> io::Result<()> {
    static INSTALLED: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    let ret = *INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed sigaction is valid; the handler is an `extern "C"` function that does
        // nothing (async-signal-safe); the signal is one no other code here handles.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as *const () as usize;
            libc::sigemptyset(&raw mut action.sa_mask);
            libc::sigaction(stop_signal(), &raw const action, std::ptr::null_mut())
        }
    });
    if ret < 0 {
        Err(io::Error::other("installing the live run's stop signal"))
    } else {
        Ok(())
    }
}

/// [`run_live`] with ever more repetitions until `deadline`, when a helper thread interrupts
/// the run with a signal; `at_times` runs on the helper at each of its instants first (in
/// order), while the frames flow.
///
/// # Errors
/// The kernel's refusal of the run (not its interruption).
pub fn run_live_until(
    prog: &OwnedFd,
    frame: &[u8],
    ifindex: u32,
    deadline: std::time::Instant,
    at_times: &mut [(std::time::Instant, &mut (dyn FnMut() + Send))],
) -> io::Result<()> {
    install_stop_handler()?;
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for (at, f) in at_times.iter_mut() {
                std::thread::sleep(at.saturating_duration_since(std::time::Instant::now()));
                f();
            }
            std::thread::sleep(deadline.saturating_duration_since(std::time::Instant::now()));
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                // SAFETY: `me` is the thread in the scope's body, alive until it sets `done` and
                // the scope joins this one; the signal's handler does nothing.
                unsafe { libc::pthread_kill(me, stop_signal()) };
                std::thread::sleep(std::time::Duration::from_micros(500));
            }
        });
        let mut result = Ok(());
        while std::time::Instant::now() < deadline {
            match run_live(prog, frame, ifindex, u32::MAX, 64) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        result
    })
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
