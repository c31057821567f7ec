//! What the CLI's tests of `nexthop run` share: the forwarder they started (killed if a test
//! fails before stopping it), signals to it, and its clean stop; for the tests in network
//! namespaces, the namespaces, commands in them and `nexthop run` in one. (Each test file uses
//! part of it, hence `dead_code` allowed.)
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A `nexthop run` a test started: killed when dropped still running (a failed assertion would
/// otherwise leave it behind).
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Sends `signal` to the forwarder `fw`.
pub fn signal(fw: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(fw.id()).unwrap();
    // SAFETY: kill(2) on the child this test started and has not yet waited for; no memory is
    // involved.
    #[allow(unsafe_code)]
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0);
}

/// Stops `fw` with SIGTERM (what a service manager sends), waiting at most 10 s: its exit status.
pub fn stop(fw: &mut Child) -> ExitStatus {
    signal(fw, libc::SIGTERM);
    let t0 = Instant::now();
    loop {
        if let Some(s) = fw.try_wait().unwrap() {
            return s;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "nexthop run did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `nexthop run -c config`, its stderr written to `log` (`RUST_LOG` unset: the log level is the
/// file's).
pub fn run_nexthop(config: &Path, log: &Path) -> Running {
    Running(
        Command::new(env!("CARGO_BIN_EXE_nexthop"))
            .args(["run", "-c"])
            .arg(config)
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap(),
    )
}

/// Waits up to 10 s for `done`.
pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Namespaces `nh<tag><role><pid>`, one per role; `None` where the test is to be skipped.
pub fn namespaces(tag: &str, roles: &[&str]) -> Option<Vec<nexthop_io::netns::Netns>> {
    let id = std::process::id() % 100_000;
    roles.iter().map(|role| nexthop_io::netns::Netns::for_test(&format!("nh{tag}{role}{id}"))).collect()
}

/// Runs `cmd` in namespace `ns`: its standard output; the test fails if it does.
pub fn run_in(ns: &nexthop_io::netns::Netns, cmd: &[&str]) -> String {
    let out = ns.exec(cmd).unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{cmd:?} in {}: {text}{}", ns.name(), String::from_utf8_lossy(&out.stderr));
    text
}

/// `nexthop run` in namespace `ns` with a configuration of its own in `dir` (a Unix face there,
/// no TCP or UDP, logging at info) and `section` (TOML) after it; its log in `dir/<ns>.log`.
pub fn nexthop_in(ns: &nexthop_io::netns::Netns, dir: &Path, section: &str) -> Child {
    let name = ns.name();
    let config = format!(
        "[forwarder]\nlog_level = \"info\"\n[faces]\nunix = {:?}\ntcp = \"\"\nudp = \"\"\n{section}",
        dir.join(format!("{name}.sock")).display().to_string(),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    Command::new("ip")
        .args(["netns", "exec", name, env!("CARGO_BIN_EXE_nexthop"), "run", "-c"])
        .arg(&path)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{name}.log"))).unwrap())
        .spawn()
        .unwrap()
}
