//! The controller's state, sans-I/O: where every host is, and the control structure of every
//! switch's FIB, with the update messages each change makes.
//!
//! # Overview
//! - A switch that connects reports its interfaces ([`Fabric::connected`]). Its FIB is built
//!   then, from every host known: a host behind the switch gets its edge port, any other the
//!   port toward the host's switch on the shortest path ([`super::paths`]). It is sent whole,
//!   with the ports' roles (flood tree, edge) — a [`SwitchSync`].
//! - A host seen where the controller does not have it ([`Fabric::packet_in`]: a switch's
//!   report of a source address on an edge port) is placed there: installed, or moved, in the
//!   FIB of every connected switch.
//! - [`Fabric::take_messages`] gives each switch what changed in its FIB since the last call,
//!   the paper's update message: the changed cells while the structure keeps its shape, the
//!   whole structure after a rebuild. Changes between two calls go in one message per switch.

use hashbrown::HashMap;
use nexthop_lookup::flat::{Delta, FlatError, Othello, Patch};
use nexthop_router::l2::PortRole;

use super::paths;
use super::topology::{PortRef, Topology};
use crate::switch_fib::{fib_config, FibCell};

/// What a switch is sent when it connects (or asks again): its ports' roles and its whole FIB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSync {
    /// One role per interface, in the switch's order.
    pub roles: Vec<PortRole>,
    /// The query structure's bytes.
    pub structure: Vec<u8>,
    /// Hosts in it.
    pub hosts: usize,
}

/// An update message for one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Cells of the structure it has.
    Patch(Patch<FibCell>),
    /// A whole new structure.
    Structure(Vec<u8>),
}

/// Why a switch is not taken on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    /// The topology names an interface the switch does not have.
    #[error("switch {switch} has no interface {interface:?} (the topology file names it)")]
    MissingInterface {
        /// The switch's name.
        switch: String,
        /// The interface.
        interface: String,
    },
    /// More interfaces than a FIB cell can number.
    #[error("switch {switch} has {ports} interfaces; a FIB cell numbers at most {max}")]
    TooManyPorts {
        /// The switch's name.
        switch: String,
        /// Its interfaces.
        ports: usize,
        /// The most.
        max: usize,
    },
    /// Its FIB could not be built.
    #[error("switch {switch}: {error}")]
    Fib {
        /// The switch's name.
        switch: String,
        /// Why.
        error: FlatError,
    },
}

/// A connected switch.
#[derive(Debug)]
struct Managed {
    interfaces: Vec<String>,
    fib: Othello<FibCell>,
    roles: Vec<PortRole>,
}

/// Where a host was placed, and from where: what [`Fabric::packet_in`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Where it is now.
    pub at: PortRef,
    /// Where it was (`None`: new).
    pub was: Option<PortRef>,
}

/// The controller's state (see the module overview).
#[derive(Debug)]
pub struct Fabric {
    topology: Topology,
    /// `next[t][d]`: the link switch t sends on toward switch d.
    next: Vec<Vec<Option<usize>>>,
    on_tree: Vec<bool>,
    switches: Vec<Option<Managed>>,
    hosts: HashMap<[u8; 6], PortRef>,
    /// Switches whose FIB changed since [`Fabric::take_messages`].
    changed: Vec<bool>,
}

