//! TagNet's control plane on one tree, sans-I/O: how a node (router or host) finds its place on
//! a tree rooted at a configured router, gets its locator and its Thorup–Zwick state, and
//! installs and passes on descriptors.
//!
//! # Overview
//! The paper leaves routing to a scheme of the network's choice; this is nexthop's, kept simple.
//! Every message is link-local (`message.rs`) and every state is soft: what is not heard again
//! within [`HOLD`] is gone, which is also how a link that goes down is noticed.
//! - **The tree.** Its root sends a [`Beacon`] out of every port each [`TICK`]. A node takes as
//!   parent the port of the fewest hops to the root (the one it has, on a tie) and passes its
//!   parent's beacons out of every other port. A parent not heard for [`HOLD`] is dropped; the
//!   next beacon from anywhere gives a new one.
//! - **Joins.** Each tick a node with a parent sends it a [`Join`]: itself and every node of the
//!   subtrees its children last reported, each with its parent and the labels' version it
//!   holds. A child not heard for [`HOLD`] is gone, with all it announced.
//! - **Labels.** The root knows the whole tree from its children's joins. When it changes (a
//!   node or an edge), the root labels it anew (`TzLabels`: a new version) and, each tick, sends
//!   every node whose join reports another version its [`Labels`] — its locator, its router
//!   state, the neighbour behind each TZ interface — down the child port whose subtree holds
//!   it; every router on the way passes it on the same way.
//! - **Descriptors.** A node announces to its parent, per [`Role`], one set: its own
//!   descriptors and those its children announced. Subscriptions are aggregated: one that a
//!   broader one in the set already covers (a subset of its tags matches every packet it
//!   matches) is left out. Producers' descriptors are not (Find Largest Subset needs each). A
//!   set is re-sent when it changes and every [`REFRESH`]; a set too large for one message goes
//!   in parts of one version, installed once all have come. A node installs, per child port,
//!   the last whole set it got: (descriptor → tree, that port). A withdrawal is a set without
//!   the descriptor; a child that is gone takes its sets with it.
//!
//! The data plane's use of this state (packets by descriptor go up to the root and down the
//! child ports their descriptors match; by locator along the TZ state) is `router.rs`'s.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nexthop_lookup::tag::{Descriptor, Label, Tree, TzLabels, TzRouter, NO_PARENT};

use super::message::{Announce, Beacon, Join, JoinEntry, Labels, Message, Role, DESCRIPTORS_PER_PART};
use super::packet::Locator;

/// How often a root beacons, and every node joins and re-sends changed sets.
pub const TICK: Duration = Duration::from_millis(100);
/// A neighbour not heard from for this long is gone (five ticks).
pub const HOLD: Duration = Duration::from_millis(500);
/// Announced sets are sent again this often even when unchanged.
pub const REFRESH: Duration = Duration::from_secs(1);

/// What a node threw away, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeCounters {
    /// Messages that made no sense where they came from: a beacon at the root, a join from
    /// the parent or naming another parent, labels not from the parent or for a node below no
    /// child, an announcement from the parent.
    pub ignored: u64,
    /// Labelling attempts of the root that failed: the joins do not make a tree (two nodes of
    /// one name, a node whose parent is not there).
    pub not_a_tree: u64,
    /// Messages too large to send (a join of a subtree whose names pass `MAX_MESSAGE`).
    pub too_large: u64,
    /// Labellings the root made.
    pub labellings: u64,
}

#[derive(Debug, Clone)]
struct Parent {
    port: usize,
    name: String,
    hops: u8,
    heard: Instant,
    seq: u32,
}

#[derive(Debug, Clone)]
struct Child {
    name: String,
    entries: Vec<JoinEntry>,
    heard: Instant,
}

/// The sets of one role announced through one port.
#[derive(Debug, Clone, Default)]
struct Learned {
    /// The last whole set.
    set: Vec<Descriptor>,
    /// The version being assembled, and its parts so far.
    pending: Option<(u32, Vec<Option<Vec<Descriptor>>>)>,
    /// When a part last came.
    heard: Option<Instant>,
}

/// What a node last announced to its parent, per role.
#[derive(Debug, Clone, Default)]
struct Sent {
    set: Vec<Descriptor>,
    version: u32,
    at: Option<Instant>,
}

