//! Routes and route files.
//!
//! A route file has one route per line: `prefix/len` and a next-hop label (a decimal number of
//! up to 32 bits), separated by white space — the format of the RouteViews-derived tables pyasn
//! ships (`1.0.4.0/24 56203`, the label = the origin AS, 4-byte ASNs such as 4200006700
//! included). Lines starting with `;` or `#` and blank lines are skipped. IPv4 and IPv6 routes
//! may be mixed. A line that does not parse — bad address, length beyond 32/128, host bits set,
//! bad label — is an error naming the line, and the whole file is refused: nothing is returned
//! to install.
//!
//! The tables' next hops are small numbers (at most [`MAX_NEXT_HOP`]); the file's labels are
//! numbered in order of first appearance ([`RouteSet::labels`]), so a route's next hop is its
//! label's number and any 32-bit label fits.

use std::collections::HashMap;
use std::io::BufRead;
use std::net::IpAddr;

use super::{check_route, IpError, NextHop, MAX_NEXT_HOP};
use crate::table_file::{for_each_line, BadLine};

/// One route: a prefix (host bits zero), its length, its next hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Route<A> {
    /// The prefix's address bits.
    pub prefix: A,
    /// Its length in bits.
    pub len: u8,
    /// Where it forwards.
    pub next_hop: NextHop,
}

/// The routes of a file, by family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteSet {
    /// IPv4 routes.
    pub v4: Vec<Route<u32>>,
    /// IPv6 routes.
    pub v6: Vec<Route<u128>>,
    /// The file's next-hop labels: next hop `i` of the routes is label `labels[i]`.
    pub labels: Vec<u32>,
}

impl RouteSet {
    /// The label of next hop `hop` (`None`: no route's).
    pub fn label(&self, hop: NextHop) -> Option<u32> {
        self.labels.get(hop as usize).copied()
    }
}

pub use crate::table_file::PROGRESS_EVERY;

/// Parses one route line (no comment, not blank); `numbers` numbers the labels seen.
fn parse_line(line: &str, set: &mut RouteSet, numbers: &mut HashMap<u32, NextHop>) -> Result<(), String> {
    let mut parts = line.split_whitespace();
    let (Some(prefix), Some(hop), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err("expected `prefix/len next-hop`".into());
    };
    let (addr, len) = prefix.split_once('/').ok_or("prefix has no /length")?;
    let addr: IpAddr = addr.parse().map_err(|_| format!("bad address {addr:?}"))?;
    let len: u8 = len.parse().map_err(|_| format!("bad prefix length {len:?}"))?;
    let label: u64 = hop.parse().map_err(|_| format!("bad next hop {hop:?}"))?;
    let label = u32::try_from(label).map_err(|_| format!("next hop {label} is out of range (labels have 32 bits)"))?;
    let next_hop = match numbers.get(&label) {
        Some(&n) => n,
        None => {
            let n = set.labels.len() as NextHop;
            if n > MAX_NEXT_HOP {
                return Err(IpError::BadNextHop(u64::from(n)).to_string());
            }
            set.labels.push(label);
            numbers.insert(label, n);
            n
        }
    };
    match addr {
        IpAddr::V4(a) => {
            let prefix = u32::from(a);
            check_route(prefix, len, next_hop).map_err(|e| e.to_string())?;
            set.v4.push(Route { prefix, len, next_hop });
        }
        IpAddr::V6(a) => {
            let prefix = u128::from(a);
            check_route(prefix, len, next_hop).map_err(|e| e.to_string())?;
            set.v6.push(Route { prefix, len, next_hop });
        }
    }
    Ok(())
}

/// Reads a route file; `progress(lines)` is called every [`PROGRESS_EVERY`] lines.
///
/// # Errors
/// [`IpError::BadLine`] for the first line that does not parse (or cannot be read).
pub fn parse_routes(reader: impl BufRead, progress: impl FnMut(usize)) -> Result<RouteSet, IpError> {
    let (mut set, mut numbers) = (RouteSet::default(), HashMap::new());
    for_each_line(reader, &[';', '#'], progress, |line| parse_line(line, &mut set, &mut numbers))
        .map_err(|BadLine { line, reason }| IpError::BadLine { line, reason })?;
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<RouteSet, IpError> {
        parse_routes(s.as_bytes(), |_| {})
    }

    #[test]
    fn reads_the_pyasn_format() {
        let set = parse("; IP-ASN32-DAT file\n; \n1.0.0.0/24\t15169\n2001:db8::/32 4200006700\n\n0.0.0.0/0 1\n1.0.1.0/24 15169\n").unwrap();
        assert_eq!(
            set.v4,
            vec![
                Route { prefix: 0x0100_0000, len: 24, next_hop: 0 },
                Route { prefix: 0, len: 0, next_hop: 2 },
                Route { prefix: 0x0100_0100, len: 24, next_hop: 0 }
            ]
        );
        assert_eq!(set.v6.len(), 1);
        assert_eq!((set.v6[0].len, set.v6[0].next_hop), (32, 1));
        assert_eq!(set.labels, [15169, 4_200_006_700, 1], "32-bit labels, numbered in order");
        assert_eq!((set.label(1), set.label(3)), (Some(4_200_006_700), None));
    }

    #[test]
    fn bad_lines_are_named() {
        let cases = [
            ("1.0.0.0/24 1\n1.0.0.300/24 2\n", 2, "bad address"),
            ("1.0.0.0/33 1\n", 1, "longer than 32"),
            ("::/129 1\n", 1, "longer than 128"),
            ("10.0.0.1/8 1\n", 1, "host bits"),
            ("10.0.0.0/8 x\n", 1, "bad next hop"),
            ("10.0.0.0/8 4294967296\n", 1, "out of range"),
            ("10.0.0.0/8\n", 1, "expected"),
            ("10.0.0.0 1\n", 1, "no /length"),
        ];
        for (text, line, what) in cases {
            match parse(text) {
                Err(IpError::BadLine { line: l, reason }) => {
                    assert_eq!(l, line, "{text}");
                    assert!(reason.contains(what), "{text}: {reason}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn progress_is_reported() {
        let text: String = (0..PROGRESS_EVERY * 2 + 5).map(|i| format!("10.{}.{}.0/24 1\n", i / 256 % 256, i % 256)).collect();
        let mut calls = vec![];
        parse_routes(text.as_bytes(), |n| calls.push(n)).unwrap();
        assert_eq!(calls, vec![PROGRESS_EVERY, 2 * PROGRESS_EVERY]);
    }
}
