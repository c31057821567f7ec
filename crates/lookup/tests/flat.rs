//! Othello / Concise against the HashMap oracle: random construct and update sequences, the query
//! structure kept in step through the deltas the control structure emits, serialisation, bad
//! input, checksum bits, and readers racing a writer that patches cells in place.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use nexthop_lookup::flat::{Cell, Delta, FlatError, Othello, OthelloConfig, OthelloQuery, ReferenceFlat, Sizing, Update};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Add(u16, u32),
    Alter(u16, u32),
    Delete(u16),
}

fn ops(keys: u16, max_action: u32) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..keys, 0..max_action).prop_map(|(k, v)| Op::Add(k, v)),
        2 => (0..keys, 0..max_action).prop_map(|(k, v)| Op::Alter(k, v)),
        1 => (0..keys).prop_map(Op::Delete),
    ];
    proptest::collection::vec(op, 1..300)
}

fn key(k: u16) -> Vec<u8> {
    // Names of varied length, like real flat names.
    let mut v = k.to_le_bytes().to_vec();
    v.resize(2 + usize::from(k % 7), 0xab);
    v
}

/// Applies a delta to the data plane's copy.
fn ship<C: Cell>(q: &mut OthelloQuery<C>, delta: Delta<C>) {
    match delta {
        Delta::Patch(p) => q.apply(&p).unwrap(),
        Delta::Rebuilt(new) => *q = new,
    }
}

fn check_all<C: Cell>(o: &Othello<C>, q: &OthelloQuery<C>, r: &ReferenceFlat) -> Result<(), TestCaseError> {
    let names: Vec<&[u8]> = r.iter().map(|(k, _)| k).collect();
    let mut batch = Vec::new();
    q.lookup_batch(&names, &mut batch);
    let mut via_trait = vec![0u32; names.len()];
    nexthop_lookup::Lookup::lookup_batch(q, &names, &mut via_trait);
    prop_assert_eq!(&via_trait, &batch);
    for ((k, want), got_batch) in r.iter().zip(batch) {
        prop_assert_eq!(o.lookup(k), want);
        prop_assert_eq!(q.lookup(k), want);
        prop_assert_eq!(q.lookup_checked(k), Some(want));
        prop_assert_eq!(got_batch, want);
        prop_assert_eq!(o.get(k), Some(want));
    }
    prop_assert_eq!(o.len(), r.len());
    Ok(())
}

/// The oracle, the control structure and its query structure, built from `initial` (its first
/// action for a name given twice).
fn start<C: Cell>(cfg: OthelloConfig, initial: &[(u16, u32)]) -> (ReferenceFlat, Othello<C>, OthelloQuery<C>) {
    let mut r = ReferenceFlat::new();
    let mut pairs: Vec<(Vec<u8>, u32)> = Vec::new();
    for &(k, v) in initial {
        if r.add(&key(k), v).is_ok() {
            pairs.push((key(k), v));
        }
    }
    let o: Othello<C> = Othello::construct(cfg, pairs.iter().map(|(k, v)| (k.as_slice(), *v))).unwrap();
    let q = o.query();
    (r, o, q)
}

fn run<C: Cell>(cfg: OthelloConfig, initial: &[(u16, u32)], ops: &[Op]) -> Result<(), TestCaseError> {
    let (mut r, mut o, mut q) = start::<C>(cfg, initial);
    check_all(&o, &q, &r)?;
    for op in ops {
        let (got, want) = match *op {
            Op::Add(k, v) => (o.add(&key(k), v), r.add(&key(k), v)),
            Op::Alter(k, v) => (o.alter(&key(k), v), r.alter(&key(k), v)),
            Op::Delete(k) => (o.delete(&key(k)), r.delete(&key(k))),
        };
        prop_assert_eq!(got, want);
        ship(&mut q, o.take_delta());
        check_all(&o, &q, &r)?;
    }
    Ok(())
}

