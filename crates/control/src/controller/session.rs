//! The controller's I/O: one gRPC session per switch, around one loop that owns the
//! [`Fabric`].
//!
//! # Overview
//! - A session connects to its switch (again every [`RETRY`] while it cannot), asks its
//!   interfaces (`GetInfo`), opens its packet-in stream, and tells the loop. The loop answers
//!   with the switch's sync (roles and whole FIB), which the session pushes; then the session
//!   passes packet-ins to the loop and pushes the messages the loop sends, in order.
//! - Each connection is an epoch: a message made for an earlier connection of the switch is
//!   not pushed (a restarted switch gets its whole FIB first). A patch the switch refuses as
//!   not its own (`FAILED_PRECONDITION`: it missed one) makes the loop send the whole FIB.
//! - The loop takes every event waiting before it asks the fabric for messages, so that many
//!   changes at once go to each switch as one patch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nexthop_router::l2::hosts_file::mac_text;
use nexthop_router::l2::PortRole;
use tokio::sync::mpsc;
use tonic::transport::Channel;
use tonic::{Code, Status};

use super::fabric::{Fabric, Message, SwitchSync};
use super::topology::{PortRef, Topology};
use crate::pb;
use crate::pb::switch_client::SwitchClient;

/// How long a session waits before it tries a switch again.
pub const RETRY: Duration = Duration::from_millis(100);
/// The largest message on the channel: a whole FIB of 16M names is 128 MiB.
pub const MAX_MESSAGE: usize = 1 << 30;

/// A client of a switch's control channel with [`MAX_MESSAGE`] both ways.
pub fn client(channel: Channel) -> SwitchClient<Channel> {
    SwitchClient::new(channel).max_decoding_message_size(MAX_MESSAGE).max_encoding_message_size(MAX_MESSAGE)
}

/// What the controller did, when it stops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControllerCounters {
    /// Connections taken on (a switch's first, and each after it restarted).
    pub syncs: u64,
    /// Patches and whole structures pushed after a sync.
    pub messages: u64,
    /// Hosts placed (installed or moved) from packet-ins.
    pub placed: u64,
    /// Whole FIBs sent again after a refused patch.
    pub resyncs: u64,
}

/// What a session tells the loop.
#[derive(Debug)]
enum Event {
    Connected { s: usize, epoch: u64, interfaces: Vec<String> },
    Lost { s: usize, epoch: u64, why: String },
    PacketIn { s: usize, mac: [u8; 6], port: u32 },
    Refused { s: usize, epoch: u64, why: String },
}

/// What the loop gives a session to push.
#[derive(Debug)]
enum Out {
    Sync(SwitchSync),
    Message(Message),
}

/// Runs the controller of `topology` until `stop` is set.
///
/// # Errors
/// The runtime could not start.
pub fn run(topology: Topology, stop: Arc<AtomicBool>) -> std::io::Result<ControllerCounters> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(runtime.block_on(serve(topology, async move {
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })))
}

/// The controller's loop until `stop` completes.
pub async fn serve(topology: Topology, stop: impl std::future::Future<Output = ()>) -> ControllerCounters {
    let (events_in, mut events) = mpsc::unbounded_channel();
    let mut outboxes = Vec::new();
    let mut sessions = Vec::new();
    for (s, spec) in topology.switches.iter().enumerate() {
        let (out, inbox) = mpsc::unbounded_channel();
        outboxes.push(out);
        sessions.push(tokio::spawn(session(s, spec.control.clone(), events_in.clone(), inbox)));
    }
    drop(events_in);
    let mut fabric = Fabric::new(topology);
    let mut epochs = vec![0u64; outboxes.len()];
    let mut counters = ControllerCounters::default();
    tokio::pin!(stop);
    loop {
        let first = tokio::select! {
            e = events.recv() => e,
            () = &mut stop => None,
        };
        let Some(first) = first else { break };
        let mut next = Some(first);
        while let Some(event) = next {
            handle(&mut fabric, event, &mut epochs, &outboxes, &mut counters);
            next = events.try_recv().ok();
        }
        for (s, m) in fabric.take_messages() {
            counters.messages += 1;
            let _ = outboxes[s].send((epochs[s], Out::Message(m)));
        }
    }
    for s in sessions {
        s.abort();
    }
    counters
}

