//! The host's network interfaces, for the multicast and Ethernet faces: with a UDP multicast
//! group set and no interfaces listed, a multicast face is made on every interface that is up,
//! can multicast and is not loopback, as NFD does by default (`face_system.udp`,
//! `whitelist { * }`) — on its IPv4 address for the IPv4 group, on its IPv6 link-local address
//! for the IPv6 one.
//!
//! The Ethernet faces' interfaces are chosen the same way (by name, or every one that is up and
//! can multicast), among every interface with an Ethernet address, whether or not it has an IP
//! address.
//!
//! [`interface_addresses`] and [`link_interfaces`] read the kernel's list (`getifaddrs`);
//! [`multicast_capable`], [`multicast_capable_v6`] and [`ether_capable`] are the choice, on
//! plain data.

use std::ffi::CStr;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One address of an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceAddr {
    /// The interface's name (`eth0`).
    pub name: String,
    /// Its index (an IPv6 link-local address's scope).
    pub index: u32,
    /// Its `IFF_*` flags.
    pub flags: u32,
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

/// The kernel's interface list (`getifaddrs`): its IPv4 and IPv6 addresses, and its link-layer
/// (`AF_PACKET`) entries, one per interface.
fn entries() -> io::Result<(Vec<InterfaceAddr>, Vec<LinkInterface>)> {
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
                addresses.push(InterfaceAddr { name, index, flags, address });
            }
            libc::AF_INET6 => {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in6>() };
                addresses.push(InterfaceAddr { name, index, flags, address: IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)) });
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
    Ok((addresses, links))
}

/// Every IPv4 and IPv6 address of every interface of this host.
///
/// # Errors
/// `getifaddrs` failed.
pub fn interface_addresses() -> io::Result<Vec<InterfaceAddr>> {
    Ok(entries()?.0)
}

/// Every interface of this host, once each, as the link layer sees it.
///
/// # Errors
/// `getifaddrs` failed.
pub fn link_interfaces() -> io::Result<Vec<LinkInterface>> {
    Ok(entries()?.1)
}

/// The interfaces Ethernet faces go on (one port each): those named in `names` (every one that
/// is up and multicast-capable when `names` is empty) that have an Ethernet address and are not
/// loopback (whose all-zero address is not one).
pub fn ether_capable<'a>(interfaces: &'a [LinkInterface], names: &[String]) -> Vec<&'a LinkInterface> {
    let wanted =
        |i: &LinkInterface| if names.is_empty() { i.has(libc::IFF_UP) && i.has(libc::IFF_MULTICAST) } else { names.contains(&i.name) };
    interfaces.iter().filter(|i| i.mac.is_some() && !i.has(libc::IFF_LOOPBACK) && wanted(i)).collect()
}

/// The IPv4 addresses of the interfaces an IPv4 multicast face is made on when none are listed:
/// up, multicast-capable, not loopback.
pub fn multicast_capable(interfaces: &[InterfaceAddr]) -> Vec<Ipv4Addr> {
    interfaces
        .iter()
        .filter(|i| i.multicasts())
        .filter_map(|i| match i.address {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(_) => None,
        })
        .collect()
}

/// The IPv4 addresses an IPv4 multicast face is made on for the listed `entries`: an entry is an
/// address, or an interface's name standing for its IPv4 addresses; `Err` names an entry that
/// is neither an address nor an interface with an IPv4 address.
pub fn listed_v4(interfaces: &[InterfaceAddr], entries: &[String]) -> Result<Vec<Ipv4Addr>, String> {
    let mut out = Vec::new();
    for e in entries {
        if let Ok(a) = e.parse::<Ipv4Addr>() {
            out.push(a);
            continue;
        }
        let before = out.len();
        out.extend(interfaces.iter().filter(|i| &i.name == e).filter_map(|i| match i.address {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(_) => None,
        }));
        if out.len() == before {
            return Err(format!("{e:?} is neither an IPv4 address nor an interface with one"));
        }
    }
    Ok(out)
}

