//! Static route files for large tables: one route a line, `prefix/len next-hop` — the layout
//! `nexthop fib ip` reads — where the next hop is the gateway's address (IPv4 or IPv6, of the
//! prefix's family). `#` starts a comment; blank lines are skipped.
//!
//! # Overview
//! [`parse`] reads the whole file or nothing: the first bad line is a [`RouteFileError`] naming
//! it (not a prefix, host bits set, a length too long, no or a bad next hop, a family mismatch),
//! so a file with a mistake changes no table. The router writes the routes into the kernel's
//! main table ([`super::netlink::RouteWriter`]), which stays the one source of routes: the
//! mirror brings them to the FIB as it does every other route, and the kernel's own path (what
//! goes through the TAPs) knows them too.

use std::io::BufRead;
use std::net::IpAddr;

use super::route::{Prefix, RouteError};

/// A route file's first bad line.
#[derive(Debug, thiserror::Error)]
pub enum RouteFileError {
    /// The file could not be read.
    #[error("reading the route file: {0}")]
    Io(#[from] std::io::Error),
    /// A line that is not a route.
    #[error("line {line}: {what}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// What is wrong with it.
        what: LineError,
    },
}

/// What is wrong with a line.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The prefix (bad syntax, host bits set, too long).
    #[error(transparent)]
    Prefix(#[from] RouteError),
    /// No next hop after the prefix.
    #[error("no next hop after the prefix")]
    NoNextHop,
    /// A next hop that is not an address.
    #[error("{0:?} is not a gateway address")]
    BadNextHop(String),
    /// A gateway of the other family.
    #[error("gateway {gateway} is not of {prefix}'s family")]
    FamilyMismatch {
        /// The prefix.
        prefix: Prefix,
        /// The gateway.
        gateway: IpAddr,
    },
    /// Something after the next hop.
    #[error("{0:?} after the next hop")]
    Trailing(String),
}

/// Reads every route of a file (see the module overview).
///
/// # Errors
/// The first bad line, or the reader's error.
pub fn parse(reader: impl BufRead) -> Result<Vec<(Prefix, IpAddr)>, RouteFileError> {
    let mut routes = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        routes.push(parse_line(text).map_err(|what| RouteFileError::Line { line: i + 1, what })?);
    }
    Ok(routes)
}

fn parse_line(text: &str) -> Result<(Prefix, IpAddr), LineError> {
    let mut words = text.split_whitespace();
    let prefix: Prefix = words.next().unwrap_or("").parse()?;
    let hop = words.next().ok_or(LineError::NoNextHop)?;
    let gateway: IpAddr = hop.parse().map_err(|_| LineError::BadNextHop(hop.to_string()))?;
    if matches!(prefix, Prefix::V4 { .. }) != gateway.is_ipv4() {
        return Err(LineError::FamilyMismatch { prefix, gateway });
    }
    if let Some(rest) = words.next() {
        return Err(LineError::Trailing(rest.to_string()));
    }
    Ok((prefix, gateway))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_of_both_families_are_read_with_comments_and_blank_lines() {
        let text = "# a table\n192.0.2.0/24 10.0.1.2\n\n2001:db8::/32 2001:db8:1::1   # a comment after a route\n0.0.0.0/0 10.0.1.1\n";
        let routes = parse(text.as_bytes()).unwrap();
        assert_eq!(
            routes,
            vec![
                ("192.0.2.0/24".parse().unwrap(), "10.0.1.2".parse().unwrap()),
                ("2001:db8::/32".parse().unwrap(), "2001:db8:1::1".parse().unwrap()),
                ("0.0.0.0/0".parse().unwrap(), "10.0.1.1".parse().unwrap()),
            ]
        );
    }

    #[test]
    fn a_bad_line_is_an_error_naming_it() {
        let cases = [
            ("192.0.2.1/24 10.0.1.2", "host bits"),
            ("192.0.2.0/33 10.0.1.2", "longer"),
            ("192.0.2.0 24 10.0.1.2", "is not a gateway"),
            ("192.0.2.0/24", "no next hop"),
            ("192.0.2.0/24 4200006700", "is not a gateway"),
            ("192.0.2.0/24 2001:db8::1", "family"),
            ("192.0.2.0/24 10.0.1.2 metric 5", "after the next hop"),
            ("nonsense 10.0.1.2", "prefix"),
        ];
        for (line, says) in cases {
            let text = format!("10.9.0.0/16 10.0.1.2\n# fine so far\n{line}\n");
            let e = parse(text.as_bytes()).unwrap_err().to_string();
            assert!(e.starts_with("line 3: ") && e.contains(says), "{line:?}: {e}");
        }
    }
}
