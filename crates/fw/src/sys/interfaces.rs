//! The host's network interfaces, for the multicast and Ethernet faces: with a UDP multicast
//! group set and no interfaces listed, a multicast face is made on every interface that is up,
//! can multicast and is not loopback, as NFD does by default (`face_system.udp`,
//! `whitelist { * }`) — on each of its IPv4 addresses for the IPv4 group, on its IPv6 link-local
//! address for the IPv6 one. Lists of rules to include and to exclude (names, name patterns,
//! addresses, subnets, Ethernet addresses: [`InterfaceRules`], NFD's `whitelist` and
//! `blacklist`) narrow or widen that choice.
//!
//! The Ethernet faces' interfaces are chosen the same way, among every interface with an
//! Ethernet address, whether or not it has an IP address.
//!
//! [`interface_addresses`] and [`addresses_and_links`] (with the link-layer entries) read the
//! kernel's list (`getifaddrs`);
//! [`udp_v4`], [`udp_v6`] and [`ether`] are the choice, on plain data.

use std::ffi::CStr;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::face::interface_rule::{Interface, InterfaceRule, InterfaceRules, Listed};
use crate::face::uri::{FaceUri, FaceUriError};

/// One address of an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceAddr {
    /// The interface's name (`eth0`).
    pub name: String,
    /// Its index (an IPv6 link-local address's scope).
    pub index: u32,
    /// Its `IFF_*` flags.
    pub flags: u32,
    /// Its hardware address, if it is a 6-byte (Ethernet) one.
    pub mac: Option<[u8; 6]>,
    /// The address.
    pub address: IpAddr,
}

impl InterfaceAddr {
    fn has(&self, flag: libc::c_int) -> bool {
        self.flags & flag as u32 != 0
    }

    /// Up, able to multicast, not loopback.
    fn multicasts(&self) -> bool {
        self.has(libc::IFF_UP) && self.has(libc::IFF_MULTICAST) && !self.has(libc::IFF_LOOPBACK)
    }
}

/// One interface as the link layer sees it, whether or not it has an IP address (Ethernet
/// faces need none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkInterface {
    /// The interface's name (`eth0`).
    pub name: String,
    /// Its index.
    pub index: u32,
    /// Its `IFF_*` flags.
    pub flags: u32,
    /// Its hardware address, if it is a 6-byte (Ethernet) one.
    pub mac: Option<[u8; 6]>,
}

impl LinkInterface {
    fn has(&self, flag: libc::c_int) -> bool {
        self.flags & flag as u32 != 0
    }
}

/// The kernel's interface list (`getifaddrs`, read once): its IPv4 and IPv6 addresses, and its
/// link-layer (`AF_PACKET`) entries, one per interface.
///
/// # Errors
/// `getifaddrs` failed.
pub fn addresses_and_links() -> io::Result<(Vec<InterfaceAddr>, Vec<LinkInterface>)> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes the head of a list it allocates through the pointer, which points
    // at a live local; on failure it writes nothing and returns -1.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let (mut addresses, mut links) = (Vec::new(), Vec::new());
    let mut node = head;
    while !node.is_null() {
        // SAFETY: `node` is a node of the list getifaddrs returned, which stays allocated until
        // freeifaddrs below.
        let ifa = unsafe { &*node };
        node = ifa.ifa_next;
        // SAFETY: a non-null ifa_addr points at a sockaddr of the list.
        let Some(family) = (unsafe { ifa.ifa_addr.as_ref() }).map(|a| i32::from(a.sa_family)) else { continue };
        // SAFETY: ifa_name is a NUL-terminated string of the list, alive until freeifaddrs.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) };
        // SAFETY: if_nametoindex reads the NUL-terminated name and returns 0 if unknown.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        let (name, flags) = (name.to_string_lossy().into_owned(), ifa.ifa_flags);
        match family {
            libc::AF_INET => {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let sin = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in>() };
                let address = IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
                addresses.push(InterfaceAddr { name, index, flags, mac: None, address });
            }
            libc::AF_INET6 => {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in6>() };
                addresses.push(InterfaceAddr {
                    name,
                    index,
                    flags,
                    mac: None,
                    address: IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)),
                });
            }
            libc::AF_PACKET => {
                // SAFETY: an AF_PACKET address is a sockaddr_ll.
                let sll = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_ll>() };
                let mac = (sll.sll_halen == 6).then(|| core::array::from_fn(|i| sll.sll_addr[i]));
                links.push(LinkInterface { name, index, flags, mac });
            }
            _ => {}
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once, after the last use of its nodes.
    unsafe { libc::freeifaddrs(head) };
    for a in &mut addresses {
        a.mac = links.iter().find(|l| l.name == a.name).and_then(|l| l.mac);
    }
    Ok((addresses, links))
}

