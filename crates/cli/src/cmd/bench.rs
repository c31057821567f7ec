//! `nexthop bench`: run experiments, write one JSON document and plots each, print a summary.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use nexthop_lab::machine::Machine;
use nexthop_lab::{experiments, report, Experiment, RunConfig};

/// Arguments of `nexthop bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The experiment to run (see --list).
    experiment: Option<String>,
    /// List the experiments and exit.
    #[arg(long)]
    list: bool,
    /// Run every experiment, then print a summary table.
    #[arg(long, conflicts_with = "experiment")]
    all: bool,
    /// Shrink workloads so each experiment runs in seconds.
    #[arg(long)]
    quick: bool,
    /// JSON output file for a single experiment (default: <out-dir>/<experiment>.json).
    #[arg(long, conflicts_with = "all")]
    out: Option<PathBuf>,
    /// Directory for results (default: results/, or results/quick/ with --quick).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Worker threads for multi-threaded measurements (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Timed repetitions per contender (at least 5).
    #[arg(long)]
    reps: Option<usize>,
}

/// Runs `nexthop bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.list {
        for e in experiments::all() {
            println!("{:<12} {}", e.name(), e.about());
        }
        return Ok(());
    }
    let chosen: Vec<&dyn Experiment> = match (&args.experiment, args.all) {
        (_, true) => experiments::all(),
        (Some(name), false) => {
            vec![experiments::find(name).with_context(|| format!("no experiment {name:?}; `nexthop bench --list` shows them"))?]
        }
        (None, false) => bail!("name an experiment, or pass --all or --list"),
    };
    let mut cfg = RunConfig::new(args.quick);
    if let Some(t) = args.threads {
        cfg.threads = t.max(1);
    }
    if let Some(r) = args.reps {
        cfg.reps = r;
    }
    let out_dir = args.out_dir.clone().unwrap_or_else(|| if args.quick { "results/quick".into() } else { "results".into() });
    let mut summary = Vec::new();
    for e in chosen {
        eprintln!("== {} ({}{})", e.name(), if cfg.quick { "quick, " } else { "" }, e.about());
        let start = Instant::now();
        let machine = Machine::current();
        let result = e.run(&cfg).with_context(|| format!("experiment {}", e.name()))?;
        let out = args.out.clone().unwrap_or_else(|| out_dir.join(format!("{}.json", e.name())));
        let files = report::write(e.name(), cfg.quick, machine, &result, &out)?;
        let mismatches: f64 = result.rows.iter().filter_map(|r| r.num("mismatches")).fold(0.0, |a, b| a + b);
        eprintln!(
            "   {} rows in {:.1}s, wrote {}",
            result.rows.len(),
            start.elapsed().as_secs_f64(),
            files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
        );
        for line in &result.summary {
            eprintln!("   {line}");
        }
        summary.push((e.name(), result.summary, mismatches));
    }
    println!("\nSummary");
    println!("{:<12} {:>10}  key figures", "experiment", "mismatches");
    for (name, lines, mismatches) in &summary {
        let mut lines = lines.iter();
        println!("{:<12} {:>10}  {}", name, mismatches, lines.next().map_or("", String::as_str));
        for l in lines {
            println!("{:<12} {:>10}  {}", "", "", l);
        }
    }
    Ok(())
}
