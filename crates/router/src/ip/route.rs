//! What a route is to the router: a [`Prefix`] of either family and the [`Via`] it forwards to
//! (a port and a gateway, a port's own subnet, the router itself, or nowhere).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use nexthop_lookup::ip::IpError;

/// A port of the pipeline: an index its port layer maps to an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Port(pub u32);

/// An IPv4 or IPv6 prefix, its host bits zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    /// An IPv4 prefix.
    V4 {
        /// Its address bits.
        addr: u32,
        /// Its length, 0..=32.
        len: u8,
    },
    /// An IPv6 prefix.
    V6 {
        /// Its address bits.
        addr: u128,
        /// Its length, 0..=128.
        len: u8,
    },
}

impl Prefix {
    /// The prefix `addr/len`.
    ///
    /// # Errors
    /// [`RouteError::Table`] with [`IpError::LengthTooLong`] or [`IpError::HostBitsSet`].
    pub fn new(addr: IpAddr, len: u8) -> Result<Prefix, RouteError> {
        let (bits, max) = match addr {
            IpAddr::V4(a) => (u128::from(u32::from(a)) << 96, 32),
            IpAddr::V6(a) => (u128::from(a), 128),
        };
        if len > max {
            return Err(RouteError::Table(IpError::LengthTooLong { len, max }));
        }
        if len < 128 && bits << len != 0 {
            return Err(RouteError::Table(IpError::HostBitsSet { len }));
        }
        Ok(match addr {
            IpAddr::V4(a) => Prefix::V4 { addr: a.into(), len },
            IpAddr::V6(a) => Prefix::V6 { addr: a.into(), len },
        })
    }

    /// The prefix's length in bits.
    pub fn bits(self) -> u8 {
        match self {
            Prefix::V4 { len, .. } | Prefix::V6 { len, .. } => len,
        }
    }

    /// Whether the prefix is a default route (length 0).
    pub fn is_default(self) -> bool {
        self.bits() == 0
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Prefix::V4 { addr, len } => write!(f, "{}/{len}", Ipv4Addr::from(addr)),
            Prefix::V6 { addr, len } => write!(f, "{}/{len}", Ipv6Addr::from(addr)),
        }
    }
}

impl FromStr for Prefix {
    type Err = RouteError;

    /// `address/length`, or an address alone (a host route).
    fn from_str(s: &str) -> Result<Prefix, RouteError> {
        let bad = || RouteError::BadPrefix(s.to_string());
        let (addr, len) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let len = match len {
            Some(l) => l.parse::<u8>().map_err(|_| bad())?,
            None if addr.is_ipv4() => 32,
            None => 128,
        };
        Prefix::new(addr, len)
    }
}

/// Where a route sends what it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    /// Through a gateway reached on a port.
    Gateway {
        /// The port.
        port: Port,
        /// The gateway's address (its link-layer address from the neighbour table).
        addr: IpAddr,
    },
    /// Onto a port's own subnet: the destination is the neighbour.
    Connected(Port),
    /// To the router itself (the kernel's local routes): the kernel's.
    Local,
    /// Nowhere, silently (a blackhole route).
    Blackhole,
    /// Nowhere, with an ICMP error (unreachable and prohibit routes): the kernel sends it.
    Unreachable,
    /// Out of an interface that is not one of the pipeline's: the kernel forwards it.
    Elsewhere,
}

impl Via {
    /// The port the route leaves by, if it leaves.
    pub fn port(self) -> Option<Port> {
        match self {
            Via::Gateway { port, .. } | Via::Connected(port) => Some(port),
            Via::Local | Via::Blackhole | Via::Unreachable | Via::Elsewhere => None,
        }
    }
}

/// Why a route change was refused; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// Text that is not `address/length`.
    #[error("{0:?} is not an address/length prefix")]
    BadPrefix(String),
    /// The tables refused it (a length too long, host bits set, an IPv6 route expanding too far).
    #[error(transparent)]
    Table(#[from] IpError),
    /// Removing a route that is not installed.
    #[error("no route {0} is installed")]
    NoSuchRoute(Prefix),
    /// More distinct next hops than the tables can name.
    #[error("more than {0} distinct next hops")]
    TooManyNextHops(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_parse_print_and_refuse_host_bits() {
        for s in ["10.0.0.0/8", "0.0.0.0/0", "192.0.2.1/32", "2001:db8::/32", "::/0", "2001:db8::1/128"] {
            assert_eq!(s.parse::<Prefix>().unwrap().to_string(), s);
        }
        assert_eq!("192.0.2.1".parse::<Prefix>().unwrap().bits(), 32);
        assert_eq!("10.0.0.1/8".parse::<Prefix>(), Err(RouteError::Table(IpError::HostBitsSet { len: 8 })));
        assert_eq!("10.0.0.0/33".parse::<Prefix>(), Err(RouteError::Table(IpError::LengthTooLong { len: 33, max: 32 })));
        assert_eq!("2001:db8::1/64".parse::<Prefix>(), Err(RouteError::Table(IpError::HostBitsSet { len: 64 })));
        for bad in ["", "10.0.0.0/", "10.0.0/8", "x/8", "10.0.0.0/-1", "10.0.0.0/8/8"] {
            assert!(matches!(bad.parse::<Prefix>(), Err(RouteError::BadPrefix(_))), "{bad:?}");
        }
    }
}
