//! NFD's *multicast* strategy (`/localhost/nfd/strategy/multicast/v=5`).
//!
//! # Overview
//! An Interest goes to every eligible next hop, and so does another Interest for the pending
//! name, except to the upstreams still within their own suppression interval (retransmission
//! suppression per upstream, exponential, with the parameters of its name). The downstreams get
//! a Nack once every upstream has Nacked (the pipeline's default).

use super::retx_suppression::{RetxParams, RetxSuppression};
use super::{ForwardingStrategy, InterestContext, Made};

/// The multicast strategy.
#[derive(Debug)]
pub struct Multicast {
    retx: RetxParams,
}

/// A multicast instance from its name's parameters.
///
/// # Errors
/// A parameter that is not retransmission suppression's, or a bad value.
pub fn make(parameters: &[(&str, &str)], _seed: u64) -> Made {
    Ok(Box::new(Multicast { retx: RetxParams::from_parameters("multicast", parameters)? }))
}

/// Sends the Interest to every eligible next hop of its route.
pub(super) fn send_to_all(ctx: &mut InterestContext<'_>) {
    let hops: Vec<u64> = ctx.eligible_hops().map(|h| u64::from(h.face)).collect();
    for face in hops {
        ctx.send_to(face);
    }
}

impl ForwardingStrategy for Multicast {
    fn parameters(&self) -> Vec<String> {
        self.retx.components()
    }

    fn retx_suppression(&self) -> RetxSuppression {
        RetxSuppression::PerUpstream(self.retx)
    }

    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>) {
        send_to_all(ctx);
    }
}