/// The interfaces an IPv6 multicast face is made on, as (index, link-local address): those named
/// in `names` (every one that is up, multicast-capable and not loopback when `names` is empty)
/// that have a link-local address, the first one each.
pub fn multicast_capable_v6(interfaces: &[InterfaceAddr], names: &[String]) -> Vec<(u32, Ipv6Addr)> {
    let mut out: Vec<(u32, Ipv6Addr)> = Vec::new();
    for i in interfaces {
        let wanted = if names.is_empty() { i.multicasts() } else { names.contains(&i.name) };
        match i.address {
            IpAddr::V6(a) if wanted && a.is_unicast_link_local() && !out.iter().any(|o| o.0 == i.index) => out.push((i.index, a)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(name: &str, index: u32, flags: libc::c_int, address: &str) -> InterfaceAddr {
        InterfaceAddr { name: name.into(), index, flags: flags as u32, address: address.parse().unwrap() }
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

    #[test]
    fn only_interfaces_that_are_up_multicast_and_not_loopback_are_chosen() {
        assert_eq!(multicast_capable(&host()), [Ipv4Addr::new(192, 168, 1, 10), Ipv4Addr::new(10, 0, 0, 2)]);
        assert!(multicast_capable(&[]).is_empty());
    }

    #[test]
    fn listed_ipv4_interfaces_are_addresses_or_names() {
        let a = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        let listed = |names: &[&str]| listed_v4(&host(), &names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
        // A name stands for each of its IPv4 addresses (listed: even loopback, or one that is down).
        assert_eq!(listed(&["eth0"]).unwrap(), [a("192.168.1.10"), a("10.0.0.2")]);
        assert_eq!(listed(&["lo", "192.0.2.7", "eth1"]).unwrap(), [a("127.0.0.1"), a("192.0.2.7"), a("192.168.2.10")]);
        assert!(listed(&["wlan0"]).unwrap_err().contains("\"wlan0\" is neither"));
        let v6_only = [interface("v6", 9, libc::IFF_UP, "fe80::9")];
        assert!(listed_v4(&v6_only, &["v6".into()]).is_err());
    }

    #[test]
    fn ipv6_faces_go_on_an_interface_s_first_link_local_address() {
        let fe80 = |s: &str| s.parse::<Ipv6Addr>().unwrap();
        assert_eq!(multicast_capable_v6(&host(), &[]), [(2, fe80("fe80::1"))]);
        // Named: even one that is down (its face then fails to open and says why).
        assert_eq!(multicast_capable_v6(&host(), &["eth1".into()]), [(3, fe80("fe80::3"))]);
        assert!(multicast_capable_v6(&host(), &["tun0".into(), "wlan0".into()]).is_empty());
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
        let names = |chosen: Vec<&LinkInterface>| chosen.iter().map(|i| i.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(ether_capable(&all, &[])), ["eth0", "veth9"]);
        // Named: even one that is down (its face then fails to open and says why).
        assert_eq!(names(ether_capable(&all, &["eth1".into(), "lo".into(), "tun0".into()])), ["eth1"]);
    }

    #[test]
    fn the_host_lists_its_interfaces_once_each_with_their_ethernet_address() {
        let links = link_interfaces().unwrap();
        let lo = links.iter().find(|l| l.name == "lo").expect("lo is listed");
        assert!(lo.has(libc::IFF_LOOPBACK) && lo.index > 0, "{lo:?}");
        let mut indexes: Vec<u32> = links.iter().map(|l| l.index).collect();
        indexes.sort_unstable();
        indexes.dedup();
        assert_eq!(indexes.len(), links.len(), "once each: {links:?}");
        assert!(ether_capable(&links, &[]).iter().all(|l| l.mac.is_some_and(|m| m != [0; 6])));
    }

    #[test]
    fn the_host_lists_its_loopback_address() {
        let all = interface_addresses().unwrap();
        let lo = all.iter().find(|i| i.address == IpAddr::V4(Ipv4Addr::LOCALHOST)).expect("127.0.0.1 is on an interface");
        assert!(lo.has(libc::IFF_LOOPBACK) && lo.index > 0, "{lo:?}");
        assert!(!multicast_capable(&all).contains(&Ipv4Addr::LOCALHOST));
        assert!(multicast_capable_v6(&all, &[]).iter().all(|(index, _)| *index != lo.index));
    }
}
