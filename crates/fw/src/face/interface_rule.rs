//! Which interfaces a kind of face goes on: rules that pick interfaces (or addresses), and a
//! list of rules to include less a list to exclude — NFD's `whitelist` and `blacklist`.
//!
//! # Overview
//! A rule ([`InterfaceRule::parse`]) is written as one of:
//! - `*`: every interface;
//! - a name, `eth0`, or a pattern of names where `*` stands for any run of characters, `?` for
//!   one and `[…]` for one of a set (`eth*`, `veth?`, `eth[0-3]`; `fnmatch(3)`'s patterns, as
//!   NFD's `ifname`);
//! - an address, `192.168.1.10` or `fe80::1`: the interface that has it (for IPv4 multicast
//!   faces, which go on addresses, that address alone);
//! - a subnet, `10.0.0.0/8` or `fd00::/8`: the interfaces with an address in it (for IPv4
//!   multicast faces, their addresses in it);
//! - an Ethernet address, `02:00:00:00:00:01`: the interface that has it.
//!
//! [`InterfaceRules`] chooses: an interface (or address) that an `include` rule picks and no
//! `exclude` rule picks. With no `include` rule, every interface that is up, can multicast and
//! is not loopback is included, as NFD's `whitelist { * }`. An *exact* rule — a plain name or
//! an address — names one interface the operator wants, whatever its state: a face there must
//! open, and an interface it names must exist (the caller reports it otherwise). The patterns
//! (`*`, a name pattern, a subnet, an Ethernet address) pick among the interfaces that are up,
//! can multicast and are not loopback, as NFD's rules do, and one of those that refuses a face is
//! skipped. Rules read from `nfd.conf` treat exact rules as patterns too
//! ([`InterfaceRules::exact_required`] false), as NFD does: `ifname eth1` is skipped while eth1
//! is down. An exclude rule of any kind wins over every include rule.
//!
//! The rules decide on plain data ([`Interface`]); `crate::sys::interfaces` reads the host's list.

use std::net::IpAddr;

use nexthop_lookup::ip::Address;

use crate::face::ether::Mac;

/// One rule of an interface list (see the module overview).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterfaceRule {
    /// `*`: every interface.
    Any,
    /// A name, or a pattern of names (`*`: any run of characters; `?`: one; `[…]`: one of a
    /// set).
    Name(String),
    /// The interface that has this address (or, for faces on addresses, the address itself).
    Address(IpAddr),
    /// The interfaces with an address in this subnet (or, for faces on addresses, those
    /// addresses).
    Subnet(IpAddr, u8),
    /// The interface with this Ethernet address.
    Mac(Mac),
}

/// What a rule looks at in one interface.
#[derive(Debug, Clone, Copy)]
pub struct Interface<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its Ethernet address, if it has one.
    pub mac: Option<[u8; 6]>,
    /// Its IP addresses.
    pub addresses: &'a [IpAddr],
    /// Up, able to multicast and not loopback: the interfaces patterns pick among.
    pub multicasts: bool,
}

impl InterfaceRule {
    /// Reads a rule as the module overview writes it.
    ///
    /// # Errors
    /// A subnet whose prefix length is not a number within its address's bits, or text that is
    /// no rule (empty, or with characters no interface name has: white space, `/`).
    pub fn parse(text: &str) -> Result<InterfaceRule, String> {
        if text == "*" {
            return Ok(InterfaceRule::Any);
        }
        if let Ok(a) = text.parse::<IpAddr>() {
            return Ok(InterfaceRule::Address(a));
        }
        if let Some((net, len)) = text.split_once('/') {
            let net: IpAddr = net.parse().map_err(|_| format!("{text:?}: {net:?} is not an IP address"))?;
            let bits = if net.is_ipv4() { 32 } else { 128 };
            let len =
                len.parse::<u8>().ok().filter(|&l| l <= bits).ok_or_else(|| format!("{text:?}: the prefix length is not 0 to {bits}"))?;
            return Ok(InterfaceRule::Subnet(net, len));
        }
        if let Some(mac) = Mac::parse(text) {
            return Ok(InterfaceRule::Mac(mac));
        }
        if text.is_empty() || text.contains(char::is_whitespace) {
            return Err(format!("{text:?} is no interface name, address, subnet or Ethernet address"));
        }
        Ok(InterfaceRule::Name(text.to_string()))
    }

