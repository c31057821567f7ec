//! Reloading the configuration while forwarding: `nexthop run` on SIGHUP, as NFD reloads
//! nfd.conf (`systemctl reload`).
//!
//! # Overview
//! The new configuration is checked whole before anything changes — its values, the
//! authorizations' certificate files, the validators' rules and trust anchors, the strategies'
//! names — so a file with a mistake changes nothing: [`Runtime::reload`] returns the error and
//! the forwarder goes on as it was. Then, as NFD applies a reload:
//! - `[[authorize]]`: who may command which module;
//! - `forwarder.localhop_security`, `localhost_security` and `prefix_announcement_security`
//!   (commands already waiting for a certificate go on under the new validator), and
//!   `forwarder.localhop_prefix_registration` with them (nfd.conf turns it on and off with
//!   `rib.localhop_security`: a file that drops that section stops the registrations it
//!   checked, rather than leaving them unchecked);
//! - `[[strategy]]`: each choice is set; one no longer in the file stays, as in NFD
//!   (`strategy-unset` removes it);
//! - `content_store.capacity` (at most what the store allocated at start),
//!   `content_store.unsolicited_policy` and `forwarder.default_hop_limit`;
//! - `faces.udp_idle_timeout_ms`, `ether_idle_timeout_ms` and `send_buffer_bytes`, and for
//!   the faces made from then on `faces.udp_mtu`, `faces.congestion_marking`, `faces.tcp_local`
//!   with `tcp_local_exclude`, and `udp_multicast_ad_hoc` and `ether_multicast_ad_hoc` (a face
//!   keeps the MTU, marking, scope and link type it has, as `faces/update` leaves them and NFD
//!   keeps a multicast face's link type);
//! - the UDP multicast faces (`faces.udp_multicast`, `udp6_multicast`, their interface rules
//!   and `udp_multicast_exclude`) and the Ethernet ports (`faces.ether_multicast`,
//!   `ether_interfaces`, `ether_exclude`, `ether_listen`), with `named_interfaces_required`:
//!   faces and ports no longer chosen are closed and new ones made, as NFD's factories apply a
//!   reload (`multicast_faces`, `ether_ports`);
//! - the listeners (`faces.unix`, `tcp`, `websocket`): a changed one is opened anew and the
//!   old one closed (faces it accepted stay) — NFD opens new channels but cannot close old
//!   ones; `faces.udp` is opened where there was none (its socket carries every unicast UDP
//!   face, so changing it takes a restart). The new listeners are bound before anything else
//!   changes: one that cannot bind (an address in use) makes the reload change nothing;
//! - the static faces and routes (`[[face]]`, `[[route]]`, route files, read again): routes
//!   no longer listed removed, new or changed ones added, new faces made, and the faces the
//!   configuration made and no longer names closed (`static_config`);
//! - `forwarder.log_level`, which `nexthop run` applies (it owns the logger).
//!
//! The rest — threads and table sizes, the SSD tier, prefix propagation, the keychain — is
//! set up at start: a
//! section that changed is named in the warnings [`Runtime::reload`] returns, and takes effect
//! at the next start.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mio::net::{TcpListener, UdpSocket, UnixListener};

use super::link::LinkSettings;
use super::{
    authorizations_of, bind_tcp, bind_udp, bind_unix, register_listener, strategies_of, validators_of, Runtime, StartError, TCP_LISTENER,
    UDP_SOCKET, UNIX_LISTENER, WS_LISTENER,
};
use crate::conf::config::Config;
use crate::face::local_addresses::LocalAddresses;
use crate::mgmt::Host;
use crate::pipeline::{Control, UnsolicitedPolicy};

/// Reads the configuration again (the file `nexthop run` was started with).
pub type LoadConfig = Box<dyn FnMut() -> Result<Config, String> + Send>;

/// Tells the operator how a reload went: its warnings, or why nothing changed.
pub type ReportReload = Box<dyn FnMut(&Result<Vec<String>, String>) + Send>;

