//! TagNet: the compiled-trie matchers (every compression × layout × sibling order × list scan × FAS order) and the inverted index against
//! the linear-scan oracle on random FIBs; Thorup–Zwick delivery on random trees; the engine on
//! good and bad headers.

use nexthop_lookup::tag::{
    Address, CompiledFib, Compression, Counters, Decision, Descriptor, DescriptorFib, DropReason, Engine, Fanout, FasOrder, FlsBatchOrder,
    FlsOrder, ForwardingState, Hop, InvertedIndex, Label, Layout, LinearScan, MatchScratch, Port, PortSet, RecordCheck, SiblingOrder,
    TagError, Tree, TzLabels, NO_PARENT, VARIANTS,
};
use proptest::prelude::*;

/// A descriptor of the tags `t<i>` for each i in `tags`.
fn desc(tags: &[u16]) -> Descriptor {
    Descriptor::from_tags(tags.iter().map(|t| format!("t{t}"))).unwrap()
}

/// A FIB of `entries` (tags, port) over a small tag vocabulary, so that queries match many.
fn fib_of(entries: &[(Vec<u16>, u8)]) -> DescriptorFib {
    let mut fib = DescriptorFib::new();
    for (tags, port) in entries {
        fib.insert(desc(tags), Port { tree: u16::from(port % 2), interface: u16::from(*port) }).unwrap();
    }
    fib
}

fn entries() -> impl Strategy<Value = Vec<(Vec<u16>, u8)>> {
    prop::collection::vec((prop::collection::vec(0u16..24, 1..4), 0u8..40), 1..120)
}

fn check_all(fib: &DescriptorFib, queries: &[Descriptor]) -> Result<(), TestCaseError> {
    let scan = LinearScan::new(fib.entries());
    let inverted = InvertedIndex::new(fib.entries());
    let orders = [SiblingOrder::Descending, SiblingOrder::Ascending];
    for ((c, l), order) in VARIANTS.into_iter().flat_map(|v| orders.map(|o| (v, o))) {
        let mut compiled = CompiledFib::build_ordered(fib.entries().map(|(d, p)| (*d, *p)), fib.len(), c, l, order).unwrap();
        prop_assert_eq!(compiled.sibling_order(), order);
        prop_assert_eq!(compiled.len(), fib.len());
        // Both list scans (node by node, and AVX-512 where this CPU has it), the walks in the
        // paper's depth-first order and in ours.
        let walk_orders = [
            (FasOrder::DepthFirst, FlsOrder::DepthFirst),
            (FasOrder::BreadthFirst, FlsOrder::BreadthAfterFirstMatch),
            (FasOrder::BreadthFirst, FlsOrder::BreadthFirst),
        ];
        for (simd, (fas_order, fls_order)) in [false, true].into_iter().flat_map(|s| walk_orders.map(|o| (s, o))) {
            if compiled.set_simd(simd) != simd {
                continue;
            }
            compiled.set_fas_order(fas_order);
            prop_assert_eq!(compiled.fas_order(), fas_order);
            compiled.set_fls_order(fls_order);
            prop_assert_eq!(compiled.fls_order(), fls_order);
            check_compiled(fib, &mut compiled, &scan, queries, (c, l))?;
        }
    }
    for q in queries {
        prop_assert_eq!(inverted.fas(q, Fanout::ALL, &PortSet::ALL), scan.fas(q, Fanout::ALL, &PortSet::ALL));
        prop_assert_eq!(inverted.fls(q).map(|b| b.weight), scan.fls(q).map(|b| b.weight));
    }
    Ok(())
}

