//! Where a face leads, as an NFD FaceUri: `unix://`, `tcp4://`, `udp6://`, `ws://`, `ether://[mac]`,
//! `internal://`, `null://`.
//!
//! # Overview
//! [`FaceUri::parse_with`] reads the text and only that: an IPv6 zone given by an interface's
//! name is turned into its index by the function the caller passes, so this module makes no
//! system call (`crate::sys::interfaces::parse_face_uri` passes the host's interfaces, and
//! `crate::sys::interfaces::resolve_face_uri` also looks host names up, as nfdc does).
//! [`FaceUri::parse`] takes zones by number only.

use std::fmt;
use std::net::SocketAddr;

use crate::face::ether::Mac;
use crate::face::FaceScope;

/// Where a face leads, as an NFD FaceUri.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FaceUri {
    /// `unix:///path`.
    Unix(String),
    /// `tcp4://a.b.c.d:port` or `tcp6://[..]:port`.
    Tcp(SocketAddr),
    /// `udp4://a.b.c.d:port` or `udp6://[..]:port`.
    Udp(SocketAddr),
    /// `wsclient://a.b.c.d:port`: a WebSocket client that connected (NFD's name; such faces are
    /// accepted, not created).
    WebSocket(SocketAddr),
    /// `ether://[01:00:5e:00:17:aa]`: an Ethernet address (a unicast face's peer, or a
    /// multicast face's group).
    Ether(Mac),
    /// `internal://` (the management face).
    Internal,
    /// `null://`.
    Null,
}

/// A FaceUri that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad FaceUri {uri:?}: {why}")]
pub struct FaceUriError {
    /// The text.
    pub uri: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl FaceUri {
    /// Parses `unix://…`, `tcp[46]://host:port`, `udp[46]://host:port`, `ws://host:port` (or
    /// `wsclient://`; host an IP address; port 6363 when left out), `ether://[mac]`,
    /// `internal://`, `null://`.
    ///
    /// # Errors
    /// [`FaceUriError`] naming the problem.
    pub fn parse(uri: &str) -> Result<Self, FaceUriError> {
        FaceUri::parse_with(uri, |_| None)
    }

    /// [`FaceUri::parse`], with an IPv6 zone that names an interface (`[fe80::1%eth0]`)
    /// given by the index `index_of` finds for the name.
    ///
    /// # Errors
    /// [`FaceUriError`] naming the problem.
    pub fn parse_with(uri: &str, index_of: impl Fn(&str) -> Option<u32>) -> Result<Self, FaceUriError> {
        let err = |why| FaceUriError { uri: uri.to_string(), why };
        let (scheme, rest) = uri.split_once("://").ok_or_else(|| err("no scheme"))?;
        let rest = &zone_as_index(rest, &index_of).map_err(err)?;
        let addr = |v6: Option<bool>| -> Result<SocketAddr, FaceUriError> {
            let with_port = if rest.parse::<SocketAddr>().is_ok() {
                rest.to_string()
            } else if rest.starts_with('[') || !rest.contains(':') {
                format!("{rest}:6363")
            } else {
                format!("[{rest}]:6363")
            };
            let a: SocketAddr = with_port.parse().map_err(|_| err("host must be an IP address, port a number"))?;
            match v6 {
                Some(true) if !a.is_ipv6() => Err(err("scheme wants an IPv6 address")),
                Some(false) if !a.is_ipv4() => Err(err("scheme wants an IPv4 address")),
                _ => Ok(a),
            }
        };
        match scheme {
            "unix" if !rest.is_empty() => Ok(FaceUri::Unix(rest.to_string())),
            "unix" => Err(err("no path")),
            "tcp" => Ok(FaceUri::Tcp(addr(None)?)),
            "tcp4" => Ok(FaceUri::Tcp(addr(Some(false))?)),
            "tcp6" => Ok(FaceUri::Tcp(addr(Some(true))?)),
            "udp" => Ok(FaceUri::Udp(addr(None)?)),
            "udp4" => Ok(FaceUri::Udp(addr(Some(false))?)),
            "udp6" => Ok(FaceUri::Udp(addr(Some(true))?)),
            "ws" | "wsclient" => Ok(FaceUri::WebSocket(addr(None)?)),
            "ether" => rest
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .and_then(Mac::parse)
                .map(FaceUri::Ether)
                .ok_or_else(|| err("host must be an Ethernet address in brackets")),
            "internal" => Ok(FaceUri::Internal),
            "null" => Ok(FaceUri::Null),
            _ => Err(err("scheme must be unix, tcp4, tcp6, udp4, udp6, ws, ether, internal or null")),
        }
    }

    /// The scope a face to this place has.
    pub fn scope(&self) -> FaceScope {
        match self {
            FaceUri::Unix(_) | FaceUri::Internal | FaceUri::Null => FaceScope::Local,
            // As NFD: a UDP face is never local, even to a loopback address (it is how
            // forwarders reach each other; apps on this host use the Unix socket or TCP).
            FaceUri::Udp(_) | FaceUri::Ether(_) => FaceScope::NonLocal,
            FaceUri::Tcp(a) | FaceUri::WebSocket(a) if a.ip().is_loopback() => FaceScope::Local,
            FaceUri::Tcp(_) | FaceUri::WebSocket(_) => FaceScope::NonLocal,
        }
    }
}

/// `host_port` with an IPv6 zone that names its interface (`[fe80::1%eth0]:6363`, or
/// `%25eth0` URI-escaped, as NFD writes link-local FaceUris) given by the interface's index, the
/// form a socket address parses (`[fe80::1%2]:6363`); other text is returned as it is.
fn zone_as_index(host_port: &str, index_of: &dyn Fn(&str) -> Option<u32>) -> Result<String, &'static str> {
    let Some((before, zone_on)) = host_port.split_once('%') else { return Ok(host_port.to_string()) };
    let end = zone_on.find(']').ok_or("an IPv6 zone goes inside the brackets")?;
    let (zone, after) = zone_on.split_at(end);
    let all_digits = |z: &str| !z.is_empty() && z.bytes().all(|b| b.is_ascii_digit());
    let zone = match zone.strip_prefix("25") {
        // `%25` escapes the `%` of a zone that is a name (a number is an index as it is).
        Some(name) if !all_digits(zone) => name,
        _ => zone,
    };
    let index = if all_digits(zone) {
        zone.to_string()
    } else {
        index_of(zone).ok_or("the IPv6 zone names no interface of this host")?.to_string()
    };
    Ok(format!("{before}%{index}{after}"))
}

