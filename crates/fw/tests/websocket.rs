//! WebSocket faces with nexthop's own client (the traffic generator's): its consumer fetches
//! over a WebSocket from a producer on the Unix socket, every Data checked; a connection that
//! does not speak WebSocket is closed and the listener goes on. (NDNts's `WsTransport` crosses
//! the same faces in `ndnts.rs`.)

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{scratch, Forwarder};
use nexthop_fw::face::uri::FaceUri;
use nexthop_tools::traffic;
use nexthop_wire::Name;

mod common;

#[test]
fn the_generators_consumer_fetches_over_a_websocket() {
    let dir = scratch("websocket");
    let fw = Forwarder::start(&dir, "fw", 1);
    let ws = FaceUri::WebSocket(fw.websocket);
    // Not WebSocket: the face closes (EOF), nothing else happens.
    let mut junk = std::net::TcpStream::connect(fw.websocket).unwrap();
    junk.write_all(b"\x05\x03\x07\x01\x08\r\n\r\n").unwrap();
    junk.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(junk.read(&mut [0; 16]).unwrap(), 0, "closed");

    let prefix = Name::from_uri("/ws").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let producer = traffic::start_producer(&fw.unix(), &fw.unix(), &prefix, 3000, stop.clone()).unwrap();
    let r = traffic::run_consumer(&ws, &prefix, 32, 3000, Duration::from_millis(500)).unwrap();
    stop.store(true, Ordering::Relaxed);
    producer.join().unwrap();
    assert!(r.satisfied > 100, "{} satisfied", r.satisfied);
    assert_eq!((r.nacks, r.lost, r.mismatches), (0, 0, 0));
    assert_eq!(r.content_bytes, r.satisfied * 3000);
    // Management answers over it too (a loopback WebSocket is a local face).
    let mut c = nexthop_tools::client::Client::connect(&ws).unwrap();
    assert!(!c.dataset("/localhost/nfd/faces/list").unwrap().is_empty());
}
