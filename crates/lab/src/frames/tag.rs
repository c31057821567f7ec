//! The TagNet router's frames: TagNet packets of several kinds and sizes (pushes and interests
//! by descriptor, follow-ups and data by locator) carrying the test header and pattern in
//! their payload, and the sink's check of each against what the router must make of it.
//!
//! # Overview
//! Frame `n = seq · flows + flow` of a run is packet `n mod p` of the `p` the stream was given,
//! each with the sink port it must come out of. A router decrements the TTL and writes its
//! egress port's address as the Ethernet source; any other change is corruption. An intact
//! frame out of another port is misrouted.

use nexthop_router::tag::packet::{self, Packet, ETHERTYPE};

use super::format::{check_at, write_test_header, Checked, MAX_FRAME, PATTERN, TEST_HEADER_BYTES};
use super::traffic::Stream;

/// One packet of the stream, as a whole frame.
#[derive(Clone, Debug)]
struct Template {
    bytes: Vec<u8>,
    payload_at: usize,
    ttl_at: usize,
    rx: usize,
}

/// TagNet frames from one source, each to come out of a given sink port.
#[derive(Clone, Debug)]
pub struct TagStream {
    templates: Vec<Template>,
    flows: u64,
    /// The router's address on the link to each sink port (the frames' source there).
    egress_macs: Vec<[u8; 6]>,
}

