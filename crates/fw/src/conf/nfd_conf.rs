//! NFD's configuration file (`nfd.conf`) read into a [`Config`], for moving a node from NFD.
//!
//! # Overview
//! `nfd.conf` is in Boost's INFO format: `key [value]` per line, a `{ … }` block of children
//! after a key (on its line or the next), `;` comments, values in double quotes where they hold
//! white space. [`parse_info`] reads that into a tree of [`InfoNode`]s, each with its line.
//!
//! [`from_nfd_conf`] then starts from what NFD does with an empty file — no channel, no
//! multicast face — and takes what nexthop has a setting for:
//! - `tables`: `cs_max_packets`, `cs_policy` (`lru`, `priority_fifo`),
//!   `cs_unsolicited_policy`, `strategy_choice` (prefix → strategy) and `network_region`;
//! - `face_system`: `general.enable_congestion_marking`; `unix.path`; `tcp`, `udp` and
//!   `websocket` with `listen`, `port`, `enable_v4`/`enable_v6` (one listener each: `[::]`,
//!   dual-stack, where IPv6 is enabled, else `0.0.0.0`); `tcp`'s `local` whitelist and
//!   blacklist (`subnet` and `*`: which TCP faces are local, [`crate::face::local_addresses`]);
//!   `udp`'s `idle_timeout` (seconds),
//!   `unicast_mtu` and multicast (`mcast`, `mcast_group`, `mcast_port`, `mcast_group_v6`,
//!   `mcast_port_v6`); `ether`'s `listen`, `idle_timeout`, `mcast` and `mcast_group`; for both, `mcast_ad_hoc`
//!   (the multicast faces' link type) and the
//!   `whitelist` and `blacklist` of interfaces (`ifname` — a name or a pattern —, `ether`,
//!   `subnet` and `*` entries) as the faces' include and exclude rules
//!   ([`crate::face::interface_rule`]; an empty whitelist excludes everything; a plain `ifname`
//!   picks its interface only while it is up and can multicast, as in NFD:
//!   `faces.named_interfaces_required` is off);
//! - `general.user` and `general.group` (who forwards once started, [`crate::sys::privileges`]);
//! - `forwarder.default_hop_limit` (0–255);
//! - `face_system.netdev_bound` is accepted empty, as NFD's sample has it; its rules come back
//!   as a warning (NFD parses them but makes no faces from them either).
//! - `log.default_level` (`NONE` … `ALL`) as nexthop's log level, and a module's own level
//!   as that of nexthop's module that does its work (`Forwarder DEBUG` →
//!   `nexthop_fw::pipeline=debug`; an NFD module with no counterpart is warned about);
//! - `rib.localhop_security` present: prefix registration under `/localhop/nfd` is served,
//!   checked by the section's validator rules and trust anchors
//!   ([`crate::mgmt::validator`]); `rib.localhost_security` checks `rib` commands from local
//!   faces the same way, `rib.prefix_announcement_validation` the announcements `rib/announce`
//!   carries; `rib.auto_prefix_propagate` turns on prefix propagation as every
//!   identity of the keychain (`forwarder.propagate_keychain`, [`crate::mgmt::propagate`]), its
//!   `cost`, `timeout` (ms), `refresh_interval`, `base_retry_wait` and `max_retry_wait` (s)
//!   setting propagation's; `rib.readvertise_nlsr` (off without it, as in NFD) whether client
//!   routes are told to a routing daemon ([`crate::mgmt::readvertise`]).
//!
//! - `authorizations`: each `authorize`'s `certfile` and `privileges`
//!   ([`crate::mgmt::authorization`]); without the section, as in NFD, no one may send
//!   `faces`, `fib`, `cs` or `strategy-choice` commands.
//!
//! Everything else — NFD logging modules and keys nexthop has no counterpart for — is not an
//! error: it comes back as a warning naming its line, so the operator sees what did not carry
//! over. A
//! value that does not parse (a port that is not a number, `listen maybe`) is an error naming
//! its line, and nothing is returned.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::conf::config::{Authorize, Config, ConfigError, StaticStrategy};
use crate::conf::info::{info_text, parse_info, InfoNode};
use crate::face::interface_rule::InterfaceRule;

fn invalid(line: usize, what: impl std::fmt::Display) -> ConfigError {
    ConfigError::Invalid(format!("nfd.conf line {line}: {what}"))
}