/// A reload asked for (by a SIGHUP handler), how to read the configuration again, and whom to
/// tell.
pub(super) struct Reloader {
    requested: Arc<AtomicBool>,
    load: LoadConfig,
    report: ReportReload,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader").field("requested", &self.requested).finish_non_exhaustive()
    }
}

impl Runtime {
    /// Applies what can change of `new` while forwarding (see the module overview); the
    /// warnings name what changed but takes a restart.
    ///
    /// # Errors
    /// [`StartError::Config`] naming what is wrong with `new`; nothing has changed then.
    pub fn reload(&mut self, new: Config) -> Result<Vec<String>, StartError> {
        new.validate().map_err(|e| StartError::Config(e.to_string()))?;
        let authorizations = authorizations_of(&new)?;
        let validators = validators_of(&new)?;
        let strategies = strategies_of(&new)?;
        let unsolicited = UnsolicitedPolicy::from_name(&new.content_store.unsolicited_policy)
            .ok_or_else(|| StartError::Config("content_store.unsolicited_policy".into()))?;
        let tcp_local = LocalAddresses::parse(&new.faces.tcp_local, &new.faces.tcp_local_exclude).map_err(StartError::Config)?;

        let routes = super::static_config::listed_routes(&new)?;
        let listeners = NewListeners::bind(&self.cfg, &new)?;

        let mut warnings = restart_only(&self.cfg, &new);
        self.put_listeners(listeners)?;
        self.manager.reconfigure(authorizations, validators);
        let (manager, mut host) = self.host();
        // A choice already in force is left as it is (its strategy keeps what it measured).
        for (prefix, strategy) in strategies {
            if manager.strategy_at(&prefix) != Some(&strategy) {
                manager.set_strategy(&mut host, &prefix, strategy);
            }
        }
        let asked = u64::from(new.content_store.capacity);
        let (capacity, _) = host.configure_cs(Some(asked), None, None);
        if capacity < asked {
            warnings.push(format!("content_store.capacity: {capacity} packets, what the store allocated at start; more takes a restart"));
        }
        host.apply(Control::SetUnsolicited(unsolicited));
        host.apply(Control::SetDefaultHopLimit(new.forwarder.default_hop_limit));
        self.flush_workers();
        self.faces.links.settings = LinkSettings::of(&new.faces);
        self.faces.congestion_marking = new.faces.congestion_marking;
        self.faces.tcp_local = tcp_local;

        take_reloadable(&mut self.cfg, &new);
        if let Err(e) = self.sync_multicast_faces(false) {
            warnings.push(format!("multicast faces: {e}"));
        }
        if let Err(e) = self.sync_ether_ports(false) {
            warnings.push(format!("Ethernet ports: {e}"));
        }
        warnings.extend(self.reapply_static_config(&new, routes));
        take_static(&mut self.cfg, &new);
        Ok(warnings)
    }

    /// Reloads the configuration from `load` whenever `requested` is set (by a SIGHUP handler),
    /// within a turn of the loop; each outcome is logged and given to `report`.
    pub fn reload_on(&mut self, requested: Arc<AtomicBool>, load: LoadConfig, report: ReportReload) {
        self.reloader = Some(Reloader { requested, load, report });
    }

    /// A reload, if one was asked for since the last turn.
    pub(super) fn reload_if_requested(&mut self) {
        let Some(r) = self.reloader.as_mut() else { return };
        if !r.requested.swap(false, Ordering::Relaxed) {
            return;
        }
        // As the starting user: the files read and the listeners bound may need it.
        let privileges = std::mem::take(&mut self.privileges);
        let outcome = privileges.elevated(|| {
            let r = self.reloader.as_mut().expect("checked above");
            (r.load)().and_then(|cfg| self.reload(cfg).map_err(|e| e.to_string()))
        });
        self.privileges = privileges;
        match &outcome {
            Ok(warnings) => {
                for w in warnings {
                    tracing::warn!("reload: {w}");
                }
                tracing::info!("configuration reloaded");
            }
            Err(e) => tracing::error!("configuration not reloaded, nothing changed: {e}"),
        }
        if let Some(r) = self.reloader.as_mut() {
            (r.report)(&outcome);
        }
    }
}

