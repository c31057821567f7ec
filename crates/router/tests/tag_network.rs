//! TagNet routers and hosts, sans-I/O, on a simulated network of point-to-point links: five
//! routers in a tree, six hosts. Every frame goes through its bytes, as on a wire.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use nexthop_lookup::tag::{Address, Descriptor, DescriptorFib, Fanout};
use nexthop_router::tag::host::{Received, TagHost};
use nexthop_router::tag::message::Role;
use nexthop_router::tag::packet::{self, ether_header, Kind};
use nexthop_router::tag::router::{Decision, DropReason, TagRouter};
use nexthop_router::tag::tree::TICK;

enum Node {
    Router(TagRouter),
    Host(TagHost, Vec<Received>),
}

/// A link: (node, port) ↔ (node, port), up or not.
type Link = ((usize, usize), (usize, usize), bool);

struct Net {
    nodes: Vec<Node>,
    links: Vec<Link>,
    now: Instant,
    in_flight: VecDeque<(usize, usize, Vec<u8>)>,
    /// Frames a router sent out of a port with nobody behind it.
    lost: u64,
}

const ROUTERS: usize = 5;

impl Net {
    /// r0 (root) – r1, r0 – r2, r1 – r3, r1 – r4; hosts h0..h5 on r2, r3, r3, r4, r4, r0.
    fn five_routers() -> Net {
        let edges = [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (3, 6), (3, 7), (4, 8), (4, 9), (0, 10)];
        let mut ports = [0usize; 11];
        let mut links = Vec::new();
        for (a, b) in edges {
            links.push(((a, ports[a]), (b, ports[b]), true));
            ports[a] += 1;
            ports[b] += 1;
        }
        let nodes = (0..11)
            .map(|i| {
                if i < ROUTERS {
                    let roots: &[u16] = if i == 0 { &[0] } else { &[] };
                    Node::Router(TagRouter::new(&format!("r{i}"), ports[i], roots, DescriptorFib::new()).unwrap())
                } else {
                    Node::Host(TagHost::new(0, &format!("h{}", i - ROUTERS)), Vec::new())
                }
            })
            .collect();
        Net { nodes, links, now: Instant::now(), in_flight: VecDeque::new(), lost: 0 }
    }

    fn host(&mut self, h: usize) -> &mut TagHost {
        match &mut self.nodes[ROUTERS + h] {
            Node::Host(host, _) => host,
            Node::Router(_) => unreachable!(),
        }
    }

    fn router(&self, r: usize) -> &TagRouter {
        match &self.nodes[r] {
            Node::Router(router) => router,
            Node::Host(..) => unreachable!(),
        }
    }

    /// What host `h` received since last asked.
    fn received(&mut self, h: usize) -> Vec<Received> {
        match &mut self.nodes[ROUTERS + h] {
            Node::Host(_, got) => std::mem::take(got),
            Node::Router(_) => unreachable!(),
        }
    }

    fn peer(&self, node: usize, port: usize) -> Option<(usize, usize)> {
        self.links.iter().find_map(|&(a, b, up)| match up {
            true if a == (node, port) => Some(b),
            true if b == (node, port) => Some(a),
            _ => None,
        })
    }

    fn send(&mut self, node: usize, port: usize, frame: Vec<u8>) {
        match self.peer(node, port) {
            Some((to, to_port)) => self.in_flight.push_back((to, to_port, frame)),
            None => self.lost += 1,
        }
    }

    /// Host `h` sends a TagNet packet.
    fn host_sends(&mut self, h: usize, packet: Vec<u8>) {
        let mut frame = ether_header([2, 0, 0, 0, 0, h as u8]);
        frame.extend_from_slice(&packet);
        self.send(ROUTERS + h, 0, frame);
        self.drain();
    }

    /// Every frame in flight delivered, and what it causes.
    fn drain(&mut self) {
        let mut steps = 0;
        while let Some((to, port, frame)) = self.in_flight.pop_front() {
            steps += 1;
            assert!(steps < 100_000, "frames loop");
            let now = self.now;
            match &mut self.nodes[to] {
                Node::Router(r) => {
                    let mut batch = [frame];
                    let mut out = Vec::new();
                    r.route_batch(now, &mut batch[..], |_| port, &mut out);
                    if let Decision::Out(mask) = out[0] {
                        for p in (0..64).filter(|p| mask >> p & 1 == 1) {
                            self.send(to, p, batch[0].clone());
                        }
                    }
                }
                Node::Host(h, got) => {
                    if let Some(r) = h.receive(now, packet::in_frame(&frame).unwrap()) {
                        got.push(r);
                    }
                }
            }
        }
    }

