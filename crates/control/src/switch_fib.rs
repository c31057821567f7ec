//! Whose FIB a switch forwards by, and how it changes: sans-I/O, on the switch's thread.
//!
//! # Overview
//! A switch starts on its own: it holds the control structure ([`Othello`]) of its FIB and
//! changes it itself — from the hosts its clients write ([`SwitchFib::write`]) and, when it
//! learns, from the hosts it sees ([`SwitchFib::learn`]). The first whole structure a controller
//! pushes ([`SwitchFib::push`]) makes it the controller's: the switch drops its control
//! structure (it never sees the names again), applies the patches it is sent in order, and
//! refuses writes. Every refusal is typed ([`FibError`]) and changes nothing: the switch
//! forwards on the last complete structure.

use nexthop_lookup::flat::{Delta, FlatError, Othello, OthelloConfig, OthelloQuery, Patch};

/// The FIB's cells: 16 bits.
pub type FibCell = u16;
/// Bits of the egress port in each cell (at most 64 ports).
pub const PORT_BITS: u32 = 6;
/// Checksum bits in each cell: all but one in 1,024 frames to names outside the FIB are
/// dropped where they enter (the paper's section VII-A).
pub const CHECKSUM_BITS: u32 = 10;

/// The shape every switch's FIB has (the controller builds the same).
pub fn fib_config() -> OthelloConfig {
    OthelloConfig { checksum_bits: CHECKSUM_BITS, ..OthelloConfig::new(PORT_BITS) }
}

/// A change to the FIB, as the control channel carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryChange {
    /// The host is behind this port (installed, or moved).
    Put {
        /// Its address.
        mac: [u8; 6],
        /// The port.
        port: u32,
    },
    /// The host is gone.
    Delete {
        /// Its address.
        mac: [u8; 6],
    },
}

/// A change a controller computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushedDelta {
    /// Cells of the structure in force.
    Patch(Patch<FibCell>),
    /// A whole query structure, as [`OthelloQuery::to_bytes`] writes it.
    Structure(Vec<u8>),
}

/// Why the FIB did not change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FibError {
    /// A write to a switch whose FIB is a controller's.
    #[error("the FIB is a controller's: write entries through it")]
    Controlled,
    /// A port the switch does not have.
    #[error("port {port}: the switch has {ports} ports")]
    NoSuchPort {
        /// The port asked for.
        port: u32,
        /// The switch's ports.
        ports: usize,
    },
    /// A cell value wider than the FIB's cells.
    #[error("cell value {0:#x} does not fit a {bits}-bit cell", bits = FibCell::BITS)]
    CellTooWide(u32),
    /// A structure whose widths are not the switch's.
    #[error("a structure of {value_bits} port bits and {checksum_bits} checksum bits; the switch's have {PORT_BITS} and {CHECKSUM_BITS}")]
    WrongWidths {
        /// Its port bits.
        value_bits: u32,
        /// Its checksum bits.
        checksum_bits: u32,
    },
    /// What the flat-name structures refused (another structure's patch, a version skipped,
    /// bytes that are no structure, …).
    #[error(transparent)]
    Flat(#[from] FlatError),
}

/// The FIB's shape and version, after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FibState {
    /// [`OthelloQuery::fingerprint`].
    pub structure: u64,
    /// [`OthelloQuery::version`].
    pub version: u64,
    /// Hosts in the FIB, when the switch holds its control structure.
    pub hosts: Option<usize>,
}

/// The switch's side of its FIB (see the module overview).
#[derive(Debug)]
pub struct SwitchFib {
    /// The control structure, while the switch holds it.
    own: Option<Othello<FibCell>>,
    ports: usize,
    /// Deltas applied and refused (pushes and writes).
    pub applied: u64,
    /// See [`SwitchFib::applied`].
    pub refused: u64,
}

impl SwitchFib {
    /// A switch of `ports` ports holding `own`, with the query structure it forwards by
    /// (made from it, all deltas taken).
    pub fn new(mut own: Othello<FibCell>, ports: usize) -> (SwitchFib, OthelloQuery<FibCell>) {
        let _ = own.take_delta();
        let query = own.query();
        (SwitchFib { own: Some(own), ports, applied: 0, refused: 0 }, query)
    }

    /// Whether a controller's structure is in force.
    pub fn controlled(&self) -> bool {
        self.own.is_none()
    }

    /// The state of `fib`.
    pub fn state(&self, fib: &OthelloQuery<FibCell>) -> FibState {
        FibState { structure: fib.fingerprint(), version: fib.version(), hosts: self.own.as_ref().map(Othello::len) }
    }

