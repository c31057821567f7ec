//! eBPF instructions, encoded by hand: the few that an XDP program redirecting by EtherType
//! needs (there is no clang on the machines nexthop runs on, so nothing compiles C to BPF).
//!
//! # Overview
//! An [`Insn`] is the kernel's `struct bpf_insn` (opcode, destination and source registers,
//! 16-bit offset, 32-bit immediate). [`Assembler`] appends instructions and resolves forward
//! jumps to [`Label`]s, so a program reads top to bottom like its listing in the
//! kernel's `Documentation/bpf/standardization/instruction-set.rst`.

/// A register, `r0`–`r10`.
pub type Reg = u8;

/// The return value and helper result register.
pub const R0: Reg = 0;
/// The first argument (for an XDP program: its `struct xdp_md *`).
pub const R1: Reg = 1;
/// The second argument.
pub const R2: Reg = 2;
/// The third argument.
pub const R3: Reg = 3;
/// A caller-saved scratch register.
pub const R4: Reg = 4;
/// The fifth argument; caller-saved.
pub const R5: Reg = 5;
/// Callee-saved: kept across helper calls.
pub const R6: Reg = 6;
/// Callee-saved.
pub const R7: Reg = 7;
/// Callee-saved.
pub const R8: Reg = 8;
/// Callee-saved.
pub const R9: Reg = 9;
/// The read-only frame pointer (the stack grows down from it, 512 bytes).
pub const R10: Reg = 10;

// Instruction classes, sizes, modes, operations (instruction-set.rst).
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const STX: u8 = 0x03;
const JMP: u8 = 0x05;
const ALU64: u8 = 0x07;
const W: u8 = 0x00;
const H: u8 = 0x08;
const B: u8 = 0x10;
const DW: u8 = 0x18;
const IMM: u8 = 0x00;
const MEM: u8 = 0x60;
const ATOMIC: u8 = 0xc0;
const K: u8 = 0x00;
const X: u8 = 0x08;
const ADD: u8 = 0x00;
const SUB: u8 = 0x10;
const MOV: u8 = 0xb0;
const MOD: u8 = 0x90;
const LSH: u8 = 0x60;
const JA: u8 = 0x00;
const JEQ: u8 = 0x10;
const JGT: u8 = 0x20;
const JGE: u8 = 0x30;
const JNE: u8 = 0x50;
const JLT: u8 = 0xa0;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;

/// `src` of a 64-bit immediate load whose immediate is a map's file descriptor.
const PSEUDO_MAP_FD: u8 = 1;

/// One instruction, laid out as `struct bpf_insn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    /// Operation code: class | size or source | mode or operation.
    pub code: u8,
    /// Destination register in the low 4 bits, source in the high 4.
    pub regs: u8,
    /// Memory or jump offset.
    pub off: i16,
    /// Immediate.
    pub imm: i32,
}

impl Insn {
    const fn new(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
        Insn { code, regs: (src << 4) | (dst & 0x0f), off, imm }
    }

    /// The eight bytes the kernel reads.
    pub fn to_bytes(self) -> [u8; 8] {
        let [o0, o1] = self.off.to_le_bytes();
        let [i0, i1, i2, i3] = self.imm.to_le_bytes();
        [self.code, self.regs, o0, o1, i0, i1, i2, i3]
    }
}

/// A place in the program that jumps go to, placed once with [`Assembler::place`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

/// Appends instructions; jumps to a [`Label`] are resolved when it is placed.
#[derive(Debug, Default)]
pub struct Assembler {
    insns: Vec<Insn>,
    /// Per label: where it is, once placed.
    labels: Vec<Option<usize>>,
    /// Jumps waiting for their label: (instruction index, label).
    pending: Vec<(usize, Label)>,
}

impl Assembler {
    /// An empty program.
    pub fn new() -> Assembler {
        Assembler::default()
    }

    /// A new label, not yet placed.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Places `label` at the next instruction.
    pub fn place(&mut self, label: Label) {
        self.labels[label.0] = Some(self.insns.len());
    }

    fn push(&mut self, insn: Insn) -> &mut Assembler {
        self.insns.push(insn);
        self
    }

    fn jump(&mut self, code: u8, dst: Reg, src: Reg, imm: i32, to: Label) -> &mut Assembler {
        self.pending.push((self.insns.len(), to));
        self.push(Insn::new(code, dst, src, 0, imm))
    }

    /// `dst = *(u32 *)(src + off)`.
    pub fn load_u32(&mut self, dst: Reg, src: Reg, off: i16) -> &mut Assembler {
        self.push(Insn::new(LDX | MEM | W, dst, src, off, 0))
    }

    /// `dst = *(u16 *)(src + off)`.
    pub fn load_u16(&mut self, dst: Reg, src: Reg, off: i16) -> &mut Assembler {
        self.push(Insn::new(LDX | MEM | H, dst, src, off, 0))
    }