impl Fabric {
    /// The state of `topology` before any switch connects: its hosts known, its paths computed.
    pub fn new(topology: Topology) -> Fabric {
        let pairs: Vec<(usize, usize)> = topology.links.iter().map(|(a, b)| (a.switch, b.switch)).collect();
        let n = topology.switches.len();
        let hosts = topology.hosts.iter().map(|h| (h.mac, h.at.clone())).collect();
        Fabric {
            next: paths::next_hops(n, &pairs),
            on_tree: paths::flood_tree(n, &pairs),
            switches: (0..n).map(|_| None).collect(),
            hosts,
            changed: vec![false; n],
            topology,
        }
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Hosts known.
    pub fn hosts(&self) -> usize {
        self.hosts.len()
    }

    /// Where a host is.
    pub fn host(&self, mac: &[u8; 6]) -> Option<&PortRef> {
        self.hosts.get(mac)
    }

    /// Whether switch `s` is connected.
    pub fn is_connected(&self, s: usize) -> bool {
        self.switches[s].is_some()
    }

    /// Switch `s` connected with these interfaces (in its port order): its roles and FIB.
    ///
    /// # Errors
    /// An interface the topology names is missing, too many interfaces, a FIB that could not
    /// be built: the switch is not taken on.
    pub fn connected(&mut self, s: usize, interfaces: &[String]) -> Result<SwitchSync, FabricError> {
        self.switches[s] = None;
        let name = &self.topology.switches[s].name;
        let max = 1usize << crate::switch_fib::PORT_BITS;
        if interfaces.len() > max {
            return Err(FabricError::TooManyPorts { switch: name.clone(), ports: interfaces.len(), max });
        }
        let named = (self.topology.links.iter().flat_map(|(a, b)| [a, b]))
            .chain(self.topology.hosts.iter().map(|h| &h.at))
            .filter(|p| p.switch == s);
        for p in named {
            if !interfaces.contains(&p.interface) {
                return Err(FabricError::MissingInterface { switch: name.clone(), interface: p.interface.clone() });
            }
        }
        let roles = (interfaces.iter())
            .map(|i| match self.topology.link_of(&PortRef { switch: s, interface: i.clone() }) {
                Some(l) => PortRole { flood: self.on_tree[l], edge: false },
                None => PortRole { flood: true, edge: true },
            })
            .collect();
        let entries: Vec<([u8; 6], u32)> =
            self.hosts.iter().filter_map(|(mac, at)| Some((*mac, self.action(interfaces, s, at)?))).collect();
        let mut fib = Othello::construct(fib_config(), entries.iter().map(|(m, a)| (&m[..], *a)))
            .map_err(|error| FabricError::Fib { switch: name.clone(), error })?;
        let _ = fib.take_delta(); // sent whole
        let sync = SwitchSync { roles, structure: fib.query().to_bytes(), hosts: fib.len() };
        self.switches[s] = Some(Managed { interfaces: interfaces.to_vec(), fib, roles: sync.roles.clone() });
        self.changed[s] = false;
        Ok(sync)
    }

    /// Switch `s` went away: nothing is sent to it until it connects again.
    pub fn disconnected(&mut self, s: usize) {
        self.switches[s] = None;
        self.changed[s] = false;
    }

    /// Switch `s`'s roles and whole FIB again (it refused a patch: it missed one); `None` when
    /// it is not connected.
    pub fn resync(&mut self, s: usize) -> Option<SwitchSync> {
        let m = self.switches[s].as_mut()?;
        let _ = m.fib.take_delta();
        self.changed[s] = false;
        Some(SwitchSync { roles: m.roles.clone(), structure: m.fib.query().to_bytes(), hosts: m.fib.len() })
    }

    /// The port of switch `s` (its `interfaces`) that frames to a host at `at` leave by;
    /// `None`: it does not reach the host's switch.
    fn action(&self, interfaces: &[String], s: usize, at: &PortRef) -> Option<u32> {
        let interface = if at.switch == s {
            &at.interface
        } else {
            let (a, b) = &self.topology.links[self.next[s][at.switch]?];
            if a.switch == s {
                &a.interface
            } else {
                &b.interface
            }
        };
        interfaces.iter().position(|i| i == interface).map(|p| p as u32)
    }

    /// Switch `s` saw host `mac` on its port `port`: placed there if it is an edge port and
    /// the host was elsewhere (or unknown). Returns what was done (`None`: nothing to do).
    pub fn packet_in(&mut self, s: usize, mac: [u8; 6], port: u32) -> Option<Placed> {
        let m = self.switches[s].as_ref()?;
        let interface = m.interfaces.get(port as usize)?;
        if !m.roles[port as usize].edge || mac[0] & 1 != 0 {
            return None;
        }
        let at = PortRef { switch: s, interface: interface.clone() };
        if self.hosts.get(&mac) == Some(&at) {
            return None;
        }
        let was = self.hosts.insert(mac, at.clone());
        for t in 0..self.switches.len() {
            let Some(m) = self.switches[t].as_ref() else { continue };
            let action = self.action(&m.interfaces, t, &at);
            let m = self.switches[t].as_mut().expect("connected");
            let done = match (action, m.fib.get(&mac).is_some()) {
                (Some(a), true) => m.fib.alter(&mac, a),
                (Some(a), false) => m.fib.add(&mac, a),
                (None, true) => m.fib.delete(&mac),
                (None, false) => continue,
            };
            match done {
                Ok(()) => self.changed[t] = true,
                Err(e) => tracing::warn!("controller: host not placed in {}'s FIB: {e}", self.topology.switches[t].name),
            }
        }
        Some(Placed { at, was })
    }

    /// Each connected switch's update message for what changed since the last call.
    pub fn take_messages(&mut self) -> Vec<(usize, Message)> {
        let mut out = Vec::new();
        for (s, changed) in self.changed.iter_mut().enumerate() {
            if !std::mem::take(changed) {
                continue;
            }
            if let Some(m) = self.switches[s].as_mut() {
                out.push((
                    s,
                    match m.fib.take_delta() {
                        Delta::Patch(p) => Message::Patch(p),
                        Delta::Rebuilt(q) => Message::Structure(q.to_bytes()),
                    },
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use nexthop_lookup::flat::OthelloQuery;

    use super::*;
    use crate::controller::topology::Topology;

    /// s1 — s2 — s3, hosts h1 on s1 (known), others learned; switch interfaces in this order.
    const LINE: &str = r#"
        [[switch]]
        name = "s1"
        control = "unix:/s1"
        [[switch]]
        name = "s2"
        control = "unix:/s2"
        [[switch]]
        name = "s3"
        control = "unix:/s3"
        [[link]]
        a = "s1:s1s2"
        b = "s2:s2s1"
        [[link]]
        a = "s2:s2s3"
        b = "s3:s3s2"
        [[host]]
        mac = "02:00:00:00:00:01"
        at = "s1:h1"
    "#;

    fn interfaces(s: usize) -> Vec<String> {
        let names: &[&str] = match s {
            0 => &["h1", "s1s2"],
            1 => &["s2s1", "h2", "s2s3"],
            _ => &["s3s2", "h3", "h4"],
        };
        names.iter().map(|n| n.to_string()).collect()
    }

    fn mac(i: u8) -> [u8; 6] {
        [2, 0, 0, 0, 0, i]
    }

    /// The fabric with every switch connected, and the query structures they were sent.
    fn line() -> (Fabric, Vec<OthelloQuery<FibCell>>) {
        let mut f = Fabric::new(Topology::parse(LINE).unwrap());
        let q = (0..3).map(|s| OthelloQuery::from_bytes(&f.connected(s, &interfaces(s)).unwrap().structure).unwrap()).collect();
        (f, q)
    }

    fn deliver(f: &mut Fabric, q: &mut [OthelloQuery<FibCell>]) {
        for (s, m) in f.take_messages() {
            match m {
                Message::Patch(p) => q[s].apply(&p).unwrap(),
                Message::Structure(b) => q[s] = OthelloQuery::from_bytes(&b).unwrap(),
            }
        }
    }

    #[test]
    fn known_hosts_are_in_every_fib_along_shortest_paths_and_roles_follow_the_tree() {
        let mut f = Fabric::new(Topology::parse(LINE).unwrap());
        let sync = f.connected(1, &interfaces(1)).unwrap();
        let edge = PortRole { flood: true, edge: true };
        let link = PortRole { flood: true, edge: false };
        assert_eq!(sync.roles, [link, edge, link]);
        let q = OthelloQuery::<FibCell>::from_bytes(&sync.structure).unwrap();
        assert_eq!(q.lookup_checked(&mac(1)), Some(0), "s2 sends toward s1 on s2s1");
        let s3 = OthelloQuery::<FibCell>::from_bytes(&f.connected(2, &interfaces(2)).unwrap().structure).unwrap();
        assert_eq!(s3.lookup_checked(&mac(1)), Some(0));
    }

    #[test]
    fn a_learned_host_is_installed_everywhere_and_a_moved_one_moved() {
        let (mut f, mut q) = line();
        assert_eq!(f.packet_in(2, mac(4), 2), Some(Placed { at: PortRef { switch: 2, interface: "h4".into() }, was: None }));
        deliver(&mut f, &mut q);
        assert_eq!([0, 1, 2].map(|s| q[s].lookup_checked(&mac(4))), [Some(1), Some(2), Some(2)]);
        assert_eq!(f.packet_in(2, mac(4), 2), None, "already there");
        assert_eq!(f.take_messages(), []);
        // h1 moves from s1 to s3's h3 port.
        let placed = f.packet_in(2, mac(1), 1).unwrap();
        assert_eq!(placed.was, Some(PortRef { switch: 0, interface: "h1".into() }));
        deliver(&mut f, &mut q);
        assert_eq!([0, 1, 2].map(|s| q[s].lookup_checked(&mac(1))), [Some(1), Some(2), Some(1)]);
        // Reports from a link port or of a group address do nothing.
        assert_eq!(f.packet_in(1, mac(9), 0), None);
        assert_eq!(f.packet_in(1, [1, 0, 0x5e, 0, 0, 1], 1), None);
        assert_eq!(f.packet_in(1, mac(9), 7), None);
    }

    #[test]
    fn a_switch_missing_an_interface_is_refused_and_one_reconnected_gets_every_host() {
        let (mut f, _) = line();
        assert_eq!(
            f.connected(0, &["h1".to_string()]),
            Err(FabricError::MissingInterface { switch: "s1".into(), interface: "s1s2".into() })
        );
        assert!(!f.is_connected(0));
        f.packet_in(1, mac(2), 1).unwrap();
        assert_eq!(f.take_messages().iter().map(|m| m.0).collect::<Vec<_>>(), [1, 2], "s1 is not connected");
        let q = OthelloQuery::<FibCell>::from_bytes(&f.connected(0, &interfaces(0)).unwrap().structure).unwrap();
        assert_eq!((q.lookup_checked(&mac(1)), q.lookup_checked(&mac(2))), (Some(0), Some(1)));
    }

    #[test]
    fn many_hosts_move_in_one_message_per_switch_and_resync_sends_the_same_fib() {
        let (mut f, mut q) = line();
        // Host i on s1's h1, s2's h2 or s3's h3: s2 sends it out of port i % 3.
        for i in 0..200u8 {
            let (s, port) = [(0, 0), (1, 1), (2, 1)][usize::from(i % 3)];
            f.packet_in(s, [2, 1, 0, 0, 0, i], port).unwrap();
        }
        let messages = f.take_messages();
        assert_eq!(messages.len(), 3);
        for (s, m) in messages {
            match m {
                Message::Patch(p) => q[s].apply(&p).unwrap(),
                Message::Structure(b) => q[s] = OthelloQuery::from_bytes(&b).unwrap(),
            }
        }
        let again = OthelloQuery::<FibCell>::from_bytes(&f.resync(1).unwrap().structure).unwrap();
        for i in 0..200u8 {
            let want = u32::from(i % 3);
            assert_eq!(q[1].lookup_checked(&[2, 1, 0, 0, 0, i]), Some(want), "host {i}");
            assert_eq!(again.lookup_checked(&[2, 1, 0, 0, 0, i]), Some(want));
        }
    }
}
