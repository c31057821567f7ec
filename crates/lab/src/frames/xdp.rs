//! A traffic generator and sink that are XDP programs: the generator transmits from the
//! kernel's live-frames test run (no socket buffer, no system call per batch of the system
//! measured), the sink checks and counts each frame in its interface's XDP hook and drops it.
//! On a two-core machine the generator and sink share one core; made so, they outrun a
//! forwarder on the other core several times over, where the AF_XDP loop ([`super::traffic`])
//! tops out near the forwarder's own rate.
//!
//! # Overview
//! - The frames: a template (`frame`) and, per destination `i` of `n`, a patch of bytes the
//!   generator writes at [`PATCH_AT`] (for IPv4, the Ethernet header and the IPv4 header with
//!   that destination and its checksum) and the destination's number, which it writes at
//!   [`INDEX_AT`]. Frame `k` goes to
//!   destination `k mod n`.
//! - The sink, per frame with the generator's EtherType and IP protocol: the destination's
//!   [`Expected`] entry by the number the frame carries; bytes 12..42 (EtherType, IPv4 and UDP
//!   headers as the forwarder must leave them) must be the entry's, or the frame is
//!   *corrupted*; it must have come out of the entry's port with the entry's Ethernet
//!   destination (or its alternative) and, where the port says, the port's source address, or
//!   it is *misrouted*; otherwise *intact*. Other frames pass to the kernel, counted foreign.
//!   The payload after the headers is not checked here (the AF_XDP loop checks every byte).
//! - Counting is per class in one array map that the sink's programs add to; a run reads it at
//!   the edges of its measured window. Lost: frames the generator transmitted that the sink
//!   counted in no class but foreign (the generator's transmit into a full ring of the system
//!   measured counts as sent: the system did not take it). Duplicates are not told apart.
//!
//! Placement on two cores (what a user of these programs must arrange, learned measuring the
//! router): the sink's receive work must run on the generator's core without the forwarder's
//! core waking it for every frame, and the forwarder's receive work must not wait behind
//! other threads of its core, or frames are lost in the veth rings (256 frames) during a
//! scheduling delay. Threaded NAPI with real-time kernel threads, and NAPI deferral
//! (`napi_defer_hard_irqs`, `gro_flush_timeout`), were tried for the router; the figures
//! swung too widely to use, so `ip-router` still measures with the AF_XDP loop.
//!
//! The generator's listing (`r7`: the frame; `r8`: the frame's number, then its destination):
//! ```text
//!     r2 = data; r3 = data_end; r7 = r2; r4 = r2 + END
//!     if r4 > r3 goto drop
//!     r6 = lookup(state, 0); if r6 == 0 goto drop
//!     r0 = ktime_get_ns(); if r0 > end goto drop        ; after the run's end
//!     r0 <<= 8; if next > r0 goto drop                   ; before this frame's time
//!     next = max(next, r0 - lag) + interval; sent += 1
//!     r8 = *(u64 *)r6; *(u64 *)r6 = r8 + 1; r8 %= n
//!     r0 = lookup(patches, r8); if r0 == 0 goto drop
//!     copy the patch to r7 + PATCH_AT, word by word; *(u32 *)(r7 + INDEX_AT) = r8
//!     return XDP_TX
//! drop:
//!     return XDP_DROP
//! ```

use std::io;
use std::time::{Duration, Instant};

use nexthop_io::bpf::insn::{Assembler, Reg, R0, R1, R10, R2, R3, R4, R6, R7, R8, R9};
use nexthop_io::bpf::program::{monotonic_ns, ArrayMap, XdpLink, XdpProgram};
use nexthop_io::XdpMode;

use super::tally::Counts;
use super::traffic::{CoreTicks, Outcome, Spec};

/// Where the generator writes a destination's patch: from the frame's start, since the pages
/// of a live run are recycled without being written again, and a system that rewrites the
/// frames it forwards in place (the kernel's, its Ethernet header and TTL) leaves its changes
/// in the next frame of that page.
pub const PATCH_AT: usize = 0;
/// The bytes the sink compares with the destination's entry (Ethernet, IPv4 and UDP headers).
pub const CHECKED: usize = 42;
/// Where the generator writes the destination's number (native-endian u32), right after the
/// checked bytes.
pub const INDEX_AT: usize = CHECKED;
/// The shortest frame either program takes.
pub const MIN_FRAME: usize = INDEX_AT + 4;