/// The listeners a reload changes, bound before anything else changes (`Some(l)`: the new
/// listener, `None` inside for none; `None`: unchanged).
struct NewListeners {
    unix: Option<Option<(UnixListener, String)>>,
    tcp: Option<Option<TcpListener>>,
    websocket: Option<Option<TcpListener>>,
    /// The UDP socket, where there was none.
    udp: Option<UdpSocket>,
}

impl NewListeners {
    /// Binds what changed from `old` to `new`.
    fn bind(old: &Config, new: &Config) -> Result<NewListeners, StartError> {
        let (old, f) = (&old.faces, &new.faces);
        let unix = match (&f.unix, f.unix != old.unix) {
            (_, false) => None,
            (path, true) if path.is_empty() => Some(None),
            (path, true) => Some(Some((bind_unix(path)?, path.clone()))),
        };
        let tcp = (f.tcp != old.tcp).then(|| bind_tcp(&f.tcp, "tcp")).transpose()?;
        let websocket = (f.websocket != old.websocket).then(|| bind_tcp(&f.websocket, "websocket")).transpose()?;
        let udp = if old.udp.is_empty() { bind_udp(&f.udp)? } else { None };
        Ok(NewListeners { unix, tcp, websocket, udp })
    }
}

impl Runtime {
    /// Puts `new` listeners in place of the old ones, which close (a Unix socket's file with
    /// its listener).
    fn put_listeners(&mut self, new: NewListeners) -> Result<(), StartError> {
        let poll = &self.poll;
        if let Some(mut unix) = new.unix {
            if let Some((mut l, path)) = self.unix.take() {
                let _ = poll.registry().deregister(&mut l);
                let _ = std::fs::remove_file(path);
            }
            register_listener(poll, unix.as_mut().map(|(l, _)| l), UNIX_LISTENER)?;
            self.unix = unix;
        }
        for (new, old, token) in [(new.tcp, &mut self.tcp, TCP_LISTENER), (new.websocket, &mut self.websocket, WS_LISTENER)] {
            let Some(mut new) = new else { continue };
            if let Some(mut l) = old.take() {
                let _ = poll.registry().deregister(&mut l);
            }
            register_listener(poll, new.as_mut(), token)?;
            *old = new;
        }
        if let Some(mut udp) = new.udp {
            register_listener(poll, Some(&mut udp), UDP_SOCKET)?;
            self.faces.links.udp.rebind(udp);
        }
        self.listening = self.bound();
        Ok(())
    }
}