/// This node's labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    /// The labelling's version.
    pub version: u32,
    /// The node's locator.
    pub label: Label,
    /// Its forwarding state.
    pub router: TzRouter,
    /// The neighbour behind each TZ interface (empty: none).
    pub neighbours: Vec<String>,
}

/// The root's labelling.
#[derive(Debug, Clone, Default)]
struct Labelling {
    edges: Vec<(String, String)>,
    version: u32,
    labels: BTreeMap<String, Labels>,
}

/// One node's state on one tree.
#[derive(Debug)]
pub struct TreeNode {
    tree: u16,
    name: String,
    ports: usize,
    root: bool,
    seq: u32,
    parent: Option<Parent>,
    children: BTreeMap<usize, Child>,
    learned: BTreeMap<usize, [Learned; 2]>,
    local: [Vec<Descriptor>; 2],
    sent: [Sent; 2],
    assigned: Option<Assigned>,
    labelling: Labelling,
    /// Messages to send, written: (port, bytes).
    out: Vec<(usize, Vec<u8>)>,
    /// The sets to announce up may have changed (own or learned descriptors).
    sets_changed: bool,
    fib_changed: bool,
    tz_changed: bool,
    /// What it threw away.
    pub counters: TreeCounters,
}

impl TreeNode {
    /// Node `name` with `ports` ports on `tree`, its root if `root`.
    pub fn new(tree: u16, name: &str, ports: usize, root: bool) -> TreeNode {
        TreeNode {
            tree,
            name: name.to_string(),
            ports,
            root,
            seq: 0,
            parent: None,
            children: BTreeMap::new(),
            learned: BTreeMap::new(),
            local: [Vec::new(), Vec::new()],
            sent: [Sent::default(), Sent::default()],
            assigned: None,
            labelling: Labelling::default(),
            out: Vec::new(),
            sets_changed: false,
            fib_changed: false,
            tz_changed: false,
            counters: TreeCounters::default(),
        }
    }

    /// The tree.
    pub fn tree(&self) -> u16 {
        self.tree
    }

    /// Whether this node is the tree's root.
    pub fn is_root(&self) -> bool {
        self.root
    }

    /// The port toward the root (`None` at the root, or while no beacon is heard).
    pub fn parent_port(&self) -> Option<usize> {
        self.parent.as_ref().map(|p| p.port)
    }