/// FAS (every fan-out, restricted to a tree) and FLS of `compiled` against the linear scan.
fn check_compiled(
    fib: &DescriptorFib,
    compiled: &mut CompiledFib,
    scan: &LinearScan,
    queries: &[Descriptor],
    (c, l): (Compression, Layout),
) -> Result<(), TestCaseError> {
    let mut scratch = MatchScratch::new();
    // Each packet's FLS answer, single walk, for the batch calls below.
    let mut single = Vec::with_capacity(queries.len());
    for q in queries {
        let all = scan.fas(q, Fanout::ALL, &PortSet::ALL);
        prop_assert_eq!(compiled.fas(q, Fanout::ALL, &PortSet::ALL, &mut scratch), all, "{:?}/{:?} fas {:?}", c, l, q);
        for k in [1, 2, 3] {
            let some = compiled.fas(q, Fanout::new(k).unwrap(), &PortSet::ALL, &mut scratch);
            prop_assert!(some.is_subset_of(&all) && some.len() == all.len().min(k));
        }
        let tree0 = fib.tree_ports(0);
        prop_assert_eq!(compiled.fas(q, Fanout::ALL, &tree0, &mut scratch), all.intersection(&tree0));
        let (weight, sets) = scan.fls_answers(q);
        let best = compiled.fls(q, &mut scratch);
        single.push(best);
        match best {
            None => prop_assert!(sets.is_empty(), "{:?}/{:?} fls missed {:?}", c, l, q),
            Some(best) => prop_assert!(best.weight == weight && sets.contains(&best.ports), "{:?}/{:?} fls {:?}", c, l, q),
        }
        // Above a floor: the same answer while it is heavier than the floor, then none.
        for floor in [weight.saturating_sub(1), weight, weight + 1] {
            match compiled.fls_above(q, floor, &mut scratch) {
                None => prop_assert!(sets.is_empty() || weight <= floor, "{:?}/{:?} fls above {} missed {:?}", c, l, floor, q),
                Some(best) => prop_assert!(
                    best.weight == weight && weight > floor && sets.contains(&best.ports),
                    "{:?}/{:?} fls above {} {:?}",
                    c,
                    l,
                    floor,
                    q
                ),
            }
        }
    }
    // FAS testing chain records at once answers as the default (deferred) walk above.
    compiled.set_fas_record_check(RecordCheck::AtOnce);
    for q in queries {
        let all = scan.fas(q, Fanout::ALL, &PortSet::ALL);
        prop_assert_eq!(compiled.fas(q, Fanout::ALL, &PortSet::ALL, &mut scratch), all, "{:?}/{:?} fas at once {:?}", c, l, q);
        let some = compiled.fas(q, Fanout::new(2).unwrap(), &PortSet::ALL, &mut scratch);
        prop_assert!(some.is_subset_of(&all) && some.len() == all.len().min(2));
    }
    compiled.set_fas_record_check(RecordCheck::Deferred);
    // The batch calls, in both of their orders, answer exactly as the single walks do (an
    // interleaved depth-first walk tests a held chain record a turn later, and must still pick
    // the same entry of two of the answer's weight).
    let floors: Vec<(Descriptor, u32)> = queries.iter().zip(&single).map(|(q, a)| (*q, a.map_or(0, |b| b.weight - 1))).collect();
    let single_above: Vec<_> = floors.iter().map(|(q, f)| compiled.fls_above(q, *f, &mut scratch)).collect();
    for order in [FlsBatchOrder::OneAtATime, FlsBatchOrder::Interleaved] {
        compiled.set_fls_batch_order(order);
        let mut out = vec![None; queries.len()];
        compiled.fls_batch(queries, &mut out, &mut scratch);
        prop_assert_eq!(&out, &single, "{:?}/{:?} fls batch {:?}", c, l, order);
        compiled.fls_above_batch(&floors, &mut out, &mut scratch);
        prop_assert_eq!(&out, &single_above, "{:?}/{:?} fls above batch {:?}", c, l, order);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn matchers_agree_with_the_linear_scan(
        entries in entries(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(0u16..40, 0..3)), 1..40),
        random in prop::collection::vec(prop::collection::vec(0u16..40, 1..8), 0..20),
    ) {
        let fib = fib_of(&entries);
        // Queries drawn from the FIB with up to two extra tags, plus random ones.
        let mut queries: Vec<Descriptor> = picks.iter().map(|(i, extra)| {
            let (tags, _) = &entries[i.index(entries.len())];
            let mut all = tags.clone();
            all.extend(extra);
            desc(&all)
        }).collect();
        queries.extend(random.iter().map(|t| desc(t)));
        check_all(&fib, &queries)?;
    }

    #[test]
    fn the_counted_uncompressed_size_is_what_the_build_takes(entries in entries()) {
        let fib = fib_of(&entries);
        for (c, permuted) in [(Compression::None, false), (Compression::Perm, true)] {
            let counted = CompiledFib::plain_size(fib.entries().map(|(d, p)| (*d, *p)), fib.len(), permuted).unwrap();
            for l in Layout::ALL {
                let built = CompiledFib::build(fib.entries().map(|(d, p)| (*d, *p)), fib.len(), c, l).unwrap();
                prop_assert_eq!(counted.nodes, built.node_count() as u64, "{:?}/{:?}", c, l);
                prop_assert_eq!(counted.bytes, built.memory_bytes() as u64, "{:?}/{:?}", c, l);
            }
        }
    }

    #[test]
    fn removals_are_seen_by_the_next_compile(entries in entries(), remove in prop::collection::vec(any::<prop::sample::Index>(), 1..30)) {
        let mut fib = fib_of(&entries);
        for i in &remove {
            let (tags, port) = &entries[i.index(entries.len())];
            fib.remove(&desc(tags), Port { tree: u16::from(port % 2), interface: u16::from(*port) });
        }
        let queries: Vec<Descriptor> = entries.iter().map(|(t, _)| desc(t)).collect();
        check_all(&fib, &queries)?;
    }

    #[test]
    fn every_locator_is_delivered_on_random_trees(parents in prop::collection::vec(any::<prop::sample::Index>(), 0..60), root_shift in 0usize..60) {
        // Node v > 0 hangs below a random earlier node; then ids are rotated so the root moves.
        let n = parents.len() + 1;
        let rot = |v: usize| ((v + root_shift) % n) as u32;
        let mut parent = vec![NO_PARENT; n];
        for (i, p) in parents.iter().enumerate() {
            parent[rot(i + 1) as usize] = rot(p.index(i + 1));
        }
        let tree = Tree::from_parents(parent).unwrap();
        let labels = TzLabels::build(&tree).unwrap();
        let bound = 3.4 * (n.max(2) as f64).log2();
        for t in 0..n as u32 {
            prop_assert!(f64::from(labels.label_bits(t)) <= bound.max(3.0), "label of {} has {} bits", t, labels.label_bits(t));
            for s in 0..n as u32 {
                let mut at = s;
                let mut hops = 0;
                loop {
                    match labels.router(at).forward(&labels.label(t)).unwrap() {
                        Hop::Deliver => break,
                        Hop::Interface(i) => at = labels.neighbor(at, i).unwrap(),
                    }
                    hops += 1;
                    prop_assert!(hops <= n, "{} → {} loops", s, t);
                }
                prop_assert_eq!(at, t);
            }
        }
    }

    #[test]
    fn the_engine_never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let state = small_state();
        let mut engine = Engine::new(&state);
        let decided = engine.forward(&bytes).is_some();
        let c = &engine.counters;
        prop_assert_eq!(c.fas + c.fls + c.tz + c.delivered + c.drops.iter().sum::<u64>(), 1);
        prop_assert_eq!(decided, c.drops.iter().sum::<u64>() == 0);
    }

    #[test]
    fn a_burst_is_decided_and_counted_as_its_packets_one_by_one(
        burst in prop::collection::vec((0u8..4, any::<u8>(), prop::collection::vec(0u16..12, 1..4), prop::collection::vec(any::<u8>(), 0..30)), 0..40),
    ) {
        // Each packet: a multicast or anycast descriptor on tree 0, 1 or 2 (unknown), a locator,
        // or random bytes.
        let mut state = small_state();
        let labels = TzLabels::build(&Tree::from_parents(vec![NO_PARENT, 0, 0, 1]).unwrap()).unwrap();
        let packets: Vec<Vec<u8>> = burst
            .iter()
            .map(|(kind, x, bits, bytes)| {
                let tree = u16::from(x % 3);
                let address = match kind {
                    0 => Address::Descriptor { descriptor: desc(bits), fanout: Fanout::ALL, tree },
                    1 => Address::Descriptor { descriptor: desc(bits), fanout: Fanout::new(1).unwrap(), tree },
                    2 => Address::Locator { tree: tree % 2, label: labels.label(u32::from(x % 4)) },
                    _ => return bytes.clone(),
                };
                let mut v = Vec::new();
                address.encode(&mut v);
                v
            })
            .collect();
        let (one_by_one, bursts) = one_by_one_and_as_bursts(&mut state, &packets);
        for burst in bursts {
            prop_assert_eq!(&burst, &one_by_one);
        }
    }
}