    /// Whether the rule names one interface or address exactly (a plain name or an address):
    /// the operator wants a face there, whatever the interface's state.
    pub fn is_exact(&self) -> bool {
        match self {
            InterfaceRule::Name(n) => !n.contains(['*', '?', '[']),
            InterfaceRule::Address(_) => true,
            InterfaceRule::Any | InterfaceRule::Subnet(..) | InterfaceRule::Mac(_) => false,
        }
    }

    /// Whether the rule picks `interface` — or, with `address`, that address of it (an address
    /// or subnet rule then looks at that address alone, the other rules at the interface).
    pub fn picks(&self, interface: &Interface<'_>, address: Option<IpAddr>) -> bool {
        let any_address = |f: &dyn Fn(IpAddr) -> bool| match address {
            Some(a) => f(a),
            None => interface.addresses.iter().any(|&a| f(a)),
        };
        match self {
            InterfaceRule::Any => true,
            InterfaceRule::Name(pattern) => name_matches(pattern.as_bytes(), interface.name.as_bytes()),
            InterfaceRule::Address(want) => any_address(&|a| a == *want),
            InterfaceRule::Subnet(net, len) => any_address(&|a| in_subnet(a, *net, *len)),
            InterfaceRule::Mac(mac) => interface.mac == Some(mac.0),
        }
    }
}

/// Whether `a` is in `net`/`len` (never across IP versions).
fn in_subnet(a: IpAddr, net: IpAddr, len: u8) -> bool {
    match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => u32::from(a).masked(len) == u32::from(n).masked(len),
        (IpAddr::V6(a), IpAddr::V6(n)) => u128::from(a).masked(len) == u128::from(n).masked(len),
        _ => false,
    }
}

/// Whether `name` matches `pattern`, as `fnmatch(3)` (which NFD's `ifname` uses) without
/// escapes: `*` any run of bytes, `?` one byte, `[…]` one byte of a set (`a-z` ranges; `!` or
/// `^` first negates it; a `]` first is a member), any other byte itself (a `[` with no
/// closing `]` too).
fn name_matches(pattern: &[u8], name: &[u8]) -> bool {
    let Some((&p, rest)) = pattern.split_first() else { return name.is_empty() };
    if p == b'*' {
        return (0..=name.len()).any(|skip| name_matches(rest, &name[skip..]));
    }
    let Some((&c, tail)) = name.split_first() else { return false };
    match (p, bracket(rest)) {
        (b'[', Some((set, after))) => in_set(set, c) && name_matches(after, tail),
        _ => (p == b'?' || p == c) && name_matches(rest, tail),
    }
}

/// The set of a bracket expression whose `[` is just before `rest`, and what follows its
/// closing `]`; `None` when it is not closed.
fn bracket(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    let negated = usize::from(matches!(rest.first(), Some(b'!' | b'^')));
    // A `]` right after the `[` (and its negation) is a member, not the end.
    let first = negated + 1;
    let close = first + rest.get(first..)?.iter().position(|&b| b == b']')?;
    Some((&rest[..close], &rest[close + 1..]))
}

/// Whether `c` is in a bracket expression's `set` (see [`name_matches`]).
fn in_set(set: &[u8], c: u8) -> bool {
    let (negated, members) = match set.split_first() {
        Some((b'!' | b'^', members)) => (true, members),
        _ => (false, set),
    };
    let mut found = false;
    let mut i = 0;
    while i < members.len() {
        if members.get(i + 1) == Some(&b'-') && i + 2 < members.len() {
            found |= (members[i]..=members[i + 2]).contains(&c);
            i += 3;
        } else {
            found |= members[i] == c;
            i += 1;
        }
    }
    found != negated
}

/// An `include` list less an `exclude` list (see the module overview).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceRules {
    /// What to include (none: every interface that is up, can multicast and is not loopback).
    pub include: Vec<InterfaceRule>,
    /// What to leave out, whatever includes it.
    pub exclude: Vec<InterfaceRule>,
    /// Whether an exact include rule names an interface that must exist and whose face must
    /// open, whatever its state (true, nexthop's own lists), or picks it only while it is up,
    /// can multicast and is not loopback, like a pattern (false, as NFD's `ifname`).
    pub exact_required: bool,
    /// Whether an interface an exact rule names may be missing (skipped), as after the start,
    /// when interfaces come and go; otherwise ([`InterfaceRules::exact_required`]) it must
    /// exist.
    pub missing_ok: bool,
}

