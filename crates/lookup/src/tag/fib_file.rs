//! Descriptors and descriptor FIBs written as text, for people and files.
//!
//! # Overview
//! A descriptor is written as its tags separated by white space (`music rock 80s`), or, starting
//! with `/`, as a hierarchical name whose component i becomes the tag `i:component`
//! (`/org/gnu/software`, the paper's section 2.1), or as its filter: 192 characters `0` or `1`,
//! character j the bit of position j, as the TagNet authors' TagMatch workload files write
//! filters: [`parse_descriptor`].
//!
//! A descriptor FIB file has one entry per line: a descriptor, `->`, and the ports it forwards
//! to, each `tree:interface` (decimal), separated by white space:
//!
//! ```text
//! # descriptor -> tree:interface ...
//! music rock 80s -> 0:1 0:2
//! /org/gnu/software -> 1:3
//! ```
//!
//! A line may also be written as TagMatch's workload files write one (the TagNet authors'
//! generator, `gen`): `+ <tree> <interface> <filter>`, the filter as 192 characters `0`/`1`.
//!
//! Blank lines and lines starting with `#` are skipped; a descriptor on several lines forwards to
//! the union of their ports. [`read_fib_file`] refuses the whole file at its first bad line — no
//! `->`, no tags, a bad port, one port too many for the FIB — with an error naming the line, so a
//! FIB is built from a file only when all of it is good.

use std::io::BufRead;

use super::{Descriptor, DescriptorFib, Port, TagError, MAX_PORTS};
use crate::table_file::{for_each_line, BadLine};

/// A line of a descriptor FIB file that does not parse: the table files' [`BadLine`].
pub type FibFileError = BadLine;

/// The descriptor written as `text`: white-space separated tags, a `/`-separated name, or a
/// 192-character bit string ([`Descriptor::from_bit_string`]).
///
/// # Errors
/// [`TagError::EmptyDescriptor`] for text with no tags (blank, the name `/`, all zeros).
pub fn parse_descriptor(text: &str) -> Result<Descriptor, TagError> {
    let text = text.trim();
    if let Some(d) = Descriptor::from_bit_string(text) {
        return if d.is_empty() { Err(TagError::EmptyDescriptor) } else { Ok(d) };
    }
    if text.starts_with('/') {
        Descriptor::from_name(text)
    } else {
        Descriptor::from_tags(text.split_whitespace())
    }
}

/// The port written as `tree:interface`.
fn parse_port(text: &str) -> Result<Port, String> {
    let (tree, interface) = text.split_once(':').ok_or_else(|| format!("port {text:?} is not tree:interface"))?;
    let number = |what: &str, s: &str| s.parse::<u16>().map_err(|_| format!("bad {what} {s:?} in port {text:?} (0–65535)"));
    Ok(Port { tree: number("tree", tree)?, interface: number("interface", interface)? })
}

/// A line of TagMatch's workload files, `+ <tree> <interface> <filter>` (the authors' `gen`
/// writes them): its descriptor and port; `None` for a line of another form.
fn tagmatch_line(line: &str) -> Option<Result<(Descriptor, Vec<Port>), String>> {
    let rest = line.strip_prefix("+ ")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let [tree, interface, bits] = fields[..] else {
        return Some(Err("expected TagMatch's `+ <tree> <interface> <192 bits>`".into()));
    };
    Some((|| {
        let d = Descriptor::from_bit_string(bits).ok_or_else(|| format!("{bits:?} is not 192 characters 0 or 1"))?;
        if d.is_empty() {
            return Err(TagError::EmptyDescriptor.to_string());
        }
        Ok((d, vec![parse_port(&format!("{tree}:{interface}"))?]))
    })())
}

