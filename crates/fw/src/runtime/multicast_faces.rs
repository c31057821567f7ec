//! The UDP multicast faces of `faces.udp_multicast` and `faces.udp6_multicast`, kept in step
//! with the host's interfaces as NFD's network monitor keeps them: an interface that comes up
//! or gets an address after the start gets its faces, and a face whose interface or address
//! went away is closed.
//!
//! # Overview
//! - [`wanted`] is the choice, on plain data: the places (group, interface address and index)
//!   the configuration's rules choose among the interfaces as they are
//!   ([`crate::sys::interfaces::udp_v4`], [`crate::sys::interfaces::udp_v6`]).
//! - [`Runtime::sync_multicast_faces`] compares that with the multicast faces there are. It
//!   makes the missing ones. It closes a face only when the choice would no longer take its
//!   place even with every interface up: a face outlives its interface going down and up
//!   again, with its id and routes; a removed interface or address, or a rule a reload changed,
//!   closes it (its routes go with it, as in NFD when a face fails).
//! - At the start a face on an interface named exactly must open (unless
//!   `faces.named_interfaces_required` is off); afterwards nothing is fatal: a face that cannot
//!   open is logged and tried again at the next change.
//! - When: at the start, shortly after the kernel's last interface notice
//!   ([`crate::sys::interface_watch`]; the runtime waits for a burst of them to end), and on a
//!   reload (NFD's `applyMcastConfig`).

use std::net::{IpAddr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::conf::config::FacesConfig;
use crate::face::interface_rule::InterfaceRules;
use crate::face::uri::FaceUri;
use crate::face::{FaceId, Persistency};
use crate::sys::interfaces::InterfaceAddr;

use super::link::multicast::MulticastPlace;
use super::link::{Link, MulticastLink};
use super::{config_err, io_err, Runtime, StartError};

/// The places the configuration `f` chooses for multicast faces on `interfaces`, each with
/// whether a rule named its interface exactly. With `strict`, an interface named exactly must
/// exist (unless `faces.named_interfaces_required` is off); otherwise one that is missing is
/// skipped.
///
/// # Errors
/// A group or rule the configuration gets wrong, or (`strict`) an interface named that is not
/// there.
pub(super) fn wanted(f: &FacesConfig, interfaces: &[InterfaceAddr], strict: bool) -> Result<Vec<(MulticastPlace, bool)>, StartError> {
    let rules = |include: &[String], key: &str| {
        let rules = InterfaceRules::parse(include, &f.udp_multicast_exclude).map_err(config_err(key))?;
        let rules = rules.requiring_exact(f.named_interfaces_required);
        Ok::<_, StartError>(if strict { rules } else { rules.allowing_missing() })
    };
    let mut out = Vec::new();
    if !f.udp_multicast.is_empty() {
        let group: SocketAddrV4 = f.udp_multicast.parse().map_err(|_| StartError::Config("faces.udp_multicast".into()))?;
        let key = "faces.udp_multicast_interfaces";
        for (address, listed) in
            crate::sys::interfaces::udp_v4(interfaces, &rules(&f.udp_multicast_interfaces, key)?).map_err(config_err(key))?
        {
            let index = interfaces.iter().find(|i| i.address == IpAddr::V4(address)).map_or(0, |i| i.index);
            out.push((MulticastPlace { group: SocketAddr::V4(group), address: IpAddr::V4(address), index }, listed));
        }
    }
    if !f.udp6_multicast.is_empty() {
        let group: SocketAddrV6 = f.udp6_multicast.parse().map_err(|_| StartError::Config("faces.udp6_multicast".into()))?;
        let key = "faces.udp6_multicast_interfaces";
        for (index, address, listed) in
            crate::sys::interfaces::udp_v6(interfaces, &rules(&f.udp6_multicast_interfaces, key)?).map_err(config_err(key))?
        {
            let group = SocketAddr::V6(SocketAddrV6::new(*group.ip(), group.port(), 0, index));
            out.push((MulticastPlace { group, address: IpAddr::V6(address), index }, listed));
        }
    }
    Ok(out)
}

/// `interfaces` as if every one were up and could multicast: what a face is kept against.
fn all_up(interfaces: &[InterfaceAddr]) -> Vec<InterfaceAddr> {
    let up = (libc::IFF_UP | libc::IFF_MULTICAST) as u32;
    interfaces.iter().cloned().map(|i| InterfaceAddr { flags: i.flags | up, ..i }).collect()
}

/// Opens the link of `place`.
fn open(place: MulticastPlace) -> std::io::Result<MulticastLink> {
    match (place.group, place.address) {
        (SocketAddr::V4(group), IpAddr::V4(address)) => MulticastLink::open(group, address, place.index),
        (SocketAddr::V6(group), IpAddr::V6(address)) => MulticastLink::open_v6(group, place.index, address),
        _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "a group and an address of different families")),
    }
}

/// How a place is written in the log.
fn describe(place: &MulticastPlace) -> String {
    match place.group {
        SocketAddr::V4(g) => format!("{g} on {} (interface {})", place.address, place.index),
        SocketAddr::V6(g) => format!("[{}]:{} on interface {} ({})", g.ip(), g.port(), place.index, place.address),
    }
}

