//! The controller's topology file (TOML): the switches and their control addresses, the links
//! between them, and hosts known before they send.
//!
//! ```toml
//! [[switch]]
//! name = "s1"
//! control = "unix:/run/nexthop/s1.sock"   # the switch's [switch] control
//!
//! [[switch]]
//! name = "s2"
//! control = "127.0.0.1:50052"
//!
//! [[link]]                 # an interface of one switch cabled to one of another
//! a = "s1:s1-s2"
//! b = "s2:s2-s1"
//!
//! [[host]]                 # optional: the rest are learned from their first frame
//! mac = "02:00:00:00:00:01"
//! at = "s1:h1"
//! ```
//!
//! A port is `switch:interface`. Every interface of a switch that is not in a link is an edge
//! port: hosts are behind it. The flood tree is rooted at the first switch.

use hashbrown::HashSet;
use serde::Deserialize;

use crate::address::ControlAddress;

/// One switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSpec {
    /// Its name in the file.
    pub name: String,
    /// Where its control channel listens.
    pub control: ControlAddress,
}

/// An interface of a switch, by the switch's place in [`Topology::switches`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortRef {
    /// The switch.
    pub switch: usize,
    /// The interface's name.
    pub interface: String,
}

/// A host known in advance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// Its MAC address.
    pub mac: [u8; 6],
    /// Where it is.
    pub at: PortRef,
}

/// The network a controller manages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// The switches (the first is the flood tree's root).
    pub switches: Vec<SwitchSpec>,
    /// The links, each with its two ends.
    pub links: Vec<(PortRef, PortRef)>,
    /// Hosts known in advance.
    pub hosts: Vec<HostSpec>,
}

