//! Progress bars on stderr for long phases (table builds, workload generation), drawn only when
//! stderr is a terminal so logs and CI output stay clean.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Stderr where it is a terminal, else nowhere.
fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A progress bar over `len` steps labelled `what`; hidden when stderr is not a TTY.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), target());
    let style = ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} ({eta})").unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_message(what.to_string());
    bar
}

/// A counter of steps of unknown number labelled `what` (lines of a file being read); hidden
/// when stderr is not a TTY.
pub fn counter(what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, target());
    let style =
        ProgressStyle::with_template("{msg:>24} {spinner} {human_pos} ({per_sec})").unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}