const XDP_DROP: i32 = 1;
const XDP_PASS: i32 = 2;
const XDP_TX: i32 = 3;
const MAP_LOOKUP_ELEM: i32 = 1;

/// The sink's classes, slots of its counter map.
const INTACT: i32 = 0;
const MISROUTED: i32 = 1;
const CORRUPTED: i32 = 2;
const FOREIGN: i32 = 3;
const CLASSES: u32 = 4;

/// An entry's bytes: the checked bytes, the port, the alternative port (or [`NO_PORT`]) and
/// the alternative Ethernet destination, two bytes of padding.
const ENTRY: usize = CHECKED + 2 + 6 + 2;
const ALT_RX_AT: i16 = CHECKED as i16 + 1;
const ALT_MAC_AT: i16 = CHECKED as i16 + 2;
/// No alternative port.
const NO_PORT: u8 = 0xff;

/// Where one destination's frames must come out, and as what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The frame's first [`CHECKED`] bytes as the sink must see them (bytes 6..12, the
    /// Ethernet source, are checked only on ports that name one).
    pub bytes: [u8; CHECKED],
    /// The receiving port (its place in the sink's list).
    pub rx: u8,
    /// Another port and Ethernet destination accepted too (while routes change).
    pub alt: Option<(u8, [u8; 6])>,
}

impl Expected {
    fn entry(&self) -> [u8; ENTRY] {
        let mut e = [0u8; ENTRY];
        e[..CHECKED].copy_from_slice(&self.bytes);
        e[CHECKED] = self.rx;
        let (rx, mac) = self.alt.unwrap_or((NO_PORT, [0; 6]));
        e[CHECKED + 1] = rx;
        e[CHECKED + 2..CHECKED + 8].copy_from_slice(&mac);
        e
    }
}

/// What the generator sends and the sink expects.
#[derive(Clone, Debug)]
pub struct XdpFrames {
    /// The template, at least [`MIN_FRAME`] bytes.
    pub frame: Vec<u8>,
    /// Per destination: the bytes written at [`PATCH_AT`] (a multiple of four bytes, the same
    /// length for all, ending at or before [`INDEX_AT`]).
    pub patches: Vec<Vec<u8>>,
    /// Per destination: what the sink expects.
    pub expected: Vec<Expected>,
}

/// A receiving interface of the sink.
#[derive(Clone, Copy, Debug)]
pub struct SinkPort {
    /// Its index, in the namespace the sink's programs are attached in.
    pub ifindex: u32,
    /// The Ethernet source its frames must carry (the forwarder's port), if any.
    pub source: Option<[u8; 6]>,
}

/// The generator and the sink, loaded and attached.
#[derive(Debug)]
pub struct XdpTraffic {
    generator: XdpProgram,
    frame: Vec<u8>,
    ifindex: u32,
    /// The generator's state (pacing, frames sent).
    state: ArrayMap,
    /// Kept for the programs that name them: the patches and the sink's entries.
    _tables: (ArrayMap, ArrayMap),
    counters: ArrayMap,
    _sink: Vec<(XdpProgram, XdpLink)>,
}

/// `r0 = lookup(map, key)` with the key stored on the stack at `r10 - 4` from `key`.
fn lookup(a: &mut Assembler, map: &ArrayMap, key: Reg) {
    a.store_u32(R10, -4, key).load_map_fd(R1, map.fd()).mov(R2, R10).add_imm(R2, -4).call(MAP_LOOKUP_ELEM);
}

/// Goes to `to` unless the `bytes`-wide words at `r7 + at` and `r8 + entry_at` are equal.
fn compare(a: &mut Assembler, at: i16, entry_at: i16, bytes: usize, to: nexthop_io::bpf::insn::Label) {
    let mut off = 0i16;
    let end = bytes as i16;
    while off < end {
        if end - off >= 4 {
            a.load_u32(R1, R7, at + off).load_u32(R2, R8, entry_at + off);
            off += 4;
        } else {
            a.load_u16(R1, R7, at + off).load_u16(R2, R8, entry_at + off);
            off += 2;
        }
        a.jump_ne(R1, R2, to);
    }
}