/// The index of interface `name`, if this host has it.
pub fn index_of(name: &str) -> Option<u32> {
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: if_nametoindex reads the NUL-terminated name and returns 0 if unknown.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    (index != 0).then_some(index)
}

/// [`FaceUri::parse_with`] this host's interfaces: an IPv6 zone may name one (`[fe80::1%eth0]`,
/// or `%25eth0` as NFD writes it).
///
/// # Errors
/// [`FaceUriError`] naming the problem (a zone that names no interface among them).
pub fn parse_face_uri(uri: &str) -> Result<FaceUri, FaceUriError> {
    FaceUri::parse_with(uri, index_of)
}

/// [`parse_face_uri`], with a host name where an IP address goes (`udp4://hub.example.net`,
/// `tcp://localhost:6363`) looked up as nfdc canonizes a FaceUri before it asks for a
/// face (NFD itself takes addresses only): the first address the resolver gives of the
/// scheme's family — IPv4 for `tcp4`/`udp4`, IPv6 for `tcp6`/`udp6`, either for `tcp`,
/// `udp` and `ws`. This blocks while the name is looked up: for operators' tools and
/// configuration, not for the data plane.
///
/// # Errors
/// [`FaceUriError`]: what [`parse_face_uri`] refuses, or a name with no address of that
/// family.
pub fn resolve_face_uri(uri: &str) -> Result<FaceUri, FaceUriError> {
    let parsed = parse_face_uri(uri);
    let err = |why| FaceUriError { uri: uri.to_string(), why };
    let Some((scheme, rest)) = uri.split_once("://") else { return parsed };
    let family = match scheme {
        "tcp4" | "udp4" => Some(false),
        "tcp6" | "udp6" => Some(true),
        "tcp" | "udp" | "ws" | "wsclient" => None,
        _ => return parsed,
    };
    // Only a name, with a port or not, is looked up: an address (an IPv6 one bracketed or
    // bare) parses, or fails, as it is.
    if parsed.is_ok() || rest.contains(['[', ']', '/']) || rest.matches(':').count() > 1 {
        return parsed;
    }
    let (host, port) = match rest.split_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().map_err(|_| err("port must be a number"))?),
        None => (rest, 6363),
    };
    if host.is_empty() {
        return parsed;
    }
    let addrs = std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map_err(|_| err("host name not found"))?;
    let addr = addrs
        .into_iter()
        .find(|a| family.is_none_or(|v6| a.is_ipv6() == v6))
        .ok_or_else(|| err("host name has no address of the scheme's IP version"))?;
    let canonical = format!("{scheme}://{}", SocketAddr::new(addr.ip(), port));
    parse_face_uri(&canonical).map_err(|e| FaceUriError { uri: uri.to_string(), why: e.why })
}

/// Every IPv4 and IPv6 address of every interface of this host.
///
/// # Errors
/// `getifaddrs` failed.
pub fn interface_addresses() -> io::Result<Vec<InterfaceAddr>> {
    Ok(addresses_and_links()?.0)
}

/// The interfaces of `addresses`, once each in the order listed, with all their addresses.
fn grouped(addresses: &[InterfaceAddr]) -> Vec<(&InterfaceAddr, Vec<IpAddr>)> {
    let mut out: Vec<(&InterfaceAddr, Vec<IpAddr>)> = Vec::new();
    for a in addresses {
        match out.iter_mut().find(|(i, _)| i.name == a.name) {
            Some((_, all)) => all.push(a.address),
            None => out.push((a, vec![a.address])),
        }
    }
    out
}

