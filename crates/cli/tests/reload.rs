//! SIGHUP to `nexthop run` reloads its configuration file, as NFD reloads nfd.conf: a strategy
//! choice added, the content store's capacity and new faces' UDP MTU changed and a TCP listener
//! added take effect while it forwards, and a changed setting that takes a restart (the
//! forwarding threads) is named in a warning; a file with a mistake (an unknown strategy)
//! changes nothing and says so.

use std::process::Command;

use common::{eventually, run_nexthop, signal, stop};

mod common;

#[test]
fn sighup_reloads_the_configuration() {
    let scratch = tempfile::Builder::new().prefix("nexthop-reload-").tempdir().unwrap();
    let dir = scratch.path();
    let sock = dir.join("r.sock");
    let cfg = dir.join("r.toml");
    let log = dir.join("r.log");
    let write = |extra: &str| {
        let faces = format!("[faces]\nunix = {:?}\ntcp = \"\"\nudp = \"127.0.0.1:0\"\n", sock.display().to_string());
        std::fs::write(&cfg, format!("{extra}\n{faces}[[strategy]]\nprefix = \"/reload-a\"\nstrategy = \"multicast\"\n")).unwrap();
    };
    write("");
    let exe = env!("CARGO_BIN_EXE_nexthop");
    let mut fw = run_nexthop(&cfg, &log);
    assert!(eventually(|| std::os::unix::net::UnixStream::connect(&sock).is_ok()), "nexthop run did not listen");
    let control = format!("unix://{}", sock.display());
    let ctl = |args: &[&str]| {
        let out = Command::new(exe).args(["ctl", "--face", &control]).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let logged = || std::fs::read_to_string(&log).unwrap();
    assert!(ctl(&["strategies"]).lines().any(|l| l.contains("/reload-a") && l.contains("multicast")));
    assert!(!ctl(&["strategies"]).contains("/reload-b"));

    // A strategy added, the capacity lowered, the UDP MTU of new faces changed, a TCP listener
    // opened, and more forwarding threads asked for (which takes a restart).
    write("[[strategy]]\nprefix = \"/reload-b\"\nstrategy = \"asf\"\n[content_store]\ncapacity = 500\n[forwarder]\nthreads = 2\n");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let text = std::fs::read_to_string(&cfg).unwrap().replace("[faces]\n", "[faces]\nudp_mtu = 1200\n");
    std::fs::write(&cfg, text.replace("tcp = \"\"", &format!("tcp = \"127.0.0.1:{port}\""))).unwrap();
    signal(&fw.0, libc::SIGHUP);
    assert!(eventually(|| logged().contains("configuration reloaded")), "{}", logged());
    let strategies = ctl(&["strategies"]);
    assert!(strategies.lines().any(|l| l.contains("/reload-b") && l.contains("asf")), "{strategies}");
    assert!(strategies.lines().any(|l| l.contains("/reload-a") && l.contains("multicast")), "{strategies}");
    assert!(ctl(&["cs"]).contains("capacity=500"), "{}", ctl(&["cs"]));
    assert!(logged().contains("forwarder: changed, and takes effect at the next start"), "{}", logged());
    let channels = ctl(&["channels"]);
    assert!(channels.lines().any(|l| l.trim() == format!("local=tcp4://127.0.0.1:{port}")), "{channels}");
    let over_tcp = Command::new(exe).args(["ctl", "--face", &format!("tcp4://127.0.0.1:{port}"), "strategies"]).output().unwrap();
    assert!(String::from_utf8_lossy(&over_tcp.stdout).contains("/reload-b"), "the new TCP listener answers: {over_tcp:?}");
    let made = ctl(&["face-create", "udp4://127.0.0.1:9"]);
    let id = made.strip_prefix("200 OK: face ").and_then(|r| r.split_whitespace().next()).unwrap_or_else(|| panic!("{made}"));
    let listed = ctl(&["faces"]);
    let line = listed.lines().find(|l| l.trim_start().starts_with(&format!("id={id} "))).unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains(" mtu=1200 "), "a face made after the reload takes the new MTU: {line}");

    // A mistake: nothing changes (the capacity stays 500), and the log says why.
    write("[[strategy]]\nprefix = \"/reload-c\"\nstrategy = \"no-such-strategy\"\n[content_store]\ncapacity = 100\n");
    signal(&fw.0, libc::SIGHUP);
    assert!(eventually(|| logged().contains("configuration not reloaded")), "{}", logged());
    assert!(logged().contains("no-such-strategy"), "{}", logged());
    assert!(ctl(&["cs"]).contains("capacity=500"));
    assert!(!ctl(&["strategies"]).contains("/reload-c"));

    // Still forwarding, and SIGTERM still stops it cleanly.
    let status = stop(&mut fw.0);
    assert!(status.success(), "{status}");
}
