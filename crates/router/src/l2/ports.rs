//! The Concise switch on real interfaces: the pipeline ([`L2Switch`]) on `nexthop-io` ports, one
//! thread ([`PortSwitch::run`]).
//!
//! # Overview
//! - Each interface is an AF_XDP port taking every frame (the kernel sees none: a switch port
//!   has no address of its own); the ports share one frame pool, so a frame forwarded from one
//!   port to another is never copied in user space. A flooded frame goes out of the first
//!   flood port as it is and out of each other one as a copy.
//! - The FIB changes between batches only: the caller's `control` gets it, with the hosts the
//!   pipeline saw off their FIB port, between batches ([`PortSwitch::run`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::switch::{Decision, L2Switch, MacFib, PacketIn, PortRole, SwitchPort};
use crate::frames::PoolFrames;
use nexthop_io::{Backend, Frame, PortConfig, PortError, PortId, PortSet, XdpMode};

/// Frames received from a port at a time.
pub const BATCH: usize = 64;
/// Frames in the shared pool.
const POOL_FRAMES: u32 = 16384;

/// How the switch's ports open.
#[derive(Debug, Clone)]
pub struct SwitchConfig {
    /// The interfaces, in [`SwitchPort`] order, each with its role.
    pub ports: Vec<(String, PortRole)>,
    /// AF_XDP's mode (`None`: native where the driver has it).
    pub xdp_mode: Option<XdpMode>,
}

/// What the switch's own I/O counted (the pipeline counts its decisions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchIoCounters {
    /// Frames the pipeline sent to a port that could not take them (ring full, too long,
    /// down), copies of flooded frames among them.
    pub transmit_drops: u64,
    /// Copies of a flooded frame not made: the pool was empty.
    pub no_frame_for_copy: u64,
}

/// The switch on its ports, forwarding by the FIB `F`.
#[derive(Debug)]
pub struct PortSwitch<F> {
    set: PortSet,
    ports: Vec<PortId>,
    switch: L2Switch<F>,
    io: SwitchIoCounters,
    frames: Vec<Frame>,
    decisions: Vec<Decision>,
    flood: Vec<SwitchPort>,
    /// A flooded frame's bytes, while its copies are made.
    copy: Vec<u8>,
}

impl<F: MacFib> PortSwitch<F> {
    /// Opens the ports in the calling thread's network namespace, forwarding by `fib`.
    ///
    /// # Errors
    /// A port could not open.
    pub fn open(config: &SwitchConfig, fib: F) -> Result<PortSwitch<F>, PortError> {
        let mut set = PortSet::new(POOL_FRAMES)?;
        let mut ports = Vec::new();
        for (name, _) in &config.ports {
            let mut pc = PortConfig::new(name);
            pc.backend = Some(Backend::AfXdp);
            pc.xdp_mode = config.xdp_mode;
            let id = set.open(pc)?;
            tracing::info!("switching on {name} (AF_XDP {:?})", set.info(id).xdp_mode);
            ports.push(id);
        }
        let roles = config.ports.iter().map(|(_, r)| *r).collect();
        Ok(PortSwitch {
            set,
            ports,
            switch: L2Switch::new(fib, roles),
            io: SwitchIoCounters::default(),
            frames: Vec::with_capacity(BATCH),
            decisions: Vec::with_capacity(BATCH),
            flood: Vec::new(),
            copy: Vec::new(),
        })
    }

    /// The pipeline (its FIB and counters).
    pub fn switch(&self) -> &L2Switch<F> {
        &self.switch
    }

    /// The pipeline, to change its FIB between batches.
    pub fn switch_mut(&mut self) -> &mut L2Switch<F> {
        &mut self.switch
    }

    /// What the switch's I/O counted.
    pub fn io_counters(&self) -> &SwitchIoCounters {
        &self.io
    }

    /// Switches until `stop` is set; between batches, `control` gets the switch (to change its
    /// FIB and ports, to read its counters) and the hosts seen off their FIB port (often none).
    pub fn run(&mut self, stop: &AtomicBool, mut control: impl FnMut(&mut PortSwitch<F>, Vec<PacketIn>)) {
        while !stop.load(Ordering::Relaxed) {
            let busy = self.turn() > 0 || self.set.unsent();
            let seen = self.switch.take_packet_ins();
            control(self, seen);
            if !busy {
                self.set.wait(Duration::from_millis(10));
                self.set.maintain();
            }
        }
    }

    /// One batch from each port through the pipeline; the frames received.
    pub fn turn(&mut self) -> usize {
        let mut received = 0;
        for i in 0..self.ports.len() {
            self.frames.clear();
            let n = self.set.receive(self.ports[i], &mut self.frames, BATCH);
            if n == 0 {
                continue;
            }
            received += n;
            let ingress = SwitchPort(i as u16);
            let batch = PoolFrames { pool: self.set.pool(), frames: &mut self.frames };
            self.switch.switch_batch(&batch, |_| ingress, &mut self.decisions);
            let mut frames = std::mem::take(&mut self.frames);
            let decisions = std::mem::take(&mut self.decisions);
            for (frame, &d) in frames.drain(..).zip(&decisions) {
                match d {
                    Decision::Forward(p) => self.send(p, frame),
                    Decision::Flood => {
                        self.flood.clear();
                        self.flood.extend(self.switch.flood_ports(ingress));
                        self.flood_out(frame);
                    }
                    Decision::Drop(_) => self.set.pool().free(frame),
                }
            }
            (self.frames, self.decisions) = (frames, decisions);
        }
        self.set.flush();
        received
    }

    fn send(&mut self, p: SwitchPort, frame: Frame) {
        match self.ports.get(usize::from(p.0)) {
            Some(&id) => {
                if self.set.transmit(id, frame).is_err() {
                    self.io.transmit_drops += 1;
                }
            }
            None => {
                self.io.transmit_drops += 1;
                self.set.pool().free(frame);
            }
        }
    }

    /// `frame` out of every port of `self.flood`: copies for all but the last, which takes it.
    fn flood_out(&mut self, frame: Frame) {
        let flood = std::mem::take(&mut self.flood);
        if let Some((&last, others)) = flood.split_last() {
            if !others.is_empty() {
                self.copy.clear();
                self.copy.extend_from_slice(self.set.pool_ref().bytes(&frame));
            }
            for &p in others {
                match self.set.pool().alloc_copy(&self.copy) {
                    Some(copy) => self.send(p, copy),
                    None => self.io.no_frame_for_copy += 1,
                }
            }
            self.send(last, frame);
        } else {
            self.set.pool().free(frame);
        }
        self.flood = flood;
    }
}