impl Default for InterfaceRules {
    fn default() -> Self {
        InterfaceRules { include: Vec::new(), exclude: Vec::new(), exact_required: true, missing_ok: false }
    }
}

/// Whether a chosen interface (or address) was named exactly, so its face must open.
pub type Listed = bool;

impl InterfaceRules {
    /// The rules of two configuration lists.
    ///
    /// # Errors
    /// The first entry that is no rule ([`InterfaceRule::parse`]).
    pub fn parse(include: &[String], exclude: &[String]) -> Result<InterfaceRules, String> {
        let rules = |list: &[String]| list.iter().map(|r| InterfaceRule::parse(r)).collect::<Result<Vec<_>, _>>();
        Ok(InterfaceRules { include: rules(include)?, exclude: rules(exclude)?, ..InterfaceRules::default() })
    }

    /// These rules with exact include rules required or not ([`InterfaceRules::exact_required`]).
    pub fn requiring_exact(self, required: bool) -> InterfaceRules {
        InterfaceRules { exact_required: required, ..self }
    }

    /// These rules with the interfaces exact rules name allowed to be missing
    /// ([`InterfaceRules::missing_ok`]).
    pub fn allowing_missing(self) -> InterfaceRules {
        InterfaceRules { missing_ok: true, ..self }
    }

    /// Whether `interface` (with `address`: that address of it) is chosen, and if so whether an
    /// exact rule named it.
    pub fn choose(&self, interface: &Interface<'_>, address: Option<IpAddr>) -> Option<Listed> {
        if self.exclude.iter().any(|r| r.picks(interface, address)) {
            return None;
        }
        if self.include.is_empty() {
            return interface.multicasts.then_some(false);
        }
        let picked = self.include.iter().filter(|r| r.picks(interface, address));
        let mut chosen = None;
        for r in picked {
            if r.is_exact() && self.exact_required {
                return Some(true);
            }
            if interface.multicasts {
                chosen = Some(false);
            }
        }
        chosen
    }

    /// The exact include rules (a plain name or an address) whose interface must exist (none
    /// unless [`InterfaceRules::exact_required`], or with [`InterfaceRules::missing_ok`]).
    pub fn exact(&self) -> impl Iterator<Item = &InterfaceRule> {
        self.include.iter().filter(|r| self.exact_required && !self.missing_ok && r.is_exact())
    }
}

