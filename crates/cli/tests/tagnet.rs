//! TagNet on the wire, for real: five `nexthop run` TagNet routers in a tree, each in its own
//! network namespace, and six hosts running `nexthop tag` in theirs, over veth pairs this test
//! makes.
//!
//! ```text
//!            r0 (root) ── h5
//!           /   \
//!         r1     r2 ── h0
//!        /  \
//!      r3    r4
//!     /  \   |  \
//!    h1  h2  h3  h4
//! ```
//!
//! - Pushes from h5 reach every subscriber whose descriptor they match, exactly once, and no
//!   other; no host gets a packet it did not ask for.
//! - h1 withdraws its subscription: the pushes stop.
//! - The r1–r4 link is cut: h3 and h4 get nothing while the others still get theirs; restored,
//!   the tree heals and every subscriber gets its pushes again.
//! - Pulls: h0 serves {video hd}, h3 {video}; an interest for {video hd cats} is answered by
//!   h0 (the largest subset), one for {video sd} by h3; the data comes back by the consumer's
//!   locator and follow-ups by the producer's reach the same producer.
//! - A UDP tunnel: h5's second router link is a tunnel to r0 over IP, and a push through it
//!   reaches a subscriber.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use common::{eventually, namespaces, nexthop_in, Running};
use nexthop_io::netns::{veth, Netns};

mod common;

