//! Forwarders as processes: nexthop (this binary's `nexthop run`) and its peer NDNd, the Go NDN
//! forwarder (github.com/named-data/ndnd), started the same way so that both are measured from
//! outside, over the same sockets, with their own memory.
//!
//! Overview: [`Forwarder::nexthop`] and [`Forwarder::ndnd`] write the system's configuration into
//! a scratch directory (Unix socket there, TCP and UDP on a free loopback port, a content store of
//! the same size, `threads` forwarding threads), start it, wait until its sockets accept, and kill
//! it on drop. `scripts/setup.sh` builds NDNd from its release module into `.peers/`;
//! `NEXTHOP_NDND` names another NDNd binary and `NEXTHOP_BIN` another nexthop.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nexthop_fw::face::uri::FaceUri;
use nexthop_tools::client::Client;
use nexthop_wire::tlv::TlvReader;

/// The NDNd release `scripts/setup.sh` builds.
pub const NDND_VERSION: &str = "v1.5.3";

/// Where the NDNd binary is: `NEXTHOP_NDND`, else the one `scripts/setup.sh` built.
pub fn ndnd_binary() -> PathBuf {
    std::env::var_os("NEXTHOP_NDND").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.peers").join(format!("ndnd-{NDND_VERSION}")).join("ndnd"),
        PathBuf::from,
    )
}

/// Where the nexthop binary is: `NEXTHOP_BIN`, else the running program (`nexthop bench`).
fn nexthop_binary() -> anyhow::Result<PathBuf> {
    match std::env::var_os("NEXTHOP_BIN") {
        Some(p) => Ok(PathBuf::from(p)),
        None => {
            let me = std::env::current_exe()?;
            anyhow::ensure!(
                me.file_stem().is_some_and(|s| s == "nexthop"),
                "{} is not the nexthop binary: run the experiment with `nexthop bench`, or set NEXTHOP_BIN",
                me.display()
            );
            Ok(me)
        }
    }
}

/// What a forwarder under test is started with.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Forwarding threads.
    pub threads: usize,
    /// Content-store capacity in Data packets, all threads together.
    pub cs_capacity: usize,
    /// nexthop only: a route file loaded at start.
    pub route_file: Option<PathBuf>,
    /// nexthop only: the PIT bound (entries, all threads) and the bound per face.
    pub pit_max: (usize, usize),
    /// The largest datagram either sends on a UDP face before cutting a packet into NDNLPv2
    /// fragments (NDNd's own default is 1420, nexthop's too).
    pub udp_mtu: usize,
    /// nexthop only: a content-store SSD tier.
    pub ssd: Option<SsdTier>,
    /// nexthop only: an interface for Ethernet faces, listening for peers
    /// (`faces.ether_interfaces`, `faces.ether_listen`).
    pub ether_interface: Option<String>,
}

/// nexthop's content-store SSD tier (`content_store.l2_*`).
#[derive(Debug, Clone)]
pub struct SsdTier {
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// `l2_read_ahead`.
    pub read_ahead: bool,
    /// `l2_background_reads`.
    pub background_reads: bool,
    /// `l2_slot_bytes`.
    pub slot_bytes: u32,
    /// `l2_chunk_reads`.
    pub chunk_reads: bool,
}

/// A running forwarder process.
#[derive(Debug)]
pub struct Forwarder {
    /// "nexthop" or "ndnd".
    pub system: &'static str,
    child: Child,
    /// Its Unix socket.
    pub unix: FaceUri,
    /// Its TCP listener.
    pub tcp: FaceUri,
    /// Its UDP listener.
    pub udp: FaceUri,
    /// Its WebSocket listener.
    pub websocket: FaceUri,
    /// Seconds from start until it answered management (nexthop loads its route file first).
    pub start_s: f64,
}

