//! The configuration's faces, routes and strategies (`[[face]]`, `[[route]]`, `route_files`,
//! `[[strategy]]`): applied at the start, and the faces and routes brought in step with the
//! file on a reload.
//!
//! # Overview
//! - A route names its next hop by face URI. At the start each listed face is made
//!   (permanent), then each route goes on its face (made if no `[[face]]` lists it). All are
//!   inserted into the RIB first and the FIB derived in one pass (route files can hold
//!   millions), then compacted. A route to a multicast group follows the group's face instead
//!   (`group_routes`).
//! - Each route applied is remembered by (prefix, face URI as written), with its face and
//!   cost ([`StaticRoutes`]). On a reload the new routes are read whole first — a bad line or
//!   a name that does not resolve changes nothing — then ([`Runtime::reapply_static_config`])
//!   routes no longer listed are removed, new ones added (their faces made), those whose cost
//!   changed replaced, and the faces the new file lists made.
//! - The faces the configuration made are remembered ([`StaticFaces`]). A reload closes those
//!   the new file no longer names — neither as a `[[face]]` nor as a route's next hop — with
//!   every route through them, management's too, as `faces/destroy` would. A face the
//!   configuration found already there (made by management, or a multicast face) is not its
//!   own, and stays.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use nexthop_wire::Name;

use crate::conf::config::Config;
use crate::face::{FaceId, Persistency, MANAGEMENT_FACE};
use crate::mgmt::rib::{Route, CHILD_INHERIT, ORIGIN_STATIC};
use crate::mgmt::Host;
use crate::pipeline::Control;

use super::group_routes::{is_group, GroupRoute};
use super::{io_err, strategies_of, Runtime, StartError};

/// A route of the configuration: its prefix, face URI as written, cost, and where it was
/// written (for errors).
pub(super) type ListedRoute = (Name, String, u64, Written);

/// Where a listed route was written.
#[derive(Debug, Clone)]
pub enum Written {
    /// A `[[route]]` of the configuration file.
    Route,
    /// A line of a route file (the file's name shared by its lines).
    Line(std::sync::Arc<str>, usize),
}

impl Written {
    /// Where the route of `prefix` was written, for an error.
    fn describe(&self, prefix: &Name) -> String {
        match self {
            Written::Route => format!("route {prefix}"),
            Written::Line(file, line) => format!("{file}:{line}"),
        }
    }
}

/// The configuration's routes as applied (those to multicast groups aside), each with its face
/// URI as written, its face and its cost. A route file can hold millions, so they are a sorted
/// list with the names' bytes in one buffer and each URI stored once (a map of names and
/// strings took about 200 bytes a route).
#[derive(Debug, Default)]
pub(super) struct StaticRoutes {
    /// The names' TLV values, one after another.
    names: Vec<u8>,
    /// The face URIs, as written.
    uris: Vec<String>,
    /// Sorted by name bytes, then URI.
    routes: Vec<AppliedRoute>,
}

#[derive(Debug, Clone, Copy)]
struct AppliedRoute {
    name_at: u32,
    name_len: u32,
    uri: u32,
    face: FaceId,
    cost: u64,
}

impl StaticRoutes {
    /// The routes `applied`: (prefix, face URI as written, face, cost).
    fn new<'a>(applied: impl IntoIterator<Item = (&'a [u8], &'a str, FaceId, u64)>) -> Self {
        let mut t = StaticRoutes::default();
        let mut uri_ids: HashMap<&str, u32> = HashMap::new();
        for (name, uri, face, cost) in applied {
            let uri = *uri_ids.entry(uri).or_insert_with(|| {
                t.uris.push(uri.to_string());
                (t.uris.len() - 1) as u32
            });
            let name_at = u32::try_from(t.names.len()).expect("static route names under 4 GiB");
            t.names.extend_from_slice(name);
            t.routes.push(AppliedRoute { name_at, name_len: name.len() as u32, uri, face, cost });
        }
        let names = &t.names;
        t.routes.sort_by(|a, b| name_of(names, a).cmp(name_of(names, b)).then_with(|| t.uris[a.uri as usize].cmp(&t.uris[b.uri as usize])));
        // A route listed twice: the last one, as the RIB took it.
        t.routes.dedup_by(|later, kept| {
            let same = name_of(names, later) == name_of(names, kept) && later.uri == kept.uri;
            if same {
                *kept = *later;
            }
            same
        });
        t.names.shrink_to_fit();
        t
    }

    /// The face and cost of the route of `prefix` to `uri`, if it was applied.
    pub(super) fn get(&self, prefix: &Name, uri: &str) -> Option<(FaceId, u64)> {
        let key = (prefix.value(), uri);
        self.routes
            .binary_search_by(|r| (name_of(&self.names, r), self.uris[r.uri as usize].as_str()).cmp(&key))
            .ok()
            .map(|i| (self.routes[i].face, self.routes[i].cost))
    }

    /// Every route: (prefix's TLV value, face URI as written, face, cost).
    fn iter(&self) -> impl Iterator<Item = (&[u8], &str, FaceId, u64)> + '_ {
        self.routes.iter().map(|r| (name_of(&self.names, r), self.uris[r.uri as usize].as_str(), r.face, r.cost))
    }
}