    /// Installs, moves or removes hosts in the switch's own FIB, all or none.
    ///
    /// # Errors
    /// [`FibError::Controlled`], a port the switch does not have, a name not there to delete.
    pub fn write(&mut self, fib: &mut OthelloQuery<FibCell>, changes: &[EntryChange]) -> Result<FibState, FibError> {
        let ports = self.ports;
        let Some(own) = self.own.as_mut() else {
            self.refused += 1;
            return Err(FibError::Controlled);
        };
        let checked = changes.iter().try_for_each(|c| match c {
            EntryChange::Put { port, .. } if *port as usize >= ports => Err(FibError::NoSuchPort { port: *port, ports }),
            EntryChange::Delete { mac } if own.get(mac).is_none() => Err(FibError::Flat(FlatError::NotFound)),
            _ => Ok(()),
        });
        if let Err(e) = checked {
            self.refused += 1;
            return Err(e);
        }
        // Checked first, so each change below succeeds (an add may rebuild: still a success).
        for c in changes {
            let done = match c {
                EntryChange::Put { mac, port } if own.get(mac).is_some() => own.alter(mac, *port),
                EntryChange::Put { mac, port } => own.add(mac, *port),
                EntryChange::Delete { mac } => own.delete(mac),
            };
            if let Err(e) = done {
                // Not reached after the checks; the structure is still whole (nothing changes
                // when an operation fails), so the FIB takes what was done so far.
                tracing::warn!("switch: {e} in a checked write");
            }
        }
        self.take_own_delta(fib)?;
        Ok(self.state(fib))
    }

    /// Hosts the switch saw on its edge ports, installed (or moved) in its own FIB; nothing
    /// under a controller. Returns the hosts installed, with their ports.
    pub fn learn(&mut self, fib: &mut OthelloQuery<FibCell>, seen: impl IntoIterator<Item = ([u8; 6], u32)>) -> Vec<([u8; 6], u32)> {
        let mut learned = Vec::new();
        if let Some(own) = self.own.as_mut() {
            for (mac, port) in seen {
                let done = if own.get(&mac).is_some() { own.alter(&mac, port) } else { own.add(&mac, port) };
                match done {
                    Ok(()) => learned.push((mac, port)),
                    Err(e) => tracing::warn!("switch: host not installed: {e}"),
                }
            }
            if !learned.is_empty() {
                if let Err(e) = self.take_own_delta(fib) {
                    tracing::warn!("switch: the FIB refused a change: {e}");
                }
            }
        }
        learned
    }

    fn take_own_delta(&mut self, fib: &mut OthelloQuery<FibCell>) -> Result<(), FibError> {
        let own = self.own.as_mut().expect("called with the control structure");
        match own.take_delta() {
            Delta::Patch(p) => fib.apply(&p).inspect_err(|_| self.refused += 1)?,
            Delta::Rebuilt(q) => *fib = q,
        }
        self.applied += 1;
        Ok(())
    }

    /// Applies a controller's change: a patch of the structure in force, or a whole structure
    /// (which makes the FIB the controller's).
    ///
    /// # Errors
    /// A patch of another structure or version, a cell too wide, bytes that are no structure
    /// of the switch's widths: nothing changes.
    pub fn push(&mut self, fib: &mut OthelloQuery<FibCell>, delta: PushedDelta) -> Result<FibState, FibError> {
        let done = match delta {
            PushedDelta::Patch(p) => fib.apply(&p).map_err(FibError::from),
            PushedDelta::Structure(bytes) => OthelloQuery::<FibCell>::from_bytes(&bytes).map_err(FibError::from).and_then(|q| {
                if q.value_bits() != PORT_BITS || q.checksum_bits() != CHECKSUM_BITS {
                    return Err(FibError::WrongWidths { value_bits: q.value_bits(), checksum_bits: q.checksum_bits() });
                }
                *fib = q;
                if self.own.take().is_some() {
                    tracing::info!("switch: a controller's FIB is in force (the switch's own, and its learning, end)");
                }
                Ok(())
            }),
        };
        match done {
            Ok(()) => {
                self.applied += 1;
                Ok(self.state(fib))
            }
            Err(e) => {
                self.refused += 1;
                Err(e)
            }
        }
    }
}

/// A patch from the control channel's cells: each value must fit a cell.
///
/// # Errors
/// [`FibError::CellTooWide`].
pub fn patch_from_cells(
    structure: u64,
    version: u64,
    a: impl IntoIterator<Item = (u32, u32)>,
    b: impl IntoIterator<Item = (u32, u32)>,
) -> Result<Patch<FibCell>, FibError> {
    let cells = |it: &mut dyn Iterator<Item = (u32, u32)>| -> Result<Vec<(u32, FibCell)>, FibError> {
        it.map(|(i, v)| FibCell::try_from(v).map(|v| (i, v)).map_err(|_| FibError::CellTooWide(v))).collect()
    };
    Ok(Patch { a: cells(&mut a.into_iter())?, b: cells(&mut b.into_iter())?, structure, version })
}

