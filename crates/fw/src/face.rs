//! Faces as the forwarding core sees them: an id, a scope and how it came to be. The sockets
//! behind them live in `runtime`; the core only names faces.
//!
//! Face ids follow NFD: 0 is never a face, 1 is the management face (`internal://`), 255 the
//! null face, and faces with sockets count up from 256.

use std::fmt;
use std::net::SocketAddr;

/// A face's id (NFD's FaceId).
pub type FaceId = u64;

/// The management face: Interests to `/localhost/nfd` go there and its answers come from it.
pub const MANAGEMENT_FACE: FaceId = 1;

/// The first id given to a face with a socket.
pub const FIRST_FACE_ID: FaceId = 256;

/// Face flag (FaceStatus, faces/create and faces/update): congestion marking is on (NFD's
/// CongestionMarkingEnabled, bit 2).
pub const FLAG_CONGESTION_MARKING: u64 = 4;
/// Face flag: NDNLPv2 link reliability is on (NFD's LpReliabilityEnabled, bit 1).
pub const FLAG_LP_RELIABILITY: u64 = 2;

/// Whether a face reaches only this host (`/localhost` packets may cross it) or the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaceScope {
    /// Unix socket or loopback peer.
    Local,
    /// Anything else.
    NonLocal,
}

impl FaceScope {
    /// NFD's FaceScope code.
    pub fn code(self) -> u64 {
        match self {
            FaceScope::NonLocal => 0,
            FaceScope::Local => 1,
        }
    }
}

/// How many nodes a face's link reaches (NFD's LinkType): it decides how a repeated nonce is
/// taken, whether Nacks are sent, and whether a packet may leave where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LinkType {
    /// One peer (a stream, a unicast datagram peer): the same nonce again from it is a
    /// retransmission, a loop is Nacked.
    #[default]
    PointToPoint,
    /// A LAN's multicast group: the same nonce again is a loop, dropped without a Nack, and no
    /// Nack is ever sent on it.
    MultiAccess,
    /// A multicast group on a wireless medium where neighbours may not hear each other: as
    /// multi-access, and a packet may leave on the face it came from.
    AdHoc,
}

impl LinkType {
    /// NFD's LinkType code.
    pub fn code(self) -> u64 {
        match self {
            LinkType::PointToPoint => 0,
            LinkType::MultiAccess => 1,
            LinkType::AdHoc => 2,
        }
    }
}

/// How long a face lives (NFD's FacePersistency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Persistency {
    /// Made by management or configuration; closed on a socket error.
    Persistent,
    /// Made because a peer showed up (an accepted stream, a datagram from a new endpoint);
    /// closed when the peer goes away or falls idle.
    OnDemand,
    /// Made by management or configuration; kept through socket errors.
    Permanent,
}

impl Persistency {
    /// NFD's FacePersistency code.
    pub fn code(self) -> u64 {
        match self {
            Persistency::Persistent => 0,
            Persistency::OnDemand => 1,
            Persistency::Permanent => 2,
        }
    }

