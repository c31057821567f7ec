//! Three nexthop forwarders in a line (A – B – C) routed by ndn-dv, NDNd's distance-vector
//! routing daemon (the binary `scripts/setup.sh` builds), with NDNd's own tools as the apps:
//! nothing but the daemons puts routes in.
//!
//! Each forwarder runs its own `ndnd dv` over its Unix socket; each daemon is configured with
//! its neighbours' UDP addresses. The daemons make the UDP faces through management
//! (`faces/create`), turn on local fields (`faces/update`: IncomingFaceId), register their sync
//! prefixes (multicast, under `/localhop`: one hop; the daemons here cope without that scope
//! too, and the pipeline tests check it) and exchange advertisements. `ndnd put --expose` on C registers its object's prefix with origin
//! client; C readvertises it to its daemon (`/localhost/nlsr/rib/register`), the daemons spread
//! it, and A's daemon registers it toward B: `ndnd cat` on A must then fetch the object intact
//! across two hops. When the producer goes, C withdraws the prefix (`…/rib/unregister`) and A's
//! FIB entry must go with it. B forwards with two threads, so what crosses B (and B's own
//! daemon traffic) goes through the threads' dispatch.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nexthop_fw::conf::config::Config;
use nexthop_fw::face::uri::FaceUri;
use nexthop_fw::mgmt::dataset::parse_labelled_counts;
use nexthop_fw::runtime::Runtime;
use nexthop_lab::peers::forwarder::ndnd_binary;
use nexthop_tools::client::Client;
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::Name;

/// A forwarder on its own thread.
struct Node {
    unix: String,
    udp: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    /// Wakes its loop (which, idle, looks at `stop` once a second).
    waker: Arc<nexthop_fw::runtime::Waker>,
    thread: Option<JoinHandle<()>>,
}

impl Node {
    fn start(dir: &Path, name: &str, threads: usize) -> Node {
        let mut cfg = Config::default();
        cfg.faces.unix = dir.join(format!("{name}.sock")).to_string_lossy().into_owned();
        cfg.faces.tcp = String::new();
        cfg.faces.udp = "127.0.0.1:0".into();
        cfg.forwarder.threads = threads;
        let mut rt = Runtime::new(cfg.clone()).unwrap();
        let udp = rt.listening().udp.unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (s, waker) = (stop.clone(), rt.waker());
        let thread = std::thread::spawn(move || rt.run(&s).unwrap());
        Node { unix: cfg.faces.unix, udp, stop, waker, thread: Some(thread) }
    }

    /// An NDNd program (`ndnd <args>`) talking to this forwarder.
    fn ndnd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(ndnd_binary());
        c.args(args).env("NDN_CLIENT_TRANSPORT", format!("unix://{}", self.unix));
        c
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A child process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `ndnd dv run` for router `/ndn/<name>` on `node`, with `neighbours`.
fn daemon(dir: &Path, node: &Node, name: &str, neighbours: &[&Node]) -> Killed {
    let config = dir.join(format!("dv-{name}.yml"));
    let neighbours: String = neighbours.iter().map(|n| format!("    - uri: udp4://{}\n", n.udp)).collect();
    std::fs::write(
        &config,
        format!(
            "dv:\n  network: /ndn\n  router: /ndn/{name}\n  keychain: \"insecure\"\n  trust_anchors: []\n  \
             neighbors:\n{neighbours}  advertise_interval: 1000\n  router_dead_interval: 5000\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join(format!("dv-{name}.log"))).unwrap();
    Killed(
        node.ndnd(&["dv", "run", &config.to_string_lossy()])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("ndnd starts (scripts/setup.sh builds it)"),
    )
}

/// Whether `node`'s FIB has an entry for `prefix` (its `fib/list` dataset: FibEntry elements,
/// each starting with its Name).
fn has_fib_entry(node: &Node, prefix: &str) -> bool {
    let mut c = Client::connect(&FaceUri::Unix(node.unix.clone())).unwrap();
    let list = c.dataset("/localhost/nfd/fib/list").unwrap();
    let prefix = Name::from_uri(prefix).unwrap();
    TlvReader::new(&list)
        .map(Result::unwrap)
        .any(|entry| TlvReader::new(entry.value).next().is_some_and(|n| n.unwrap().value == prefix.value()))
}

/// The daemons' logs and the forwarders' drops, for a failure's message.
fn state(dir: &Path, nodes: &[&Node]) -> String {
    let mut out = String::new();
    for (name, node) in ["a", "b", "c"].iter().zip(nodes) {
        let log = std::fs::read_to_string(dir.join(format!("dv-{name}.log"))).unwrap_or_default();
        let mut c = Client::connect(&FaceUri::Unix(node.unix.clone())).unwrap();
        let drops = parse_labelled_counts(&c.dataset("/localhost/nfd/status/drops").unwrap());
        let faces = c.dataset("/localhost/nfd/faces/list").map(|d| d.len()).unwrap_or(0);
        out += &format!(
            "{name}'s daemon said:\n{log}\n{name}'s drops: {:?}; faces/list {faces} bytes\n",
            drops.iter().filter(|(_, n)| *n > 0).collect::<Vec<_>>()
        );
    }
    out
}

#[test]
fn a_prefix_exposed_at_one_end_of_a_line_is_routed_from_the_other_by_ndn_dv() {
    let scratch = tempfile::Builder::new().prefix("nexthop-dv-").tempdir().unwrap();
    let dir = scratch.path();
    let a = Node::start(dir, "a", 1);
    let b = Node::start(dir, "b", 2);
    let c = Node::start(dir, "c", 1);
    let _dv_a = daemon(dir, &a, "a", &[&b]);
    let _dv_b = daemon(dir, &b, "b", &[&a, &c]);
    let _dv_c = daemon(dir, &c, "c", &[&b]);
    let nodes = [&a, &b, &c];

    // Converged: the ends have registered each other's prefix-table prefix (two hops away). (An
    // announcement made before that would wait for the prefix table's periodic sync, 30 s: so it
    // does with NDNd's own forwarder too.)
    let started = Instant::now();
    while !(has_fib_entry(&a, "/ndn/32=DV/32=PFS/ndn/c") && has_fib_entry(&c, "/ndn/32=DV/32=PFS/ndn/a")) {
        assert!(started.elapsed() < Duration::from_secs(30), "the daemons did not converge\n{}", state(dir, &nodes));
        std::thread::sleep(Duration::from_millis(100));
    }

    let object: Vec<u8> = (0..1_500_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut put =
        c.ndnd(&["put", "--expose", "/ndn/c/object"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    put.stdin.take().unwrap().write_all(&object).unwrap();
    let put = Killed(put);

    // The route reaches A once the daemons have synchronised their prefix tables.
    let started = Instant::now();
    let fetched = loop {
        let out = a.ndnd(&["cat", "/ndn/c/object"]).stderr(Stdio::null()).output().unwrap();
        if out.status.success() {
            break out.stdout;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no route from A to /ndn/c/object\n{}", state(dir, &nodes));
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(fetched == object, "fetched {} bytes, not the {} the producer published", fetched.len(), object.len());
    assert!(has_fib_entry(&b, "/ndn/c/object"), "B, in the middle, routes it too");

    // The producer goes: C withdraws the prefix, and A's daemon takes the route away.
    assert!(has_fib_entry(&a, "/ndn/c/object"));
    drop(put);
    let started = Instant::now();
    while has_fib_entry(&a, "/ndn/c/object") {
        assert!(started.elapsed() < Duration::from_secs(20), "A still routes /ndn/c/object after its producer left");
        std::thread::sleep(Duration::from_millis(200));
    }
}