fn name_of<'a>(names: &'a [u8], r: &AppliedRoute) -> &'a [u8] {
    &names[r.name_at as usize..(r.name_at + r.name_len) as usize]
}

/// The faces the configuration made (not those it found already there).
pub(super) type StaticFaces = HashSet<FaceId>;

/// Every route `cfg` lists: `[[route]]`, then each route file's.
///
/// # Errors
/// A prefix that is no name, or a route file's first bad line or unreadable file.
pub(super) fn listed_routes(cfg: &Config) -> Result<Vec<ListedRoute>, StartError> {
    let mut routes = Vec::new();
    for r in &cfg.route {
        let name = Name::from_uri(&r.prefix).map_err(|e| StartError::Config(format!("route {:?}: {e}", r.prefix)))?;
        routes.push((name, r.face.clone(), r.cost, Written::Route));
    }
    for path in &cfg.route_files {
        routes.extend(read_route_file(path)?);
    }
    Ok(routes)
}

/// The route's static RIB entry on `face`.
fn static_route(face: FaceId, cost: u64) -> Route {
    Route { face, origin: ORIGIN_STATIC, cost, flags: CHILD_INHERIT, expires_ms: None }
}

impl Runtime {
    /// The face `uri` names (`local`: its LocalUri), made permanent if there is none (and then
    /// remembered as the configuration's own).
    fn static_face(&mut self, uri: &str, local: Option<&str>) -> Result<FaceId, StartError> {
        let parsed = crate::sys::interfaces::resolve_face_uri(uri).map_err(|e| StartError::Config(e.to_string()))?;
        let (_, mut host) = self.host();
        let (status, made) =
            host.create_face(&parsed, local, Persistency::Permanent).map_err(|r| StartError::Config(format!("face {uri}: {}", r.text)))?;
        if made {
            self.static_faces.insert(status.face_id);
        }
        Ok(status.face_id)
    }

    /// The start's multicast and Ethernet faces, then the configuration's faces, routes and
    /// strategies (see the module overview).
    pub(super) fn apply_static_config(&mut self) -> Result<(), StartError> {
        let cfg = self.cfg.clone();
        self.sync_multicast_faces(true)?;
        self.sync_ether_ports(true)?;
        // A route names its face by URI: the faces listed first, with their LocalUri.
        let mut faces_by_uri: HashMap<String, FaceId> = HashMap::new();
        for f in &cfg.face {
            let id = self.static_face(&f.uri, f.local.as_deref())?;
            faces_by_uri.insert(f.uri.clone(), id);
        }
        let routes = listed_routes(&cfg)?;
        let total = routes.len();
        let mut applied = Vec::with_capacity(total);
        for (i, (name, uri, cost, written)) in routes.iter().enumerate() {
            // A group's face comes and goes with the interfaces: its routes follow it.
            if let Some(group) = crate::sys::interfaces::parse_face_uri(uri).ok().filter(is_group) {
                self.group_routes.push(GroupRoute { prefix: name.clone(), uri: uri.clone(), group, cost: *cost, on: None });
                continue;
            }
            let face = match faces_by_uri.get(uri) {
                Some(&f) => f,
                None => {
                    let f = self.static_face(uri, None)?;
                    faces_by_uri.insert(uri.clone(), f);
                    f
                }
            };
            self.manager
                .insert_route(name, static_route(face, *cost))
                .map_err(|e| StartError::Config(format!("{}: {e}", written.describe(name))))?;
            applied.push(i);
            if total >= 100_000 && (i + 1) % 100_000 == 0 {
                tracing::info!("read {} of {total} routes", i + 1);
            }
        }
        self.static_routes = StaticRoutes::new(applied.into_iter().map(|i| {
            let (name, uri, cost, _) = &routes[i];
            (name.value(), uri.as_str(), faces_by_uri[uri], *cost)
        }));
        drop(routes);
        // The certificates prefix propagation signs with are answered by the management face.
        for prefix in self.manager.certificate_routes() {
            let route = Route { face: MANAGEMENT_FACE, origin: ORIGIN_STATIC, cost: 0, flags: 0, expires_ms: None };
            self.manager.insert_route(&prefix, route).map_err(|e| StartError::Config(format!("propagate {prefix}: {e}")))?;
        }
        let (manager, mut host) = self.host();
        manager.apply_all_routes(&mut host);
        self.route_groups();
        if !cfg.route_files.is_empty() {
            // Route files are the bulk loads: the tables grew in steps while they were read.
            self.forwarding.apply(Control::CompactFib);
        }
        for (prefix, strategy) in strategies_of(&cfg)? {
            let (manager, mut host) = self.host();
            manager.set_strategy(&mut host, &prefix, strategy);
        }
        self.forwarding.publish_fib();
        Ok(())
    }

