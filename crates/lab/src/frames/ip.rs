//! The router's frames: IPv4 UDP packets to many destinations, each carrying the test header
//! and pattern ([`super::format`]) as its payload, and the sink's check of where each came out.
//!
//! ```text
//! 0         14            34    42                 62
//! | Ethernet | IPv4 (20)  | UDP | test header (20) | pattern ...
//! ```
//!
//! # Overview
//! - Frame `seq` of `flow` is the run's frame number `n = seq · flows + flow` and goes to
//!   destination `n mod d` of the `d` the stream was given, so the sink knows a frame's
//!   destination from its test header alone.
//! - The sink checks every byte: the IPv4 header as a router must leave it (TTL one less, the
//!   checksum right, nothing else changed), the UDP header and the payload; a damaged frame is
//!   [`Checked::Corrupted`]. An intact one is [`Checked::Misrouted`] unless it came out of the
//!   receiving port and with the Ethernet addresses its destination's route gives (the egress
//!   the caller computed with a reference LPM), or the route's alternative while routes change.

use nexthop_router::ip::header::checksum;

use super::format::{check_at, write_test_header, Checked, MAX_FRAME, PATTERN};
use super::traffic::Stream;
use super::xdp::{Expected, XdpFrames, CHECKED};

/// Ethernet + IPv4 + UDP.
pub const HEADERS: usize = 42;
/// The smallest frame: the headers, the test header, and padding to 64 bytes.
pub const MIN_FRAME: usize = 64;
/// The TTL the generator sends.
pub const TTL: u8 = 64;
const ETHERTYPE_IPV4: u16 = 0x0800;
const UDP: u8 = 17;
/// The UDP ports (discard).
const PORT: u16 = 9;

/// Where a destination's frames must come out: the receiving port (its place in the run's
/// list) and the Ethernet destination (the next hop's address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Egress {
    /// The receiving port.
    pub rx: usize,
    /// The next hop's Ethernet address.
    pub mac: [u8; 6],
}

/// IPv4 frames of one size from one source to a list of destinations.
#[derive(Clone, Debug)]
pub struct Ipv4Stream {
    bytes: Vec<u8>,
    flows: u64,
    dests: Vec<u32>,
    /// Per destination: its egress, and another one accepted too (while routes change).
    egress: Vec<(Egress, Option<Egress>)>,
    /// The Ethernet source the router writes on each receiving port's frames.
    port_macs: Vec<[u8; 6]>,
}

