//! NFD's *random* strategy (`/localhost/nfd/strategy/random/v=1`).
//!
//! # Overview
//! An Interest, and each retransmission (none is suppressed), goes to one eligible next hop
//! picked at random; the downstreams get a Nack once every upstream used has Nacked (the
//! pipeline's default). It takes no parameters.

use super::retx_suppression::RetxSuppression;
use super::{no_parameters, ForwardingStrategy, InterestContext, Made};

/// The random strategy.
#[derive(Debug)]
pub struct Random;

/// A random instance (it takes no parameters).
///
/// # Errors
/// Any parameter.
pub fn make(parameters: &[(&str, &str)], _seed: u64) -> Made {
    no_parameters("random", parameters)?;
    Ok(Box::new(Random))
}

impl ForwardingStrategy for Random {
    fn retx_suppression(&self) -> RetxSuppression {
        RetxSuppression::None
    }

    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>) {
        let draw = ctx.draw() as usize;
        let n = ctx.eligible_hops().count();
        let pick = ctx.eligible_hops().nth(draw % n.max(1)).map(|h| u64::from(h.face));
        if let Some(face) = pick {
            ctx.send_to(face);
        }
    }
}
