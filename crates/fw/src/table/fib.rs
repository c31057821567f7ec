//! The forwarder's FIB: the name FIB of `nexthop-lookup` (binary search of hash tables) plus
//! the root route `/`, which that structure does not hold (a route there is a default route).

use nexthop_lookup::name::{NameFib, NameFibConfig, NextHops, RouteError};
use nexthop_wire::{Name, NameView};

/// A change to the FIB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FibOp {
    /// Sets the route at a name; no next hops removes it.
    Set(Name, NextHops),
    /// Gives back spare capacity after a bulk load ([`Fib::shrink_to_fit`]).
    Compact,
}

/// Routes by name prefix.
#[derive(Debug, Clone)]
pub struct Fib {
    names: NameFib,
    root: Option<NextHops>,
}

impl Default for Fib {
    fn default() -> Self {
        Fib::new(NameFibConfig::default())
    }
}

impl Fib {
    /// An empty FIB.
    pub fn new(config: NameFibConfig) -> Self {
        Fib { names: NameFib::new(config), root: None }
    }

    /// Adds or replaces the route at `name`; the previous next hops if there were.
    ///
    /// # Errors
    /// [`RouteError`] (too many components, too long, no next hop); nothing changes then.
    pub fn insert(&mut self, name: &NameView<'_>, hops: NextHops) -> Result<Option<NextHops>, RouteError> {
        if name.is_empty() {
            if hops.is_empty() {
                return Err(RouteError::NoNextHops);
            }
            return Ok(self.root.replace(hops));
        }
        self.names.insert(name, hops)
    }

    /// Gives back spare capacity after a bulk load: [`NameFib::shrink_to_fit`].
    pub fn shrink_to_fit(&mut self) {
        self.names.shrink_to_fit();
    }

    /// Applies one change. A route the FIB refuses (too many components, too long) was refused
    /// by management before it became an operation, and a removal of an absent route changes
    /// nothing; both are ignored here.
    pub fn apply(&mut self, op: &FibOp) {
        match op {
            FibOp::Set(name, hops) if hops.is_empty() => {
                let _ = self.remove(&name.as_view());
            }
            FibOp::Set(name, hops) => {
                let _ = self.insert(&name.as_view(), hops.clone());
            }
            FibOp::Compact => self.shrink_to_fit(),
        }
    }

    /// Removes the route at `name`.
    ///
    /// # Errors
    /// [`RouteError::NotFound`] when there is none.
    pub fn remove(&mut self, name: &NameView<'_>) -> Result<NextHops, RouteError> {
        if name.is_empty() {
            return self.root.take().ok_or_else(|| RouteError::NotFound("/".into()));
        }
        self.names.remove(name)
    }

    /// The next hops of the longest route that is a prefix of `name`.
    #[inline]
    pub fn lookup(&self, name: &NameView<'_>) -> Option<&NextHops> {
        self.names.lookup(name).or(self.root.as_ref())
    }

    /// The route at exactly `name`.
    pub fn get(&self, name: &NameView<'_>) -> Option<&NextHops> {
        if name.is_empty() {
            self.root.as_ref()
        } else {
            self.names.get(name)
        }
    }

    /// Routes held.
    pub fn len(&self) -> usize {
        self.names.len() + usize::from(self.root.is_some())
    }

    /// True when there is no route.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every route: (name TLV-VALUE, next hops).
    pub fn routes(&self) -> impl Iterator<Item = (Vec<u8>, &NextHops)> + '_ {
        self.root.iter().map(|h| (Vec::new(), h)).chain(self.names.routes())
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::*;

    #[test]
    fn root_route_is_the_default() {
        let mut fib = Fib::default();
        let n = |s| Name::from_uri(s).unwrap();
        assert!(fib.lookup(&n("/a/b").as_view()).is_none());
        fib.insert(&n("/").as_view(), NextHops::single(300, 1)).unwrap();
        fib.insert(&n("/a").as_view(), NextHops::single(301, 1)).unwrap();
        assert_eq!(fib.lookup(&n("/a/b").as_view()).unwrap().best().unwrap().face, 301);
        assert_eq!(fib.lookup(&n("/b").as_view()).unwrap().best().unwrap().face, 300);
        assert_eq!(fib.len(), 2);
        assert_eq!(fib.routes().count(), 2);
        fib.remove(&n("/").as_view()).unwrap();
        assert!(fib.lookup(&n("/b").as_view()).is_none());
        assert!(fib.remove(&n("/").as_view()).is_err());
    }

    #[test]
    fn compacting_after_a_bulk_load_keeps_every_answer() {
        let mut fib = Fib::default();
        let n = |i: u32| Name::from_uri(&format!("/site{}/part{}", i % 97, i)).unwrap();
        for i in 0..5000 {
            fib.insert(&n(i).as_view(), NextHops::single(300 + i % 7, 1)).unwrap();
        }
        fib.shrink_to_fit();
        for i in 0..5000 {
            let longer = Name::from_uri(&format!("/site{}/part{}/x", i % 97, i)).unwrap();
            assert_eq!(fib.lookup(&longer.as_view()).unwrap().best().unwrap().face, 300 + i % 7);
        }
        assert!(fib.lookup(&Name::from_uri("/site1/other").unwrap().as_view()).is_none());
        fib.insert(&n(9999).as_view(), NextHops::single(299, 1)).unwrap();
        assert_eq!(fib.len(), 5001);
    }
}