/// Parses one entry line (no comment, not blank) into `fib`; on error `fib` is unchanged.
fn parse_line(line: &str, fib: &mut DescriptorFib) -> Result<(), String> {
    let (d, ports) = match tagmatch_line(line) {
        Some(entry) => entry?,
        None => {
            let (descriptor, ports) = line.split_once("->").ok_or("expected `descriptor -> tree:interface ...`")?;
            let d = parse_descriptor(descriptor).map_err(|e| e.to_string())?;
            (d, ports.split_whitespace().map(parse_port).collect::<Result<Vec<_>, _>>()?)
        }
    };
    if ports.is_empty() {
        return Err("no ports after `->`".into());
    }
    let mut new: Vec<Port> = ports.iter().copied().filter(|&p| fib.port_id(p).is_none()).collect();
    new.sort_unstable();
    new.dedup();
    if fib.port_count() + new.len() > MAX_PORTS {
        return Err(TagError::TooManyPorts.to_string());
    }
    for p in ports {
        fib.insert(d, p).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Reads a descriptor FIB file; `progress(lines)` is called every
/// [`crate::table_file::PROGRESS_EVERY`] lines.
///
/// # Errors
/// [`FibFileError`] for the first line that does not parse (or cannot be read).
pub fn read_fib_file(reader: impl BufRead, progress: impl FnMut(usize)) -> Result<DescriptorFib, FibFileError> {
    let mut fib = DescriptorFib::new();
    for_each_line(reader, &['#'], progress, |line| parse_line(line, &mut fib))?;
    Ok(fib)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<DescriptorFib, FibFileError> {
        read_fib_file(text.as_bytes(), |_| {})
    }

    #[test]
    fn descriptors_are_tags_or_names() {
        assert_eq!(parse_descriptor("  rock  music ").unwrap(), Descriptor::from_tags(["music", "rock"]).unwrap());
        assert_eq!(parse_descriptor("/org/gnu/software").unwrap(), Descriptor::from_tags(["1:org", "2:gnu", "3:software"]).unwrap());
        assert_eq!(parse_descriptor(" \t"), Err(TagError::EmptyDescriptor));
        assert_eq!(parse_descriptor("/"), Err(TagError::EmptyDescriptor));
        let bits = format!("01{}", "0".repeat(190));
        assert_eq!(parse_descriptor(&format!(" {bits} ")).unwrap().positions().collect::<Vec<_>>(), [1], "a bit string");
        assert_eq!(parse_descriptor(&"0".repeat(192)), Err(TagError::EmptyDescriptor));
    }

    #[test]
    fn reads_entries_and_merges_repeated_descriptors() {
        let fib = read("# a FIB\n\nmusic rock -> 0:1 0:2\n/org/gnu -> 1:3\n  rock music->0:4\n").unwrap();
        assert_eq!(fib.len(), 2);
        let d = Descriptor::from_tags(["music", "rock"]).unwrap();
        let (_, set) = fib.entries().find(|(e, _)| **e == d).unwrap();
        let ports: Vec<Port> = set.iter().filter_map(|id| fib.port(id)).collect();
        assert_eq!(ports, [(0, 1), (0, 2), (0, 4)].map(|(tree, interface)| Port { tree, interface }));
        assert_eq!(fib.tree_ports(1).len(), 1);
    }

    /// TagMatch's `+ tree interface filter` lines read as the entries they write.
    #[test]
    fn tagmatch_lines_are_entries() {
        let bits = |ps: &[usize]| (0..192).map(|p| if ps.contains(&p) { '1' } else { '0' }).collect::<String>();
        let fib = read(&format!("+ 0 7 {}\n+ 2 9 {}\nmusic -> 0:7\n", bits(&[3, 90]), bits(&[5]))).unwrap();
        assert_eq!(fib.len(), 3);
        let d = parse_descriptor(&bits(&[3, 90])).unwrap();
        let (_, set) = fib.entries().find(|(e, _)| **e == d).unwrap();
        assert_eq!(set.iter().filter_map(|id| fib.port(id)).collect::<Vec<_>>(), [Port { tree: 0, interface: 7 }]);
        for bad in ["+ 0 7\n".to_string(), "+ 0 7 0101\n".to_string(), format!("+ 0 x {}\n", bits(&[1])), format!("+ 0 1 {}\n", bits(&[]))]
        {
            assert_eq!(read(&bad).unwrap_err().line, 1, "{bad:?}");
        }
    }

    #[test]
    fn bad_lines_are_named_and_refuse_the_file() {
        let cases = [
            ("a -> 0:1\nb 0:1\n", 2, "expected"),
            ("-> 0:1\n", 1, "at least one tag"),
            ("/ -> 0:1\n", 1, "at least one tag"),
            ("a ->\n", 1, "no ports"),
            ("a -> 1\n", 1, "not tree:interface"),
            ("a -> x:1\n", 1, "bad tree"),
            ("a -> 0:65536\n", 1, "bad interface"),
        ];
        for (text, line, what) in cases {
            let e = read(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}");
            assert!(e.to_string().contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_line_past_the_port_limit_adds_none_of_its_ports() {
        let mut text: String = (0..MAX_PORTS - 1).map(|i| format!("t{i} -> 0:{i}\n")).collect();
        let mut fib = read(&text).unwrap();
        assert_eq!(parse_line("x -> 1:1 1:2", &mut fib).unwrap_err(), TagError::TooManyPorts.to_string());
        assert_eq!((fib.len(), fib.port_count()), (MAX_PORTS - 1, MAX_PORTS - 1), "nothing of the bad line stays");
        text.push_str("y -> 1:1\n");
        assert_eq!(read(&text).unwrap().port_count(), MAX_PORTS);
    }
}
