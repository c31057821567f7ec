//! `forwarder.user` (NFD's `general.user`): `nexthop run`, started as root, forwards as that
//! user once its sockets are open — every thread of it — serves apps and management as before,
//! and takes root back only for a reload (which binds a new TCP listener here) and to remove its
//! socket's file at the stop, dropping it again after. (Its `log_level` gives one module a level
//! of its own, which the log shows.) It needs root to start with: elsewhere it says so and
//! checks nothing.

use std::process::Command;

use common::{eventually, run_nexthop, signal, stop};

mod common;

/// The (real, effective) uid of every thread of process `pid`.
fn thread_uids(pid: u32) -> Vec<(u32, u32)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("status")).ok())
        .map(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap().to_string();
            let ids: Vec<u32> = line.split_whitespace().skip(1).map(|n| n.parse().unwrap()).collect();
            (ids[0], ids[1])
        })
        .collect()
}

#[test]
fn the_forwarder_runs_as_the_configured_user_once_started() {
    #[allow(unsafe_code)]
    // SAFETY: geteuid cannot fail and touches no memory.
    let root = unsafe { libc::geteuid() } == 0;
    let nobody = Command::new("id").args(["-u", "nobody"]).output().ok().filter(|o| o.status.success());
    let (true, Some(nobody)) = (root, nobody) else {
        eprintln!("not root, or no user nobody: nothing to check");
        return;
    };
    let nobody: u32 = String::from_utf8_lossy(&nobody.stdout).trim().parse().unwrap();
    let scratch = tempfile::Builder::new().prefix("nexthop-privileges-").tempdir().unwrap();
    let dir = scratch.path();
    let (sock, cfg, log) = (dir.join("p.sock"), dir.join("p.toml"), dir.join("p.log"));
    let write = |tcp: &str| {
        let text = format!(
            "[forwarder]\nuser = \"nobody\"\nthreads = 2\nlog_level = \"error, nexthop_fw::runtime::faces=info\"\n[faces]\nunix = {:?}\ntcp = {tcp:?}\nudp = \"127.0.0.1:0\"\n",
            sock.display().to_string()
        );
        std::fs::write(&cfg, text).unwrap();
    };
    write("");
    let exe = env!("CARGO_BIN_EXE_nexthop");
    let mut fw = run_nexthop(&cfg, &log);
    assert!(eventually(|| std::os::unix::net::UnixStream::connect(&sock).is_ok()), "nexthop run did not listen");
    let pid = fw.0.id();
    let dropped = || thread_uids(pid).iter().all(|&ids| ids == (0, nobody));
    assert!(eventually(dropped), "every thread forwards as nobody (real uid root): {:?}", thread_uids(pid));
    assert!(thread_uids(pid).len() >= 3, "the I/O thread, a forwarding thread, the signal thread: {:?}", thread_uids(pid));
    let ctl = |face: &str, args: &[&str]| Command::new(exe).args(["ctl", "--face", face]).args(args).output().unwrap();
    let control = format!("unix://{}", sock.display());
    let status = ctl(&control, &["status"]);
    assert!(status.status.success(), "management answers: {}", String::from_utf8_lossy(&status.stderr));

    // A reload binds a new TCP listener (as root again), and drops to nobody after.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    write(&format!("127.0.0.1:{port}"));
    signal(&fw.0, libc::SIGHUP);
    let logged = || std::fs::read_to_string(&log).unwrap();
    assert!(eventually(|| logged().contains("configuration reloaded")), "{}", logged());
    let over_tcp = ctl(&format!("tcp4://127.0.0.1:{port}"), &["status"]);
    assert!(over_tcp.status.success(), "the new listener answers: {}", String::from_utf8_lossy(&over_tcp.stderr));
    assert!(dropped(), "nobody again after the reload: {:?}", thread_uids(pid));
    // The log level names a module of its own: its faces' comings and goings are logged.
    assert!(logged().contains("face up"), "{}", logged());

    let stopped = stop(&mut fw.0);
    assert!(stopped.success(), "{stopped}: {}", logged());
    assert!(!sock.exists(), "the socket's file removed at the stop, as root again");
}
