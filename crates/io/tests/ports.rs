//! Ports on real veth pairs between network namespaces the tests make (and remove): frames go
//! both ways over AF_XDP and AF_PACKET, forward between two AF_XDP ports, and survive their
//! interface going and coming back.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use nexthop_io::netns::{veth, Netns};
use nexthop_io::{Backend, DropReason, Frame, PortConfig, PortError, PortEvent, PortId, PortSet, XdpMode};

const TEST_TYPE: u16 = 0x88b5;

/// Namespaces named after `tag` and the process; `None` when skipped (NEXTHOP_SKIP_NET_ADMIN=1).
fn namespaces<const N: usize>(tag: &str) -> Option<[Netns; N]> {
    let mut v = Vec::new();
    for i in 0..N {
        v.push(Netns::for_test(&format!("nxio{tag}{i}{}", std::process::id() % 100_000))?);
    }
    v.try_into().ok()
}

/// A frame to `dst` of EtherType `ty` carrying `seq`, `len` bytes in all.
fn frame(set: &mut PortSet, dst: [u8; 6], ty: u16, seq: u32, len: usize) -> Frame {
    let mut data = vec![0u8; len];
    data[..6].copy_from_slice(&dst);
    data[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    data[12..14].copy_from_slice(&ty.to_be_bytes());
    data[14..18].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in data[18..].iter_mut().enumerate() {
        *b = (seq as usize + i) as u8;
    }
    set.pool().alloc_copy(&data).expect("a free frame")
}

/// The sequence number of a frame made by [`frame`], checking its payload.
fn seq_of(set: &PortSet, f: &Frame) -> u32 {
    let d = set.pool_ref().bytes(f);
    let seq = u32::from_be_bytes(d[14..18].try_into().unwrap());
    for (i, b) in d[18..].iter().enumerate() {
        assert_eq!(*b, (seq as usize + i) as u8, "frame {seq} byte {i}");
    }
    seq
}

/// Receives on `port` until `n` frames came or 5 s passed; their sequence numbers.
fn receive_n(set: &mut PortSet, port: PortId, n: usize) -> Vec<u32> {
    let mut got = Vec::new();
    let mut batch = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < n && Instant::now() < deadline {
        if set.receive(port, &mut batch, 64) == 0 {
            set.flush();
            thread::sleep(Duration::from_micros(200));
        }
        for f in batch.drain(..) {
            got.push(seq_of(set, &f));
            set.pool().free(f);
        }
    }
    got
}

fn mac(ns: &Netns, dev: &str) -> [u8; 6] {
    let out = ns.exec(&["cat", &format!("/sys/class/net/{dev}/address")]).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Vec<u8> = text.trim().split(':').map(|h| u8::from_str_radix(h, 16).unwrap()).collect();
    v.try_into().unwrap()
}

#[test]
fn frames_cross_af_xdp_and_af_packet_both_ways_and_other_types_stay_with_the_kernel() {
    let Some([a, b]) = namespaces::<2>("x") else { return };
    veth(&a, "xa0", &b, "xb0", 2).unwrap();
    let (a_mac, b_mac) = (mac(&a, "xa0"), mac(&b, "xb0"));
    let (ready, go) = mpsc::channel();
    thread::scope(|s| {
        let echo = s.spawn(move || {
            b.enter().unwrap();
            let mut set = PortSet::new(8192).unwrap();
            let cfg = PortConfig { ethertypes: vec![TEST_TYPE], backend: Some(Backend::AfXdp), ..PortConfig::new("xb0") };
            let p = set.open(cfg).unwrap();
            let info = set.info(p).clone();
            assert_eq!((info.backend, info.xdp_mode, info.interface.queues), (Backend::AfXdp, Some(XdpMode::Native), 2));
            ready.send(()).unwrap();
            let got = receive_n(&mut set, p, 100);
            for &seq in &got {
                let f = frame(&mut set, a_mac, TEST_TYPE, seq, 60);
                set.transmit(p, f).unwrap();
            }
            set.flush();
            // Nothing of another type reached the port.
            thread::sleep(Duration::from_millis(50));
            let mut rest = Vec::new();
            assert_eq!(set.receive(p, &mut rest, 64), 0, "a frame of another EtherType was taken");
            let c = set.counters(p);
            assert_eq!((c.rx_frames, c.tx_frames, c.dropped_total()), (100, 100, 0));
            got
        });
        a.enter().unwrap();
        let mut set = PortSet::new(1024).unwrap();
        let p = set.open(PortConfig { backend: Some(Backend::AfPacket), ..PortConfig::new("xa0") }).unwrap();
        go.recv().unwrap();
        let other = frame(&mut set, b_mac, 0x88b6, 7, 60);
        set.transmit(p, other).unwrap();
        for seq in 0..100 {
            let f = frame(&mut set, b_mac, TEST_TYPE, seq, 60 + seq as usize * 10);
            set.transmit(p, f).unwrap();
        }
        set.flush();
        let back = receive_n(&mut set, p, 100);
        let sent = echo.join().unwrap();
        assert_eq!(sent, (0..100).collect::<Vec<_>>(), "every frame, in order, intact");
        assert_eq!(back, sent);
    });
}

#[test]
fn two_af_xdp_ports_forward_every_frame_by_address() {
    let Some([g, f, k]) = namespaces::<3>("f") else { return };
    veth(&g, "fg0", &f, "ff0", 1).unwrap();
    veth(&f, "ff1", &k, "fk0", 1).unwrap();
    let sink_mac = mac(&k, "fk0");
    const N: u32 = 20_000;
    let (ready_tx, ready) = mpsc::channel();
    let stop = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        let ready_fw = ready_tx.clone();
        let stop = &stop;
        let fw = s.spawn(move || {
            f.enter().unwrap();
            let mut set = PortSet::new(16384).unwrap();
            let i = set.open(PortConfig::new("ff0")).unwrap();
            let o = set.open(PortConfig::new("ff1")).unwrap();
            ready_fw.send(()).unwrap();
            let mut batch = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                set.receive(i, &mut batch, 64);
                for fr in batch.drain(..) {
                    let _ = set.transmit(o, fr); // a drop is counted
                }
                set.flush();
            }
            let free = set.pool_ref().free_count();
            (set.counters(i), set.counters(o), free)
        });
        let sink = s.spawn(move || {
            k.enter().unwrap();
            let mut set = PortSet::new(8192).unwrap();
            let p = set.open(PortConfig { ethertypes: vec![TEST_TYPE], ..PortConfig::new("fk0") }).unwrap();
            ready_tx.send(()).unwrap();
            receive_n(&mut set, p, N as usize)
        });
        ready.recv().unwrap();
        ready.recv().unwrap();
        g.enter().unwrap();
        let mut set = PortSet::new(4096).unwrap();
        let p = set.open(PortConfig::new("fg0")).unwrap();
        for seq in 0..N {
            let fr = frame(&mut set, sink_mac, TEST_TYPE, seq, 64);
            set.transmit(p, fr).unwrap();
            if seq % 32 == 31 {
                set.flush();
                // Paced below what the forwarder keeps up with: this test is about loss, not rate.
                thread::sleep(Duration::from_micros(100));
            }
        }
        set.flush();
        let got = sink.join().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (cin, cout, free) = fw.join().unwrap();
        assert_eq!(got.len(), N as usize, "every frame arrived (forwarder in {cin:?}, out {cout:?})");
        assert!(got.windows(2).all(|w| w[0] < w[1]), "in order, none twice");
        assert_eq!((cin.rx_frames, cout.tx_frames, cout.dropped_total()), (u64::from(N), u64::from(N), 0));
        assert!(free > 0);
    });
}

