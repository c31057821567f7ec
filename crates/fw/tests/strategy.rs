//! Strategies on a running nexthop, chosen through management as an operator would
//! (`strategy-choice/set`): NFD's access strategy sends a prefix's Interests to the upstream
//! that last answered, and to the others once that one stays silent past its RTO (timers fired
//! by the forwarder's own ticks); NFD's ASF finds the faster of two upstreams by probing and
//! moves to it; NFD's random strategy spreads Interests over the upstreams.

use std::time::{Duration, Instant};

use common::{scratch, Forwarder};
use nexthop_fw::lp::encode::put_tlv;
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_tools::client::Client;
use nexthop_wire::types::{FRAGMENT, LP_PACKET, PIT_TOKEN};
use nexthop_wire::{Component, Data, DataView, Emit, Interest, InterestView, LpPacketView, Name};

mod common;

/// A producer of `/acc` (or another prefix) that answers only when told to.
struct Upstream(Client);

impl Upstream {
    fn register(fw: &Forwarder) -> Upstream {
        Upstream::register_at(fw, "/acc")
    }

    fn register_at(fw: &Forwarder, prefix: &str) -> Upstream {
        let mut c = fw.client();
        let p = ControlParameters { name: Some(Name::from_uri(prefix).unwrap()), ..Default::default() };
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
    ask_under(c, "/acc", n);
}

/// Sends an Interest for `<prefix>/<n>` (lifetime 4 s) without waiting.
fn ask_under(c: &mut Client, prefix: &str, n: &str) {
    let mut i = Interest::new(Name::from_uri(prefix).unwrap().with(Component::generic(n.as_bytes().to_vec())));
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
    let dir = scratch(&format!("access-{threads}"));
    let fw = Forwarder::start_with(&dir, "s", threads, |c| c.forwarder.dispatch_components = 1);
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
    // B goes silent: past its RTO (at least 200 ms, plus a tick of 10 ms) A is asked, and
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

/// Two upstreams of `/asf` at the same cost: the first registered answers in 150 ms, the
/// other at once. ASF starts with the first (unmeasured faces go by cost, then face id), probes
/// the other within 5 s of the first Interest, and from then on sends to the faster one, the
/// slower getting only the probes, one a second (`probing-interval~1000`).
#[test]
fn asf_moves_to_the_faster_upstream_it_probed() {
    let dir = scratch("asf");
    let fw = Forwarder::start_with(&dir, "s", 1, |_| {});
    let (mut slow, mut fast) = (Upstream::register_at(&fw, "/asf"), Upstream::register_at(&fw, "/asf"));
    let mut operator = fw.client();
    let asf = "/localhost/nfd/strategy/asf/v=5/probing-interval~1000";
    let set = ControlParameters {
        name: Some(Name::from_uri("/asf").unwrap()),
        strategy: Some(Name::from_uri(asf).unwrap()),
        ..Default::default()
    };
    let answer = operator.command("strategy-choice", "set", &set).unwrap();
    assert_eq!(answer.code, 200);
    assert_eq!(answer.body.unwrap().strategy.unwrap().to_string(), asf);
    let bad = ControlParameters { strategy: Some(Name::from_uri(&format!("{asf}/max-timeouts~0")).unwrap()), ..set.clone() };
    assert_eq!(operator.command("strategy-choice", "set", &bad).unwrap().code, 404, "a parameter out of range");

    let mut consumer = fw.client();
    // Which upstreams each Interest reached: (slow, fast).
    let mut reached: Vec<(bool, bool)> = Vec::new();
    let mut held: Vec<(Instant, Vec<u8>)> = Vec::new();
    let start = Instant::now();
    let mut fast_in_a_row = 0;
    for n in 0.. {
        assert!(start.elapsed() < Duration::from_secs(20), "ASF did not settle on the fast upstream: {reached:?}");
        ask_under(&mut consumer, "/asf", &n.to_string());
        reached.push((false, false));
        let asked = Instant::now();
        loop {
            assert!(asked.elapsed() < Duration::from_secs(3), "Interest {n} unanswered");
            while let Some((name, wire)) = fast.next(Duration::from_millis(1)) {
                let i: usize = name.parse().unwrap();
                reached[i].1 = true;
                fast.answer(&wire);
            }
            while let Some((name, wire)) = slow.next(Duration::from_millis(1)) {
                let i: usize = name.parse().unwrap();
                reached[i].0 = true;
                held.push((Instant::now() + Duration::from_millis(150), wire));
            }
            let now = Instant::now();
            for (_, wire) in held.iter().filter(|(due, _)| *due <= now) {
                slow.answer(wire);
            }
            held.retain(|(due, _)| *due > now);
            if consumer.recv(Duration::from_millis(1)).unwrap().is_some() {
                break;
            }
        }
        fast_in_a_row = if reached[n].1 { fast_in_a_row + 1 } else { 0 };
        if fast_in_a_row == 50 {
            break;
        }
    }
    assert_eq!(reached[0], (true, false), "the first Interest goes to the first registered upstream alone");
    let first_fast = reached.iter().position(|r| r.1).unwrap();
    assert!(reached[first_fast].0, "the fast upstream is first reached by a probe beside the slow one");
    let settled = &reached[reached.len() - 50..];
    let probes = settled.iter().filter(|r| r.0).count();
    assert!(probes <= 2, "the slow upstream gets only the probes once ASF has settled: {settled:?}");
}

/// A strategy chosen in the configuration is listed by `strategy-choice/list`, as one chosen
/// through management is.
#[test]
fn configured_strategies_are_listed() {
    use nexthop_fw::conf::config::StaticStrategy;
    let dir = scratch("configured-strategies");
    let fw = Forwarder::start_with(&dir, "s", 1, |c| {
        c.strategy.push(StaticStrategy { prefix: "/lan".into(), strategy: "self-learning".into() });
        c.strategy.push(StaticStrategy { prefix: "/x".into(), strategy: "/localhost/nfd/strategy/asf/v=5/max-timeouts~2".into() });
        c.strategy.push(StaticStrategy { prefix: "/y".into(), strategy: format!("best-route/v=5/{RETX}") });
    });
    let list = fw.client().dataset("/localhost/nfd/strategy-choice/list").unwrap();
    let listed = |prefix: &str, strategy: &str| {
        let (p, s) = (Name::from_uri(prefix).unwrap(), Name::from_uri(strategy).unwrap());
        list.windows(p.value().len()).any(|w| w == p.value()) && list.windows(s.value().len()).any(|w| w == s.value())
    };
    assert!(listed("/lan", "/localhost/nfd/strategy/self-learning"));
    assert!(listed("/x", "/localhost/nfd/strategy/asf/v=5/max-timeouts~2"));
    assert!(listed("/y", &format!("/localhost/nfd/strategy/best-route/v=5/{RETX}")));
}

/// Retransmission suppression's parameters, as NFD's best-route, multicast and ASF take them.
const RETX: &str = "retx-suppression-initial~20/retx-suppression-max~500/retx-suppression-multiplier~1.5";

/// NFD's random strategy (chosen as nfdc names it, `random`): each Interest goes to one of the
/// two upstreams of `/rnd`, picked at random — both get a share, every Interest exactly one.
#[test]
fn the_random_strategy_spreads_interests_over_the_upstreams() {
    let dir = scratch("random");
    let fw = Forwarder::start(&dir, "s", 1);
    let (mut a, mut b) = (Upstream::register_at(&fw, "/rnd"), Upstream::register_at(&fw, "/rnd"));
    let set = ControlParameters {
        name: Some(Name::from_uri("/rnd").unwrap()),
        strategy: Some(Name::from_uri("/localhost/nfd/strategy/random").unwrap()),
        ..Default::default()
    };
    let r = fw.client().command("strategy-choice", "set", &set).unwrap();
    assert_eq!(r.code, 200, "{}", r.text);
    let mut consumer = fw.client();
    const N: usize = 200;
    for n in 0..N {
        ask_under(&mut consumer, "/rnd", &n.to_string());
    }
    // What each upstream got, until it has been quiet for 300 ms; each answers what it got.
    let take = |up: &mut Upstream| {
        let mut names = std::collections::BTreeSet::new();
        while let Some((name, wire)) = up.next(Duration::from_millis(300)) {
            up.answer(&wire);
            names.insert(name.parse::<usize>().unwrap());
        }
        names
    };
    let (at_a, at_b) = (take(&mut a), take(&mut b));
    assert!(at_a.is_disjoint(&at_b), "an Interest went to both");
    assert_eq!(at_a.len() + at_b.len(), N, "every Interest went to one upstream");
    let answered = (0..N).filter(|_| got_data(&mut consumer)).count();
    assert_eq!(answered, N);
    let (to_a, to_b) = (at_a.len(), at_b.len());
    assert!(to_a >= 60 && to_b >= 60, "A {to_a}, B {to_b}");
}