/// What is wrong with a topology file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// Not TOML of this shape.
    #[error("{0}")]
    Syntax(String),
    /// No switch.
    #[error("no [[switch]]")]
    NoSwitch,
    /// Two switches of one name.
    #[error("switch {0:?} given twice")]
    DuplicateSwitch(String),
    /// A switch's control address does not parse.
    #[error("switch {name:?}: {why}")]
    BadControl {
        /// The switch.
        name: String,
        /// Why.
        why: String,
    },
    /// A port that is not `switch:interface` of a switch in the file.
    #[error("{0:?} is not a port: switch:interface, of a [[switch]] in the file")]
    BadPort(String),
    /// An interface in two links, or a link from a switch to itself.
    #[error("{0:?} is cabled twice, or to its own switch")]
    PortTwice(String),
    /// A host's address does not parse.
    #[error("{0:?} is not a MAC address")]
    BadMac(String),
    /// A host on an interface that is cabled to a switch.
    #[error("host {mac} at {at:?}: that interface is a link")]
    HostOnLink {
        /// The host.
        mac: String,
        /// Its port.
        at: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    switch: Vec<SwitchEntry>,
    #[serde(default)]
    link: Vec<LinkEntry>,
    #[serde(default)]
    host: Vec<HostEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SwitchEntry {
    name: String,
    control: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkEntry {
    a: String,
    b: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostEntry {
    mac: String,
    at: String,
}

impl Topology {
    /// Reads a topology file's text.
    ///
    /// # Errors
    /// [`TopologyError`], naming what is wrong.
    pub fn parse(text: &str) -> Result<Topology, TopologyError> {
        let file: File = toml::from_str(text).map_err(|e| TopologyError::Syntax(e.to_string()))?;
        if file.switch.is_empty() {
            return Err(TopologyError::NoSwitch);
        }
        let mut switches: Vec<SwitchSpec> = Vec::new();
        for s in file.switch {
            if switches.iter().any(|t| t.name == s.name) {
                return Err(TopologyError::DuplicateSwitch(s.name));
            }
            let control = s
                .control
                .parse()
                .map_err(|e: crate::address::BadAddress| TopologyError::BadControl { name: s.name.clone(), why: e.to_string() })?;
            switches.push(SwitchSpec { name: s.name, control });
        }
        let port = |text: &str| -> Result<PortRef, TopologyError> {
            let bad = || TopologyError::BadPort(text.to_string());
            let (name, interface) = text.split_once(':').ok_or_else(bad)?;
            let switch = switches.iter().position(|s| s.name == name).ok_or_else(bad)?;
            if interface.is_empty() {
                return Err(bad());
            }
            Ok(PortRef { switch, interface: interface.to_string() })
        };
        let mut cabled = HashSet::new();
        let mut links = Vec::new();
        for l in &file.link {
            let (a, b) = (port(&l.a)?, port(&l.b)?);
            if a.switch == b.switch {
                return Err(TopologyError::PortTwice(l.a.clone()));
            }
            for (p, text) in [(&a, &l.a), (&b, &l.b)] {
                if !cabled.insert(p.clone()) {
                    return Err(TopologyError::PortTwice(text.clone()));
                }
            }
            links.push((a, b));
        }
        let mut hosts = Vec::new();
        for h in &file.host {
            let mac = nexthop_router::l2::hosts_file::parse_mac(&h.mac).ok_or_else(|| TopologyError::BadMac(h.mac.clone()))?;
            let at = port(&h.at)?;
            if cabled.contains(&at) {
                return Err(TopologyError::HostOnLink { mac: h.mac.clone(), at: h.at.clone() });
            }
            hosts.push(HostSpec { mac, at });
        }
        Ok(Topology { switches, links, hosts })
    }

    /// The link an interface is cabled to, if any.
    pub fn link_of(&self, port: &PortRef) -> Option<usize> {
        self.links.iter().position(|(a, b)| a == port || b == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"
        [[switch]]
        name = "s1"
        control = "unix:/tmp/s1.sock"
        [[switch]]
        name = "s2"
        control = "127.0.0.1:50052"
        [[link]]
        a = "s1:s1-s2"
        b = "s2:s2-s1"
        [[host]]
        mac = "02:00:00:00:00:01"
        at = "s1:h1"
    "#;

    #[test]
    fn a_line_of_two_switches_reads() {
        let t = Topology::parse(LINE).unwrap();
        assert_eq!(t.switches.len(), 2);
        assert_eq!(t.switches[1].control, "127.0.0.1:50052".parse().unwrap());
        assert_eq!(t.links, [(PortRef { switch: 0, interface: "s1-s2".into() }, PortRef { switch: 1, interface: "s2-s1".into() })]);
        assert_eq!(t.hosts, [HostSpec { mac: [2, 0, 0, 0, 0, 1], at: PortRef { switch: 0, interface: "h1".into() } }]);
        assert_eq!(t.link_of(&PortRef { switch: 1, interface: "s2-s1".into() }), Some(0));
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (LINE.replace("s2:s2-s1", "s3:x"), TopologyError::BadPort("s3:x".into())),
            (LINE.replace("s2:s2-s1", "s1:x"), TopologyError::PortTwice("s1:s1-s2".into())),
            (LINE.replace("s1:h1", "s1:s1-s2"), TopologyError::HostOnLink { mac: "02:00:00:00:00:01".into(), at: "s1:s1-s2".into() }),
            (LINE.replace("02:00:00:00:00:01", "02:00"), TopologyError::BadMac("02:00".into())),
            (LINE.replace("name = \"s2\"", "name = \"s1\""), TopologyError::DuplicateSwitch("s1".into())),
            ("".to_string(), TopologyError::NoSwitch),
        ];
        for (text, want) in cases {
            assert_eq!(Topology::parse(&text), Err(want));
        }
        assert!(matches!(Topology::parse(&LINE.replace("127.0.0.1:50052", "nowhere")), Err(TopologyError::BadControl { .. })));
        assert!(matches!(Topology::parse("[[switch]]\nname = 1"), Err(TopologyError::Syntax(_))));
    }
}