impl TagStream {
    /// Frames from `src` over `flows` flows: each of `packets` (its payload ignored) as a frame
    /// of the given size, to come out of the given sink port, from `egress_macs[port]`.
    ///
    /// # Errors
    /// No packets; a sink port with no address; a size that cannot hold the packet's headers
    /// and the test header, or past [`MAX_FRAME`].
    pub fn new(src: [u8; 6], flows: u16, packets: &[(Packet<'_>, usize, usize)], egress_macs: Vec<[u8; 6]>) -> anyhow::Result<TagStream> {
        anyhow::ensure!(!packets.is_empty(), "a stream of no packets");
        let mut templates = Vec::with_capacity(packets.len());
        for &(p, size, rx) in packets {
            anyhow::ensure!(rx < egress_macs.len(), "sink port {rx} has no router address");
            let mut bytes = packet::ether_header(src);
            let mut headers = Vec::new();
            Packet { payload: &[], ..p }.encode(&mut headers)?;
            let payload_at = bytes.len() + headers.len();
            anyhow::ensure!(
                size <= MAX_FRAME && size >= payload_at + TEST_HEADER_BYTES,
                "a frame of {size} bytes cannot hold its {payload_at} bytes of headers and the test header (or is past {MAX_FRAME})"
            );
            Packet { payload: &PATTERN[payload_at..size], ..p }.encode(&mut bytes)?;
            let ttl_at = packet::ETHER_BYTES + packet::parse(&bytes[packet::ETHER_BYTES..])?.ttl_at;
            templates.push(Template { bytes, payload_at, ttl_at, rx });
        }
        Ok(TagStream { templates, flows: u64::from(flows.max(1)), egress_macs })
    }

    fn template(&self, flow: u16, seq: u64) -> &Template {
        let n = seq.wrapping_mul(self.flows).wrapping_add(u64::from(flow));
        &self.templates[(n % self.templates.len() as u64) as usize]
    }

    /// The mean frame size, bytes.
    pub fn mean_len(&self) -> f64 {
        self.templates.iter().map(|t| t.bytes.len()).sum::<usize>() as f64 / self.templates.len() as f64
    }
}

/// Where the payload of a TagNet frame starts: after the Ethernet header, the address header,
/// the packet header and the reply locator if its flag is set.
fn payload_at(frame: &[u8]) -> Option<usize> {
    let first = *frame.get(packet::ETHER_BYTES)?;
    let address = match first & 0x0f {
        1 => nexthop_lookup::tag::DESCRIPTOR_HEADER,
        2 => nexthop_lookup::tag::LOCATOR_HEADER,
        _ => return None,
    };
    let at = packet::ETHER_BYTES + address;
    let flags = *frame.get(at + 2)?;
    Some(at + packet::PACKET_HEADER + if flags & 1 == 1 { nexthop_lookup::tag::LOCATOR_HEADER } else { 0 })
}

impl Stream for TagStream {
    fn frame_len(&self) -> usize {
        self.templates[0].bytes.len()
    }

    fn len_of(&self, flow: u16, seq: u64) -> usize {
        self.template(flow, seq).bytes.len()
    }

    fn write(&self, out: &mut [u8], flow: u16, seq: u64) {
        let t = self.template(flow, seq);
        out.copy_from_slice(&t.bytes);
        write_test_header(out, t.payload_at, flow, seq);
    }

    fn check(&self, rx: usize, frame: &[u8]) -> Checked {
        if frame.get(12..14) != Some(&ETHERTYPE.to_be_bytes()[..]) {
            return Checked::Foreign;
        }
        let Some(at) = payload_at(frame) else { return Checked::Foreign };
        let (flow, seq) = match check_at(frame, at) {
            Checked::Intact { flow, seq } => (flow, seq),
            other => return other,
        };
        let t = self.template(flow, seq);
        let headers_intact = frame.len() == t.bytes.len()
            && at == t.payload_at
            && frame[..6] == t.bytes[..6]
            && Some(&frame[6..12]) == self.egress_macs.get(rx).map(|m| &m[..])
            && frame[12..t.ttl_at] == t.bytes[12..t.ttl_at]
            && frame[t.ttl_at].wrapping_add(1) == t.bytes[t.ttl_at]
            && frame[t.ttl_at + 1..at] == t.bytes[t.ttl_at + 1..at];
        if !headers_intact {
            Checked::Corrupted
        } else if rx == t.rx {
            Checked::Intact { flow, seq }
        } else {
            Checked::Misrouted { flow, seq }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_lookup::tag::{Address, Descriptor, Fanout, Label};
    use nexthop_router::tag::packet::{Kind, Locator, DEFAULT_TTL};

    #[test]
    fn frames_check_as_a_router_forwards_them_and_any_other_change_is_seen() {
        let descriptor = Descriptor::from_tags(["a", "b"]).unwrap();
        let push = Packet {
            address: Address::Descriptor { descriptor, fanout: Fanout::ALL, tree: 1 },
            kind: Kind::Push,
            ttl: DEFAULT_TTL,
            reply: None,
            payload: &[],
        };
        let reply = Some(Locator { tree: 0, label: Label { id: 9, list: 1, mask: 1 } });
        let follow =
            Packet { address: Address::Locator { tree: 0, label: Label { id: 3, list: 0, mask: 0 } }, kind: Kind::Interest, reply, ..push };
        let macs = vec![[2, 0, 0, 0, 9, 1], [2, 0, 0, 0, 9, 2]];
        let s = TagStream::new([2, 0, 0, 0, 0, 1], 2, &[(push, 1280, 1), (follow, 100, 0)], macs.clone()).unwrap();
        assert!(TagStream::new([2; 6], 1, &[(push, 50, 0)], macs.clone()).is_err(), "too short for its headers");
        for (flow, seq, rx, len) in [(0u16, 0u64, 1usize, 1280usize), (1, 0, 0, 100)] {
            assert_eq!(s.len_of(flow, seq), len);
            let mut f = vec![0u8; len];
            s.write(&mut f, flow, seq);
            // As the router sends it: TTL decremented, its port's address as the source.
            let mut routed = f.clone();
            let at = s.template(flow, seq).ttl_at;
            routed[at] -= 1;
            routed[6..12].copy_from_slice(&macs[rx]);
            assert_eq!(s.check(rx, &routed), Checked::Intact { flow, seq });
            assert_eq!(s.check(1 - rx, &routed), Checked::Corrupted, "another port's source address");
            let mut other = routed.clone();
            other[6..12].copy_from_slice(&macs[1 - rx]);
            assert_eq!(s.check(1 - rx, &other), Checked::Misrouted { flow, seq });
            assert_eq!(s.check(rx, &f), Checked::Corrupted, "not forwarded: TTL and source unchanged");
            for i in (0..6).chain(12..len) {
                let mut g = routed.clone();
                g[i] ^= 0x10;
                assert!(matches!(s.check(rx, &g), Checked::Corrupted | Checked::Foreign), "byte {i} flipped");
            }
        }
    }
}
