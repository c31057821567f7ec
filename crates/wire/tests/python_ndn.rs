//! Interoperability with python-ndn (installed by scripts/setup.sh): packets python-ndn encodes
//! decode in nexthop, field by field and byte-exact on re-encoding; packets nexthop encodes parse
//! in python-ndn with the same fields.

use std::process::Command;

use nexthop_wire::{Data, DataView, Emit, Interest, InterestView, Name};

fn python(args: &[&str]) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python_ndn.py");
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python");
    let out = Command::new(python).arg(script).args(args).output().expect("the .venv python runs (scripts/setup.sh makes it)");
    assert!(out.status.success(), "python-ndn failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn python_ndn_packets_decode_in_nexthop() {
    let made = python(&["make"]);
    let packets: Vec<(&str, Vec<u8>)> = made.lines().map(|l| l.split_once(' ').unwrap()).map(|(k, h)| (k, unhex(h))).collect();
    assert_eq!(packets.len(), 4);
    for (kind, wire) in &packets {
        match *kind {
            "data" => {
                let v = DataView::decode(wire).unwrap();
                assert_eq!(v.name().to_string(), "/example/testApp/randomData");
                assert_eq!(v.freshness_period_ms(), 1000);
                assert_eq!(v.content(), Some(&b"Hello, world!"[..]));
                assert!(v.verify_digest_sha256(), "python-ndn's DigestSha256 verifies");
                assert_eq!(&Data::decode(wire).unwrap().to_bytes(), wire);
            }
            _ => {
                let v = InterestView::decode(wire).unwrap_or_else(|e| panic!("{kind}: {e}"));
                assert_eq!(v.name().prefix(5).to_string(), "/example/testApp/randomData/v=5/seg=3");
                match *kind {
                    "interest" => {
                        assert!(v.can_be_prefix() && v.must_be_fresh());
                        assert_eq!(v.nonce(), Some([1, 2, 3, 4]));
                        assert_eq!((v.lifetime_ms(), v.hop_limit()), (Some(2000), Some(30)));
                    }
                    "interest-params" => assert_eq!(v.app_parameters(), Some(&b"hello"[..])),
                    _ => assert!(v.verify_digest_sha256(), "python-ndn's signed Interest verifies"),
                }
                assert_eq!(&Interest::decode(wire).unwrap().to_bytes(), wire, "{kind}");
            }
        }
    }
}

#[test]
fn nexthop_packets_parse_in_python_ndn() {
    let mut i = Interest::new(Name::from_uri("/nexthop/test/v=1").unwrap());
    i.can_be_prefix = true;
    i.nonce = Some([0, 0, 0, 42]);
    i.lifetime_ms = Some(1500);
    i.hop_limit = Some(9);
    i.set_app_parameters(b"xyz".to_vec());
    let seen = python(&["parse", "interest", &hex(&i.to_bytes())]);
    let params_uri = i.name.get(3).unwrap().to_string();
    assert_eq!(seen.trim(), format!("/nexthop/test/v=1/{params_uri} 1 0 42 1500 9 78797a"));

    let mut d = Data::new(Name::from_uri("/nexthop/data/seg=0").unwrap(), b"payload".to_vec());
    d.meta_info = Some(nexthop_wire::MetaInfo { freshness_period_ms: Some(500), ..Default::default() });
    d.sign_digest_sha256();
    let seen = python(&["parse", "data", &hex(&d.to_bytes())]);
    assert_eq!(seen.trim(), "/nexthop/data/seg=0 500 payload 0");
}