fn small_state() -> ForwardingState {
    let fib = fib_of(&[(vec![1, 2], 3), (vec![1], 4), (vec![5], 6)]);
    let tree = Tree::from_parents(vec![NO_PARENT, 0, 0, 1]).unwrap();
    let labels = TzLabels::build(&tree).unwrap();
    ForwardingState {
        fib: fib.compile(Compression::PermChain, Layout::Srol).unwrap(),
        tree_ports: vec![fib.tree_ports(0), fib.tree_ports(1)],
        routers: vec![*labels.router(1)],
    }
}

#[test]
fn the_engine_dispatches_and_counts_every_drop() {
    let mut state = small_state();
    let mut engine = Engine::new(&state);
    let packet = |a: Address| {
        let mut v = Vec::new();
        a.encode(&mut v);
        v.extend_from_slice(b"payload");
        v
    };
    let labels = TzLabels::build(&Tree::from_parents(vec![NO_PARENT, 0, 0, 1]).unwrap()).unwrap();
    let q = desc(&[1, 2, 9]);
    let multicast = packet(Address::Descriptor { descriptor: q, fanout: Fanout::ALL, tree: 0 });
    assert_eq!(Address::parse(&multicast), Ok(Address::Descriptor { descriptor: q, fanout: Fanout::ALL, tree: 0 }));
    // Ports 4 (interface 4, tree 0) and 3 (tree 1): tree 0 keeps only interface 4's port.
    let Some(Decision::Ports(p)) = engine.forward(&multicast) else { panic!("multicast dropped") };
    assert_eq!(p.len(), 1);
    let anycast_t1 = packet(Address::Descriptor { descriptor: q, fanout: Fanout::new(1).unwrap(), tree: 1 });
    assert!(matches!(engine.forward(&anycast_t1), Some(Decision::Ports(_))));
    let to_self = packet(Address::Locator { tree: 0, label: labels.label(1) });
    assert_eq!(engine.forward(&to_self), Some(Decision::Deliver));
    let to_leaf = packet(Address::Locator { tree: 0, label: labels.label(3) });
    assert!(matches!(engine.forward(&to_leaf), Some(Decision::Interface { tree: 0, .. })));
    assert_eq!((engine.counters.fas, engine.counters.fls, engine.counters.tz, engine.counters.delivered), (1, 1, 1, 1));

    let mut zero_fanout = multicast.clone();
    zero_fanout[1] = 0;
    let mut empty = multicast.clone();
    empty[4..28].fill(0);
    let mut bad_version = multicast.clone();
    bad_version[0] = 0x21;
    let mut bad_type = multicast.clone();
    bad_type[0] = 0x13;
    let cases: Vec<(Vec<u8>, DropReason)> = vec![
        (vec![], DropReason::Truncated),
        (multicast[..20].to_vec(), DropReason::Truncated),
        (to_self[..10].to_vec(), DropReason::Truncated),
        (bad_version, DropReason::BadVersion),
        (bad_type, DropReason::BadAddressType),
        (empty, DropReason::EmptyDescriptor),
        (zero_fanout, DropReason::ZeroFanout),
        (packet(Address::Descriptor { descriptor: q, fanout: Fanout::ALL, tree: 7 }), DropReason::UnknownTree),
        (packet(Address::Locator { tree: 3, label: labels.label(1) }), DropReason::UnknownTree),
        (packet(Address::Locator { tree: 0, label: Label { id: 99, list: 0, mask: 0 } }), DropReason::BadLocator),
        (packet(Address::Descriptor { descriptor: desc(&[30, 31]), fanout: Fanout::ALL, tree: 0 }), DropReason::NoMatch),
    ];
    for (bytes, reason) in &cases {
        let before = engine.counters.dropped(*reason);
        assert_eq!(engine.forward(bytes), None, "{reason:?}");
        assert_eq!(engine.counters.dropped(*reason), before + 1, "{reason:?}");
    }
    assert_eq!(Fanout::new(0), Err(TagError::ZeroFanout));

    // The same packets as one burst, with more anycast ones among them: the same decisions,
    // and the same counts.
    let anycast = |bits: &[u16], tree| packet(Address::Descriptor { descriptor: desc(bits), fanout: Fanout::new(1).unwrap(), tree });
    // Forwarded: {1} and {5} are on tree 0. Dropped: {1, 2}, the largest, is on tree 1; {30}
    // matches nothing.
    let mut burst = vec![multicast, anycast_t1, to_self, anycast(&[1, 9], 0), to_leaf, anycast(&[1, 2], 0), anycast(&[30], 0)];
    burst.extend(cases.into_iter().map(|(bytes, _)| bytes));
    burst.push(anycast(&[5, 7], 0));
    let (one_by_one, bursts) = one_by_one_and_as_bursts(&mut state, &burst);
    assert_eq!(one_by_one.0.iter().filter(|d| d.is_some()).count(), 6, "the burst's packets forwarded one by one");
    for as_a_burst in bursts {
        assert_eq!(as_a_burst, one_by_one);
    }
}

