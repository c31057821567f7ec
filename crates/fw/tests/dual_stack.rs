//! One listener for both IP versions, where NFD has a channel for each: a forwarder whose UDP
//! and TCP listeners are `[::]` (the default) serves an IPv4 producer and an IPv6 consumer, and
//! the reverse, through the same sockets. `faces/list` names each peer by its own family
//! (`udp4://127.0.0.1:…`, `udp6://[::1]:…`), with the listener's address of that family as the
//! local end, and a TCP peer on loopback is local in scope whichever family it came by (a UDP
//! face never is, as in NFD); `faces/channels` lists the IPv4 and the IPv6 channels.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{scratch, Forwarder};
use nexthop_fw::face::uri::FaceUri;
use nexthop_tools::client::Client;
use nexthop_tools::traffic;
use nexthop_wire::tlv::TlvReader;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::Name;

mod common;

/// (remote URI, local URI, FaceScope) of every face `faces/list` shows.
fn faces(fw: &Forwarder) -> Vec<(String, String, u64)> {
    let list = fw.client().dataset("/localhost/nfd/faces/list").unwrap();
    TlvReader::new(&list)
        .map(Result::unwrap)
        .map(|f| {
            let fields: Vec<_> = TlvReader::new(f.value).map(Result::unwrap).collect();
            let text = |ty| fields.iter().find(|t| t.ty == ty).map(|t| String::from_utf8_lossy(t.value).into_owned()).unwrap();
            let scope = fields.iter().find(|t| t.ty == 0x84).map(|t| read_nonneg(t.ty, t.value).unwrap()).unwrap();
            (text(0x72), text(0x81), scope)
        })
        .collect()
}

#[test]
fn one_dual_stack_listener_serves_ipv4_and_ipv6_peers() {
    let dir = scratch("dual-stack");
    let tcp_port = std::net::TcpListener::bind("[::]:0").map(|l| l.local_addr().unwrap().port());
    let Ok(tcp_port) = tcp_port else {
        eprintln!("this host has no IPv6: nothing to test");
        return;
    };
    let fw = Forwarder::start_with(dir.path(), "dual", 1, |cfg| {
        cfg.faces.udp = "[::]:0".into();
        cfg.faces.tcp = format!("[::]:{tcp_port}");
    });
    assert!(fw.udp.is_ipv6() && fw.udp.ip().is_unspecified(), "{}", fw.udp);
    let port = fw.udp.port();
    let udp4 = FaceUri::Udp(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    let udp6 = FaceUri::Udp(SocketAddr::from((Ipv6Addr::LOCALHOST, port)));
    let tcp4 = FaceUri::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, tcp_port)));
    let tcp6 = FaceUri::Tcp(SocketAddr::from((Ipv6Addr::LOCALHOST, tcp_port)));

    // The producer's UDP face is made by faces/create (udp4:// or udp6://), the consumer's on
    // demand when its first datagram arrives; TCP faces are accepted connections.
    for (producer_at, consumer_at, prefix) in
        [(&udp4, &udp6, "/dual/a"), (&udp6, &udp4, "/dual/b"), (&tcp4, &udp6, "/dual/c"), (&tcp6, &tcp4, "/dual/d")]
    {
        let prefix = Name::from_uri(prefix).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let producer = traffic::start_producer(producer_at, &fw.unix(), &prefix, 100, stop.clone()).unwrap();
        let r = traffic::run_consumer(consumer_at, &prefix, 8, 100, Duration::from_millis(300)).unwrap();
        stop.store(true, Ordering::Relaxed);
        producer.join().unwrap();
        assert!(r.satisfied > 50, "{producer_at} → {consumer_at}: {r:?}");
        assert_eq!((r.nacks, r.lost, r.mismatches), (0, 0, 0), "{producer_at} → {consumer_at}");
    }

    // The producers' faces went with them, TCP faces with their connections: two clients stay
    // connected over TCP while the faces are listed (their faces show up once accepted).
    let _tcp_clients = [Client::connect(&tcp4).unwrap(), Client::connect(&tcp6).unwrap()];
    let mut listed = faces(&fw);
    for _ in 0..100 {
        if listed.iter().filter(|(uri, _, _)| uri.starts_with("tcp")).count() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        listed = faces(&fw);
    }
    let with = |scheme: &str| listed.iter().filter(|(uri, _, _)| uri.starts_with(scheme)).collect::<Vec<_>>();
    // (scheme, local URI, FaceScope: 1 local, 0 non-local)
    for (scheme, local, want_scope) in [
        ("udp4://127.0.0.1:", format!("udp4://0.0.0.0:{port}"), 0),
        ("udp6://[::1]:", format!("udp6://[::]:{port}"), 0),
        ("tcp4://127.0.0.1:", format!("tcp4://127.0.0.1:{tcp_port}"), 1),
        ("tcp6://[::1]:", format!("tcp6://[::1]:{tcp_port}"), 1),
    ] {
        let faces = with(scheme);
        assert!(!faces.is_empty(), "no {scheme} face: {listed:#?}");
        for (uri, l, scope) in faces {
            assert_eq!(*l, local, "{uri}");
            assert_eq!(*scope, want_scope, "{uri}");
        }
    }
    assert!(listed.iter().all(|(uri, _, _)| !uri.contains("::ffff:")), "{listed:#?}");

    let channels = String::from_utf8_lossy(&fw.client().dataset("/localhost/nfd/faces/channels").unwrap()).into_owned();
    for channel in [format!("udp4://0.0.0.0:{port}"), format!("udp6://[::]:{port}"), format!("tcp4://0.0.0.0:{tcp_port}")] {
        assert!(channels.contains(&channel), "{channel} in {channels:?}");
    }
}
