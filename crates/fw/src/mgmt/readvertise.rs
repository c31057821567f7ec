//! Readvertising apps' routes to a routing daemon, as NFD's `readvertise_nlsr` does.
//!
//! Overview: an app that wants its prefix reachable from other routers registers it with origin
//! *client* (65; `ndnd put --expose` does, `nfdc route add … origin 65` too). The local routing
//! daemon (NLSR, or NDNd's ndn-dv) takes such prefixes from the forwarder through its own
//! management prefix `/localhost/nlsr`: the forwarder sends it the command Interest
//! `/localhost/nlsr/rib/register/<ControlParameters: Name, FaceId, Cost>/<digest>` (a signed
//! Interest, DigestSha256) when the route appears and `…/rib/unregister/…` when it goes. The
//! daemon then announces the prefix to its neighbours, whose forwarders get the route from their
//! own daemon.
//!
//! Announcements are sent only while a daemon has registered `/localhost/nlsr`; when one does,
//! every client route already there is announced to it. They leave from the management face like
//! an app's Interest (the daemon's answers come back to that face and end there).

use nexthop_wire::{Component, Emit, Interest, Name};

use super::params::ControlParameters;
use crate::mgmt::rib::Route;

/// Origin of routes an app asks to have announced to the network (NFD's "client").
pub const ORIGIN_CLIENT: u64 = 65;

/// The routing daemon's management prefix.
pub fn daemon_prefix() -> Name {
    Name::from_uri("/localhost/nlsr").expect("a valid name")
}

/// Whether `route` is one the daemon should hear of.
pub fn is_announced(route: &Route) -> bool {
    route.origin == ORIGIN_CLIENT
}

/// Whether the announcement is of a new route or of a route gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announce {
    /// `rib/register`.
    Register,
    /// `rib/unregister`.
    Unregister,
}

/// The command Interest announcing `route` at `prefix` to the daemon.
pub fn announcement(what: Announce, prefix: &Name, route: &Route, nonce: u32) -> Vec<u8> {
    let (verb, cost) = match what {
        Announce::Register => ("register", Some(route.cost)),
        Announce::Unregister => ("unregister", None),
    };
    let params = ControlParameters { name: Some(prefix.clone()), face_id: Some(route.face), cost, ..Default::default() };
    let name = daemon_prefix().with_generic("rib").with_generic(verb).with(Component::generic(params.encode()));
    let mut interest = Interest::new(name);
    interest.nonce = Some(nonce.to_be_bytes());
    interest.lifetime_ms = Some(4000);
    interest.set_app_parameters(Vec::new());
    interest.sign_digest_sha256();
    interest.to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_is_the_command_ndn_dv_parses() {
        let route = Route { face: 300, origin: ORIGIN_CLIENT, cost: 7, flags: 1, expires_ms: None };
        let prefix = Name::from_uri("/ndn/b/blob").unwrap();
        let wire = announcement(Announce::Register, &prefix, &route, 9);
        let name = Interest::decode(&wire).unwrap().name;
        // ndn-dv reads exactly six components: localhost, nlsr, rib, verb, parameters, digest.
        assert_eq!(name.len(), 6);
        assert!(daemon_prefix().is_prefix_of(&name));
        assert_eq!(name.get(3).unwrap().value(), b"register");
        let p = ControlParameters::decode(name.get(4).unwrap().value()).unwrap();
        assert_eq!((p.name, p.face_id, p.cost), (Some(prefix.clone()), Some(300), Some(7)));
        let gone = announcement(Announce::Unregister, &prefix, &route, 10);
        let gone = Interest::decode(&gone).unwrap().name;
        assert_eq!(gone.get(3).unwrap().value(), b"unregister");
        assert_eq!(ControlParameters::decode(gone.get(4).unwrap().value()).unwrap().cost, None);
    }
}
