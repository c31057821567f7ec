//! The oracle: a plain binary trie, one node per bit, walked to the end of the address keeping
//! the last route seen. Slow and obviously right.

use super::{check_route, Address, IpError, NextHop, NO_ROUTE};

#[derive(Debug, Clone)]
struct Node {
    child: [u32; 2],
    next_hop: NextHop,
}

/// A binary trie of routes.
#[derive(Debug, Clone)]
pub struct BinaryTrie<A> {
    nodes: Vec<Node>,
    routes: usize,
    _family: core::marker::PhantomData<A>,
}

impl<A: Address> Default for BinaryTrie<A> {
    fn default() -> Self {
        BinaryTrie { nodes: vec![Node { child: [0; 2], next_hop: NO_ROUTE }], routes: 0, _family: core::marker::PhantomData }
    }
}

impl<A: Address> BinaryTrie<A> {
    /// An empty trie.
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs or replaces a route; returns the next hop it replaced.
    ///
    /// # Errors
    /// A malformed route; nothing changes.
    pub fn insert(&mut self, prefix: A, len: u8, next_hop: NextHop) -> Result<Option<NextHop>, IpError> {
        check_route(prefix, len, next_hop)?;
        let mut n = 0usize;
        for i in 0..len {
            let b = usize::from(prefix.bit(i));
            if self.nodes[n].child[b] == 0 {
                self.nodes.push(Node { child: [0; 2], next_hop: NO_ROUTE });
                self.nodes[n].child[b] = (self.nodes.len() - 1) as u32;
            }
            n = self.nodes[n].child[b] as usize;
        }
        let old = core::mem::replace(&mut self.nodes[n].next_hop, next_hop);
        if old == NO_ROUTE {
            self.routes += 1;
            Ok(None)
        } else {
            Ok(Some(old))
        }
    }

    /// Removes a route; returns its next hop, or `None` when it was not installed.
    pub fn remove(&mut self, prefix: A, len: u8) -> Option<NextHop> {
        let mut n = 0usize;
        for i in 0..len.min(A::BITS) {
            n = self.nodes[n].child[usize::from(prefix.bit(i))] as usize;
            if n == 0 {
                return None;
            }
        }
        let old = core::mem::replace(&mut self.nodes[n].next_hop, NO_ROUTE);
        (old != NO_ROUTE).then(|| {
            self.routes -= 1;
            old
        })
    }

    /// Routes installed.
    pub fn len(&self) -> usize {
        self.routes
    }

    /// Whether no route is installed.
    pub fn is_empty(&self) -> bool {
        self.routes == 0
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    pub fn lookup(&self, addr: A) -> NextHop {
        let (mut n, mut best) = (0usize, self.nodes[0].next_hop);
        for i in 0..A::BITS {
            n = self.nodes[n].child[usize::from(addr.bit(i))] as usize;
            if n == 0 {
                break;
            }
            if self.nodes[n].next_hop != NO_ROUTE {
                best = self.nodes[n].next_hop;
            }
        }
        best
    }

    /// The length of the longest route covering `addr`, if any.
    pub fn match_len(&self, addr: A) -> Option<u8> {
        let (mut n, mut best) = (0usize, (self.nodes[0].next_hop != NO_ROUTE).then_some(0));
        for i in 0..A::BITS {
            n = self.nodes[n].child[usize::from(addr.bit(i))] as usize;
            if n == 0 {
                break;
            }
            if self.nodes[n].next_hop != NO_ROUTE {
                best = Some(i + 1);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_wins() {
        let mut t = BinaryTrie::<u32>::new();
        t.insert(0x0a00_0000, 8, 1).unwrap();
        t.insert(0x0a01_0000, 16, 2).unwrap();
        assert_eq!(t.lookup(0x0a01_0203), 2);
        assert_eq!(t.lookup(0x0a02_0203), 1);
        assert_eq!(t.lookup(0x0b00_0000), NO_ROUTE);
        assert_eq!(t.match_len(0x0a01_0203), Some(16));
        assert_eq!(t.remove(0x0a01_0000, 16), Some(2));
        assert_eq!(t.lookup(0x0a01_0203), 1);
        assert_eq!(t.remove(0x0a01_0000, 16), None);
        assert_eq!(t.len(), 1);
    }
}
