//! What machine and build a result came from: the `machine` block of every JSON document.

use serde::Serialize;

/// The machine an experiment ran on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// Total memory in bytes.
    pub memory: u64,
    /// The compiler that built this binary.
    pub rustc: String,
    /// `git describe --always --dirty` of the working tree, when there is one.
    pub git: String,
}

impl Machine {
    /// Reads the current machine's description.
    pub fn current() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or_else(|| std::env::consts::ARCH.to_string(), |(_, v)| v.trim().to_string());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024);
        let git = std::process::Command::new("git")
            .args(["describe", "--always", "--dirty", "--abbrev=12"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map_or_else(|| "unknown".to_string(), |s| s.trim().to_string());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory,
            rustc: env!("NEXTHOP_RUSTC_VERSION").to_string(),
            git,
        }
    }
}

/// Resident memory of process `pid` (`VmRSS` in `/proc/<pid>/status`), bytes.
pub fn rss_bytes_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Pins the calling thread to logical core `core` (modulo the cores there are), as a data plane
/// gives its reader and writer threads cores of their own. Returns whether the kernel agreed.
/// Threads the caller spawns afterwards inherit the pin: call it on threads made for the purpose.
#[allow(unsafe_code)]
pub fn pin_current_thread(core: usize) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // SAFETY: `set` is a plain bit set owned by this frame; CPU_ZERO / CPU_SET only write inside
    // it (the index is below `cores` ≤ CPU_SETSIZE), and sched_setaffinity(0, …) reads `size`
    // bytes of it for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(core % cores.min(libc::CPU_SETSIZE as usize), &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}