/// A loopback port that was free a moment ago for both TCP and UDP.
fn free_port() -> anyhow::Result<u16> {
    for _ in 0..100 {
        let t = TcpListener::bind("127.0.0.1:0")?;
        let port = t.local_addr()?.port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    anyhow::bail!("no port free for both TCP and UDP")
}

/// Starts a forwarder with `start(port, WebSocket port)` on ports that were free a moment ago;
/// when one was taken before the forwarder bound it (another process's connection can get it
/// in between), again on others, at most three times in all.
fn on_free_ports(start: impl Fn(u16, u16) -> anyhow::Result<Forwarder>) -> anyhow::Result<Forwarder> {
    let mut attempt = 1;
    loop {
        match start(free_port()?, free_tcp_port()?) {
            Err(e) if attempt < 3 && format!("{e:#}").contains("already in use") => {
                eprintln!("  a port was taken ({e:#}); again");
                attempt += 1;
            }
            started => return started,
        }
    }
}

/// A loopback TCP port that was free a moment ago (the WebSocket listener's).
fn free_tcp_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Forwarder {
    /// Starts `nexthop run` with `setup`, its files under `dir`.
    ///
    /// # Errors
    /// No nexthop binary, or it does not come up in 120 s (a large route file loads first).
    pub fn nexthop(dir: &Path, setup: &Setup) -> anyhow::Result<Forwarder> {
        on_free_ports(|port, ws_port| Forwarder::nexthop_on(dir, setup, port, ws_port))
    }

    fn nexthop_on(dir: &Path, setup: &Setup, port: u16, ws_port: u16) -> anyhow::Result<Forwarder> {
        let unix = dir.join("nexthop.sock");
        let routes = setup.route_file.as_ref().map(|p| format!("{:?}", p.display().to_string())).unwrap_or_default();
        let config = format!(
            "route_files = [{routes}]\n\
             [forwarder]\nthreads = {}\npit_max_entries = {}\npit_max_per_face = {}\n\
             [faces]\nunix = {:?}\ntcp = \"127.0.0.1:{port}\"\nudp = \"127.0.0.1:{port}\"\nwebsocket = \"127.0.0.1:{ws_port}\"\nudp_mtu = {}\n{}\
             [content_store]\ncapacity = {}\n{}",
            setup.threads,
            setup.pit_max.0,
            setup.pit_max.1,
            unix.display().to_string(),
            setup.udp_mtu,
            setup.ether_interface.as_ref().map_or(String::new(), |i| format!("ether_interfaces = [{i:?}]\nether_listen = true\n")),
            setup.cs_capacity,
            setup.ssd.as_ref().map_or(String::new(), |t| format!(
                "l2_path = {:?}\nl2_bytes = {}\nl2_read_ahead = {}\nl2_background_reads = {}\nl2_slot_bytes = {}\nl2_chunk_reads = {}\n",
                t.path.display().to_string(),
                t.bytes,
                t.read_ahead,
                t.background_reads,
                t.slot_bytes,
                t.chunk_reads
            )),
        );
        let cfg = dir.join("nexthop.toml");
        std::fs::write(&cfg, config)?;
        let mut cmd = Command::new(nexthop_binary()?);
        cmd.arg("run").arg("--config").arg(&cfg).env("RUST_LOG", "warn");
        Forwarder::spawn("nexthop", cmd, dir, unix, (port, ws_port), Duration::from_secs(120))
    }

    /// Starts NDNd (`ndnd fw run`) with `setup`'s threads and content store (NDNd's capacity
    /// is per thread, so it gets the total divided by threads), its files under `dir`.
    ///
    /// # Errors
    /// The binary is missing (`scripts/setup.sh` builds it), or NDNd does not come up in 10 s.
    pub fn ndnd(dir: &Path, setup: &Setup) -> anyhow::Result<Forwarder> {
        let bin = ndnd_binary();
        anyhow::ensure!(bin.exists(), "NDNd not found at {} (scripts/setup.sh builds it; NEXTHOP_NDND names another)", bin.display());
        on_free_ports(|port, ws_port| Forwarder::ndnd_on(&bin, dir, setup, port, ws_port))
    }

    fn ndnd_on(bin: &Path, dir: &Path, setup: &Setup, port: u16, ws_port: u16) -> anyhow::Result<Forwarder> {
        let unix = dir.join("ndnd.sock");
        let config = format!(
            "core:\n  log_level: WARN\n\
             faces:\n  queue_size: 1024\n  congestion_marking: false\n\
             \x20 udp:\n    enabled_unicast: true\n    enabled_multicast: false\n    port_unicast: {port}\n    lifetime: 600\n    default_mtu: {}\n\
             \x20 tcp:\n    enabled: true\n    port_unicast: {port}\n    lifetime: 600\n\
             \x20 unix:\n    enabled: true\n    socket_path: {}\n\
             \x20 websocket:\n    enabled: true\n    bind: 127.0.0.1\n    port: {ws_port}\n    tls_enabled: false\n\
             \x20 http3:\n    enabled: false\n\
             fw:\n  threads: {}\n  queue_size: 1024\n\
             mgmt:\n  allow_localhop: false\n\
             tables:\n  content_store:\n    capacity: {}\n    admit: true\n    serve: true\n    replacement_policy: lru\n\
             \x20 rib:\n    readvertise_nlsr: false\n",
            setup.udp_mtu,
            unix.display(),
            setup.threads,
            setup.cs_capacity.div_ceil(setup.threads.max(1)),
        );
        let cfg = dir.join("ndnd.yml");
        std::fs::write(&cfg, config)?;
        let mut cmd = Command::new(bin);
        cmd.args(["fw", "run"]).arg(&cfg);
        Forwarder::spawn("ndnd", cmd, dir, unix, (port, ws_port), Duration::from_secs(10))
    }

    /// Starts `cmd`, listening on `unix`, TCP and UDP `ports.0` and WebSocket `ports.1`.
    fn spawn(
        system: &'static str,
        mut cmd: Command,
        dir: &Path,
        unix: PathBuf,
        ports: (u16, u16),
        limit: Duration,
    ) -> anyhow::Result<Forwarder> {
        let (port, ws_port) = ports;
        let _ = std::fs::remove_file(&unix);
        let log_path = dir.join(format!("{system}.log"));
        let log = std::fs::File::create(&log_path)?;
        let t0 = Instant::now();
        // No backtraces in the log: its last lines must be the error (see below).
        cmd.env("RUST_BACKTRACE", "0").env("RUST_LIB_BACKTRACE", "0");
        let child = cmd.stdout(log.try_clone()?).stderr(log).stdin(Stdio::null()).spawn()?;
        let tcp: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut me = Forwarder {
            system,
            child,
            unix: FaceUri::Unix(unix.display().to_string()),
            tcp: FaceUri::Tcp(tcp),
            udp: FaceUri::Udp(tcp),
            websocket: FaceUri::WebSocket(([127, 0, 0, 1], ws_port).into()),
            start_s: 0.0,
        };
        // Ready = management answers on the Unix socket and TCP accepts (a socket can accept
        // before the forwarder reads it, e.g. while nexthop loads a large route file).
        let ready = || {
            std::net::TcpStream::connect(tcp).is_ok()
                && Client::connect(&FaceUri::Unix(unix.display().to_string()))
                    .is_ok_and(|mut c| c.dataset("/localhost/nfd/status/general").is_ok())
        };
        while !ready() {
            if let Some(status) = me.child.try_wait()? {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                anyhow::bail!("{system} exited ({status}): {}", log.lines().rev().take(5).collect::<Vec<_>>().join(" | "));
            }
            anyhow::ensure!(t0.elapsed() < limit, "{system} did not listen within {limit:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        me.start_s = t0.elapsed().as_secs_f64();
        Ok(me)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The process's resident memory (`VmRSS`), bytes.
    pub fn rss_bytes(&self) -> Option<u64> {
        crate::machine::rss_bytes_of(self.child.id())
    }

    /// nexthop's forwarding counters and gauges (its `status/counters` dataset), by label.
    ///
    /// # Errors
    /// The dataset could not be fetched (NDNd has none).
    pub fn counters(&self) -> anyhow::Result<hashbrown::HashMap<String, u64>> {
        let mut c = Client::connect(&self.unix)?;
        Ok(nexthop_fw::mgmt::dataset::parse_labelled_counts(&c.dataset("/localhost/nfd/status/counters")?).into_iter().collect())
    }

    /// PIT entries now, from the forwarder's general status dataset (NPitEntries).
    ///
    /// # Errors
    /// The dataset could not be fetched.
    pub fn pit_entries(&self) -> anyhow::Result<u64> {
        let mut c = Client::connect(&self.unix)?;
        let status = c.dataset("/localhost/nfd/status/general")?;
        let pit = TlvReader::new(&status).filter_map(Result::ok).find(|t| t.ty == 0x85);
        let pit = pit.ok_or_else(|| anyhow::anyhow!("{}: no NPitEntries in status", self.system))?;
        Ok(nexthop_wire::varnum::read_nonneg(pit.ty, pit.value)?)
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let FaceUri::Unix(p) = &self.unix {
            let _ = std::fs::remove_file(p);
        }
    }
}