impl Ipv4Stream {
    /// Frames of `size` bytes (clamped to [`MIN_FRAME`]..=[`MAX_FRAME`]) from `src_ip` at
    /// Ethernet `src` to the router's `dst`, over `flows` flows, to `dests` (at least one),
    /// which must come out as `egress` says (one per destination); `port_macs`: the router's
    /// address on each receiving port.
    pub fn new(
        size: usize,
        (dst, src): ([u8; 6], [u8; 6]),
        src_ip: u32,
        flows: u16,
        dests: Vec<u32>,
        egress: Vec<Egress>,
        port_macs: Vec<[u8; 6]>,
    ) -> Ipv4Stream {
        assert!(!dests.is_empty() && dests.len() == egress.len(), "one egress per destination, at least one");
        let size = size.clamp(MIN_FRAME, MAX_FRAME);
        let mut b = PATTERN[..size].to_vec();
        b[..6].copy_from_slice(&dst);
        b[6..12].copy_from_slice(&src);
        b[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut b[14..34];
        ip.copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, TTL, UDP, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        ip[2..4].copy_from_slice(&((size - 14) as u16).to_be_bytes());
        ip[12..16].copy_from_slice(&src_ip.to_be_bytes());
        let udp = &mut b[34..42];
        udp[..2].copy_from_slice(&PORT.to_be_bytes());
        udp[2..4].copy_from_slice(&PORT.to_be_bytes());
        udp[4..6].copy_from_slice(&((size - 34) as u16).to_be_bytes());
        udp[6..8].copy_from_slice(&[0, 0]); // no checksum (IPv4 allows it)
        Ipv4Stream { bytes: b, flows: u64::from(flows.max(1)), dests, egress: egress.into_iter().map(|e| (e, None)).collect(), port_macs }
    }

    /// Also accepts `alt[i]` for destination `i` (where given): frames sent while the routes
    /// change may take the old route or the new one.
    pub fn also_accepting(mut self, alt: &[Option<Egress>]) -> Ipv4Stream {
        for (e, a) in self.egress.iter_mut().zip(alt) {
            e.1 = *a;
        }
        self
    }

    /// The destinations, in the order frames take them.
    pub fn destinations(&self) -> &[u32] {
        &self.dests
    }

    /// The same frames, which must now come out as `egress` says (one per destination).
    pub fn with_egress(mut self, egress: Vec<Egress>) -> Ipv4Stream {
        assert_eq!(egress.len(), self.dests.len(), "one egress per destination");
        self.egress = egress.into_iter().map(|e| (e, None)).collect();
        self
    }

    /// The same frames for the XDP generator and sink ([`super::xdp`]): each destination's
    /// Ethernet and IPv4 headers (and UDP source port, to fill four-byte words) are its patch, and the sink expects it with the TTL one less, behind the
    /// next hop's Ethernet address, on the destination's port.
    pub fn xdp_frames(&self) -> XdpFrames {
        let patches = self
            .dests
            .iter()
            .map(|&d| {
                let mut p = self.bytes[..36].to_vec();
                p[14..34].copy_from_slice(&self.ip_header(d, TTL));
                p
            })
            .collect();
        let expected = self
            .dests
            .iter()
            .zip(&self.egress)
            .map(|(&d, (want, alt))| {
                let mut bytes = [0u8; CHECKED];
                bytes.copy_from_slice(&self.bytes[..CHECKED]);
                bytes[..6].copy_from_slice(&want.mac);
                bytes[6..12].copy_from_slice(self.port_macs.get(want.rx).unwrap_or(&[0; 6]));
                bytes[14..34].copy_from_slice(&self.ip_header(d, TTL - 1));
                Expected { bytes, rx: want.rx as u8, alt: alt.map(|a| (a.rx as u8, a.mac)) }
            })
            .collect();
        let mut frame = self.bytes.clone();
        frame[14..34].copy_from_slice(&self.ip_header(self.dests[0], TTL));
        XdpFrames { frame, patches, expected }
    }

    /// The destination of frame `seq` of `flow`.
    fn dest(&self, flow: u16, seq: u64) -> usize {
        (seq.wrapping_mul(self.flows).wrapping_add(u64::from(flow)) % self.dests.len() as u64) as usize
    }

    /// The IPv4 header of a frame to `dst` with `ttl`, its checksum filled in.
    fn ip_header(&self, dst: u32, ttl: u8) -> [u8; 20] {
        let mut h: [u8; 20] = self.bytes[14..34].try_into().unwrap_or([0; 20]);
        h[8] = ttl;
        h[16..20].copy_from_slice(&dst.to_be_bytes());
        let c = !checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }
}

impl Stream for Ipv4Stream {
    fn frame_len(&self) -> usize {
        self.bytes.len()
    }

    fn write(&self, out: &mut [u8], flow: u16, seq: u64) {
        out.copy_from_slice(&self.bytes);
        let dst = self.dests[self.dest(flow, seq)];
        out[14..34].copy_from_slice(&self.ip_header(dst, TTL));
        write_test_header(out, HEADERS, flow, seq);
    }

