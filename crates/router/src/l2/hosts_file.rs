//! Host files: the switch's static FIB, one host a line, `mac interface` (the host's Ethernet
//! address as `ip link` writes it, and the switch interface it is behind). `#` starts a
//! comment; blank lines are skipped.
//!
//! # Overview
//! [`parse`] reads the whole file or nothing: the first bad line is a [`HostsFileError`] naming
//! it (not an address, a group address, an interface the switch does not have, an address
//! given twice, something after the interface).

use std::io::BufRead;

/// A hosts file's first bad line.
#[derive(Debug, thiserror::Error)]
pub enum HostsFileError {
    /// The file could not be read.
    #[error("reading the hosts file: {0}")]
    Io(#[from] std::io::Error),
    /// A line that is not a host.
    #[error("line {line}: {what}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// What is wrong with it.
        what: HostLineError,
    },
}

/// What is wrong with a line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HostLineError {
    /// Not an Ethernet address (six hex bytes joined by `:`).
    #[error("{0:?} is not an Ethernet address")]
    BadAddress(String),
    /// A broadcast or multicast address: not a host's.
    #[error("{0:?} is a group address, not a host's")]
    GroupAddress(String),
    /// No interface after the address.
    #[error("no interface after the address")]
    NoInterface,
    /// An interface that is not one of the switch's.
    #[error("{0:?} is not one of the switch's interfaces")]
    UnknownInterface(String),
    /// The address is on an earlier line.
    #[error("{0:?} is given twice")]
    Duplicate(String),
    /// Something after the interface.
    #[error("{0:?} after the interface")]
    Trailing(String),
}

/// A MAC address as `02:00:00:00:00:01` (what [`parse_mac`] reads).
pub fn mac_text(m: [u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// An Ethernet address from `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(text: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = text.split(':');
    for b in &mut out {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// Reads every host of a file: (address, the interface's place in `interfaces`).
///
/// # Errors
/// The first bad line, or the reader's error.
pub fn parse(reader: impl BufRead, interfaces: &[String]) -> Result<Vec<([u8; 6], u16)>, HostsFileError> {
    let mut hosts: Vec<([u8; 6], u16)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let host =
            parse_line(text, interfaces)
                .and_then(|h| if seen.insert(h.0) { Ok(h) } else { Err(HostLineError::Duplicate(text.to_string())) });
        hosts.push(host.map_err(|what| HostsFileError::Line { line: i + 1, what })?);
    }
    Ok(hosts)
}

fn parse_line(text: &str, interfaces: &[String]) -> Result<([u8; 6], u16), HostLineError> {
    let mut words = text.split_whitespace();
    let word = words.next().unwrap_or("");
    let mac = parse_mac(word).ok_or_else(|| HostLineError::BadAddress(word.to_string()))?;
    if mac[0] & 1 != 0 {
        return Err(HostLineError::GroupAddress(word.to_string()));
    }
    let name = words.next().ok_or(HostLineError::NoInterface)?;
    let port = interfaces.iter().position(|i| i == name).ok_or_else(|| HostLineError::UnknownInterface(name.to_string()))?;
    if let Some(extra) = words.next() {
        return Err(HostLineError::Trailing(extra.to_string()));
    }
    Ok((mac, port as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports() -> Vec<String> {
        vec!["s1".into(), "s2".into()]
    }

    #[test]
    fn hosts_and_comments_read() {
        let text = "# the lab\n02:00:00:00:00:01 s1\n\n02:00:00:00:00:0a   s2  # h2\n";
        let hosts = parse(text.as_bytes(), &ports()).unwrap();
        assert_eq!(hosts, [([2, 0, 0, 0, 0, 1], 0), ([2, 0, 0, 0, 0, 0x0a], 1)]);
    }

    #[test]
    fn the_first_bad_line_is_named() {
        let cases = [
            ("02:00:00:00:00:01 s1\n02:00:00:00:01 s1\n", 2, HostLineError::BadAddress("02:00:00:00:01".into())),
            ("ff:ff:ff:ff:ff:ff s1\n", 1, HostLineError::GroupAddress("ff:ff:ff:ff:ff:ff".into())),
            ("02:00:00:00:00:01\n", 1, HostLineError::NoInterface),
            ("02:00:00:00:00:01 s9\n", 1, HostLineError::UnknownInterface("s9".into())),
            ("02:00:00:00:00:01 s1 x\n", 1, HostLineError::Trailing("x".into())),
            ("02:00:00:00:00:01 s1\n02:00:00:00:00:01 s2\n", 2, HostLineError::Duplicate("02:00:00:00:00:01 s2".into())),
            ("02:00:00:00:00:1g s1\n", 1, HostLineError::BadAddress("02:00:00:00:00:1g".into())),
        ];
        for (text, line, what) in cases {
            match parse(text.as_bytes(), &ports()) {
                Err(HostsFileError::Line { line: l, what: w }) => assert_eq!((l, w), (line, what), "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
