//! The kernel as control plane: its routes and neighbours, as rtnetlink tells them, turned into
//! changes of the pipeline's FIB and neighbour table (as VPP's linux-cp and SONiC mirror them).
//!
//! # Overview
//! - [`Mirror::apply`] takes one rtnetlink message (from the dump at start or a notification
//!   after) and says what changed for the pipeline: a prefix's best route ([`Change::Route`]) or
//!   a neighbour ([`Change::Neighbour`]). It does no I/O: the socket is the runtime's.
//! - Routes come from the kernel's `local` table (its own addresses, broadcast and anycast:
//!   [`Via::Local`]) and `main` table (unicast through a gateway or onto a subnet, blackhole,
//!   unreachable and prohibit); other tables (policy routing) are not mirrored. A prefix may
//!   have several routes (tables, metrics): the kernel's choice — the local table first, then
//!   the lowest metric — is installed, and the next one takes over when it goes.
//! - A route out of an interface that is not one of the pipeline's ports is [`Via::Elsewhere`]
//!   (the kernel forwards what it matches). A multipath route uses its first path.
//! - A neighbour is usable in every state the kernel sends with (REACHABLE, STALE, DELAY,
//!   PROBE, PERMANENT, NOARP with a link-layer address); INCOMPLETE, FAILED and deletions take
//!   it away, so the pipeline hands the next packet to the kernel, which resolves it.

use std::collections::HashMap;
use std::net::IpAddr;

use netlink_packet_route::neighbour::{NeighbourAddress, NeighbourAttribute, NeighbourMessage, NeighbourState};
use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteMessage, RouteType};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};

use super::header::Mac;
use super::route::{Port, Prefix, Via};

/// The kernel's `local` routing table.
pub const TABLE_LOCAL: u32 = 255;
/// The kernel's `main` routing table.
pub const TABLE_MAIN: u32 = 254;

/// A change for the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The route to a prefix is now this via (`None`: no route).
    Route(Prefix, Option<Via>),
    /// A neighbour on a port is at this address (`None`: not known).
    Neighbour(Port, IpAddr, Option<Mac>),
}

/// One route of the kernel's to a prefix: its table, metric and via.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Candidate {
    table: u32,
    metric: u32,
    via: Via,
}

impl Candidate {
    /// The order the kernel prefers: the local table before main, then the lower metric.
    fn rank(&self) -> (bool, u32) {
        (self.table != TABLE_LOCAL, self.metric)
    }
}

/// The mirror's state: which interfaces are ports, and every route it was told of.
#[derive(Debug, Default)]
pub struct Mirror {
    ports: HashMap<u32, Port>,
    routes: HashMap<Prefix, Vec<Candidate>>,
}

impl Mirror {
    /// A mirror with no port yet.
    pub fn new() -> Mirror {
        Mirror::default()
    }

    /// Interface `ifindex` is port `port` (set before the dump).
    pub fn set_port(&mut self, ifindex: u32, port: Port) {
        self.ports.insert(ifindex, port);
    }

    /// Routes the mirror holds, all prefixes and candidates.
    pub fn routes(&self) -> usize {
        self.routes.values().map(Vec::len).sum()
    }

    /// What `msg` changes, appended to `out`; messages of no concern change nothing.
    pub fn apply(&mut self, msg: &RouteNetlinkMessage, out: &mut Vec<Change>) {
        match msg {
            RouteNetlinkMessage::NewRoute(r) => self.route(r, true, out),
            RouteNetlinkMessage::DelRoute(r) => self.route(r, false, out),
            RouteNetlinkMessage::NewNeighbour(n) => out.extend(self.neighbour(n, true)),
            RouteNetlinkMessage::DelNeighbour(n) => out.extend(self.neighbour(n, false)),
            _ => {}
        }
    }

