//! `nexthop fib` on files written by the test: every answer the command prints is checked against
//! an oracle (the linear scan for descriptors, the binary trie for addresses, a longest-match
//! scan of a map for names, the file itself for flat names, the tree's path for locators), keys
//! given on the command line and on standard input; a bad file line is named and refuses the
//! file; a bad key is reported while the others are answered.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use nexthop_lookup::ip::{BinaryTrie, NO_ROUTE};
use nexthop_lookup::tag::{self, DescriptorFib, Fanout, LinearScan, PortSet};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Runs `nexthop fib ARGS` with `stdin` on its standard input.
fn nexthop_fib(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nexthop"))
        .arg("fib")
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The (key, answer) pairs printed, one per line.
fn answers(out: &Output) -> Vec<(String, String)> {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    text.lines().map(|l| l.split_once('\t').map(|(k, a)| (k.to_string(), a.to_string())).unwrap()).collect()
}

/// `set`'s ports as the command prints them, sorted.
fn port_names(fib: &DescriptorFib, set: &PortSet) -> BTreeSet<String> {
    set.iter().filter_map(|id| fib.port(id)).map(|p| format!("{}:{}", p.tree, p.interface)).collect()
}

fn printed_ports(answer: &str) -> BTreeSet<String> {
    if answer == "-" {
        BTreeSet::new()
    } else {
        answer.split(' ').map(str::to_string).collect()
    }
}

/// A descriptor FIB file of tag sets and names over a small vocabulary (so packets contain many
/// entries), and packets: entries plus up to two extra tags, and a few that match nothing.
fn tag_workload(path: &Path) -> Vec<String> {
    let mut rng = SmallRng::seed_from_u64(7);
    let tag = |rng: &mut SmallRng| format!("t{}", rng.gen_range(0..40));
    let mut lines = vec!["# written by the test".to_string()];
    let mut keys = Vec::new();
    for i in 0..1500 {
        let key = if i % 10 == 0 {
            (0..rng.gen_range(1..=3)).map(|_| format!("/{}", tag(&mut rng))).collect::<String>()
        } else {
            (0..rng.gen_range(1..=4)).map(|_| tag(&mut rng)).collect::<Vec<_>>().join(" ")
        };
        let ports: Vec<String> = (0..rng.gen_range(1..=2)).map(|_| format!("{}:{}", rng.gen_range(0..4), rng.gen_range(0..16))).collect();
        lines.push(format!("{key} -> {}", ports.join(" ")));
        keys.push(key);
    }
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
    let mut packets: Vec<String> = (0..150)
        .map(|i| {
            let key = &keys[rng.gen_range(0..keys.len())];
            if key.starts_with('/') {
                format!("{key}/{}", tag(&mut rng))
            } else {
                let extra: Vec<String> = (0..i % 3).map(|_| tag(&mut rng)).collect();
                format!("{key} {}", extra.join(" ")).trim().to_string()
            }
        })
        .collect();
    packets.extend(["nothing here", "/not/in/the/fib"].map(String::from));
    packets
}

#[test]
fn tag_answers_are_the_linear_scans() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tags.fib");
    let packets = tag_workload(&path);
    let file = path.to_str().unwrap();
    let fib = tag::read_fib_file(std::fs::File::open(&path).map(std::io::BufReader::new).unwrap(), |_| {}).unwrap();
    let scan = LinearScan::new(fib.entries());
    let stdin = packets.join("\n") + "\n";
    for form in [["--compression", "rare+chain", "--layout", "srol"], ["--compression", "perm+chain", "--layout", "sol"]] {
        // FAS, all ports and those of tree 2.
        for tree in [None, Some(2u16)] {
            let mut args = vec!["tag", file];
            args.extend(form);
            let tree_arg = tree.map(|t| t.to_string());
            if let Some(t) = &tree_arg {
                args.extend(["--tree", t]);
            }
            let out = nexthop_fib(&args, &stdin);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let got = answers(&out);
            assert_eq!(got.len(), packets.len());
            let allowed = tree.map_or(PortSet::ALL, |t| fib.tree_ports(t));
            let mut matched = 0;
            for ((key, answer), packet) in got.iter().zip(&packets) {
                assert_eq!(key, packet);
                let want = scan.fas(&tag::parse_descriptor(packet).unwrap(), Fanout::ALL, &allowed);
                matched += usize::from(!want.is_empty());
                assert_eq!(printed_ports(answer), port_names(&fib, &want), "{form:?} {tree:?} {packet:?}");
            }
            assert!(matched > packets.len() / 2, "most packets match something: {matched}");
        }
        // FLS: the weight of the heaviest entry the packet contains, and the ports of one of them.
        let mut args = vec!["tag", file, "--fls"];
        args.extend(form);
        let out = nexthop_fib(&args, &stdin);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for ((_, answer), packet) in answers(&out).iter().zip(&packets) {
            let (weight, candidates) = scan.fls_answers(&tag::parse_descriptor(packet).unwrap());
            if candidates.is_empty() {
                assert_eq!(answer, "-", "{packet:?}");
                continue;
            }
            let (w, ports) = answer.strip_prefix("weight ").and_then(|a| a.split_once(": ")).unwrap();
            assert_eq!(w.parse::<u32>().unwrap(), weight, "{packet:?}");
            assert!(candidates.iter().any(|c| port_names(&fib, c) == printed_ports(ports)), "{packet:?}: {answer}");
        }
    }
    // Keys on the command line, and a fan-out limit.
    let out = nexthop_fib(&["tag", file, "--fanout", "1", &packets[0], &packets[1]], "");
    assert!(out.status.success());
    let got = answers(&out);
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|(_, a)| a == "-" || printed_ports(a).len() == 1), "{got:?}");
}

