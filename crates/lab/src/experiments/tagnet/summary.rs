//! The `tagnet` experiment's summary: the goals' figures, as lines.

use nexthop_lookup::tag::{Compression, FlsOrder, INTERLEAVE_FROM_BYTES};

use super::inputs::{BURST, CHAIN_REMOVED, OUR_WALKS, PAPER_WALKS};
use super::rows::{
    fib_names, find, find_in, fls_over_fas, form_speed, interleaving_by_size, layouts_in_turn_ratio, lowest_and_highest, num,
    permutation_savings, series_gains, srol_bytes, srol_over_sol, sweep_points, BEST, PAPER,
};
use super::sweeps::other_breadth_first;
use crate::Row;

pub(super) fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for f in fib_names(rows) {
        let mem = |c: &str| srol_bytes(rows, &f, c);
        let speed = |a: &str, fields: &[(&str, &str)]| num(find(rows, a, &f, fields), "kmatches_per_s");
        out.push(format!(
            "tagnet {f}: perm+chain {:.0} MB (perm saves {:.0}%, +chain {:.0}%), rare+chain {:.0} MB",
            mem("perm+chain") / 1e6,
            100.0 * (1.0 - mem("perm") / mem("none")),
            100.0 * (1.0 - mem("perm+chain") / mem("none")),
            mem("rare+chain") / 1e6,
        ));
        for (c, variant) in [("perm+chain", PAPER), ("rare+chain", BEST)] {
            let (fas, fls) = (speed("fas", &variant), speed("fls", &variant));
            let sol = |a: &str| speed(a, &[("compression", c), ("layout", "sol")]);
            let mut line = format!(
                "tagnet {f} {c}: FAS {fas:.1}K/s, FLS {fls:.1}K/s ({:.2}×); SROL/SOL FAS {:.2}× FLS {:.2}×",
                fls / fas,
                fas / sol("fas"),
                fls / sol("fls")
            );
            // The peers are not measured on every FIB (not at 63M).
            let (scan, inverted) = (speed("linear-scan", &[("match", "fas")]), speed("inverted-index", &[("match", "fas")]));
            if scan.is_finite() && inverted.is_finite() {
                line += &format!(
                    "; vs scan FAS {:.0}× FLS {:.0}×; vs inverted FAS {:.1}× FLS {:.1}×",
                    fas / scan,
                    fls / speed("linear-scan", &[("match", "fls")]),
                    fas / inverted,
                    fls / speed("inverted-index", &[("match", "fls")]),
                );
            }
            out.push(line);
        }
        for c in CHAIN_REMOVED.map(Compression::name) {
            let at = |a: &str, key: &str| num(find_in(rows, Some("peers_in_turn"), a, &f, &[("compression", c)]), key);
            if at("fas", "vs_index_in_turn").is_finite() {
                out.push(format!(
                    "tagnet {f} {c} SROL in turn with each peer: FAS {:.1}× scan, {:.1}× inverted; FLS {:.1}× scan, {:.1}× inverted",
                    at("fas", "vs_scan_in_turn"),
                    at("fas", "vs_index_in_turn"),
                    at("fls", "vs_scan_in_turn"),
                    at("fls", "vs_index_in_turn")
                ));
            }
        }
        for c in Compression::ALL.map(Compression::name) {
            let [sol, srol] = ["sol", "srol"].map(|l| fls_over_fas(rows, &f, c, l, Some("given_best")));
            if sol.is_finite() || srol.is_finite() {
                out.push(format!(
                    "tagnet {f} {c} FLS given its answer's weight − 1 (the proof alone, breadth-first): {sol:.2}× FAS (SOL), {srol:.2}× (SROL)"
                ));
            }
            let fls = find(rows, "fls", &f, &[("compression", c), ("layout", "srol")]);
            if num(fls, "depth_first_found_answer_pct").is_finite() {
                out.push(format!(
                    "tagnet {f} {c}/srol FLS depth-first part: {:.0} lists, {:.1}% of its nodes; it held the answer on {:.1}% of packets",
                    num(fls, "lists_depth_first_per_match"),
                    num(fls, "nodes_depth_first_pct"),
                    num(fls, "depth_first_found_answer_pct")
                ));
            }
        }
        if let Some(m) =
            rows.iter().find(|r| r.str("system") == Some("mixed") && r.str("fib") == Some(f.as_str()) && r.num("pull_pct") == Some(80.0))
        {
            out.push(format!(
                "tagnet {f} mixed 80% pull: {:.2} Mpps / {:.1} Gbps (1 thread, bursts of {BURST}: {:.2}× one by one)",
                num(Some(m), "mpps"),
                num(Some(m), "gbps"),
                num(Some(m), "mpps") / num(Some(m), "mpps_one_by_one")
            ));
        }
    }
    if let Some(swept) = rows.iter().find(|r| r.str("sweep") == Some("matching")).and_then(|r| r.str("fib")) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let at = |a: &str| {
                let p = sweep_points(rows, a, c, "matching", "matching_pct");
                p.iter().map(|(x, us)| format!("{x:.0}%: {us:.1}")).collect::<Vec<_>>().join(", ")
            };
            out.push(format!("tagnet {swept} {c} µs per match by matching rate: FAS {}; FLS {}", at("fas"), at("fls")));
        }
    }
    if let Some(f) = rows.iter().find(|r| r.str("sweep") == Some("no_prefetch")).and_then(|r| r.str("fib")) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let ratio = |a: &str| srol_over_sol(rows, Some("no_prefetch"), a, f, c);
            out.push(format!("tagnet {f} {c} without prefetch: SROL/SOL FAS {:.2}× FLS {:.2}×", ratio("fas"), ratio("fls")));
        }
    }
    for (f, c, l, fas, fls) in series_gains(rows, "scalar") {
        out.push(format!("tagnet {f} {c}/{l}: AVX-512 list scan ÷ node by node: FAS {fas:.2}× FLS {fls:.2}×"));
    }
    for (f, c, l, fas, fls) in series_gains(rows, "depth_first") {
        out.push(format!("tagnet {f} {c}/{l}: breadth-first ÷ depth-first: FAS {fas:.2}×, FLS (in its breadth-first order) {fls:.2}×"));
    }
    for (f, c, l, fas, fls) in series_gains(rows, "other_fls_order") {
        let Some(own) = Compression::ALL.into_iter().find(|x| x.name() == c).map(FlsOrder::for_compression) else { continue };
        let (own, other) = (own.name(), other_breadth_first(own).name());
        out.push(format!("tagnet {f} {c}/{l}: FLS {own} ÷ {other} {fls:.2}× (FAS, the same walk, {fas:.2}×)"));
    }
    for (f, c, l, fas, fls) in series_gains(rows, "one_at_a_time") {
        out.push(format!("tagnet {f} {c}/{l}: FLS depth-first interleaved ÷ one at a time {fls:.2}× (FAS, the same walk, {fas:.2}×)"));
    }
    let from = INTERLEAVE_FROM_BYTES as f64 / 1e6;
    let (under, over): (Vec<_>, Vec<_>) =
        interleaving_by_size(rows).into_iter().flat_map(|(_, points)| points).partition(|(mb, _)| *mb < from);
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
    for (f, c, l, fas, fls) in series_gains(rows, "records_at_once") {
        out.push(format!("tagnet {f} {c}/{l}: FAS chain records deferred ÷ at once {fas:.2}× (FLS, the same walk, {fls:.2}×)"));
    }
    if let Some(f) = rows.iter().find(|r| r.str("sweep") == Some("descending")).and_then(|r| r.str("fib")) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            for (order, sweep) in [("ascending", None), ("descending", Some("descending"))] {
                let speed = |a: &str, l: &str| form_speed(rows, sweep, a, f, c, l);
                out.push(format!(
                    "tagnet {f} {c} {order} lists: FLS/FAS {:.2}× (SOL) {:.2}× (SROL); SROL/SOL FAS {:.2}× FLS {:.2}×",
                    speed("fls", "sol") / speed("fas", "sol"),
                    speed("fls", "srol") / speed("fas", "srol"),
                    srol_over_sol(rows, sweep, "fas", f, c),
                    srol_over_sol(rows, sweep, "fls", f, c),
                ));
            }
            out.push(format!(
                "tagnet {f} {c} descending lists without prefetch (walks that follow SROL, the paper's conditions): SROL/SOL FAS {:.2}× FLS {:.2}×",
                srol_over_sol(rows, Some("descending_no_prefetch"), "fas", f, c),
                srol_over_sol(rows, Some("descending_no_prefetch"), "fls", f, c),
            ));
        }
    }
    for f in fib_names(rows) {
        for c in CHAIN_REMOVED.map(Compression::name) {
            let ratio = |a: &str, by: &str| layouts_in_turn_ratio(rows, a, &f, c, by);
            if ratio("fas", OUR_WALKS).is_finite() {
                out.push(format!(
                    "tagnet {f} {c} SROL/SOL measured in turn: our walks FAS {:.2}× FLS {:.2}×; the paper's walks FAS {:.2}× FLS {:.2}×",
                    ratio("fas", OUR_WALKS),
                    ratio("fls", OUR_WALKS),
                    ratio("fas", PAPER_WALKS),
                    ratio("fls", PAPER_WALKS),
                ));
            }
        }
    }
    let in_turn: Vec<&Row> = rows.iter().filter(|r| r.str("sweep") == Some("layouts_in_turn")).collect();
    for (by, name) in [(OUR_WALKS, "our walks"), (PAPER_WALKS, "the paper's walks")] {
        let ratios: Vec<f64> = in_turn.iter().filter(|r| r.str("walks") == Some(by)).filter_map(|r| r.num("srol_over_sol")).collect();
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
    let main = fib_names(rows);
    for (name, perm, chain, mb) in permutation_savings(rows).into_iter().filter(|s| !main.contains(&s.0)) {
        out.push(format!("tagnet skew, {name}: perm alone saves {perm:.1}%, with chains {chain:.1}% ({mb:.1} MB)"));
    }
    if let Some(t) = rows.iter().find(|r| r.str("system") == Some("tz") && r.num("ns_per_forward").is_some()) {
        let synthetic = || rows.iter().filter(|r| r.str("topology") == Some("preferential-attachment"));
        let max_bits = synthetic().filter_map(|r| r.num("label_bits_max")).fold(0.0, f64::max);
        let bound = synthetic().find_map(|r| r.num("label_bits_bound")).unwrap_or(f64::NAN);
        out.push(format!(
            "tagnet tz: {:.2} ns per forward; labels ≤ {max_bits} bits (3.4·log2 n = {bound:.1})",
            num(Some(t), "ns_per_forward")
        ));
    }
    let real: Vec<&Row> =
        rows.iter().filter(|r| r.str("system") == Some("tz") && r.str("topology").is_some_and(|t| t.starts_with("caida-"))).collect();
    if let Some(largest) = real.first() {
        let pairs: f64 = real.iter().filter_map(|r| r.num("pairs")).sum();
        let wrong: f64 = real.iter().filter_map(|r| r.num("mismatches")).sum();
        let worst = real.iter().filter_map(|r| r.num("label_bits_max")).fold(0.0, f64::max);
        out.push(format!(
            "tagnet tz on {} CAIDA AS topologies: labels ≤ {worst} bits; largest {} ({} nodes) ≤ {} bits; {pairs} pairs walked, {wrong} wrong",
            real.len(),
            largest.str("topology").unwrap_or("?"),
            num(Some(largest), "nodes"),
            num(Some(largest), "label_bits_max"),
        ));
    }
    let mismatches: f64 = rows.iter().filter_map(|r| r.num("mismatches")).sum();
    out.push(format!("tagnet mismatches: {mismatches}"));
    out
}