    /// From NFD's code.
    pub fn from_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(Persistency::Persistent),
            1 => Some(Persistency::OnDemand),
            2 => Some(Persistency::Permanent),
            _ => None,
        }
    }

    /// NFD's name for it (`nfdc`'s): `persistent`, `on-demand` or `permanent`.
    pub fn name(self) -> &'static str {
        match self {
            Persistency::Persistent => "persistent",
            Persistency::OnDemand => "on-demand",
            Persistency::Permanent => "permanent",
        }
    }

    /// From its name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Persistency::Persistent, Persistency::OnDemand, Persistency::Permanent].into_iter().find(|p| p.name() == name)
    }
}

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
    Ether(crate::ether::Mac),
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
        let err = |why| FaceUriError { uri: uri.to_string(), why };
        let (scheme, rest) = uri.split_once("://").ok_or_else(|| err("no scheme"))?;
        let rest = &zone_as_index(rest).map_err(err)?;
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
                .and_then(crate::ether::Mac::parse)
                .map(FaceUri::Ether)
                .ok_or_else(|| err("host must be an Ethernet address in brackets")),
            "internal" => Ok(FaceUri::Internal),
            "null" => Ok(FaceUri::Null),
            _ => Err(err("scheme must be unix, tcp4, tcp6, udp4, udp6, ws, ether, internal or null")),
        }
    }

    /// [`FaceUri::parse`], with a host name where an IP address goes (`udp4://hub.example.net`,
    /// `tcp://localhost:6363`) looked up as nfdc canonizes a FaceUri before it asks for a
    /// face (NFD itself takes addresses only): the first address the resolver gives of the
    /// scheme's family — IPv4 for `tcp4`/`udp4`, IPv6 for `tcp6`/`udp6`, either for `tcp`,
    /// `udp` and `ws`. This blocks while the name is looked up: for operators' tools and
    /// configuration, not for the data plane.
    ///
    /// # Errors
    /// [`FaceUriError`]: what [`FaceUri::parse`] refuses, or a name with no address of that
    /// family.
    pub fn resolve(uri: &str) -> Result<Self, FaceUriError> {
        let parsed = FaceUri::parse(uri);
        let err = |why| FaceUriError { uri: uri.to_string(), why };
        let Some((scheme, rest)) = uri.split_once("://") else { return parsed };
        let family = match scheme {
            "tcp4" | "udp4" => Some(false),
            "tcp6" | "udp6" => Some(true),
            "tcp" | "udp" | "ws" | "wsclient" => None,
            _ => return parsed,
        };
        // Only a name, with a port or not, is looked up: an address (an IPv6 one bracketed or
        // bare) parses, or fails, as it is.
        if parsed.is_ok() || rest.contains(['[', ']', '/']) || rest.matches(':').count() > 1 {
            return parsed;
        }
        let (host, port) = match rest.split_once(':') {
            Some((host, port)) => (host, port.parse::<u16>().map_err(|_| err("port must be a number"))?),
            None => (rest, 6363),
        };
        if host.is_empty() {
            return parsed;
        }
        let addrs = std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map_err(|_| err("host name not found"))?;
        let addr = addrs
            .into_iter()
            .find(|a| family.is_none_or(|v6| a.is_ipv6() == v6))
            .ok_or_else(|| err("host name has no address of the scheme's IP version"))?;
        let canonical = format!("{scheme}://{}", SocketAddr::new(addr.ip(), port));
        FaceUri::parse(&canonical).map_err(|e| FaceUriError { uri: uri.to_string(), why: e.why })
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
fn zone_as_index(host_port: &str) -> Result<String, &'static str> {
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
        crate::interfaces::index_of(zone).ok_or("the IPv6 zone names no interface of this host")?.to_string()
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
    fn host_names_are_resolved_by_the_schemes_ip_version() {
        // `localhost` is in every /etc/hosts (as 127.0.0.1; as ::1 where the host has IPv6).
        assert_eq!(FaceUri::resolve("udp4://localhost").unwrap(), FaceUri::parse("udp4://127.0.0.1:6363").unwrap());
        assert_eq!(FaceUri::resolve("tcp4://localhost:7000").unwrap(), FaceUri::parse("tcp4://127.0.0.1:7000").unwrap());
        let any = FaceUri::resolve("tcp://localhost:7000").unwrap();
        assert!(matches!(any, FaceUri::Tcp(a) if a.ip().is_loopback() && a.port() == 7000), "{any}");
        // Addresses, and the other schemes, as `parse` takes them.
        assert_eq!(FaceUri::resolve("udp6://[::1]:9").unwrap(), FaceUri::parse("udp6://[::1]:9").unwrap());
        assert_eq!(FaceUri::resolve("unix:///run/x.sock").unwrap(), FaceUri::Unix("/run/x.sock".into()));
        // Refused, naming why.
        let why = |uri: &str| FaceUri::resolve(uri).unwrap_err().why;
        assert_eq!(why("udp4://no-such-host.invalid"), "host name not found");
        assert_eq!(why("udp4://localhost:http"), "port must be a number");
        assert_eq!(why("ether://localhost"), "host must be an Ethernet address in brackets");
        assert_eq!(why("udp4://[::1]"), "scheme wants an IPv4 address");
    }

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
            "udp6://[fe80::1]%lo:6363",
        ] {
            assert!(FaceUri::parse(s).is_err(), "{s}");
        }
    }

    /// A link-local address's zone may name its interface (`%lo`, or `%25lo` as NFD writes
    /// it): the face's address has the interface's index, as a number zone gives it.
    #[test]
    fn an_ipv6_zone_names_an_interface_or_its_index() {
        let lo = crate::interfaces::index_of("lo").expect("a loopback interface");
        let want = FaceUri::Udp(std::net::SocketAddrV6::new("fe80::1".parse().unwrap(), 6363, 0, lo).into());
        for uri in ["udp6://[fe80::1%lo]:6363", "udp6://[fe80::1%25lo]:6363", &format!("udp6://[fe80::1%{lo}]:6363"), "udp6://[fe80::1%lo]"]
        {
            assert_eq!(FaceUri::parse(uri).unwrap(), want, "{uri}");
        }
        assert_eq!(FaceUri::parse(&want.to_string()).unwrap(), want, "{want} reads back");
    }

    #[test]
    fn loopback_is_local() {
        assert_eq!(FaceUri::parse("tcp4://127.0.0.1:1").unwrap().scope(), FaceScope::Local);
        assert_eq!(FaceUri::parse("udp4://10.1.1.1:1").unwrap().scope(), FaceScope::NonLocal);
        assert_eq!(FaceUri::parse("udp4://127.0.0.1:1").unwrap().scope(), FaceScope::NonLocal);
    }
}
