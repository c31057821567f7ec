//! AF_XDP: the sockets, their rings, and the port that joins them to an interface.

pub(crate) mod port;
pub(crate) mod ring;
pub(crate) mod socket;