/// The generator's state, u64 slots of its one-entry map: the next frame's number, when the
/// next frame may go (ns << 8), the interval between frames (ns << 8; 0: no pacing), when to
/// stop (ns), frames transmitted, and how far behind its schedule the generator may fall
/// (ns << 8: [`MAX_BURST`] intervals; a generator further behind, after a stall, does not
/// catch up in one burst at full speed).
const STATE_NEXT: i16 = 8;
const STATE_INTERVAL: i16 = 16;
const STATE_END: i16 = 24;
const STATE_SENT: i16 = 32;
const STATE_LAG: i16 = 40;
const STATE: usize = 48;
/// The longest burst at full speed when behind schedule, in frames.
const MAX_BURST: u64 = 32;
/// Fraction bits of the pacing times.
const PACE_SHIFT: i32 = 8;
const KTIME_GET_NS: i32 = 5;

/// The generator's program (see the module overview).
fn generator(state: &ArrayMap, patches: &ArrayMap, n: u32, patch_len: usize) -> Vec<nexthop_io::bpf::insn::Insn> {
    let mut a = Assembler::new();
    let drop = a.label();
    a.load_u32(R2, R1, 0).load_u32(R3, R1, 4).mov(R7, R2).mov(R4, R2).add_imm(R4, MIN_FRAME as i32).jump_gt(R4, R3, drop);
    a.mov_imm(R9, 0);
    lookup(&mut a, state, R9);
    a.jump_eq_imm(R0, 0, drop).mov(R6, R0);
    // Pacing: nothing after the end, nothing before the next frame's time.
    a.call(KTIME_GET_NS).load_u64(R1, R6, STATE_END).jump_gt(R0, R1, drop);
    a.lsh_imm(R0, PACE_SHIFT).load_u64(R1, R6, STATE_NEXT).jump_gt(R1, R0, drop);
    // Behind by more than the lag: from now less the lag.
    let on_time = a.label();
    a.mov(R2, R0).load_u64(R3, R6, STATE_LAG).sub(R2, R3).jump_gt(R1, R2, on_time).jump_gt(R3, R0, on_time).mov(R1, R2);
    a.place(on_time);
    a.load_u64(R2, R6, STATE_INTERVAL).add(R1, R2).store_u64(R6, STATE_NEXT, R1);
    a.load_u64(R1, R6, STATE_SENT).add_imm(R1, 1).store_u64(R6, STATE_SENT, R1);
    a.load_u64(R8, R6, 0).mov(R1, R8).add_imm(R1, 1).store_u64(R6, 0, R1).mod_imm(R8, n as i32);
    lookup(&mut a, patches, R8);
    a.jump_eq_imm(R0, 0, drop);
    for k in (0..patch_len as i16).step_by(4) {
        a.load_u32(R1, R0, k).store_u32(R7, PATCH_AT as i16 + k, R1);
    }
    a.store_u32(R7, INDEX_AT as i16, R8).mov_imm(R0, XDP_TX).exit();
    a.place(drop);
    a.mov_imm(R0, XDP_DROP).exit();
    a.finish()
}

