//! TagNet's link-local control messages: what neighbours tell each other to build a tree, label
//! it and install descriptors (the protocol is `tree.rs`'s).
//!
//! # Overview
//! A message is the byte `1 << 4 | 3` (version 1, address type [`TYPE_CONTROL`]), its type, the
//! tree (2 bytes LE), then its body. Names are a length byte and up to [`MAX_NAME`] bytes of
//! UTF-8; integers are little-endian.
//! - [`Beacon`] (1): the root's name, the sender's, the root's sequence number and the hops
//!   from the root; the root sends one every tick, every node passes on the ones from its
//!   parent.
//! - [`Join`] (2): the sender's subtree, to its parent: a count, then for each node its name,
//!   its parent's and the version of the labels it holds (0: none).
//! - [`Labels`] (3): from the root, toward one node: the labelling's version, the node's name,
//!   its label (id, field list, mask), its Thorup–Zwick router state (`TzRouter::to_bytes`) and
//!   the name of the neighbour behind each of its TZ interfaces (empty: none).
//! - [`Announce`] (4): one part of the descriptors the sender holds through this link, to its
//!   parent: what they are for ([`Role`]), the set's version, the part's number and the parts'
//!   count, then the descriptors (24 bytes each).
//!
//! Every message a node builds fits [`MAX_MESSAGE`] bytes; [`Message::parse`] refuses anything
//! else with a typed error.

use nexthop_lookup::tag::{Descriptor, Label, TagError, TzRouter, DESCRIPTOR_BYTES};

use super::packet::TYPE_CONTROL;

/// The first byte of every control message.
pub const CONTROL_BYTE: u8 = 1 << 4 | TYPE_CONTROL;
/// The longest node name, in bytes.
pub const MAX_NAME: usize = 32;
/// The most bytes a control message takes: one fits any Ethernet or UDP-over-IPv4 link of the
/// usual 1500-byte MTU.
pub const MAX_MESSAGE: usize = 1400;
/// Descriptors in one [`Announce`] part.
pub const DESCRIPTORS_PER_PART: usize = 56;

/// What an announced descriptor is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A subscription: pushes that match it go there (Find All Subsets).
    Subscribe = 1,
    /// A producer's: interests whose largest subset it is go there (Find Largest Subset).
    Provide = 2,
}

impl Role {
    /// Both, in table order.
    pub const ALL: [Role; 2] = [Role::Subscribe, Role::Provide];

    /// Its index in per-role tables.
    pub fn index(self) -> usize {
        self as usize - 1
    }
}

/// The root's beacon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beacon {
    /// The tree.
    pub tree: u16,
    /// The root's name.
    pub root: String,
    /// The node that sent it (the root, or a node passing it on).
    pub sender: String,
    /// The root's sequence number.
    pub seq: u32,
    /// Hops from the root to the sender's neighbour (the root's own beacons say 1).
    pub hops: u8,
}

/// One node of a subtree in a [`Join`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JoinEntry {
    /// The node.
    pub node: String,
    /// Its parent.
    pub parent: String,
    /// The version of the labels it holds (0: none).
    pub labels: u32,
}

/// A subtree, to the parent of its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// The tree.
    pub tree: u16,
    /// The subtree's nodes, the sender first.
    pub entries: Vec<JoinEntry>,
}

/// A node's labels, from the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    /// The tree.
    pub tree: u16,
    /// The labelling's version.
    pub version: u32,
    /// The node.
    pub node: String,
    /// Its locator.
    pub label: Label,
    /// Its forwarding state.
    pub router: TzRouter,
    /// The neighbour behind each of its TZ interfaces (empty: none).
    pub neighbours: Vec<String>,
}

/// One part of an announced set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announce {
    /// The tree.
    pub tree: u16,
    /// What the descriptors are for.
    pub role: Role,
    /// The set's version.
    pub version: u32,
    /// This part's number, from 0.
    pub part: u16,
    /// Parts in the set (at least 1).
    pub parts: u16,
    /// This part's descriptors (none in the only part of an empty set).
    pub descriptors: Vec<Descriptor>,
}

/// A control message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Type 1.
    Beacon(Beacon),
    /// Type 2.
    Join(Join),
    /// Type 3.
    Labels(Labels),
    /// Type 4.
    Announce(Announce),
}

/// Why bytes are not a control message, or a message cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// Not a control message's first byte.
    #[error("not a control message")]
    NotControl,
    /// An unknown message type.
    #[error("unknown control message type {0}")]
    BadType(u8),
    /// The message is cut short.
    #[error("the control message is cut short")]
    Truncated,
    /// Bytes after the message's end.
    #[error("{0} bytes after the control message")]
    TrailingBytes(usize),
    /// A name that is empty where one is needed, longer than [`MAX_NAME`] or not UTF-8.
    #[error("a bad node name")]
    BadName,
    /// An empty descriptor, or a part number past the parts.
    #[error("a bad announcement")]
    BadAnnounce,
    /// Router state no tree gives.
    #[error("bad locator state: {0}")]
    BadState(TagError),
    /// A message longer than [`MAX_MESSAGE`].
    #[error("a control message of {0} bytes is longer than {MAX_MESSAGE}")]
    TooLong(usize),
}

