//! The XDP program of an AF_XDP port: frames of the EtherTypes the port takes go to the AF_XDP
//! socket of the queue they arrived on; every other frame passes to the kernel.
//!
//! # Overview
//! The listing, in the kernel's assembler syntax (`xdp_md`: `data` at 0, `data_end` at 4,
//! `rx_queue_index` at 16):
//! ```text
//!     r2 = *(u32 *)(r1 + 0)          ; data
//!     r3 = *(u32 *)(r1 + 4)          ; data_end
//!     r4 = r2
//!     r4 += 14
//!     if r4 > r3 goto pass           ; shorter than an Ethernet header
//!     r4 = *(u16 *)(r2 + 12)         ; the EtherType, as its bytes load little-endian
//!     if r4 == <type 1> goto take    ; one test per EtherType (none: every frame is taken)
//!     ...
//!     goto pass
//! take:
//!     r2 = *(u32 *)(r1 + 16)         ; rx_queue_index
//!     r1 = <the XSKMAP>
//!     r3 = XDP_PASS                  ; no socket on this queue: to the kernel
//!     call bpf_redirect_map
//!     exit
//! pass:
//!     r0 = XDP_PASS
//!     exit
//! ```
//! Frames too short for an Ethernet header pass too: the kernel counts and drops them as it
//! would without the port.
//!
//! With [`Filter::neighbour_discovery_to_kernel`] and IPv6 among the types, an IPv6 frame is
//! looked into first: ICMPv6 neighbour discovery (router and neighbour solicitations and
//! advertisements, redirects: types 133–137) passes to the kernel, which must see it arrive on
//! its interface to answer it; every other IPv6 frame (a short one too) is taken:
//! ```text
//! ipv6:
//!     r4 = r2
//!     r4 += 55                       ; Ethernet + IPv6 header + the ICMPv6 type
//!     if r4 > r3 goto take
//!     r4 = *(u8 *)(r2 + 20)          ; Next Header
//!     if r4 != 58 goto take          ; not ICMPv6
//!     r4 = *(u8 *)(r2 + 54)          ; ICMPv6 type
//!     if r4 < 133 goto take
//!     if r4 > 137 goto take
//!     goto pass
//! ```

use super::insn::{Assembler, Insn, R0, R1, R2, R3, R4};

/// The verdict that hands a frame to the kernel's stack.
pub const XDP_PASS: i32 = 2;
/// `bpf_redirect_map`'s helper number.
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const ETHER_HEADER: i32 = crate::pool::ETHER_HEADER_BYTES as i32;
const ETHERTYPE_IPV6: u16 = 0x86DD;
/// Offsets in the frame of the IPv6 Next Header and of the ICMPv6 type after the fixed header.
const IPV6_NEXT_HEADER: i16 = 14 + 6;
const ICMPV6_TYPE: i16 = 14 + 40;
const ICMPV6: i32 = 58;
/// ICMPv6 router solicitation … redirect (RFC 4861).
const ND_TYPES: std::ops::RangeInclusive<i32> = 133..=137;

/// The most EtherTypes one program tests.
pub const MAX_ETHERTYPES: usize = 16;

/// Which frames the program takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter<'a> {
    /// The EtherTypes taken (empty: every frame).
    pub ethertypes: &'a [u16],
    /// IPv6 neighbour discovery passes to the kernel even where IPv6 is taken.
    pub neighbour_discovery_to_kernel: bool,
}

/// The program for the XSKMAP of descriptor `map_fd`, taking the frames `filter` names.
///
/// # Panics
/// More than [`MAX_ETHERTYPES`] types (the port's configuration refuses them first).
pub fn program(map_fd: i32, filter: Filter<'_>) -> Vec<Insn> {
    let ethertypes = filter.ethertypes;
    assert!(ethertypes.len() <= MAX_ETHERTYPES, "at most {MAX_ETHERTYPES} EtherTypes");
    let look_into_ipv6 = filter.neighbour_discovery_to_kernel && ethertypes.contains(&ETHERTYPE_IPV6);
    let mut a = Assembler::new();
    let (take, pass, ipv6) = (a.label(), a.label(), a.label());
    a.load_u32(R2, R1, 0).load_u32(R3, R1, 4).mov(R4, R2).add_imm(R4, ETHER_HEADER).jump_gt(R4, R3, pass);
    if !ethertypes.is_empty() {
        a.load_u16(R4, R2, 12);
        for &t in ethertypes {
            // The header holds the type big-endian; the load reads it little-endian.
            let to = if look_into_ipv6 && t == ETHERTYPE_IPV6 { ipv6 } else { take };
            a.jump_eq_imm(R4, i32::from(t.swap_bytes()), to);
        }
        a.goto(pass);
    }
    if look_into_ipv6 {
        a.place(ipv6);
        a.mov(R4, R2).add_imm(R4, i32::from(ICMPV6_TYPE) + 1).jump_gt(R4, R3, take);
        a.load_u8(R4, R2, IPV6_NEXT_HEADER).jump_ne_imm(R4, ICMPV6, take);
        a.load_u8(R4, R2, ICMPV6_TYPE).jump_lt_imm(R4, *ND_TYPES.start(), take).jump_gt_imm(R4, *ND_TYPES.end(), take);
        a.goto(pass);
    }
    a.place(take);
    a.load_u32(R2, R1, 16).load_map_fd(R1, map_fd).mov_imm(R3, XDP_PASS).call(BPF_FUNC_REDIRECT_MAP).exit();
    a.place(pass);
    a.mov_imm(R0, XDP_PASS).exit();
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_when_no_type_is_named() {
        let p = program(5, Filter::default());
        // The bounds check is the only branch: over the six redirect instructions.
        assert_eq!(p[4].off, 6);
        assert_eq!(p.len(), 13);
        assert_eq!(p[p.len() - 2].imm, XDP_PASS);
    }

    #[test]
    fn one_test_per_type_in_load_order() {
        let p = program(5, Filter { ethertypes: &[0x8624, 0x0800], neighbour_discovery_to_kernel: true });
        assert_eq!(p[6].imm, 0x2486);
        assert_eq!(p[7].imm, 0x0008);
        // Both jump to the redirect right after the `goto pass`.
        assert_eq!(p[6].off, 2);
        assert_eq!(p[7].off, 1);
        assert_eq!(p[8].off as usize, 6, "goto pass skips the six redirect instructions");
    }

    #[test]
    fn ipv6_is_looked_into_only_when_neighbour_discovery_passes() {
        let plain = program(5, Filter { ethertypes: &[0x0800, 0x86dd], neighbour_discovery_to_kernel: false });
        let nd = program(5, Filter { ethertypes: &[0x0800, 0x86dd], neighbour_discovery_to_kernel: true });
        assert_eq!(nd.len(), plain.len() + 9, "the nine instructions of the IPv6 check");
        // The IPv6 type jumps over `goto pass` into the check; IPv4 over the check to take.
        assert_eq!((nd[6].off, nd[7].off), (11, 1));
        assert_eq!(nd[13].imm, 58);
        assert_eq!((nd[15].imm, nd[16].imm), (133, 137));
    }
}
