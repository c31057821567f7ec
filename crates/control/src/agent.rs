//! The switch's end of the control channel: a gRPC server (`nexthop.switch.v1.Switch`) on a
//! thread of its own, and the calls it hands to the switch's thread.
//!
//! # Overview
//! - [`start`] binds the address and serves it on a thread with its own (single-threaded) tokio
//!   runtime. Each call is checked there (a MAC of 6 bytes, a oneof that is set), then handed to
//!   the switch's thread as a [`Call`] and answered when that thread has done it.
//! - The switch's thread calls [`Agent::serve`] between batches: it answers every call waiting,
//!   so a FIB changes only between batches, and [`Agent::publish`] with the hosts the batch
//!   reported, which every `StreamPacketIns` stream gets.
//! - A refusal is a gRPC status: `FAILED_PRECONDITION` for a patch of another structure or
//!   version and for a write to a controller's FIB, `INVALID_ARGUMENT` for bytes or values that
//!   do not fit, `NOT_FOUND` for a host not there to delete; the FIB stays as it was.

use std::pin::Pin;
use std::sync::mpsc;

use nexthop_lookup::flat::{FlatError, OthelloQuery};
use nexthop_router::l2::ports::PortSwitch;
use nexthop_router::l2::{DropReason, PacketIn, PortRole};
use tokio::sync::{broadcast, oneshot};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use crate::address::ControlAddress;
use crate::pb;
use crate::pb::switch_server::{Switch, SwitchServer};
use crate::switch_fib::{patch_from_cells, EntryChange, FibCell, FibError, FibState, PushedDelta, SwitchFib, CHECKSUM_BITS, PORT_BITS};

/// What a call asks of the switch's thread.
#[derive(Debug)]
pub enum Ask {
    /// Its ports and FIB.
    Info,
    /// New port roles.
    SetPorts(Vec<PortRole>),
    /// Hosts written into its own FIB.
    Write(Vec<EntryChange>),
    /// A controller's change.
    Push(PushedDelta),
    /// Its counters.
    Counters,
}

/// What the switch's thread answers.
#[derive(Debug)]
pub enum Answer {
    /// To [`Ask::Info`].
    Info(pb::SwitchInfo),
    /// To [`Ask::Write`] and [`Ask::Push`]: the FIB after it.
    Fib(FibState),
    /// To [`Ask::SetPorts`].
    PortsSet,
    /// To [`Ask::Counters`].
    Counters(pb::Counters),
}

/// One call waiting for the switch's thread.
#[derive(Debug)]
pub struct Call {
    /// What it asks.
    pub ask: Ask,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Result<Answer, Status>>,
}

/// The FIB a switch under this channel forwards by.
pub type Fib = OthelloQuery<FibCell>;

/// The switch thread's end: the calls waiting, the packet-in streams.
#[derive(Debug)]
pub struct Agent {
    name: String,
    interfaces: Vec<String>,
    calls: mpsc::Receiver<Call>,
    packet_ins: broadcast::Sender<pb::PacketIn>,
}

/// The server's thread; the server stops when this is dropped (or [`AgentServer::stop`]).
#[derive(Debug)]
pub struct AgentServer {
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    address: ControlAddress,
}

/// Packet-ins a stream may fall behind by before it misses some.
const PACKET_IN_BACKLOG: usize = 4096;

/// Serves the control channel of switch `name` (its ports: `interfaces`) on `address`; the
/// switch's thread answers through the [`Agent`]. A stale Unix socket file is replaced.
///
/// # Errors
/// The address could not be bound.
pub fn start(address: &ControlAddress, name: &str, interfaces: Vec<String>) -> std::io::Result<(Agent, AgentServer)> {
    let (calls_in, calls) = mpsc::channel();
    let (packet_ins, _) = broadcast::channel(PACKET_IN_BACKLOG);
    let service = Service { calls: calls_in, packet_ins: packet_ins.clone() };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (shutdown, stopped) = oneshot::channel::<()>();
    let server = tonic::transport::Server::builder().add_service(
        SwitchServer::new(service)
            .max_decoding_message_size(crate::controller::session::MAX_MESSAGE)
            .max_encoding_message_size(crate::controller::session::MAX_MESSAGE),
    );
    let serving: Pin<Box<dyn std::future::Future<Output = Result<(), tonic::transport::Error>> + Send>> = match address {
        ControlAddress::Unix(path) => {
            if std::fs::metadata(path).is_ok_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_socket()
            }) {
                std::fs::remove_file(path)?;
            }
            let listener = runtime.block_on(async { tokio::net::UnixListener::bind(path) })?;
            Box::pin(server.serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener)))
        }
        ControlAddress::Tcp(a) => {
            let listener = runtime.block_on(tokio::net::TcpListener::bind(a))?;
            Box::pin(server.serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)))
        }
    };
    let thread = std::thread::Builder::new().name("nexthop-control".into()).spawn(move || {
        // Stopping does not wait for clients to hang up (a controller's packet-in stream
        // never does): the runtime, dropped, closes their connections.
        let served = runtime.block_on(async {
            tokio::select! {
                r = serving => r,
                _ = stopped => Ok(()),
            }
        });
        if let Err(e) = served {
            tracing::warn!("the control channel stopped: {e}");
        }
    })?;
    let agent = Agent { name: name.to_string(), interfaces, calls, packet_ins };
    Ok((agent, AgentServer { shutdown: Some(shutdown), thread: Some(thread), address: address.clone() }))
}