    fn route(&mut self, r: &RouteMessage, added: bool, out: &mut Vec<Change>) {
        let Some((prefix, candidate)) = self.read_route(r) else { return };
        let list = self.routes.entry(prefix).or_default();
        let best_before = best(list);
        // A route is one per (table, metric): a new one replaces, a deletion removes it.
        list.retain(|c| (c.table, c.metric) != (candidate.table, candidate.metric));
        if added {
            list.push(candidate);
        }
        let best_after = best(list);
        if list.is_empty() {
            self.routes.remove(&prefix);
        }
        if best_before != best_after {
            out.push(Change::Route(prefix, best_after));
        }
    }

    /// The prefix and route `r` describes, if it is one the pipeline mirrors.
    fn read_route(&self, r: &RouteMessage) -> Option<(Prefix, Candidate)> {
        let h = &r.header;
        let mut table = u32::from(h.table);
        let (mut dst, mut gateway, mut oif, mut metric) = (None, None, None, 0);
        for a in &r.attributes {
            match a {
                RouteAttribute::Table(t) => table = *t,
                RouteAttribute::Destination(d) => dst = address(d),
                RouteAttribute::Gateway(g) => gateway = address(g),
                RouteAttribute::Oif(i) => oif = Some(*i),
                RouteAttribute::Priority(m) => metric = *m,
                RouteAttribute::MultiPath(paths) => {
                    if let Some(first) = paths.first() {
                        oif = oif.or(Some(first.interface_index));
                        gateway = gateway.or_else(|| {
                            first.attributes.iter().find_map(|a| match a {
                                RouteAttribute::Gateway(g) => address(g),
                                _ => None,
                            })
                        });
                    }
                }
                _ => {}
            }
        }
        if table != TABLE_MAIN && table != TABLE_LOCAL {
            return None;
        }
        let unspecified = match h.address_family {
            AddressFamily::Inet => IpAddr::from([0u8; 4]),
            AddressFamily::Inet6 => IpAddr::from([0u8; 16]),
            _ => return None,
        };
        let prefix = Prefix::new(dst.unwrap_or(unspecified), h.destination_prefix_length).ok()?;
        let on_port = |oif: Option<u32>| oif.and_then(|i| self.ports.get(&i).copied());
        let via = match h.kind {
            RouteType::Local | RouteType::Broadcast | RouteType::Anycast => Via::Local,
            RouteType::BlackHole => Via::Blackhole,
            RouteType::Unreachable | RouteType::Prohibit => Via::Unreachable,
            RouteType::Unicast => match (on_port(oif), gateway) {
                (Some(port), Some(addr)) => Via::Gateway { port, addr },
                (Some(port), None) => Via::Connected(port),
                (None, _) => Via::Elsewhere,
            },
            _ => return None,
        };
        Some((prefix, Candidate { table, metric, via }))
    }

    fn neighbour(&self, n: &NeighbourMessage, added: bool) -> Option<Change> {
        let port = *self.ports.get(&n.header.ifindex)?;
        let mut addr = None;
        let mut mac = None;
        for a in &n.attributes {
            match a {
                NeighbourAttribute::Destination(NeighbourAddress::Inet(a)) => addr = Some(IpAddr::V4(*a)),
                NeighbourAttribute::Destination(NeighbourAddress::Inet6(a)) => addr = Some(IpAddr::V6(*a)),
                NeighbourAttribute::LinkLayerAddress(l) => mac = <Mac>::try_from(l.as_slice()).ok(),
                _ => {}
            }
        }
        let usable = matches!(
            n.header.state,
            NeighbourState::Reachable
                | NeighbourState::Stale
                | NeighbourState::Delay
                | NeighbourState::Probe
                | NeighbourState::Permanent
                | NeighbourState::Noarp
        );
        let mac = if added && usable { mac } else { None };
        Some(Change::Neighbour(port, addr?, mac))
    }
}

fn best(list: &[Candidate]) -> Option<Via> {
    list.iter().min_by_key(|c| c.rank()).map(|c| c.via)
}