    /// One tick: everyone's control plane, and every message it sends delivered.
    fn tick(&mut self) {
        self.now += TICK;
        let now = self.now;
        for i in 0..self.nodes.len() {
            let sent: Vec<(usize, Vec<u8>)> = match &mut self.nodes[i] {
                Node::Router(r) => {
                    r.maintain(now).unwrap();
                    r.take_outbox()
                }
                Node::Host(h, _) => {
                    h.maintain(now);
                    h.take_outbox().into_iter().map(|b| (0, b)).collect()
                }
            };
            for (port, bytes) in sent {
                let mut frame = ether_header([2, 0, 0, 0, 1, i as u8]);
                frame.extend_from_slice(&bytes);
                self.send(i, port, frame);
            }
        }
        self.drain();
    }

    fn run(&mut self, ticks: usize) {
        for _ in 0..ticks {
            self.tick();
        }
    }

    fn not_mine(&mut self) -> u64 {
        (0..6).map(|h| self.host(h).counters.not_mine).sum()
    }
}

fn d(tags: &[&str]) -> Descriptor {
    Descriptor::from_tags(tags).unwrap()
}

/// Each host's subscriptions: hosts 1 and 2 share r3, hosts 3 and 4 share r4.
fn subscriptions() -> [Vec<Descriptor>; 6] {
    [
        vec![d(&["news"])],
        vec![d(&["news", "sport"])],
        vec![d(&["weather"])],
        vec![d(&["news", "weather"]), d(&["music"])],
        vec![d(&["sport"])],
        vec![],
    ]
}

/// Every publisher's pushes reach every host whose subscriptions match, exactly once, and no
/// other — never the publisher itself.
fn check_pushes(net: &mut Net, hosts: &[usize]) {
    let subs = subscriptions();
    let topics: [&[&str]; 6] =
        [&["news"], &["news", "sport"], &["weather", "news"], &["music", "live"], &["sport", "news", "weather"], &["other"]];
    for &publisher in hosts {
        for topic in topics {
            let descriptor = d(topic);
            let payload = format!("{publisher}:{topic:?}");
            let push = net.host(publisher).push(descriptor, Fanout::ALL, payload.as_bytes()).unwrap();
            net.host_sends(publisher, push);
            for &h in hosts {
                let got: Vec<Received> = net.received(h);
                let wanted = h != publisher && subs[h].iter().any(|s| s.is_subset_of(&descriptor));
                let copies = got.iter().filter(|r| r.kind == Kind::Push && r.payload == payload.as_bytes()).count();
                assert_eq!(copies, usize::from(wanted), "host {h}, push {payload}");
                assert_eq!(got.len(), copies);
            }
        }
    }
    assert_eq!(net.not_mine(), 0, "no host got a packet it did not ask for");
}

fn converged() -> Net {
    let mut net = Net::five_routers();
    for (h, s) in subscriptions().into_iter().enumerate() {
        net.host(h).subscribe(s);
    }
    net.run(12);
    for h in 0..6 {
        assert!(net.host(h).locator().is_some(), "host {h} labelled");
    }
    net
}

#[test]
fn pushes_reach_exactly_the_matching_subscribers() {
    let mut net = converged();
    check_pushes(&mut net, &[0, 1, 2, 3, 4, 5]);
    // Aggregation: r3 passes up {news} and {weather} (not {news, sport}), r4 {news, weather},
    // {music} and {sport}; r1 passes up {news}, {weather}, {music}, {sport}, and r0 gets {news}
    // from h0's side too: 4 descriptors.
    let subscriptions = |net: &Net, r| net.router(r).table(Role::Subscribe).len();
    assert_eq!((subscriptions(&net, 1), subscriptions(&net, 0)), (5, 4));
}

