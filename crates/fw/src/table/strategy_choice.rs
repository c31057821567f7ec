//! Strategy choice: which forwarding strategy applies under each name prefix (NFD's
//! StrategyChoice table).
//!
//! # Overview
//! [`StrategyTable`] maps name prefixes to a choice and gives the choice of a name: the longest
//! matching prefix's, with `/` always present. It is generic in what a choice is: a shard keeps
//! a [`StrategyId`] (its instance of the strategy, which PIT entries name too), management keeps
//! the strategy's name (`crate::pipeline::strategy::registry::StrategyName`). What a strategy
//! is and does is `crate::pipeline::strategy`'s.

use nexthop_wire::NameView;

/// A shard's instance of a strategy: an index into its instances (0 is the root's default,
/// best-route). PIT entries keep it, so an entry is finished by the strategy that began it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StrategyId(pub u32);

/// The strategy chosen for each name prefix; the longest matching choice wins, `/` is always
/// present (with `S::default()` until one is set there).
#[derive(Debug, Clone)]
pub struct StrategyTable<S> {
    choices: hashbrown::HashMap<Box<[u8]>, S>,
    deepest: usize,
}

impl<S: Default> Default for StrategyTable<S> {
    fn default() -> Self {
        let mut choices = hashbrown::HashMap::new();
        choices.insert(Box::<[u8]>::default(), S::default());
        StrategyTable { choices, deepest: 0 }
    }
}

impl<S> StrategyTable<S> {
    /// Chooses `strategy` under `prefix`.
    pub fn set(&mut self, prefix: &NameView<'_>, strategy: S) {
        self.choices.insert(prefix.value().into(), strategy);
        self.deepest = self.deepest.max(prefix.len());
    }

    /// Removes the choice at `prefix` (the root choice stays); whether there was one.
    pub fn unset(&mut self, prefix: &NameView<'_>) -> bool {
        !prefix.is_empty() && self.choices.remove(prefix.value()).is_some()
    }

    /// The strategy for `name`.
    pub fn find(&self, name: &NameView<'_>) -> &S {
        if self.choices.len() > 1 {
            for n in (1..=name.len().min(self.deepest)).rev() {
                if let Some(s) = self.choices.get(name.prefix(n).value()) {
                    return s;
                }
            }
            return self.choices.get(&[][..]).expect("the root choice is never removed");
        }
        // The root's alone (most forwarders): no hashing.
        self.choices.values().next().expect("the root choice is never removed")
    }

    /// The choice made at exactly `prefix` (TLV-VALUE), if one is.
    pub fn at(&self, prefix: &[u8]) -> Option<&S> {
        self.choices.get(prefix)
    }

    /// Every (prefix TLV-VALUE, strategy).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &S)> + '_ {
        self.choices.iter().map(|(k, v)| (&**k, v))
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::*;

    #[test]
    fn table_longest_match() {
        let mut t = StrategyTable::<StrategyId>::default();
        let n = |s| Name::from_uri(s).unwrap();
        assert_eq!(t.find(&n("/a/b").as_view()), &StrategyId(0));
        t.set(&n("/a").as_view(), StrategyId(1));
        assert_eq!(t.find(&n("/a/b").as_view()), &StrategyId(1));
        assert_eq!(t.find(&n("/a").as_view()), &StrategyId(1));
        assert_eq!(t.find(&n("/b").as_view()), &StrategyId(0));
        assert_eq!(t.at(n("/a").value()), Some(&StrategyId(1)));
        assert!(t.unset(&n("/a").as_view()));
        assert!(!t.unset(&n("/").as_view()));
        assert_eq!(t.find(&n("/a/b").as_view()), &StrategyId(0));
        t.set(&n("/").as_view(), StrategyId(2));
        assert_eq!(t.find(&n("/a/b").as_view()), &StrategyId(2), "the root's own choice");
    }
}
