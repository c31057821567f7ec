//! Content-store peers.
//!
//! - [`SkiplistCs`] (`skiplist-cs`): a single-tier store the way NFD builds its content store —
//!   an ordered index over names in NDN canonical order (component by component: type, then
//!   length, then bytes) holding each Data packet in its own heap allocation, with FIFO eviction
//!   of whole entries. The ordered index is crossbeam's skip list.
//! - [`FoyerCs`] (`foyer`): the foyer crate's hybrid cache (memory + block-engine disk cache on a
//!   directory, direct I/O), keyed by name bytes, as a Rust user would set it up; its async API is
//!   driven from a Tokio runtime with `block_on`, as a synchronous caller must.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::path::Path;

use crossbeam_skiplist::SkipMap;
use foyer::{BlockEngineConfig, DeviceBuilder, FsDeviceBuilder, HybridCache, HybridCacheBuilder};
use nexthop_wire::NameView;
use ref_cast::RefCast;

/// Name bytes (TLV-VALUE) ordered canonically, borrowed.
#[derive(Debug, PartialEq, Eq, RefCast)]
#[repr(transparent)]
pub struct CanonicalRef([u8]);

impl Ord for CanonicalRef {
    fn cmp(&self, other: &Self) -> Ordering {
        match (NameView::from_value(&self.0), NameView::from_value(&other.0)) {
            (Ok(a), Ok(b)) => {
                let mut bc = b.components();
                for ca in a.components() {
                    match bc.next() {
                        None => return Ordering::Greater,
                        Some(cb) => match ca.canonical_cmp(&cb) {
                            Ordering::Equal => {}
                            o => return o,
                        },
                    }
                }
                if bc.next().is_some() {
                    Ordering::Less
                } else {
                    Ordering::Equal
                }
            }
            _ => self.0.cmp(&other.0),
        }
    }
}

impl PartialOrd for CanonicalRef {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Name bytes ordered canonically, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalName(Box<[u8]>);

impl Borrow<CanonicalRef> for CanonicalName {
    fn borrow(&self) -> &CanonicalRef {
        CanonicalRef::ref_cast(&self.0)
    }
}

impl Ord for CanonicalName {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b): (&CanonicalRef, &CanonicalRef) = (self.borrow(), other.borrow());
        a.cmp(b)
    }
}

impl PartialOrd for CanonicalName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// NFD's content store design: ordered skip list of names, FIFO eviction.
#[derive(Debug)]
pub struct SkiplistCs {
    index: SkipMap<CanonicalName, Box<[u8]>>,
    fifo: VecDeque<CanonicalName>,
    capacity: usize,
}

impl SkiplistCs {
    /// A store of at most `capacity` packets.
    pub fn new(capacity: usize) -> Self {
        SkiplistCs { index: SkipMap::new(), fifo: VecDeque::new(), capacity: capacity.max(1) }
    }

    /// Stores the Data packet named `name` (TLV-VALUE), evicting the oldest when full.
    pub fn insert(&mut self, name: &[u8], wire: &[u8]) {
        let key = CanonicalName(name.into());
        if self.index.contains_key::<CanonicalRef>(key.borrow()) {
            self.index.insert(key, wire.into());
            return;
        }
        if self.fifo.len() == self.capacity {
            if let Some(old) = self.fifo.pop_front() {
                self.index.remove::<CanonicalRef>(old.borrow());
            }
        }
        self.fifo.push_back(key.clone());
        self.index.insert(key, wire.into());
    }

    /// Calls `f` with the packet named exactly `name`; whether there was one.
    pub fn get(&self, name: &[u8], f: impl FnOnce(&[u8])) -> bool {
        match self.index.get(CanonicalRef::ref_cast(name)) {
            Some(e) => {
                f(e.value());
                true
            }
            None => false,
        }
    }

    /// Packets stored.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
}

/// foyer's hybrid cache (memory + disk).
pub struct FoyerCs {
    rt: tokio::runtime::Runtime,
    cache: HybridCache<Vec<u8>, Vec<u8>>,
}

impl core::fmt::Debug for FoyerCs {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FoyerCs").finish_non_exhaustive()
    }
}

impl FoyerCs {
    /// A hybrid cache of `memory_bytes` in DRAM and `disk_bytes` in `dir` (direct I/O).
    ///
    /// # Errors
    /// When foyer cannot build its device or cache.
    pub fn new(dir: &Path, memory_bytes: usize, disk_bytes: usize) -> anyhow::Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        std::fs::create_dir_all(dir)?;
        let cache = rt.block_on(async {
            let device = FsDeviceBuilder::new(dir).with_capacity(disk_bytes).with_direct(true).build()?;
            HybridCacheBuilder::new()
                .with_name("foyer-cs")
                .memory(memory_bytes)
                .with_weighter(|k: &Vec<u8>, v: &Vec<u8>| k.len() + v.len())
                .storage()
                .with_engine_config(BlockEngineConfig::new(device))
                .build()
                .await
        })?;
        Ok(FoyerCs { rt, cache })
    }

    /// Stores a packet.
    pub fn insert(&self, name: &[u8], wire: &[u8]) {
        self.cache.insert(name.to_vec(), wire.to_vec());
    }

    /// Calls `f` with the packet named `name` from memory or disk; whether there was one.
    pub fn get(&self, name: &[u8], f: impl FnOnce(&[u8])) -> bool {
        match self.rt.block_on(self.cache.get(name)) {
            Ok(Some(e)) => {
                f(e.value());
                true
            }
            _ => false,
        }
    }

    /// Waits for foyer's background disk writes to settle (a pause; foyer has no flush call).
    pub fn settle(&self) {
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
}

impl Drop for FoyerCs {
    fn drop(&mut self) {
        let _ = self.rt.block_on(self.cache.close());
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::*;

    #[test]
    fn canonical_order_is_ndn_order() {
        let n = |u: &str| CanonicalName(Name::from_uri(u).unwrap().value().into());
        // Shorter component first, then bytes; a prefix sorts before its extensions.
        assert!(n("/a/b") < n("/a/b/c"));
        assert!(n("/b") < n("/aa"));
        assert!(n("/a/z") < n("/b"));
    }

    #[test]
    fn skiplist_cs_is_fifo() {
        let mut cs = SkiplistCs::new(2);
        let n = |u: &str| Name::from_uri(u).unwrap().value().to_vec();
        cs.insert(&n("/x"), b"1");
        cs.insert(&n("/y"), b"2");
        cs.insert(&n("/z"), b"3");
        assert!(!cs.get(&n("/x"), |_| {}));
        let mut got = Vec::new();
        assert!(cs.get(&n("/z"), |w| got.extend_from_slice(w)));
        assert_eq!(got, b"3");
        assert_eq!(cs.len(), 2);
    }
}
