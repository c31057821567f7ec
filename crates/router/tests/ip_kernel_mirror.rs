//! The kernel as control plane, for real: in a network namespace this test makes, routes and
//! neighbours set with `ip` reach the pipeline through rtnetlink (the dump at start, then the
//! notifications), and the pipeline forwards by them.

use std::net::IpAddr;
use std::time::{Duration, Instant};

mod common;

use common::v4_frame;
use netlink_packet_route::RouteNetlinkMessage;
use nexthop_io::netns::Netns;
use nexthop_router::ip::mirror::{Change, Mirror};
use nexthop_router::ip::netlink::{KernelTables, Received, RouteWriter};
use nexthop_router::ip::{Decision, Fib, IpRouter, Port, Prefix, Punt, Via};

fn ifindex(ns: &Netns, dev: &str) -> u32 {
    let out = ns.exec(&["ip", "-o", "link", "show", dev]).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.split(':').next().unwrap().trim().parse().unwrap_or_else(|_| panic!("ifindex of {dev}: {text}"))
}

/// A packet from h1 (10.0.1.2) to `dst`.
fn frame_to(dst: [u8; 4]) -> Vec<u8> {
    v4_frame(0x0a00_0102, u32::from_be_bytes(dst), 64, 20, 8)
}

/// Reads notifications into the router until `done` holds of it (or 5 s pass).
fn until(tables: &mut KernelTables, mirror: &mut Mirror, router: &mut IpRouter, mut done: impl FnMut(&mut IpRouter) -> bool) -> bool {
    let start = Instant::now();
    let (mut msgs, mut changes) = (Vec::<RouteNetlinkMessage>::new(), Vec::<Change>::new());
    while start.elapsed() < Duration::from_secs(5) {
        msgs.clear();
        assert_eq!(tables.receive(&mut msgs).unwrap(), Received::Messages);
        changes.clear();
        for m in &msgs {
            mirror.apply(m, &mut changes);
        }
        for c in &changes {
            let _ = router.apply(*c);
        }
        if !tables.dumping() && done(router) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn routes_and_neighbours_set_with_ip_reach_the_pipeline() {
    let Some(ns) = Netns::for_test(&format!("nh-mirror-{}", std::process::id() % 100_000)) else { return };
    for args in [
        &["link", "add", "m0", "type", "veth", "peer", "name", "m1"][..],
        &["link", "set", "m0", "up"],
        &["link", "set", "m1", "up"],
        &["addr", "add", "10.0.1.1/24", "dev", "m0"],
        &["addr", "add", "10.0.2.1/24", "dev", "m1"],
        &["route", "add", "192.0.2.0/24", "via", "10.0.1.2", "dev", "m0"],
        &["neigh", "add", "10.0.1.2", "lladdr", "02:00:00:00:00:09", "dev", "m0", "nud", "permanent"],
    ] {
        ns.ip(args).unwrap();
    }
    let (m0, m1) = (ifindex(&ns, "m0"), ifindex(&ns, "m1"));
    let name = ns.name().to_string();
    let ns_ip = |args: &[&str]| ns.ip(args).unwrap();
    std::thread::scope(|s| {
        let (to_test, from_test) = std::sync::mpsc::channel::<&str>();
        let (to_ip, wait_ip) = std::sync::mpsc::channel::<()>();
        let mirror_side = s.spawn(move || {
            nexthop_io::netns::enter(&name).unwrap();
            let mut tables = KernelTables::open().unwrap();
            let mut mirror = Mirror::new();
            mirror.set_port(m0, Port(0));
            mirror.set_port(m1, Port(1));
            let mut router = IpRouter::new(Fib::new());
            router.neighbours_mut().set_port(Port(0), [2, 0, 0, 0, 0, 1]);
            router.neighbours_mut().set_port(Port(1), [2, 0, 0, 0, 0, 2]);
            tables.dump().unwrap();
            // The dump: the gateway route, the local and connected routes, the neighbour.
            assert!(
                until(&mut tables, &mut mirror, &mut router, |r| r.fib().lookup_v4(u32::from_be_bytes([192, 0, 2, 7]))
                    == Some(Via::Gateway { port: Port(0), addr: IpAddr::from([10, 0, 1, 2]) })),
                "the dumped route"
            );
            assert_eq!(router.fib().lookup_v4(u32::from_be_bytes([10, 0, 1, 1])), Some(Via::Local));
            assert_eq!(router.fib().lookup_v4(u32::from_be_bytes([10, 0, 2, 9])), Some(Via::Connected(Port(1))));
            let mut f = frame_to([192, 0, 2, 7]);
            assert_eq!(router.route(&mut f), Decision::Transmit(Port(0)));
            assert_eq!(&f[0..6], &[2, 0, 0, 0, 0, 9], "the neighbour's address");
            // A route replaced while running.
            to_test.send("replace").unwrap();
            wait_ip.recv().unwrap();
            assert!(
                until(&mut tables, &mut mirror, &mut router, |r| r.fib().lookup_v4(u32::from_be_bytes([192, 0, 2, 7]))
                    == Some(Via::Connected(Port(1)))),
                "the replaced route"
            );
            assert_eq!(
                router.route(&mut frame_to([192, 0, 2, 7])),
                Decision::Kernel(Punt::NoNeighbour),
                "no neighbour 192.0.2.7 on m1 yet"
            );
            // A neighbour learned, then deleted.
            to_test.send("neighbour").unwrap();
            wait_ip.recv().unwrap();
            assert!(
                until(&mut tables, &mut mirror, &mut router, |r| r.route(&mut frame_to([192, 0, 2, 7])) == Decision::Transmit(Port(1))),
                "the neighbour"
            );
            to_test.send("forget").unwrap();
            wait_ip.recv().unwrap();
            assert!(
                until(&mut tables, &mut mirror, &mut router, |r| r.route(&mut frame_to([192, 0, 2, 7]))
                    == Decision::Kernel(Punt::NoNeighbour)),
                "the neighbour deleted"
            );
            to_test.send("delete").unwrap();
            wait_ip.recv().unwrap();
            assert!(
                until(&mut tables, &mut mirror, &mut router, |r| r.fib().lookup_v4(u32::from_be_bytes([192, 0, 2, 7])).is_none()),
                "the route deleted"
            );
            to_test.send("end").unwrap();
        });
        for step in from_test.iter() {
            match step {
                "replace" => ns_ip(&["route", "replace", "192.0.2.0/24", "dev", "m1"]),
                "neighbour" => ns_ip(&["neigh", "add", "192.0.2.7", "lladdr", "02:00:00:00:00:0a", "dev", "m1", "nud", "reachable"]),
                "forget" => ns_ip(&["neigh", "del", "192.0.2.7", "dev", "m1"]),
                "delete" => ns_ip(&["route", "del", "192.0.2.0/24", "dev", "m1"]),
                _ => break,
            }
            to_ip.send(()).unwrap();
        }
        mirror_side.join().unwrap();
    });
}

/// A daemon's bulk writes ([`RouteWriter`]): 20,000 routes in one call reach the kernel (a
/// route through an unreachable gateway is refused and counted) and, through its
/// notifications, the mirror; written again through another gateway, every one is replaced.
#[test]
fn routes_written_in_bulk_reach_the_kernel_and_the_mirror() {
    let Some(ns) = Netns::for_test(&format!("nh-bulk-{}", std::process::id() % 100_000)) else { return };
    for args in [
        &["link", "add", "m0", "type", "veth", "peer", "name", "m1"][..],
        &["link", "set", "m0", "up"],
        &["link", "set", "m1", "up"],
        &["addr", "add", "10.0.1.1/24", "dev", "m0"],
    ] {
        ns.ip(args).unwrap();
    }
    let m0 = ifindex(&ns, "m0");
    let name = ns.name().to_string();
    let routes = |gateway: [u8; 4]| -> Vec<(Prefix, IpAddr)> {
        (0..20_000u32).map(|i| (Prefix::V4 { addr: 0x2000_0000 | i << 8, len: 24 }, IpAddr::from(gateway))).collect()
    };
    std::thread::spawn(move || {
        nexthop_io::netns::enter(&name).unwrap();
        let mut tables = KernelTables::open().unwrap();
        let mut mirror = Mirror::new();
        mirror.set_port(m0, Port(0));
        let mut router = IpRouter::new(Fib::new());
        tables.dump().unwrap();
        let mut writer = RouteWriter::open().unwrap();
        let mut first = routes([10, 0, 1, 2]);
        first.push((Prefix::V4 { addr: 0xc633_6400, len: 24 }, IpAddr::from([10, 9, 9, 9])));
        assert_eq!(writer.replace(&first).unwrap(), 1, "the route through an unreachable gateway is refused");
        let via = |last: u8| Some(Via::Gateway { port: Port(0), addr: IpAddr::from([10, 0, 1, last]) });
        let all_via = |r: &mut IpRouter, last: u8| (0..20_000u32).all(|i| r.fib().lookup_v4(0x2000_0007 | i << 8) == via(last));
        assert!(until(&mut tables, &mut mirror, &mut router, |r| all_via(r, 2)), "every route written reached the mirror");
        assert_eq!(writer.replace(&routes([10, 0, 1, 3])).unwrap(), 0);
        assert!(until(&mut tables, &mut mirror, &mut router, |r| all_via(r, 3)), "every route replaced");
    })
    .join()
    .unwrap();
    let out = ns.exec(&["ip", "-4", "route", "show", "via", "10.0.1.3"]).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 20_000, "the kernel holds the routes, replaced");
}