fn address(a: &RouteAddress) -> Option<IpAddr> {
    match a {
        RouteAddress::Inet(a) => Some(IpAddr::V4(*a)),
        RouteAddress::Inet6(a) => Some(IpAddr::V6(*a)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use netlink_packet_route::route::RouteHeader;

    use super::*;

    fn route(dst: IpAddr, len: u8, table: u8, kind: RouteType, attrs: Vec<RouteAttribute>) -> RouteMessage {
        let mut m = RouteMessage::default();
        m.header.address_family = if dst.is_ipv4() { AddressFamily::Inet } else { AddressFamily::Inet6 };
        m.header.destination_prefix_length = len;
        m.header.table = table;
        m.header.kind = kind;
        if len > 0 {
            m.attributes.push(RouteAttribute::Destination(dst.into()));
        }
        m.attributes.extend(attrs);
        m
    }

    fn v4(s: &str) -> IpAddr {
        IpAddr::V4(s.parse::<Ipv4Addr>().unwrap())
    }

    fn changes(m: &mut Mirror, msg: RouteNetlinkMessage) -> Vec<Change> {
        let mut out = Vec::new();
        m.apply(&msg, &mut out);
        out
    }

    fn mirror() -> Mirror {
        let mut m = Mirror::new();
        m.set_port(4, Port(0));
        m.set_port(5, Port(1));
        m
    }

    #[test]
    fn kernel_routes_become_vias() {
        let mut m = mirror();
        let main = RouteHeader::RT_TABLE_MAIN;
        let net: Prefix = "10.0.2.0/24".parse().unwrap();
        let got = changes(
            &mut m,
            RouteNetlinkMessage::NewRoute(route(v4("10.0.2.0"), 24, main, RouteType::Unicast, vec![RouteAttribute::Oif(5)])),
        );
        assert_eq!(got, [Change::Route(net, Some(Via::Connected(Port(1))))]);
        let gw = vec![RouteAttribute::Oif(4), RouteAttribute::Gateway(v4("10.0.1.2").into())];
        let got = changes(&mut m, RouteNetlinkMessage::NewRoute(route(v4("0.0.0.0"), 0, main, RouteType::Unicast, gw)));
        assert_eq!(got, [Change::Route("0.0.0.0/0".parse().unwrap(), Some(Via::Gateway { port: Port(0), addr: v4("10.0.1.2") }))]);
        let got =
            changes(&mut m, RouteNetlinkMessage::NewRoute(route(v4("10.0.1.1"), 32, 255, RouteType::Local, vec![RouteAttribute::Oif(4)])));
        assert_eq!(got, [Change::Route("10.0.1.1/32".parse().unwrap(), Some(Via::Local))]);
        let got = changes(
            &mut m,
            RouteNetlinkMessage::NewRoute(route(v4("192.0.2.0"), 24, main, RouteType::Unicast, vec![RouteAttribute::Oif(9)])),
        );
        assert_eq!(got, [Change::Route("192.0.2.0/24".parse().unwrap(), Some(Via::Elsewhere))], "not a port's");
        let got = changes(&mut m, RouteNetlinkMessage::NewRoute(route(v4("198.51.100.0"), 24, main, RouteType::BlackHole, vec![])));
        assert_eq!(got, [Change::Route("198.51.100.0/24".parse().unwrap(), Some(Via::Blackhole))]);
        let six = IpAddr::V6("2001:db8::".parse::<Ipv6Addr>().unwrap());
        let got = changes(&mut m, RouteNetlinkMessage::NewRoute(route(six, 32, main, RouteType::Unreachable, vec![])));
        assert_eq!(got, [Change::Route("2001:db8::/32".parse().unwrap(), Some(Via::Unreachable))]);
        // Another table, a multicast route: not mirrored.
        assert!(changes(
            &mut m,
            RouteNetlinkMessage::NewRoute(route(v4("10.9.0.0"), 16, 100, RouteType::Unicast, vec![RouteAttribute::Oif(4)]))
        )
        .is_empty());
        assert!(
            changes(
                &mut m,
                RouteNetlinkMessage::NewRoute(route(
                    v4("10.9.0.0"),
                    16,
                    200,
                    RouteType::Unicast,
                    vec![RouteAttribute::Table(254), RouteAttribute::Oif(4)]
                ))
            )
            .len()
                == 1,
            "the Table attribute wins"
        );
        assert!(changes(&mut m, RouteNetlinkMessage::NewRoute(route(v4("224.0.0.0"), 4, main, RouteType::Multicast, vec![]))).is_empty());
        let got = changes(
            &mut m,
            RouteNetlinkMessage::DelRoute(route(v4("10.0.2.0"), 24, main, RouteType::Unicast, vec![RouteAttribute::Oif(5)])),
        );
        assert_eq!(got, [Change::Route(net, None)]);
    }

    #[test]
    fn the_kernels_choice_among_a_prefixs_routes_is_installed() {
        let mut m = mirror();
        let main = RouteHeader::RT_TABLE_MAIN;
        let default: Prefix = "0.0.0.0/0".parse().unwrap();
        let via = |port: u32, gw: &str, metric: u32| {
            vec![RouteAttribute::Oif(port + 4), RouteAttribute::Gateway(v4(gw).into()), RouteAttribute::Priority(metric)]
        };
        let a = Via::Gateway { port: Port(0), addr: v4("10.0.1.2") };
        let b = Via::Gateway { port: Port(1), addr: v4("10.0.2.2") };
        let new = |r| RouteNetlinkMessage::NewRoute(r);
        assert_eq!(
            changes(&mut m, new(route(v4("0.0.0.0"), 0, main, RouteType::Unicast, via(0, "10.0.1.2", 200)))),
            [Change::Route(default, Some(a))]
        );
        assert_eq!(
            changes(&mut m, new(route(v4("0.0.0.0"), 0, main, RouteType::Unicast, via(1, "10.0.2.2", 100)))),
            [Change::Route(default, Some(b))]
        );
        assert!(
            changes(&mut m, new(route(v4("0.0.0.0"), 0, main, RouteType::Unicast, via(0, "10.0.1.2", 300)))).is_empty(),
            "not the best"
        );
        let del = |r| RouteNetlinkMessage::DelRoute(r);
        assert_eq!(
            changes(&mut m, del(route(v4("0.0.0.0"), 0, main, RouteType::Unicast, via(1, "10.0.2.2", 100)))),
            [Change::Route(default, Some(a))]
        );
        assert_eq!(m.routes(), 2);
    }

    #[test]
    fn neighbours_come_and_go_with_their_state() {
        let m = mirror();
        let mut n = NeighbourMessage::default();
        n.header.ifindex = 4;
        n.header.state = NeighbourState::Reachable;
        n.attributes.push(NeighbourAttribute::Destination(NeighbourAddress::Inet("10.0.1.2".parse().unwrap())));
        n.attributes.push(NeighbourAttribute::LinkLayerAddress(vec![2, 0, 0, 0, 0, 9]));
        assert_eq!(m.neighbour(&n, true), Some(Change::Neighbour(Port(0), v4("10.0.1.2"), Some([2, 0, 0, 0, 0, 9]))));
        n.header.state = NeighbourState::Stale;
        assert!(matches!(m.neighbour(&n, true), Some(Change::Neighbour(_, _, Some(_)))), "stale is still used");
        n.header.state = NeighbourState::Failed;
        assert_eq!(m.neighbour(&n, true), Some(Change::Neighbour(Port(0), v4("10.0.1.2"), None)));
        n.header.state = NeighbourState::Reachable;
        assert_eq!(m.neighbour(&n, false), Some(Change::Neighbour(Port(0), v4("10.0.1.2"), None)));
        n.header.ifindex = 9;
        assert_eq!(m.neighbour(&n, true), None, "not a port's");
    }
}