/// `nfd.conf`'s text as a nexthop configuration, and a warning for each thing that did not
/// carry over.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the line of a value that does not parse, or the resulting
/// configuration's first bad value.
pub fn from_nfd_conf(text: &str) -> Result<(Config, Vec<String>), ConfigError> {
    let mut cfg = Config::default();
    let f = &mut cfg.faces;
    // NFD makes a channel only for a section that is there.
    (f.unix, f.tcp, f.udp, f.websocket) = (String::new(), String::new(), String::new(), String::new());
    // `ifname eth1` picks eth1 while it is up and can multicast, and is skipped otherwise.
    f.named_interfaces_required = false;
    // Without an `authorizations` section NFD refuses every faces, fib, cs and strategy-choice
    // command.
    cfg.authorize.clear();
    // Nor does it tell a routing daemon of client routes without `readvertise_nlsr yes`.
    cfg.forwarder.readvertise_nlsr = false;
    let mut warnings = Vec::new();
    for top in parse_info(text).map_err(|e| invalid(e.line, e.what))? {
        match top.key.as_str() {
            "tables" => tables(&top, &mut cfg, &mut warnings)?,
            "authorizations" => cfg.authorize = authorizations(&top)?,
            "general" => {
                for n in &top.children {
                    match n.key.as_str() {
                        "user" => cfg.forwarder.user = n.value.clone(),
                        "group" => cfg.forwarder.group = n.value.clone(),
                        _ => ignored(n, "general", &mut warnings),
                    }
                }
            }
            "forwarder" => {
                for n in &top.children {
                    match n.key.as_str() {
                        "default_hop_limit" => cfg.forwarder.default_hop_limit = value(n, "a number from 0 to 255")?,
                        _ => ignored(n, "forwarder", &mut warnings),
                    }
                }
            }
            "face_system" => face_system(&top, &mut cfg, &mut warnings)?,
            "log" => {
                // A module's own level: nexthop's module that does that NFD module's work.
                let mut modules = Vec::new();
                for n in &top.children {
                    match n.key.as_str() {
                        "default_level" => cfg.forwarder.log_level = log_level(n)?,
                        module => match nexthop_module(module.strip_prefix("nfd.").unwrap_or(module)) {
                            Some(target) => modules.push(format!("{target}={}", log_level(n)?)),
                            None => ignored(n, "log", &mut warnings),
                        },
                    }
                }
                if !modules.is_empty() {
                    cfg.forwarder.log_level = format!("{},{}", cfg.forwarder.log_level, modules.join(","));
                }
            }
            "rib" => {
                for n in &top.children {
                    if matches!(n.key.as_str(), "localhop_security" | "localhost_security" | "prefix_announcement_validation") {
                        // Its trust-anchor files are read when the forwarder starts (relative to
                        // nfd.conf's folder); the rest must already be right.
                        crate::mgmt::validator::Validator::check(&n.children)
                            .map_err(|e| invalid(e.line, format!("rib.{}: {}", n.key, e.why)))?;
                        let text = info_text(&n.children);
                        match n.key.as_str() {
                            "localhop_security" => {
                                cfg.forwarder.localhop_prefix_registration = true;
                                cfg.forwarder.localhop_security = text;
                            }
                            "localhost_security" => cfg.forwarder.localhost_security = text,
                            _ => cfg.forwarder.prefix_announcement_security = text,
                        }
                    } else if n.key == "readvertise_nlsr" {
                        cfg.forwarder.readvertise_nlsr = yes(n)?;
                    } else if n.key == "auto_prefix_propagate" {
                        for c in &n.children {
                            match c.key.as_str() {
                                "cost" => cfg.forwarder.propagate_cost = value(c, "a number")?,
                                "timeout" => cfg.forwarder.propagate_timeout_ms = value(c, "a number of ms")?,
                                "refresh_interval" | "base_retry_wait" | "max_retry_wait" => {
                                    let s: u64 = value(c, "a number of seconds")?;
                                    let f = &mut cfg.forwarder;
                                    let ms = match c.key.as_str() {
                                        "refresh_interval" => &mut f.propagate_refresh_ms,
                                        "base_retry_wait" => &mut f.propagate_base_retry_ms,
                                        _ => &mut f.propagate_max_retry_ms,
                                    };
                                    *ms = s.saturating_mul(1000);
                                }
                                _ => ignored(c, "rib.auto_prefix_propagate", &mut warnings),
                            }
                        }
                        // NFD signs with the identities of its keychain: so does nexthop.
                        cfg.forwarder.propagate_keychain = true;
                    } else {
                        ignored(n, "rib", &mut warnings);
                    }
                }
            }
            _ => ignored(&top, "", &mut warnings),
        }
    }
    cfg.validate()?;
    Ok((cfg, warnings))
}

/// `authorizations`: its `authorize` blocks, each a `certfile` (`any` or a path, relative to
/// the file's folder: the caller resolves it) and `privileges` (the keys of that block; NFD
/// reads no values there). As in NFD, anything else in the section, an `authorize` without
/// `certfile` or `privileges`, an unknown privilege or an empty section is an error.
fn authorizations(section: &InfoNode) -> Result<Vec<Authorize>, ConfigError> {
    if section.children.is_empty() {
        return Err(invalid(section.line, "authorizations has no authorize"));
    }
    let mut out = Vec::new();
    for a in &section.children {
        if a.key != "authorize" {
            return Err(invalid(a.line, format_args!("{:?} is not permitted under authorizations", a.key)));
        }
        let child = |key: &str| a.children.iter().find(|c| c.key == key);
        let certfile = child("certfile").filter(|c| !c.value.is_empty()).ok_or_else(|| invalid(a.line, "authorize has no certfile"))?;
        let privileges = child("privileges").ok_or_else(|| invalid(a.line, "authorize has no privileges"))?;
        for p in &privileges.children {
            if crate::mgmt::authorization::Module::parse(p.key.as_bytes()).is_none() {
                return Err(invalid(p.line, format_args!("unknown privilege {:?} (faces, fib, cs or strategy-choice)", p.key)));
            }
        }
        out.push(Authorize { certfile: certfile.value.clone(), privileges: privileges.children.iter().map(|p| p.key.clone()).collect() });
    }
    Ok(out)
}

