//! A port's counters: frames and bytes each way, and every drop by its reason.

/// Why a frame was dropped (or, for the kernel's reasons, never reached the program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The transmit ring had no room.
    TransmitRingFull,
    /// No free frame in the pool to copy a received frame into (AF_PACKET).
    NoFreeFrame,
    /// A frame longer than the ring's slot (AF_PACKET) or the interface takes.
    TooLong,
    /// A frame shorter than an Ethernet header.
    TooShort,
    /// A descriptor from the kernel outside the pool or its frame.
    InvalidDescriptor,
    /// Sent to a port whose interface is gone.
    LinkDown,
    /// The kernel dropped it before the socket (`rx_dropped`).
    KernelRxDropped,
    /// The socket's receive ring was full (`rx_ring_full`; AF_PACKET: `tp_drops`).
    KernelRxRingFull,
    /// The fill ring was empty when a frame came (`rx_fill_ring_empty_descs`).
    KernelFillRingEmpty,
    /// The kernel refused a descriptor (`rx_invalid_descs` + `tx_invalid_descs`).
    KernelInvalidDescriptor,
}

impl DropReason {
    /// Every reason, in report order.
    pub const ALL: [DropReason; 10] = [
        DropReason::TransmitRingFull,
        DropReason::NoFreeFrame,
        DropReason::TooLong,
        DropReason::TooShort,
        DropReason::InvalidDescriptor,
        DropReason::LinkDown,
        DropReason::KernelRxDropped,
        DropReason::KernelRxRingFull,
        DropReason::KernelFillRingEmpty,
        DropReason::KernelInvalidDescriptor,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::TransmitRingFull => "tx-ring-full",
            DropReason::NoFreeFrame => "no-free-frame",
            DropReason::TooLong => "too-long",
            DropReason::TooShort => "too-short",
            DropReason::InvalidDescriptor => "invalid-descriptor",
            DropReason::LinkDown => "link-down",
            DropReason::KernelRxDropped => "kernel-rx-dropped",
            DropReason::KernelRxRingFull => "kernel-rx-ring-full",
            DropReason::KernelFillRingEmpty => "kernel-fill-ring-empty",
            DropReason::KernelInvalidDescriptor => "kernel-invalid-descriptor",
        }
    }
}

/// A port's counters. The kernel's drops are read when [`crate::PortSet::counters`] is asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received.
    pub rx_frames: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Frames handed to the kernel to transmit.
    pub tx_frames: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Times the interface went away.
    pub link_downs: u64,
    /// Times it came back and the port was opened again.
    pub link_ups: u64,
    drops: [u64; DropReason::ALL.len()],
}

impl PortCounters {
    /// Counts one drop for `why`.
    pub fn drop(&mut self, why: DropReason) {
        self.drops[why as usize] += 1;
    }

    /// Counts `n` drops for `why`.
    pub(crate) fn add(&mut self, why: DropReason, n: u64) {
        self.drops[why as usize] += n;
    }

    /// Drops for `why`.
    pub fn dropped(&self, why: DropReason) -> u64 {
        self.drops[why as usize]
    }

    /// Drops for every reason.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().sum()
    }
}
