//! The workspace's layout, checked from its sources: no module of any crate imports one that
//! imports it back (directly or around a longer cycle); nexthop-fw's folders are layered in the
//! order its crate overview gives; and `unsafe` code is only in the files the README lists.
//!
//! # Overview
//! A module is a file (`a/b.rs` or `a/b/mod.rs` is `a::b`). Its imports are the paths it names
//! in code — `crate::…`, `super::…`, grouped `crate::{…}` — outside comments, string literals
//! and its `#[cfg(test)]` module, each taken as the longest module it names. Tarjan's algorithm
//! finds the strongly connected components of that graph; every one must be a single module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules of the crate whose sources are under `src`, each with its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap().with_extension("");
            let mut m: Module = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            (m, f)
        })
        .collect()
}

/// The source's code: comments and the text of string literals blanked, and its test module
/// (from the first `#[cfg(test)]` followed by a `mod`) left out.
fn code(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = source[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
                i = end;
            }
            b'"' => {
                out.push('"');
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                out.push('"');
                i += 1;
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || (bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'')) => {
                // a char literal ('"', '\'', '{'): skipped whole
                i += if bytes[i + 1] == b'\\' { 4 } else { 3 };
            }
            _ => {
                let c = source[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    let mut at = 0;
    while let Some(found) = out[at..].find("#[cfg(test)]") {
        let start = at + found;
        let rest = out[start + "#[cfg(test)]".len()..].trim_start();
        let rest = rest.strip_prefix("pub(crate) ").or_else(|| rest.strip_prefix("pub(super) ")).unwrap_or(rest);
        let rest = if rest.starts_with("pub(in ") { rest.split_once(") ").map_or(rest, |(_, r)| r) } else { rest };
        if rest.starts_with("mod ") {
            out.truncate(start);
            break;
        }
        at = start + 1;
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths `code` names from the crate root, as segments (module `at`'s `super` resolved).
fn paths(code: &str, at: &Module) -> Vec<Module> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for root in ["crate", "super"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(root) {
            let start = from + found;
            from = start + root.len();
            if start > 0 && (is_ident(bytes[start - 1]) || bytes[start - 1] == b':') {
                continue;
            }
            let mut base: Module = if root == "crate" { Vec::new() } else { at[..at.len().saturating_sub(1)].to_vec() };
            let mut rest = &code[from..];
            while let Some(r) = rest.strip_prefix("::super") {
                base.pop();
                rest = r;
            }
            if let Some(group) = rest.strip_prefix("::{") {
                // `crate::{a::b, c::{d, e}}`: each item's leading path
                let mut depth = 1;
                let end = group
                    .char_indices()
                    .find(|&(_, c)| {
                        depth += i32::from(c == '{') - i32::from(c == '}');
                        depth == 0
                    })
                    .map_or(group.len(), |(i, _)| i);
                for item in group[..end].split([',', '{', '}']) {
                    let segs: Module = item.trim().split("::").map(str::to_string).filter(|s| !s.is_empty()).collect();
                    if !segs.is_empty() {
                        out.push(base.iter().cloned().chain(segs).collect());
                    }
                }
                continue;
            }
            let mut segs = base;
            while let Some(r) = rest.strip_prefix("::") {
                let len = r.bytes().take_while(|&b| is_ident(b)).count();
                if len == 0 {
                    break;
                }
                segs.push(r[..len].to_string());
                rest = &r[len..];
            }
            out.push(segs);
        }
    }
    out
}

/// Each module's imports: the other modules it names.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mods = modules(src);
    let mut edges = BTreeMap::new();
    for (m, file) in &mods {
        let code = code(&std::fs::read_to_string(file).unwrap());
        let mut to = BTreeSet::new();
        for p in paths(&code, m) {
            if let Some(target) = (1..=p.len()).rev().map(|k| p[..k].to_vec()).find(|k| mods.contains_key(k)) {
                if &target != m {
                    to.insert(target);
                }
            }
        }
        edges.insert(m.clone(), to);
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        next: usize,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            self.index.insert(v, (self.next, self.next));
            self.next += 1;
            self.stack.push(v);
            for w in &self.edges[v] {
                match self.index.get(w) {
                    None => {
                        self.visit(w);
                        let low = self.index[w].1.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(&(wi, _)) if self.stack.contains(&w) => {
                        let low = wi.min(self.index[v].1);
                        self.index.get_mut(v).unwrap().1 = low;
                    }
                    Some(_) => {}
                }
            }
            let (vi, low) = self.index[v];
            if vi == low {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk { edges, index: BTreeMap::new(), stack: Vec::new(), next: 0, found: Vec::new() };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

fn crates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates")).unwrap().map(|e| e.unwrap().path().join("src")).collect();
    out.sort();
    out
}

#[test]
fn no_module_of_any_crate_imports_one_that_imports_it_back() {
    let mut seen = 0;
    for src in crates() {
        let edges = graph(&src);
        seen += edges.len();
        let found = cycles(&edges);
        assert!(found.is_empty(), "{}: import cycles among {:?}", src.display(), found);
    }
    assert!(seen > 150, "the workspace's modules were found ({seen})");
}

/// The checker finds a cycle where there is one, and none in a chain.
#[test]
fn the_cycle_check_finds_cycles() {
    let m = |s: &str| -> Module { s.split("::").map(str::to_string).collect() };
    let code_a = code("use crate::b::X; // crate::c\nfn f() { let s = \"crate::c\"; }\n#[cfg(test)]\nmod tests { use crate::c; }");
    assert_eq!(paths(&code_a, &m("a")), vec![m("b::X")]);
    assert_eq!(paths("use super::{d::E, f};", &m("x::y")), vec![m("x::d::E"), m("x::f")]);
    let mut edges = BTreeMap::new();
    edges.insert(m("a"), BTreeSet::from([m("b")]));
    edges.insert(m("b"), BTreeSet::from([m("c")]));
    edges.insert(m("c"), BTreeSet::new());
    assert!(cycles(&edges).is_empty());
    edges.get_mut(&m("c")).unwrap().insert(m("a"));
    assert_eq!(cycles(&edges).len(), 1);
}

/// nexthop-fw's folders, lowest first: each imports only from folders before it, except that a
/// leaf module (one that imports nothing of the crate, as `conf::info`) may be read from anywhere.
#[test]
fn the_forwarders_folders_are_layered() {
    const ORDER: [&str; 9] = ["face", "counters", "lp", "sys", "table", "pipeline", "mgmt", "conf", "runtime"];
    let edges = graph(&workspace().join("crates/fw/src"));
    let rank = |m: &Module| m.first().and_then(|f| ORDER.iter().position(|o| o == f));
    for (from, to) in &edges {
        let Some(r) = rank(from) else { continue };
        for t in to {
            let leaf = edges[t].is_empty();
            let ok = rank(t).is_none_or(|rt| rt <= r) || leaf;
            assert!(ok, "{} imports {}, a folder above it", from.join("::"), t.join("::"));
        }
    }
    assert!(edges[&vec!["conf".to_string(), "info".to_string()]].is_empty(), "the INFO parser is a leaf");
}

/// Every file with `unsafe` code, which the README lists; nothing else may have any.
const UNSAFE_FILES: &[&str] = &[
    "crates/cs/src/l2/file.rs",
    "crates/fw/src/sys/interface_watch.rs",
    "crates/fw/src/sys/interfaces.rs",
    "crates/fw/src/sys/privileges.rs",
    "crates/fw/src/sys/socket_queue.rs",
    "crates/fw/src/sys/udp_batch.rs",
    "crates/io/src/bpf/syscall.rs",
    "crates/io/src/interface.rs",
    "crates/io/src/mapping.rs",
    "crates/io/src/membership.rs",
    "crates/io/src/netns.rs",
    "crates/io/src/packet/port.rs",
    "crates/io/src/poll.rs",
    "crates/io/src/pool.rs",
    "crates/io/src/sockopt.rs",
    "crates/io/src/xdp/ring.rs",
    "crates/io/src/xdp/socket.rs",
    "crates/lab/src/alloc.rs",
    "crates/lab/src/machine.rs",
    "crates/lookup/src/flat/query.rs",
    "crates/lookup/src/ip/bloomfwd6.rs",
    "crates/lookup/src/ip/bloomfwd6/avx512.rs",
    "crates/lookup/src/ip/simd.rs",
    "crates/lookup/src/ip/table.rs",
    "crates/lookup/src/mem.rs",
    "crates/lookup/src/name/hash.rs",
    "crates/lookup/src/region.rs",
    "crates/lookup/src/tag/list_scan.rs",
    "crates/lookup/src/tag/matcher.rs",
    "crates/lookup/src/tag/scan.rs",
];

#[test]
fn unsafe_code_is_only_where_the_readme_lists_it() {
    let root = workspace();
    let mut found = BTreeSet::new();
    for src in crates() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = code(&text);
            let has = ["unsafe {", "unsafe fn", "unsafe impl", "unsafe extern"].iter().any(|u| code.contains(u));
            if has {
                found.insert(f.strip_prefix(&root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let listed: BTreeSet<String> = UNSAFE_FILES.iter().map(|s| s.to_string()).collect();
    assert_eq!(found, listed, "files with unsafe code");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for f in UNSAFE_FILES {
        assert!(readme.contains(f), "README.md lists {f}");
    }
    let lib = std::fs::read_to_string(root.join("crates/fw/src/lib.rs")).unwrap();
    assert!(lib.contains("#![deny(unsafe_code)]") && lib.matches("allow(unsafe_code)").count() == 1, "fw allows unsafe code in sys alone");
}