/// The sink's program for receiving port `rx` (see the module overview).
fn sink(
    expected: &ArrayMap,
    counters: &ArrayMap,
    n: u32,
    rx: u8,
    source: Option<[u8; 6]>,
    ethertype: u16,
    protocol: u8,
) -> Vec<nexthop_io::bpf::insn::Insn> {
    let mut a = Assembler::new();
    let (foreign, count, alt, intact) = (a.label(), a.label(), a.label(), a.label());
    a.load_u32(R2, R1, 0).load_u32(R3, R1, 4).mov(R7, R2).mov(R4, R2).add_imm(R4, MIN_FRAME as i32).jump_gt(R4, R3, foreign);
    a.load_u16(R4, R7, 12).jump_ne_imm(R4, i32::from(ethertype.swap_bytes()), foreign);
    a.load_u8(R4, R7, 23).jump_ne_imm(R4, i32::from(protocol), foreign);
    a.mov_imm(R9, CORRUPTED).load_u32(R8, R7, INDEX_AT as i16).jump_ge_imm(R8, n as i32, count);
    lookup(&mut a, expected, R8);
    a.jump_eq_imm(R0, 0, count).mov(R8, R0);
    compare(&mut a, 12, 12, CHECKED - 12, count);
    a.mov_imm(R9, MISROUTED);
    match source {
        Some(mac) => {
            for k in (0..6).step_by(2) {
                a.load_u16(R1, R7, 6 + k as i16).jump_ne_imm(R1, i32::from(u16::from_ne_bytes([mac[k], mac[k + 1]])), count);
            }
        }
        None => compare(&mut a, 6, 6, 6, count),
    }
    a.load_u8(R1, R8, CHECKED as i16).jump_ne_imm(R1, i32::from(rx), alt);
    compare(&mut a, 0, 0, 6, alt);
    a.goto(intact);
    a.place(alt);
    a.load_u8(R1, R8, ALT_RX_AT).jump_ne_imm(R1, i32::from(rx), count);
    compare(&mut a, 0, ALT_MAC_AT, 6, count);
    a.place(intact);
    a.mov_imm(R9, INTACT);
    a.place(count);
    lookup(&mut a, counters, R9);
    let out = a.label();
    a.jump_eq_imm(R0, 0, out).mov_imm(R1, 1).atomic_add_u64(R0, 0, R1);
    a.place(out);
    a.mov_imm(R0, XDP_DROP).exit();
    a.place(foreign);
    a.mov_imm(R9, FOREIGN);
    lookup(&mut a, counters, R9);
    let pass = a.label();
    a.jump_eq_imm(R0, 0, pass).mov_imm(R1, 1).atomic_add_u64(R0, 0, R1);
    a.place(pass);
    a.mov_imm(R0, XDP_PASS).exit();
    a.finish()
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

impl XdpTraffic {
    /// Loads the generator for interface `ifindex` (of the namespace [`XdpTraffic::run`] is
    /// called in) and attaches the sink to each of `sinks` (indices of the calling thread's
    /// namespace, in native mode) for frames of `ethertype` and IP `protocol`.
    ///
    /// # Errors
    /// Frames that do not fit the layout; the kernel's refusal of a map, a program or an
    /// attachment.
    pub fn new(frames: &XdpFrames, ifindex: u32, sinks: &[SinkPort], ethertype: u16, protocol: u8) -> io::Result<XdpTraffic> {
        let n = frames.patches.len();
        let patch_len = frames.patches.first().map_or(0, Vec::len);
        if n == 0 || n != frames.expected.len() || n > i32::MAX as usize {
            return Err(invalid(format!("{n} patches and {} expected entries", frames.expected.len())));
        }
        if frames.frame.len() < MIN_FRAME
            || !patch_len.is_multiple_of(4)
            || PATCH_AT + patch_len > INDEX_AT
            || frames.patches.iter().any(|p| p.len() != patch_len)
        {
            return Err(invalid(format!("a {}-byte frame with {patch_len}-byte patches", frames.frame.len())));
        }
        let state = ArrayMap::new(STATE, 1, "nh_gen_state")?;
        let patches = ArrayMap::new(patch_len.max(4), n as u32, "nh_gen_patches")?;
        let expected = ArrayMap::new(ENTRY, n as u32, "nh_sink_expect")?;
        let counters = ArrayMap::new(8, CLASSES, "nh_sink_counts")?;
        for (i, (p, e)) in frames.patches.iter().zip(&frames.expected).enumerate() {
            if !p.is_empty() {
                patches.set(i as u32, p)?;
            }
            expected.set(i as u32, &e.entry())?;
        }
        let generator = XdpProgram::load(&generator(&state, &patches, n as u32, patch_len), "nh_generator")?;
        let mut attached = Vec::new();
        for (rx, port) in sinks.iter().enumerate() {
            let prog = XdpProgram::load(&sink(&expected, &counters, n as u32, rx as u8, port.source, ethertype, protocol), "nh_sink")?;
            let link = prog.attach(port.ifindex, XdpMode::Native)?;
            attached.push((prog, link));
        }
        Ok(XdpTraffic { generator, frame: frames.frame.clone(), ifindex, state, _tables: (patches, expected), counters, _sink: attached })
    }

    /// The sink's counts so far, by class.
    fn classes(&self) -> io::Result<[u64; CLASSES as usize]> {
        let mut c = [0; CLASSES as usize];
        for (i, v) in c.iter_mut().enumerate() {
            *v = self.counters.get_u64(i as u32)?;
        }
        Ok(c)
    }

    /// The generator's state slot `off` (bytes).
    fn state(&self, off: i16) -> io::Result<u64> {
        let v = self.state.get(0)?;
        let at = off as usize;
        Ok(u64::from_ne_bytes(v[at..at + 8].try_into().unwrap_or_default()))
    }

    /// Sends as `spec` says (its flows ignored: frames take the destinations in turn) from the
    /// calling thread, which must be in the generator interface's namespace, and counts what
    /// the sink saw (phases as [`super::traffic::run`]'s). The generator paces itself (each
    /// frame's time from the rate) in one live run to the window's end; the window's edges are
    /// read from a helper thread.
    ///
    /// # Errors
    /// A live run or a counter read refused.
    pub fn run(&self, spec: &Spec) -> io::Result<Outcome> {
        let before = self.classes()?;
        let mut state = self.state.get(0)?;
        let now_ns = monotonic_ns();
        let start = Instant::now();
        let (window_start, window_end) = (start + spec.warmup, start + spec.warmup + spec.window);
        let interval = spec.rate_pps.map_or(0, |r| ((1e9 / r.max(1.0)) * f64::from(1u32 << PACE_SHIFT)) as u64);
        let end_ns = now_ns + (spec.warmup + spec.window).as_nanos() as u64;
        let fields = [
            (STATE_NEXT, now_ns << PACE_SHIFT),
            (STATE_INTERVAL, interval),
            (STATE_END, end_ns),
            (STATE_SENT, 0),
            (STATE_LAG, interval * MAX_BURST),
        ];
        for (off, v) in fields {
            state[off as usize..off as usize + 8].copy_from_slice(&v.to_ne_bytes());
        }
        self.state.set(0, &state)?;
        let edge = || -> (io::Result<(u64, u64)>, Option<CoreTicks>) {
            let read = || Ok((self.state(STATE_SENT)?, self.classes()?[INTACT as usize]));
            (read(), spec.watch_core.and_then(CoreTicks::of))
        };
        let (mut first, mut second) = (None, None);
        {
            let mut at_start = || first = Some(edge());
            let mut at_end = || second = Some(edge());
            let mut at: [(Instant, &mut (dyn FnMut() + Send)); 2] = [(window_start, &mut at_start), (window_end, &mut at_end)];
            self.generator.run_live_until(&self.frame, self.ifindex, window_end, &mut at)?;
        }
        std::thread::sleep(spec.drain.max(Duration::from_millis(1)));
        let sent = self.state(STATE_SENT)?;
        let after = self.classes()?;
        let d = |c: i32| after[c as usize] - before[c as usize];
        let (r0, t0) = first.unwrap_or((Ok((0, before[INTACT as usize])), None));
        let (r1, t1) = second.unwrap_or((Ok((sent, after[INTACT as usize])), None));
        let ((s0, i0), (s1, i1)) = (r0?, r1?);
        let received = d(INTACT) + d(MISROUTED);
        let counts = Counts {
            received,
            unique: received,
            corrupted: d(CORRUPTED),
            misrouted: d(MISROUTED),
            foreign: d(FOREIGN),
            ..Counts::default()
        };
        Ok(Outcome {
            sent,
            sent_in_window: s1.saturating_sub(s0),
            received_in_window: i1.saturating_sub(i0),
            window_s: spec.window.as_secs_f64(),
            lost: sent.saturating_sub(received),
            counts,
            core_busy: CoreTicks::shares(t0, t1).map(|(busy, _)| busy),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use nexthop_io::netns::{veth, Netns};
    use nexthop_io::Interface;

    /// Frames of `n` destinations whose patch holds the destination's number as the IPv4
    /// source, expected unchanged on port `rx` (`bad`: destination 1 expected elsewhere,
    /// destination 2 with another UDP header).
    fn frames(n: usize, rx: u8, bad: bool) -> XdpFrames {
        let mut frame = vec![0u8; 64];
        frame[..6].copy_from_slice(&[2, 0, 0, 0, 0, 0xb]);
        frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0xa]);
        frame[12..14].copy_from_slice(&[0x08, 0x00]);
        frame[14] = 0x45;
        frame[23] = 17;
        let patch = |i: usize| {
            let mut p = frame[..36].to_vec();
            p[26..30].copy_from_slice(&(i as u32).to_be_bytes());
            p
        };
        let patches: Vec<Vec<u8>> = (0..n).map(patch).collect();
        let expected = (0..n)
            .map(|i| {
                let mut bytes = [0u8; CHECKED];
                bytes.copy_from_slice(&frame[..CHECKED]);
                bytes[..36].copy_from_slice(&patches[i]);
                if bad && i == 2 {
                    bytes[36] ^= 1; // another UDP destination port: a damaged header
                }
                Expected { bytes, rx: if bad && i == 1 { rx + 1 } else { rx }, alt: None }
            })
            .collect();
        XdpFrames { frame, patches, expected }
    }

    /// `frames` in a 50 ms window, after a warm-up that covers the live run's setup.
    fn spec(frames: f64) -> Spec {
        Spec {
            flows: 1,
            rate_pps: Some(frames / 0.05),
            warmup: Duration::from_millis(100),
            window: Duration::from_millis(50),
            drain: Duration::from_millis(20),
            watch_core: None,
        }
    }

    /// Through a veth pair from the generator to the sink: every frame counted, and where the
    /// sink expects a destination elsewhere, that destination's frames are misrouted.
    #[test]
    fn frames_cross_a_veth_pair_and_each_is_classed() {
        let (Some(a), Some(b)) = (Netns::for_test("nxtxa"), Netns::for_test("nxtxb")) else { return };
        veth(&a, "xa", &b, "xb", 1).unwrap();
        let t = std::thread::spawn(move || {
            b.enter().unwrap();
            let xb = Interface::index_of("xb").unwrap();
            let sinks = [SinkPort { ifindex: xb, source: None }];
            let good = XdpTraffic::new(&frames(4, 0, false), 0, &sinks, 0x0800, 17);
            a.enter().unwrap();
            let xa = Interface::index_of("xa").unwrap();
            let mut good = good.unwrap();
            good.ifindex = xa;
            let o = good.run(&spec(2000.0)).unwrap();
            assert!((1800..=2200).contains(&o.sent_in_window), "paced to 2,000 in the window: {o:?}");
            assert_eq!((o.counts.received, o.lost, o.counts.misrouted, o.counts.corrupted), (o.sent, 0, 0, 0), "{o:?}");
            drop(good);
            b.enter().unwrap();
            let bad = XdpTraffic::new(&frames(4, 0, true), xa, &sinks, 0x0800, 17).unwrap();
            a.enter().unwrap();
            let o = bad.run(&spec(2000.0)).unwrap();
            let per = |d: u64| o.sent / 4 + u64::from(o.sent % 4 > d);
            assert_eq!(o.counts.misrouted, per(1), "destination 1's frames: {o:?}");
            assert_eq!(o.counts.corrupted, per(2), "destination 2's frames: {o:?}");
            assert_eq!(o.lost, per(2), "the corrupted are not received: {o:?}");
            (a, b)
        });
        drop(t.join().unwrap());
    }

    #[test]
    fn an_entry_holds_the_checked_bytes_and_both_ports() {
        let e = Expected { bytes: [7; CHECKED], rx: 1, alt: Some((0, [1, 2, 3, 4, 5, 6])) };
        let b = e.entry();
        assert_eq!(&b[..CHECKED], &[7; CHECKED]);
        assert_eq!((b[CHECKED], b[CHECKED + 1]), (1, 0));
        assert_eq!(&b[ALT_MAC_AT as usize..ALT_MAC_AT as usize + 6], &[1, 2, 3, 4, 5, 6]);
        let none = Expected { alt: None, ..e }.entry();
        assert_eq!(none[CHECKED + 1], NO_PORT);
    }
}
