//! The experiment's rows read back, typed: what the plots and the summary look up by FIB, form
//! and series.
//!
//! # Overview
//! The experiment writes flat JSON rows (`crate::Row`). [`Rows::read`] parses each by its
//! `system` into a struct of its kind — a compiled FIB ([`FibRow`]), a walk's measurement
//! ([`WalkRow`]), a peer's ([`PeerRow`]), a traffic mix ([`MixedRow`]), a Thorup–Zwick run
//! ([`TzRow`]) — and the lookups below find them by their fields. A metric a row does not have
//! reads as NaN, which the plots leave out.

use serde::Deserialize;

use crate::Row;

/// The two walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Walk {
    /// Find All Subsets.
    Fas,
    /// Find Largest Subset.
    Fls,
}

impl Walk {
    /// Both, FAS first.
    pub(super) const BOTH: [Walk; 2] = [Walk::Fas, Walk::Fls];

    /// The name in rows and plots.
    pub(super) fn name(self) -> &'static str {
        match self {
            Walk::Fas => "fas",
            Walk::Fls => "fls",
        }
    }
}

fn nan() -> f64 {
    f64::NAN
}

/// A compiled FIB (`system: fib`).
#[derive(Debug, Deserialize)]
pub(super) struct FibRow {
    pub fib: String,
    pub compression: String,
    pub layout: String,
    #[serde(default)]
    pub sweep: Option<String>,
    pub fib_bytes: f64,
    pub bytes_per_descriptor: f64,
}

/// A walk's measurement on one FIB and form (`system: fas` or `fls`).
#[derive(Debug, Deserialize)]
pub(super) struct WalkRow {
    #[serde(rename = "system")]
    pub walk: Walk,
    pub fib: String,
    pub compression: String,
    #[serde(default)]
    pub layout: Option<String>,
    #[serde(default)]
    pub sweep: Option<String>,
    /// How the walks ran, in series `layouts_in_turn` (ours or the paper's).
    #[serde(default)]
    pub walks: Option<String>,
    pub descriptors: f64,
    #[serde(default = "nan")]
    pub fib_bytes: f64,
    #[serde(default = "nan")]
    pub matching_pct: f64,
    #[serde(default = "nan")]
    pub extra_tags: f64,
    #[serde(default = "nan")]
    pub kmatches_per_s: f64,
    #[serde(default = "nan")]
    pub kmatches_per_s_all_threads: f64,
    #[serde(default = "nan")]
    pub us_per_match: f64,
    /// Measured in turn with a walk option on and off (the option series).
    #[serde(default = "nan")]
    pub ab_on_kmatches_per_s: f64,
    #[serde(default = "nan")]
    pub ab_off_kmatches_per_s: f64,
    #[serde(default = "nan")]
    pub srol_over_sol: f64,
    #[serde(default = "nan")]
    pub vs_scan_in_turn: f64,
    #[serde(default = "nan")]
    pub vs_index_in_turn: f64,
    #[serde(default = "nan")]
    pub lists_depth_first_per_match: f64,
    #[serde(default = "nan")]
    pub nodes_depth_first_pct: f64,
    #[serde(default = "nan")]
    pub depth_first_found_answer_pct: f64,
}

impl WalkRow {
    /// How much faster it ran with the series' option on than off.
    pub(super) fn gain(&self) -> f64 {
        self.ab_on_kmatches_per_s / self.ab_off_kmatches_per_s
    }

    fn is_form(&self, compression: &str, layout: &str) -> bool {
        self.compression == compression && self.layout.as_deref() == Some(layout)
    }
}

/// A peer's measurement (`system: linear-scan` or `inverted-index`).
#[derive(Debug, Deserialize)]
pub(super) struct PeerRow {
    pub system: String,
    pub fib: String,
    #[serde(rename = "match")]
    pub walk: Walk,
    pub kmatches_per_s: f64,
}

/// A push/pull traffic mix through the engine (`system: mixed`).
#[derive(Debug, Deserialize)]
pub(super) struct MixedRow {
    pub fib: String,
    pub pull_pct: f64,
    pub mpps: f64,
    pub mpps_one_by_one: f64,
    pub gbps: f64,
}

