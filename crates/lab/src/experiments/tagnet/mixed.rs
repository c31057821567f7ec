//! Push and pull traffic mixes through the engine, one burst at a time, every decision checked.

use nexthop_lookup::tag::{parallel, Address, CompiledFib, Decision, Engine, Fanout, ForwardingState, MatchScratch, PortSet};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::inputs::{Workload, BURST, DATA_BYTES, FOLLOW_UP_BYTES, INTEREST_BYTES, PUSH_BYTES};
use super::locators::{interfaces_of, next_on_path, Locators};
use crate::harness::{compare, Contender};
use crate::workload::tags::{self as workload, TREES};
use crate::{Row, RunConfig};

/// The paper's Table 1: push/pull mixes through the whole engine (header parse, dispatch, match
/// or TZ), at `router` on each tree, in bursts of [`BURST`] packets and, in the same compare,
/// one by one.
pub(super) fn mixed(cfg: &RunConfig, w: &Workload<'_>, fib: CompiledFib, loc: &Locators) -> Vec<Row> {
    let routers = loc.labels.iter().map(|l| *l.router(loc.router)).collect();
    let state = ForwardingState { fib, tree_ports: (0..TREES).map(workload::tree_ports).collect(), routers };
    let interface_of: Vec<_> = loc.labels.iter().map(|l| interfaces_of(l, loc.router)).collect();
    let flows = if cfg.quick { 400 } else { 3000 };
    let max_follow_up = 15;
    let mut rows = Vec::new();
    for pull_pct in [0u32, 20, 40, 60, 80, 100] {
        let mut rng = SmallRng::seed_from_u64(0x7ab1 + u64::from(pull_pct));
        let mut packets: Vec<Vec<u8>> = Vec::new();
        let mut expect: Vec<Expect> = Vec::new();
        let mut bytes = 0u64;
        for _ in 0..flows {
            let qi = rng.gen_range(0..w.queries.len());
            let tree = rng.gen_range(0..TREES);
            let tree_ports = &state.tree_ports[usize::from(tree)];
            let pull = rng.gen_range(0..100) < pull_pct;
            let fanout = if pull { Fanout::new(1).unwrap_or(Fanout::ALL) } else { Fanout::ALL };
            packets.push(header(Address::Descriptor { descriptor: w.queries[qi], fanout, tree: u16::from(tree) }));
            if pull {
                bytes += INTEREST_BYTES;
                expect.push(Expect::Fls(qi, *tree_ports));
                for _ in 0..rng.gen_range(0..=max_follow_up) {
                    for size in [FOLLOW_UP_BYTES, DATA_BYTES] {
                        let t = rng.gen_range(0..TREES);
                        let (tz_tree, l) = (&loc.trees[usize::from(t)], &loc.labels[usize::from(t)]);
                        let dest = rng.gen_range(0..l.len() as u32);
                        packets.push(header(Address::Locator { tree: u16::from(t), label: l.label(dest) }));
                        bytes += size;
                        expect.push(if dest == loc.router {
                            Expect::Exact(Some(Decision::Deliver))
                        } else {
                            let next = next_on_path(tz_tree, loc.router, dest);
                            Expect::Exact(
                                interface_of[usize::from(t)]
                                    .get(&next)
                                    .map(|&interface| Decision::Interface { tree: u16::from(t), interface }),
                            )
                        });
                    }
                }
            } else {
                bytes += PUSH_BYTES;
                let ports = w.fas_ref[qi].intersection(tree_ports);
                expect.push(Expect::Exact((!ports.is_empty()).then_some(Decision::Ports(ports))));
            }
        }
        // The reference: exact decisions; for an FLS packet, the ports on its tree of the entry
        // FLS chose (a drop when it has none there) — if that entry is one of the heaviest
        // matches the oracle knows, else a sentinel no answer equals.
        let reference: Vec<Option<Decision>> = expect
            .iter()
            .map(|e| match e {
                Expect::Exact(d) => *d,
                Expect::Fls(qi, tree_ports) => {
                    let (weight, sets) = &w.fls_ref[*qi];
                    let chosen = state.fib.fls(&w.queries[*qi], &mut MatchScratch::new());
                    let valid = match chosen {
                        None => sets.is_empty(),
                        Some(b) => b.weight == *weight && sets.contains(&b.ports),
                    };
                    let on_tree = chosen.map(|b| b.ports.intersection(tree_ports)).filter(|p| !p.is_empty()).map(Decision::Ports);
                    if valid {
                        on_tree
                    } else {
                        Some(Decision::Ports(PortSet::EMPTY))
                    }
                }
            })
            .collect();
        let n = packets.len();
        let threads = cfg.threads;
        let bursts = |p: &[Vec<u8>], o: &mut [Option<Decision>]| {
            let mut e = Engine::new(&state);
            p.chunks(BURST).zip(o.chunks_mut(BURST)).for_each(|(p, o)| e.forward_batch(p, o));
        };
        let one_by_one = |p: &[Vec<u8>], o: &mut [Option<Decision>]| {
            let mut e = Engine::new(&state);
            p.iter().zip(o).for_each(|(p, o)| *o = e.forward(p));
        };
        let mut contenders = vec![
            Contender::new("1", |out: &mut Vec<Option<Decision>>| {
                out.resize(n, None);
                bursts(&packets, out);
            }),
            Contender::new("all", |out: &mut Vec<Option<Decision>>| {
                out.resize(n, None);
                parallel(&packets, out, threads, bursts);
            }),
            Contender::new("1 one by one", |out: &mut Vec<Option<Decision>>| {
                out.resize(n, None);
                one_by_one(&packets, out);
            }),
        ];
        let o = compare(cfg.reps, &reference, &mut contenders);
        let avg = bytes as f64 / n as f64;
        let [mpps, mpps_all, mpps_one_by_one] = [0, 1, 2].map(|i| o[i].per_second(n) / 1e6);
        rows.push(
            Row::new("mixed")
                .with("fib", w.name.as_str())
                .with("descriptors", w.entries.len())
                .with("pull_pct", pull_pct)
                .with("max_follow_up", max_follow_up)
                .with("packets", n)
                .with("burst", BURST)
                .with("avg_packet_bytes", avg)
                .with("mpps", mpps)
                .with("mpps_all_threads", mpps_all)
                .with("mpps_one_by_one", mpps_one_by_one)
                .with("gbps", mpps * avg * 8.0 / 1e3)
                .with("gbps_all_threads", mpps_all * avg * 8.0 / 1e3)
                .with("mismatches", o.iter().map(|o| o.mismatches).max().unwrap_or(0)),
        );
    }
    rows
}

/// What a mixed-traffic packet must get.
enum Expect {
    /// Exactly this decision (FAS and TZ packets).
    Exact(Option<Decision>),
    /// An FLS answer the oracle allows for query `.0`, on the tree with ports `.1`.
    Fls(usize, PortSet),
}

pub(super) fn header(a: Address) -> Vec<u8> {
    let mut v = Vec::with_capacity(32);
    a.encode(&mut v);
    v
}