impl core::fmt::Display for InterfaceRule {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            InterfaceRule::Any => f.write_str("*"),
            InterfaceRule::Name(n) => f.write_str(n),
            InterfaceRule::Address(a) => write!(f, "{a}"),
            InterfaceRule::Subnet(n, l) => write!(f, "{n}/{l}"),
            InterfaceRule::Mac(m) => write!(f, "{m}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> InterfaceRule {
        InterfaceRule::parse(s).unwrap()
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn rules_read_and_print_back() {
        for (text, want) in [
            ("*", InterfaceRule::Any),
            ("eth0", InterfaceRule::Name("eth0".into())),
            ("veth*", InterfaceRule::Name("veth*".into())),
            ("192.168.1.10", InterfaceRule::Address("192.168.1.10".parse().unwrap())),
            ("fe80::1", InterfaceRule::Address("fe80::1".parse().unwrap())),
            ("10.0.0.0/8", InterfaceRule::Subnet("10.0.0.0".parse().unwrap(), 8)),
            ("fd00::/8", InterfaceRule::Subnet("fd00::".parse().unwrap(), 8)),
            ("02:00:00:00:00:0a", InterfaceRule::Mac(Mac([2, 0, 0, 0, 0, 10]))),
        ] {
            assert_eq!(rule(text), want, "{text}");
            assert_eq!(want.to_string(), text);
        }
        for bad in ["", "eth 0", "10.0.0.0/33", "fd00::/129", "10.0.0.0/x", "ten/8"] {
            assert!(InterfaceRule::parse(bad).is_err(), "{bad:?}");
        }
        assert!(rule("eth0").is_exact() && rule("10.1.2.3").is_exact());
        assert!(!rule("eth*").is_exact() && !rule("*").is_exact() && !rule("10.0.0.0/8").is_exact());
        assert!(!rule("eth[01]").is_exact());
    }

    #[test]
    fn name_patterns_match_runs_and_single_characters() {
        for (pattern, name, want) in [
            ("eth*", "eth0", true),
            ("eth*", "eth", true),
            ("eth*", "veth0", false),
            ("*eth*", "veth0", true),
            ("veth?", "veth1", true),
            ("veth?", "veth12", false),
            ("e*h*1", "eth-0-1", true),
            ("eth0", "eth0", true),
            ("eth0", "eth01", false),
            ("eth[0-2]", "eth1", true),
            ("eth[0-2]", "eth3", false),
            ("eth[!0-2]", "eth3", true),
            ("eth[^0-2]", "eth0", false),
            ("en[ops]*", "enp3s0", true),
            ("en[ops]*", "enx0", false),
            ("a[]b]c", "a]c", true),
            ("a[!]]c", "a]c", false),
            ("eth[0", "eth[0", true),
            ("eth[0", "eth0", false),
            ("eth[]", "eth[]", true),
        ] {
            assert_eq!(name_matches(pattern.as_bytes(), name.as_bytes()), want, "{pattern} {name}");
        }
    }

    #[test]
    fn subnets_address_and_interface_rules_pick_what_they_name() {
        let addresses = ips(&["192.168.1.10", "10.0.0.2", "fe80::1"]);
        let eth0 = Interface { name: "eth0", mac: Some([2, 0, 0, 0, 0, 2]), addresses: &addresses, multicasts: true };
        assert!(rule("10.0.0.0/8").picks(&eth0, None));
        assert!(rule("fe80::/10").picks(&eth0, None));
        assert!(!rule("172.16.0.0/12").picks(&eth0, None));
        // Address by address: the subnet's and the address rule's own.
        assert!(!rule("10.0.0.0/8").picks(&eth0, Some(addresses[0])));
        assert!(rule("10.0.0.0/8").picks(&eth0, Some(addresses[1])));
        assert!(rule("0.0.0.0/0").picks(&eth0, Some(addresses[0])));
        assert!(!rule("::/0").picks(&eth0, Some(addresses[0])), "no rule crosses IP versions");
        assert!(rule("192.168.1.10").picks(&eth0, None) && !rule("192.168.1.10").picks(&eth0, Some(addresses[1])));
        // Interface rules answer alike for each of its addresses.
        assert!(rule("eth*").picks(&eth0, Some(addresses[1])) && rule("*").picks(&eth0, None));
        assert!(rule("02:00:00:00:00:02").picks(&eth0, None) && !rule("02:00:00:00:00:03").picks(&eth0, None));
    }

    #[test]
    fn exclusions_win_patterns_pick_among_multicast_interfaces_and_names_pick_any() {
        let none: [IpAddr; 0] = [];
        let lo = Interface { name: "lo", mac: None, addresses: &none, multicasts: false };
        let eth0 = Interface { name: "eth0", mac: None, addresses: &none, multicasts: true };
        let docker0 = Interface { name: "docker0", mac: None, addresses: &none, multicasts: true };
        let rules = |inc: &[&str], exc: &[&str]| {
            let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
            InterfaceRules::parse(&s(inc), &s(exc)).unwrap()
        };
        // None listed: every multicast-capable one, less the excluded.
        let r = rules(&[], &["docker*"]);
        assert_eq!([&lo, &eth0, &docker0].map(|i| r.choose(i, None)), [None, Some(false), None]);
        // A pattern picks among multicast-capable ones; a plain name picks even loopback, listed.
        let r = rules(&["*", "lo"], &[]);
        assert_eq!([&lo, &eth0, &docker0].map(|i| r.choose(i, None)), [Some(true), Some(false), Some(false)]);
        let r = rules(&["eth0", "docker0"], &["docker0"]);
        assert_eq!([&lo, &eth0, &docker0].map(|i| r.choose(i, None)), [None, Some(true), None]);
        assert_eq!(r.exact().map(ToString::to_string).collect::<Vec<_>>(), ["eth0", "docker0"]);
        assert!(InterfaceRules::parse(&["eth 0".into()], &[]).is_err());
        assert!(InterfaceRules::parse(&[], &["10.0.0.0/40".into()]).is_err());
        // As NFD's `ifname`: a plain name picks only a multicast-capable interface, and
        // requires nothing.
        let r = rules(&["lo", "eth0"], &[]).requiring_exact(false);
        assert_eq!([&lo, &eth0, &docker0].map(|i| r.choose(i, None)), [None, Some(false), None]);
        assert_eq!(r.exact().count(), 0);
    }
}