/// A Thorup–Zwick run on one topology, or the forwarding measurement (`system: tz`).
#[derive(Debug, Deserialize)]
pub(super) struct TzRow {
    #[serde(default)]
    pub topology: Option<String>,
    #[serde(default)]
    pub ns_per_forward: Option<f64>,
    #[serde(default = "nan")]
    pub label_bits_max: f64,
    #[serde(default = "nan")]
    pub label_bits_bound: f64,
    #[serde(default = "nan")]
    pub pairs: f64,
    #[serde(default = "nan")]
    pub mismatches: f64,
    #[serde(default = "nan")]
    pub nodes: f64,
}

/// Every row of a run, by kind.
#[derive(Debug, Default)]
pub(super) struct Rows {
    pub fibs: Vec<FibRow>,
    pub walks: Vec<WalkRow>,
    pub peers: Vec<PeerRow>,
    pub mixed: Vec<MixedRow>,
    pub tz: Vec<TzRow>,
    /// The mismatches of every row together.
    pub mismatches: f64,
}

/// The form the paper's figures are drawn on, and ours.
pub(super) const PAPER: (&str, &str) = ("perm+chain", "srol");
pub(super) const BEST: (&str, &str) = ("rare+chain", "srol");

impl Rows {
    /// The rows of a run, parsed by their `system`.
    ///
    /// # Panics
    /// On a row of a known system that lacks a field its kind has: the experiment wrote it, so
    /// the two disagree.
    pub(super) fn read(rows: &[Row]) -> Rows {
        fn parse<T: serde::de::DeserializeOwned>(r: &Row) -> T {
            serde_json::from_value(serde_json::Value::Object(r.0.clone())).unwrap_or_else(|e| panic!("tagnet row {:?}: {e}", r.0))
        }
        let mut out = Rows::default();
        for r in rows {
            out.mismatches += r.num("mismatches").unwrap_or(0.0);
            match r.str("system") {
                Some("fib") => out.fibs.push(parse(r)),
                Some("fas" | "fls") => out.walks.push(parse(r)),
                Some("linear-scan" | "inverted-index") => out.peers.push(parse(r)),
                Some("mixed") => out.mixed.push(parse(r)),
                Some("tz") => out.tz.push(parse(r)),
                _ => {}
            }
        }
        out
    }

