//! Reading the rows back: the lookups the plots and the summary make by FIB, form and series.

use crate::Row;

/// Rows of `system` on `fib` with every (key, value) string field equal.
pub(super) fn find<'a>(rows: &'a [Row], system: &str, fib: &str, fields: &[(&str, &str)]) -> Option<&'a Row> {
    find_in(rows, None, system, fib, fields)
}

/// [`find`] among the rows of sweep `sweep` (`None`: the main rows).
pub(super) fn find_in<'a>(rows: &'a [Row], sweep: Option<&str>, system: &str, fib: &str, fields: &[(&str, &str)]) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.str("system") == Some(system)
            && r.str("fib") == Some(fib)
            && r.str("sweep") == sweep
            && fields.iter().all(|(k, v)| r.str(k) == Some(v))
    })
}

pub(super) fn num(r: Option<&Row>, key: &str) -> f64 {
    r.and_then(|r| r.num(key)).unwrap_or(f64::NAN)
}

/// K matches/s of walk `alg` on `fib` compiled as (`compression`, `layout`), in sweep `sweep`.
pub(super) fn form_speed(rows: &[Row], sweep: Option<&str>, alg: &str, fib: &str, compression: &str, layout: &str) -> f64 {
    num(find_in(rows, sweep, alg, fib, &[("compression", compression), ("layout", layout)]), "kmatches_per_s")
}

/// How much faster walk `alg` ran with SROL than with SOL on `fib`'s `compression`, in `sweep`.
pub(super) fn srol_over_sol(rows: &[Row], sweep: Option<&str>, alg: &str, fib: &str, compression: &str) -> f64 {
    form_speed(rows, sweep, alg, fib, compression, "srol") / form_speed(rows, sweep, alg, fib, compression, "sol")
}

/// SROL ÷ SOL of walk `alg` on `fib`'s `compression`, the two measured in turn with the walks
/// set as `walks` says ([`layouts_in_turn`]).
pub(super) fn layouts_in_turn_ratio(rows: &[Row], alg: &str, fib: &str, compression: &str, walks: &str) -> f64 {
    num(find_in(rows, Some("layouts_in_turn"), alg, fib, &[("compression", compression), ("walks", walks)]), "srol_over_sol")
}

pub(super) fn fib_names(rows: &[Row]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.str("system") == Some("fib") && r.str("sweep").is_none()) {
        if let Some(f) = r.str("fib").filter(|f| !names.iter().any(|n| n == f)) {
            names.push(f.to_string());
        }
    }
    names
}

pub(super) const BEST: [(&str, &str); 2] = [("compression", "rare+chain"), ("layout", "srol")];
pub(super) const PAPER: [(&str, &str); 2] = [("compression", "perm+chain"), ("layout", "srol")];

/// For each (FIB, compression, layout) of sweep `sweep` (a walk option turned off): how much
/// faster FAS and FLS ran with it on, one thread, both measured in turn ([`on_and_off`]).
pub(super) fn series_gains(rows: &[Row], sweep: &str) -> Vec<(String, String, String, f64, f64)> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.str("sweep") == Some(sweep) && r.str("system") == Some("fas")) {
        let (Some(f), Some(c), Some(l)) = (r.str("fib"), r.str("compression"), r.str("layout")) else { continue };
        let form = [("compression", c), ("layout", l)];
        let gain = |alg: &str| {
            let row = find_in(rows, Some(sweep), alg, f, &form);
            num(row, "ab_on_kmatches_per_s") / num(row, "ab_off_kmatches_per_s")
        };
        out.push((f.to_string(), c.to_string(), l.to_string(), gain("fas"), gain("fls")));
    }
    out
}

/// What interleaving FLS batches gives by FIB size (sweep `one_at_a_time`, both orders
/// measured in turn): for each FIB family (zipf, ccn) and form, (FIB MB, interleaved ÷ one at a
/// time) by size.
pub(super) fn interleaving_by_size(rows: &[Row]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.str("sweep") == Some("one_at_a_time") && r.str("system") == Some("fls")) {
        let (Some(f), Some(c), Some(l)) = (r.str("fib"), r.str("compression"), r.str("layout")) else { continue };
        let name = format!("{} {c}/{l}", f.split('-').next().unwrap_or(f));
        let r = Some(r);
        let point = (num(r, "fib_bytes") / 1e6, num(r, "ab_on_kmatches_per_s") / num(r, "ab_off_kmatches_per_s"));
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(point),
            None => series.push((name, vec![point])),
        }
    }
    series.iter_mut().for_each(|(_, points)| points.sort_by(|a, b| a.0.total_cmp(&b.0)));
    series
}

/// (x, µs per match) of `alg` on `compression`/SROL in sweep `sweep`, x being field `x`: the
/// sweep's rows plus the main measurement (2 extra tags, 100% matching) of the swept FIB.
pub(super) fn sweep_points(rows: &[Row], alg: &str, compression: &str, sweep: &str, x: &str) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.str("system") == Some(alg) && (r.str("sweep") == Some(sweep) || r.str("sweep").is_none()))
        .filter(|r| r.str("compression") == Some(compression) && r.str("layout") == Some("srol"))
        .filter(|r| rows.iter().any(|s| s.str("sweep") == Some(sweep) && s.str("fib") == r.str("fib")))
        .filter_map(|r| Some((r.num(x)?, r.num("us_per_match")?)))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

/// The bytes of FIB `fib` compiled with `compression` and SROL, from its `fib` row (of any
/// series).
pub(super) fn srol_bytes(rows: &[Row], fib: &str, compression: &str) -> f64 {
    let r = rows.iter().find(|r| {
        r.str("system") == Some("fib")
            && r.str("fib") == Some(fib)
            && r.str("compression") == Some(compression)
            && r.str("layout") == Some("srol")
    });
    num(r, "fib_bytes")
}

/// For each main FIB and each FIB of the skew series: its name, the percentage of the
/// uncompressed FIB's bytes the permutation saves alone and with chains removed, and the
/// perm+chain FIB's MB.
pub(super) fn permutation_savings(rows: &[Row]) -> Vec<(String, f64, f64, f64)> {
    let skewed = |r: &&Row| r.str("system") == Some("fib") && r.str("sweep") == Some("skew");
    let mut names: Vec<String> = Vec::new();
    for f in fib_names(rows).into_iter().chain(rows.iter().filter(skewed).filter_map(|r| r.str("fib").map(String::from))) {
        if !names.contains(&f) {
            names.push(f);
        }
    }
    names
        .into_iter()
        .map(|f| {
            let mem = |c: &str| srol_bytes(rows, &f, c);
            let saved = |c: &str| 100.0 * (1.0 - mem(c) / mem("none"));
            let (perm, chain, mb) = (saved("perm"), saved("perm+chain"), mem("perm+chain") / 1e6);
            (f, perm, chain, mb)
        })
        .collect()
}

/// FLS's throughput over FAS's on `fib`'s form `c`/`l`: as measured, and (sweep `given_best`)
/// given each answer's weight less one.
pub(super) fn fls_over_fas(rows: &[Row], fib: &str, c: &str, l: &str, sweep: Option<&str>) -> f64 {
    let fields = [("compression", c), ("layout", l)];
    num(find_in(rows, sweep, "fls", fib, &fields), "kmatches_per_s") / num(find(rows, "fas", fib, &fields), "kmatches_per_s")
}

/// The lowest and the highest of `values` (∞ and −∞ for none).
pub(super) fn lowest_and_highest(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
}
