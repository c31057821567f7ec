//! NDNLPv2, the link service between a face and the pipeline.
//!
//! # Overview
//! - [`packet`]: what arrived on a face, classified: the NDNLPv2 fields the forwarder uses and
//!   the Interest, Data or Nack inside; every failure a drop reason.
//! - [`fragmentation`]: packets cut into fragments for a face's MTU and put back together.
//! - [`reliability`]: link reliability — Acks, and retransmission of what a link lost.
//! - [`congestion`]: congestion marking on a face's send queue.
//! - [`encode`]: the TLVs and NDNLPv2 headers the forwarder writes.
//! - [`rtt`]: round-trip estimates, for reliability and the strategies that measure upstreams.

pub mod congestion;
pub mod encode;
pub mod fragmentation;
pub mod packet;
pub mod reliability;
pub mod rtt;
