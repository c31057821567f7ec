//! BPF for AF_XDP ports: instructions encoded by hand, the redirect program, and the `bpf(2)`
//! calls that load and attach it.

pub mod insn;
pub mod redirect;
#[allow(unsafe_code)]
pub(crate) mod syscall;
