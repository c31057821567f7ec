//! The Ethernet ports of `faces.ether_*` — one raw socket per chosen interface, shared by the
//! faces on it: the multicast face of `faces.ether_multicast`, and unicast faces made by
//! management or (`faces.ether_listen`) by a peer's first frame — kept in step with the host's
//! interfaces, as NFD's Ethernet factory keeps its channels and multicast faces.
//!
//! # Overview
//! - The choice is [`crate::sys::interfaces::ether`]'s: the interfaces with an Ethernet address that
//!   `faces.ether_interfaces` and `faces.ether_exclude` choose (none listed: every one that is
//!   up, can multicast and is not loopback).
//! - [`Runtime::sync_ether_ports`] opens a port on each chosen interface that has none (with
//!   its multicast face if a group is set), and closes a port, with every face on it, when its
//!   interface is gone (or made again: another index), no rule takes it even with every
//!   interface up, or the group changed. A port whose interface only goes down keeps its faces.
//! - At the start an interface named exactly must open (unless
//!   `faces.named_interfaces_required` is off); afterwards nothing is fatal.
//! - A closed port leaves its place in `EtherLinks::ports` (its poll token) to the next port
//!   opened; there are at most `MAX_ETHER_PORTS` at once.

use super::link::ether_port::{backend_of, EtherPort};
use crate::face::ether::Mac;
use crate::face::interface_rule::InterfaceRules;
use crate::face::uri::FaceUri;
use crate::face::{FaceId, Persistency};
use crate::sys::interfaces::LinkInterface;

use super::link::{EtherLink, Link};
use super::{config_err, io_err, Runtime, StartError, ETHER_PORTS, MAX_ETHER_PORTS};

/// The poll token of Ethernet port `index`.
pub(super) fn ether_token(index: usize) -> mio::Token {
    mio::Token(ETHER_PORTS.0 + index)
}

/// `interfaces` as if every one were up and could multicast: what a port is kept against.
fn all_up(interfaces: &[LinkInterface]) -> Vec<LinkInterface> {
    let up = (libc::IFF_UP | libc::IFF_MULTICAST) as u32;
    interfaces.iter().cloned().map(|i| LinkInterface { flags: i.flags | up, ..i }).collect()
}

impl Runtime {
    /// Brings the Ethernet ports in step with the configuration and the interfaces (see the
    /// module overview); `at_start`: the first time, when a port on an interface named exactly
    /// must open.
    ///
    /// # Errors
    /// Listing the interfaces, a configuration error, or (`at_start`) a named interface that
    /// is missing or whose port cannot open.
    pub(super) fn sync_ether_ports(&mut self, at_start: bool) -> Result<(), StartError> {
        let f = &self.cfg.faces;
        let wanted = !f.ether_multicast.is_empty() || f.ether_listen;
        if !wanted && self.faces.links.ether.ports.iter().all(Option::is_none) {
            return Ok(());
        }
        let backend = backend_of(&f.ether_io).ok_or_else(|| StartError::Config("faces.ether_io".into()))?;
        let group = match f.ether_multicast.as_str() {
            "" => None,
            g => Some(Mac::parse(g).ok_or_else(|| StartError::Config("faces.ether_multicast".into()))?),
        };
        let (addresses, all) = crate::sys::interfaces::addresses_and_links().map_err(io_err("listing the network interfaces"))?;
        let key = "faces.ether_interfaces";
        let rules = InterfaceRules::parse(&f.ether_interfaces, &f.ether_exclude)
            .map_err(config_err(key))?
            .requiring_exact(f.named_interfaces_required);
        let (chosen, kept): (Vec<(LinkInterface, bool)>, Vec<LinkInterface>) = if wanted {
            let now_rules = if at_start { rules.clone() } else { rules.clone().allowing_missing() };
            let chosen = crate::sys::interfaces::ether(&all, &addresses, &now_rules).map_err(config_err(key))?;
            let up = all_up(&all);
            let kept = crate::sys::interfaces::ether(&up, &addresses, &rules.allowing_missing()).map_err(config_err(key))?;
            (chosen.into_iter().map(|(i, listed)| (i.clone(), listed)).collect(), kept.into_iter().map(|(i, _)| i.clone()).collect())
        } else {
            (Vec::new(), Vec::new())
        };
        for index in 0..self.faces.links.ether.ports.len() {
            let Some(port) = self.faces.links.ether.port(index) else { continue };
            let still = kept.iter().any(|i| i.name == port.interface() && i.index == port.index());
            if !still || port.group() != group {
                tracing::info!(
                    "Ethernet faces on {}: closed (its interface is gone, no rule takes it, or the group changed)",
                    port.interface()
                );
                self.close_ether_port(index);
            }
        }
        for (interface, listed) in chosen {
            let open = |p: &Option<EtherPort>| p.as_ref().is_some_and(|p| p.interface() == interface.name && p.index() == interface.index);
            if self.faces.links.ether.ports.iter().any(open) {
                continue;
            }
            let index = self.faces.links.ether.ports.iter().position(Option::is_none).unwrap_or(self.faces.links.ether.ports.len());
            if index == MAX_ETHER_PORTS {
                tracing::warn!("no Ethernet faces on {}: at most {MAX_ETHER_PORTS} interfaces", interface.name);
                break;
            }
            let own = Mac(interface.mac.unwrap_or_default());
            let mut port = match EtherPort::open(&interface.name, interface.index, own, group, backend) {
                Ok(port) => port,
                Err(e) if at_start && listed => return Err(io_err(format!("opening {} for Ethernet faces", interface.name))(e)),
                Err(e) => {
                    tracing::warn!(error = %e, "no Ethernet faces on {}", interface.name);
                    continue;
                }
            };
            port.register(self.poll.registry(), ether_token(index)).map_err(io_err("registering"))?;
            let (local, moved_by) = (port.local_uri(), port.backend());
            if index == self.faces.links.ether.ports.len() {
                self.faces.links.ether.ports.push(Some(port));
            } else {
                self.faces.links.ether.ports[index] = Some(port);
            }
            tracing::info!("Ethernet faces on {}: port opened on {moved_by}", interface.name);
            if let Some(group) = group {
                let now = self.now_ms();
                let link = Link::Ether(EtherLink { port: index, peer: group });
                self.faces
                    .add(self.poll.registry(), FaceUri::Ether(group), local, Persistency::Permanent, link, now, &mut self.forwarding)
                    .map_err(io_err("registering an Ethernet multicast face"))?;
            }
        }
        Ok(())
    }

    /// Closes Ethernet port `index` and every face on it.
    fn close_ether_port(&mut self, index: usize) {
        let on_it: Vec<FaceId> =
            self.faces.faces.values().filter(|f| matches!(f.link, Link::Ether(l) if l.port == index)).map(|f| f.id).collect();
        self.closing.extend(on_it);
        self.close_faces();
        if let Some(mut port) = self.faces.links.ether.ports[index].take() {
            port.deregister(self.poll.registry());
        }
        self.ether_more.retain(|&p| p != index);
    }
}