/// `--sizes` on a FIB of tags and filters written as bit strings: the node counts it prints for
/// the uncompressed forms are the oracle's (a node per distinct prefix of the descriptors'
/// positions in that order, plus a terminator each), and chain removal shrinks the trie.
#[test]
fn tag_sizes_are_the_tries_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sizes.fib");
    let mut rng = SmallRng::seed_from_u64(11);
    let mut lines = Vec::new();
    for i in 0..400 {
        let d = if i % 2 == 0 {
            (0..rng.gen_range(1..=3)).map(|_| format!("t{}", rng.gen_range(0..60))).collect::<Vec<_>>().join(" ")
        } else {
            let mut bits = vec![b'0'; 192];
            bits[rng.gen_range(0..8)] = b'1'; // a popular bit, then rare ones
            for _ in 0..rng.gen_range(2..8) {
                bits[rng.gen_range(0..192)] = b'1';
            }
            String::from_utf8(bits).unwrap()
        };
        lines.push(format!("{d} -> 0:{}", i % 8));
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let fib = tag::read_fib_file(std::fs::File::open(&path).map(std::io::BufReader::new).unwrap(), |_| {}).unwrap();
    let descriptors: Vec<Vec<usize>> = fib.entries().map(|(d, _)| d.positions().collect()).collect();
    // The oracle: distinct prefixes of each descriptor's positions sorted by `rank`.
    let nodes = |rank: &dyn Fn(usize) -> usize| {
        let mut prefixes = BTreeSet::new();
        for d in &descriptors {
            let mut sorted = d.clone();
            sorted.sort_by_key(|&p| rank(p));
            for j in 1..=sorted.len() {
                prefixes.insert(sorted[..j].to_vec());
            }
        }
        (prefixes.len() + descriptors.len()) as u64
    };
    let mut count = [0usize; 192];
    descriptors.iter().flatten().for_each(|&p| count[p] += 1);
    let mut by_popularity: Vec<usize> = (0..192).collect();
    by_popularity.sort_by_key(|&p| (std::cmp::Reverse(count[p]), p));
    let mut rank = [0usize; 192];
    by_popularity.iter().enumerate().for_each(|(r, &p)| rank[p] = r);

    let out = nexthop_fib(&["tag", path.to_str().unwrap(), "--sizes"], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: BTreeMap<&str, (u64, u64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0], (f[1].parse().unwrap(), f[2].parse().unwrap()))
        })
        .collect();
    assert_eq!(rows["none"].0, nodes(&|p| p), "{text}");
    assert_eq!(rows["perm"].0, nodes(&|p| rank[p]), "{text}");
    assert!(rows["perm"].0 < rows["none"].0, "{text}");
    for chained in ["perm+chain", "rare+chain"] {
        assert!(rows[chained].0 < rows["perm"].0 && rows[chained].1 < rows["perm"].1, "{text}");
    }
}

