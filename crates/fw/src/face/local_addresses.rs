//! Which TCP faces are local to this host: NFD's `face_system.tcp.local`.
//!
//! # Overview
//! A face's scope decides what it may do: a local face may send `/localhost` packets and
//! management commands, and asks for NDNLPv2 local fields; a non-local one may not. Unix
//! sockets are always local and UDP and Ethernet faces never. A TCP face is local when both
//! its ends' addresses are *local addresses*: picked by an `include` rule and by no `exclude`
//! rule, as NFD's `whitelist` and `blacklist` under `face_system.tcp.local`. The rules are
//! those of [`crate::face::interface_rule`] that name addresses: `*`, an address (`10.0.0.5`) or a
//! subnet (`10.0.0.0/8`). By default, as NFD's, the loopback subnets `127.0.0.0/8` and
//! `::1/128` are local — apps on this host that connect over TCP.
//!
//! WebSocket faces are local when the peer is a loopback address, as NFD's are.

use std::net::IpAddr;

use crate::face::interface_rule::{Interface, InterfaceRule};
use crate::face::FaceScope;

/// The addresses a TCP face may be local between (see the module overview).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalAddresses {
    include: Vec<InterfaceRule>,
    exclude: Vec<InterfaceRule>,
}

/// NFD's default local subnets: loopback.
pub const LOOPBACK: [&str; 2] = ["127.0.0.0/8", "::1/128"];

impl Default for LocalAddresses {
    fn default() -> Self {
        LocalAddresses::parse(&LOOPBACK.map(String::from), &[]).expect("valid subnets")
    }
}

impl LocalAddresses {
    /// Addresses `include` picks less those `exclude` picks.
    ///
    /// # Errors
    /// A rule that does not parse, or names interfaces rather than addresses (a name or an
    /// Ethernet address).
    pub fn parse(include: &[String], exclude: &[String]) -> Result<LocalAddresses, String> {
        let rules = |texts: &[String]| {
            texts
                .iter()
                .map(|t| match InterfaceRule::parse(t)? {
                    r @ (InterfaceRule::Any | InterfaceRule::Address(_) | InterfaceRule::Subnet(..)) => Ok(r),
                    _ => Err(format!("{t:?} is not an address, a subnet or *")),
                })
                .collect::<Result<Vec<_>, String>>()
        };
        Ok(LocalAddresses { include: rules(include)?, exclude: rules(exclude)? })
    }

    /// Whether `address` is a local address (an IPv4 address mapped into IPv6 is taken as the
    /// IPv4 one).
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        let none = Interface { name: "", mac: None, addresses: &[], multicasts: false };
        let picks = |rules: &[InterfaceRule]| rules.iter().any(|r| r.picks(&none, Some(address)));
        picks(&self.include) && !picks(&self.exclude)
    }

    /// The scope of a TCP face between `local` and `remote`.
    pub fn scope(&self, local: IpAddr, remote: IpAddr) -> FaceScope {
        if self.contains(local) && self.contains(remote) {
            FaceScope::Local
        } else {
            FaceScope::NonLocal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_is_local_by_default() {
        let l = LocalAddresses::default();
        assert_eq!(l.scope(ip("127.0.0.1"), ip("127.0.0.1")), FaceScope::Local);
        assert_eq!(l.scope(ip("::1"), ip("::1")), FaceScope::Local);
        assert_eq!(l.scope(ip("::ffff:127.0.0.1"), ip("::ffff:127.0.0.9")), FaceScope::Local, "mapped IPv4");
        assert_eq!(l.scope(ip("10.0.0.1"), ip("10.0.0.2")), FaceScope::NonLocal);
        assert_eq!(l.scope(ip("127.0.0.1"), ip("10.0.0.2")), FaceScope::NonLocal, "both ends must be local");
    }

    #[test]
    fn rules_include_and_exclude_addresses() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let l = LocalAddresses::parse(&s(&["127.0.0.0/8", "10.1.0.0/16"]), &s(&["10.1.2.3"])).unwrap();
        assert_eq!(l.scope(ip("10.1.0.1"), ip("10.1.9.9")), FaceScope::Local);
        assert_eq!(l.scope(ip("10.1.0.1"), ip("10.1.2.3")), FaceScope::NonLocal, "excluded");
        assert_eq!(l.scope(ip("10.2.0.1"), ip("10.2.0.2")), FaceScope::NonLocal);
        let all = LocalAddresses::parse(&s(&["*"]), &[]).unwrap();
        assert_eq!(all.scope(ip("192.0.2.1"), ip("2001:db8::1")), FaceScope::Local);
        let none = LocalAddresses::parse(&[], &[]).unwrap();
        assert_eq!(none.scope(ip("127.0.0.1"), ip("127.0.0.1")), FaceScope::NonLocal, "an empty list: nothing is local");
        for bad in ["eth0", "02:00:00:00:00:01", "10.0.0.0/33", ""] {
            assert!(LocalAddresses::parse(&s(&[bad]), &[]).is_err(), "{bad}");
            assert!(LocalAddresses::parse(&[], &s(&[bad])).is_err(), "{bad}");
        }
    }
}