#[test]
fn pulls_reach_the_largest_subset_and_replies_come_back_by_locator() {
    let mut net = converged();
    // Two producers: h3 serves {video}, h0 serves {video, hd}; h5 and h1 ask.
    net.host(3).serve(vec![d(&["video"])]);
    net.host(0).serve(vec![d(&["video", "hd"])]);
    net.run(4);
    for (consumer, asked, producer) in
        [(5usize, &["video", "hd", "cats"][..], 0usize), (1, &["video", "sd"][..], 3), (4, &["video", "hd"][..], 0)]
    {
        let interest = net.host(consumer).interest(d(asked), b"first").unwrap();
        net.host_sends(consumer, interest);
        let got = net.received(producer);
        assert_eq!(got.len(), 1, "{asked:?}: one producer, the largest subset's");
        assert_eq!(got[0].kind, Kind::Interest);
        let back = got[0].reply.expect("the consumer's locator");
        assert_eq!(Some(back), net.host(consumer).locator());
        // The data by the consumer's locator, carrying the producer's.
        let data = net.host(producer).data(back, format!("from h{producer}").as_bytes()).unwrap();
        net.host_sends(producer, data);
        let got = net.received(consumer);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].kind, &got[0].payload[..]), (Kind::Data, format!("from h{producer}").as_bytes()));
        let at = got[0].reply.expect("the producer's locator");
        // Follow-ups by locator reach the same producer.
        for i in 0..5 {
            let follow = net.host(consumer).interest_to(at, format!("next {i}").as_bytes()).unwrap();
            net.host_sends(consumer, follow);
            let got = net.received(producer);
            assert_eq!(got.len(), 1);
            assert!(matches!(got[0].address, Address::Locator { .. }));
        }
        for h in 0..6 {
            assert!(net.received(h).is_empty(), "nobody else got anything");
        }
    }
    assert_eq!(net.not_mine(), 0);
}

#[test]
fn a_withdrawn_subscription_stops_deliveries() {
    let mut net = converged();
    net.host(1).subscribe(vec![]);
    net.run(3);
    let push = net.host(5).push(d(&["news", "sport"]), Fanout::ALL, b"x").unwrap();
    net.host_sends(5, push);
    assert!(net.received(1).is_empty());
    assert_eq!(net.received(0).len(), 1, "h0 still subscribes to news");
}

#[test]
fn a_cut_link_is_recovered_from() {
    let mut net = converged();
    net.links[3].2 = false; // r1–r4: h3, h4 cut off
    net.run(8);
    assert!(net.host(3).locator().is_none());
    // The others still get their pushes.
    check_pushes(&mut net, &[0, 1, 2, 5]);
    net.links[3].2 = true;
    net.run(10);
    check_pushes(&mut net, &[0, 1, 2, 3, 4, 5]);
}

#[test]
fn bad_frames_are_counted_drops_and_nothing_panics() {
    let mut net = converged();
    let Node::Router(r) = &mut net.nodes[1] else { unreachable!() };
    let now = Instant::now() + Duration::from_secs(5);
    let good = {
        let h = TagHost::new(0, "x");
        let mut f = ether_header([2; 6]);
        f.extend_from_slice(&h.push(d(&["a"]), Fanout::ALL, b"payload").unwrap());
        f
    };
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for cut in 14..good.len() - 7 {
        frames.push(good[..cut].to_vec());
    }
    let mut zero_fanout = good.clone();
    zero_fanout[15] = 0;
    let mut ttl = good.clone();
    ttl[14 + 28 + 1] = 1;
    let mut other_tree = good.clone();
    other_tree[16] = 9;
    frames.extend([zero_fanout, ttl, other_tree, vec![0; 60]]);
    let mut rng = 0x1234_5678_9abc_def0u64;
    for _ in 0..2000 {
        let mut f = good.clone();
        for _ in 0..4 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let at = 14 + (rng as usize) % (f.len() - 14);
            f[at] = (rng >> 32) as u8;
        }
        frames.push(f);
    }
    let mut out = Vec::new();
    let before = r.counters.clone();
    r.route_batch(now, &mut frames[..], |_| 0, &mut out);
    assert_eq!(out.len(), frames.len());
    let c = &r.counters;
    assert!(c.dropped(DropReason::Truncated) > before.dropped(DropReason::Truncated));
    assert!(c.dropped(DropReason::ZeroFanout) > 0 && c.dropped(DropReason::Ttl) > 0 && c.dropped(DropReason::UnknownTree) > 0);
    assert!(c.dropped(DropReason::NotTagNet) > 0);
}