impl Runtime {
    /// Brings the multicast faces in step with the configuration and the interfaces (see the
    /// module overview); `at_start`: the first time, when a face on an interface named exactly
    /// must open.
    ///
    /// # Errors
    /// Listing the interfaces, a configuration error, or (`at_start`) a named interface that
    /// is missing or whose face cannot open.
    pub(super) fn sync_multicast_faces(&mut self, at_start: bool) -> Result<(), StartError> {
        let existing: Vec<(FaceId, MulticastPlace)> = self
            .faces
            .faces
            .values()
            .filter_map(|face| match &face.link {
                Link::Multicast(m) => Some((face.id, m.place())),
                _ => None,
            })
            .collect();
        let f = &self.cfg.faces;
        if f.udp_multicast.is_empty() && f.udp6_multicast.is_empty() && existing.is_empty() {
            return Ok(());
        }
        let interfaces = crate::sys::interfaces::interface_addresses().map_err(io_err("listing the network interfaces"))?;
        let wanted_now = wanted(f, &interfaces, at_start)?;
        let kept = wanted(f, &all_up(&interfaces), false)?;
        for &(id, place) in &existing {
            if !kept.iter().any(|(p, _)| *p == place) {
                tracing::info!(
                    face = id,
                    "multicast face on {}: closed (its interface or address is gone, or no rule takes it)",
                    describe(&place)
                );
                self.closing.push(id);
            }
        }
        self.close_faces();
        for (place, listed) in wanted_now {
            if existing.iter().any(|(_, p)| *p == place) {
                continue;
            }
            let link = match open(place) {
                Ok(link) => link,
                Err(e) if at_start && listed => return Err(io_err(format!("joining {}", describe(&place)))(e)),
                Err(e) => {
                    tracing::warn!(error = %e, "no multicast face: joining {}", describe(&place));
                    continue;
                }
            };
            let now = self.now_ms();
            let (group, local) = (FaceUri::Udp(link.group()), link.local_uri());
            let id = self
                .faces
                .add(self.poll.registry(), group, local, Persistency::Permanent, Link::Multicast(Box::new(link)), now, &mut self.forwarding)
                .map_err(io_err("registering a multicast face"))?;
            if !at_start {
                tracing::info!(face = id, "multicast face on {}: made", describe(&place));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn addr(name: &str, index: u32, flags: i32, address: &str) -> InterfaceAddr {
        InterfaceAddr { name: name.into(), index, flags: flags as u32, mac: None, address: address.parse().unwrap() }
    }

    const UP: i32 = libc::IFF_UP | libc::IFF_MULTICAST;

    fn faces(v4_rules: &[&str]) -> FacesConfig {
        FacesConfig {
            udp_multicast: "224.0.23.170:56363".into(),
            udp6_multicast: "[ff02::1234]:56363".into(),
            udp_multicast_interfaces: v4_rules.iter().map(|r| r.to_string()).collect(),
            named_interfaces_required: true,
            ..crate::conf::config::Config::default().faces
        }
    }

    fn v4(address: &str, index: u32) -> MulticastPlace {
        let group = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(224, 0, 23, 170), 56363));
        MulticastPlace { group, address: address.parse().unwrap(), index }
    }

    fn v6(address: &str, index: u32) -> MulticastPlace {
        let group = SocketAddr::V6(SocketAddrV6::new("ff02::1234".parse::<Ipv6Addr>().unwrap(), 56363, 0, index));
        MulticastPlace { group, address: address.parse().unwrap(), index }
    }

    /// Each chosen address gets a place with its interface's index; IPv6 ones are scoped to it.
    #[test]
    fn places_carry_their_interface_index() {
        let host = [
            addr("lo", 1, libc::IFF_UP | libc::IFF_LOOPBACK, "127.0.0.1"),
            addr("eth0", 2, UP, "10.0.0.2"),
            addr("eth0", 2, UP, "fe80::2"),
            addr("wlan0", 3, libc::IFF_MULTICAST, "192.168.1.5"),
        ];
        let got = wanted(&faces(&[]), &host, true).unwrap();
        assert_eq!(got, [(v4("10.0.0.2", 2), false), (v6("fe80::2", 2), false)], "wlan0 is down, lo is loopback");
        // Kept against: wlan0's face, made while it was up, stays while it is down.
        let kept = wanted(&faces(&[]), &all_up(&host), false).unwrap();
        assert!(kept.contains(&(v4("192.168.1.5", 3), false)));
        assert!(!kept.iter().any(|(p, _)| p.index == 1), "never loopback");
    }

    /// An interface named exactly must exist at the start (unless that is turned off); after
    /// it, one that is missing is skipped.
    #[test]
    fn a_missing_named_interface_fails_only_at_the_start() {
        let host = [addr("eth0", 2, UP, "10.0.0.2")];
        assert!(wanted(&faces(&["eth1"]), &host, true).is_err());
        assert_eq!(wanted(&faces(&["eth1"]), &host, false).unwrap(), []);
        let not_required = FacesConfig { named_interfaces_required: false, ..faces(&["eth1"]) };
        assert_eq!(wanted(&not_required, &host, true).unwrap(), []);
        assert_eq!(wanted(&faces(&["eth0"]), &host, true).unwrap(), [(v4("10.0.0.2", 2), true)]);
    }

    /// The same address on an interface made again (another index) is another place.
    #[test]
    fn an_interface_made_again_is_another_place() {
        let before = wanted(&faces(&[]), &[addr("veth0", 7, UP, "10.1.0.1")], true).unwrap();
        let after = wanted(&faces(&[]), &[addr("veth0", 9, UP, "10.1.0.1")], true).unwrap();
        assert_ne!(before, after);
    }
}