/// The module of nexthop's that does the work of NFD's logging module `nfd_module` (the names
/// of NFD's `NFD_LOG_INIT`), for a level of its own in `forwarder.log_level`; `None` for a
/// module with no counterpart.
fn nexthop_module(nfd_module: &str) -> Option<&'static str> {
    Some(match nfd_module {
        "Forwarder" | "NameTree" | "NameTreeHashtable" | "NameTreeIterator" | "ProcessNackTraits" | "SelfLearningStrategy" => {
            "nexthop_fw::pipeline"
        }
        "DeadNonceList" => "nexthop_fw::table::dead_nonce",
        "ContentStore" | "CsPolicy" => "nexthop_cs",
        "Strategy" | "StrategyChoice" | "BestRouteStrategy" | "MulticastStrategy" | "RandomStrategy" => "nexthop_fw::pipeline::strategy",
        "AsfStrategy" | "AsfProbingModule" => "nexthop_fw::pipeline::strategy::asf",
        "AccessStrategy" => "nexthop_fw::pipeline::strategy::access",
        "LpReliability" => "nexthop_fw::lp::reliability",
        "LpFragmenter" | "LpReassembler" => "nexthop_fw::lp::fragmentation",
        "FaceManager"
        | "FibManager"
        | "StrategyChoiceManager"
        | "CommandAuthenticator"
        | "RibManager"
        | "RibService"
        | "FibUpdater"
        | "Readvertise"
        | "ReadvertiseDestination"
        | "NfdRibReadvertiseDestination" => "nexthop_fw::mgmt",
        "Rib" | "RibEntry" => "nexthop_fw::mgmt::rib",
        "PrivilegeHelper" => "nexthop_fw::sys::privileges",
        "Main" | "Nfd" => "nexthop",
        m if m.ends_with("Factory")
            || m.ends_with("Channel")
            || m.ends_with("Transport")
            || matches!(m, "FaceTable" | "FaceSystem" | "LinkService" | "GenericLinkService" | "NetdevBound") =>
        {
            "nexthop_fw::runtime"
        }
        _ => return None,
    })
}

/// NFD's log level (`NONE`, `ERROR`, `WARN`, `INFO`, `DEBUG`, `TRACE`, `ALL`) as nexthop's.
fn log_level(n: &InfoNode) -> Result<String, ConfigError> {
    Ok(match n.value.to_ascii_uppercase().as_str() {
        "NONE" => "off",
        "ERROR" => "error",
        "WARN" => "warn",
        "INFO" => "info",
        "DEBUG" => "debug",
        "TRACE" | "ALL" => "trace",
        v => return Err(invalid(n.line, format_args!("{} = {v:?}: NONE, ERROR, WARN, INFO, DEBUG, TRACE or ALL", n.key))),
    }
    .into())
}

fn ignored(n: &InfoNode, section: &str, warnings: &mut Vec<String>) {
    let at = if section.is_empty() { n.key.clone() } else { format!("{section}.{}", n.key) };
    warnings.push(format!("line {}: {at}: no nexthop counterpart, ignored", n.line));
}

fn yes(n: &InfoNode) -> Result<bool, ConfigError> {
    match n.value.as_str() {
        "yes" | "true" | "on" => Ok(true),
        "no" | "false" | "off" => Ok(false),
        v => Err(invalid(n.line, format_args!("{} = {v:?}: yes or no", n.key))),
    }
}

fn number<T: std::str::FromStr>(n: &InfoNode) -> Result<T, ConfigError> {
    value(n, "a number in range")
}

fn value<T: std::str::FromStr>(n: &InfoNode, what: &str) -> Result<T, ConfigError> {
    n.value.parse().map_err(|_| invalid(n.line, format_args!("{} = {:?}: not {what}", n.key, n.value)))
}

fn tables(section: &InfoNode, cfg: &mut Config, warnings: &mut Vec<String>) -> Result<(), ConfigError> {
    for n in &section.children {
        match n.key.as_str() {
            "cs_max_packets" => cfg.content_store.capacity = number(n)?,
            "cs_policy" => {
                cfg.content_store.policy = match n.value.as_str() {
                    "lru" => "lru".into(),
                    "priority_fifo" => "priority_fifo".into(),
                    v => return Err(invalid(n.line, format_args!("cs_policy = {v:?}: lru or priority_fifo"))),
                }
            }
            "cs_unsolicited_policy" => cfg.content_store.unsolicited_policy = n.value.clone(),
            "strategy_choice" => {
                cfg.strategy.extend(n.children.iter().map(|c| StaticStrategy { prefix: c.key.clone(), strategy: c.value.clone() }))
            }
            "network_region" => cfg.forwarder.network_regions.extend(n.children.iter().map(|c| c.key.clone())),
            _ => ignored(n, "tables", warnings),
        }
    }
    Ok(())
}

