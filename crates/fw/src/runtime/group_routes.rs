//! Static routes (`[[route]]`, route files) whose next hop is a multicast group — a UDP group
//! (`udp4://224.0.23.170:56363`) or an Ethernet one (`ether://[01:00:5e:00:17:aa]`) — rather
//! than a face the forwarder can make itself.
//!
//! # Overview
//! A group's face is made from `faces.udp_multicast` or `faces.ether_multicast` on the
//! interfaces there are, and comes and goes with them (`multicast_faces`, `ether_ports`). So
//! such a route is kept here, by URI, and follows the group's face: it goes on the group's
//! face (the one of lowest id if several interfaces have one) whenever there is one — at the
//! start, or later when an interface comes up — and when that face closes (its routes go with
//! it), on the next face of the group there is or will be. A group with no face at the start
//! is not an error: the forwarder starts and the route waits.

use nexthop_wire::Name;

use crate::face::uri::FaceUri;
use crate::face::FaceId;
use crate::mgmt::rib::{Route, CHILD_INHERIT, ORIGIN_STATIC};

use super::Runtime;

/// A static route to a group's face.
#[derive(Debug, Clone)]
pub(super) struct GroupRoute {
    pub(super) prefix: Name,
    /// The group's URI as written.
    pub(super) uri: String,
    pub(super) group: FaceUri,
    pub(super) cost: u64,
    /// The face it is on now.
    pub(super) on: Option<FaceId>,
}

/// Whether `uri` names a multicast group (whose face the forwarder cannot make on request).
pub(super) fn is_group(uri: &FaceUri) -> bool {
    match uri {
        FaceUri::Udp(a) => a.ip().is_multicast(),
        FaceUri::Ether(m) => m.is_multicast(),
        _ => false,
    }
}

impl Runtime {
    /// Puts each group route that is on no face now on its group's face, if there is one.
    pub(super) fn route_groups(&mut self) {
        for i in 0..self.group_routes.len() {
            let r = &self.group_routes[i];
            if r.on.is_some_and(|id| self.faces.faces.contains_key(&id)) {
                continue;
            }
            let face = self.faces.faces.values().filter(|f| f.uri == r.group).map(|f| f.id).min();
            let (prefix, group, cost) = (r.prefix.clone(), r.group.to_string(), r.cost);
            self.group_routes[i].on = face;
            let Some(face) = face else { continue };
            let route = Route { face, origin: ORIGIN_STATIC, cost, flags: CHILD_INHERIT, expires_ms: None };
            let (manager, mut host) = self.host();
            match manager.add_route(&mut host, &prefix, route) {
                Ok(()) => tracing::info!(face, "route {prefix} to {group}: on face {face}"),
                Err(e) => tracing::warn!("route {prefix} to {group}: {e}"),
            }
        }
        self.flush_workers();
        self.forwarding.publish_fib();
    }
}