    /// The main FIBs, in the order they were measured.
    pub(super) fn fib_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for r in self.fibs.iter().filter(|r| r.sweep.is_none()) {
            if !names.contains(&r.fib) {
                names.push(r.fib.clone());
            }
        }
        names
    }

    /// The main measurement of FIB `fib` compiled as (`compression`, `layout`).
    pub(super) fn fib(&self, fib: &str, (compression, layout): (&str, &str)) -> Option<&FibRow> {
        self.fibs.iter().find(|r| r.sweep.is_none() && r.fib == fib && r.compression == compression && r.layout == layout)
    }

    /// Walk `walk` on `fib` compiled as `form`, in series `sweep` (`None`: the main rows).
    pub(super) fn walk(&self, sweep: Option<&str>, walk: Walk, fib: &str, (compression, layout): (&str, &str)) -> Option<&WalkRow> {
        self.walks.iter().find(|r| r.walk == walk && r.fib == fib && r.sweep.as_deref() == sweep && r.is_form(compression, layout))
    }

    /// Walk `walk` on `fib`'s `compression` in series `sweep`, whatever the layout.
    pub(super) fn walk_on(&self, sweep: &str, walk: Walk, fib: &str, compression: &str) -> Option<&WalkRow> {
        self.walks.iter().find(|r| r.walk == walk && r.fib == fib && r.sweep.as_deref() == Some(sweep) && r.compression == compression)
    }

    /// The rows of series `sweep`.
    pub(super) fn series<'a>(&'a self, sweep: &'a str) -> impl Iterator<Item = &'a WalkRow> + 'a {
        self.walks.iter().filter(move |r| r.sweep.as_deref() == Some(sweep))
    }

    /// The FIB series `sweep` ran on (its first row's).
    pub(super) fn fib_of(&self, sweep: &str) -> Option<&str> {
        self.walks.iter().find(|r| r.sweep.as_deref() == Some(sweep)).map(|r| r.fib.as_str())
    }

    /// Peer `system`'s measurement of `walk` on `fib`.
    pub(super) fn peer(&self, system: &str, walk: Walk, fib: &str) -> Option<&PeerRow> {
        self.peers.iter().find(|r| r.system == system && r.walk == walk && r.fib == fib)
    }

    /// K matches/s of `walk` on `fib`'s form, in series `sweep`.
    pub(super) fn speed(&self, sweep: Option<&str>, walk: Walk, fib: &str, form: (&str, &str)) -> f64 {
        self.walk(sweep, walk, fib, form).map_or(f64::NAN, |r| r.kmatches_per_s)
    }

    /// How much faster `walk` ran with SROL than with SOL on `fib`'s `compression`, in `sweep`.
    pub(super) fn srol_over_sol(&self, sweep: Option<&str>, walk: Walk, fib: &str, compression: &str) -> f64 {
        self.speed(sweep, walk, fib, (compression, "srol")) / self.speed(sweep, walk, fib, (compression, "sol"))
    }

    /// SROL ÷ SOL of `walk` on `fib`'s `compression`, the two measured in turn with the walks
    /// set as `walks` says (series `layouts_in_turn`).
    pub(super) fn layouts_in_turn(&self, walk: Walk, fib: &str, compression: &str, walks: &str) -> f64 {
        self.series("layouts_in_turn")
            .find(|r| r.walk == walk && r.fib == fib && r.compression == compression && r.walks.as_deref() == Some(walks))
            .map_or(f64::NAN, |r| r.srol_over_sol)
    }

    /// FLS's throughput over FAS's on `fib`'s form: as measured, and (series `given_best`)
    /// given each answer's weight less one.
    pub(super) fn fls_over_fas(&self, fib: &str, form: (&str, &str), sweep: Option<&str>) -> f64 {
        self.speed(sweep, Walk::Fls, fib, form) / self.speed(None, Walk::Fas, fib, form)
    }

    /// For each (FIB, compression, layout) of option series `sweep`: how much faster FAS and FLS
    /// ran with the option on, both measured in turn.
    pub(super) fn series_gains(&self, sweep: &str) -> Vec<(String, String, String, f64, f64)> {
        self.series(sweep)
            .filter(|r| r.walk == Walk::Fas)
            .map(|fas| {
                let layout = fas.layout.clone().unwrap_or_default();
                let fls = self.walk(Some(sweep), Walk::Fls, &fas.fib, (&fas.compression, &layout)).map_or(f64::NAN, WalkRow::gain);
                (fas.fib.clone(), fas.compression.clone(), layout, fas.gain(), fls)
            })
            .collect()
    }

    /// What interleaving FLS batches gives by FIB size (series `one_at_a_time`): for each FIB
    /// family (zipf, ccn) and form, (FIB MB, interleaved ÷ one at a time) by size.
    pub(super) fn interleaving_by_size(&self) -> Vec<(String, Vec<(f64, f64)>)> {
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for r in self.series("one_at_a_time").filter(|r| r.walk == Walk::Fls) {
            let family = r.fib.split('-').next().unwrap_or(&r.fib);
            let name = format!("{family} {}/{}", r.compression, r.layout.as_deref().unwrap_or("?"));
            let point = (r.fib_bytes / 1e6, r.gain());
            match series.iter_mut().find(|(n, _)| *n == name) {
                Some((_, points)) => points.push(point),
                None => series.push((name, vec![point])),
            }
        }
        series.iter_mut().for_each(|(_, points)| points.sort_by(|a, b| a.0.total_cmp(&b.0)));
        series
    }

    /// (x, µs per match) of `walk` on `compression`/SROL in series `sweep`, x by `x`: the
    /// series' rows plus the main measurement (2 extra tags, 100% matching) of the swept FIB.
    pub(super) fn sweep_points(&self, walk: Walk, compression: &str, sweep: &str, x: fn(&WalkRow) -> f64) -> Vec<(f64, f64)> {
        let swept = |fib: &str| self.series(sweep).any(|s| s.fib == fib);
        let mut p: Vec<(f64, f64)> = self
            .walks
            .iter()
            .filter(|r| r.walk == walk && (r.sweep.as_deref() == Some(sweep) || r.sweep.is_none()))
            .filter(|r| r.is_form(compression, "srol") && swept(&r.fib))
            .map(|r| (x(r), r.us_per_match))
            .filter(|(x, us)| x.is_finite() && us.is_finite())
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    }

    /// The bytes of FIB `fib` compiled with `compression` and SROL (from its row of any series).
    pub(super) fn srol_bytes(&self, fib: &str, compression: &str) -> f64 {
        self.fibs.iter().find(|r| r.fib == fib && r.compression == compression && r.layout == "srol").map_or(f64::NAN, |r| r.fib_bytes)
    }

    /// For each main FIB and each FIB of the skew series: its name, the percentage of the
    /// uncompressed FIB's bytes the permutation saves alone and with chains removed, and the
    /// perm+chain FIB's MB.
    pub(super) fn permutation_savings(&self) -> Vec<(String, f64, f64, f64)> {
        let mut names = self.fib_names();
        for r in self.fibs.iter().filter(|r| r.sweep.as_deref() == Some("skew")) {
            if !names.contains(&r.fib) {
                names.push(r.fib.clone());
            }
        }
        names
            .into_iter()
            .map(|f| {
                let mem = |c: &str| self.srol_bytes(&f, c);
                let saved = |c: &str| 100.0 * (1.0 - mem(c) / mem("none"));
                let (perm, chain, mb) = (saved("perm"), saved("perm+chain"), mem("perm+chain") / 1e6);
                (f, perm, chain, mb)
            })
            .collect()
    }
}