    /// Brings the faces and routes in step with a reloaded configuration `new`, whose routes
    /// `routes` ([`listed_routes`]) were read already; returns a warning for each face that
    /// could not be made (its routes wait for the next reload).
    pub(super) fn reapply_static_config(&mut self, new: &Config, routes: Vec<ListedRoute>) -> Vec<String> {
        let mut warnings = Vec::new();
        // The faces listed (made if new, found if not), by URI, with their LocalUri: what a
        // route's URI names, as at the start.
        let mut faces_by_uri: HashMap<String, FaceId> = HashMap::new();
        for f in &new.face {
            match self.static_face(&f.uri, f.local.as_deref()) {
                Ok(id) => {
                    faces_by_uri.insert(f.uri.clone(), id);
                }
                Err(e) => warnings.push(format!("[[face]] {}: {e}", f.uri)),
            }
        }
        let wanted: HashMap<(Name, String), u64> = routes.into_iter().map(|(name, uri, cost, _)| ((name, uri), cost)).collect();
        // Gone or changed: removed. A route whose face was closed meanwhile goes too, and is
        // made again below, with its face.
        let old = std::mem::take(&mut self.static_routes);
        let alive = |rt: &Self, face: FaceId| rt.faces.faces.contains_key(&face);
        let mut applied: Vec<(Name, String, FaceId, u64)> = Vec::new();
        for (value, uri, face, cost) in old.iter() {
            let name = Name::from_value(value).expect("a name applied before");
            let key = (name, uri.to_string());
            if wanted.get(&key) == Some(&cost) && alive(self, face) {
                applied.push((key.0, key.1, face, cost));
            } else {
                let (manager, mut host) = self.host();
                manager.remove_route(&mut host, &key.0, face, Some(ORIGIN_STATIC));
            }
        }
        let group_wanted = |r: &GroupRoute| wanted.get(&(r.prefix.clone(), r.uri.clone())) == Some(&r.cost);
        let (kept, gone): (Vec<GroupRoute>, Vec<GroupRoute>) = std::mem::take(&mut self.group_routes).into_iter().partition(group_wanted);
        self.group_routes = kept;
        for r in gone {
            let Some(face) = r.on.filter(|id| self.faces.faces.contains_key(id)) else { continue };
            let (manager, mut host) = self.host();
            manager.remove_route(&mut host, &r.prefix, face, Some(ORIGIN_STATIC));
        }
        // New.
        for ((name, uri), cost) in wanted {
            if old.get(&name, &uri).is_some_and(|(face, was)| was == cost && alive(self, face)) {
                continue;
            }
            if let Some(group) = crate::sys::interfaces::parse_face_uri(&uri).ok().filter(is_group) {
                if !self.group_routes.iter().any(|r| r.prefix == name && r.uri == uri) {
                    self.group_routes.push(GroupRoute { prefix: name, uri, group, cost, on: None });
                }
                continue;
            }
            let face = match faces_by_uri.get(&uri) {
                Some(&f) => f,
                None => match self.static_face(&uri, None) {
                    Ok(f) => {
                        faces_by_uri.insert(uri.clone(), f);
                        f
                    }
                    Err(e) => {
                        warnings.push(format!("route {name} to {uri}: {e}"));
                        continue;
                    }
                },
            };
            let (manager, mut host) = self.host();
            match manager.add_route(&mut host, &name, static_route(face, cost)) {
                Ok(()) => applied.push((name, uri, face, cost)),
                Err(e) => warnings.push(format!("route {name}: {e}")),
            }
        }
        self.static_routes = StaticRoutes::new(applied.iter().map(|(name, uri, face, cost)| (name.value(), uri.as_str(), *face, *cost)));
        self.route_groups();
        self.close_unlisted_faces(faces_by_uri.into_values().collect());
        warnings
    }

