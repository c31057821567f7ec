//! AF_PACKET with TPACKET_V3 rings: the fallback port.

pub(crate) mod port;
