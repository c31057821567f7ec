//! `nexthop traffic` against a `nexthop run` started by the test: the generator's producer and
//! consumer exchange Data over Unix, TCP and UDP faces, every Data checked; then `nexthop ctl
//! status` shows the totals, the drops by reason and every face's in/out counters, and `nexthop
//! ctl cs-erase` and `cs-config` change the content store the traffic filled, `face-create` and
//! `face-update` change a face's link reliability, congestion marking, persistency and MTU,
//! `strategy-set` and `strategy-unset` a prefix's strategy, `route-add` and `route-remove` a
//! route with an origin, flags and a lifetime; SIGTERM stops it cleanly.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

#[test]
fn the_generator_runs_over_every_face_kind() {
    let scratch = tempfile::Builder::new().prefix("nexthop-traffic-").tempdir().unwrap();
    let dir = scratch.path();
    let sock = dir.join("t.sock");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cfg = dir.join("t.toml");
    std::fs::write(
        &cfg,
        format!("[faces]\nunix = {:?}\ntcp = \"127.0.0.1:{port}\"\nudp = \"127.0.0.1:{port}\"\n", sock.display().to_string()),
    )
    .unwrap();
    let exe = env!("CARGO_BIN_EXE_nexthop");
    let mut fw =
        common::Running(Command::new(exe).arg("run").arg("-c").arg(&cfg).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap());
    let t0 = Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(20), "nexthop run did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let control = format!("unix://{}", sock.display());
    for (i, face) in [control.clone(), format!("tcp4://127.0.0.1:{port}"), format!("udp4://127.0.0.1:{port}")].iter().enumerate() {
        let out = Command::new(exe)
            .args(["traffic", "--face", face, "--control", &control, "--seconds", "0.5", "--payload", "500"])
            .args(["--prefix", &format!("/t{i}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{face}: {}", String::from_utf8_lossy(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(r["satisfied"].as_u64().unwrap() > 100, "{face}: {r}");
        assert_eq!((r["mismatches"].as_u64(), r["lost"].as_u64(), r["nacks"].as_u64()), (Some(0), Some(0), Some(0)), "{face}: {r}");
    }
    let out = Command::new(exe).args(["ctl", "--face", &control, "status"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status = String::from_utf8_lossy(&out.stdout);
    let counter = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.trim_start().starts_with(&format!("{name}:"))).unwrap_or_else(|| panic!("{name}: {status}"));
        line.split(':').nth(1).unwrap().trim().parse().unwrap()
    };
    assert!(counter("satisfied") > 300, "{status}");
    assert!(status.contains("drops:") && status.contains("  no-route "), "{status}");
    let faces: Vec<&str> = status.lines().filter(|l| l.contains("remote=") && l.contains("in_interests=")).collect();
    assert!(faces.len() >= 2 && status.contains("faces:"), "per-face counters: {status}");
    let ctl = |args: &[&str]| {
        let out = Command::new(exe).args(["ctl", "--face", &control]).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let entries = |info: &str| -> u64 {
        info.split_whitespace().find_map(|f| f.strip_prefix("entries=")).unwrap_or_else(|| panic!("{info}")).parse().unwrap()
    };
    let before = entries(&ctl(&["cs"]));
    assert!(before > 300, "the traffic's Data is stored: {before}");
    // The last run's Data (the earlier runs' may have been evicted by it).
    assert_eq!(ctl(&["cs-erase", "/t2", "--count", "7"]), "erased 7");
    let erased: u64 = ctl(&["cs-erase", "/t2"]).strip_prefix("erased ").unwrap().parse().unwrap();
    assert!(erased > 256, "more than one command's worth: {erased}");
    assert_eq!(entries(&ctl(&["cs"])), before - 7 - erased);
    assert_eq!(ctl(&["cs-config", "--capacity", "100", "--serve", "off"]), "capacity=100 admit=on serve=off");
    assert_eq!(ctl(&["cs-config"]), "capacity=100 admit=on serve=off", "nothing asked, nothing changed");
    assert!(entries(&ctl(&["cs"])) <= 100);
    // NDNLPv2 link reliability, per face.
    assert!(status.contains("  lp_retransmissions "), "{status}");
    let made = ctl(&["face-create", "udp4://127.0.0.1:9", "--reliability", "on"]);
    let state = |persistency: &str, reliability: &str, marking: &str| {
        format!("persistency={persistency} reliability={reliability} congestion-marking={marking}")
    };
    let id = made.strip_prefix("200 OK: face ").and_then(|r| r.strip_suffix(&format!(" {}", state("persistent", "on", "on"))));
    let id = id.unwrap_or_else(|| panic!("{made}"));
    let flags = |listing: &str| -> u64 {
        let line = listing.lines().find(|l| l.trim_start().starts_with(&format!("id={id} "))).unwrap_or_else(|| panic!("{listing}"));
        line.split_whitespace().find_map(|f| f.strip_prefix("flags=")).unwrap_or_else(|| panic!("{line}")).parse().unwrap()
    };
    assert_eq!(flags(&ctl(&["faces"])) & 2, 2, "faces/list shows LpReliabilityEnabled");
    let updated = ctl(&["face-update", id, "--reliability", "off", "--congestion-marking", "off", "--persistency", "permanent"]);
    assert_eq!(updated, format!("face {id} {}", state("permanent", "off", "off")));
    assert_eq!(flags(&ctl(&["faces"])) & 6, 0);
    assert_eq!(ctl(&["face-create", "udp4://127.0.0.1:9"]), format!("409 face exists: face {id} {}", state("permanent", "off", "off")));
    // As nfdc: asked of a face that exists, what differs is updated.
    let again = ctl(&["face-create", "udp4://127.0.0.1:9", "--persistency", "persistent", "--congestion-marking", "on"]);
    assert_eq!(again, format!("409 face exists: face {id} {}", state("persistent", "off", "on")));
    // Host names are looked up, as nfdc canonizes them: the forwarder reached as localhost over
    // TCP, and the face asked for by name is the one to 127.0.0.1:9.
    let tcp_by_name = format!("tcp4://localhost:{port}");
    let by_name = Command::new(exe).args(["ctl", "--face", &tcp_by_name, "face-create", "udp4://localhost:9"]).output().unwrap();
    let by_name = String::from_utf8_lossy(&by_name.stdout);
    assert_eq!(by_name.trim(), format!("409 face exists: face {id} {}", state("persistent", "off", "on")));
    // An MTU override (a UDP face's), shown by `faces`; a stream face, or too small an MTU, refused.
    assert_eq!(ctl(&["face-update", id, "--mtu", "600"]), format!("face {id} {}", state("persistent", "off", "on")));
    let line = ctl(&["faces"]).lines().find(|l| l.trim_start().starts_with(&format!("id={id} "))).map(str::to_string);
    assert!(line.as_ref().is_some_and(|l| l.contains(" mtu=600 ")), "{line:?}");
    let refused = Command::new(exe).args(["ctl", "--face", &control, "face-update", id, "--mtu", "100"]).output().unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("409"), "{refused:?}");
    let tcp = Command::new(exe).args(["ctl", "--face", &control, "face-create", "tcp4://127.0.0.1:9", "--mtu", "1000"]).output().unwrap();
    assert!(String::from_utf8_lossy(&tcp.stderr).contains("406"), "{tcp:?}");
    // A strategy chosen and unset.
    ctl(&["strategy-set", "/chosen", "multicast"]);
    assert!(ctl(&["strategies"]).lines().any(|l| l.contains("/chosen") && l.contains("multicast")));
    ctl(&["strategy-unset", "/chosen"]);
    assert!(!ctl(&["strategies"]).contains("/chosen"));
    // A route with nfdc's options.
    ctl(&["route-add", "/flagged", id, "7", "--capture", "--no-inherit", "--origin", "65", "--expires-ms", "600000"]);
    let routes = ctl(&["routes"]);
    let line = routes.lines().find(|l| l.contains("/flagged")).unwrap_or_else(|| panic!("{routes}"));
    assert!(line.contains(&format!("route{{face={id} origin=65 cost=7 flags=2 expires_ms=")), "capture, not inherited: {line}");
    ctl(&["route-remove", "/flagged", id, "--origin", "65"]);
    assert!(!ctl(&["routes"]).contains("/flagged"));
    // SIGTERM (what a service manager sends) stops it cleanly: exit 0, its socket file gone.
    let status = common::stop(&mut fw.0);
    assert!(status.success(), "{status}");
    assert!(!sock.exists(), "the socket file is removed");
}