#[test]
fn a_deleted_interface_closes_its_port_and_one_made_again_reopens_it() {
    let Some([a, b]) = namespaces::<2>("d") else { return };
    veth(&a, "da0", &b, "db0", 1).unwrap();
    b.enter().unwrap();
    let mut set = PortSet::new(8192).unwrap();
    let p = set.open(PortConfig::new("db0")).unwrap();
    let lent = set.pool_ref().capacity() - set.pool_ref().free_count();
    assert!(lent > 0, "the fill rings hold frames");
    b.ip(&["link", "del", "db0"]).unwrap();
    assert_eq!(set.maintain(), vec![PortEvent::Down(p)]);
    assert_eq!(set.pool_ref().free_count(), set.pool_ref().capacity(), "every lent frame came back");
    assert!(!set.info(p).up);
    let f = frame(&mut set, [0xff; 6], TEST_TYPE, 1, 60);
    assert_eq!(set.transmit(p, f), Err(DropReason::LinkDown));
    let mut batch = Vec::new();
    assert_eq!(set.receive(p, &mut batch, 64), 0);
    assert_eq!(set.counters(p).dropped(DropReason::LinkDown), 1);
    assert_eq!(set.maintain(), vec![], "nothing to reopen yet");
    veth(&a, "da0", &b, "db0", 1).unwrap();
    let before = set.fds(p);
    assert_eq!(set.info(p).opened, 1);
    assert_eq!(set.maintain(), vec![PortEvent::Up(p)]);
    assert_eq!(set.info(p).opened, 2, "opened again: new sockets");
    assert!(before.is_empty() && !set.fds(p).is_empty(), "no descriptors while down");
    let c = set.counters(p);
    assert_eq!((c.link_downs, c.link_ups), (1, 1));
    // Frames flow again: from the other end, over AF_PACKET.
    let b_mac = mac(&b, "db0");
    thread::scope(|s| {
        s.spawn(|| {
            a.enter().unwrap();
            let mut tx = PortSet::new(256).unwrap();
            let q = tx.open(PortConfig { backend: Some(Backend::AfPacket), ..PortConfig::new("da0") }).unwrap();
            for seq in 0..10 {
                let f = frame(&mut tx, b_mac, TEST_TYPE, seq, 60);
                tx.transmit(q, f).unwrap();
            }
            tx.flush();
        });
    });
    assert_eq!(receive_n(&mut set, p, 10), (0..10).collect::<Vec<_>>());
    drop(set);
}