impl AgentServer {
    /// Stops serving, closing the clients' connections, and removes a Unix socket.
    pub fn stop(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let ControlAddress::Unix(p) = &self.address {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for AgentServer {
    fn drop(&mut self) {
        self.shut();
    }
}

impl Agent {
    /// Answers every call waiting (on the switch's thread, between batches); the calls done.
    pub fn serve(&self, switch: &mut PortSwitch<Fib>, fib: &mut SwitchFib) -> usize {
        let mut done = 0;
        while let Ok(call) = self.calls.try_recv() {
            let answer = self.answer(call.ask, switch, fib);
            let _ = call.reply.send(answer);
            done += 1;
        }
        done
    }

    fn answer(&self, ask: Ask, switch: &mut PortSwitch<Fib>, fib: &mut SwitchFib) -> Result<Answer, Status> {
        Ok(match ask {
            Ask::Info => Answer::Info(self.info(switch, fib)),
            Ask::SetPorts(roles) => {
                switch.switch_mut().set_ports(&roles).map_err(|e| Status::invalid_argument(e.to_string()))?;
                Answer::PortsSet
            }
            Ask::Write(changes) => Answer::Fib(fib.write(switch.switch_mut().fib_mut(), &changes).map_err(status)?),
            Ask::Push(delta) => Answer::Fib(fib.push(switch.switch_mut().fib_mut(), delta).map_err(status)?),
            Ask::Counters => {
                let (c, io) = (switch.switch().counters(), switch.io_counters());
                let mut drops: Vec<pb::Drop> =
                    DropReason::ALL.iter().map(|&d| pb::Drop { reason: d.name().to_string(), frames: c.dropped(d) }).collect();
                drops.push(pb::Drop { reason: "transmit".into(), frames: io.transmit_drops });
                drops.push(pb::Drop { reason: "no-frame-for-copy".into(), frames: io.no_frame_for_copy });
                Answer::Counters(pb::Counters {
                    forwarded: c.forwarded,
                    flooded: c.flooded,
                    drops,
                    packet_ins: c.packet_ins,
                    deltas_applied: fib.applied,
                    deltas_refused: fib.refused,
                })
            }
        })
    }

    fn info(&self, switch: &PortSwitch<Fib>, fib: &SwitchFib) -> pb::SwitchInfo {
        let state = fib.state(switch.switch().fib());
        let ports = (switch.switch().ports().iter().zip(&self.interfaces).enumerate())
            .map(|(i, (r, n))| pb::Port { index: i as u32, name: n.clone(), flood: r.flood, edge: r.edge })
            .collect();
        pb::SwitchInfo {
            name: self.name.clone(),
            ports,
            structure: state.structure,
            version: state.version,
            cell_bits: FibCell::BITS,
            port_bits: PORT_BITS,
            checksum_bits: CHECKSUM_BITS,
            hosts: state.hosts.unwrap_or(0) as u64,
            controlled: fib.controlled(),
        }
    }

    /// Sends the hosts a batch reported to every packet-in stream.
    pub fn publish(&self, seen: &[PacketIn]) {
        for p in seen {
            // No stream open: nobody to tell.
            let _ = self.packet_ins.send(pb::PacketIn { mac: p.mac.to_vec(), port: u32::from(p.port.0) });
        }
    }
}

/// A refusal as a gRPC status.
fn status(e: FibError) -> Status {
    let text = e.to_string();
    match e {
        FibError::Controlled | FibError::Flat(FlatError::ForeignPatch | FlatError::PatchVersion { .. }) => {
            Status::failed_precondition(text)
        }
        FibError::Flat(FlatError::NotFound) => Status::not_found(text),
        _ => Status::invalid_argument(text),
    }
}

fn mac(bytes: &[u8]) -> Result<[u8; 6], Status> {
    bytes.try_into().map_err(|_| Status::invalid_argument(format!("a MAC address is 6 bytes, not {}", bytes.len())))
}

/// The gRPC service: checks each call, hands it to the switch's thread.
#[derive(Debug)]
struct Service {
    calls: mpsc::Sender<Call>,
    packet_ins: broadcast::Sender<pb::PacketIn>,
}

impl Service {
    async fn call(&self, ask: Ask) -> Result<Answer, Status> {
        let (reply, answer) = oneshot::channel();
        self.calls.send(Call { ask, reply }).map_err(|_| Status::unavailable("the switch has stopped"))?;
        answer.await.map_err(|_| Status::unavailable("the switch has stopped"))?
    }

    async fn fib(&self, ask: Ask) -> Result<FibState, Status> {
        match self.call(ask).await? {
            Answer::Fib(s) => Ok(s),
            other => Err(Status::internal(format!("the switch answered {other:?}"))),
        }
    }
}

type PacketInStream = Pin<Box<dyn Stream<Item = Result<pb::PacketIn, Status>> + Send>>;

#[tonic::async_trait]
impl Switch for Service {
    async fn get_info(&self, _: Request<pb::GetInfoRequest>) -> Result<Response<pb::SwitchInfo>, Status> {
        match self.call(Ask::Info).await? {
            Answer::Info(i) => Ok(Response::new(i)),
            other => Err(Status::internal(format!("the switch answered {other:?}"))),
        }
    }

    async fn set_ports(&self, request: Request<pb::SetPortsRequest>) -> Result<Response<pb::SetPortsResponse>, Status> {
        let ports = request.into_inner().ports;
        if ports.iter().enumerate().any(|(i, p)| p.index as usize != i) {
            return Err(Status::invalid_argument("ports must be given in index order, 0 first"));
        }
        self.call(Ask::SetPorts(ports.iter().map(|p| PortRole { flood: p.flood, edge: p.edge }).collect())).await?;
        Ok(Response::new(pb::SetPortsResponse {}))
    }

    async fn write_entries(&self, request: Request<pb::WriteEntriesRequest>) -> Result<Response<pb::WriteEntriesResponse>, Status> {
        let changes = (request.into_inner().entries.iter())
            .map(|e| {
                let mac = mac(&e.mac)?;
                Ok(if e.delete { EntryChange::Delete { mac } } else { EntryChange::Put { mac, port: e.port } })
            })
            .collect::<Result<Vec<_>, Status>>()?;
        let s = self.fib(Ask::Write(changes)).await?;
        Ok(Response::new(pb::WriteEntriesResponse { structure: s.structure, version: s.version, hosts: s.hosts.unwrap_or(0) as u64 }))
    }

    async fn push_delta(&self, request: Request<pb::PushDeltaRequest>) -> Result<Response<pb::PushDeltaResponse>, Status> {
        let delta = match request.into_inner().delta {
            Some(pb::push_delta_request::Delta::Patch(p)) => {
                let cells = |c: &[pb::Cell]| c.iter().map(|c| (c.index, c.value)).collect::<Vec<_>>();
                PushedDelta::Patch(patch_from_cells(p.structure, p.version, cells(&p.a), cells(&p.b)).map_err(status)?)
            }
            Some(pb::push_delta_request::Delta::Structure(bytes)) => PushedDelta::Structure(bytes),
            None => return Err(Status::invalid_argument("a delta is a patch or a structure")),
        };
        let s = self.fib(Ask::Push(delta)).await?;
        Ok(Response::new(pb::PushDeltaResponse { structure: s.structure, version: s.version }))
    }

    async fn read_counters(&self, _: Request<pb::ReadCountersRequest>) -> Result<Response<pb::Counters>, Status> {
        match self.call(Ask::Counters).await? {
            Answer::Counters(c) => Ok(Response::new(c)),
            other => Err(Status::internal(format!("the switch answered {other:?}"))),
        }
    }

    type StreamPacketInsStream = PacketInStream;

    async fn stream_packet_ins(&self, _: Request<pb::StreamPacketInsRequest>) -> Result<Response<PacketInStream>, Status> {
        // A stream that falls behind skips what it missed (a host is reported again by its
        // next frame while it is still off its FIB port).
        let seen = tokio_stream::wrappers::BroadcastStream::new(self.packet_ins.subscribe()).filter_map(|p| p.ok().map(Ok));
        Ok(Response::new(Box::pin(seen)))
    }
}