impl Message {
    /// The tree it is about.
    pub fn tree(&self) -> u16 {
        match self {
            Message::Beacon(m) => m.tree,
            Message::Join(m) => m.tree,
            Message::Labels(m) => m.tree,
            Message::Announce(m) => m.tree,
        }
    }

    /// The message's bytes.
    ///
    /// # Errors
    /// [`MessageError::BadName`] for a name past [`MAX_NAME`], [`MessageError::TooLong`] for a
    /// message past [`MAX_MESSAGE`].
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut out = vec![CONTROL_BYTE, 0];
        out.extend_from_slice(&self.tree().to_le_bytes());
        match self {
            Message::Beacon(b) => {
                out[1] = 1;
                name(&mut out, &b.root)?;
                name(&mut out, &b.sender)?;
                out.extend_from_slice(&b.seq.to_le_bytes());
                out.push(b.hops);
            }
            Message::Join(j) => {
                out[1] = 2;
                let n = u16::try_from(j.entries.len()).map_err(|_| MessageError::TooLong(usize::MAX))?;
                out.extend_from_slice(&n.to_le_bytes());
                for e in &j.entries {
                    name(&mut out, &e.node)?;
                    name(&mut out, &e.parent)?;
                    out.extend_from_slice(&e.labels.to_le_bytes());
                }
            }
            Message::Labels(l) => {
                out[1] = 3;
                out.extend_from_slice(&l.version.to_le_bytes());
                name(&mut out, &l.node)?;
                out.extend_from_slice(&l.label.id.to_le_bytes());
                out.extend_from_slice(&l.label.list.to_le_bytes());
                out.extend_from_slice(&l.label.mask.to_le_bytes());
                out.extend_from_slice(&l.router.to_bytes());
                let n = u16::try_from(l.neighbours.len()).map_err(|_| MessageError::TooLong(usize::MAX))?;
                out.extend_from_slice(&n.to_le_bytes());
                for v in &l.neighbours {
                    name(&mut out, v)?;
                }
            }
            Message::Announce(a) => {
                out[1] = 4;
                out.push(a.role as u8);
                out.extend_from_slice(&a.version.to_le_bytes());
                out.extend_from_slice(&a.part.to_le_bytes());
                out.extend_from_slice(&a.parts.to_le_bytes());
                let n = u16::try_from(a.descriptors.len()).map_err(|_| MessageError::TooLong(usize::MAX))?;
                out.extend_from_slice(&n.to_le_bytes());
                for d in &a.descriptors {
                    out.extend_from_slice(&d.to_bytes());
                }
            }
        }
        if out.len() > MAX_MESSAGE {
            return Err(MessageError::TooLong(out.len()));
        }
        Ok(out)
    }

    /// Reads a control message.
    ///
    /// # Errors
    /// A [`MessageError`]; bytes after the message are an error too, but for an Ethernet
    /// frame's padding (zeros), which are ignored.
    pub fn parse(bytes: &[u8]) -> Result<Message, MessageError> {
        let mut r = Reader { bytes, at: 0 };
        if r.u8()? != CONTROL_BYTE {
            return Err(MessageError::NotControl);
        }
        let kind = r.u8()?;
        let tree = r.u16()?;
        let message = match kind {
            1 => Message::Beacon(Beacon { tree, root: r.name(false)?, sender: r.name(false)?, seq: r.u32()?, hops: r.u8()? }),
            2 => {
                let n = r.u16()?;
                let entries = (0..n)
                    .map(|_| Ok(JoinEntry { node: r.name(false)?, parent: r.name(false)?, labels: r.u32()? }))
                    .collect::<Result<_, MessageError>>()?;
                Message::Join(Join { tree, entries })
            }
            3 => {
                let version = r.u32()?;
                let node = r.name(false)?;
                let label = Label { id: r.u32()?, list: r.u64()?, mask: r.u64()? };
                let state: [u8; TzRouter::BYTES] = r.take(TzRouter::BYTES)?.try_into().expect("taken to size");
                let router = TzRouter::from_bytes(&state).map_err(MessageError::BadState)?;
                let n = r.u16()?;
                let neighbours = (0..n).map(|_| r.name(true)).collect::<Result<_, _>>()?;
                Message::Labels(Labels { tree, version, node, label, router, neighbours })
            }
            4 => {
                let role = match r.u8()? {
                    1 => Role::Subscribe,
                    2 => Role::Provide,
                    _ => return Err(MessageError::BadAnnounce),
                };
                let (version, part, parts) = (r.u32()?, r.u16()?, r.u16()?);
                if part >= parts {
                    return Err(MessageError::BadAnnounce);
                }
                let n = r.u16()?;
                let mut descriptors = Vec::with_capacity(usize::from(n).min(DESCRIPTORS_PER_PART));
                for _ in 0..n {
                    let d = Descriptor::from_bytes(r.take(DESCRIPTOR_BYTES)?.try_into().expect("taken to size"));
                    if d.is_empty() {
                        return Err(MessageError::BadAnnounce);
                    }
                    descriptors.push(d);
                }
                Message::Announce(Announce { tree, role, version, part, parts, descriptors })
            }
            t => return Err(MessageError::BadType(t)),
        };
        let rest = &bytes[r.at..];
        if rest.iter().any(|&b| b != 0) {
            return Err(MessageError::TrailingBytes(rest.len()));
        }
        Ok(message)
    }
}

