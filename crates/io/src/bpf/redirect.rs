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

use super::insn::{Assembler, Insn, R0, R1, R2, R3, R4};

/// The verdict that hands a frame to the kernel's stack.
pub const XDP_PASS: i32 = 2;
/// `bpf_redirect_map`'s helper number.
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const ETHER_HEADER: i32 = crate::pool::ETHER_HEADER_BYTES as i32;

/// The most EtherTypes one program tests.
pub const MAX_ETHERTYPES: usize = 16;

/// The program for the XSKMAP of descriptor `map_fd`, taking frames of `ethertypes` (empty:
/// every frame).
///
/// # Panics
/// More than [`MAX_ETHERTYPES`] types (the port's configuration refuses them first).
pub fn program(map_fd: i32, ethertypes: &[u16]) -> Vec<Insn> {
    assert!(ethertypes.len() <= MAX_ETHERTYPES, "at most {MAX_ETHERTYPES} EtherTypes");
    let mut a = Assembler::new();
    let (take, pass) = (a.label(), a.label());
    a.load_u32(R2, R1, 0).load_u32(R3, R1, 4).mov(R4, R2).add_imm(R4, ETHER_HEADER).jump_gt(R4, R3, pass);
    if !ethertypes.is_empty() {
        a.load_u16(R4, R2, 12);
        for &t in ethertypes {
            // The header holds the type big-endian; the load reads it little-endian.
            a.jump_eq_imm(R4, i32::from(t.swap_bytes()), take);
        }
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
        let p = program(5, &[]);
        // The bounds check is the only branch: over the six redirect instructions.
        assert_eq!(p[4].off, 6);
        assert_eq!(p.len(), 13);
        assert_eq!(p[p.len() - 2].imm, XDP_PASS);
    }

    #[test]
    fn one_test_per_type_in_load_order() {
        let p = program(5, &[0x8624, 0x0800]);
        assert_eq!(p[6].imm, 0x2486);
        assert_eq!(p[7].imm, 0x0008);
        // Both jump to the redirect right after the `goto pass`.
        assert_eq!(p[6].off, 2);
        assert_eq!(p[7].off, 1);
        assert_eq!(p[8].off as usize, 6, "goto pass skips the six redirect instructions");
    }
}
