//! The host's network interfaces, for the UDP multicast faces: with a multicast group set and no
//! interfaces listed, a multicast face is made on every interface that is up, can multicast and
//! is not loopback, as NFD does by default (`face_system.udp`, `whitelist { * }`) — on its IPv4
//! address for the IPv4 group, on its IPv6 link-local address for the IPv6 one.
//!
//! [`interface_addresses`] reads the kernel's list (`getifaddrs`); [`multicast_capable`] and
//! [`multicast_capable_v6`] are the choice, on plain data.

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

/// Every IPv4 and IPv6 address of every interface of this host.
///
/// # Errors
/// `getifaddrs` failed.
pub fn interface_addresses() -> io::Result<Vec<InterfaceAddr>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes the head of a list it allocates through the pointer, which points
    // at a live local; on failure it writes nothing and returns -1.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut node = head;
    while !node.is_null() {
        // SAFETY: `node` is a node of the list getifaddrs returned, which stays allocated until
        // freeifaddrs below.
        let ifa = unsafe { &*node };
        // SAFETY: a non-null ifa_addr points at a sockaddr whose family says its real type
        // (AF_INET: sockaddr_in, AF_INET6: sockaddr_in6); ifa_name is a NUL-terminated string
        // of the same list.
        let address = unsafe {
            match ifa.ifa_addr.as_ref().map(|a| i32::from(a.sa_family)) {
                Some(libc::AF_INET) => {
                    let sin = &*ifa.ifa_addr.cast::<libc::sockaddr_in>();
                    Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr))))
                }
                Some(libc::AF_INET6) => {
                    let sin6 = &*ifa.ifa_addr.cast::<libc::sockaddr_in6>();
                    Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
                }
                _ => None,
            }
        };
        if let Some(address) = address {
            // SAFETY: ifa_name is a NUL-terminated string of the list, alive until freeifaddrs.
            let name = unsafe { CStr::from_ptr(ifa.ifa_name) };
            // SAFETY: if_nametoindex reads the NUL-terminated name and returns 0 if unknown.
            let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
            out.push(InterfaceAddr { name: name.to_string_lossy().into_owned(), index, flags: ifa.ifa_flags, address });
        }
        node = ifa.ifa_next;
    }
    // SAFETY: `head` came from getifaddrs and is freed once, after the last use of its nodes.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
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
    fn ipv6_faces_go_on_an_interface_s_first_link_local_address() {
        let fe80 = |s: &str| s.parse::<Ipv6Addr>().unwrap();
        assert_eq!(multicast_capable_v6(&host(), &[]), [(2, fe80("fe80::1"))]);
        // Named: even one that is down (its face then fails to open and says why).
        assert_eq!(multicast_capable_v6(&host(), &["eth1".into()]), [(3, fe80("fe80::3"))]);
        assert!(multicast_capable_v6(&host(), &["tun0".into(), "wlan0".into()]).is_empty());
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