/// A channel's listen address ("" for none) and which IP versions its section enables.
struct Listener {
    addr: String,
    v4: bool,
    v6: bool,
}

/// A channel section's `listen`, `port`, `enable_v4` and `enable_v6` as one listener; any other
/// key not among `own_keys` (those the caller reads itself) is named in a warning.
fn listener(section: &InfoNode, default_port: u16, own_keys: &[&str], warnings: &mut Vec<String>) -> Result<Listener, ConfigError> {
    let (mut listen, mut port, mut v4, mut v6) = (true, default_port, true, true);
    for n in &section.children {
        match n.key.as_str() {
            "listen" => listen = yes(n)?,
            "port" => port = number(n)?,
            "enable_v4" => v4 = yes(n)?,
            "enable_v6" => v6 = yes(n)?,
            k if own_keys.contains(&k) => {}
            _ => ignored(n, &format!("face_system.{}", section.key), warnings),
        }
    }
    let addr = if !listen || !(v4 || v6) {
        String::new()
    } else if !v6 {
        format!("{}:{port}", Ipv4Addr::UNSPECIFIED)
    } else {
        if !v4 {
            warnings.push(format!(
                "line {}: face_system.{}: IPv6 only is not kept: [::]:{port} is dual-stack, IPv4 peers reach it too",
                section.line, section.key
            ));
        }
        format!("[{}]:{port}", Ipv6Addr::UNSPECIFIED)
    };
    Ok(Listener { addr, v4, v6 })
}

/// The rules of a `whitelist` or `blacklist` block ([`crate::face::interface_rule`]): `ifname X`,
/// `ether MAC`, `subnet CIDR` and `*` entries, each checked (an error names its line); other
/// entries are warned about.
fn interface_rules(block: &InfoNode, section: &str, warnings: &mut Vec<String>) -> Result<Vec<String>, ConfigError> {
    let mut rules = Vec::new();
    for entry in &block.children {
        let rule = match entry.key.as_str() {
            "*" => "*".to_string(),
            "ifname" | "ether" | "subnet" => entry.value.clone(),
            _ => {
                ignored(entry, section, warnings);
                continue;
            }
        };
        let parsed = InterfaceRule::parse(&rule).map_err(|e| invalid(entry.line, format_args!("{section}: {e}")))?;
        let wanted = match (entry.key.as_str(), &parsed) {
            ("ifname", InterfaceRule::Name(_)) | ("ether", InterfaceRule::Mac(_)) | ("subnet", InterfaceRule::Subnet(..)) | ("*", _) => {
                None
            }
            ("ifname", _) => Some("an interface name"),
            ("ether", _) => Some("an Ethernet address"),
            _ => Some("a subnet (address/length)"),
        };
        if let Some(wanted) = wanted {
            return Err(invalid(entry.line, format_args!("{section}: {} {rule:?} is not {wanted}", entry.key)));
        }
        rules.push(rule);
    }
    Ok(rules)
}

/// `face_system.tcp.local`: the addresses a TCP face is local between
/// ([`crate::face::local_addresses`]), its `whitelist` (every address without one; none with an
/// empty one) less its `blacklist`, each of `subnet CIDR` and `*` entries, as NFD reads them.
fn tcp_local(local: &InfoNode) -> Result<(Vec<String>, Vec<String>), ConfigError> {
    let (mut include, mut exclude) = (vec!["*".to_string()], Vec::new());
    for block in &local.children {
        let list = match block.key.as_str() {
            "whitelist" => &mut include,
            "blacklist" => &mut exclude,
            _ => return Err(invalid(block.line, format_args!("face_system.tcp.local.{}: whitelist or blacklist", block.key))),
        };
        list.clear();
        for entry in &block.children {
            let rule = match entry.key.as_str() {
                "*" => "*".to_string(),
                "subnet" => entry.value.clone(),
                k => return Err(invalid(entry.line, format_args!("face_system.tcp.local.{}: {k:?} is not subnet or *", block.key))),
            };
            crate::face::local_addresses::LocalAddresses::parse(std::slice::from_ref(&rule), &[])
                .map_err(|e| invalid(entry.line, format_args!("face_system.tcp.local.{}: {e}", block.key)))?;
            list.push(rule);
        }
    }
    Ok((include, exclude))
}