    /// Closes the faces the configuration made that neither `listed` (the new file's faces) nor
    /// a static route uses any more, with every route through them.
    fn close_unlisted_faces(&mut self, mut listed: HashSet<FaceId>) {
        listed.extend(self.static_routes.iter().map(|(_, _, face, _)| face));
        let unlisted: Vec<FaceId> = self.static_faces.iter().copied().filter(|id| !listed.contains(id)).collect();
        for id in unlisted {
            self.static_faces.remove(&id);
            let (manager, mut host) = self.host();
            if host.destroy_face(id) {
                tracing::info!("face {id}: no longer in the configuration, closed");
                manager.face_gone(&mut host, id);
            }
        }
    }
}

/// Reads a route file: `<prefix> <face-uri> [cost]` per line, `#` comments.
///
/// # Errors
/// [`StartError::Config`] naming the file and line of the first bad one; nothing is applied then.
pub fn read_route_file(path: &Path) -> Result<Vec<(Name, String, u64, Written)>, StartError> {
    let text = std::fs::read_to_string(path).map_err(io_err(format!("reading {}", path.display())))?;
    let file: std::sync::Arc<str> = path.display().to_string().into();
    let mut routes = Vec::new();
    let mut looked_up = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let mut parts = line.split_whitespace();
        let (Some(prefix), Some(uri)) = (parts.next(), parts.next()) else {
            return Err(StartError::Config(format!("{}: want `<prefix> <face-uri> [cost]`", at())));
        };
        let name = Name::from_uri(prefix).map_err(|e| StartError::Config(format!("{}: bad prefix {prefix:?}: {e}", at())))?;
        // An address parses; a host name is looked up once per file, however many lines name it.
        if crate::sys::interfaces::parse_face_uri(uri).is_err() && !looked_up.contains(uri) {
            crate::sys::interfaces::resolve_face_uri(uri).map_err(|e| StartError::Config(format!("{}: {e}", at())))?;
            looked_up.insert(uri.to_string());
        }
        let cost = match parts.next() {
            None => 0,
            Some(c) => c.parse().map_err(|_| StartError::Config(format!("{}: bad cost {c:?}", at())))?,
        };
        if parts.next().is_some() {
            return Err(StartError::Config(format!("{}: too many fields", at())));
        }
        routes.push((name, uri.to_string(), cost, Written::Line(file.clone(), i + 1)));
    }
    Ok(routes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact list answers as the map it replaced: each (prefix, URI) once, the last
    /// listing winning, URIs stored once, every route iterated.
    #[test]
    fn static_routes_find_each_route_and_keep_the_last_listing() {
        let n = |uri: &str| Name::from_uri(uri).unwrap();
        let (a, b, ab) = (n("/a"), n("/b"), n("/a/b"));
        let (u1, u2) = ("udp4://127.0.0.1:9", "udp4://127.0.0.1:10");
        let listed = [(&b, u1, 1, 5), (&a, u1, 1, 1), (&ab, u2, 2, 3), (&a, u2, 2, 4), (&a, u1, 1, 7)];
        let t = StaticRoutes::new(listed.iter().map(|&(name, uri, face, cost)| (name.value(), uri, face, cost)));
        assert_eq!(t.get(&a, u1), Some((1, 7)), "the last listing of /a on u1");
        assert_eq!(t.get(&a, u2), Some((2, 4)));
        assert_eq!(t.get(&ab, u2), Some((2, 3)));
        assert_eq!(t.get(&b, u1), Some((1, 5)));
        assert_eq!(t.get(&b, u2), None);
        assert_eq!(t.get(&n("/"), u1), None);
        assert_eq!(t.uris.len(), 2);
        let all: Vec<(Name, &str, FaceId, u64)> =
            t.iter().map(|(v, uri, face, cost)| (Name::from_value(v).unwrap(), uri, face, cost)).collect();
        // By name, then URI as text (":10" before ":9").
        assert_eq!(all, [(a.clone(), u2, 2, 4), (a, u1, 1, 7), (ab, u2, 2, 3), (b, u1, 1, 5)]);
        assert_eq!(StaticRoutes::new([]).get(&n("/a"), u1), None);
    }
}