    fn check(&self, rx: usize, frame: &[u8]) -> Checked {
        if frame.len() < HEADERS || frame[12..14] != ETHERTYPE_IPV4.to_be_bytes() || frame[23] != UDP {
            return Checked::Foreign;
        }
        let (flow, seq) = match check_at(frame, HEADERS) {
            Checked::Intact { flow, seq } => (flow, seq),
            other => return other,
        };
        let i = self.dest(flow, seq);
        if frame.len() != self.bytes.len() || frame[14..34] != self.ip_header(self.dests[i], TTL - 1) || frame[34..42] != self.bytes[34..42]
        {
            return Checked::Corrupted;
        }
        let (dst_mac, src_mac): ([u8; 6], [u8; 6]) =
            (frame[..6].try_into().unwrap_or_default(), frame[6..12].try_into().unwrap_or_default());
        let came = Egress { rx, mac: dst_mac };
        let (want, alt) = self.egress[i];
        let right_port = came == want || alt == Some(came);
        if right_port && self.port_macs.get(rx) == Some(&src_mac) {
            Checked::Intact { flow, seq }
        } else {
            Checked::Misrouted { flow, seq }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const GEN: [u8; 6] = [2, 0, 0, 0, 0, 2];
    const PORTS: [[u8; 6]; 2] = [[2, 0, 0, 0, 1, 1], [2, 0, 0, 0, 2, 1]];
    const HOP_A: [u8; 6] = [2, 0, 0, 1, 0, 10];
    const HOP_B: [u8; 6] = [2, 0, 0, 2, 0, 10];

    fn stream(size: usize) -> Ipv4Stream {
        Ipv4Stream::new(
            size,
            (ROUTER, GEN),
            0x0a00_0002,
            4,
            vec![0x0102_0304, 0x0506_0708],
            vec![Egress { rx: 0, mac: HOP_A }, Egress { rx: 1, mac: HOP_B }],
            PORTS.to_vec(),
        )
    }

    /// What a router does to a frame: TTL one less (checksum redone), Ethernet rewritten.
    fn route(frame: &mut [u8], src: [u8; 6], dst: [u8; 6]) {
        frame[..6].copy_from_slice(&dst);
        frame[6..12].copy_from_slice(&src);
        frame[22] -= 1;
        frame[24..26].copy_from_slice(&[0, 0]);
        let c = !checksum(&frame[14..34]);
        frame[24..26].copy_from_slice(&c.to_be_bytes());
    }

    #[test]
    fn a_routed_frame_checks_where_its_route_says_and_nowhere_else() {
        for size in [0, 64, 1500, 3000] {
            let s = stream(size);
            let mut f = vec![0u8; s.frame_len()];
            s.write(&mut f, 1, 0); // frame 1: the second destination
            assert_eq!(&f[30..34], &[5, 6, 7, 8]);
            assert_eq!(checksum(&f[14..34]), 0xffff, "a valid IPv4 checksum");
            assert_eq!(s.check(1, &f), Checked::Corrupted, "not routed: TTL unchanged");
            route(&mut f, PORTS[1], HOP_B);
            assert_eq!(s.check(1, &f), Checked::Intact { flow: 1, seq: 0 });
            assert_eq!(s.check(0, &f), Checked::Misrouted { flow: 1, seq: 0 }, "the wrong port");
            let mut g = f.clone();
            g[5] ^= 1;
            assert_eq!(s.check(1, &g), Checked::Misrouted { flow: 1, seq: 0 }, "the wrong next hop");
            let mut g = f.clone();
            g[6..12].copy_from_slice(&PORTS[0]);
            assert_eq!(s.check(1, &g), Checked::Misrouted { flow: 1, seq: 0 }, "another port's source address");
            for i in 14..f.len() {
                let mut g = f.clone();
                g[i] ^= 0x04;
                assert!(matches!(s.check(1, &g), Checked::Corrupted | Checked::Foreign), "byte {i} flipped");
            }
            let alt = stream(size).also_accepting(&[None, Some(Egress { rx: 0, mac: HOP_A })]);
            let mut g = f.clone();
            g[..6].copy_from_slice(&HOP_A);
            g[6..12].copy_from_slice(&PORTS[0]);
            assert_eq!(alt.check(0, &g), Checked::Intact { flow: 1, seq: 0 }, "the alternative while routes change");
        }
    }

    #[test]
    fn the_xdp_frames_are_the_same_frames_and_expect_them_routed() {
        let s = stream(64);
        let x = s.xdp_frames();
        assert_eq!((x.frame.len(), x.patches.len(), x.expected.len()), (64, 2, 2));
        for i in 0..2 {
            let mut f = vec![0u8; s.frame_len()];
            s.write(&mut f, i as u16, 0); // frame i: destination i
            assert_eq!(&x.patches[i][..], &f[..36], "the patch is the frame's Ethernet and IPv4 headers");
            route(&mut f, PORTS[i], [HOP_A, HOP_B][i]);
            assert_eq!(&x.expected[i].bytes[..], &f[..CHECKED], "the sink expects the routed headers");
            assert_eq!((x.expected[i].rx, x.expected[i].alt), (i as u8, None));
        }
    }

    proptest::proptest! {
        /// Any bytes are checked without a panic.
        #[test]
        fn any_bytes_check(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..1600), rx in 0usize..4) {
            let _ = stream(64).check(rx, &bytes);
        }
    }
}