/// Copies into `to` the settings of `from` that a reload applies (the module overview's list):
/// what the running configuration takes, and what comparing two configurations leaves out.
fn take_reloadable(to: &mut Config, from: &Config) {
    to.authorize.clone_from(&from.authorize);
    to.strategy.clone_from(&from.strategy);
    let (f, new) = (&mut to.forwarder, &from.forwarder);
    f.log_level.clone_from(&new.log_level);
    f.localhop_prefix_registration = new.localhop_prefix_registration;
    f.default_hop_limit = new.default_hop_limit;
    f.localhop_security.clone_from(&new.localhop_security);
    f.localhost_security.clone_from(&new.localhost_security);
    f.prefix_announcement_security.clone_from(&new.prefix_announcement_security);
    to.content_store.capacity = from.content_store.capacity;
    to.content_store.unsolicited_policy.clone_from(&from.content_store.unsolicited_policy);
    let (f, new) = (&mut to.faces, &from.faces);
    (f.udp_idle_timeout_ms, f.ether_idle_timeout_ms, f.send_buffer_bytes) =
        (new.udp_idle_timeout_ms, new.ether_idle_timeout_ms, new.send_buffer_bytes);
    f.tcp_local.clone_from(&new.tcp_local);
    f.tcp_local_exclude.clone_from(&new.tcp_local_exclude);
    (f.udp_multicast_ad_hoc, f.ether_multicast_ad_hoc) = (new.udp_multicast_ad_hoc, new.ether_multicast_ad_hoc);
    f.unix.clone_from(&new.unix);
    f.tcp.clone_from(&new.tcp);
    f.websocket.clone_from(&new.websocket);
    if f.udp.is_empty() {
        f.udp.clone_from(&new.udp);
    }
    (f.udp_mtu, f.congestion_marking) = (new.udp_mtu, new.congestion_marking);
    (f.udp_multicast, f.udp6_multicast) = (new.udp_multicast.clone(), new.udp6_multicast.clone());
    f.udp_multicast_interfaces.clone_from(&new.udp_multicast_interfaces);
    f.udp6_multicast_interfaces.clone_from(&new.udp6_multicast_interfaces);
    f.udp_multicast_exclude.clone_from(&new.udp_multicast_exclude);
    f.ether_multicast.clone_from(&new.ether_multicast);
    f.ether_interfaces.clone_from(&new.ether_interfaces);
    f.ether_exclude.clone_from(&new.ether_exclude);
    (f.ether_listen, f.named_interfaces_required) = (new.ether_listen, new.named_interfaces_required);
}

/// Takes the static faces and routes of `from` into `to` (once they are applied).
fn take_static(to: &mut Config, from: &Config) {
    to.face.clone_from(&from.face);
    to.route.clone_from(&from.route);
    to.route_files.clone_from(&from.route_files);
}

