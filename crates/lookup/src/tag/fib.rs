//! The descriptor FIB's control side: descriptors → sets of (tree, interface) pairs.
//!
//! # Overview
//! [`DescriptorFib`] is what routing writes: insert and remove (descriptor, port) pairs at any
//! time; (tree, interface) pairs are interned as dense [`PortId`]s. It is not what packets are
//! matched against: [`DescriptorFib::compile`] turns it into the compact vector trie of
//! [`CompiledFib`] (the paper builds its FIB the same way, offline), and the data plane swaps in
//! the new compiled FIB. A failed insert changes nothing.

use hashbrown::HashMap;

use super::compile::{CompiledFib, Compression, Layout};
use super::{Descriptor, Port, PortId, PortSet, TagError, MAX_PORTS};

/// Descriptors and the ports each forwards to.
#[derive(Debug, Clone, Default)]
pub struct DescriptorFib {
    entries: HashMap<Descriptor, PortSet>,
    ports: Vec<Port>,
    port_ids: HashMap<Port, PortId>,
}

impl DescriptorFib {
    /// An empty FIB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `port` to the entry for `descriptor` (creating it).
    ///
    /// # Errors
    /// [`TagError::EmptyDescriptor`] for a descriptor with no bits (it would match every packet);
    /// [`TagError::TooManyPorts`] when `port` would be the FIB's 257th distinct port.
    pub fn insert(&mut self, descriptor: Descriptor, port: Port) -> Result<(), TagError> {
        if descriptor.is_empty() {
            return Err(TagError::EmptyDescriptor);
        }
        let id = self.intern(port)?;
        self.entries.entry(descriptor).or_default().insert(id);
        Ok(())
    }

    /// Removes `port` from the entry for `descriptor` (the entry goes when its last port does).
    /// Returns whether it was there.
    pub fn remove(&mut self, descriptor: &Descriptor, port: Port) -> bool {
        let (Some(&id), Some(set)) = (self.port_ids.get(&port), self.entries.get_mut(descriptor)) else { return false };
        let had = set.contains(id);
        set.0[usize::from(id) / 64] &= !(1 << (id % 64));
        if set.is_empty() {
            self.entries.remove(descriptor);
        }
        had
    }

    fn intern(&mut self, port: Port) -> Result<PortId, TagError> {
        if let Some(&id) = self.port_ids.get(&port) {
            return Ok(id);
        }
        if self.ports.len() >= MAX_PORTS {
            return Err(TagError::TooManyPorts);
        }
        let id = PortId::try_from(self.ports.len()).map_err(|_| TagError::TooManyPorts)?;
        self.ports.push(port);
        self.port_ids.insert(port, id);
        Ok(id)
    }

    /// Distinct descriptors.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the FIB is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (&Descriptor, &PortSet)> + Clone + '_ {
        self.entries.iter()
    }

    /// Distinct (tree, interface) pairs.
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// The (tree, interface) pair behind `id`.
    pub fn port(&self, id: PortId) -> Option<Port> {
        self.ports.get(usize::from(id)).copied()
    }

    /// The id of `port`, if the FIB uses it.
    pub fn port_id(&self, port: Port) -> Option<PortId> {
        self.port_ids.get(&port).copied()
    }

    /// The ports on tree `tree`: what a packet travelling on that tree may be forwarded to.
    pub fn tree_ports(&self, tree: u16) -> PortSet {
        PortSet::of(self.ports.iter().zip(0..=PortId::MAX).filter(|(p, _)| p.tree == tree).map(|(_, id)| id))
    }

    /// Compiles the FIB into the matcher's vector trie.
    ///
    /// # Errors
    /// [`TagError::TooLarge`] when the trie would need more than 2^29 nodes or 4 GiB of chain
    /// records, or the FIB more than 65,535 distinct port sets.
    pub fn compile(&self, compression: Compression, layout: Layout) -> Result<CompiledFib, TagError> {
        CompiledFib::build(self.entries.iter().map(|(d, s)| (*d, *s)), self.entries.len(), compression, layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(i: u16) -> Port {
        Port { tree: i % 2, interface: i }
    }

    #[test]
    fn insert_remove_and_bad_input() {
        let mut fib = DescriptorFib::new();
        let d = Descriptor::from_tags(["a"]).unwrap();
        fib.insert(d, port(1)).unwrap();
        fib.insert(d, port(2)).unwrap();
        assert_eq!(fib.len(), 1);
        assert_eq!(fib.insert(Descriptor::EMPTY, port(1)), Err(TagError::EmptyDescriptor));
        for i in 3..257 {
            fib.insert(d, port(i)).unwrap();
        }
        let before = fib.clone();
        assert_eq!(fib.insert(d, port(999)), Err(TagError::TooManyPorts));
        assert_eq!(fib.entries, before.entries);
        assert_eq!(fib.ports, before.ports);
        assert!(fib.remove(&d, port(1)));
        assert!(!fib.remove(&d, port(1)));
        for i in 2..257 {
            assert!(fib.remove(&d, port(i)));
        }
        assert!(fib.is_empty());
        assert_eq!(fib.tree_ports(1).len(), 128);
    }
}
