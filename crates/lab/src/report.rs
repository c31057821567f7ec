//! Results: rows, the report an experiment returns, and the JSON document written to disk.
//!
//! ```json
//! {"experiment": "wire", "quick": true,
//!  "machine": {"cpu": "…", "cores": 2, "memory": 25…, "rustc": "rustc 1.95.0 …", "git": "…"},
//!  "rows": [{"system": "nexthop-view", "packet": "interest", …, "mismatches": 0}, …]}
//! ```

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::machine::Machine;
use crate::plot::Plot;

/// One flat result row: `system`, the workload parameters, and the metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Row(pub Map<String, Value>);

impl Row {
    /// A row for `system`.
    pub fn new(system: &str) -> Self {
        Row(Map::new()).with("system", system)
    }

    /// Adds a field, builder style.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.to_string(), value.into());
        self
    }

    /// A field as a string (for string fields).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// A field as a number.
    pub fn num(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }
}

/// What an experiment returns.
#[derive(Debug, Default)]
pub struct Report {
    /// Result rows.
    pub rows: Vec<Row>,
    /// Plots to draw next to the JSON; the first is `<stem>.svg`, the others `<stem>-<name>.svg`.
    pub plots: Vec<Plot>,
    /// Key figures, one line each, for the end-of-run summary table.
    pub summary: Vec<String>,
}

/// The JSON document of one experiment run.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// Experiment name.
    pub experiment: &'a str,
    /// Whether it ran with `--quick`.
    pub quick: bool,
    /// The machine and build.
    pub machine: Machine,
    /// The rows.
    pub rows: &'a [Row],
}

/// Writes the JSON document to `out` and each plot next to it; returns the files written.
/// `machine` is taken when the experiment starts, so that its `git` field names the code that
/// ran even if the working tree changes during a long run.
///
/// # Errors
/// When a directory cannot be created or a file written.
pub fn write(experiment: &str, quick: bool, machine: Machine, report: &Report, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let doc = Document { experiment, quick, machine, rows: &report.rows };
    let json = serde_json::to_string_pretty(&doc)?;
    std::fs::write(out, json + "\n").with_context(|| format!("writing {}", out.display()))?;
    let mut written = vec![out.to_path_buf()];
    let stem = out.with_extension("");
    for (i, plot) in report.plots.iter().enumerate() {
        let path = if i == 0 { stem.with_extension("svg") } else { PathBuf::from(format!("{}-{}.svg", stem.display(), plot.file_tag)) };
        plot.draw(&path).with_context(|| format!("drawing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
