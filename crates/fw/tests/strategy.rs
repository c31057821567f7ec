//! Strategies on a running nexthop, chosen through management as an operator would
//! (`strategy-choice/set`): NFD's access strategy sends a prefix's Interests to the upstream
//! that last answered, and to the others once that one stays silent past its RTO (timers fired
//! by the forwarder's own ticks).

use std::time::{Duration, Instant};

use common::{scratch, Forwarder};
use nexthop_fw::client::Client;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_fw::tlv::put_tlv;
use nexthop_wire::types::{FRAGMENT, LP_PACKET, PIT_TOKEN};
use nexthop_wire::{Component, Data, DataView, Emit, Interest, InterestView, LpPacketView, Name};

mod common;

/// A producer of `/acc` that answers only when told to.
struct Upstream(Client);

impl Upstream {
    fn register(fw: &Forwarder) -> Upstream {
        let mut c = fw.client();
        let p = ControlParameters { name: Some(Name::from_uri("/acc").unwrap()), ..Default::default() };
        assert_eq!(c.command("rib", "register", &p).unwrap().code, 200);
        Upstream(c)
    }

    /// The next Interest it receives within `wait`: its name's last component and its wire.
    fn next(&mut self, wait: Duration) -> Option<(String, Vec<u8>)> {
        let wire = self.0.recv(wait).unwrap()?;
        let lp = LpPacketView::decode(&wire).expect("with the forwarder's PIT token");
        let i = InterestView::decode(lp.fragment.unwrap()).unwrap();
        let name = i.name();
        Some((String::from_utf8_lossy(name.get(name.len() - 1).unwrap().value()).into_owned(), wire))
    }

    /// Answers the Interest `wire` with Data.
    fn answer(&mut self, wire: &[u8]) {
        let lp = LpPacketView::decode(wire).unwrap();
        let i = InterestView::decode(lp.fragment.unwrap()).unwrap();
        let mut d = Data::new(i.name().to_name(), b"ok".to_vec());
        d.sign_digest_sha256();
        let (mut fields, mut out) = (Vec::new(), Vec::new());
        put_tlv(&mut fields, PIT_TOKEN, lp.pit_token.unwrap());
        put_tlv(&mut fields, FRAGMENT, &d.to_bytes());
        put_tlv(&mut out, LP_PACKET, &fields);
        self.0.send(&out).unwrap();
    }
}

/// Sends an Interest for `/acc/<n>` (lifetime 4 s) without waiting.
fn ask(c: &mut Client, n: &str) {
    let mut i = Interest::new(Name::from_uri("/acc").unwrap().with(Component::generic(n.as_bytes().to_vec())));
    i.nonce = Some(c.next_nonce());
    i.lifetime_ms = Some(4000);
    c.send(&i.to_bytes()).unwrap();
}

/// Whether the consumer's next packet (within 3 s) is Data.
fn got_data(c: &mut Client) -> bool {
    let Some(wire) = c.recv(Duration::from_secs(3)).unwrap() else { return false };
    let packet = LpPacketView::decode(&wire).ok().and_then(|lp| lp.fragment).map_or(wire.clone(), <[u8]>::to_vec);
    DataView::decode(&packet).is_ok()
}

#[test]
fn the_access_strategy_follows_the_upstream_that_answers() {
    follow_the_upstream_that_answers(1);
}

/// With two forwarding threads, each keeps its own measurements: `/acc` names all go to one of
/// them here (dispatch by the first component), whose ticks fire the timers.
#[test]
fn the_access_strategy_follows_the_upstream_that_answers_on_a_forwarding_thread() {
    follow_the_upstream_that_answers(2);
}

fn follow_the_upstream_that_answers(threads: usize) {
    let fw = Forwarder::start_with(&scratch(&format!("access-{threads}")), "s", threads, |c| c.forwarder.dispatch_components = 1);
    let (mut a, mut b) = (Upstream::register(&fw), Upstream::register(&fw));
    let mut operator = fw.client();
    let set = ControlParameters {
        name: Some(Name::from_uri("/acc").unwrap()),
        strategy: Some(Name::from_uri("/localhost/nfd/strategy/access").unwrap()),
        ..Default::default()
    };
    assert_eq!(operator.command("strategy-choice", "set", &set).unwrap().code, 200);
    let mut consumer = fw.client();

    // Nothing known: both upstreams get the first Interest; B answers.
    ask(&mut consumer, "0");
    let (_, to_b) = b.next(Duration::from_secs(2)).expect("B is asked");
    assert!(a.next(Duration::from_secs(2)).is_some(), "A is asked too");
    b.answer(&to_b);
    assert!(got_data(&mut consumer));
    // Now B alone.
    for n in 1..5 {
        ask(&mut consumer, &n.to_string());
        let (name, wire) = b.next(Duration::from_secs(2)).expect("B is asked");
        assert_eq!(name, n.to_string());
        b.answer(&wire);
        assert!(got_data(&mut consumer));
    }
    assert!(a.next(Duration::from_millis(200)).is_none(), "A is left alone while B answers");
    // B goes silent: past its RTO (at least 200 ms, plus a tick of 100 ms) A is asked, and
    // answers.
    let t0 = Instant::now();
    ask(&mut consumer, "5");
    assert!(b.next(Duration::from_secs(2)).is_some(), "B is asked first");
    let (name, wire) = a.next(Duration::from_secs(3)).expect("A is asked once B stays silent");
    assert_eq!(name, "5");
    assert!(t0.elapsed() >= Duration::from_millis(200), "not before the RTO: {:?}", t0.elapsed());
    a.answer(&wire);
    assert!(got_data(&mut consumer));
    // A answered: it is the upstream now.
    ask(&mut consumer, "6");
    let (name, wire) = a.next(Duration::from_secs(2)).expect("A is asked");
    assert_eq!(name, "6");
    a.answer(&wire);
    assert!(got_data(&mut consumer));
    assert!(b.next(Duration::from_millis(200)).is_none(), "B is left alone");
}