/// `ops` in batches of `batch` through `update_batch`: the same results, one by one, as the
/// oracle's; after each batch the shipped query structure and the control structure agree with
/// the oracle on every name.
fn run_batched<C: Cell>(cfg: OthelloConfig, initial: &[(u16, u32)], ops: &[Op], batch: usize) -> Result<(), TestCaseError> {
    let (mut r, mut o, mut q) = start::<C>(cfg, initial);
    let names: Vec<Vec<u8>> = ops
        .iter()
        .map(|op| match *op {
            Op::Add(k, _) | Op::Alter(k, _) | Op::Delete(k) => key(k),
        })
        .collect();
    for (chunk, chunk_names) in ops.chunks(batch).zip(names.chunks(batch)) {
        let updates: Vec<Update<'_>> = chunk
            .iter()
            .zip(chunk_names)
            .map(|(op, name)| match *op {
                Op::Add(_, v) => Update::Add(name, v),
                Op::Alter(_, v) => Update::Alter(name, v),
                Op::Delete(_) => Update::Delete(name),
            })
            .collect();
        let mut got = Vec::new();
        o.update_batch(&updates, |i, result| got.push((i, result)));
        let want: Vec<_> = updates
            .iter()
            .enumerate()
            .map(|(i, u)| match *u {
                Update::Add(k, v) => (i, r.add(k, v)),
                Update::Alter(k, v) => (i, r.alter(k, v)),
                Update::Delete(k) => (i, r.delete(k)),
            })
            .collect();
        prop_assert_eq!(got, want);
        ship(&mut q, o.take_delta());
        check_all(&o, &q, &r)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn batched_updates_match_the_oracle(
        initial in proptest::collection::vec((0u16..300, 0u32..256), 0..200),
        ops in ops(300, 256),
        batch in 1usize..80,
    ) {
        run_batched::<u8>(OthelloConfig::new(8), &initial, &ops, batch)?;
    }

    #[test]
    fn batched_updates_through_cycles(ops in ops(24, 16), batch in 1usize..40) {
        run_batched::<u32>(OthelloConfig { checksum_bits: 16, ..OthelloConfig::new(4) }, &[], &ops, batch)?;
    }

    #[test]
    fn one_bit_othello(initial in proptest::collection::vec((0u16..200, 0u32..2), 0..150), ops in ops(200, 2)) {
        run::<u8>(OthelloConfig { sizing: Sizing::Equal, ..OthelloConfig::new(1) }, &initial, &ops)?;
    }

    #[test]
    fn eight_bit_group(initial in proptest::collection::vec((0u16..300, 0u32..256), 0..200), ops in ops(300, 256)) {
        run::<u8>(OthelloConfig::new(8), &initial, &ops)?;
    }

    #[test]
    fn twelve_bits_with_checksum(initial in proptest::collection::vec((0u16..300, 0u32..4096), 0..200), ops in ops(300, 4096)) {
        run::<u16>(OthelloConfig { checksum_bits: 4, ..OthelloConfig::new(12) }, &initial, &ops)?;
    }

    #[test]
    fn small_key_space_forces_cycles(ops in ops(24, 16)) {
        run::<u32>(OthelloConfig { checksum_bits: 16, ..OthelloConfig::new(4) }, &[], &ops)?;
    }
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let cfg = OthelloConfig::new(8);
    assert_eq!(Othello::<u8>::construct(cfg, [(&b"a"[..], 1), (&b"a"[..], 2)]).unwrap_err(), FlatError::Duplicate);
    assert!(matches!(Othello::<u8>::construct(cfg, [(&b"a"[..], 256)]), Err(FlatError::ValueTooWide { value: 256, bits: 8 })));
    assert!(matches!(Othello::<u8>::new(OthelloConfig { checksum_bits: 1, ..cfg }), Err(FlatError::TooWide { .. })));
    let mut o = Othello::<u8>::construct(cfg, [(&b"a"[..], 1), (&b"b"[..], 2)]).unwrap();
    let before = o.query().to_bytes();
    let _ = o.take_delta();
    assert_eq!(o.add(b"a", 3), Err(FlatError::Duplicate));
    assert_eq!(o.add(b"c", 300), Err(FlatError::ValueTooWide { value: 300, bits: 8 }));
    assert_eq!(o.delete(b"z"), Err(FlatError::NotFound));
    assert_eq!(o.alter(b"z", 1), Err(FlatError::NotFound));
    assert_eq!(o.alter(b"a", 999), Err(FlatError::ValueTooWide { value: 999, bits: 8 }));
    assert_eq!(o.query().to_bytes(), before);
    assert!(matches!(o.take_delta(), Delta::Patch(p) if p.is_empty()));
    assert_eq!((o.get(b"a"), o.get(b"b"), o.len()), (Some(1), Some(2), 2));
}

#[test]
fn query_structure_ships_as_bytes() {
    let pairs: Vec<(Vec<u8>, u32)> = (0..5000u32).map(|i| (i.to_be_bytes().to_vec(), i % 65536)).collect();
    let o = Othello::<u16>::construct(OthelloConfig::new(16), pairs.iter().map(|(k, v)| (k.as_slice(), *v))).unwrap();
    let bytes = o.query().to_bytes();
    let q = OthelloQuery::<u16>::from_bytes(&bytes).unwrap();
    assert!(pairs.iter().all(|(k, v)| q.lookup(k) == *v));
    assert!(q.bytes() <= 4 * 5000 * 2 * 2, "≤ 4n cells");
    assert!(matches!(OthelloQuery::<u8>::from_bytes(&bytes), Err(FlatError::BadQueryBytes(_))), "other cell width");
    assert!(matches!(OthelloQuery::<u16>::from_bytes(&bytes[..bytes.len() - 1]), Err(FlatError::BadQueryBytes(_))));
    assert!(matches!(OthelloQuery::<u16>::from_bytes(b"nope"), Err(FlatError::BadQueryBytes(_))));
    let out_of_range = nexthop_lookup::flat::Patch { a: vec![(1 << 30, 0u16)], ..Default::default() };
    assert_eq!(q.apply(&out_of_range), Err(FlatError::PatchOutOfRange));
}

#[test]
fn patches_apply_in_order_once_and_only_to_their_structure() {
    let names: Vec<[u8; 4]> = (0..2000u32).map(u32::to_be_bytes).collect();
    let mut o = Othello::<u16>::construct(OthelloConfig::new(8), names.iter().map(|k| (&k[..], 1))).unwrap();
    let _ = o.take_delta(); // the construction's
    let q = o.query();
    o.alter(&names[0], 2).unwrap();
    let Delta::Patch(first) = o.take_delta() else { panic!("an alter patches") };
    o.alter(&names[1], 3).unwrap();
    let Delta::Patch(second) = o.take_delta() else { panic!("an alter patches") };
    assert_eq!(q.apply(&second), Err(FlatError::PatchVersion { have: 0, patch: 1 }), "one before it is missing");
    assert_eq!(q.lookup(&names[1]), 1, "nothing written");
    q.apply(&first).unwrap();
    assert_eq!(q.apply(&first), Err(FlatError::PatchVersion { have: 1, patch: 0 }), "applied already");
    q.apply(&second).unwrap();
    assert_eq!((q.lookup(&names[0]), q.lookup(&names[1]), q.version()), (2, 3, 2));
    // The version ships with the bytes; a patch of another structure is refused.
    let shipped = OthelloQuery::<u16>::from_bytes(&q.to_bytes()).unwrap();
    assert_eq!(shipped.version(), 2);
    let mut other =
        Othello::<u16>::construct(OthelloConfig { seed: 7, ..OthelloConfig::new(8) }, names.iter().map(|k| (&k[..], 1))).unwrap();
    let _ = other.take_delta();
    other.alter(&names[0], 4).unwrap();
    let Delta::Patch(foreign) = other.take_delta() else { panic!("an alter patches") };
    assert_eq!(shipped.apply(&foreign), Err(FlatError::ForeignPatch));
}

#[test]
fn checksum_bits_reject_aliens_at_the_configured_rate() {
    let n = 20_000u32;
    let pairs: Vec<(Vec<u8>, u32)> = (0..n).map(|i| (i.to_le_bytes().to_vec(), i % 256)).collect();
    let o = Othello::<u16>::construct(
        OthelloConfig { checksum_bits: 8, ..OthelloConfig::new(8) },
        pairs.iter().map(|(k, v)| (k.as_slice(), *v)),
    )
    .unwrap();
    let q = o.query();
    assert!(pairs.iter().all(|(k, v)| q.lookup_checked(k) == Some(*v)));
    let aliens = 200_000u32;
    let accepted = (n..n + aliens).filter(|i| q.lookup_checked(&i.to_le_bytes()).is_some()).count();
    let rate = accepted as f64 / f64::from(aliens);
    assert!(rate > 0.5 / 256.0 && rate < 2.0 / 256.0, "false-positive rate {rate} for 8 checksum bits");
}

/// Readers query stable names while one writer alters them and adds and deletes other names
/// (each add re-colours a whole tree: A and B cells of stable names change together). Every
/// answer must be an action the name held at some moment during the read.
///
/// The writer's steps are drawn up front, so each stable name's history of actions is known to
/// the readers. Per name the writer publishes two indexes into that history: `begun` (the newest
/// action whose patch may be in progress) and `applied` (the newest fully applied). A reader
/// loads `applied`, looks up, then loads `begun`: the answer must lie in the history between the
/// two, however many alters of that name the read overlapped.
#[test]
fn readers_never_see_a_torn_update() {
    const STABLE: u32 = 2000;
    const STEPS: u32 = 60_000;
    enum Step {
        Alter(usize, u32),
        Churn(u32),
    }
    let mut rng = 0x1234_5678_u64;
    let mut history: Vec<Vec<u32>> = (0..STABLE).map(|i| vec![i % 256]).collect();
    let steps: Vec<Step> = (0..STEPS)
        .map(|step| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if step % 3 == 0 {
                let (k, new) = ((rng % u64::from(STABLE)) as usize, (rng >> 32) as u32 % 256);
                history[k].push(new);
                Step::Alter(k, new)
            } else {
                Step::Churn((rng >> 20) as u32 % 500)
            }
        })
        .collect();
    let history = Arc::new(history);

    let cfg = OthelloConfig::new(8);
    let pairs: Vec<(Vec<u8>, u32)> = (0..STABLE).map(|i| (format!("stable/{i}").into_bytes(), i % 256)).collect();
    let mut o = Othello::<u8>::construct(cfg, pairs.iter().map(|(k, v)| (k.as_slice(), *v))).unwrap();
    let shared = Arc::new(arc_swap::ArcSwap::from_pointee(o.query()));
    let begun: Arc<Vec<AtomicU32>> = Arc::new((0..STABLE).map(|_| AtomicU32::new(0)).collect());
    let applied: Arc<Vec<AtomicU32>> = Arc::new((0..STABLE).map(|_| AtomicU32::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|t| {
            let (shared, history, begun, applied, stop) = (shared.clone(), history.clone(), begun.clone(), applied.clone(), stop.clone());
            let names: Vec<Vec<u8>> = (0..STABLE).map(|i| format!("stable/{i}").into_bytes()).collect();
            std::thread::spawn(move || {
                let (mut checked, mut wrong) = (0u64, 0u64);
                let mut i = t * 7;
                // Reader 0 uses single lookups, reader 1 the batch path 16 names at a time (all
                // hashed before the first read), reader 2 240 at a time (the pipeline's steady
                // state, several runs of `BATCH` each checked on its own).
                let width = [1, 16, 240][t];
                let mut out = Vec::with_capacity(width);
                while !stop.load(Ordering::Relaxed) {
                    let ks: Vec<usize> = (0..width).map(|d| (i + d * 97) % STABLE as usize).collect();
                    let first: Vec<usize> = ks.iter().map(|&k| applied[k].load(Ordering::SeqCst) as usize).collect();
                    out.clear();
                    if width == 1 {
                        out.push(shared.load().lookup(&names[ks[0]]));
                    } else {
                        let batch: Vec<&[u8]> = ks.iter().map(|&k| names[k].as_slice()).collect();
                        shared.load().lookup_batch(&batch, &mut out);
                    }
                    for ((&k, &first), &got) in ks.iter().zip(&first).zip(&out) {
                        let last = begun[k].load(Ordering::SeqCst) as usize;
                        if !history[k][first..=last].contains(&got) {
                            wrong += 1;
                        }
                        checked += 1;
                    }
                    i += 13;
                }
                (checked, wrong)
            })
        })
        .collect();
    let mut churn: HashMap<u32, bool> = HashMap::new();
    let (mut rebuilds, mut patches) = (0, 0);
    for step in &steps {
        let altered = match *step {
            Step::Alter(k, new) => {
                begun[k].fetch_add(1, Ordering::SeqCst);
                o.alter(&pairs[k].0, new).unwrap();
                Some(k)
            }
            Step::Churn(c) => {
                let name = format!("churn/{c}").into_bytes();
                if churn.get(&c).copied().unwrap_or(false) {
                    o.delete(&name).unwrap();
                    churn.insert(c, false);
                } else {
                    o.add(&name, c % 256).unwrap();
                    churn.insert(c, true);
                }
                None
            }
        };
        match o.take_delta() {
            Delta::Patch(p) => {
                shared.load().apply(&p).unwrap();
                patches += 1;
            }
            Delta::Rebuilt(q) => {
                shared.store(Arc::new(q));
                rebuilds += 1;
            }
        }
        if let Some(k) = altered {
            applied[k].fetch_add(1, Ordering::SeqCst);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (mut checked, mut wrong) = (0, 0);
    for r in readers {
        let (c, w) = r.join().unwrap();
        checked += c;
        wrong += w;
    }
    assert_eq!(wrong, 0, "{wrong} torn answers in {checked} checked ({patches} patches, {rebuilds} rebuilds)");
    assert!(checked > 10_000 && patches > 50_000);
}
