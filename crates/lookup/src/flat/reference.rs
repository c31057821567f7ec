//! The oracle: a `HashMap` from name to action, with the same operations and errors.

use std::collections::HashMap;

use super::FlatError;

/// Name → action, the obvious way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReferenceFlat {
    map: HashMap<Vec<u8>, u32>,
}

impl ReferenceFlat {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a name.
    ///
    /// # Errors
    /// [`FlatError::Duplicate`].
    pub fn add(&mut self, key: &[u8], action: u32) -> Result<(), FlatError> {
        if self.map.contains_key(key) {
            return Err(FlatError::Duplicate);
        }
        self.map.insert(key.to_vec(), action);
        Ok(())
    }

    /// Changes a name's action.
    ///
    /// # Errors
    /// [`FlatError::NotFound`].
    pub fn alter(&mut self, key: &[u8], action: u32) -> Result<(), FlatError> {
        *self.map.get_mut(key).ok_or(FlatError::NotFound)? = action;
        Ok(())
    }

    /// Removes a name.
    ///
    /// # Errors
    /// [`FlatError::NotFound`].
    pub fn delete(&mut self, key: &[u8]) -> Result<(), FlatError> {
        self.map.remove(key).map(|_| ()).ok_or(FlatError::NotFound)
    }

    /// A name's action.
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        self.map.get(key).copied()
    }

    /// Every (name, action).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        self.map.iter().map(|(k, &v)| (k.as_slice(), v))
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
