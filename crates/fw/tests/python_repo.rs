//! ndn-python-repo, the NDN repository people run, unmodified through nexthop: the repo
//! (`ndn-python-repo`, its SQLite storage) and its own put, get and delete clients
//! (tests/repo_client.py), each a process of its own on the forwarder's Unix socket, from the
//! virtual environment scripts/setup.sh makes.
//!
//! What crosses the forwarder: the repo's and the clients' prefix registrations (signed
//! commands, python-ndn's keychain), the repo's pub-sub (a notify Interest to the repo, the
//! repo's Interest back for the command under the client's prefix), the repo fetching the
//! file's segments from the client, status checks, and a reader fetching the file from the
//! repo alone — its writer gone and the content store erased.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{scratch, Forwarder};
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_wire::Name;

mod common;

const VENV_BIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin");
const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/repo_client.py");

/// The repo's routable name.
const REPO: &str = "/testrepo";

/// `ndn-python-repo` serving `REPO` from a SQLite file in `dir`; killed on drop.
struct Repo(Child);

impl Repo {
    fn start(home: &Path, dir: &Path, socket: &str) -> Repo {
        let config = dir.join("repo.conf");
        let db = dir.join("repo.db");
        // The sample configuration's sections, with a private database and a TCP bulk-insert
        // port of the system's choosing.
        let text = format!(
            "repo_config:\n  repo_name: '{}'\n  register_root: True\n\
             db_config:\n  db_type: 'sqlite3'\n  sqlite3:\n    'path': '{}'\n\
             tcp_bulk_insert:\n  addr: '127.0.0.1'\n  port: '0'\n  register_prefix: False\n  prefixes: []\n\
             logging_config:\n  level: 'WARNING'\n",
            &REPO[1..],
            db.display()
        );
        std::fs::write(&config, text).unwrap();
        let child = Command::new(format!("{VENV_BIN}/ndn-python-repo"))
            .arg("-c")
            .arg(&config)
            .env("HOME", home)
            .env("NDN_CLIENT_TRANSPORT", format!("unix://{socket}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ndn-python-repo runs (scripts/setup.sh installs it in .venv)");
        Repo(child)
    }
}

impl Drop for Repo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A python-ndn keychain (made by `pyndnsec`) in a private HOME.
fn keychain(dir: &Path) {
    for args in [&["Init-Pib"][..], &["New-Item", "/repo-test"]] {
        let ok =
            Command::new(format!("{VENV_BIN}/pyndnsec")).args(args).env("HOME", dir).stdout(Stdio::null()).stderr(Stdio::null()).status();
        assert!(ok.expect("pyndnsec runs").success(), "pyndnsec {args:?}");
    }
}

/// Runs one command of repo_client.py; its last line of output.
fn client(home: &Path, socket: &str, args: &[&str]) -> String {
    let out = Command::new(format!("{VENV_BIN}/python"))
        .arg(CLIENT)
        .args(args)
        .env("HOME", home)
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{socket}"))
        .stderr(Stdio::null())
        .output()
        .expect("python runs");
    String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("").to_string()
}

/// Empties the forwarder's content store under `prefix`, so that only the repo can answer.
fn erase_cs(fw: &Forwarder, prefix: &str) {
    let p = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), ..Default::default() };
    let r = fw.client().command("cs", "erase", &p).unwrap();
    assert_eq!(r.code, 200, "{}", r.text);
}

#[test]
fn ndn_python_repo_stores_serves_and_deletes_a_file() {
    let dir = scratch("pyrepo");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    keychain(&home);
    let fw = Forwarder::start(dir.path(), "fw", 1);
    let _repo = Repo::start(&home, dir.path(), &fw.socket);
    // The repo registers its name (for its commands) and the root (for the Data it serves).
    fw.wait_for_route(REPO, "the repo");
    fw.wait_for_route("/", "the repo");

    // 25 segments of 4000 bytes, the last one short.
    let file = dir.path().join("object.bin");
    let bytes: Vec<u8> = (0..98_765u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&file, &bytes).unwrap();
    let name = "/writer/object";
    let put = client(&home, &fw.socket, &["put", REPO, "/writer", file.to_str().unwrap(), name]);
    assert_eq!(put, "INSERTED 25");

    // The writer is gone (its route with it) and the forwarder forgets what it relayed: the
    // repo alone has the file.
    erase_cs(&fw, name);
    let out = dir.path().join("fetched.bin");
    let got = client(&home, &fw.socket, &["get", REPO, name, out.to_str().unwrap()]);
    assert_eq!(got, format!("FETCHED {}", bytes.len()));
    assert!(std::fs::read(&out).unwrap() == bytes, "the file came back as it was written");

    let deleted = client(&home, &fw.socket, &["delete", REPO, "/deleter", name]);
    assert_eq!(deleted, "DELETED 25");
    erase_cs(&fw, name);
    std::fs::remove_file(&out).unwrap();
    assert_eq!(client(&home, &fw.socket, &["get", REPO, name, out.to_str().unwrap()]), "FAILED");
}
