//! Parsing random and mutated bytes as ControlParameters or a ControlResponse, as INFO text and
//! `nfd.conf`, or as the TOML configuration never panics, and every accepted input keeps the
//! round trips of `nexthop_fw::fuzzing`.
//!
//! The number of inputs is `NEXTHOP_FUZZ_EXECS` (default 100,000); `make test` runs 10 million
//! of the binary management elements and 200,000 of each text format (each about a hundred
//! times the work of a binary element) in release mode. The
//! seeds are valid elements and files; the mutations are `nexthop_wire::fuzzing::Mutator`'s.

use nexthop_fw::fuzzing::{check_config, check_control_parameters, check_info};
use nexthop_fw::mgmt::params::{ControlParameters, ControlResponse};
use nexthop_fw::mgmt::validator::SAMPLE_RULES;
use nexthop_wire::fuzzing::Mutator;
use nexthop_wire::Name;

fn management_seeds() -> Vec<Vec<u8>> {
    let name = Name::from_uri("/example/app").unwrap();
    let full = ControlParameters {
        name: Some(name.clone()),
        face_id: Some(300),
        uri: Some("udp4://192.0.2.1:6363".into()),
        cost: Some(10),
        flags: Some(1),
        expiration_period: Some(60_000),
        strategy: Some(Name::from_uri("/localhost/nfd/strategy/best-route/v=5").unwrap()),
        mtu: Some(1400),
        ..ControlParameters::default()
    };
    let route = ControlParameters { name: Some(name), cost: Some(0), ..ControlParameters::default() };
    let ok = ControlResponse { code: 200, text: "OK".into(), body: Some(route.clone()) };
    let refused = ControlResponse { code: 403, text: "not authorized".into(), body: None };
    vec![full.encode(), route.encode(), ControlParameters::default().encode(), ok.encode(), refused.encode()]
}

fn info_seeds() -> Vec<Vec<u8>> {
    let nfd_conf = "general\n{\n  user nobody\n}\ntables\n{\n  cs_max_packets 1000\n  strategy_choice\n  {\n    /localhost /localhost/nfd/strategy/multicast\n  }\n}\nface_system\n{\n  udp\n  {\n    port 6363\n    mcast yes\n  }\n  tcp\n  {\n    listen no\n  }\n}\nrib\n{\n  auto_prefix_propagate\n  {\n    cost 15\n  }\n}\n";
    [nfd_conf, SAMPLE_RULES, "key \"a value; with \\\"quotes\\\"\" ; comment\nblock\n{\n  inner 1\n}\n"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

fn config_seeds() -> Vec<Vec<u8>> {
    [
        "[forwarder]\nthreads = 2\ndefault_hop_limit = 32\n\n[[route]]\nprefix = \"/example\"\nface = \"udp4://192.0.2.1:6363\"\ncost = 10\n",
        "[content_store]\ncapacity = 1000\npolicy = \"lru\"\n\n[[strategy]]\nprefix = \"/sync\"\nstrategy = \"multicast\"\n",
        "[faces]\nudp = \"[::]:6363\"\nudp_mtu = 1420\ntcp_local = [\"127.0.0.0/8\"]\n\n[[face]]\nuri = \"udp4://192.0.2.1:6363\"\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// Runs `execs` mutations of `seeds` through `check`, which must accept some and refuse some.
fn run(name: &str, execs: u64, seeds: &[Vec<u8>], check: fn(&[u8]) -> bool) {
    let mut mutator = Mutator::new(0x6677_0000 ^ name.len() as u64);
    let mut buf = Vec::with_capacity(1024);
    let mut accepted = 0u64;
    for _ in 0..execs {
        mutator.fill(seeds, &mut buf);
        accepted += u64::from(check(&buf));
    }
    eprintln!("{name}: {execs} inputs, {accepted} accepted");
    assert!(accepted > 0 && accepted < execs, "{name}: both paths of the parser ({accepted} of {execs})");
}

#[test]
fn random_and_mutated_management_elements_never_panic() {
    run("ControlParameters/ControlResponse", Mutator::execs(100_000), &management_seeds(), check_control_parameters);
}

#[test]
fn random_and_mutated_info_and_nfd_conf_never_panic() {
    run("INFO and nfd.conf", Mutator::execs(100_000) / 50, &info_seeds(), check_info);
}

#[test]
fn random_and_mutated_configurations_never_panic() {
    run("TOML configuration", Mutator::execs(100_000) / 50, &config_seeds(), check_config);
}

#[test]
fn seeds_are_valid() {
    assert!(management_seeds().iter().all(|s| check_control_parameters(s)));
    assert!(info_seeds().iter().all(|s| check_info(s)));
    for s in config_seeds() {
        assert!(check_config(&s), "{}", String::from_utf8_lossy(&s));
    }
}

/// The cargo-fuzz targets' seed corpora (`fuzz/corpus/<target>`) are inputs their checks accept.
#[test]
fn the_fuzz_corpora_are_accepted() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    for (target, check) in
        [("control_parameters", check_control_parameters as fn(&[u8]) -> bool), ("info", check_info), ("config", check_config)]
    {
        let files: Vec<_> = std::fs::read_dir(corpus.join(target)).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(!files.is_empty(), "{target} has seeds");
        for f in files {
            assert!(check(&std::fs::read(&f).unwrap()), "{}", f.display());
        }
    }
}
