//! An idle forwarder sleeps: with no packet for a second and nothing pending, its loop stops
//! ticking every 10 ms and wakes about once a second (as an NFD with nothing to do sleeps);
//! a pending Interest brings the ticks back, so its PIT entry still expires on time; and a
//! stop wakes it at once.

use std::time::{Duration, Instant};

use common::{scratch, Forwarder};
use nexthop_fw::mgmt::params::ControlParameters;
use nexthop_wire::{Emit, Interest, Name};

mod common;

/// Voluntary context switches of every thread of this process (each wait in `epoll_wait` that
/// times out is one).
fn voluntary_switches() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("status")).ok())
        .filter_map(|s| s.lines().find_map(|l| l.strip_prefix("voluntary_ctxt_switches:").map(|n| n.trim().parse::<u64>().unwrap())))
        .sum()
}

#[test]
fn an_idle_forwarder_sleeps_until_there_is_work() {
    let dir = scratch("idle");
    let fw = Forwarder::start(&dir, "s", 1);
    std::thread::sleep(Duration::from_millis(1500));
    let before = voluntary_switches();
    std::thread::sleep(Duration::from_secs(2));
    let woke = voluntary_switches() - before;
    assert!(woke < 40, "{woke} wake-ups in 2 s of idling (ticking every 10 ms would be about 200)");

    // A pending Interest (to a producer that never answers), living longer than the second
    // of ticks its arrival brings: its entry expires with its lifetime, give or take a tick,
    // not up to a second later — so the same name asked for again 200 ms after that is a new
    // entry, forwarded, not one aggregated into the old. (Nothing talks to the forwarder in
    // between: a dataset request would wake it.)
    let mut silent = fw.client();
    let r = silent
        .command("rib", "register", &ControlParameters { name: Some(Name::from_uri("/silent").unwrap()), ..Default::default() })
        .unwrap();
    assert_eq!(r.code, 200);
    // (Both consumers connected now: a connection accepted later would be a turn of its own,
    // whose tick would expire the entry before the second Interest is read.)
    let (mut first, mut second) = (fw.client(), fw.client());
    std::thread::sleep(Duration::from_millis(1500)); // idle again
    let ask = |consumer: &mut nexthop_tools::client::Client, lifetime_ms: u64| {
        let mut i = Interest::new(Name::from_uri("/silent/x").unwrap());
        (i.nonce, i.lifetime_ms) = (Some(consumer.next_nonce()), Some(lifetime_ms));
        consumer.send(&i.to_bytes()).unwrap();
    };
    ask(&mut first, 1500);
    assert!(silent.recv(Duration::from_secs(2)).unwrap().is_some(), "the Interest reached the producer");
    std::thread::sleep(Duration::from_millis(1700));
    ask(&mut second, 1000);
    assert!(silent.recv(Duration::from_millis(500)).unwrap().is_some(), "the first entry had expired: the second is forwarded");

    // Idle again, a stop is prompt.
    std::thread::sleep(Duration::from_millis(1500));
    let t0 = Instant::now();
    drop(fw);
    assert!(t0.elapsed() < Duration::from_millis(500), "stopped in {:?}", t0.elapsed());
}
