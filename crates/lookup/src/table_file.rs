//! Table files: the line-by-line reading every family's text format shares.
//!
//! A table file (IP routes, descriptor FIBs, name routes, …) has one entry per line; blank
//! lines and lines starting with a comment character are skipped. [`for_each_line`] hands every
//! other line, trimmed, to the family's parser and stops at the first line it refuses, naming it,
//! so a caller can refuse the whole file: nothing is installed from a file with a bad line.

use std::io::BufRead;

/// Lines read between two calls of [`for_each_line`]'s progress callback.
pub const PROGRESS_EVERY: usize = 65_536;

/// A line that could not be read or parsed: its 1-based number and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Calls `parse` with every line of `reader` (trimmed) that is not blank and does not start
/// with one of `comments`, and `progress(lines read)` every [`PROGRESS_EVERY`] lines.
///
/// # Errors
/// [`BadLine`] for the first line that cannot be read (not UTF-8, an I/O error) or that
/// `parse` refuses.
pub fn for_each_line(
    reader: impl BufRead,
    comments: &[char],
    mut progress: impl FnMut(usize),
    mut parse: impl FnMut(&str) -> Result<(), String>,
) -> Result<(), BadLine> {
    for (i, line) in reader.lines().enumerate() {
        let bad = |reason: String| BadLine { line: i + 1, reason };
        let line = line.map_err(|e| bad(e.to_string()))?;
        let t = line.trim();
        if !(t.is_empty() || t.starts_with(comments)) {
            parse(t).map_err(bad)?;
        }
        if (i + 1) % PROGRESS_EVERY == 0 {
            progress(i + 1);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_blanks_and_comments_and_names_the_first_bad_line() {
        let mut seen = Vec::new();
        let text = "a\n  \n# c\n; d\n  b  \nbad\nc\n";
        let e = for_each_line(
            text.as_bytes(),
            &['#', ';'],
            |_| {},
            |l| {
                seen.push(l.to_string());
                if l == "bad" {
                    Err("no".into())
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(seen, ["a", "b", "bad"]);
        assert_eq!(e, Err(BadLine { line: 6, reason: "no".into() }));
        let invalid_utf8: &[u8] = b"ok\n\xff\n";
        assert_eq!(for_each_line(invalid_utf8, &['#'], |_| {}, |_| Ok(())).unwrap_err().line, 2);
    }
}
