//! What the IP pipeline decides about a frame it does not forward, and its counters: every frame
//! is forwarded, handed to the kernel for a [`Punt`] reason, or dropped for a [`DropReason`].

/// Why a frame goes to the kernel (the control plane) instead of out of a port: the kernel
/// answers it (ARP, ND, ping to the router), sends the ICMP error it calls for, or resolves what
/// the fast path lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Punt {
    /// Not IPv4 or IPv6 (ARP, LLDP, …).
    NotIp,
    /// For the router itself (a local route).
    ForUs,
    /// TTL or hop limit 1 or 0: the kernel sends ICMP time exceeded (what traceroute sees).
    TtlExpired,
    /// IPv4 options or an IPv6 hop-by-hop header, which the fast path does not process.
    Options,
    /// To a multicast, broadcast or link-local address: not routed, maybe for the router.
    NotUnicast,
    /// From a link-local IPv6 source: not routable beyond its link (the kernel answers
    /// "beyond scope").
    LinkLocalSource,
    /// No route: the kernel answers ICMP unreachable (or routes it, if its table just changed).
    NoRoute,
    /// A route out of an interface that is not the pipeline's: the kernel forwards it.
    Elsewhere,
    /// A route whose next hop has no link-layer address yet: the kernel resolves it (ARP, ND)
    /// and forwards this packet meanwhile.
    NoNeighbour,
}

impl Punt {
    /// Every reason, in the order of [`Counters::kernel`].
    pub const ALL: [Punt; 9] = [
        Punt::NotIp,
        Punt::ForUs,
        Punt::TtlExpired,
        Punt::Options,
        Punt::NotUnicast,
        Punt::LinkLocalSource,
        Punt::NoRoute,
        Punt::Elsewhere,
        Punt::NoNeighbour,
    ];

    /// The reason's name in counters and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Punt::NotIp => "not-ip",
            Punt::ForUs => "for-us",
            Punt::TtlExpired => "ttl-expired",
            Punt::Options => "options",
            Punt::NotUnicast => "not-unicast",
            Punt::LinkLocalSource => "link-local-source",
            Punt::NoRoute => "no-route",
            Punt::Elsewhere => "elsewhere",
            Punt::NoNeighbour => "no-neighbour",
        }
    }
}

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Shorter than the Ethernet header and the IP header its EtherType promises.
    Truncated,
    /// An IP version other than the EtherType's.
    BadVersion,
    /// IPv4 IHL below 5, or a header longer than the frame.
    BadHeaderLength,
    /// The IPv4 header checksum does not verify.
    BadChecksum,
    /// IPv4 total length below its header length, or either family's length beyond the frame.
    BadLength,
    /// An IPv6 extension-header chain running past the packet.
    BadExtensionChain,
    /// A source no packet may come from (0/8, 127/8, multicast, 240/4; ::, ::1, ff00::/8).
    MartianSource,
    /// A destination no packet may go to (0/8, 127/8, 240/4; ::, ::1).
    MartianDestination,
    /// A blackhole route.
    Blackhole,
    /// The route's port is not one of the pipeline's (gone, or never added).
    NoPort,
}

impl DropReason {
    /// Every reason, in the order of [`Counters::drops`].
    pub const ALL: [DropReason; 10] = [
        DropReason::Truncated,
        DropReason::BadVersion,
        DropReason::BadHeaderLength,
        DropReason::BadChecksum,
        DropReason::BadLength,
        DropReason::BadExtensionChain,
        DropReason::MartianSource,
        DropReason::MartianDestination,
        DropReason::Blackhole,
        DropReason::NoPort,
    ];

    /// The reason's name in counters and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Truncated => "truncated",
            DropReason::BadVersion => "bad-version",
            DropReason::BadHeaderLength => "bad-header-length",
            DropReason::BadChecksum => "bad-checksum",
            DropReason::BadLength => "bad-length",
            DropReason::BadExtensionChain => "bad-extension-chain",
            DropReason::MartianSource => "martian-source",
            DropReason::MartianDestination => "martian-destination",
            DropReason::Blackhole => "blackhole",
            DropReason::NoPort => "no-port",
        }
    }
}

/// What the pipeline did with the frames it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames rewritten and sent out of a port.
    pub forwarded: u64,
    /// Frames handed to the kernel, by [`Punt`] reason (in [`Punt::ALL`]'s order).
    pub kernel: [u64; Punt::ALL.len()],
    /// Frames dropped, by [`DropReason`] (in [`DropReason::ALL`]'s order).
    pub drops: [u64; DropReason::ALL.len()],
}

impl Counters {
    /// Counts `decision`.
    #[inline]
    pub fn count(&mut self, decision: super::Decision) {
        match decision {
            super::Decision::Transmit(_) => self.forwarded += 1,
            super::Decision::Kernel(p) => self.kernel[p as usize] += 1,
            super::Decision::Drop(d) => self.drops[d as usize] += 1,
        }
    }

    /// The frames handed to the kernel for `reason`.
    pub fn punted(&self, reason: Punt) -> u64 {
        self.kernel[reason as usize]
    }

    /// The frames dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_in_discriminant_order_and_names_are_distinct() {
        for (i, p) in Punt::ALL.iter().enumerate() {
            assert_eq!(*p as usize, i);
        }
        for (i, d) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
        }
        let mut names: Vec<&str> = Punt::ALL.iter().map(|p| p.name()).chain(DropReason::ALL.iter().map(|d| d.name())).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Punt::ALL.len() + DropReason::ALL.len());
    }
}