#[test]
fn bad_ports_and_frames_get_typed_errors_or_counted_drops() {
    let Some([a]) = namespaces::<1>("e") else { return };
    a.ip(&["link", "add", "ea0", "type", "veth", "peer", "name", "ea1"]).unwrap();
    a.ip(&["link", "set", "ea0", "up"]).unwrap();
    a.enter().unwrap();
    let mut set = PortSet::new(8192).unwrap();
    assert!(matches!(set.open(PortConfig::new("nosuch0")), Err(PortError::NoSuchInterface(_))));
    assert!(matches!(set.open(PortConfig::new("bad/name")), Err(PortError::Config(_))));
    assert!(matches!(set.open(PortConfig::new("lo")), Err(PortError::Config(_))), "loopback is not Ethernet");
    let many = PortConfig { ethertypes: (0..17).collect(), ..PortConfig::new("ea0") };
    assert!(matches!(set.open(many), Err(PortError::Config(_))));
    let p = set.open(PortConfig { xdp_mode: Some(XdpMode::Generic), ..PortConfig::new("ea0") }).unwrap();
    assert_eq!(set.info(p).xdp_mode, Some(XdpMode::Generic));
    let short = set.pool().alloc_copy(&[0u8; 13]).unwrap();
    assert_eq!(set.transmit(p, short), Err(DropReason::TooShort));
    let long = set.pool().alloc_copy(&[0u8; 1600]).unwrap();
    assert_eq!(set.transmit(p, long), Err(DropReason::TooLong));
    let c = set.counters(p);
    assert_eq!((c.dropped(DropReason::TooShort), c.dropped(DropReason::TooLong), c.tx_frames), (1, 1, 0));
    // A second program on the same interface is refused, not stacked.
    let mut other = PortSet::new(64).unwrap();
    assert!(matches!(other.open(PortConfig { backend: Some(Backend::AfXdp), ..PortConfig::new("ea0") }), Err(PortError::Os { .. })));
}

/// The groups of `dev` in namespace `ns`, as `/proc/net/dev_mcast` lists them (hex, no colons).
fn groups_of(ns: &Netns, dev: &str) -> Vec<String> {
    let out = ns.exec(&["cat", "/proc/net/dev_mcast"]).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter_map(|l| l.split_whitespace().collect::<Vec<_>>().get(1..5).map(|f| (f[0] == dev).then(|| f[3].to_string())))
        .flatten()
        .collect()
}

#[test]
fn a_port_holds_its_groups_while_open_and_an_af_packet_port_through_the_qdisc_shows_its_backlog() {
    let Some([a]) = namespaces::<1>("g") else { return };
    a.ip(&["link", "add", "ga0", "type", "veth", "peer", "name", "ga1"]).unwrap();
    for dev in ["ga0", "ga1"] {
        a.ip(&["link", "set", dev, "up"]).unwrap();
    }
    a.enter().unwrap();
    let group = [0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa];
    for backend in [Backend::AfXdp, Backend::AfPacket] {
        let mut set = PortSet::new(8192).unwrap();
        let p = set.open(PortConfig { backend: Some(backend), groups: vec![group], ..PortConfig::new("ga0") }).unwrap();
        assert!(groups_of(&a, "ga0").contains(&"01005e0017aa".to_string()), "{backend:?}: joined");
        assert!(!set.fds(p).is_empty());
        drop(set);
        assert!(!groups_of(&a, "ga0").contains(&"01005e0017aa".to_string()), "{backend:?}: left on close");
    }
    let mut set = PortSet::new(8192).unwrap();
    let unicast = PortConfig { groups: vec![[0x02, 0, 0, 0, 0, 1]], ..PortConfig::new("ga0") };
    assert!(matches!(set.open(unicast), Err(PortError::Os { .. })), "a group must be a multicast address");
    assert_eq!(set.pool_ref().free_count(), set.pool_ref().capacity(), "a refused port gives its frames back");

    // 200 KB behind a token bucket of 1 Mbit/s: the socket's frames wait in the qdisc.
    a.exec(&["tc", "qdisc", "add", "dev", "ga0", "root", "tbf", "rate", "1mbit", "burst", "16kbit", "latency", "5s"]).unwrap();
    let p = set.open(PortConfig { backend: Some(Backend::AfPacket), qdisc: true, ..PortConfig::new("ga0") }).unwrap();
    for seq in 0..150 {
        let f = frame(&mut set, [0x02, 0, 0, 0, 0, 2], TEST_TYPE, seq, 1400);
        set.transmit(p, f).unwrap();
        set.flush();
    }
    assert!(set.tx_backlog(p) > 64 * 1024, "backlog {}", set.tx_backlog(p));
    let q = set.open(PortConfig { backend: Some(Backend::AfXdp), ..PortConfig::new("ga1") }).unwrap();
    assert_eq!(set.tx_backlog(q), 0, "nothing sent");
}
