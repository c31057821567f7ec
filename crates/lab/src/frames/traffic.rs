//! The generator and sink loop: frames out of one port of a [`PortSet`], frames in on others,
//! one thread (so a 2-core machine keeps its other core for the system measured).
//!
//! # Overview
//! A run has three phases: a warm-up (sending, not measured), the measured window (frames
//! received in it give the rate), and a drain (no more sending; frames still on the way are
//! received and tallied). Loss is counted over the whole run: frames the generator's port
//! took to transmit, less the distinct ones the sink received.

use std::time::{Duration, Instant};

use nexthop_io::{PortId, PortSet};

use super::format::{check, Checked, Template};
use super::tally::{Counts, Tally};

/// The frames a run sends and how the sink checks them.
pub trait Stream: Send + Sync {
    /// Bytes per frame (without the FCS).
    fn frame_len(&self) -> usize;
    /// Bytes of frame `seq` of `flow`, for streams of frames of several sizes.
    fn len_of(&self, _flow: u16, _seq: u64) -> usize {
        self.frame_len()
    }
    /// Writes frame `seq` of `flow` into `out` (of [`Stream::len_of`] bytes).
    fn write(&self, out: &mut [u8], flow: u16, seq: u64);
    /// Checks a frame received on receiving port number `rx` (its place in the run's list).
    fn check(&self, rx: usize, frame: &[u8]) -> Checked;
}

impl Stream for Template {
    fn frame_len(&self) -> usize {
        self.len()
    }
    fn write(&self, out: &mut [u8], flow: u16, seq: u64) {
        Template::write(self, out, flow, seq);
    }
    fn check(&self, _rx: usize, frame: &[u8]) -> Checked {
        check(frame)
    }
}

/// Frames the generator queues before each flush.
const BATCH: usize = 64;

/// What to send.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Flows, taking turns frame by frame.
    pub flows: u16,
    /// Frames per second; `None`: as fast as the port takes them.
    pub rate_pps: Option<f64>,
    /// Sending before the measured window.
    pub warmup: Duration,
    /// The measured window.
    pub window: Duration,
    /// Receiving after the last frame is sent.
    pub drain: Duration,
    /// A core whose busy share over the measured window to report (the system's, not this
    /// thread's).
    pub watch_core: Option<usize>,
}

/// What a run counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Frames the generator's port took to transmit.
    pub sent: u64,
    /// Of those, sent in the measured window.
    pub sent_in_window: u64,
    /// Intact frames received in the measured window.
    pub received_in_window: u64,
    /// The window's length, seconds.
    pub window_s: f64,
    /// The sink's counts over the whole run.
    pub counts: Counts,
    /// Frames sent and never received.
    pub lost: u64,
    /// The watched core's busy share of the window (user, system, interrupts), 0–1.
    pub core_busy: Option<f64>,
}

/// Clock ticks of one logical core since boot (`/proc/stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoreTicks {
    /// In user space.
    pub user: u64,
    /// Not idle: user space, the kernel, interrupts.
    pub busy: u64,
    /// In all.
    pub total: u64,
}

impl CoreTicks {
    /// Core `core`'s ticks now.
    pub(crate) fn of(core: usize) -> Option<CoreTicks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().find(|l| l.split_whitespace().next() == Some(&format!("cpu{core}")))?;
        let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
        let total: u64 = v.iter().take(8).sum();
        let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
        Some(CoreTicks { user: v[0] + v[1], busy: total - idle, total })
    }

    /// The busy share of the time from `start` to `end`, and the user-space share of the busy
    /// time; `None` if no tick passed.
    pub(crate) fn shares(start: Option<CoreTicks>, end: Option<CoreTicks>) -> Option<(f64, f64)> {
        let (s, e) = (start?, end?);
        (e.total > s.total).then(|| {
            let busy = e.busy - s.busy;
            (busy as f64 / (e.total - s.total) as f64, (e.user - s.user) as f64 / busy.max(1) as f64)
        })
    }
}

impl Outcome {
    /// Frames per second received in the window.
    pub fn received_pps(&self) -> f64 {
        self.received_in_window as f64 / self.window_s.max(1e-9)
    }

    /// Frames per second offered in the window.
    pub fn offered_pps(&self) -> f64 {
        self.sent_in_window as f64 / self.window_s.max(1e-9)
    }
}

/// Sends `stream`'s frames out of `tx` as `spec` says and receives them on the ports `rx`
/// (see the module overview).
pub fn run(set: &mut PortSet, tx: PortId, rx: &[PortId], stream: &dyn Stream, spec: &Spec) -> Outcome {
    let flows = spec.flows.max(1);
    let mut seq = vec![0u64; usize::from(flows)];
    let mut flow = 0u16;
    let mut tally = Tally::new();
    let mut batch = Vec::with_capacity(256);
    let tx_before = set.counters(tx).tx_frames;
    let start = Instant::now();
    let (window_start, window_end) = (start + spec.warmup, start + spec.warmup + spec.window);
    let end = window_end + spec.drain;
    let (mut attempted, mut sent_at_window_start, mut sent_at_window_end) = (0u64, None, None);
    let mut received_in_window = 0;
    let (mut ticks_at_start, mut ticks_at_end) = (None, None);
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        let sending = now < window_end;
        if sending {
            if now >= window_start && sent_at_window_start.is_none() {
                sent_at_window_start = Some(set.counters(tx).tx_frames);
                ticks_at_start = spec.watch_core.and_then(CoreTicks::of);
            }
            let want = match spec.rate_pps {
                None => BATCH,
                Some(r) => ((r * (now - start).as_secs_f64()) as u64).saturating_sub(attempted).min(BATCH as u64) as usize,
            };
            for _ in 0..want {
                let Some(mut f) = set.pool().alloc() else { break };
                let s = &mut seq[usize::from(flow)];
                if set.pool().set_len(&mut f, stream.len_of(flow, *s)).is_err() {
                    set.pool().free(f);
                    break;
                }
                stream.write(set.pool().bytes_mut(&mut f), flow, *s);
                *s += 1;
                flow = (flow + 1) % flows;
                attempted += 1;
                let _ = set.transmit(tx, f); // a drop is counted, and the sink sees it lost
            }
            set.flush();
        } else if sent_at_window_end.is_none() {
            sent_at_window_end = Some(set.counters(tx).tx_frames);
            ticks_at_end = spec.watch_core.and_then(CoreTicks::of);
        }
        let in_window = now >= window_start && now < window_end;
        let mut received = 0;
        for (r, &port) in rx.iter().enumerate() {
            received += set.receive(port, &mut batch, 256);
            for f in batch.drain(..) {
                match stream.check(r, set.pool_ref().bytes(&f)) {
                    Checked::Intact { flow, seq } => {
                        tally.intact(flow, seq);
                        received_in_window += u64::from(in_window);
                    }
                    Checked::Misrouted { flow, seq } => tally.misrouted(flow, seq),
                    Checked::Corrupted => tally.corrupted(),
                    Checked::Foreign => tally.foreign(),
                }
                set.pool().free(f);
            }
        }
        if received == 0 && !sending {
            set.flush();
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    let sent = set.counters(tx).tx_frames - tx_before;
    let at_end = sent_at_window_end.unwrap_or(sent + tx_before);
    Outcome {
        sent,
        sent_in_window: at_end - sent_at_window_start.unwrap_or(at_end),
        received_in_window,
        window_s: spec.window.as_secs_f64(),
        lost: tally.lost(sent),
        counts: tally.counts().clone(),
        core_busy: CoreTicks::shares(ticks_at_start, ticks_at_end).map(|(busy, _)| busy),
    }
}