    /// `dst = *(u8 *)(src + off)`.
    pub fn load_u8(&mut self, dst: Reg, src: Reg, off: i16) -> &mut Assembler {
        self.push(Insn::new(LDX | MEM | B, dst, src, off, 0))
    }

    /// `dst = *(u64 *)(src + off)`.
    pub fn load_u64(&mut self, dst: Reg, src: Reg, off: i16) -> &mut Assembler {
        self.push(Insn::new(LDX | MEM | DW, dst, src, off, 0))
    }

    /// `*(u64 *)(dst + off) = src`.
    pub fn store_u64(&mut self, dst: Reg, off: i16, src: Reg) -> &mut Assembler {
        self.push(Insn::new(STX | MEM | DW, dst, src, off, 0))
    }

    /// `*(u32 *)(dst + off) = src`.
    pub fn store_u32(&mut self, dst: Reg, off: i16, src: Reg) -> &mut Assembler {
        self.push(Insn::new(STX | MEM | W, dst, src, off, 0))
    }

    /// `lock *(u64 *)(dst + off) += src`.
    pub fn atomic_add_u64(&mut self, dst: Reg, off: i16, src: Reg) -> &mut Assembler {
        self.push(Insn::new(STX | ATOMIC | DW, dst, src, off, i32::from(ADD)))
    }

    /// `dst = src`.
    pub fn mov(&mut self, dst: Reg, src: Reg) -> &mut Assembler {
        self.push(Insn::new(ALU64 | MOV | X, dst, src, 0, 0))
    }

    /// `dst = imm`.
    pub fn mov_imm(&mut self, dst: Reg, imm: i32) -> &mut Assembler {
        self.push(Insn::new(ALU64 | MOV | K, dst, 0, 0, imm))
    }

    /// `dst += imm`.
    pub fn add_imm(&mut self, dst: Reg, imm: i32) -> &mut Assembler {
        self.push(Insn::new(ALU64 | ADD | K, dst, 0, 0, imm))
    }

    /// `dst += src`.
    pub fn add(&mut self, dst: Reg, src: Reg) -> &mut Assembler {
        self.push(Insn::new(ALU64 | ADD | X, dst, src, 0, 0))
    }

    /// `dst -= src`.
    pub fn sub(&mut self, dst: Reg, src: Reg) -> &mut Assembler {
        self.push(Insn::new(ALU64 | SUB | X, dst, src, 0, 0))
    }

    /// `dst <<= imm`.
    pub fn lsh_imm(&mut self, dst: Reg, imm: i32) -> &mut Assembler {
        self.push(Insn::new(ALU64 | LSH | K, dst, 0, 0, imm))
    }

    /// `dst %= imm` (unsigned, 64 bits; `imm` not 0).
    pub fn mod_imm(&mut self, dst: Reg, imm: i32) -> &mut Assembler {
        self.push(Insn::new(ALU64 | MOD | K, dst, 0, 0, imm))
    }

    /// `dst = map` (the map's file descriptor, which the kernel replaces by the map).
    pub fn load_map_fd(&mut self, dst: Reg, fd: i32) -> &mut Assembler {
        self.push(Insn::new(LD | DW | IMM, dst, PSEUDO_MAP_FD, 0, fd));
        self.push(Insn::new(0, 0, 0, 0, 0))
    }

    /// `if dst > src (unsigned) goto to`.
    pub fn jump_gt(&mut self, dst: Reg, src: Reg, to: Label) -> &mut Assembler {
        self.jump(JMP | JGT | X, dst, src, 0, to)
    }

    /// `if dst != src goto to`.
    pub fn jump_ne(&mut self, dst: Reg, src: Reg, to: Label) -> &mut Assembler {
        self.jump(JMP | JNE | X, dst, src, 0, to)
    }

    /// `if dst >= imm (unsigned) goto to`.
    pub fn jump_ge_imm(&mut self, dst: Reg, imm: i32, to: Label) -> &mut Assembler {
        self.jump(JMP | JGE | K, dst, 0, imm, to)
    }

    /// `if dst == imm goto to`.
    pub fn jump_eq_imm(&mut self, dst: Reg, imm: i32, to: Label) -> &mut Assembler {
        self.jump(JMP | JEQ | K, dst, 0, imm, to)
    }

    /// `if dst != imm goto to`.
    pub fn jump_ne_imm(&mut self, dst: Reg, imm: i32, to: Label) -> &mut Assembler {
        self.jump(JMP | JNE | K, dst, 0, imm, to)
    }

    /// `if dst < imm (unsigned) goto to`.
    pub fn jump_lt_imm(&mut self, dst: Reg, imm: i32, to: Label) -> &mut Assembler {
        self.jump(JMP | JLT | K, dst, 0, imm, to)
    }

    /// `if dst > imm (unsigned) goto to`.
    pub fn jump_gt_imm(&mut self, dst: Reg, imm: i32, to: Label) -> &mut Assembler {
        self.jump(JMP | JGT | K, dst, 0, imm, to)
    }

