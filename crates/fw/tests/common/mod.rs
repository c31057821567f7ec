//! What the forwarder's integration tests share: a forwarder running in-process on a private
//! Unix socket (and loopback UDP and WebSocket ports), and scratch directories. (Each test file uses part of
//! it, hence `dead_code` allowed.)
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use nexthop_fw::conf::config::Config;
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::runtime::Runtime;
use nexthop_tools::client::Client;
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
    /// Wakes its loop (which, idle, looks at `stop` once a second).
    waker: Arc<nexthop_fw::runtime::Waker>,
    thread: Option<JoinHandle<()>>,
}

impl Forwarder {
    pub fn start(dir: impl AsRef<Path>, name: &str, threads: usize) -> Self {
        Forwarder::start_with(dir, name, threads, |_| {})
    }

    /// [`Forwarder::start`] with the configuration changed by `configure` (which may also
    /// change the listeners).
    pub fn start_with(dir: impl AsRef<Path>, name: &str, threads: usize, configure: impl FnOnce(&mut Config)) -> Self {
        Forwarder::start_in(None, dir, name, threads, configure)
    }

    /// [`Forwarder::start_with`] in network namespace `netns` (its sockets, and those it makes
    /// later, are the namespace's; its Unix socket is a file like any other).
    pub fn start_in(netns: Option<&Netns>, dir: impl AsRef<Path>, name: &str, threads: usize, configure: impl FnOnce(&mut Config)) -> Self {
        let mut cfg = Config::default();
        cfg.faces.unix = dir.as_ref().join(format!("{name}.sock")).to_string_lossy().into_owned();
        cfg.faces.tcp = String::new();
        cfg.faces.udp = "127.0.0.1:0".into();
        cfg.faces.websocket = "127.0.0.1:0".into();
        configure(&mut cfg);
        cfg.forwarder.threads = threads;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let socket = cfg.faces.unix.clone();
        let netns = netns.map(|n| format!("/run/netns/{}", n.name));
        let (started, listening) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            if let Some(path) = netns {
                enter_netns(&path);
            }
            let mut rt = Runtime::new(cfg).expect("forwarder starts");
            let udp = rt.listening().udp.expect("a UDP listener");
            let websocket = rt.listening().websocket.expect("a WebSocket listener");
            started.send((udp, websocket, rt.waker())).expect("the test waits");
            rt.run(&s).expect("runs");
        });
        let (udp, websocket, waker) = listening.recv().expect("the forwarder starts");
        Forwarder { socket, udp, websocket, stop, waker, thread: Some(thread) }
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

    /// Waits (at most 20 s) until the FIB has an entry for `prefix`: `who`, an app, has
    /// registered it.
    pub fn wait_for_route(&self, prefix: &str, who: &str) {
        let name = nexthop_wire::Name::from_uri(prefix).unwrap();
        let since = std::time::Instant::now();
        while !self.has_route(&name) {
            assert!(since.elapsed() < std::time::Duration::from_secs(20), "{who} did not register {prefix}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
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
        let _ = self.waker.wake();
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

/// Moves the calling thread into the network namespace at `path` (threads it starts later are
/// in it too).
#[allow(unsafe_code)]
fn enter_netns(path: &str) {
    use std::os::fd::AsRawFd;
    let ns = std::fs::File::open(path).expect("the namespace's file");
    // SAFETY: setns only reads the descriptor, a namespace file open for the call; it changes
    // the calling thread's network namespace and touches no memory of this process.
    let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
}

/// A network namespace made for one test, with its loopback up, and removed after it: its
/// interfaces are the test's alone (tests in other threads see none of them). Skipped or failing
/// like [`VethPair`]; making one needs CAP_SYS_ADMIN.
pub struct Netns {
    /// Its name (`ip netns`).
    pub name: String,
}

impl Netns {
    /// A namespace named after `tag` and the process; `None` when skipped.
    pub fn new(tag: &str) -> Option<Netns> {
        let name = format!("nx{tag}{}ns", std::process::id() % 100_000);
        let _ = std::process::Command::new("ip").args(["netns", "del", &name]).output();
        match std::process::Command::new("ip").args(["netns", "add", &name]).output() {
            Ok(o) if o.status.success() => {}
            failed => {
                let skip = std::env::var("NEXTHOP_SKIP_NET_ADMIN").is_ok_and(|v| v == "1");
                assert!(skip, "making a network namespace (needs CAP_SYS_ADMIN; NEXTHOP_SKIP_NET_ADMIN=1 skips this test): {failed:?}");
                eprintln!("no network namespace ({failed:?}): skipped");
                return None;
            }
        }
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"]);
        Some(ns)
    }

    /// Runs `ip -n <name> <args>`, which must succeed.
    pub fn ip(&self, args: &[&str]) {
        let out = std::process::Command::new("ip").args(["-n", &self.name]).args(args).output().expect("ip runs");
        assert!(out.status.success(), "ip -n {} {args:?}: {}", self.name, String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Its interfaces go with it (and a veth end's peer outside with that).
        let _ = std::process::Command::new("ip").args(["netns", "del", &self.name]).output();
    }
}

/// A [`Netns`] joined to this one by a veth pair with an IPv4 address at each end (`10.77.x.1`
/// inside, `10.77.x.2` outside): a link that traffic between two forwarders of this process
/// really crosses (between two addresses of one namespace it would go over loopback).
pub struct LinkedNetns {
    /// The namespace.
    pub netns: Netns,
    /// The veth end inside it.
    pub inside: String,
    /// That end's address.
    pub inside_ip: std::net::Ipv4Addr,
    /// The address of the end outside.
    pub outside_ip: std::net::Ipv4Addr,
    _pair: VethPair,
}

impl LinkedNetns {
    /// A namespace and pair named after `tag` and the process; `None` when skipped.
    pub fn new(tag: &str) -> Option<LinkedNetns> {
        let pair = VethPair::new(tag)?;
        let netns = Netns::new(tag)?;
        let x = (std::process::id() % 250 + 1) as u8;
        let (inside_ip, outside_ip) = (std::net::Ipv4Addr::new(10, 77, x, 1), std::net::Ipv4Addr::new(10, 77, x, 2));
        let inside = pair.a.clone();
        let out = std::process::Command::new("ip").args(["link", "set", &inside, "netns", &netns.name]).output().expect("ip runs");
        assert!(out.status.success(), "moving {inside} into {}: {}", netns.name, String::from_utf8_lossy(&out.stderr));
        netns.ip(&["addr", "add", &format!("{inside_ip}/24"), "dev", &inside]);
        netns.ip(&["link", "set", &inside, "up"]);
        let out =
            std::process::Command::new("ip").args(["addr", "add", &format!("{outside_ip}/24"), "dev", &pair.b]).output().expect("ip runs");
        assert!(out.status.success(), "addressing {}: {}", pair.b, String::from_utf8_lossy(&out.stderr));
        Some(LinkedNetns { netns, inside, inside_ip, outside_ip, _pair: pair })
    }
}

/// The address of interface `name`.
pub fn mac_of(name: &str) -> String {
    std::fs::read_to_string(format!("/sys/class/net/{name}/address")).unwrap().trim().to_string()
}
