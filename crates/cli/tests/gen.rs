//! `nexthop gen` writes each experiment's workload as files that `nexthop fib` reads: the test
//! writes every table (small), looks its keys up with `nexthop fib`, and checks what the
//! workload promises — every packet descriptor of a Zipf FIB matches, every node pair has a
//! path, every lookup name has a route, the asked share of addresses and flat names match — and
//! that a seed writes the same files again.

use std::path::Path;
use std::process::{Command, Stdio};

const EXE: &str = env!("CARGO_BIN_EXE_nexthop");

/// Runs `nexthop gen <args> --out <dir>`.
fn gen(dir: &Path, args: &[&str]) {
    let out = Command::new(EXE).arg("gen").args(args).arg("--out").arg(dir).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("nexthop fib {} ", args[0])), "{said}");
}

/// `nexthop fib <table> [options] <dir>/table.txt < <dir>/keys.txt`: (key, answer) per line.
fn look_up(dir: &Path, table: &str, options: &[&str]) -> Vec<(String, String)> {
    let keys = std::fs::File::open(dir.join("keys.txt")).unwrap();
    let out = Command::new(EXE).args(["fib", table]).args(options).arg(dir.join("table.txt")).stdin(Stdio::from(keys)).output().unwrap();
    assert!(out.status.success(), "fib {table}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, a) = l.split_once('\t').unwrap();
            (k.to_string(), a.to_string())
        })
        .collect()
}

/// Lines of `<dir>/<file>` that are not the `#` header.
fn lines(dir: &Path, file: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(file)).unwrap().lines().filter(|l| !l.starts_with('#')).map(String::from).collect()
}

/// The share of `answers` that are `-` (no match).
fn unmatched(answers: &[(String, String)]) -> f64 {
    answers.iter().filter(|(_, a)| a == "-").count() as f64 / answers.len() as f64
}

#[test]
fn every_workload_is_written_as_files_fib_reads() {
    let scratch = tempfile::Builder::new().prefix("nexthop-gen-").tempdir().unwrap();
    let at = |name: &str| scratch.path().join(name);

    // Zipf descriptors: each packet is a FIB descriptor plus up to two tags.
    gen(&at("zipf"), &["tag", "--descriptors", "3000", "--packets", "400"]);
    assert_eq!(lines(&at("zipf"), "table.txt").len(), 3000);
    let fas = look_up(&at("zipf"), "tag", &[]);
    assert_eq!(fas.len(), 400);
    assert_eq!(unmatched(&fas), 0.0, "every packet matches");
    let fls = look_up(&at("zipf"), "tag", &["--fls"]);
    assert!(fls.iter().all(|(_, a)| a.starts_with("weight ")), "{:?}", &fls[..3]);
    // Packets with no extra tag are FIB descriptors: FLS finds the packet's own weight.
    let table = lines(&at("zipf"), "table.txt");
    let own = fls.iter().filter(|(k, _)| table.iter().any(|l| l.split(" -> ").next() == Some(k.as_str()))).count();
    assert!(own > 50, "{own} packets are FIB descriptors themselves");

    // The same seed writes the same files; another seed others.
    gen(&at("zipf-again"), &["tag", "--descriptors", "3000", "--packets", "400"]);
    gen(&at("zipf-seed"), &["tag", "--descriptors", "3000", "--packets", "400", "--seed", "9"]);
    for file in ["table.txt", "keys.txt"] {
        assert_eq!(lines(&at("zipf"), file), lines(&at("zipf-again"), file), "{file}");
        assert_ne!(lines(&at("zipf"), file), lines(&at("zipf-seed"), file), "{file}");
    }

    // App-tagged descriptors, and CCN names made into descriptors.
    gen(&at("apps"), &["tag", "--fib", "apps", "--descriptors", "2000", "--packets", "200"]);
    assert_eq!(unmatched(&look_up(&at("apps"), "tag", &[])), 0.0);
    assert!(lines(&at("apps"), "table.txt").iter().all(|l| l.starts_with("app")));
    gen(&at("ccn"), &["tag", "--fib", "ccn", "--descriptors", "20000", "--packets", "500"]);
    assert!(lines(&at("ccn"), "table.txt").iter().all(|l| l.starts_with('/')));
    let ccn = look_up(&at("ccn"), "tag", &["--fls"]);
    assert!(unmatched(&ccn) < 0.2, "{}", unmatched(&ccn));

    // A connected graph: every pair has a path.
    gen(&at("tz"), &["tz", "--nodes", "2000", "--edges", "5600", "--pairs", "300"]);
    let edges = lines(&at("tz"), "table.txt").len();
    assert!((5400..=5800).contains(&edges), "{edges} edges");
    let paths = look_up(&at("tz"), "tz", &[]);
    assert_eq!(paths.len(), 300);
    assert!(paths.iter().all(|(_, a)| a.starts_with("locator ") && a.contains("hops)")), "{:?}", &paths[..3]);

    // Name routes: every lookup name extends a route.
    for kind in ["url", "worst-binsearch", "worst-linear"] {
        let dir = at(&format!("name-{kind}"));
        gen(&dir, &["name", "--kind", kind, "--routes", "3000", "--lookups", "300"]);
        let found = look_up(&dir, "name", &[]);
        assert_eq!(found.len(), 300, "{kind}");
        assert_eq!(unmatched(&found), 0.0, "{kind}");
    }

    // IP: a synthetic table, 70% of the addresses inside a route.
    gen(&at("ip"), &["ip", "--table", "synthetic", "--routes", "20000", "--addresses", "2000", "--traffic", "matching:0.7"]);
    assert_eq!(lines(&at("ip"), "table.txt").len(), 20_000);
    let misses = unmatched(&look_up(&at("ip"), "ip", &[]));
    assert!((0.25..0.35).contains(&misses), "{misses}");

    // Flat names: a tenth of the lookups outside (8 checksum bits let about 1 in 256 through).
    gen(&at("flat"), &["flat", "--names", "20000", "--lookups", "2000", "--outside", "0.1"]);
    let misses = unmatched(&look_up(&at("flat"), "flat", &[]));
    assert!((0.07..0.13).contains(&misses), "{misses}");
}