fn handle(
    fabric: &mut Fabric,
    event: Event,
    epochs: &mut [u64],
    outboxes: &[mpsc::UnboundedSender<(u64, Out)>],
    counters: &mut ControllerCounters,
) {
    let name = |f: &Fabric, s: usize| f.topology().switches[s].name.clone();
    match event {
        Event::Connected { s, epoch, interfaces } => match fabric.connected(s, &interfaces) {
            Ok(sync) => {
                tracing::info!(
                    "controller: {} connected ({} interfaces); its FIB of {} hosts sent",
                    name(fabric, s),
                    interfaces.len(),
                    sync.hosts
                );
                epochs[s] = epoch;
                counters.syncs += 1;
                let _ = outboxes[s].send((epoch, Out::Sync(sync)));
            }
            Err(e) => tracing::warn!("controller: {e}"),
        },
        Event::Lost { s, epoch, why } => {
            if epochs[s] == epoch && fabric.is_connected(s) {
                tracing::info!("controller: {} lost: {why}", name(fabric, s));
                fabric.disconnected(s);
            }
        }
        Event::PacketIn { s, mac, port } => {
            if let Some(placed) = fabric.packet_in(s, mac, port) {
                counters.placed += 1;
                let text = |p: &PortRef| format!("{}:{}", fabric.topology().switches[p.switch].name, p.interface);
                match &placed.was {
                    Some(was) => tracing::info!("controller: host {} moved to {} (was {})", mac_text(mac), text(&placed.at), text(was)),
                    None => tracing::info!("controller: host {} at {}", mac_text(mac), text(&placed.at)),
                }
            }
        }
        Event::Refused { s, epoch, why } => {
            if epochs[s] == epoch {
                if let Some(sync) = fabric.resync(s) {
                    tracing::warn!("controller: {} refused a patch ({why}); its whole FIB sent again", name(fabric, s));
                    counters.resyncs += 1;
                    let _ = outboxes[s].send((epoch, Out::Sync(sync)));
                }
            }
        }
    }
}

/// One switch's session (see the module overview); ends when the loop does.
async fn session(
    s: usize,
    address: crate::address::ControlAddress,
    events: mpsc::UnboundedSender<Event>,
    mut inbox: mpsc::UnboundedReceiver<(u64, Out)>,
) {
    let mut epoch = 0;
    loop {
        let mut switch = client(address.channel());
        let opened = async {
            let info = switch.get_info(pb::GetInfoRequest {}).await?.into_inner();
            let stream = switch.stream_packet_ins(pb::StreamPacketInsRequest {}).await?.into_inner();
            Ok::<_, Status>((info, stream))
        };
        let (info, mut stream) = match opened.await {
            Ok(o) => o,
            Err(_) => {
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        epoch += 1;
        let interfaces = info.ports.into_iter().map(|p| p.name).collect();
        if events.send(Event::Connected { s, epoch, interfaces }).is_err() {
            return;
        }
        let why = loop {
            tokio::select! {
                p = stream.message() => match p {
                    Ok(Some(p)) => {
                        if let Ok(mac) = p.mac[..].try_into() {
                            let _ = events.send(Event::PacketIn { s, mac, port: p.port });
                        }
                    }
                    Ok(None) => break "its packet-in stream ended".to_string(),
                    Err(e) => break e.message().to_string(),
                },
                out = inbox.recv() => match out {
                    None => return,
                    Some((e, out)) if e == epoch => match push(&mut switch, out).await {
                        Ok(()) => {}
                        Err(status) if status.code() == Code::FailedPrecondition => {
                            let _ = events.send(Event::Refused { s, epoch, why: status.message().to_string() });
                        }
                        Err(status) => break status.message().to_string(),
                    },
                    Some(_) => {} // made for an earlier connection
                },
            }
        };
        if events.send(Event::Lost { s, epoch, why }).is_err() {
            return;
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Pushes one sync or message.
async fn push(switch: &mut SwitchClient<Channel>, out: Out) -> Result<(), Status> {
    let structure = |bytes| pb::PushDeltaRequest { delta: Some(pb::push_delta_request::Delta::Structure(bytes)) };
    match out {
        Out::Sync(sync) => {
            let ports = sync.roles.iter().enumerate().map(|(i, r): (usize, &PortRole)| pb::Port {
                index: i as u32,
                name: String::new(),
                flood: r.flood,
                edge: r.edge,
            });
            switch.set_ports(pb::SetPortsRequest { ports: ports.collect() }).await?;
            switch.push_delta(structure(sync.structure)).await?;
        }
        Out::Message(Message::Structure(bytes)) => {
            switch.push_delta(structure(bytes)).await?;
        }
        Out::Message(Message::Patch(p)) => {
            let patch = crate::switch_fib::patch_to_pb(&p);
            switch.push_delta(pb::PushDeltaRequest { delta: Some(pb::push_delta_request::Delta::Patch(patch)) }).await?;
        }
    }
    Ok(())
}
