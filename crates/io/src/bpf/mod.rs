//! BPF for AF_XDP ports: instructions encoded by hand, the redirect program, and the `bpf(2)`
//! calls that load and attach it; XDP programs and array maps for other tools ([`program`]).

pub mod insn;
pub mod program;
pub mod redirect;
#[allow(unsafe_code)]
pub(crate) mod syscall;