impl fmt::Display for FaceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = |a: &SocketAddr| if a.is_ipv4() { '4' } else { '6' };
        match self {
            FaceUri::Unix(p) => write!(f, "unix://{p}"),
            FaceUri::Tcp(a) => write!(f, "tcp{}://{a}", v(a)),
            FaceUri::Udp(a) => write!(f, "udp{}://{a}", v(a)),
            FaceUri::WebSocket(a) => write!(f, "wsclient://{a}"),
            FaceUri::Ether(m) => write!(f, "ether://[{m}]"),
            FaceUri::Internal => write!(f, "internal://"),
            FaceUri::Null => write!(f, "null://"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        for s in [
            "unix:///run/nfd/nfd.sock",
            "tcp4://127.0.0.1:6363",
            "udp6://[::1]:6363",
            "ether://[01:00:5e:00:17:aa]",
            "internal://",
            "null://",
        ] {
            assert_eq!(FaceUri::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(FaceUri::parse("udp4://10.0.0.1").unwrap(), FaceUri::Udp("10.0.0.1:6363".parse().unwrap()));
        assert_eq!(FaceUri::parse("udp6://::1").unwrap(), FaceUri::Udp("[::1]:6363".parse().unwrap()));
    }

    #[test]
    fn bad_uris_are_errors() {
        for s in [
            "",
            "udp4://",
            "udp4://host.example:6363",
            "udp6://1.2.3.4:1",
            "ether://aa",
            "ether://01:00:5e:00:17:aa",
            "ether://[01:00:5e:00:17]",
            "unix://",
            "tcp4://1.2.3.4:99999",
            "udp6://[fe80::1%no-such-interface]:6363",
            "udp6://[fe80::1%lo]:6363",
            "udp6://[fe80::1]%lo:6363",
        ] {
            assert!(FaceUri::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn loopback_is_local() {
        assert_eq!(FaceUri::parse("tcp4://127.0.0.1:1").unwrap().scope(), FaceScope::Local);
        assert_eq!(FaceUri::parse("udp4://10.1.1.1:1").unwrap().scope(), FaceScope::NonLocal);
        assert_eq!(FaceUri::parse("udp4://127.0.0.1:1").unwrap().scope(), FaceScope::NonLocal);
    }
}
