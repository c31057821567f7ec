//! A TagNet host's one link to its router: an Ethernet interface (an AF_PACKET port of
//! `nexthop-io` taking TagNet's EtherType only, so the host's own IP traffic stays with its
//! kernel) or a UDP tunnel. What `nexthop tag` sends and receives through.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

use nexthop_io::{Backend, Frame, PortConfig, PortError, PortId, PortSet, MAX_FRAME_DATA};

use super::packet::{ether_header, in_frame, ETHERTYPE};
use super::ports::Tunnel;

/// Frames in a host link's pool.
const POOL_FRAMES: u32 = 1024;

/// A host's link.
#[derive(Debug)]
pub enum HostLink {
    /// An Ethernet interface.
    Ethernet {
        /// Its port set (one port).
        set: PortSet,
        /// The port.
        port: PortId,
        /// The interface's address, the source of what the host sends.
        mac: [u8; 6],
    },
    /// A UDP tunnel.
    Udp(UdpSocket),
}

impl HostLink {
    /// The link on Ethernet interface `interface`.
    ///
    /// # Errors
    /// The port could not open.
    pub fn ethernet(interface: &str) -> Result<HostLink, PortError> {
        let mut set = PortSet::new(POOL_FRAMES)?;
        let mut pc = PortConfig::new(interface);
        pc.backend = Some(Backend::AfPacket);
        pc.ethertypes = vec![ETHERTYPE];
        let port = set.open(pc)?;
        let mac = set.info(port).interface.mac;
        Ok(HostLink::Ethernet { set, port, mac })
    }

    /// The link through tunnel `t`.
    ///
    /// # Errors
    /// The socket could not be bound or connected.
    pub fn udp(t: Tunnel) -> Result<HostLink, PortError> {
        let failed = |e| PortError::os(format!("the tunnel {} → {}", t.local, t.remote), e);
        let s = UdpSocket::bind(t.local).map_err(failed)?;
        s.connect(t.remote).map_err(failed)?;
        s.set_nonblocking(true).map_err(failed)?;
        Ok(HostLink::Udp(s))
    }

    /// Sends one TagNet packet; whether the link took it.
    pub fn send(&mut self, packet: &[u8]) -> bool {
        match self {
            HostLink::Ethernet { set, port, mac } => {
                let mut frame = ether_header(*mac);
                frame.extend_from_slice(packet);
                let Some(f) = set.pool().alloc_copy(&frame) else { return false };
                let sent = set.transmit(*port, f).is_ok();
                set.flush();
                sent
            }
            HostLink::Udp(s) => s.send(packet).is_ok(),
        }
    }

    /// Waits up to `timeout` for packets; appends the TagNet packets that came to `out`.
    pub fn receive(&mut self, timeout: Duration, out: &mut Vec<Vec<u8>>) {
        match self {
            HostLink::Ethernet { set, port, .. } => {
                let mut frames: Vec<Frame> = Vec::new();
                if set.receive(*port, &mut frames, 64) == 0 {
                    set.wait(timeout);
                    set.receive(*port, &mut frames, 64);
                }
                for f in frames {
                    out.extend(in_frame(set.pool_ref().bytes(&f)).map(<[u8]>::to_vec));
                    set.pool().free(f);
                }
                set.flush();
                set.maintain();
            }
            HostLink::Udp(s) => {
                let mut buf = vec![0u8; MAX_FRAME_DATA as usize];
                let mut drain = |out: &mut Vec<Vec<u8>>| {
                    let before = out.len();
                    while let Ok(n) = s.recv(&mut buf) {
                        out.push(buf[..n].to_vec());
                    }
                    out.len() > before
                };
                if !drain(out) && nexthop_io::readable(&[s.as_raw_fd()], timeout) {
                    drain(out);
                }
            }
        }
    }
}