    /// `goto to`.
    pub fn goto(&mut self, to: Label) -> &mut Assembler {
        self.jump(JMP | JA, 0, 0, 0, to)
    }

    /// Calls helper `id` (arguments in r1–r5, result in r0).
    pub fn call(&mut self, id: i32) -> &mut Assembler {
        self.push(Insn::new(JMP | CALL, 0, 0, 0, id))
    }

    /// Returns r0.
    pub fn exit(&mut self) -> &mut Assembler {
        self.push(Insn::new(JMP | EXIT, 0, 0, 0, 0))
    }

    /// The program, every jump resolved.
    ///
    /// # Panics
    /// A jump to a label never placed, or one too far for 16 bits: both bugs of the program's
    /// builder, not of any input.
    pub fn finish(mut self) -> Vec<Insn> {
        for &(at, label) in &self.pending {
            let to = self.labels[label.0].expect("every jump's label is placed");
            let off = i16::try_from(to as isize - at as isize - 1).expect("a jump within 16 bits");
            self.insns[at].off = off;
        }
        self.insns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_the_kernel_headers() {
        // r2 = *(u32 *)(r1 + 4): BPF_LDX | BPF_MEM | BPF_W = 0x61, dst 2, src 1.
        let mut a = Assembler::new();
        a.load_u32(R2, R1, 4).mov_imm(R0, 2).exit();
        let p = a.finish();
        assert_eq!(p[0].to_bytes(), [0x61, 0x12, 4, 0, 0, 0, 0, 0]);
        assert_eq!(p[1].to_bytes(), [0xb7, 0x00, 0, 0, 2, 0, 0, 0]);
        assert_eq!(p[2].to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        // r4 = *(u8 *)(r2 + 20): 0x71; if r4 != 58: 0x55; if r4 < 133: 0xa5; if r4 > 137: 0x25.
        let mut a = Assembler::new();
        let end = a.label();
        a.load_u8(R4, R2, 20).jump_ne_imm(R4, 58, end).jump_lt_imm(R4, 133, end).jump_gt_imm(R4, 137, end);
        a.place(end);
        let p = a.finish();
        assert_eq!(p[0].to_bytes(), [0x71, 0x24, 20, 0, 0, 0, 0, 0]);
        assert_eq!((p[1].code, p[2].code, p[3].code), (0x55, 0xa5, 0x25));
        assert_eq!((p[1].imm, p[2].imm, p[3].imm), (58, 133, 137));
        // *(u32 *)(r10 - 4) = r2: 0x63; lock *(u64 *)(r0 + 0) += r1: 0xdb; r9 %= 16: 0x97;
        // r9 = *(u64 *)(r0 + 8): 0x79; if r1 != r2: 0x5d; if r9 >= 7: 0x35.
        let mut a = Assembler::new();
        let end = a.label();
        a.store_u32(R10, -4, R2).atomic_add_u64(R0, 0, R1).mod_imm(R9, 16).load_u64(R9, R0, 8);
        a.jump_ne(R1, R2, end).jump_ge_imm(R9, 7, end);
        a.place(end);
        let p = a.finish();
        assert_eq!(p[0].to_bytes(), [0x63, 0x2a, 0xfc, 0xff, 0, 0, 0, 0]);
        assert_eq!(p[1].to_bytes(), [0xdb, 0x10, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p[2].to_bytes(), [0x97, 0x09, 0, 0, 16, 0, 0, 0]);
        assert_eq!(p[3].to_bytes(), [0x79, 0x09, 8, 0, 0, 0, 0, 0]);
        assert_eq!((p[4].code, p[4].regs, p[5].code), (0x5d, 0x21, 0x35));
        // r1 += r2: 0x0f; r0 <<= 8: 0x67.
        let mut a = Assembler::new();
        a.add(R1, R2).lsh_imm(R0, 8).sub(R2, R3);
        let p = a.finish();
        assert_eq!((p[0].code, p[0].regs, p[1].code, p[1].imm), (0x0f, 0x21, 0x67, 8));
        assert_eq!((p[2].code, p[2].regs), (0x1f, 0x32));
    }

    #[test]
    fn jumps_count_from_the_next_instruction() {
        let mut a = Assembler::new();
        let end = a.label();
        a.jump_eq_imm(R2, 7, end).mov_imm(R0, 1).load_map_fd(R1, 9);
        a.place(end);
        a.exit();
        let p = a.finish();
        assert_eq!(p[0].off, 3, "over the move and the two halves of the 64-bit load");
        assert_eq!((p[2].code, p[2].regs, p[2].imm), (0x18, 0x11, 9));
        let back = a_loop();
        assert_eq!(back[1].off, -2);
    }

    fn a_loop() -> Vec<Insn> {
        let mut a = Assembler::new();
        let top = a.label();
        a.place(top);
        a.mov_imm(R0, 0).goto(top);
        a.finish()
    }
}
