//! NFD's *best-route* strategy (`/localhost/nfd/strategy/best-route/v=5`).
//!
//! # Overview
//! An Interest goes to the cheapest eligible next hop. A Nack from it moves the Interest to the
//! cheapest next hop not yet used (never one of its downstreams); another Interest for the
//! pending name past the suppression interval (a retransmission, or another consumer's) goes to
//! the cheapest eligible next hop not yet used, or else to the one used longest ago. When every
//! upstream has Nacked, the downstreams get a Nack with the least severe reason (the
//! pipeline's default). Retransmissions are suppressed per entry, exponentially, with the
//! parameters of its name (`…/best-route/v=5/retx-suppression-max~500`).

use super::retx_suppression::{RetxParams, RetxSuppression};
use super::{ForwardingStrategy, InterestContext, Made, NackContext};
use crate::table::pit::OutRecord;

/// The best-route strategy.
#[derive(Debug)]
pub struct BestRoute {
    retx: RetxParams,
}

/// A best-route instance from its name's parameters.
///
/// # Errors
/// A parameter that is not retransmission suppression's, or a bad value.
pub fn make(parameters: &[(&str, &str)], _seed: u64) -> Made {
    Ok(Box::new(BestRoute { retx: RetxParams::from_parameters("best-route", parameters)? }))
}

/// When `face` was last sent to among `used`, if it was.
pub(super) fn sent_ms(used: &[OutRecord], face: u64) -> Option<u64> {
    used.iter().find(|r| r.face == face).map(|r| r.sent_ms)
}

impl ForwardingStrategy for BestRoute {
    fn parameters(&self) -> Vec<String> {
        self.retx.components()
    }

    fn retx_suppression(&self) -> RetxSuppression {
        RetxSuppression::PerEntry(self.retx)
    }

    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>) {
        let entry = ctx.entry;
        let used = &entry.out_records;
        let pick = if ctx.is_new {
            ctx.eligible_hops().min_by_key(|h| (h.cost, h.face))
        } else {
            let unused = ctx.eligible_hops().filter(|h| sent_ms(used, u64::from(h.face)).is_none()).min_by_key(|h| (h.cost, h.face));
            unused.or_else(|| ctx.eligible_hops().min_by_key(|h| sent_ms(used, u64::from(h.face)).unwrap_or(0)))
        };
        if let Some(face) = pick.map(|h| u64::from(h.face)) {
            ctx.send_to(face);
        }
    }

    fn after_receive_nack(&mut self, ctx: &mut NackContext<'_>) {
        let (entry, downstreams) = (ctx.entry, ctx.downstreams);
        let used = &entry.out_records;
        ctx.retry = ctx
            .route
            .unwrap_or_default()
            .iter()
            .filter(|h| !downstreams.contains(&u64::from(h.face)) && sent_ms(used, u64::from(h.face)).is_none())
            .min_by_key(|h| (h.cost, h.face))
            .map(|h| u64::from(h.face));
    }
}
