//! The host's IPv4 interfaces, for the UDP multicast faces: with `faces.udp_multicast` set and
//! no interfaces listed, a multicast face is made on every interface that is up, can multicast
//! and is not loopback, as NFD does by default (`face_system.udp`, `whitelist { * }`).
//!
//! [`ipv4_interfaces`] reads the kernel's list (`getifaddrs`); [`multicast_capable`] is the
//! choice, on plain data.

use std::ffi::CStr;
use std::io;
use std::net::Ipv4Addr;

/// One IPv4 address of an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceAddr {
    /// The interface's name (`eth0`).
    pub name: String,
    /// Its `IFF_*` flags.
    pub flags: u32,
    /// The address.
    pub address: Ipv4Addr,
}

/// Every IPv4 address of every interface of this host.
///
/// # Errors
/// `getifaddrs` failed.
pub fn ipv4_interfaces() -> io::Result<Vec<InterfaceAddr>> {
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
        // SAFETY: a non-null ifa_addr points at a sockaddr whose family says its real type; an
        // AF_INET one is a sockaddr_in. ifa_name is a NUL-terminated string of the same list.
        unsafe {
            if !ifa.ifa_addr.is_null() && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET {
                let sin = &*ifa.ifa_addr.cast::<libc::sockaddr_in>();
                out.push(InterfaceAddr {
                    name: CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned(),
                    flags: ifa.ifa_flags,
                    address: Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                });
            }
        }
        node = ifa.ifa_next;
    }
    // SAFETY: `head` came from getifaddrs and is freed once, after the last use of its nodes.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// The addresses of the interfaces a multicast face is made on when none are listed: up,
/// multicast-capable, not loopback.
pub fn multicast_capable(interfaces: &[InterfaceAddr]) -> Vec<Ipv4Addr> {
    let has = |i: &InterfaceAddr, flag: libc::c_int| i.flags & flag as u32 != 0;
    interfaces
        .iter()
        .filter(|i| has(i, libc::IFF_UP) && has(i, libc::IFF_MULTICAST) && !has(i, libc::IFF_LOOPBACK))
        .map(|i| i.address)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(name: &str, flags: libc::c_int, address: [u8; 4]) -> InterfaceAddr {
        InterfaceAddr { name: name.into(), flags: flags as u32, address: Ipv4Addr::from(address) }
    }

    #[test]
    fn only_interfaces_that_are_up_multicast_and_not_loopback_are_chosen() {
        let up_mc = libc::IFF_UP | libc::IFF_MULTICAST;
        let all = [
            interface("lo", libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_MULTICAST, [127, 0, 0, 1]),
            interface("eth0", up_mc | libc::IFF_BROADCAST, [192, 168, 1, 10]),
            interface("eth0", up_mc, [10, 0, 0, 2]),
            interface("eth1", libc::IFF_MULTICAST, [192, 168, 2, 10]),
            interface("tun0", libc::IFF_UP | libc::IFF_POINTOPOINT, [10, 8, 0, 1]),
        ];
        assert_eq!(multicast_capable(&all), [Ipv4Addr::new(192, 168, 1, 10), Ipv4Addr::new(10, 0, 0, 2)]);
        assert!(multicast_capable(&[]).is_empty());
    }

    #[test]
    fn the_host_lists_its_loopback_address() {
        let all = ipv4_interfaces().unwrap();
        let lo = all.iter().find(|i| i.address == Ipv4Addr::LOCALHOST).expect("127.0.0.1 is on an interface");
        assert!(lo.flags & libc::IFF_LOOPBACK as u32 != 0, "{lo:?}");
        assert!(!multicast_capable(&all).contains(&Ipv4Addr::LOCALHOST));
    }
}