/// The lowest and the highest of `values` (∞ and −∞ for none).
pub(super) fn lowest_and_highest(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_kind_and_found_by_their_fields() {
        let walk = |w: &str, layout: &str, k: f64| {
            Row::new(w)
                .with("fib", "zipf-1m")
                .with("compression", "rare+chain")
                .with("layout", layout)
                .with("descriptors", 1_000_000)
                .with("kmatches_per_s", k)
                .with("mismatches", 0)
        };
        let rows = [
            Row::new("fib")
                .with("fib", "zipf-1m")
                .with("compression", "rare+chain")
                .with("layout", "srol")
                .with("fib_bytes", 4e6)
                .with("bytes_per_descriptor", 4.0),
            walk("fas", "srol", 300.0),
            walk("fas", "sol", 200.0),
            walk("fls", "srol", 600.0),
            Row::new("linear-scan").with("fib", "zipf-1m").with("match", "fas").with("kmatches_per_s", 3.0).with("mismatches", 2),
            Row::new("other").with("x", 1),
        ];
        let r = Rows::read(&rows);
        assert_eq!(r.fib_names(), ["zipf-1m"]);
        assert_eq!(r.srol_bytes("zipf-1m", "rare+chain"), 4e6);
        assert_eq!(r.srol_over_sol(None, Walk::Fas, "zipf-1m", "rare+chain"), 1.5);
        assert_eq!(r.fls_over_fas("zipf-1m", BEST, None), 2.0);
        assert_eq!(r.peer("linear-scan", Walk::Fas, "zipf-1m").map(|p| p.kmatches_per_s), Some(3.0));
        assert!(r.srol_over_sol(None, Walk::Fls, "zipf-1m", "rare+chain").is_nan(), "no SOL row: NaN, left out of plots");
        assert!(r.walk(None, Walk::Fas, "zipf-1m", BEST).is_some_and(|w| w.us_per_match.is_nan()));
        assert_eq!(r.mismatches, 2.0);
    }

    #[test]
    #[should_panic(expected = "tagnet row")]
    fn a_row_missing_a_field_of_its_kind_is_the_experiment_disagreeing_with_itself() {
        Rows::read(&[Row::new("fas").with("fib", "x")]);
    }
}