/// A face kind's include and exclude rules from its `whitelist` and `blacklist` blocks: `{ * }`
/// is no rule (the default: every interface); an empty whitelist leaves every interface out.
#[derive(Default)]
struct Lists {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl Lists {
    fn take(&mut self, block: &InfoNode, section: &str, warnings: &mut Vec<String>) -> Result<bool, ConfigError> {
        match block.key.as_str() {
            "whitelist" => {
                let rules = interface_rules(block, &format!("{section}.whitelist"), warnings)?;
                match rules.as_slice() {
                    [] => self.exclude.push("*".into()),
                    [all] if all == "*" => {}
                    _ => self.include.extend(rules),
                }
            }
            "blacklist" => self.exclude.extend(interface_rules(block, &format!("{section}.blacklist"), warnings)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn face_system(section: &InfoNode, cfg: &mut Config, warnings: &mut Vec<String>) -> Result<(), ConfigError> {
    let f = &mut cfg.faces;
    for s in &section.children {
        match s.key.as_str() {
            "general" => {
                for n in &s.children {
                    match n.key.as_str() {
                        "enable_congestion_marking" => f.congestion_marking = yes(n)?,
                        _ => ignored(n, "face_system.general", warnings),
                    }
                }
            }
            "unix" => {
                f.unix = "/run/nfd/nfd.sock".into(); // NFD's default path
                for n in &s.children {
                    match n.key.as_str() {
                        "path" => f.unix = n.value.clone(),
                        _ => ignored(n, "face_system.unix", warnings),
                    }
                }
            }
            "tcp" => {
                f.tcp = listener(s, 6363, &["local"], warnings)?.addr;
                if let Some(local) = s.children.iter().find(|n| n.key == "local") {
                    (f.tcp_local, f.tcp_local_exclude) = tcp_local(local)?;
                }
            }
            "websocket" => f.websocket = listener(s, 9696, &[], warnings)?.addr,
            // NFD parses its rules but makes no faces from them (its issue #3521), and its
            // sample's section is empty: only rules are worth a word.
            "netdev_bound" if s.children.is_empty() => {}
            "netdev_bound" => warnings.push(format!(
                "line {}: face_system.netdev_bound: NFD makes no faces from these rules either (its issue #3521), ignored",
                s.line
            )),
            "udp" => {
                const UDP_KEYS: [&str; 10] = [
                    "idle_timeout",
                    "mcast_ad_hoc",
                    "unicast_mtu",
                    "mcast",
                    "mcast_group",
                    "mcast_port",
                    "mcast_group_v6",
                    "mcast_port_v6",
                    "whitelist",
                    "blacklist",
                ];
                let Listener { addr, v4, v6 } = listener(s, 6363, &UDP_KEYS, warnings)?;
                f.udp = addr;
                let (mut mcast, mut group, mut port, mut group6, mut port6) =
                    (true, Ipv4Addr::new(224, 0, 23, 170), 56363u16, "ff02::1234".parse::<Ipv6Addr>().expect("an address"), 56363u16);
                let mut lists = Lists::default();
                for n in &s.children {
                    if lists.take(n, "face_system.udp", warnings)? {
                        continue;
                    }
                    match n.key.as_str() {
                        "idle_timeout" => f.udp_idle_timeout_ms = number::<u64>(n)?.saturating_mul(1000),
                        "unicast_mtu" => f.udp_mtu = number(n)?,
                        "mcast" => mcast = yes(n)?,
                        "mcast_group" => group = value(n, "an IPv4 address")?,
                        "mcast_port" => port = number(n)?,
                        "mcast_group_v6" => group6 = value(n, "an IPv6 address")?,
                        "mcast_port_v6" => port6 = number(n)?,
                        "mcast_ad_hoc" => f.udp_multicast_ad_hoc = yes(n)?,
                        _ => {} // the listener's keys, or named by `listener`
                    }
                }
                f.udp_multicast_interfaces.clone_from(&lists.include);
                f.udp6_multicast_interfaces = lists.include;
                f.udp_multicast_exclude = lists.exclude;
                f.udp_multicast = if mcast && v4 { format!("{group}:{port}") } else { String::new() };
                f.udp6_multicast = if mcast && v6 { format!("[{group6}]:{port6}") } else { String::new() };
            }
            "ether" => {
                let (mut mcast, mut group) = (true, "01:00:5e:00:17:aa".to_string());
                let mut lists = Lists::default();
                for n in &s.children {
                    if lists.take(n, "face_system.ether", warnings)? {
                        continue;
                    }
                    match n.key.as_str() {
                        "listen" => f.ether_listen = yes(n)?,
                        "mcast" => mcast = yes(n)?,
                        "mcast_group" => group = n.value.clone(),
                        "mcast_ad_hoc" => f.ether_multicast_ad_hoc = yes(n)?,
                        "idle_timeout" => f.ether_idle_timeout_ms = number::<u64>(n)?.saturating_mul(1000),
                        _ => ignored(n, "face_system.ether", warnings),
                    }
                }
                f.ether_interfaces = lists.include;
                f.ether_exclude = lists.exclude;
                f.ether_multicast = if mcast { group } else { String::new() };
            }
            _ => ignored(s, "face_system", warnings),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sections of NFD's sample `nfd.conf` that nexthop reads, in its style (braces on their
    /// own lines, comments), with values changed from the defaults so that each is seen.
    const SAMPLE: &str = r#"
; general section
general
{
  user nobody
  group nogroup
}

log
{
  default_level INFO
  Forwarder DEBUG
  nfd.UdpFactory TRACE
  NoSuchModule DEBUG
}

forwarder
{
  default_hop_limit 32
}

tables
{
  cs_max_packets 1000
  cs_policy priority_fifo
  cs_unsolicited_policy admit-local
  strategy_choice
  {
    /               /localhost/nfd/strategy/best-route
    /localhost      /localhost/nfd/strategy/multicast
    /ndn/broadcast  /localhost/nfd/strategy/multicast
  }
  network_region
  {
    /example/region
  }
}

face_system
{
  general
  {
    enable_congestion_marking no
  }
  unix
  {
    path "/tmp/nfd test.sock"
  }
  tcp
  {
    listen yes
    port 6364
    enable_v4 yes
    enable_v6 no
    local
    {
      whitelist
      {
        subnet 127.0.0.0/8
        subnet 10.0.0.0/8
      }
      blacklist
      {
        subnet 10.9.0.0/16
      }
    }
  }
  udp
  {
    listen yes
    port 6365
    enable_v4 yes
    enable_v6 yes
    idle_timeout 30
    unicast_mtu 8800
    mcast yes
    mcast_port 56364
    mcast_group 224.0.23.171
    mcast_port_v6 56365
    mcast_ad_hoc yes
    mcast_group_v6 ff02::1235
    whitelist
    {
      *
    }
  }
  ether
  {
    listen yes
    idle_timeout 120
    mcast no
    whitelist
    {
      ifname eth1
    }
  }
  websocket
  {
    listen no
  }
}

authorizations
{
  authorize
  {
    certfile certs/operator.ndncert
    privileges
    {
      faces
      strategy-choice
    }
  }
  authorize
  {
    certfile any
    privileges
    {
      fib
    }
  }
}

rib
{
  localhop_security
  {
    trust-anchor { type any }
  }
  auto_prefix_propagate
  {
    cost 15
    base_retry_wait 60
    max_retry_wait 600
  }
  prefix_announcement_validation
  {
    trust-anchor { type any }
  }
  readvertise_nlsr yes
}
"#;

    #[test]
    fn nfds_sample_becomes_a_configuration() {
        let (cfg, warnings) = from_nfd_conf(SAMPLE).unwrap();
        assert_eq!((cfg.content_store.capacity, cfg.content_store.policy.as_str()), (1000, "priority_fifo"));
        assert_eq!(cfg.content_store.unsolicited_policy, "admit-local");
        assert_eq!(cfg.strategy.len(), 3);
        assert_eq!(
            (cfg.strategy[2].prefix.as_str(), cfg.strategy[2].strategy.as_str()),
            ("/ndn/broadcast", "/localhost/nfd/strategy/multicast")
        );
        assert_eq!(cfg.forwarder.network_regions, ["/example/region"]);
        let f = &cfg.faces;
        assert!(!f.congestion_marking);
        assert_eq!(f.unix, "/tmp/nfd test.sock");
        // tcp enables IPv4 only; udp both, one dual-stack listener.
        assert_eq!((f.tcp.as_str(), f.udp.as_str(), f.websocket.as_str()), ("0.0.0.0:6364", "[::]:6365", ""));
        assert_eq!((f.udp_idle_timeout_ms, f.udp_mtu), (30_000, 8800));
        assert_eq!(
            (f.tcp_local.clone(), f.tcp_local_exclude.clone()),
            (vec!["127.0.0.0/8".into(), "10.0.0.0/8".into()], vec!["10.9.0.0/16".into()])
        );
        assert_eq!((f.udp_multicast.as_str(), f.udp6_multicast.as_str()), ("224.0.23.171:56364", "[ff02::1235]:56365"));
        assert_eq!((f.udp_multicast_ad_hoc, f.ether_multicast_ad_hoc), (true, false), "mcast_ad_hoc");
        assert_eq!(f.ether_idle_timeout_ms, 120_000, "ether.idle_timeout");
        assert_eq!((f.ether_listen, f.ether_multicast.as_str(), f.ether_interfaces.clone()), (true, "", vec!["eth1".to_string()]));
        assert!(cfg.forwarder.localhop_prefix_registration);
        let grants: Vec<(&str, Vec<&str>)> =
            cfg.authorize.iter().map(|a| (a.certfile.as_str(), a.privileges.iter().map(String::as_str).collect())).collect();
        assert_eq!(grants, [("certs/operator.ndncert", vec!["faces", "strategy-choice"]), ("any", vec!["fib"])]);
        // What did not carry over is named with its line.
        assert!(cfg.forwarder.log_level.starts_with("info,"), "log.default_level");
        assert_eq!(cfg.forwarder.default_hop_limit, 32, "forwarder.default_hop_limit");
        assert!(cfg.forwarder.propagate_keychain, "rib.auto_prefix_propagate");
        assert!(cfg.forwarder.readvertise_nlsr, "rib.readvertise_nlsr");
        assert!(!from_nfd_conf("rib {\n}\n").unwrap().0.forwarder.readvertise_nlsr, "off without it, as in NFD");
        assert!(cfg.forwarder.prefix_announcement_security.contains("type any"), "rib.prefix_announcement_validation");
        assert_eq!(cfg.forwarder.propagate_cost, 15);
        assert_eq!((cfg.forwarder.propagate_base_retry_ms, cfg.forwarder.propagate_max_retry_ms), (60_000, 600_000));
        assert_eq!((cfg.forwarder.user.as_str(), cfg.forwarder.group.as_str()), ("nobody", "nogroup"), "general");
        assert_eq!(cfg.forwarder.log_level, "info,nexthop_fw::pipeline=debug,nexthop_fw::runtime=trace", "log's modules");
        assert!(crate::conf::config::log_filter_ok(&cfg.forwarder.log_level));
        let expected = [(14, "log.NoSuchModule")];
        for (line, what) in expected {
            assert!(warnings.iter().any(|w| w.starts_with(&format!("line {line}: {what}"))), "{line} {what}: {warnings:#?}");
        }
        // `whitelist { * }` is the default: no warning, every interface.
        assert!(!warnings.iter().any(|w| w.contains("whitelist")), "{warnings:#?}");
        assert!(f.udp_multicast_interfaces.is_empty() && f.udp6_multicast_interfaces.is_empty());
    }

    #[test]
    fn localhop_security_carries_over_as_the_validators_configuration() {
        let (cfg, _) = from_nfd_conf(SAMPLE).unwrap();
        let nodes = parse_info(&cfg.forwarder.localhop_security).unwrap();
        assert_eq!((nodes[0].key.as_str(), nodes[0].children[0].value.as_str()), ("trust-anchor", "any"));
        let bad = "rib\n{\n  localhop_security\n  {\n    rule\n    {\n      for data\n    }\n  }\n}\n";
        let e = from_nfd_conf(bad).unwrap_err().to_string();
        assert!(e.contains("line 5: rib.localhop_security: a rule needs a checker"), "{e}");
        // A trust anchor's file is read when the forwarder starts, relative to nfd.conf's folder.
        let relative =
            "rib\n{\n  localhop_security\n  {\n    trust-anchor\n    {\n      type file\n      file-name keys/root.cert\n    }\n  }\n}\n";
        let (mut cfg, _) = from_nfd_conf(relative).unwrap();
        cfg.resolve_paths(std::path::Path::new("/etc/ndn"));
        let nodes = parse_info(&cfg.forwarder.localhop_security).unwrap();
        assert_eq!(nodes[0].children[1].value, "/etc/ndn/keys/root.cert");
        // localhost_security checks local rib commands; it serves nothing one hop away.
        let (cfg, _) =
            from_nfd_conf("rib\n{\n  localhost_security\n  {\n    trust-anchor\n    {\n      type any\n    }\n  }\n}\n").unwrap();
        assert!(!cfg.forwarder.localhop_prefix_registration && cfg.forwarder.localhop_security.is_empty());
        assert_eq!(parse_info(&cfg.forwarder.localhost_security).unwrap()[0].key, "trust-anchor");
    }

    #[test]
    fn authorizations_are_nfds_or_an_error_naming_the_line() {
        assert!(from_nfd_conf("").unwrap().0.authorize.is_empty(), "no section: no one commands");
        for (bad, what) in [
            ("authorizations\n{\n}\n", "line 1: authorizations has no authorize"),
            ("authorizations\n{\n  grant\n}\n", "line 3: \"grant\" is not permitted"),
            ("authorizations\n{\n  authorize\n  {\n    certfile any\n  }\n}\n", "line 3: authorize has no privileges"),
            ("authorizations\n{\n  authorize\n  {\n    privileges\n    {\n      fib\n    }\n  }\n}\n", "line 3: authorize has no certfile"),
            (
                "authorizations\n{\n  authorize\n  {\n    certfile any\n    privileges\n    {\n      rib\n    }\n  }\n}\n",
                "line 8: unknown privilege",
            ),
        ] {
            let e = from_nfd_conf(bad).unwrap_err().to_string();
            assert!(e.contains(what), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_configuration_prints_as_toml_that_reads_back_the_same() {
        let (cfg, _) = from_nfd_conf(SAMPLE).unwrap();
        let text = cfg.to_toml();
        assert_eq!(Config::parse(&text, std::path::Path::new("printed.toml")).unwrap(), cfg, "{text}");
    }

    #[test]
    fn an_empty_file_makes_no_channel_and_bad_values_name_their_line() {
        let (cfg, warnings) = from_nfd_conf("").unwrap();
        assert_eq!((cfg.faces.unix.as_str(), cfg.faces.tcp.as_str(), cfg.faces.udp.as_str()), ("", "", ""));
        assert!(warnings.is_empty());
        let (cfg, _) = from_nfd_conf("face_system\n{\n  unix\n  {\n  }\n  udp\n  {\n    mcast no\n  }\n}\n").unwrap();
        assert_eq!(
            (cfg.faces.unix.as_str(), cfg.faces.udp.as_str(), cfg.faces.udp_multicast.as_str()),
            ("/run/nfd/nfd.sock", "[::]:6363", "")
        );
        // UDP multicast on the whitelisted interfaces (both IP versions), less the blacklisted;
        // an entry nexthop has no rule for is warned about.
        let (cfg, warnings) = from_nfd_conf(
            "face_system\n{\n  udp\n  {\n    whitelist\n    {\n      ifname eth1\n      ifname wlan*\n      subnet 10.0.0.0/8\n      ether 02:00:00:00:00:01\n      vlan 7\n    }\n    blacklist\n    {\n      ifname wlan9\n      subnet 10.9.0.0/16\n    }\n  }\n  ether\n  {\n    whitelist\n    {\n    }\n  }\n}\n",
        )
        .unwrap();
        let f = &cfg.faces;
        assert_eq!(f.udp_multicast_interfaces, ["eth1", "wlan*", "10.0.0.0/8", "02:00:00:00:00:01"]);
        assert_eq!(f.udp6_multicast_interfaces, f.udp_multicast_interfaces);
        assert_eq!(f.udp_multicast_exclude, ["wlan9", "10.9.0.0/16"]);
        assert!(!f.named_interfaces_required, "ifname eth1 is skipped while eth1 is down, as in NFD");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("line 11: face_system.udp.whitelist.vlan"), "{warnings:?}");
        // An empty whitelist leaves every interface out.
        assert!(f.ether_interfaces.is_empty() && f.ether_exclude == ["*"], "{f:?}");
        cfg.validate().unwrap();
        for (entry, what) in [
            ("subnet 10.0.0.0/40", "line 3: face_system.udp.whitelist: \"10.0.0.0/40\": the prefix length"),
            ("ifname 10.0.0.1", "line 3: face_system.udp.whitelist: ifname \"10.0.0.1\" is not an interface name"),
            ("ether eth0", "line 3: face_system.udp.whitelist: ether \"eth0\" is not an Ethernet address"),
        ] {
            let e = from_nfd_conf(&format!("face_system {{\n udp {{\n  whitelist {{ {entry}\n  }}\n }}\n}}\n")).unwrap_err().to_string();
            assert!(e.contains(what), "{entry}: {e}");
        }
        // netdev_bound: empty as NFD's sample has it, nothing to say; rules, a warning.
        assert!(from_nfd_conf("face_system\n{\n  netdev_bound\n  {\n  }\n}\n").unwrap().1.is_empty());
        let rule = "face_system\n{\n  netdev_bound\n  {\n    rule\n    {\n      remote udp4://192.0.2.1:6363\n    }\n  }\n}\n";
        let (_, warnings) = from_nfd_conf(rule).unwrap();
        assert!(warnings.len() == 1 && warnings[0].starts_with("line 3: face_system.netdev_bound: NFD makes no faces"), "{warnings:?}");
        // IPv6 only becomes the dual-stack listener, with a warning.
        let (cfg, warnings) = from_nfd_conf("face_system\n{\n  tcp\n  {\n    enable_v4 no\n  }\n}\n").unwrap();
        assert_eq!(cfg.faces.tcp, "[::]:6363");
        assert!(warnings.iter().any(|w| w.starts_with("line 3: face_system.tcp: IPv6 only")), "{warnings:?}");
        for (text, what) in [
            ("face_system {\n tcp {\n  port seven\n }\n}\n", "line 3: port = \"seven\""),
            ("face_system {\n udp {\n  listen maybe\n }\n}\n", "line 3: listen = \"maybe\": yes or no"),
            ("tables {\n cs_policy random\n}\n", "line 2: cs_policy"),
            ("tables {\n cs_unsolicited_policy keep-all\n}\n", "unsolicited_policy"),
            ("log {\n default_level LOUD\n}\n", "line 2: default_level = \"LOUD\""),
            (
                "face_system {\n tcp {\n  local {\n   whitelist {\n    ifname eth0\n   }\n  }\n }\n}\n",
                "line 5: face_system.tcp.local.whitelist: \"ifname\"",
            ),
            (
                "face_system {\n tcp {\n  local {\n   blacklist {\n    subnet 10.0.0.0/99\n   }\n  }\n }\n}\n",
                "line 5: face_system.tcp.local.blacklist",
            ),
            ("forwarder {\n default_hop_limit 256\n}\n", "line 2: default_hop_limit = \"256\": not a number from 0 to 255"),
        ] {
            let e = from_nfd_conf(text).unwrap_err().to_string();
            assert!(e.contains(what), "{text:?}: {e}");
        }
    }
}
