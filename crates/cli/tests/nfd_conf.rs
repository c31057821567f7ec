//! `nexthop run --nfd-conf`: a node moved from NFD keeps its `nfd.conf`. The test writes one,
//! prints the configuration nexthop makes of it (TOML, warnings for what did not carry over),
//! then runs the forwarder from it and checks through `nexthop ctl` that its Unix socket, its
//! content-store capacity and its strategy choices are NFD's file's, that its `authorizations`
//! hold (a certificate file beside it, made by python-ndn's `pyndnsec`, grants `cs`: `nexthop
//! ctl --sign-key` with that key, or `--sign-identity` as the keychain's default identity,
//! changes the capacity, unsigned it is refused), that `rib.auto_prefix_propagate` carries over
//! (propagation as the keychain's identities), and in its log that it logs at the file's level.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Running;

mod common;

#[test]
fn the_forwarder_runs_from_nfds_configuration_file() {
    let scratch = tempfile::Builder::new().prefix("nexthop-nfd-conf-").tempdir().unwrap();
    let dir = scratch.path();
    let sock = dir.join("nfd.sock");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // An operator identity, its key in pyndnsec's file TPM under a private HOME, its
    // certificate beside nfd.conf (named relative to it, as NFD reads `certfile`).
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/pyndnsec");
    let pyndnsec = |args: &[&str]| {
        let out = Command::new(venv).args(args).env("HOME", dir).stderr(Stdio::null()).output().unwrap();
        assert!(out.status.success(), "pyndnsec {args:?} (scripts/setup.sh installs python-ndn in .venv)");
        String::from_utf8(out.stdout).unwrap()
    };
    pyndnsec(&["Init-Pib"]);
    pyndnsec(&["New-Item", "/operator"]);
    std::fs::write(dir.join("operator.ndncert"), pyndnsec(&["Export-Cert"])).unwrap();
    let key = pyndnsec(&["Get-Default", "-k"]).trim().to_string();
    let conf = dir.join("nfd.conf");
    std::fs::write(
        &conf,
        format!(
            "; moved from NFD\nlog\n{{\n  default_level INFO\n  Forwarder DEBUG\n  NoSuchModule DEBUG\n}}\ntables\n{{\n  cs_max_packets 500\n  strategy_choice\n  {{\n    /m /localhost/nfd/strategy/multicast\n  }}\n}}\nface_system\n{{\n  unix\n  {{\n    path {}\n  }}\n  tcp\n  {{\n    port {port}\n    enable_v6 no\n  }}\n}}\nauthorizations\n{{\n  authorize\n  {{\n    certfile operator.ndncert\n    privileges\n    {{\n      cs\n    }}\n  }}\n}}\nrib\n{{\n  auto_prefix_propagate\n  {{\n    cost 20\n  }}\n}}\n",
            sock.display()
        ),
    )
    .unwrap();
    let exe = env!("CARGO_BIN_EXE_nexthop");
    let conf_arg = conf.to_str().unwrap();

    let out = Command::new(exe).args(["run", "--nfd-conf", conf_arg, "--print-config"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: toml::Table = toml::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert_eq!(printed["faces"]["unix"].as_str(), sock.to_str());
    assert_eq!(printed["faces"]["tcp"].as_str(), Some(format!("0.0.0.0:{port}").as_str()));
    assert_eq!(printed["faces"]["udp"].as_str(), Some(""), "no udp section, no UDP channel (as NFD)");
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.contains("line 6: log.NoSuchModule: no nexthop counterpart, ignored"), "{warnings}");
    assert!(!warnings.contains("log.Forwarder"), "Forwarder's level is the shards': {warnings}");
    assert_eq!(printed["forwarder"]["log_level"].as_str(), Some("info,nexthop_fw::pipeline=debug"), "log.default_level and a module's own");
    // Propagation signs as the keychain's identities, as NFD's does: no warning.
    assert_eq!(printed["forwarder"]["propagate_keychain"].as_bool(), Some(true));
    assert_eq!(printed["forwarder"]["propagate_cost"].as_integer(), Some(20));
    assert!(!warnings.contains("auto_prefix_propagate"), "{warnings}");

    let log = dir.join("nexthop.log");
    // `nexthop run` from nfd.conf with `home` as HOME (none: unset), its log in `log`, once it
    // listens on nfd.conf's socket.
    let start = |home: Option<&std::path::Path>| {
        let mut run = Command::new(exe);
        run.args(["run", "--nfd-conf", conf_arg]).env_remove("RUST_LOG").stdout(Stdio::null());
        match home {
            Some(h) => run.env("HOME", h),
            None => run.env_remove("HOME"),
        };
        let mut fw = Running(run.stderr(std::fs::File::create(&log).unwrap()).spawn().unwrap());
        let t0 = Instant::now();
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            assert!(fw.0.try_wait().unwrap().is_none(), "nexthop run stopped: {}", std::fs::read_to_string(&log).unwrap());
            assert!(t0.elapsed() < Duration::from_secs(20), "nexthop run did not listen on nfd.conf's socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        fw
    };
    let fw = start(Some(dir)); // the keychain propagation reads
    let ctl = |face: &str, args: &[&str]| {
        let out = Command::new(exe).args(["ctl", "--face", face]).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let unix = format!("unix://{}", sock.display());
    assert!(ctl(&unix, &["cs"]).contains("capacity=500"), "tables.cs_max_packets");
    // Without --face, the client settings' transport, as nfdc finds its forwarder.
    let by_env = Command::new(exe).args(["ctl", "cs"]).env("HOME", dir).env("NDN_CLIENT_TRANSPORT", &unix).output().unwrap();
    assert!(String::from_utf8_lossy(&by_env.stdout).contains("capacity=500"), "{by_env:?}");
    let strategies = ctl(&format!("tcp4://127.0.0.1:{port}"), &["strategies"]);
    assert!(strategies.lines().any(|l| l.contains("/m") && l.contains("multicast")), "{strategies}");
    // cs is granted to the operator's key only.
    let signed = Command::new(exe)
        .args(["ctl", "--face", &unix, "--sign-key", &key, "cs-config", "--capacity", "400"])
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    // As nfdc does: signed as the keychain's default identity.
    let signed = Command::new(exe)
        .args(["ctl", "--face", &unix, "--sign-identity", "cs-config", "--capacity", "450"])
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    assert!(ctl(&unix, &["cs"]).contains("capacity=450"), "--sign-identity");
    let unsigned = Command::new(exe).args(["ctl", "--face", &unix, "cs-config", "--capacity", "300"]).output().unwrap();
    assert!(!unsigned.status.success());
    assert!(String::from_utf8_lossy(&unsigned.stderr).contains("signed with no key"), "{}", String::from_utf8_lossy(&unsigned.stderr));
    assert!(ctl(&unix, &["cs"]).contains("capacity=450"), "the signed cs/config only");
    drop(fw); // killed
              // default_level INFO: the faces `nexthop ctl` made and closed are logged.
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("INFO") && logged.contains("face up"), "{logged}");
    // Run where no keychain can be found (no HOME, as under some service managers): it starts
    // all the same, propagating nothing, and says so.
    drop(start(None)); // killed once it listens
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("propagate_keychain") && logged.contains("HOME"), "{logged}");
}