/// Appends a name.
fn name(out: &mut Vec<u8>, name: &str) -> Result<(), MessageError> {
    if name.len() > MAX_NAME {
        return Err(MessageError::BadName);
    }
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
    Ok(())
}

/// Reads a message's fields in order.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], MessageError> {
        let b = self.bytes.get(self.at..self.at + n).ok_or(MessageError::Truncated)?;
        self.at += n;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8, MessageError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, MessageError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("taken to size")))
    }

    fn u32(&mut self) -> Result<u32, MessageError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("taken to size")))
    }

    fn u64(&mut self) -> Result<u64, MessageError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("taken to size")))
    }

    /// A name; `empty_ok`: the empty name (no node) is allowed.
    fn name(&mut self, empty_ok: bool) -> Result<String, MessageError> {
        let n = usize::from(self.u8()?);
        if n > MAX_NAME || (n == 0 && !empty_ok) {
            return Err(MessageError::BadName);
        }
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| MessageError::BadName)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_lookup::tag::{Tree, TzLabels, NO_PARENT};

    fn samples() -> Vec<Message> {
        let labels = TzLabels::build(&Tree::from_parents(vec![NO_PARENT, 0, 0, 1]).unwrap()).unwrap();
        vec![
            Message::Beacon(Beacon { tree: 1, root: "r1".into(), sender: "r3".into(), seq: 77, hops: 3 }),
            Message::Join(Join {
                tree: 0,
                entries: vec![
                    JoinEntry { node: "r2".into(), parent: "r1".into(), labels: 4 },
                    JoinEntry { node: "h1".into(), parent: "r2".into(), labels: 0 },
                ],
            }),
            Message::Labels(Labels {
                tree: 0,
                version: 4,
                node: "r2".into(),
                label: labels.label(1),
                router: *labels.router(1),
                neighbours: vec![String::new(), "h1".into(), "r1".into()],
            }),
            Message::Announce(Announce {
                tree: 0,
                role: Role::Provide,
                version: 9,
                part: 1,
                parts: 2,
                descriptors: vec![Descriptor::from_tags(["a"]).unwrap(), Descriptor::from_tags(["b", "c"]).unwrap()],
            }),
        ]
    }

    #[test]
    fn messages_round_trip() {
        for m in samples() {
            let mut bytes = m.encode().unwrap();
            assert_eq!(Message::parse(&bytes), Ok(m.clone()));
            bytes.extend_from_slice(&[0; 30]);
            assert_eq!(Message::parse(&bytes), Ok(m));
        }
    }

    #[test]
    fn bad_messages_are_typed_errors() {
        for m in samples() {
            let bytes = m.encode().unwrap();
            for cut in 0..bytes.len() {
                assert!(Message::parse(&bytes[..cut]).is_err(), "{m:?} cut at {cut}");
            }
            let mut trailing = bytes.clone();
            trailing.push(1);
            assert_eq!(Message::parse(&trailing), Err(MessageError::TrailingBytes(1)));
        }
        let long = Message::Beacon(Beacon { tree: 0, root: "x".repeat(33), sender: "y".into(), seq: 0, hops: 0 });
        assert_eq!(long.encode(), Err(MessageError::BadName));
        let big = Message::Announce(Announce {
            tree: 0,
            role: Role::Subscribe,
            version: 1,
            part: 0,
            parts: 1,
            descriptors: vec![Descriptor::from_tags(["a"]).unwrap(); 2 * DESCRIPTORS_PER_PART],
        });
        assert!(matches!(big.encode(), Err(MessageError::TooLong(_))));
        let mut part = samples()[3].encode().unwrap();
        part[9] = 5; // part 5 of 2
        assert_eq!(Message::parse(&part), Err(MessageError::BadAnnounce));
        assert_eq!(Message::parse(&[CONTROL_BYTE, 9, 0, 0]), Err(MessageError::BadType(9)));
        assert_eq!(Message::parse(&[0x11, 1, 0, 0]), Err(MessageError::NotControl));
    }
}