/// The rules' view of an interface.
fn view<'a>(i: &'a InterfaceAddr, all: &'a [IpAddr]) -> Interface<'a> {
    Interface { name: &i.name, mac: i.mac, addresses: all, multicasts: i.multicasts() }
}

/// The IPv4 addresses an IPv4 multicast face is made on, one face each, as `rules` choose them
/// among `interfaces`' addresses (see [`InterfaceRules`]), each with whether a rule named it
/// exactly. An exact address on no interface is chosen too (joining the group there fails and
/// says so).
///
/// # Errors
/// A plain name of an interface with no IPv4 address.
pub fn udp_v4(interfaces: &[InterfaceAddr], rules: &InterfaceRules) -> Result<Vec<(Ipv4Addr, Listed)>, String> {
    let mut out = Vec::new();
    for (i, all) in grouped(interfaces) {
        for &a in &all {
            if let (IpAddr::V4(v4), Some(listed)) = (a, rules.choose(&view(i, &all), Some(a))) {
                out.push((v4, listed));
            }
        }
    }
    for rule in rules.exact() {
        match *rule {
            InterfaceRule::Address(a @ IpAddr::V4(v4)) if !interfaces.iter().any(|i| i.address == a) => {
                let nowhere = Interface { name: "", mac: None, addresses: &[a], multicasts: false };
                out.extend(rules.choose(&nowhere, Some(a)).map(|listed| (v4, listed)));
            }
            InterfaceRule::Name(ref name) if !interfaces.iter().any(|i| &i.name == name && i.address.is_ipv4()) => {
                return Err(format!("{name:?} is neither an IPv4 address nor an interface with one"));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The interfaces an IPv6 multicast face is made on, as (index, link-local address, whether a
/// rule named it exactly): those `rules` choose (see [`InterfaceRules`]) that have a link-local
/// address, on the first one each.
///
/// # Errors
/// A plain name of an interface with no IPv6 link-local address.
pub fn udp_v6(interfaces: &[InterfaceAddr], rules: &InterfaceRules) -> Result<Vec<(u32, Ipv6Addr, Listed)>, String> {
    // The interfaces with a link-local address, with their first one.
    let candidates: Vec<(&InterfaceAddr, Vec<IpAddr>, Ipv6Addr)> = grouped(interfaces)
        .into_iter()
        .filter_map(|(i, all)| {
            let link_local = all.iter().find_map(|a| match a {
                IpAddr::V6(a) if a.is_unicast_link_local() => Some(*a),
                _ => None,
            })?;
            Some((i, all, link_local))
        })
        .collect();
    exact_rules_exist(rules, "an IPv6 link-local address", |rule| candidates.iter().any(|(i, all, _)| rule.picks(&view(i, all), None)))?;
    Ok(candidates.iter().filter_map(|(i, all, a)| rules.choose(&view(i, all), None).map(|listed| (i.index, *a, listed))).collect())
}

/// The interfaces Ethernet faces go on (one port each), with whether a rule named each exactly:
/// those `rules` choose (see [`InterfaceRules`]; `addresses` are for address and subnet rules)
/// that have an Ethernet address and are not loopback (whose all-zero address is not one).
///
/// # Errors
/// A plain name of an interface that is not there or has no Ethernet address.
pub fn ether<'a>(
    interfaces: &'a [LinkInterface],
    addresses: &[InterfaceAddr],
    rules: &InterfaceRules,
) -> Result<Vec<(&'a LinkInterface, Listed)>, String> {
    // The interfaces with an Ethernet address (loopback's all-zero one is none), with their IP
    // addresses.
    let candidates: Vec<(&LinkInterface, Vec<IpAddr>)> = interfaces
        .iter()
        .filter(|i| i.mac.is_some() && !i.has(libc::IFF_LOOPBACK))
        .map(|i| (i, addresses.iter().filter(|a| a.name == i.name).map(|a| a.address).collect()))
        .collect();
    exact_rules_exist(rules, "an Ethernet address", |rule| candidates.iter().any(|(i, all)| rule.picks(&link_view(i, all), None)))?;
    Ok(candidates.iter().filter_map(|&(i, ref all)| rules.choose(&link_view(i, all), None).map(|listed| (i, listed))).collect())
}

/// The rules' view of a link-layer interface with its IP addresses `all`.
fn link_view<'a>(i: &'a LinkInterface, all: &'a [IpAddr]) -> Interface<'a> {
    Interface { name: &i.name, mac: i.mac, addresses: all, multicasts: i.has(libc::IFF_UP) && i.has(libc::IFF_MULTICAST) }
}

/// Checks that each exact include rule of `rules` names an interface `exists` finds (one with
/// `what`), excluded or not.
fn exact_rules_exist(rules: &InterfaceRules, what: &str, exists: impl Fn(&InterfaceRule) -> bool) -> Result<(), String> {
    match rules.exact().find(|rule| !exists(rule)) {
        Some(InterfaceRule::Name(name)) => Err(format!("{name:?} is no interface with {what}")),
        Some(rule) => Err(format!("{rule} is on no interface with {what}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_resolved_by_the_schemes_ip_version() {
        // `localhost` is in every /etc/hosts (as 127.0.0.1; as ::1 where the host has IPv6).
        assert_eq!(resolve_face_uri("udp4://localhost").unwrap(), parse_face_uri("udp4://127.0.0.1:6363").unwrap());
        assert_eq!(resolve_face_uri("tcp4://localhost:7000").unwrap(), parse_face_uri("tcp4://127.0.0.1:7000").unwrap());
        let any = resolve_face_uri("tcp://localhost:7000").unwrap();
        assert!(matches!(any, FaceUri::Tcp(a) if a.ip().is_loopback() && a.port() == 7000), "{any}");
        // Addresses, and the other schemes, as `parse` takes them.
        assert_eq!(resolve_face_uri("udp6://[::1]:9").unwrap(), parse_face_uri("udp6://[::1]:9").unwrap());
        assert_eq!(resolve_face_uri("unix:///run/x.sock").unwrap(), FaceUri::Unix("/run/x.sock".into()));
        // Refused, naming why.
        let why = |uri: &str| resolve_face_uri(uri).unwrap_err().why;
        assert_eq!(why("udp4://no-such-host.invalid"), "host name not found");
        assert_eq!(why("udp4://localhost:http"), "port must be a number");
        assert_eq!(why("ether://localhost"), "host must be an Ethernet address in brackets");
        assert_eq!(why("udp4://[::1]"), "scheme wants an IPv4 address");
    }

    /// A link-local address's zone may name its interface (`%lo`, or `%25lo` as NFD writes
    /// it): the face's address has the interface's index, as a number zone gives it.
    #[test]
    fn an_ipv6_zone_names_an_interface_or_its_index() {
        let lo = index_of("lo").expect("a loopback interface");
        let want = FaceUri::Udp(std::net::SocketAddrV6::new("fe80::1".parse().unwrap(), 6363, 0, lo).into());
        for uri in ["udp6://[fe80::1%lo]:6363", "udp6://[fe80::1%25lo]:6363", &format!("udp6://[fe80::1%{lo}]:6363"), "udp6://[fe80::1%lo]"]
        {
            assert_eq!(parse_face_uri(uri).unwrap(), want, "{uri}");
        }
        assert_eq!(parse_face_uri(&want.to_string()).unwrap(), want, "{want} reads back");
    }

    fn interface(name: &str, index: u32, flags: libc::c_int, address: &str) -> InterfaceAddr {
        InterfaceAddr { name: name.into(), index, flags: flags as u32, mac: None, address: address.parse().unwrap() }
    }

    fn host() -> Vec<InterfaceAddr> {
        let up_mc = libc::IFF_UP | libc::IFF_MULTICAST;
        vec![
            interface("lo", 1, libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_MULTICAST, "127.0.0.1"),
            interface("lo", 1, libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_MULTICAST, "::1"),
            interface("eth0", 2, up_mc | libc::IFF_BROADCAST, "192.168.1.10"),
            interface("eth0", 2, up_mc, "10.0.0.2"),
            interface("eth0", 2, up_mc, "fd00::2"),
            interface("eth0", 2, up_mc, "fe80::1"),
            interface("eth0", 2, up_mc, "fe80::99"),
            interface("eth1", 3, libc::IFF_MULTICAST, "192.168.2.10"),
            interface("eth1", 3, libc::IFF_MULTICAST, "fe80::3"),
            interface("tun0", 4, libc::IFF_UP | libc::IFF_POINTOPOINT, "10.8.0.1"),
        ]
    }

    fn rules(include: &[&str], exclude: &[&str]) -> InterfaceRules {
        let list = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        InterfaceRules::parse(&list(include), &list(exclude)).unwrap()
    }

    fn v4(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn with_no_rule_ipv4_faces_go_on_interfaces_that_are_up_multicast_and_not_loopback() {
        assert_eq!(udp_v4(&host(), &rules(&[], &[])).unwrap(), [(v4("192.168.1.10"), false), (v4("10.0.0.2"), false)]);
        assert!(udp_v4(&[], &rules(&[], &[])).unwrap().is_empty());
    }

    #[test]
    fn ipv4_rules_pick_addresses_names_subnets_and_exclude() {
        let chosen = |inc: &[&str], exc: &[&str]| udp_v4(&host(), &rules(inc, exc));
        // A name stands for each of its IPv4 addresses (named: even loopback, or one that is down).
        assert_eq!(chosen(&["eth0"], &[]).unwrap(), [(v4("192.168.1.10"), true), (v4("10.0.0.2"), true)]);
        assert_eq!(
            chosen(&["lo", "192.0.2.7", "eth1"], &[]).unwrap(),
            [(v4("127.0.0.1"), true), (v4("192.168.2.10"), true), (v4("192.0.2.7"), true)]
        );
        assert!(chosen(&["wlan0"], &[]).unwrap_err().contains("\"wlan0\" is neither"));
        let v6_only = [interface("v6", 9, libc::IFF_UP, "fe80::9")];
        assert!(udp_v4(&v6_only, &rules(&["v6"], &[])).is_err());
        // A subnet picks the addresses in it, among interfaces that multicast; a pattern names.
        assert_eq!(chosen(&["10.0.0.0/8"], &[]).unwrap(), [(v4("10.0.0.2"), false)]);
        assert_eq!(chosen(&["eth*", "tun*"], &[]).unwrap(), [(v4("192.168.1.10"), false), (v4("10.0.0.2"), false)]);
        // Exclusions win: by subnet (that address), by name (all of them), even over a name.
        assert_eq!(chosen(&[], &["192.168.0.0/16"]).unwrap(), [(v4("10.0.0.2"), false)]);
        assert!(chosen(&["eth0"], &["eth*"]).unwrap().is_empty());
        assert!(chosen(&["192.0.2.7"], &["192.0.2.0/24"]).unwrap().is_empty());
        assert!(chosen(&["10.0.0.2"], &["eth0"]).unwrap().is_empty(), "its interface is left out");
    }

    #[test]
    fn ipv6_faces_go_on_an_interface_s_first_link_local_address() {
        let fe80 = |s: &str| s.parse::<Ipv6Addr>().unwrap();
        let chosen = |inc: &[&str], exc: &[&str]| udp_v6(&host(), &rules(inc, exc));
        assert_eq!(chosen(&[], &[]).unwrap(), [(2, fe80("fe80::1"), false)]);
        // Named: even one that is down (its face then fails to open and says why).
        assert_eq!(chosen(&["eth1"], &[]).unwrap(), [(3, fe80("fe80::3"), true)]);
        assert_eq!(chosen(&["fd00::/8"], &[]).unwrap(), [(2, fe80("fe80::1"), false)]);
        assert!(chosen(&[], &["eth0"]).unwrap().is_empty());
        assert!(chosen(&["tun0"], &[]).unwrap_err().contains("\"tun0\" is no interface with an IPv6 link-local address"));
        assert!(chosen(&["fe80::5"], &[]).unwrap_err().contains("fe80::5 is on no interface"));
    }

    #[test]
    fn ethernet_faces_go_on_interfaces_with_an_ethernet_address_and_never_loopback() {
        let link = |name: &str, index, flags: libc::c_int, mac: Option<[u8; 6]>| LinkInterface {
            name: name.into(),
            index,
            flags: flags as u32,
            mac,
        };
        let up_mc = libc::IFF_UP | libc::IFF_MULTICAST;
        let all = vec![
            link("lo", 1, up_mc | libc::IFF_LOOPBACK, Some([0; 6])),
            link("eth0", 2, up_mc, Some([2, 0, 0, 0, 0, 2])),
            link("eth1", 3, libc::IFF_MULTICAST, Some([2, 0, 0, 0, 0, 3])),
            link("tun0", 4, up_mc | libc::IFF_POINTOPOINT, None),
            link("veth9", 5, up_mc, Some([2, 0, 0, 0, 0, 5])),
        ];
        let addresses = host();
        let chosen = |inc: &[&str], exc: &[&str]| {
            ether(&all, &addresses, &rules(inc, exc)).map(|c| c.iter().map(|(i, listed)| (i.name.clone(), *listed)).collect::<Vec<_>>())
        };
        let named = |list: &[(&str, bool)]| list.iter().map(|&(n, l)| (n.to_string(), l)).collect::<Vec<_>>();
        assert_eq!(chosen(&[], &[]).unwrap(), named(&[("eth0", false), ("veth9", false)]));
        // Named: even one that is down (its face then fails to open and says why).
        assert_eq!(chosen(&["eth1"], &[]).unwrap(), named(&[("eth1", true)]));
        for name in ["lo", "tun0", "wlan0"] {
            let e = chosen(&[name], &[]).unwrap_err();
            assert!(e.contains(&format!("{name:?} is no interface with an Ethernet address")), "{e}");
        }
        assert_eq!(chosen(&["02:00:00:00:00:05", "10.0.0.0/8"], &[]).unwrap(), named(&[("eth0", false), ("veth9", false)]));
        assert_eq!(chosen(&["*"], &["veth*"]).unwrap(), named(&[("eth0", false)]));
    }

    #[test]
    fn the_host_lists_its_interfaces_once_each_with_their_ethernet_address() {
        let (addresses, links) = addresses_and_links().unwrap();
        let lo = links.iter().find(|l| l.name == "lo").expect("lo is listed");
        assert!(lo.has(libc::IFF_LOOPBACK) && lo.index > 0, "{lo:?}");
        let mut indexes: Vec<u32> = links.iter().map(|l| l.index).collect();
        indexes.sort_unstable();
        indexes.dedup();
        assert_eq!(indexes.len(), links.len(), "once each: {links:?}");
        let chosen = ether(&links, &addresses, &InterfaceRules::default()).unwrap();
        assert!(chosen.iter().all(|(l, _)| l.mac.is_some_and(|m| m != [0; 6])));
        // Each address carries its interface's Ethernet address.
        for a in &addresses {
            assert_eq!(a.mac, links.iter().find(|l| l.name == a.name).and_then(|l| l.mac), "{a:?}");
        }
    }

    #[test]
    fn the_host_lists_its_loopback_address() {
        let all = interface_addresses().unwrap();
        let lo = all.iter().find(|i| i.address == IpAddr::V4(Ipv4Addr::LOCALHOST)).expect("127.0.0.1 is on an interface");
        assert!(lo.has(libc::IFF_LOOPBACK) && lo.index > 0, "{lo:?}");
        let none = InterfaceRules::default();
        assert!(!udp_v4(&all, &none).unwrap().iter().any(|(a, _)| *a == Ipv4Addr::LOCALHOST));
        assert!(udp_v6(&all, &none).unwrap().iter().all(|(index, _, _)| *index != lo.index));
    }
}
