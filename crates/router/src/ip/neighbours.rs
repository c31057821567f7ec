//! The neighbour table: the link-layer address of each next hop on each port (the kernel's
//! ARP and ND entries, mirrored), and each port's own address.

use std::net::IpAddr;

use hashbrown::HashMap;

use super::header::Mac;
use super::route::Port;

/// Neighbours by (port, address), and the ports' own addresses.
#[derive(Debug, Clone, Default)]
pub struct Neighbours {
    by_addr: HashMap<(Port, IpAddr), Mac>,
    ports: Vec<Option<Mac>>,
}

impl Neighbours {
    /// No neighbour, no port.
    pub fn new() -> Neighbours {
        Neighbours::default()
    }

    /// Port `port` is the pipeline's, sending from `mac`.
    pub fn set_port(&mut self, port: Port, mac: Mac) {
        let i = port.0 as usize;
        if self.ports.len() <= i {
            self.ports.resize(i + 1, None);
        }
        self.ports[i] = Some(mac);
    }

    /// Port `port` is gone, with its neighbours.
    pub fn remove_port(&mut self, port: Port) {
        if let Some(p) = self.ports.get_mut(port.0 as usize) {
            *p = None;
        }
        self.by_addr.retain(|(p, _), _| *p != port);
    }

    /// The address port `port` sends from, if it is the pipeline's.
    #[inline]
    pub fn port_mac(&self, port: Port) -> Option<&Mac> {
        self.ports.get(port.0 as usize)?.as_ref()
    }

    /// `addr` on `port` is at `mac`. Returns the address it had.
    pub fn insert(&mut self, port: Port, addr: IpAddr, mac: Mac) -> Option<Mac> {
        self.by_addr.insert((port, addr), mac)
    }

    /// `addr` on `port` is no longer known. Returns the address it had.
    pub fn remove(&mut self, port: Port, addr: IpAddr) -> Option<Mac> {
        self.by_addr.remove(&(port, addr))
    }

    /// The link-layer address of `addr` on `port`.
    #[inline]
    pub fn get(&self, port: Port, addr: IpAddr) -> Option<&Mac> {
        self.by_addr.get(&(port, addr))
    }

    /// Forgets every neighbour (the ports stay).
    pub fn clear_neighbours(&mut self) {
        self.by_addr.clear();
    }

    /// Neighbours known, all ports.
    pub fn len(&self) -> usize {
        self.by_addr.len()
    }

    /// Whether no neighbour is known.
    pub fn is_empty(&self) -> bool {
        self.by_addr.is_empty()
    }
}