/// A patch as the control channel carries it (the inverse of [`patch_from_cells`]).
pub fn patch_to_pb(patch: &Patch<FibCell>) -> crate::pb::Patch {
    let cells = |c: &[(u32, FibCell)]| c.iter().map(|&(index, v)| crate::pb::Cell { index, value: u32::from(v) }).collect();
    crate::pb::Patch { structure: patch.structure, version: patch.version, a: cells(&patch.a), b: cells(&patch.b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(i: u8) -> [u8; 6] {
        [2, 0, 0, 0, 0, i]
    }

    fn fib(hosts: &[(u8, u32)]) -> (SwitchFib, OthelloQuery<FibCell>) {
        let names: Vec<([u8; 6], u32)> = hosts.iter().map(|&(m, p)| (mac(m), p)).collect();
        let own = Othello::construct(fib_config(), names.iter().map(|(m, p)| (&m[..], *p))).unwrap();
        SwitchFib::new(own, 4)
    }

    #[test]
    fn writes_change_the_own_fib_all_or_none() {
        let (mut sw, mut q) = fib(&[(1, 0)]);
        let s = sw.write(&mut q, &[EntryChange::Put { mac: mac(2), port: 3 }, EntryChange::Put { mac: mac(1), port: 2 }]).unwrap();
        assert_eq!((q.lookup_checked(&mac(1)), q.lookup_checked(&mac(2)), s.hosts), (Some(2), Some(3), Some(2)));
        let before = q.to_bytes();
        let bad = [EntryChange::Put { mac: mac(3), port: 1 }, EntryChange::Put { mac: mac(4), port: 4 }];
        assert_eq!(sw.write(&mut q, &bad), Err(FibError::NoSuchPort { port: 4, ports: 4 }));
        assert_eq!(sw.write(&mut q, &[EntryChange::Delete { mac: mac(9) }]), Err(FibError::Flat(FlatError::NotFound)));
        assert_eq!(q.to_bytes(), before, "a refused write changes nothing");
        sw.write(&mut q, &[EntryChange::Delete { mac: mac(2) }]).unwrap();
        assert_eq!(q.lookup_checked(&mac(1)), Some(2));
        assert_eq!((sw.applied, sw.refused), (2, 2));
    }

    #[test]
    fn a_pushed_structure_makes_the_fib_the_controllers_and_only_its_patches_apply() {
        let (mut sw, mut q) = fib(&[(1, 0)]);
        let mut ctl = Othello::<FibCell>::construct(fib_config(), [(&mac(5)[..], 1)]).unwrap();
        let _ = ctl.take_delta();
        sw.push(&mut q, PushedDelta::Structure(ctl.query().to_bytes())).unwrap();
        assert!(sw.controlled());
        assert_eq!(sw.write(&mut q, &[EntryChange::Put { mac: mac(2), port: 1 }]), Err(FibError::Controlled));
        assert_eq!(q.lookup_checked(&mac(5)), Some(1));
        ctl.alter(&mac(5), 3).unwrap();
        let Delta::Patch(p) = ctl.take_delta() else { panic!("an alter patches") };
        sw.push(&mut q, PushedDelta::Patch(p.clone())).unwrap();
        assert_eq!(q.lookup_checked(&mac(5)), Some(3));
        // The same patch again, a patch of another structure, bytes that are none: refused.
        assert!(matches!(sw.push(&mut q, PushedDelta::Patch(p.clone())), Err(FibError::Flat(FlatError::PatchVersion { .. }))));
        let foreign = Patch { structure: p.structure ^ 1, version: q.version(), ..p };
        assert_eq!(sw.push(&mut q, PushedDelta::Patch(foreign)), Err(FibError::Flat(FlatError::ForeignPatch)));
        assert!(matches!(sw.push(&mut q, PushedDelta::Structure(vec![1, 2, 3])), Err(FibError::Flat(FlatError::BadQueryBytes(_)))));
        assert_eq!(q.lookup_checked(&mac(5)), Some(3));
        assert_eq!(sw.learn(&mut q, [(mac(7), 2)]), [], "no learning under a controller");
    }

    #[test]
    fn a_structure_of_other_widths_and_too_wide_cells_are_refused() {
        let (mut sw, mut q) = fib(&[]);
        let other = Othello::<FibCell>::construct(OthelloConfig::new(8), [(&mac(5)[..], 1)]).unwrap();
        assert_eq!(
            sw.push(&mut q, PushedDelta::Structure(other.query().to_bytes())),
            Err(FibError::WrongWidths { value_bits: 8, checksum_bits: 0 })
        );
        assert!(!sw.controlled());
        assert_eq!(patch_from_cells(1, 0, [(0, 0x1_0000)], []), Err(FibError::CellTooWide(0x1_0000)));
    }

    #[test]
    fn the_switch_learns_while_it_holds_its_fib() {
        let (mut sw, mut q) = fib(&[(1, 0)]);
        assert_eq!(sw.learn(&mut q, [(mac(1), 2), (mac(2), 1)]), [(mac(1), 2), (mac(2), 1)]);
        assert_eq!((q.lookup_checked(&mac(1)), q.lookup_checked(&mac(2))), (Some(2), Some(1)));
    }
}