#[test]
fn ip_answers_are_the_binary_tries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("routes.txt");
    let mut rng = SmallRng::seed_from_u64(9);
    let (mut v4, mut v6) = (BinaryTrie::<u32>::new(), BinaryTrie::<u128>::new());
    let mut lines = vec!["; written by the test".to_string()];
    let mut seen = std::collections::HashSet::new();
    // The tries hold a label's index; half the labels are 4-byte ASNs beyond 30 bits.
    let label = |hop: u32| if hop.is_multiple_of(2) { 4_200_000_000 + hop } else { hop };
    for i in 0..3000u32 {
        let hop = rng.gen_range(0..1000u32);
        if i % 3 == 0 {
            let len = rng.gen_range(16..=64u8);
            let prefix = (u128::from(rng.gen::<u16>() % 4 + 0x2001) << 112 | u128::from(rng.gen::<u64>()) << 48)
                & (!0u128 << (128 - u32::from(len)));
            if seen.insert((6, prefix, len)) {
                v6.insert(prefix, len, hop).unwrap();
                lines.push(format!("{}/{len} {}", std::net::Ipv6Addr::from(prefix), label(hop)));
            }
        } else {
            let len = rng.gen_range(8..=32u8);
            let prefix = (rng.gen::<u32>() & 0x0fff_ffff | 0x0a00_0000) & (!0u32 << (32 - u32::from(len)));
            if seen.insert((4, u128::from(prefix), len)) {
                v4.insert(prefix, len, hop).unwrap();
                lines.push(format!("{}/{len} {}", std::net::Ipv4Addr::from(prefix), label(hop)));
            }
        }
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let addrs: Vec<String> = (0..2000)
        .map(|i| {
            if i % 2 == 0 {
                std::net::Ipv4Addr::from(rng.gen::<u32>() & 0x0fff_ffff | 0x0a00_0000).to_string()
            } else {
                std::net::Ipv6Addr::from(u128::from(rng.gen::<u16>() % 4 + 0x2001) << 112 | u128::from(rng.gen::<u64>()) << 48).to_string()
            }
        })
        .collect();
    let out = nexthop_fib(&["ip", path.to_str().unwrap()], &(addrs.join("\n") + "\n"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = answers(&out);
    assert_eq!(got.len(), addrs.len());
    let mut routed = 0;
    for ((key, answer), addr) in got.iter().zip(&addrs) {
        assert_eq!(key, addr);
        let want = match addr.parse::<std::net::IpAddr>().unwrap() {
            std::net::IpAddr::V4(a) => v4.lookup(u32::from(a)),
            std::net::IpAddr::V6(a) => v6.lookup(u128::from(a)),
        };
        routed += usize::from(want != NO_ROUTE);
        assert_eq!(answer, &if want == NO_ROUTE { "-".to_string() } else { label(want).to_string() }, "{addr}");
    }
    assert!(routed > addrs.len() / 4, "many addresses have a route: {routed}");
}

#[test]
fn name_answers_are_the_longest_routes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("names.routes");
    let mut rng = SmallRng::seed_from_u64(11);
    let component = |rng: &mut SmallRng| ["a", "b", "c", "d", "e"][rng.gen_range(0..5)];
    // Routes of 1–4 components (and the root once), each with 1–3 faces over several lines.
    let mut routes: HashMap<String, BTreeMap<u32, u32>> = HashMap::new();
    let mut lines = vec!["/ 99 7".to_string()];
    routes.entry("/".into()).or_default().insert(99, 7);
    for _ in 0..300 {
        let prefix: String = (0..rng.gen_range(1..=4)).map(|_| format!("/{}", component(&mut rng))).collect();
        for _ in 0..rng.gen_range(1..=3) {
            let (face, cost) = (rng.gen_range(1..20u32), rng.gen_range(0..100u32));
            let hops = routes.entry(prefix.clone()).or_default();
            let kept = hops.entry(face).or_insert(cost);
            *kept = (*kept).min(cost);
            lines.push(format!("{prefix} {face} {cost}"));
        }
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let names: Vec<String> = (0..500).map(|_| (0..rng.gen_range(1..=6)).map(|_| format!("/{}", component(&mut rng))).collect()).collect();
    let out = nexthop_fib(&["name", path.to_str().unwrap()], &(names.join("\n") + "\n"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = answers(&out);
    assert_eq!(got.len(), names.len());
    for ((key, answer), name) in got.iter().zip(&names) {
        assert_eq!(key, name);
        let parts: Vec<&str> = name.split('/').skip(1).collect();
        let route = (0..=parts.len()).rev().map(|n| format!("/{}", parts[..n].join("/"))).find(|p| routes.contains_key(p)).unwrap();
        let mut hops: Vec<(u32, u32)> = routes[&route].iter().map(|(&f, &c)| (c, f)).collect();
        hops.sort_unstable();
        let want = format!("{route} {}", hops.iter().map(|(c, f)| format!("{f}:{c}")).collect::<Vec<_>>().join(" "));
        assert_eq!(answer, &want, "{name}");
    }
}

#[test]
fn flat_answers_names_in_the_fib_and_rejects_most_others() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flat.names");
    let inside: Vec<(String, u32)> = (0..5000u32).map(|i| (format!("host-{i}.example"), i * 7919 % 100_000)).collect();
    let text: String = inside.iter().map(|(n, a)| format!("{n} {a}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let outside: Vec<String> = (0..1000).map(|i| format!("other-{i}.example")).collect();
    let keys: Vec<&str> = inside.iter().map(|(n, _)| n.as_str()).chain(outside.iter().map(String::as_str)).collect();
    let out = nexthop_fib(&["flat", path.to_str().unwrap()], &(keys.join("\n") + "\n"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = answers(&out);
    assert_eq!(got.len(), keys.len());
    for ((key, answer), (name, action)) in got.iter().zip(&inside) {
        assert_eq!((key, answer), (name, &action.to_string()));
    }
    // 8 checksum bits: an outside name slips through with probability 1/256.
    let slipped = got[inside.len()..].iter().filter(|(_, a)| a != "-").count();
    assert!(slipped <= 20, "{slipped} of 1000 outside names got an action");
}

#[test]
fn tz_paths_are_the_trees() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.txt");
    let mut rng = SmallRng::seed_from_u64(13);
    // A connected graph: a random tree over 400 nodes plus 300 more edges; nodes named "r<i>".
    let n = 400u32;
    let mut edges: Vec<(u32, u32)> = (1..n).map(|v| (rng.gen_range(0..v), v)).collect();
    edges.extend((0..300).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))).filter(|(u, v)| u != v));
    std::fs::write(&path, edges.iter().map(|(u, v)| format!("r{u} r{v}\n")).collect::<String>()).unwrap();
    // The tree the command builds: ids in order of first appearance, BFS from the root given.
    let mut ids: HashMap<u32, u32> = HashMap::new();
    let mut adjacency: Vec<Vec<u32>> = Vec::new();
    for &(u, v) in &edges {
        let mut id = |x: u32| {
            *ids.entry(x).or_insert_with(|| {
                adjacency.push(Vec::new());
                adjacency.len() as u32 - 1
            })
        };
        let (a, b) = (id(u), id(v));
        adjacency[a as usize].push(b);
        adjacency[b as usize].push(a);
    }
    let tree = tag::Tree::bfs(&adjacency, ids[&7]).unwrap();
    let up = |mut v: u32| {
        let mut path = vec![v];
        while tree.parent(v) != tag::NO_PARENT {
            v = tree.parent(v);
            path.push(v);
        }
        path
    };
    let name_of: HashMap<u32, u32> = ids.iter().map(|(&node, &id)| (id, node)).collect();
    let pairs: Vec<(u32, u32)> = (0..300).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))).collect();
    let keys: Vec<String> = pairs.iter().map(|(s, d)| format!("r{s} r{d}")).collect();
    let out = nexthop_fib(&["tz", path.to_str().unwrap(), "--root", "r7"], &(keys.join("\n") + "\n"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = answers(&out);
    assert_eq!(got.len(), pairs.len());
    for ((key, answer), &(s, d)) in got.iter().zip(&pairs) {
        assert_eq!(key, &format!("r{s} r{d}"));
        // The tree path: up from the source to the lowest common ancestor, then down.
        let (from_s, from_d) = (up(ids[&s]), up(ids[&d]));
        let common = from_s.iter().find(|v| from_d.contains(v)).copied().unwrap();
        let mut want: Vec<u32> = from_s.iter().copied().take_while(|&v| v != common).collect();
        want.push(common);
        want.extend(from_d.iter().copied().take_while(|&v| v != common).collect::<Vec<_>>().into_iter().rev());
        let want: Vec<String> = want.iter().map(|id| format!("r{}", name_of[id])).collect();
        let hops = answer.split_once(": ").unwrap().1;
        assert_eq!(hops, format!("{} ({} hops)", want.join(" "), want.len() - 1), "{key}");
    }
}

#[test]
fn a_bad_line_refuses_the_file_and_a_bad_key_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let tags = dir.path().join("bad.fib");
    std::fs::write(&tags, "a b -> 0:1\n# fine\nc -> 0:x\n").unwrap();
    let out = nexthop_fib(&["tag", tags.to_str().unwrap(), "a b"], "");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.fib: line 3: bad interface"), "{err}");

    let routes = dir.path().join("bad.routes");
    std::fs::write(&routes, "10.0.0.0/8 1\n10.0.0.1/8 2\n").unwrap();
    let out = nexthop_fib(&["ip", routes.to_str().unwrap(), "10.1.1.1"], "");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: "), "{}", String::from_utf8_lossy(&out.stderr));

    std::fs::write(&routes, "10.0.0.0/8 1\n").unwrap();
    let out = nexthop_fib(&["ip", routes.to_str().unwrap()], "10.1.1.1\nnot-an-address\n\n# comment\n11.0.0.1\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(answers(&out), [("10.1.1.1", "1"), ("11.0.0.1", "-")].map(|(k, a)| (k.to_string(), a.to_string())));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"not-an-address\": not an IP address"));

    std::fs::write(&tags, "a -> 0:1\n").unwrap();
    let out = nexthop_fib(&["tag", tags.to_str().unwrap(), "a z", "", "/"], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(answers(&out), [("a z".to_string(), "0:1".to_string())]);
    assert_eq!(String::from_utf8_lossy(&out.stderr).matches("at least one tag").count(), 2);

    for (table, text, what) in [
        ("name", "/a 1\n/b x\n", "line 2: bad face"),
        ("name", "a/b 1\n", "line 1: bad prefix"),
        ("flat", "x 1\ny 2\nx 3\n", "line 3: \"x\" is already in the file"),
        ("flat", "x 16777216\n", "line 1: bad action"),
        ("tz", "a b\nc\n", "line 2: expected `node node`"),
        ("tz", "a b\nc d\n", "not connected"),
    ] {
        std::fs::write(&tags, text).unwrap();
        let out = nexthop_fib(&[table, tags.to_str().unwrap(), "/a"], "");
        assert!(!out.status.success() && out.stdout.is_empty(), "{table} {text:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(what), "{table} {text:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
