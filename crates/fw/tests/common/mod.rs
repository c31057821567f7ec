//! What the forwarder's integration tests share: a forwarder running in-process on a private
//! Unix socket (and loopback UDP and WebSocket ports), and scratch directories. (Each test file uses part of
//! it, hence `dead_code` allowed.)
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use nexthop_fw::client::Client;
use nexthop_fw::config::Config;
use nexthop_fw::face::FaceUri;
use nexthop_fw::runtime::Runtime;
use tempfile::TempDir;

/// A fresh directory for test `tag`, removed with everything in it when dropped (declare it
/// before the forwarders whose sockets it holds, so that they are dropped first).
pub fn scratch(tag: &str) -> TempDir {
    tempfile::Builder::new().prefix(&format!("nexthop-{tag}-")).tempdir().expect("a scratch directory")
}

/// A forwarder running in a thread, its socket `<dir>/<name>.sock`; stopped on drop.
pub struct Forwarder {
    /// The Unix socket's path.
    pub socket: String,
    /// The UDP listener (loopback, a free port).
    pub udp: std::net::SocketAddr,
    /// The WebSocket listener (loopback, a free port).
    pub websocket: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Forwarder {
    pub fn start(dir: impl AsRef<Path>, name: &str, threads: usize) -> Self {
        Forwarder::start_with(dir, name, threads, |_| {})
    }

    /// [`Forwarder::start`] with the configuration changed by `configure` first.
    pub fn start_with(dir: impl AsRef<Path>, name: &str, threads: usize, configure: impl FnOnce(&mut Config)) -> Self {
        let mut cfg = Config::default();
        configure(&mut cfg);
        cfg.forwarder.threads = threads;
        cfg.faces.unix = dir.as_ref().join(format!("{name}.sock")).to_string_lossy().into_owned();
        cfg.faces.tcp = String::new();
        cfg.faces.udp = "127.0.0.1:0".into();
        cfg.faces.websocket = "127.0.0.1:0".into();
        let mut rt = Runtime::new(cfg.clone()).expect("forwarder starts");
        let udp = rt.listening().udp.expect("a UDP listener");
        let websocket = rt.listening().websocket.expect("a WebSocket listener");
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || rt.run(&s).expect("runs"));
        Forwarder { socket: cfg.faces.unix, udp, websocket, stop, thread: Some(thread) }
    }

    /// The Unix face's URI.
    pub fn unix(&self) -> FaceUri {
        FaceUri::Unix(self.socket.clone())
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.unix()).expect("connects")
    }

    /// Packets dropped for `reason` (its label in the `status/drops` dataset), all threads.
    pub fn drops(&self, reason: &str) -> u64 {
        let counts = nexthop_fw::mgmt::dataset::parse_labelled_counts(&self.client().dataset("/localhost/nfd/status/drops").unwrap());
        counts.iter().find(|(label, _)| label == reason).map_or(0, |c| c.1)
    }

    /// Whether the FIB has an entry for `prefix` exactly (its `fib/list` dataset).
    pub fn has_route(&self, prefix: &nexthop_wire::Name) -> bool {
        use nexthop_wire::tlv::TlvReader;
        let list = self.client().dataset("/localhost/nfd/fib/list").unwrap();
        TlvReader::new(&list)
            .map(Result::unwrap)
            .any(|entry| TlvReader::new(entry.value).next().is_some_and(|n| n.unwrap().value == prefix.value()))
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A veth pair made for one test (two interfaces joined like a cable) and removed after it.
/// Making one needs CAP_NET_ADMIN: without it the test fails, saying so, unless
/// `NEXTHOP_SKIP_NET_ADMIN=1` is set.
pub struct VethPair {
    /// One end.
    pub a: String,
    /// The other.
    pub b: String,
}

impl VethPair {
    /// A pair named after `tag` and the process; `None` when skipped.
    pub fn new(tag: &str) -> Option<VethPair> {
        let n = std::process::id() % 100_000;
        let (a, b) = (format!("nx{tag}{n}a"), format!("nx{tag}{n}b"));
        let ip = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .output()
                .map(|o| (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned()))
        };
        let _ = ip(&["link", "del", &a]);
        match ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]) {
            Ok((true, _)) => {}
            failed => {
                let skip = std::env::var("NEXTHOP_SKIP_NET_ADMIN").is_ok_and(|v| v == "1");
                assert!(skip, "making a veth pair (needs CAP_NET_ADMIN; NEXTHOP_SKIP_NET_ADMIN=1 skips this test): {failed:?}");
                eprintln!("no veth pair ({failed:?}): skipped");
                return None;
            }
        }
        let pair = VethPair { a, b };
        for end in [&pair.a, &pair.b] {
            // No IPv6 on them, so that tests of IPv6 multicast on every interface do not see them.
            let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{end}/disable_ipv6"), "1");
            assert!(ip(&["link", "set", end, "up"]).unwrap().0, "setting {end} up");
        }
        Some(pair)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip").args(["link", "del", &self.a]).output();
    }
}

/// The address of interface `name`.
pub fn mac_of(name: &str) -> String {
    std::fs::read_to_string(format!("/sys/class/net/{name}/address")).unwrap().trim().to_string()
}
