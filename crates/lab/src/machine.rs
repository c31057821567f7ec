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
