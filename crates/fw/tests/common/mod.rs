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
