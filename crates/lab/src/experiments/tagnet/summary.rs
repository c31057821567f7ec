//! The `tagnet` experiment's summary: the goals' figures, as lines.

use nexthop_lookup::tag::{Compression, FlsOrder, INTERLEAVE_FROM_BYTES};

use super::inputs::{BURST, CHAIN_REMOVED, OUR_WALKS, PAPER_WALKS};
use super::rows::{lowest_and_highest, Rows, Walk, BEST, PAPER};
use super::sweeps::other_breadth_first;

pub(super) fn summary(rows: &Rows) -> Vec<String> {
    let mut out = Vec::new();
    for f in rows.fib_names() {
        let mem = |c: &str| rows.srol_bytes(&f, c);
        let speed = |a: Walk, form: (&str, &str)| rows.speed(None, a, &f, form);
        let peer = |p: &str, a: Walk| rows.peer(p, a, &f).map_or(f64::NAN, |r| r.kmatches_per_s);
        out.push(format!(
            "tagnet {f}: perm+chain {:.0} MB (perm saves {:.0}%, +chain {:.0}%), rare+chain {:.0} MB",
            mem("perm+chain") / 1e6,
            100.0 * (1.0 - mem("perm") / mem("none")),
            100.0 * (1.0 - mem("perm+chain") / mem("none")),
            mem("rare+chain") / 1e6,
        ));
        for (c, variant) in [("perm+chain", PAPER), ("rare+chain", BEST)] {
            let (fas, fls) = (speed(Walk::Fas, variant), speed(Walk::Fls, variant));
            let sol = |a: Walk| speed(a, (c, "sol"));
            let mut line = format!(
                "tagnet {f} {c}: FAS {fas:.1}K/s, FLS {fls:.1}K/s ({:.2}×); SROL/SOL FAS {:.2}× FLS {:.2}×",
                fls / fas,
                fas / sol(Walk::Fas),
                fls / sol(Walk::Fls)
            );
            // The peers are not measured on every FIB (not at 63M).
            let (scan, inverted) = (peer("linear-scan", Walk::Fas), peer("inverted-index", Walk::Fas));
            if scan.is_finite() && inverted.is_finite() {
                line += &format!(
                    "; vs scan FAS {:.0}× FLS {:.0}×; vs inverted FAS {:.1}× FLS {:.1}×",
                    fas / scan,
                    fls / peer("linear-scan", Walk::Fls),
                    fas / inverted,
                    fls / peer("inverted-index", Walk::Fls),
                );
            }
            out.push(line);
        }
        for c in CHAIN_REMOVED.map(Compression::name) {
            let at =
                |a: Walk| rows.walk_on("peers_in_turn", a, &f, c).map_or((f64::NAN, f64::NAN), |r| (r.vs_scan_in_turn, r.vs_index_in_turn));
            let ((fas_scan, fas_index), (fls_scan, fls_index)) = (at(Walk::Fas), at(Walk::Fls));
            if fas_index.is_finite() {
                out.push(format!(
                    "tagnet {f} {c} SROL in turn with each peer: FAS {fas_scan:.1}× scan, {fas_index:.1}× inverted; FLS {fls_scan:.1}× scan, {fls_index:.1}× inverted"
                ));
            }
        }
        for c in Compression::ALL.map(Compression::name) {
            let [sol, srol] = ["sol", "srol"].map(|l| rows.fls_over_fas(&f, (c, l), Some("given_best")));
            if sol.is_finite() || srol.is_finite() {
                out.push(format!(
                    "tagnet {f} {c} FLS given its answer's weight − 1 (the proof alone, breadth-first): {sol:.2}× FAS (SOL), {srol:.2}× (SROL)"
                ));
            }
            if let Some(fls) = rows.walk(None, Walk::Fls, &f, (c, "srol")).filter(|r| r.depth_first_found_answer_pct.is_finite()) {
                out.push(format!(
                    "tagnet {f} {c}/srol FLS depth-first part: {:.0} lists, {:.1}% of its nodes; it held the answer on {:.1}% of packets",
                    fls.lists_depth_first_per_match, fls.nodes_depth_first_pct, fls.depth_first_found_answer_pct
                ));
            }
        }
        if let Some(m) = rows.mixed.iter().find(|r| r.fib == f && r.pull_pct == 80.0) {
            out.push(format!(
                "tagnet {f} mixed 80% pull: {:.2} Mpps / {:.1} Gbps (1 thread, bursts of {BURST}: {:.2}× one by one)",
                m.mpps,
                m.gbps,
                m.mpps / m.mpps_one_by_one
            ));
        }
    }
    if let Some(swept) = rows.fib_of("matching") {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let at = |a: Walk| {
                let p = rows.sweep_points(a, c, "matching", |r| r.matching_pct);
                p.iter().map(|(x, us)| format!("{x:.0}%: {us:.1}")).collect::<Vec<_>>().join(", ")
            };
            out.push(format!("tagnet {swept} {c} µs per match by matching rate: FAS {}; FLS {}", at(Walk::Fas), at(Walk::Fls)));
        }
    }
    if let Some(f) = rows.fib_of("no_prefetch") {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let ratio = |a: Walk| rows.srol_over_sol(Some("no_prefetch"), a, f, c);
            out.push(format!("tagnet {f} {c} without prefetch: SROL/SOL FAS {:.2}× FLS {:.2}×", ratio(Walk::Fas), ratio(Walk::Fls)));
        }
    }
    for (f, c, l, fas, fls) in rows.series_gains("scalar") {
        out.push(format!("tagnet {f} {c}/{l}: AVX-512 list scan ÷ node by node: FAS {fas:.2}× FLS {fls:.2}×"));
    }
    for (f, c, l, fas, fls) in rows.series_gains("depth_first") {
        out.push(format!("tagnet {f} {c}/{l}: breadth-first ÷ depth-first: FAS {fas:.2}×, FLS (in its breadth-first order) {fls:.2}×"));
    }
    for (f, c, l, fas, fls) in rows.series_gains("other_fls_order") {
        let Some(own) = Compression::ALL.into_iter().find(|x| x.name() == c).map(FlsOrder::for_compression) else { continue };
        let (own, other) = (own.name(), other_breadth_first(own).name());
        out.push(format!("tagnet {f} {c}/{l}: FLS {own} ÷ {other} {fls:.2}× (FAS, the same walk, {fas:.2}×)"));
    }
    for (f, c, l, fas, fls) in rows.series_gains("one_at_a_time") {
        out.push(format!("tagnet {f} {c}/{l}: FLS depth-first interleaved ÷ one at a time {fls:.2}× (FAS, the same walk, {fas:.2}×)"));
    }
    let from = INTERLEAVE_FROM_BYTES as f64 / 1e6;
    let (under, over): (Vec<_>, Vec<_>) =
        rows.interleaving_by_size().into_iter().flat_map(|(_, points)| points).partition(|(mb, _)| *mb < from);
    let span = |points: &[(f64, f64)]| {
        let (lo, hi) = lowest_and_highest(points.iter().map(|p| p.1));
        if points.is_empty() {
            "no FIB".to_string()
        } else {
            format!("{lo:.2}–{hi:.2}× on {} FIBs", points.len())
        }
    };
    out.push(format!(
        "tagnet FLS interleaved ÷ one at a time: under {from:.1} MB (one at a time by default) {}; from it (interleaved) {}",
        span(&under),
        span(&over),
    ));
    for (f, c, l, fas, fls) in rows.series_gains("records_at_once") {
        out.push(format!("tagnet {f} {c}/{l}: FAS chain records deferred ÷ at once {fas:.2}× (FLS, the same walk, {fls:.2}×)"));
    }
    if let Some(f) = rows.fib_of("descending") {
        for c in CHAIN_REMOVED.map(Compression::name) {
            for (order, sweep) in [("ascending", None), ("descending", Some("descending"))] {
                let speed = |a: Walk, l: &str| rows.speed(sweep, a, f, (c, l));
                out.push(format!(
                    "tagnet {f} {c} {order} lists: FLS/FAS {:.2}× (SOL) {:.2}× (SROL); SROL/SOL FAS {:.2}× FLS {:.2}×",
                    speed(Walk::Fls, "sol") / speed(Walk::Fas, "sol"),
                    speed(Walk::Fls, "srol") / speed(Walk::Fas, "srol"),
                    rows.srol_over_sol(sweep, Walk::Fas, f, c),
                    rows.srol_over_sol(sweep, Walk::Fls, f, c),
                ));
            }
            out.push(format!(
                "tagnet {f} {c} descending lists without prefetch (walks that follow SROL, the paper's conditions): SROL/SOL FAS {:.2}× FLS {:.2}×",
                rows.srol_over_sol(Some("descending_no_prefetch"), Walk::Fas, f, c),
                rows.srol_over_sol(Some("descending_no_prefetch"), Walk::Fls, f, c),
            ));
        }
    }
    for f in rows.fib_names() {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let ratio = |a: Walk, by: &str| rows.layouts_in_turn(a, &f, c, by);
            if ratio(Walk::Fas, OUR_WALKS).is_finite() {
                out.push(format!(
                    "tagnet {f} {c} SROL/SOL measured in turn: our walks FAS {:.2}× FLS {:.2}×; the paper's walks FAS {:.2}× FLS {:.2}×",
                    ratio(Walk::Fas, OUR_WALKS),
                    ratio(Walk::Fls, OUR_WALKS),
                    ratio(Walk::Fas, PAPER_WALKS),
                    ratio(Walk::Fls, PAPER_WALKS),
                ));
            }
        }
    }
    for (by, name) in [(OUR_WALKS, "our walks"), (PAPER_WALKS, "the paper's walks")] {
        let ratios: Vec<f64> = rows
            .series("layouts_in_turn")
            .filter(|r| r.walks.as_deref() == Some(by))
            .map(|r| r.srol_over_sol)
            .filter(|x| x.is_finite())
            .collect();
        if ratios.is_empty() {
            continue;
        }
        let (lo, hi) = lowest_and_highest(ratios.iter().copied());
        out.push(format!(
            "tagnet SROL faster than SOL, measured in turn, with {name}: {} of {} pairs ({lo:.2}–{hi:.2}×)",
            ratios.iter().filter(|&&x| x > 1.0).count(),
            ratios.len(),
        ));
    }
    // The main FIBs' savings are on their own lines above.
    let main = rows.fib_names();
    for (name, perm, chain, mb) in rows.permutation_savings().into_iter().filter(|s| !main.contains(&s.0)) {
        out.push(format!("tagnet skew, {name}: perm alone saves {perm:.1}%, with chains {chain:.1}% ({mb:.1} MB)"));
    }
    if let Some(ns) = rows.tz.iter().find_map(|r| r.ns_per_forward) {
        let synthetic = || rows.tz.iter().filter(|r| r.topology.as_deref() == Some("preferential-attachment"));
        let max_bits = synthetic().map(|r| r.label_bits_max).filter(|b| b.is_finite()).fold(0.0, f64::max);
        let bound = synthetic().map(|r| r.label_bits_bound).find(|b| b.is_finite()).unwrap_or(f64::NAN);
        out.push(format!("tagnet tz: {ns:.2} ns per forward; labels ≤ {max_bits} bits (3.4·log2 n = {bound:.1})"));
    }
    let real: Vec<_> = rows.tz.iter().filter(|r| r.topology.as_deref().is_some_and(|t| t.starts_with("caida-"))).collect();
    if let Some(largest) = real.first() {
        let finite = |x: &f64| x.is_finite();
        let pairs: f64 = real.iter().map(|r| r.pairs).filter(finite).sum();
        let wrong: f64 = real.iter().map(|r| r.mismatches).filter(finite).sum();
        let worst = real.iter().map(|r| r.label_bits_max).filter(finite).fold(0.0, f64::max);
        out.push(format!(
            "tagnet tz on {} CAIDA AS topologies: labels ≤ {worst} bits; largest {} ({} nodes) ≤ {} bits; {pairs} pairs walked, {wrong} wrong",
            real.len(),
            largest.topology.as_deref().unwrap_or("?"),
            largest.nodes,
            largest.label_bits_max,
        ));
    }
    out.push(format!("tagnet mismatches: {}", rows.mismatches));
    out
}