    /// The ports with a child on them.
    pub fn child_ports(&self) -> impl Iterator<Item = usize> + '_ {
        self.children.keys().copied()
    }

    /// This node's labels, once the root's have come.
    pub fn assigned(&self) -> Option<&Assigned> {
        self.assigned.as_ref()
    }

    /// This node's locator, once labelled.
    pub fn locator(&self) -> Option<Locator> {
        self.assigned.as_ref().map(|a| Locator { tree: self.tree, label: a.label })
    }

    /// The port behind each TZ interface of this node's labels (`None`: no such neighbour, or
    /// not one this node hears).
    pub fn tz_ports(&self) -> Vec<Option<usize>> {
        let Some(a) = &self.assigned else { return Vec::new() };
        a.neighbours
            .iter()
            .map(|n| {
                if n.is_empty() {
                    return None;
                }
                match &self.parent {
                    Some(p) if &p.name == n => Some(p.port),
                    _ => self.children.iter().find(|(_, c)| &c.name == n).map(|(&port, _)| port),
                }
            })
            .collect()
    }

    /// This node's own descriptors of `role` (a host's subscriptions, a producer's content):
    /// announced from the next tick on.
    pub fn set_local(&mut self, role: Role, descriptors: Vec<Descriptor>) {
        self.local[role.index()] = descriptors;
        self.sets_changed = true;
    }

    /// This node's own descriptors of `role`.
    pub fn local(&self, role: Role) -> &[Descriptor] {
        &self.local[role.index()]
    }

    /// The (descriptor, child port) entries of `role` to install, from the children's sets.
    pub fn entries(&self, role: Role) -> impl Iterator<Item = (Descriptor, usize)> + '_ {
        self.learned.iter().flat_map(move |(&port, l)| l[role.index()].set.iter().map(move |&d| (d, port)))
    }

    /// Whether the entries changed since last asked.
    pub fn take_fib_changed(&mut self) -> bool {
        std::mem::take(&mut self.fib_changed)
    }

    /// Whether the labels, or the ports behind them, changed since last asked.
    pub fn take_tz_changed(&mut self) -> bool {
        std::mem::take(&mut self.tz_changed)
    }

    /// The messages to send, written (`message.rs`), each with its port.
    pub fn take_messages(&mut self) -> Vec<(usize, Vec<u8>)> {
        std::mem::take(&mut self.out)
    }

    /// A message of this tree from `port`.
    pub fn receive(&mut self, now: Instant, port: usize, message: Message) {
        match message {
            Message::Beacon(b) => self.beacon(now, port, b),
            Message::Join(j) => self.join(now, port, j),
            Message::Labels(l) => self.labels(port, l),
            Message::Announce(a) => self.announce(now, port, a),
        }
    }

    fn beacon(&mut self, now: Instant, port: usize, b: Beacon) {
        if self.root || b.hops == u8::MAX || port >= self.ports {
            self.counters.ignored += 1;
            return;
        }
        let take = match &self.parent {
            None => true,
            Some(p) => p.port == port || b.hops < p.hops,
        };
        if !take {
            return;
        }
        let new = self.parent.as_ref().is_none_or(|p| p.port != port || p.name != b.sender);
        if new {
            self.parent = Some(Parent { port, name: b.sender.clone(), hops: b.hops, heard: now, seq: b.seq.wrapping_sub(1) });
            self.children.remove(&port);
            if self.learned.remove(&port).is_some() {
                self.fib_changed = true;
                self.sets_changed = true;
            }
            self.tz_changed = true;
            // Everything goes up at once on a new parent.
            self.sent = [Sent::default(), Sent::default()];
            self.send_join();
            self.send_sets(now);
        }
        let p = self.parent.as_mut().expect("set above");
        p.heard = now;
        p.hops = b.hops;
        if p.seq != b.seq {
            p.seq = b.seq;
            let on = Message::Beacon(Beacon { sender: self.name.clone(), hops: b.hops.saturating_add(1), ..b });
            self.send_all(on, Some(port));
        }
    }

    fn join(&mut self, now: Instant, port: usize, j: Join) {
        let from_parent = self.parent_port() == Some(port);
        let Some(first) = j.entries.first().filter(|e| e.parent == self.name && !from_parent) else {
            self.counters.ignored += 1;
            return;
        };
        let child = Child { name: first.node.clone(), entries: j.entries, heard: now };
        let renamed = self.children.get(&port).is_none_or(|c| c.name != child.name);
        self.children.insert(port, child);
        if renamed {
            self.tz_changed = true;
        }
    }

    fn labels(&mut self, port: usize, l: Labels) {
        if self.root || self.parent_port() != Some(port) {
            self.counters.ignored += 1;
            return;
        }
        if l.node == self.name {
            self.install(l);
        } else if let Some(to) = self.port_below(&l.node) {
            self.send(to, Message::Labels(l));
        } else {
            self.counters.ignored += 1;
        }
    }

    fn install(&mut self, l: Labels) {
        let a = Assigned { version: l.version, label: l.label, router: l.router, neighbours: l.neighbours };
        if self.assigned.as_ref() != Some(&a) {
            self.assigned = Some(a);
            self.tz_changed = true;
        }
    }

    /// The child port whose subtree holds `node`.
    fn port_below(&self, node: &str) -> Option<usize> {
        self.children.iter().find(|(_, c)| c.entries.iter().any(|e| e.node == node)).map(|(&p, _)| p)
    }

    fn announce(&mut self, now: Instant, port: usize, a: Announce) {
        if self.parent_port() == Some(port) || port >= self.ports {
            self.counters.ignored += 1;
            return;
        }
        let learned = &mut self.learned.entry(port).or_default()[a.role.index()];
        learned.heard = Some(now);
        let parts = usize::from(a.parts);
        let pending = match &mut learned.pending {
            Some((v, p)) if *v == a.version && p.len() == parts => p,
            slot => &mut slot.insert((a.version, vec![None; parts])).1,
        };
        pending[usize::from(a.part)] = Some(a.descriptors);
        if pending.iter().all(Option::is_some) {
            let set: Vec<Descriptor> = pending.iter_mut().flat_map(|p| p.take().expect("all parts")).collect();
            learned.pending = None;
            if set != learned.set {
                learned.set = set;
                self.fib_changed = true;
                self.sets_changed = true;
            }
        }
    }

    /// Time passes: beacons at the root, joins and sets toward it, neighbours not heard from
    /// dropped, labels at the root made and sent.
    pub fn tick(&mut self, now: Instant) {
        if self.root {
            self.seq = self.seq.wrapping_add(1);
            let b = Beacon { tree: self.tree, root: self.name.clone(), sender: self.name.clone(), seq: self.seq, hops: 1 };
            self.send_all(Message::Beacon(b), None);
        }
        if self.parent.as_ref().is_some_and(|p| now.duration_since(p.heard) > HOLD) {
            self.parent = None;
            self.assigned = None;
            self.tz_changed = true;
        }
        let gone: Vec<usize> = self.children.iter().filter(|(_, c)| now.duration_since(c.heard) > HOLD).map(|(&p, _)| p).collect();
        for p in gone {
            self.children.remove(&p);
            self.tz_changed = true;
        }
        let stale: Vec<usize> = self
            .learned
            .iter()
            .filter(|(p, l)| !self.children.contains_key(p) && l.iter().all(|r| r.heard.is_none_or(|h| now.duration_since(h) > HOLD)))
            .map(|(&p, _)| p)
            .collect();
        for p in stale {
            self.learned.remove(&p);
            self.fib_changed = true;
            self.sets_changed = true;
        }
        self.send_join();
        self.send_sets(now);
        if self.root {
            self.label_tree();
        }
    }

    fn send_join(&mut self) {
        let Some(p) = &self.parent else { return };
        let me = JoinEntry { node: self.name.clone(), parent: p.name.clone(), labels: self.assigned.as_ref().map_or(0, |a| a.version) };
        let entries = std::iter::once(me).chain(self.children.values().flat_map(|c| c.entries.iter().cloned())).collect();
        self.send(p.port, Message::Join(Join { tree: self.tree, entries }));
    }

    /// Queues `m` for `port` if it can be written.
    fn send(&mut self, port: usize, m: Message) {
        match m.encode() {
            Ok(bytes) => self.out.push((port, bytes)),
            Err(_) => self.counters.too_large += 1,
        }
    }

    /// Queues `m` for every port but `except`.
    fn send_all(&mut self, m: Message, except: Option<usize>) {
        match m.encode() {
            Ok(bytes) => self.out.extend((0..self.ports).filter(|&q| Some(q) != except).map(|q| (q, bytes.clone()))),
            Err(_) => self.counters.too_large += 1,
        }
    }

    /// The set of `role` to announce up: this node's own and its children's, subscriptions
    /// aggregated.
    fn up_set(&self, role: Role) -> Vec<Descriptor> {
        let all = self.local[role.index()].iter().copied().chain(self.learned.values().flat_map(|l| l[role.index()].set.iter().copied()));
        match role {
            Role::Subscribe => covering(all),
            Role::Provide => {
                let mut v: Vec<Descriptor> = all.collect();
                v.sort_unstable_by_key(|d| d.0);
                v.dedup();
                v
            }
        }
    }

    /// Announces each role's set to the parent when it changed (recomputed only when its
    /// inputs did) or is due for its refresh.
    fn send_sets(&mut self, now: Instant) {
        let Some(port) = self.parent_port() else { return };
        let inputs_changed = std::mem::take(&mut self.sets_changed);
        for role in Role::ALL {
            let i = role.index();
            let fresh = (inputs_changed || self.sent[i].at.is_none()).then(|| self.up_set(role));
            let sent = &mut self.sent[i];
            let changed = sent.at.is_none() || fresh.as_ref().is_some_and(|f| *f != sent.set);
            if !changed && sent.at.is_some_and(|at| now.duration_since(at) < REFRESH) {
                continue;
            }
            if changed {
                sent.set = fresh.unwrap_or_default();
                sent.version = sent.version.wrapping_add(1);
            }
            sent.at = Some(now);
            let (set, version) = (&self.sent[i].set, self.sent[i].version);
            let chunks: Vec<&[Descriptor]> = if set.is_empty() { vec![&[]] } else { set.chunks(DESCRIPTORS_PER_PART).collect() };
            let parts = chunks.len().min(usize::from(u16::MAX)) as u16;
            let announces: Vec<Message> = chunks
                .iter()
                .take(usize::from(parts))
                .enumerate()
                .map(|(part, c)| {
                    Message::Announce(Announce { tree: self.tree, role, version, part: part as u16, parts, descriptors: c.to_vec() })
                })
                .collect();
            for a in announces {
                self.send(port, a);
            }
        }
    }

    /// At the root: labels the tree the joins describe when it changed, and sends each node
    /// whose join reports other labels its own.
    fn label_tree(&mut self) {
        let mut edges: Vec<(String, String)> =
            self.children.values().flat_map(|c| c.entries.iter().map(|e| (e.node.clone(), e.parent.clone()))).collect();
        edges.sort();
        if edges != self.labelling.edges || self.labelling.version == 0 {
            match label(&self.name, &edges) {
                Some(labels) => {
                    let version = self.labelling.version.wrapping_add(1).max(1);
                    let tree = self.tree;
                    let labels = labels
                        .into_iter()
                        .map(|mut l| {
                            (l.version, l.tree) = (version, tree);
                            (l.node.clone(), l)
                        })
                        .collect();
                    self.labelling = Labelling { edges, version, labels };
                    self.counters.labellings += 1;
                    if let Some(own) = self.labelling.labels.get(&self.name).cloned() {
                        self.install(own);
                    }
                }
                None => {
                    self.counters.not_a_tree += 1;
                    return;
                }
            }
        }
        let version = self.labelling.version;
        let stale: Vec<(usize, Labels)> = self
            .children
            .iter()
            .flat_map(|(&port, c)| c.entries.iter().filter(|e| e.labels != version).map(move |e| (port, e.node.clone())))
            .filter_map(|(port, node)| self.labelling.labels.get(&node).map(|l| (port, l.clone())))
            .collect();
        for (port, l) in stale {
            self.send(port, Message::Labels(l));
        }
    }
}

