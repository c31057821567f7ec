//! NFD's *self-learning* strategy (`/localhost/nfd/strategy/self-learning/v=1`), for LANs and
//! ad hoc networks where no routing runs.
//!
//! # Overview
//! - An Interest with a route goes to every eligible next hop, marked NonDiscovery.
//! - A *discovery* Interest (not so marked) with no route is broadcast on every eligible face to
//!   another host. The Data that answers it carries a prefix announcement from the producer's
//!   forwarder, and each forwarder on the way back learns a route from it (asked of the RIB).
//! - Data that came along a known route gets this forwarder's own announcement for its name
//!   when a downstream sent a discovery Interest from another host (NFD's `needPrefixAnn`: a
//!   producer's forwarder announces it to the network).
//! - A Nack NoRoute along a learned route unlearns it, and every downstream is Nacked at once.
//! - As NFD's, it Nacks only a NonDiscovery Interest with no route; one whose route (or
//!   broadcast) leaves no eligible face is dropped without a Nack (counted `no-eligible-hop`),
//!   since a Nack NoRoute would make a self-learning downstream unlearn its route through this
//!   forwarder.
//! - No retransmission is suppressed; it takes no parameters.

use nexthop_wire::NackReason;

use super::retx_suppression::RetxSuppression;
use super::{no_parameters, DataContext, ForwardingStrategy, InterestContext, Made, NackContext};
use crate::face::FaceId;

/// The self-learning strategy.
#[derive(Debug)]
pub struct SelfLearning;

/// A self-learning instance (it takes no parameters).
///
/// # Errors
/// Any parameter.
pub fn make(parameters: &[(&str, &str)], _seed: u64) -> Made {
    no_parameters("self-learning", parameters)?;
    Ok(Box::new(SelfLearning))
}

impl ForwardingStrategy for SelfLearning {
    fn retx_suppression(&self) -> RetxSuppression {
        RetxSuppression::None
    }

    fn after_receive_interest(&mut self, ctx: &mut InterestContext<'_>) {
        let faces = ctx.faces;
        let to: Vec<FaceId> = match ctx.route {
            // A known route: every next hop, marked NonDiscovery.
            Some(route) if !route.hops.is_empty() => {
                ctx.mark_non_discovery();
                route.hops.iter().map(|h| u64::from(h.face)).filter(|&f| faces.eligible(f)).collect()
            }
            // A discovery Interest with none: every face to another host.
            _ if !ctx.non_discovery => {
                let mut all: Vec<FaceId> = faces.nonlocal.iter().copied().filter(|&f| faces.eligible(f)).collect();
                all.sort_unstable();
                all
            }
            _ => return, // NonDiscovery with no route: Nack NoRoute.
        };
        ctx.drop_silently();
        for face in to {
            ctx.send_to(face);
        }
    }

    fn after_receive_data(&mut self, ctx: &mut DataContext<'_>) {
        let entry = ctx.entry;
        let along_route = entry.out_records.iter().find(|r| r.face == ctx.upstream).is_some_and(|r| r.non_discovery);
        if !along_route {
            let Some(pa) = ctx.prefix_announcement else { return };
            ctx.learn = Some(pa.to_vec());
            ctx.attach = Some(pa.to_vec());
            return;
        }
        let waiting = entry.in_records.iter().filter(|r| r.expires_ms > ctx.now_ms);
        let discovery = waiting.clone().any(|r| !r.non_discovery);
        let to_another_host = waiting.clone().any(|r| ctx.nonlocal.contains(&r.face));
        if !(discovery && to_another_host) || ctx.announcements.is_empty() {
            return;
        }
        let (name, now_ms) = (ctx.name, ctx.now_ms);
        ctx.attach = (0..=name.len())
            .rev()
            .find_map(|n| ctx.announcements.get(name.prefix(n).value()).filter(|a| a.expires_ms > now_ms).map(|a| a.wire.clone()));
    }

    fn after_receive_nack(&mut self, ctx: &mut NackContext<'_>) {
        if ctx.reason == NackReason::NoRoute {
            // The route learned through the upstream leads nowhere now: forget it, and tell every
            // downstream at once.
            ctx.unlearn = true;
            ctx.nack_now = true;
        }
    }
}
