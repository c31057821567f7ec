//! The `tagnet` experiment's plots.

use nexthop_lookup::tag::{Compression, INTERLEAVE_FROM_BYTES};

use super::inputs::{BURST, CHAIN_REMOVED, OUR_WALKS, PAPER_WALKS};
use super::rows::{MixedRow, Rows, Walk, WalkRow, BEST};
use crate::plot::{Chart, Plot};

pub(super) fn plots(rows: &Rows) -> Vec<Plot> {
    let fibs = rows.fib_names();
    let comps = ["none", "perm", "perm+chain", "rare+chain"];
    let mut plots = vec![Plot {
        file_tag: "memory".into(),
        // Per descriptor, so that FIBs of 1M to 63M share one scale.
        title: "Figure 9a: compiled FIB size by compression (bytes per descriptor; 63M none and perm counted)".into(),
        y_label: "bytes per descriptor".into(),
        chart: Chart::Bars {
            groups: fibs.clone(),
            series: comps
                .iter()
                .map(|c| {
                    (c.to_string(), fibs.iter().map(|f| rows.fib(f, (c, "srol")).map_or(f64::NAN, |r| r.bytes_per_descriptor)).collect())
                })
                .collect(),
        },
    }];
    let alg_groups: Vec<(String, String, Walk)> =
        fibs.iter().flat_map(|f| Walk::BOTH.map(|a| (format!("{f} {}", a.name()), f.clone(), a))).collect();
    let labels: Vec<String> = alg_groups.iter().map(|g| g.0.clone()).collect();
    plots.push(Plot {
        file_tag: "compression-time".into(),
        title: "Figure 9b: µs per match by compression (SROL, 1 thread)".into(),
        y_label: "µs per match".into(),
        chart: Chart::Bars {
            groups: labels.clone(),
            series: comps
                .iter()
                .map(|c| {
                    (
                        c.to_string(),
                        alg_groups
                            .iter()
                            .map(|&(_, ref f, a)| rows.walk(None, a, f, (c, "srol")).map_or(f64::NAN, |r| r.us_per_match))
                            .collect(),
                    )
                })
                .collect(),
        },
    });
    // Every form measured (at 63M the uncompressed ones are counted, not built).
    let forms: Vec<(String, String, &str, &str)> = fibs
        .iter()
        .flat_map(|f| comps.iter().flat_map(move |&c| ["sol", "srol"].map(|l| (format!("{f} {c} {l}"), f.clone(), c, l))))
        .filter(|(_, f, c, l)| rows.fls_over_fas(f, (c, l), None).is_finite())
        .collect();
    plots.push(Plot {
        file_tag: "given-best".into(),
        title: "FLS throughput ÷ FAS: measured, and given each answer's weight − 1 (the proof alone; 1 thread)".into(),
        y_label: "FLS ÷ FAS".into(),
        chart: Chart::Bars {
            groups: forms.iter().map(|g| g.0.clone()).collect(),
            series: [("measured", None), ("given the answer's weight − 1", Some("given_best"))]
                .iter()
                .map(|&(name, sweep)| (name.to_string(), forms.iter().map(|(_, f, c, l)| rows.fls_over_fas(f, (c, l), sweep)).collect()))
                .collect(),
        },
    });
    plots.push(Plot {
        file_tag: "layout".into(),
        title: "Figure 9c: µs per match, SOL vs SROL (1 thread)".into(),
        y_label: "µs per match".into(),
        chart: Chart::Bars {
            groups: labels.clone(),
            series: ["sol", "srol"]
                .iter()
                .map(|l| {
                    (
                        l.to_string(),
                        alg_groups
                            .iter()
                            .map(|&(_, ref f, a)| rows.walk(None, a, f, ("perm+chain", l)).map_or(f64::NAN, |r| r.us_per_match))
                            .collect(),
                    )
                })
                .collect(),
        },
    });
    if let Some(f) = rows.fib_of("descending_no_prefetch") {
        // SROL ÷ SOL under each walk condition the layout series measure, on their FIB: each
        // layout's rows measured minutes apart, then the two measured in turn.
        let walks: Vec<(String, &str, Walk)> = CHAIN_REMOVED
            .map(Compression::name)
            .into_iter()
            .flat_map(|c| Walk::BOTH.map(|a| (format!("{f} {c} {}", a.name()), c, a)))
            .collect();
        let apart = |sweep: Option<&str>| walks.iter().map(|&(_, c, a)| rows.srol_over_sol(sweep, a, f, c)).collect();
        let in_turn = |by: &str| walks.iter().map(|&(_, c, a)| rows.layouts_in_turn(a, f, c, by)).collect();
        let series = vec![
            ("ours (ascending, prefetch)".to_string(), apart(None)),
            ("ours, in turn".to_string(), in_turn(OUR_WALKS)),
            ("no prefetch".to_string(), apart(Some("no_prefetch"))),
            ("descending".to_string(), apart(Some("descending"))),
            ("the paper's walks, descending, no prefetch".to_string(), apart(Some("descending_no_prefetch"))),
            ("the paper's walks, in turn".to_string(), in_turn(PAPER_WALKS)),
        ];
        plots.push(Plot {
            file_tag: "layout-conditions".into(),
            title: "SROL ÷ SOL (matches/s, 1 thread) by how the walks run: ours, and the paper's".into(),
            y_label: "SROL ÷ SOL".into(),
            chart: Chart::Bars { groups: walks.iter().map(|w| w.0.clone()).collect(), series },
        });
    }
    let groups: Vec<(String, String, &str, Walk)> = rows
        .fib_names()
        .into_iter()
        .flat_map(|f| CHAIN_REMOVED.map(Compression::name).into_iter().flat_map(move |c| Walk::BOTH.map(|a| (f.clone(), c, a))))
        .map(|(f, c, a)| (format!("{f} {c} {}", a.name()), f, c, a))
        .filter(|&(_, ref f, c, a)| rows.layouts_in_turn(a, f, c, OUR_WALKS).is_finite())
        .collect();
    if !groups.is_empty() {
        let series = [(OUR_WALKS, "our walks"), (PAPER_WALKS, "the paper's walks (descending, no prefetch)")]
            .map(|(by, name)| (name.to_string(), groups.iter().map(|&(_, ref f, c, a)| rows.layouts_in_turn(a, f, c, by)).collect()));
        plots.push(Plot {
            file_tag: "layouts-in-turn".into(),
            title: "Figure 9c as a ratio: SROL ÷ SOL, the two measured in turn (matches/s, 1 thread)".into(),
            y_label: "SROL ÷ SOL".into(),
            chart: Chart::Bars { groups: groups.into_iter().map(|g| g.0).collect(), series: series.into() },
        });
    }
    plots.push(Plot {
        file_tag: "threads".into(),
        title: "Figure 10a/b: thousand matches/s, 1 thread vs all (rare+chain, SROL)".into(),
        y_label: "kmatches/s".into(),
        chart: Chart::Bars {
            groups: labels.clone(),
            series: [("1 thread", (|r| r.kmatches_per_s) as fn(&WalkRow) -> f64), ("all threads", |r| r.kmatches_per_s_all_threads)]
                .iter()
                .map(|(n, k)| {
                    (n.to_string(), alg_groups.iter().map(|&(_, ref f, a)| rows.walk(None, a, f, BEST).map_or(f64::NAN, k)).collect())
                })
                .collect(),
        },
    });
    let sized = |walk: Walk| -> Vec<(f64, f64)> {
        let mut p: Vec<(f64, f64)> = rows
            .walks
            .iter()
            .filter(|r| r.walk == walk && r.fib.starts_with("zipf"))
            .filter(|r| {
                r.sweep.as_deref() == Some("fib_size")
                    || (r.sweep.is_none() && r.compression == BEST.0 && r.layout.as_deref() == Some(BEST.1))
            })
            .map(|r| (r.descriptors, r.kmatches_per_s))
            .filter(|p| p.1.is_finite())
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    };
    plots.push(Plot {
        file_tag: "fib-size".into(),
        title: "Figure 10c: thousand matches/s by FIB size (Zipf FIBs, 1 thread)".into(),
        y_label: "kmatches/s".into(),
        chart: Chart::Lines {
            x_label: "descriptors".into(),
            log_x: true,
            series: Walk::BOTH.map(|w| (w.name().to_string(), sized(w))).into(),
        },
    });
    plots.push(Plot {
        file_tag: "peers".into(),
        title: "Trie speed-up over the peers (SROL, 1 thread)".into(),
        y_label: "× peer's matches/s".into(),
        chart: Chart::Bars {
            groups: labels,
            series: ["linear-scan", "inverted-index"]
                .iter()
                .map(|p| {
                    let v = alg_groups
                        .iter()
                        .map(|&(_, ref f, a)| rows.speed(None, a, f, BEST) / rows.peer(p, a, f).map_or(f64::NAN, |r| r.kmatches_per_s))
                        .collect();
                    (format!("× {p}"), v)
                })
                .collect(),
        },
    });
    let in_turn: Vec<&WalkRow> = rows.series("peers_in_turn").collect();
    plots.push(Plot {
        file_tag: "peers-in-turn".into(),
        title: "Trie speed-up over each peer, measured in turn with it (SROL, 1 thread)".into(),
        y_label: "× peer's matches/s".into(),
        chart: Chart::Bars {
            groups: in_turn.iter().map(|r| format!("{} {} {}", r.fib, r.compression, r.walk.name())).collect(),
            series: [("linear-scan", (|r| r.vs_scan_in_turn) as fn(&&WalkRow) -> f64), ("inverted-index", |r| r.vs_index_in_turn)]
                .iter()
                .map(|(p, key)| (format!("× {p}"), in_turn.iter().map(key).collect()))
                .collect(),
        },
    });
    plots.push(Plot {
        file_tag: "mixed".into(),
        title: format!(
            "Table 1: push/pull mixes, Mpps through the engine (1 thread, up to 15 follow-ups; bursts of {BURST}, and one by one)"
        ),
        y_label: "Mpps".into(),
        chart: Chart::Lines {
            x_label: "pull flows (%)".into(),
            log_x: false,
            series: fibs
                .iter()
                .flat_map(|f| [(f, (|r| r.mpps) as fn(&MixedRow) -> f64, ""), (f, |r: &MixedRow| r.mpps_one_by_one, " one by one")])
                .map(|(f, metric, how)| {
                    let p = rows.mixed.iter().filter(|r| r.fib == *f).map(|r| (r.pull_pct, metric(r))).collect();
                    (format!("{f}{how}"), p)
                })
                .collect(),
        },
    });
    for (file_tag, title, name, x_label, x) in [
        (
            "matching",
            "Figure 7: µs per match by matching rate (largest Zipf FIB, SROL, up to 2 extra tags)",
            "matching",
            "packets matching (%)",
            (|r| r.matching_pct) as fn(&WalkRow) -> f64,
        ),
        (
            "extra-tags",
            "Figure 8: µs per match by extra tags in the packet (largest Zipf FIB, SROL)",
            "extra_tags",
            "extra tags (at most)",
            |r: &WalkRow| r.extra_tags,
        ),
    ] {
        let series = CHAIN_REMOVED
            .map(Compression::name)
            .iter()
            .flat_map(|c| Walk::BOTH.map(|a| (format!("{} {c}", a.name()), rows.sweep_points(a, c, name, x))))
            .collect();
        plots.push(Plot {
            file_tag: file_tag.into(),
            title: title.into(),
            y_label: "µs per match".into(),
            chart: Chart::Lines { x_label: x_label.into(), log_x: false, series },
        });
    }
    for (file_tag, sweep, title, y_label) in [
        (
            "list-scan",
            "scalar",
            "Reading sibling lists eight nodes per AVX-512 scan: speed-up over node by node (1 thread)",
            "× node-by-node matches/s",
        ),
        (
            "walk-order",
            "depth_first",
            "FAS breadth-first, FLS in its breadth-first order: speed-up over the paper's depth-first walks (1 thread)",
            "× depth-first matches/s",
        ),
        (
            "fas-records",
            "records_at_once",
            "FAS holding 8 chain records, prefetched, before testing them: speed-up over testing each at once (1 thread; FLS, unchanged, as a control)",
            "× at-once matches/s",
        ),
        (
            "fls-order",
            "other_fls_order",
            "FLS in the order its compression picks (rare+chain: breadth-first from the root; the others: after its first match): speed-up over the other (1 thread; FAS, unchanged, as a control)",
            "× other order's matches/s",
        ),
        (
            "fls-batch",
            "one_at_a_time",
            "FLS depth-first interleaving 8 walks of a batch: speed-up over one walk at a time (1 thread; FAS, unchanged, as a control)",
            "× one-at-a-time matches/s",
        ),
    ] {
        let gains = rows.series_gains(sweep);
        plots.push(Plot {
            file_tag: file_tag.into(),
            title: title.into(),
            y_label: y_label.into(),
            chart: Chart::Bars {
                groups: gains.iter().map(|(f, c, l, _, _)| format!("{f} {c} {l}")).collect(),
                series: vec![("fas".into(), gains.iter().map(|g| g.3).collect()), ("fls".into(), gains.iter().map(|g| g.4).collect())],
            },
        });
    }
    plots.push(Plot {
        file_tag: "fls-batch-by-size".into(),
        title: format!(
            "FLS interleaving 8 walks of a batch, by FIB size: speed-up over one walk at a time (1 thread; the default from {} MiB on)",
            INTERLEAVE_FROM_BYTES >> 20
        ),
        y_label: "× one-at-a-time matches/s".into(),
        chart: Chart::Lines { x_label: "FIB MB".into(), log_x: true, series: rows.interleaving_by_size() },
    });
    let savings = rows.permutation_savings();
    plots.push(Plot {
        file_tag: "skew".into(),
        title: "Bytes the permutation saves by FIB, size and tag skew (SROL; the paper: 48% at 10M, 42% 10M-CCN, 46% 63M)".into(),
        y_label: "% of the uncompressed FIB saved".into(),
        chart: Chart::Bars {
            groups: savings.iter().map(|s| s.0.clone()).collect(),
            series: vec![
                ("perm".into(), savings.iter().map(|s| s.1).collect()),
                ("perm+chain".into(), savings.iter().map(|s| s.2).collect()),
            ],
        },
    });
    plots
}
