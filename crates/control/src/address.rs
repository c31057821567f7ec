//! Where a control channel listens: `unix:PATH` (a Unix socket: it crosses network
//! namespaces, so a controller reaches switches that each run in their own) or `HOST:PORT`
//! (TCP), as gRPC's own clients name them (Python's `grpc.insecure_channel("unix:/path")`).

use std::net::SocketAddr;
use std::path::PathBuf;

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

/// A control channel's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlAddress {
    /// A Unix socket.
    Unix(PathBuf),
    /// TCP.
    Tcp(SocketAddr),
}

/// An address that is neither `unix:PATH` nor `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a control address (unix:PATH or IP:PORT)")]
pub struct BadAddress(pub String);

impl std::str::FromStr for ControlAddress {
    type Err = BadAddress;

    fn from_str(s: &str) -> Result<Self, BadAddress> {
        match s.strip_prefix("unix:") {
            Some(path) if !path.is_empty() => Ok(ControlAddress::Unix(PathBuf::from(path))),
            Some(_) => Err(BadAddress(s.to_string())),
            None => s.parse().map(ControlAddress::Tcp).map_err(|_| BadAddress(s.to_string())),
        }
    }
}

impl std::fmt::Display for ControlAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ControlAddress::Unix(p) => write!(f, "unix:{}", p.display()),
            ControlAddress::Tcp(a) => write!(f, "{a}"),
        }
    }
}

impl ControlAddress {
    /// A gRPC channel to it (connected lazily: the first call connects, and a call fails while
    /// nothing listens).
    pub fn channel(&self) -> Channel {
        match self {
            ControlAddress::Tcp(a) => Endpoint::from_shared(format!("http://{a}")).expect("an IP address makes a URI").connect_lazy(),
            ControlAddress::Unix(path) => {
                let path = path.clone();
                // The URI is not used: the connector opens the socket.
                Endpoint::from_static("http://switch.invalid").connect_with_connector_lazy(tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move { Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(path).await?)) }
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_print_back() {
        for text in ["unix:/run/nexthop/s1.sock", "127.0.0.1:50051", "[::1]:7"] {
            assert_eq!(text.parse::<ControlAddress>().unwrap().to_string(), text);
        }
        for bad in ["unix:", "localhost", "s1.sock", ""] {
            assert_eq!(bad.parse::<ControlAddress>(), Err(BadAddress(bad.to_string())));
        }
    }
}