/// The decisions on some packets and the counters after them.
type Forwarded = (Vec<Option<Decision>>, Counters);

/// `packets` forwarded one by one, then as one burst with the FIB's anycast packets walked in
/// each [`FlsBatchOrder`], each time by a fresh engine on `state`.
fn one_by_one_and_as_bursts(state: &mut ForwardingState, packets: &[Vec<u8>]) -> (Forwarded, Vec<Forwarded>) {
    let mut engine = Engine::new(state);
    let one_by_one = packets.iter().map(|p| engine.forward(p)).collect();
    let counted = engine.counters;
    let bursts = [FlsBatchOrder::OneAtATime, FlsBatchOrder::Interleaved].map(|order| {
        state.fib.set_fls_batch_order(order);
        let mut engine = Engine::new(state);
        let mut burst = vec![None; packets.len()];
        engine.forward_batch(packets, &mut burst);
        (burst, engine.counters)
    });
    ((one_by_one, counted), bursts.into())
}

#[test]
fn hierarchical_names_match_like_longest_prefix() {
    let mut fib = DescriptorFib::new();
    for (i, name) in ["/org", "/org/gnu", "/org/gnu/software", "/com/gnu"].iter().enumerate() {
        fib.insert(Descriptor::from_name(name).unwrap(), Port { tree: 0, interface: i as u16 }).unwrap();
    }
    let compiled = fib.compile(Compression::PermChain, Layout::Srol).unwrap();
    let mut scratch = MatchScratch::new();
    let best = compiled.fls(&Descriptor::from_name("/org/gnu/software/emacs").unwrap(), &mut scratch).unwrap();
    assert_eq!(best.ports, PortSet::of([fib.port_id(Port { tree: 0, interface: 2 }).unwrap()]));
    let best = compiled.fls(&Descriptor::from_name("/org/gnu/hurd").unwrap(), &mut scratch).unwrap();
    assert_eq!(best.ports, PortSet::of([fib.port_id(Port { tree: 0, interface: 1 }).unwrap()]));
    assert!(compiled.fls(&Descriptor::from_name("/net/gnu").unwrap(), &mut scratch).is_none());
}
