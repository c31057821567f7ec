//! The oracle: a plain `std` map from route name to next hops, probed longest prefix first.
//!
//! Obviously correct and slow: every lookup walks the name's prefixes from the whole name down to
//! one component and returns the first that is a route. Property tests and every benchmark check
//! the fast structures against it.

use std::collections::HashMap;

use nexthop_wire::NameView;

use super::component::component_end;
use super::nexthops::NextHops;

/// Reference name FIB.
#[derive(Debug, Clone, Default)]
pub struct ReferenceFib {
    routes: HashMap<Vec<u8>, NextHops>,
}

impl ReferenceFib {
    /// An empty FIB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a route; returns the previous next hops.
    pub fn insert(&mut self, name: &NameView<'_>, next_hops: NextHops) -> Option<NextHops> {
        self.routes.insert(name.value().to_vec(), next_hops)
    }

    /// Removes a route; returns its next hops.
    pub fn remove(&mut self, name: &NameView<'_>) -> Option<NextHops> {
        self.routes.remove(name.value())
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// Whether there is no route.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The next hops of exactly `name`, if it is a route.
    pub fn get(&self, name: &NameView<'_>) -> Option<&NextHops> {
        self.routes.get(name.value())
    }

    /// Every route, in name order.
    pub fn routes(&self) -> Vec<(&[u8], &NextHops)> {
        let mut all: Vec<(&[u8], &NextHops)> = self.routes.iter().map(|(k, v)| (&k[..], v)).collect();
        all.sort_unstable_by_key(|&(k, _)| k);
        all
    }

    /// Longest-prefix match.
    pub fn lookup(&self, name: &NameView<'_>) -> Option<&NextHops> {
        self.lookup_value(name.value())
    }

    /// Longest-prefix match of a name given by its TLV value.
    pub fn lookup_value(&self, value: &[u8]) -> Option<&NextHops> {
        let mut ends = Vec::new();
        let mut at = 0;
        while let Some(end) = component_end(value, at) {
            ends.push(end);
            at = end;
        }
        ends.iter().rev().find_map(|&end| self.routes.get(&value[..end]))
    }
}