/// `nexthop tag ARGS` in `ns`, its stdout in `dir/<file>.out` and stderr in `.err`.
fn tag(ns: &Netns, dir: &Path, file: &str, args: &[&str]) -> (Child, PathBuf, PathBuf) {
    let (out, err) = (dir.join(format!("{file}.out")), dir.join(format!("{file}.err")));
    let child = Command::new("ip")
        .args(["netns", "exec", ns.name(), env!("CARGO_BIN_EXE_nexthop"), "tag"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    (child, out, err)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The pushes in a subscriber's output.
fn pushes(p: &Path) -> Vec<String> {
    read(p).lines().filter_map(|l| l.strip_prefix("push ")).map(str::to_string).collect()
}

/// Waits for a `nexthop tag` to end; its stdout, checked that it succeeded.
fn finished(mut c: Child, out: &Path, err: &Path) -> String {
    let status = c.wait().unwrap();
    assert!(status.success(), "nexthop tag failed: {}{}", read(out), read(err));
    read(out)
}

#[test]
fn five_tagnet_routers_carry_pushes_and_pulls_and_heal_a_cut_link() {
    let roles = ["r0", "r1", "r2", "r3", "r4", "h0", "h1", "h2", "h3", "h4", "h5"];
    let Some(ns) = namespaces("tg", &roles) else { return };
    let [r0, r1, r2, r3, r4, h0, h1, h2, h3, h4, h5] = &ns[..] else { unreachable!() };
    for (a, a_end, b, b_end) in [(r0, "r0r1", r1, "r1r0"), (r0, "r0r2", r2, "r2r0"), (r1, "r1r3", r3, "r3r1"), (r1, "r1r4", r4, "r4r1")] {
        veth(a, a_end, b, b_end, 1).unwrap();
    }
    for (h, r, port) in [(h0, r2, "r2h0"), (h1, r3, "r3h1"), (h2, r3, "r3h2"), (h3, r4, "r4h3"), (h4, r4, "r4h4"), (h5, r0, "r0h5")] {
        veth(h, "eth0", r, port, 1).unwrap();
    }
    // h5 also reaches r0 over IP, for a UDP tunnel.
    veth(h5, "ip0", r0, "r0ip", 1).unwrap();
    h5.ip(&["addr", "add", "10.9.0.2/24", "dev", "ip0"]).unwrap();
    r0.ip(&["addr", "add", "10.9.0.1/24", "dev", "r0ip"]).unwrap();

    let scratch = tempfile::Builder::new().prefix("nexthop-tagnet-").tempdir().unwrap();
    let dir = scratch.path();
    let router = |ns: &Netns, name: &str, interfaces: &[&str], extra: &str| {
        Running(nexthop_in(ns, dir, &format!("[tagnet]\nname = \"{name}\"\ninterfaces = {interfaces:?}\n{extra}")))
    };
    let _routers = [
        router(r0, "r0", &["r0r1", "r0r2", "r0h5"], "roots = [0]\ntunnels = [\"10.9.0.1:6464 10.9.0.2:6464\"]\n"),
        router(r1, "r1", &["r1r0", "r1r3", "r1r4"], ""),
        router(r2, "r2", &["r2r0", "r2h0"], ""),
        router(r3, "r3", &["r3r1", "r3h1", "r3h2"], ""),
        router(r4, "r4", &["r4r1", "r4h3", "r4h4"], ""),
    ];
    let log_of = |ns: &Netns| read(&dir.join(format!("{}.log", ns.name())));
    for r in [r0, r1, r2, r3, r4] {
        assert!(eventually(|| log_of(r).contains("nexthop: tagnet router")), "{}", log_of(r));
    }

    // Subscribers on h0..h4; h1 withdraws after 5 s.
    let subscriptions: [&[&str]; 5] = [&["news"], &["news sport"], &["weather"], &["news weather", "music"], &["sport"]];
    let hosts = [h0, h1, h2, h3, h4];
    let mut subscribers = Vec::new();
    for (i, (h, subs)) in hosts.iter().zip(subscriptions).enumerate() {
        let name = format!("h{i}");
        let mut args = vec!["subscribe", "-i", "eth0", "--name", &name, "--seconds", "16"];
        if i == 1 {
            args.extend(["--withdraw-after", "6"]);
        }
        args.extend(subs);
        subscribers.push(tag(h, dir, &name, &args));
    }
    for (_, out, err) in &subscribers {
        assert!(eventually(|| read(err).contains("on tree 0")), "{}{}", read(out), read(err));
    }
    // The subscriptions travel up a hop a tick (100 ms).
    std::thread::sleep(Duration::from_millis(1000));
    let publish = |link: &[&str], descriptors: &[&str], payload: &str| {
        let mut all = vec!["publish", "--name", "h5", "--payload", payload];
        all.extend(link);
        all.extend(descriptors);
        let (c, out, err) = tag(h5, dir, &format!("publish-{payload}"), &all);
        finished(c, &out, &err);
    };
    let topics = ["news", "news sport", "weather news", "music live", "sport news weather", "other"];
    let matches = |h: usize, topic: &str| {
        let t: Vec<&str> = topic.split(' ').collect();
        subscriptions[h].iter().any(|s| s.split(' ').all(|tag| t.contains(&tag)))
    };
    // Each topic's push, and what every subscriber must have got so far.
    let mut expected: Vec<Vec<String>> = vec![Vec::new(); 5];
    let round = |label: &str, reachable: &[usize], expected: &mut Vec<Vec<String>>| {
        publish(&["-i", "eth0"], &topics, label);
        for (k, topic) in topics.iter().enumerate() {
            for (h, e) in expected.iter_mut().enumerate() {
                if reachable.contains(&h) && matches(h, topic) {
                    e.push(format!("{label} #{k}"));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(300));
        for (h, (_, out, _)) in subscribers.iter().enumerate() {
            assert_eq!(pushes(out), expected[h], "h{h} after round {label}: {}", read(out));
        }
    };
    round("a", &[0, 1, 2, 3, 4], &mut expected);

    // h1 withdraws; its pushes stop.
    assert!(eventually(|| read(&subscribers[1].1).contains("withdrawn")));
    std::thread::sleep(Duration::from_millis(500));
    round("b", &[0, 2, 3, 4], &mut expected);

    // The r1–r4 link goes down: h3 and h4 are cut off; the rest still get theirs.
    r1.ip(&["link", "set", "r1r4", "down"]).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    round("c", &[0, 2], &mut expected);
    r1.ip(&["link", "set", "r1r4", "up"]).unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    round("d", &[0, 2, 3, 4], &mut expected);

    // The same through h5's UDP tunnel to r0.
    publish(&["--udp", "10.9.0.2:6464 10.9.0.1:6464"], &["sport"], "tunnelled");
    assert!(eventually(|| pushes(&subscribers[4].1).last().map(String::as_str) == Some("tunnelled")), "{}", read(&subscribers[4].1));

    for (c, out, err) in subscribers {
        let _ = finished(c, &out, &err);
        assert!(read(&err).contains(" 0 not for it"), "a host got a packet it did not ask for: {}", read(&err));
    }

    // Pulls: producers on h0 and h3.
    let producers =
        [tag(h0, dir, "serve-h0", &["serve", "-i", "eth0", "--name", "h0", "--payload", "from h0", "--seconds", "20", "video hd"])];
    let producers = [
        producers,
        [tag(h3, dir, "serve-h3", &["serve", "-i", "eth0", "--name", "h3", "--payload", "from h3", "--seconds", "20", "video"])],
    ];
    for [(_, out, err)] in &producers {
        assert!(eventually(|| read(err).contains("on tree 0")), "{}{}", read(out), read(err));
    }
    std::thread::sleep(Duration::from_millis(1000));
    for (consumer, name, asked, producer) in [(h5, "h5", "video hd cats", "h0"), (h2, "h2", "video sd", "h3"), (h4, "h4", "hd video", "h0")]
    {
        let (c, out, err) = tag(consumer, dir, &format!("get-{name}"), &["get", "-i", "eth0", "--name", name, "--follow-ups", "3", asked]);
        let got = finished(c, &out, &err);
        let answers: Vec<&str> = got.lines().collect();
        assert_eq!(answers.len(), 4, "{got}");
        let first = answers[0];
        assert!(first.starts_with(&format!("data from {producer} from 0:")), "{asked}: {got}");
        assert!(answers.iter().all(|a| *a == first), "follow-ups reach the same producer: {got}");
    }
    for [(c, _, _)] in producers {
        let mut c = c;
        let _ = c.kill();
        let _ = c.wait();
    }
}