/// The sections that differ between `old` and `new` but are set up at start only.
fn restart_only(old: &Config, new: &Config) -> Vec<String> {
    // `old` with what a reload applies taken from `new`: what still differs takes a restart.
    let mut old = old.clone();
    take_reloadable(&mut old, new);
    take_static(&mut old, new);
    let mut changed = Vec::new();
    if old.forwarder != new.forwarder {
        changed.push("forwarder");
    }
    if old.faces != new.faces {
        changed.push("faces");
    }
    if old.content_store != new.content_store {
        changed.push("content_store");
    }
    if old.propagate != new.propagate || old.keychain != new.keychain {
        changed.push("prefix propagation and the keychain");
    }
    if old.router != new.router {
        changed.push("router");
    }
    if old.switch != new.switch {
        changed.push("switch");
    }
    changed.into_iter().map(|s| format!("{s}: changed, and takes effect at the next start")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::Persistency;
    use crate::mgmt::rib::{Route, CHILD_INHERIT};
    use nexthop_wire::Name;

    /// A forwarder with no listeners (nothing to bind), one thread.
    fn quiet() -> Config {
        let mut cfg = Config::default();
        (cfg.faces.unix, cfg.faces.tcp, cfg.faces.udp, cfg.faces.websocket) = (String::new(), String::new(), String::new(), String::new());
        cfg.forwarder.threads = 1;
        cfg
    }

    const ANY: &str = "trust-anchor\n{\n  type any\n}\n";

    #[test]
    fn a_bad_file_changes_nothing() {
        let mut rt = Runtime::new(quiet()).unwrap();
        let before = rt.cfg.clone();
        let mut bad = quiet();
        bad.content_store.capacity = 10;
        bad.strategy.push(crate::conf::config::StaticStrategy { prefix: "/x".into(), strategy: "no-such".into() });
        assert!(matches!(rt.reload(bad), Err(StartError::Config(e)) if e.contains("no-such")));
        let mut bad = quiet();
        bad.forwarder.localhost_security = "rule {".into();
        assert!(rt.reload(bad).is_err(), "a validator that does not parse");
        assert_eq!(rt.cfg, before);
    }

    #[test]
    fn what_reloads_applies_and_the_rest_is_named() {
        let mut old = quiet();
        old.forwarder.localhop_prefix_registration = true;
        old.forwarder.localhop_security = ANY.into();
        let mut rt = Runtime::new(old).unwrap();
        assert!(rt.manager.has_validator(crate::mgmt::RibTrust::Localhop));
        // nfd.conf without its localhop_security section: registrations from one hop away stop.
        let mut new = quiet();
        new.faces.udp_mtu = 1000;
        new.forwarder.threads = 2;
        new.strategy.push(crate::conf::config::StaticStrategy { prefix: "/x".into(), strategy: "multicast".into() });
        let warnings = rt.reload(new).unwrap();
        assert_eq!(warnings, ["forwarder: changed, and takes effect at the next start"]);
        assert!(!rt.cfg.forwarder.localhop_prefix_registration);
        assert!(!rt.manager.has_validator(crate::mgmt::RibTrust::Localhop));
        assert_eq!((rt.faces.links.settings.udp_mtu, rt.cfg.forwarder.threads), (1000, 1), "the threads wait for a restart");
        let x = nexthop_wire::Name::from_uri("/x").unwrap();
        assert_eq!(rt.manager.strategy_at(&x), crate::pipeline::strategy::registry::StrategyName::from_text("multicast").ok().as_ref());
    }

    /// A reload removes the routes the file no longer lists, replaces those whose cost
    /// changed, adds new ones (making their faces), reads route files again, and makes a face
    /// closed meanwhile again for its routes; a route file with a bad line changes nothing.
    #[test]
    fn static_routes_follow_a_reload() {
        use crate::conf::config::StaticRoute;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("routes");
        let route = |prefix: &str, face: &str, cost: u64| StaticRoute { prefix: prefix.into(), face: face.into(), cost };
        let routes = |rt: &Runtime| {
            let mut v: Vec<(String, u64)> =
                rt.manager.rib().iter().flat_map(|(p, l)| l.iter().map(move |r| (p.to_string(), r.cost))).collect();
            v.sort();
            v
        };
        let quiet = || Config { faces: crate::conf::config::FacesConfig { udp: "127.0.0.1:0".into(), ..quiet().faces }, ..quiet() };
        let mut old = quiet();
        old.route = vec![route("/a", "udp4://127.0.0.1:9", 1), route("/b", "udp4://127.0.0.1:9", 1)];
        std::fs::write(&file, "/f udp4://127.0.0.1:9 3\n").unwrap();
        old.route_files = vec![file.clone()];
        let mut rt = Runtime::new(old).unwrap();
        assert_eq!(routes(&rt), [("/a".into(), 1), ("/b".into(), 1), ("/f".into(), 3)]);
        let mut new = quiet();
        new.route = vec![route("/b", "udp4://127.0.0.1:9", 5), route("/c", "udp4://127.0.0.1:10", 2)];
        std::fs::write(&file, "/f udp4://127.0.0.1:9 3\n/g udp4://127.0.0.1:9 4\n").unwrap();
        new.route_files = vec![file.clone()];
        assert_eq!(rt.reload(new.clone()).unwrap(), Vec::<String>::new(), "nothing waits for a restart");
        assert_eq!(routes(&rt), [("/b".into(), 5), ("/c".into(), 2), ("/f".into(), 3), ("/g".into(), 4)]);
        // The face of /c closed by an operator: the next reload makes it, and the route, again.
        let c_face = rt.static_routes.get(&Name::from_uri("/c").unwrap(), "udp4://127.0.0.1:10").unwrap().0;
        let (manager, mut host) = rt.host();
        assert!(host.destroy_face(c_face));
        manager.face_gone(&mut host, c_face);
        assert!(!routes(&rt).contains(&("/c".into(), 2)));
        rt.reload(new.clone()).unwrap();
        assert!(routes(&rt).contains(&("/c".into(), 2)));
        // A bad line: nothing changes.
        std::fs::write(&file, "/f udp4://127.0.0.1:9 3\n/h not-a-face-uri:::\n").unwrap();
        let mut bad = new.clone();
        bad.route.clear();
        assert!(matches!(rt.reload(bad), Err(StartError::Config(e)) if e.contains(":2")));
        assert_eq!(routes(&rt), [("/b".into(), 5), ("/c".into(), 2), ("/f".into(), 3), ("/g".into(), 4)]);
    }

    /// A reload closes the faces the configuration made and no longer names (as a `[[face]]`
    /// or a route's next hop), with the routes management put on them; a face that management
    /// made, listed for a while, stays when the file drops it.
    #[test]
    fn unlisted_static_faces_close_on_reload() {
        use crate::conf::config::{StaticFace, StaticRoute};
        let quiet = || Config { faces: crate::conf::config::FacesConfig { udp: "127.0.0.1:0".into(), ..quiet().faces }, ..quiet() };
        let face = |uri: &str| StaticFace { uri: uri.into(), local: None };
        let (listed, routed, by_hand) = ("udp4://127.0.0.1:11", "udp4://127.0.0.1:12", "udp4://127.0.0.1:13");
        let mut old = quiet();
        old.face = vec![face(listed)];
        old.route = vec![StaticRoute { prefix: "/r".into(), face: routed.into(), cost: 1 }];
        let mut rt = Runtime::new(old.clone()).unwrap();
        let id_of = |rt: &mut Runtime, uri: &str| {
            let (_, host) = rt.host();
            host.faces().into_iter().find(|f| f.uri == uri).map(|f| f.face_id)
        };
        let (listed_id, routed_id) = (id_of(&mut rt, listed).unwrap(), id_of(&mut rt, routed).unwrap());
        // An operator makes a face by hand and registers a route on the listed face.
        let (manager, mut host) = rt.host();
        let (hand, made) =
            host.create_face(&crate::sys::interfaces::parse_face_uri(by_hand).unwrap(), None, Persistency::Persistent).unwrap();
        assert!(made);
        let m = Route { face: listed_id, origin: 0, cost: 0, flags: CHILD_INHERIT, expires_ms: None };
        manager.add_route(&mut host, &Name::from_uri("/m").unwrap(), m).unwrap();
        // The file lists the hand-made face too: it is found, not made.
        let mut with_hand = old.clone();
        with_hand.face.push(face(by_hand));
        assert_eq!(rt.reload(with_hand).unwrap(), Vec::<String>::new());
        assert_eq!(id_of(&mut rt, by_hand), Some(hand.face_id));
        // The same file again closes nothing.
        rt.reload(old.clone()).unwrap();
        assert_eq!((id_of(&mut rt, listed), id_of(&mut rt, routed)), (Some(listed_id), Some(routed_id)));
        // The listed face dropped: it closes, with management's route on it; the routed face
        // stays while its route does, then goes with it.
        let mut fewer = old.clone();
        fewer.face.clear();
        rt.reload(fewer.clone()).unwrap();
        assert_eq!(id_of(&mut rt, listed), None);
        assert!(rt.manager.rib().iter().all(|(p, _)| p.to_string() != "/m"), "management's route went with its face");
        assert_eq!(id_of(&mut rt, routed), Some(routed_id));
        fewer.route.clear();
        rt.reload(fewer).unwrap();
        assert_eq!(id_of(&mut rt, routed), None);
        assert_eq!(id_of(&mut rt, by_hand), Some(hand.face_id), "not the configuration's own");
        assert!(rt.static_faces.is_empty());
    }

    /// A reload opens the listeners it adds or changes and closes those it removes or
    /// replaces; a UDP socket opens where there was none, but changing one takes a restart; a
    /// listener that cannot bind changes nothing.
    #[test]
    fn listeners_follow_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let mut rt = Runtime::new(quiet()).unwrap();
        let mut with = quiet();
        with.faces.unix = dir.path().join("a.sock").to_string_lossy().into_owned();
        (with.faces.tcp, with.faces.websocket, with.faces.udp) = ("127.0.0.1:0".into(), "127.0.0.1:0".into(), "127.0.0.1:0".into());
        assert_eq!(rt.reload(with.clone()).unwrap(), Vec::<String>::new());
        let l = rt.listening();
        let (tcp, ws) = (l.tcp.expect("tcp"), l.websocket.expect("websocket"));
        assert!(std::net::TcpStream::connect(tcp).is_ok() && std::net::TcpStream::connect(ws).is_ok());
        assert!(std::os::unix::net::UnixStream::connect(&with.faces.unix).is_ok());
        assert!(l.udp.is_some() && rt.faces.links.udp.socket.is_some());
        // Moved and removed; the UDP socket stays, with a warning.
        let mut moved = with.clone();
        moved.faces.unix = dir.path().join("b.sock").to_string_lossy().into_owned();
        (moved.faces.tcp, moved.faces.websocket, moved.faces.udp) = (String::new(), "127.0.0.2:0".into(), "[::1]:0".into());
        assert_eq!(rt.reload(moved.clone()).unwrap(), ["faces: changed, and takes effect at the next start"]);
        let l = rt.listening();
        assert!(l.tcp.is_none() && std::net::TcpStream::connect(tcp).is_err(), "the TCP listener closed");
        assert!(l.websocket.is_some_and(|a| a != ws) && std::net::TcpStream::connect(ws).is_err(), "the WebSocket one replaced");
        assert!(!std::path::Path::new(&with.faces.unix).exists(), "the old socket file went with its listener");
        assert!(std::os::unix::net::UnixStream::connect(&moved.faces.unix).is_ok());
        assert_eq!(rt.cfg.faces.udp, "127.0.0.1:0");
        // A port in use: nothing changes.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut clash = moved.clone();
        clash.faces.tcp = taken.local_addr().unwrap().to_string();
        clash.faces.udp_mtu = 1000;
        assert!(matches!(rt.reload(clash), Err(StartError::Io { .. })));
        assert!(rt.listening().tcp.is_none() && rt.faces.links.settings.udp_mtu != 1000, "nothing changed");
    }

    /// A reload that sets a UDP multicast group makes its faces, one that changes the rules
    /// closes the faces they no longer choose, and one that removes the group closes the rest.
    #[test]
    fn multicast_faces_follow_a_reload() {
        let places = |rt: &Runtime| {
            let mut v: Vec<String> = rt
                .faces
                .faces
                .values()
                .filter_map(|f| match &f.link {
                    super::super::link::Link::Multicast(m) => Some(m.local_uri()),
                    _ => None,
                })
                .collect();
            v.sort();
            v
        };
        let mut rt = Runtime::new(quiet()).unwrap();
        assert!(places(&rt).is_empty());
        let port = 40_000 + std::process::id() % 20_000;
        let mut on_lo = quiet();
        on_lo.faces.udp_multicast = format!("224.0.23.170:{port}");
        on_lo.faces.udp_multicast_interfaces = vec!["lo".into()];
        assert_eq!(rt.reload(on_lo.clone()).unwrap(), Vec::<String>::new(), "nothing waits for a restart");
        assert_eq!(places(&rt), [format!("udp4://127.0.0.1:{port}")]);
        let id = rt.faces.faces.values().find(|f| matches!(f.link, super::super::link::Link::Multicast(_))).unwrap().id;
        rt.reload(on_lo.clone()).unwrap();
        assert!(rt.faces.faces.contains_key(&id), "a face still chosen is kept");
        let mut excluded = on_lo.clone();
        excluded.faces.udp_multicast_exclude = vec!["lo".into()];
        rt.reload(excluded).unwrap();
        assert!(places(&rt).is_empty(), "excluded: closed");
        rt.reload(on_lo).unwrap();
        assert_eq!(places(&rt).len(), 1);
        rt.reload(quiet()).unwrap();
        assert!(places(&rt).is_empty(), "no group: closed");
    }
}