/// Labels for the tree of `root` and the (node, parent) `edges`, each with version 0 and
/// tree 0 (the caller sets both); `None` when they are not a tree.
fn label(root: &str, edges: &[(String, String)]) -> Option<Vec<Labels>> {
    let mut names: Vec<&str> = vec![root];
    names.extend(edges.iter().map(|(n, _)| n.as_str()));
    let index: BTreeMap<&str, u32> = names.iter().enumerate().map(|(i, &n)| (n, i as u32)).collect();
    if index.len() != names.len() {
        return None;
    }
    let mut parent = vec![NO_PARENT];
    for (_, p) in edges {
        parent.push(*index.get(p.as_str())?);
    }
    let labels = TzLabels::build(&Tree::from_parents(parent).ok()?).ok()?;
    let name_of = |v: Option<u32>| v.map_or(String::new(), |v| names[v as usize].to_string());
    Some(
        (0..names.len() as u32)
            .map(|v| Labels {
                tree: 0,
                version: 0,
                node: names[v as usize].to_string(),
                label: labels.label(v),
                router: *labels.router(v),
                neighbours: (0..labels.interfaces(v)).map(|i| name_of(labels.neighbor(v, i))).collect(),
            })
            .collect(),
    )
}

/// The descriptors of `set` that no other one covers (none of its subsets is in the set),
/// each once: what a subscriber's set needs to announce.
pub fn covering(set: impl IntoIterator<Item = Descriptor>) -> Vec<Descriptor> {
    let mut all: Vec<Descriptor> = set.into_iter().collect();
    all.sort_unstable_by_key(|d| (d.weight(), d.0));
    all.dedup();
    let mut kept: Vec<Descriptor> = Vec::new();
    for d in all {
        if !kept.iter().any(|k| k.is_subset_of(&d)) {
            kept.push(d);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_lookup::tag::Hop;

    /// A link: (node, port) ↔ (node, port), and whether it is up.
    type Link = ((usize, usize), (usize, usize), bool);

    /// Nodes joined by point-to-point links, every message through its bytes.
    struct Net {
        nodes: Vec<TreeNode>,
        links: Vec<Link>,
        now: Instant,
    }

    impl Net {
        /// Routers `0..routers` (0 the root) and hosts after them; `edges` (a, b): a's next
        /// port to b's next port.
        fn new(routers: usize, hosts: usize, edges: &[(usize, usize)]) -> Net {
            let n = routers + hosts;
            let mut ports = vec![0; n];
            let mut links = Vec::new();
            for &(a, b) in edges {
                links.push(((a, ports[a]), (b, ports[b]), true));
                ports[a] += 1;
                ports[b] += 1;
            }
            let name = |i: usize| if i < routers { format!("r{i}") } else { format!("h{}", i - routers) };
            let nodes = (0..n).map(|i| TreeNode::new(3, &name(i), ports[i], i == 0)).collect();
            Net { nodes, links, now: Instant::now() }
        }

        fn peer(&self, node: usize, port: usize) -> Option<(usize, usize)> {
            self.links.iter().find_map(|&(a, b, up)| match up {
                true if a == (node, port) => Some(b),
                true if b == (node, port) => Some(a),
                _ => None,
            })
        }

        /// One tick everywhere, then every message delivered until none is left.
        fn tick(&mut self) {
            self.now += TICK;
            for n in &mut self.nodes {
                n.tick(self.now);
            }
            loop {
                let mut sent = Vec::new();
                for (i, n) in self.nodes.iter_mut().enumerate() {
                    sent.extend(n.take_messages().into_iter().map(|(port, m)| (i, port, m)));
                }
                if sent.is_empty() {
                    return;
                }
                for (i, port, bytes) in sent {
                    if let Some((to, to_port)) = self.peer(i, port) {
                        self.nodes[to].receive(self.now, to_port, Message::parse(&bytes).unwrap());
                    }
                }
            }
        }

        fn run(&mut self, ticks: usize) {
            for _ in 0..ticks {
                self.tick();
            }
        }

        /// Hop by hop by locator from `s` to `t`: the nodes visited.
        fn walk(&self, s: usize, t: usize) -> Vec<usize> {
            let dest = self.nodes[t].locator().expect("labelled").label;
            let mut path = vec![s];
            let mut at = s;
            for _ in 0..self.nodes.len() {
                let node = &self.nodes[at];
                let a = node.assigned().expect("labelled");
                match a.router.forward(&dest).unwrap() {
                    Hop::Deliver => return path,
                    Hop::Interface(i) => {
                        let port = node.tz_ports()[usize::from(i)].expect("a port behind the interface");
                        at = self.peer(at, port).unwrap().0;
                    }
                }
                path.push(at);
            }
            panic!("no delivery from {s} to {t}: {path:?}");
        }
    }

    fn d(tags: &[&str]) -> Descriptor {
        Descriptor::from_tags(tags).unwrap()
    }

    /// Five routers, r0 the root: r0–r1, r0–r2, r1–r3, r1–r4; hosts h0..h5 (nodes 5..10) on
    /// r2, r3, r3, r4, r4, r0.
    fn five_routers() -> Net {
        Net::new(5, 6, &[(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (3, 6), (3, 7), (4, 8), (4, 9), (0, 10)])
    }

    #[test]
    fn a_tree_forms_and_every_node_is_reached_by_its_locator() {
        let mut net = five_routers();
        net.run(8);
        assert!(net.nodes.iter().all(|n| n.assigned().is_some()), "every node labelled");
        let version = net.nodes[0].assigned().unwrap().version;
        assert!(net.nodes.iter().all(|n| n.assigned().unwrap().version == version));
        for s in 0..net.nodes.len() {
            for t in 0..net.nodes.len() {
                net.walk(s, t);
            }
        }
        assert_eq!(net.nodes[3].parent_port(), Some(0));
        let labellings = net.nodes[0].counters.labellings;
        net.run(5);
        assert_eq!(net.nodes[0].counters.labellings, labellings, "no labelling once the tree stands");
        assert_eq!(net.nodes.iter().map(|n| n.counters.ignored + n.counters.not_a_tree).sum::<u64>(), 0);
    }

    #[test]
    fn subscriptions_are_installed_toward_the_root_and_aggregated() {
        let mut net = five_routers();
        net.nodes[6].set_local(Role::Subscribe, vec![d(&["news"]), d(&["news", "sport"])]);
        net.nodes[7].set_local(Role::Subscribe, vec![d(&["news", "weather"])]);
        net.nodes[8].set_local(Role::Provide, vec![d(&["video"]), d(&["video", "hd"])]);
        net.run(6);
        let entries = |n: &TreeNode, r| {
            let mut e: Vec<(Descriptor, usize)> = n.entries(r).collect();
            e.sort_by_key(|x| (x.1, x.0 .0));
            e
        };
        // r3 holds each host's set, on its port: h1's aggregated by h1.
        let mut want = vec![(d(&["news"]), 1), (d(&["news", "weather"]), 2)];
        want.sort_by_key(|x| (x.1, x.0 .0));
        assert_eq!(entries(&net.nodes[3], Role::Subscribe), want);
        // r1 only {news}: it covers the others.
        assert_eq!(entries(&net.nodes[1], Role::Subscribe), vec![(d(&["news"]), 1)]);
        assert_eq!(entries(&net.nodes[0], Role::Subscribe), vec![(d(&["news"]), 0)]);
        // Producers' descriptors are not aggregated.
        assert_eq!(entries(&net.nodes[0], Role::Provide).len(), 2);
        // A withdrawal: h1 drops "news" and the broader one goes; the narrower ones go up.
        net.nodes[6].set_local(Role::Subscribe, vec![]);
        net.run(3);
        assert_eq!(entries(&net.nodes[1], Role::Subscribe), vec![(d(&["news", "weather"]), 1)]);
        assert_eq!(entries(&net.nodes[0], Role::Subscribe), vec![(d(&["news", "weather"]), 0)]);
    }

    #[test]
    fn sets_larger_than_a_message_go_in_parts() {
        let mut net = Net::new(1, 1, &[(0, 1)]);
        let many: Vec<Descriptor> = (0..300).map(|i| d(&[&format!("tag{i}")])).collect();
        net.nodes[1].set_local(Role::Provide, many.clone());
        net.run(3);
        let mut got: Vec<Descriptor> = net.nodes[0].entries(Role::Provide).map(|(d, _)| d).collect();
        got.sort_by_key(|d| d.0);
        let mut want = many;
        want.sort_by_key(|d| d.0);
        assert_eq!(got, want);
    }

    #[test]
    fn a_cut_link_drops_the_subtree_and_its_return_restores_it() {
        let mut net = five_routers();
        net.nodes[8].set_local(Role::Subscribe, vec![d(&["a"])]);
        net.run(6);
        assert_eq!(net.nodes[0].entries(Role::Subscribe).count(), 1);
        let before = net.nodes[0].assigned().unwrap().version;
        net.links[1].2 = false; // r0–r2 (h0 behind r2)
        net.links[3].2 = false; // r1–r4 (h3, h4 behind r4)
        net.run(8);
        assert_eq!(net.nodes[0].entries(Role::Subscribe).count(), 0, "the subscription behind the cut is gone");
        assert!(net.nodes[4].parent_port().is_none() && net.nodes[8].assigned().is_none());
        assert!(net.nodes[0].assigned().unwrap().version > before, "relabelled without the cut subtrees");
        net.walk(6, 10);
        net.links[1].2 = true;
        net.links[3].2 = true;
        net.run(8);
        assert_eq!(net.nodes[0].entries(Role::Subscribe).count(), 1);
        for s in 0..net.nodes.len() {
            for t in 0..net.nodes.len() {
                net.walk(s, t);
            }
        }
    }

    #[test]
    fn nonsense_is_ignored_and_counted() {
        let mut root = TreeNode::new(0, "r0", 2, true);
        let now = Instant::now();
        root.receive(now, 0, Message::Beacon(Beacon { tree: 0, root: "x".into(), sender: "x".into(), seq: 1, hops: 1 }));
        let stranger = JoinEntry { node: "h".into(), parent: "someone-else".into(), labels: 0 };
        root.receive(now, 1, Message::Join(Join { tree: 0, entries: vec![stranger] }));
        root.receive(now, 1, Message::Join(Join { tree: 0, entries: vec![] }));
        assert_eq!(root.counters.ignored, 3);
        root.tick(now);
        assert_eq!(root.child_ports().count(), 0);
        // Joins that are no tree: a node whose parent nobody is.
        let orphan = JoinEntry { node: "h".into(), parent: "r9".into(), labels: 0 };
        let me = JoinEntry { node: "r1".into(), parent: "r0".into(), labels: 0 };
        root.receive(now, 1, Message::Join(Join { tree: 0, entries: vec![me, orphan] }));
        root.tick(now);
        assert_eq!(root.counters.not_a_tree, 1);
        assert_eq!(covering([d(&["a", "b"]), d(&["a"]), d(&["a"]), d(&["c"])]), vec![d(&["a"]), d(&["c"])].into_iter().collect::<Vec<_>>());
    }
}
