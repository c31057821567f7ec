//! ndn-cxx's validator configuration (`ValidatorConfig`) for the commands NFD checks with one:
//! prefix registrations from one hop away (`rib.localhop_security`).
//!
//! # Overview
//! A configuration is `rule` and `trust-anchor` sections in INFO text, the format of ndn-cxx's
//! validator files and of nfd.conf's `localhop_security` section ([`Validator::from_info`]):
//! - a **rule** is `for interest` or `for data`, with `filter`s (a `name` and its `relation`
//!   — `equal`, `is-prefix-of`, `is-strict-prefix-of` — or a `regex`, [`super::name_regex`];
//!   none: every packet of its kind) and `checker`s: `customized` (a `sig-type` and a
//!   `key-locator` check: a `name` and `relation` to the KeyLocator's identity, a `regex` on the
//!   KeyLocator, or a `hyper-relation` between the two names' expansions) or `hierarchical`
//!   (the signer's identity is a prefix of the packet's name);
//! - a **trust-anchor** is a certificate: `type file` (`file-name`, base64 or binary), `type
//!   base64` (`base64-string`), `type dir` (every file in `dir`), or `type any`, which accepts
//!   every packet unchecked. A `file` or `dir` anchor with `refresh` (`1h`, `10m`, `30s`; `0`
//!   of any unit: an hour, as ndn-cxx) is read again when a validation needs anchors and that
//!   long has passed since it was last read, so that certificates added to, replaced in or
//!   removed from its folder take effect while the forwarder runs (files that are not
//!   certificates are then skipped with a warning, as ndn-cxx skips them).
//!
//! A signed command ([`Validator::start`]) is accepted when, as ndn-cxx's policy decides:
//! 1. the first `for interest` rule whose filter matches its name (without the signature's
//!    components) has a checker that passes on its signature type and KeyLocator;
//! 2. its timestamp passes the command-Interest policy ([`super::authorization`]'s);
//! 3. its KeyLocator names a trust anchor, or a certificate the caller fetches
//!    ([`Progress::Fetch`]: an Interest for that name, asked of the command's face and then of
//!    the network as NFD's direct fetch does, [`super::Manager`]) and hands back ([`Validator::resume`]). That certificate must be
//!    within its ValidityPeriod and pass the first `for data` rule matching its name, and its own
//!    KeyLocator is resolved the same way, at most [`MAX_CHAIN`] certificates deep;
//! 4. every signature on the chain verifies with the key above it, the last with the anchor's.
//!
//! Refusals are [`Rejection`]s as in [`super::authorization`]: a command without a signature
//! or KeyLocator name is dropped silently, any other refusal answered 403. Sans-I/O: the caller
//! fetches certificates and keeps the time.

use std::path::Path;

use nexthop_wire::signature::KeyLocatorView;
use nexthop_wire::types::signature_type;
use nexthop_wire::{DataView, InterestView, Name};

use super::authorization::{signed_command, CommandTimestamps, Rejection, TrustAnchor};
use super::name_regex::NameRegex;
use crate::conf::info::InfoNode;

/// NFD's sample `localhop_security` rules, with a hierarchical rule for certificates (INFO
/// text, no trust anchor): what an operator starts from.
pub const SAMPLE_RULES: &str = include_str!("localhop_security.sample");

/// Certificates fetched for one command at most.
pub const MAX_CHAIN: usize = 5;

/// A configuration that cannot be used, with the line it is on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct ValidatorError {
    /// The line (of the INFO text).
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

/// How a configured name relates to a packet's (or a KeyLocator's) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relation {
    Equal,
    IsPrefixOf,
    IsStrictPrefixOf,
}

impl Relation {
    fn parse(n: &InfoNode) -> Result<Relation, ValidatorError> {
        match n.value.as_str() {
            "equal" => Ok(Relation::Equal),
            "is-prefix-of" => Ok(Relation::IsPrefixOf),
            "is-strict-prefix-of" => Ok(Relation::IsStrictPrefixOf),
            v => Err(error(n, format!("relation {v:?}: equal, is-prefix-of or is-strict-prefix-of"))),
        }
    }

    /// Whether `a` stands in this relation to `b`.
    fn holds(self, a: &Name, b: &Name) -> bool {
        match self {
            Relation::Equal => a == b,
            Relation::IsPrefixOf => a.is_prefix_of(b),
            Relation::IsStrictPrefixOf => a.is_prefix_of(b) && a.len() < b.len(),
        }
    }
}

/// Which packets a rule is for.
#[derive(Debug, Clone)]
enum Filter {
    Name(Name, Relation),
    Regex(NameRegex),
}

impl Filter {
    fn matches(&self, name: &Name) -> bool {
        match self {
            Filter::Name(n, r) => r.holds(n, name),
            Filter::Regex(re) => re.is_match(name),
        }
    }
}

/// What a checker asks of the KeyLocator.
#[derive(Debug, Clone)]
enum KeyCheck {
    /// This name stands in the relation to the KeyLocator's identity (`is-prefix-of`: the name
    /// is a prefix of the identity), as ndn-cxx's name checker reads it.
    Name(Name, Relation),
    Regex(NameRegex),
    /// `k` expanded from the KeyLocator stands in the relation to `p` expanded from the packet.
    Hyper {
        k: NameRegex,
        k_expand: String,
        relation: Relation,
        p: NameRegex,
        p_expand: String,
    },
}

#[derive(Debug, Clone)]
struct Checker {
    sig_type: Option<u64>,
    key: KeyCheck,
}

impl Checker {
    fn passes(&self, sig_type: u64, packet: &Name, locator: &Name) -> bool {
        if self.sig_type.is_some_and(|t| t != sig_type) {
            return false;
        }
        match &self.key {
            KeyCheck::Name(name, relation) => relation.holds(name, &identity_of(locator)),
            KeyCheck::Regex(re) => re.is_match(locator),
            KeyCheck::Hyper { k, k_expand, relation, p, p_expand } => match (k.expand(locator, k_expand), p.expand(packet, p_expand)) {
                (Some(k), Some(p)) => relation.holds(&k, &p),
                _ => false,
            },
        }
    }
}

/// The identity of a key or certificate name: the components before `KEY` (the name itself
/// when it has none in a key's or certificate's place).
pub(crate) fn identity_of(locator: &Name) -> Name {
    let n = locator.len();
    (n.saturating_sub(4)..n)
        .find(|&i| locator.get(i).is_some_and(|c| c.value() == b"KEY") && n - i >= 2)
        .map_or_else(|| locator.clone(), |i| locator.prefix(i))
}

#[derive(Debug, Clone)]
struct Rule {
    id: String,
    for_data: bool,
    filters: Vec<Filter>,
    checkers: Vec<Checker>,
}

impl Rule {
    fn matches(&self, name: &Name) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| f.matches(name))
    }
}

/// A command waiting for a certificate on its chain.
#[derive(Debug)]
pub struct Pending {
    locator: Name,
    /// A command's timestamp, checked again once the chain is complete (a Data has none).
    timestamp: Option<u64>,
    /// What is to be verified: the command (or Data) first, then each certificate fetched (signed portion,
    /// signature type, signature value).
    signed: Vec<(Vec<u8>, u64, Vec<u8>)>,
    /// The keys of the certificates fetched: `keys[i]` verifies `signed[i]`.
    keys: Vec<TrustAnchor>,
    /// The KeyLocator name to resolve next.
    need: Name,
}

impl Pending {
    /// The name of the certificate to fetch (a key or certificate name: ask with CanBePrefix).
    pub fn wanted(&self) -> &Name {
        &self.need
    }
}

/// Where a validation stands.
#[derive(Debug)]
pub enum Progress {
    /// The command is accepted.
    Accepted,
    /// A certificate is needed: fetch [`Pending::wanted`], then [`Validator::resume`].
    Fetch(Box<Pending>),
}

/// A validator configuration and the command timestamps it has accepted.
#[derive(Debug, Clone, Default)]
pub struct Validator {
    rules: Vec<Rule>,
    anchors: Vec<TrustAnchor>,
    refreshed: Vec<RefreshedAnchors>,
    any: bool,
    timestamps: CommandTimestamps,
}

/// A `file` or `dir` trust anchor with `refresh`: its certificates as last read.
#[derive(Debug, Clone)]
struct RefreshedAnchors {
    path: std::path::PathBuf,
    dir: bool,
    period_ms: u64,
    /// When a validation last read it (`None`: only at start).
    read_ms: Option<u64>,
    anchors: Vec<TrustAnchor>,
}

impl RefreshedAnchors {
    /// Reads the anchors again if `period_ms` has passed since they were, or if no validation
    /// has read them yet (a file that is not a certificate, or a folder or file gone, leaves
    /// them out).
    fn refresh(&mut self, now_ms: u64) {
        if self.read_ms.is_some_and(|t| now_ms.saturating_sub(t) < self.period_ms) {
            return;
        }
        self.read_ms = Some(now_ms);
        let files = anchor_files(&self.path, self.dir);
        let read = files.iter().filter_map(|p| TrustAnchor::load(p).inspect_err(|e| tracing::warn!("trust anchor skipped: {e}")).ok());
        self.anchors = read.collect();
    }
}

/// The files of a `file` or `dir` trust anchor at `path`, in name order (none if a folder
/// cannot be read).
fn anchor_files(path: &Path, dir: bool) -> Vec<std::path::PathBuf> {
    if !dir {
        return vec![path.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(path) else { return Vec::new() };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
    paths.sort();
    paths
}

/// A trust anchor's `refresh` period in ms (`<n>h`, `<n>m` or `<n>s`; 0: an hour, ndn-cxx's
/// default).
fn refresh_period(n: &InfoNode) -> Result<u64, ValidatorError> {
    let bad = || error(n, format!("refresh {:?}: a number and h, m or s", n.value));
    let (number, unit) = n.value.split_at(n.value.len().saturating_sub(1));
    let number: u64 = number.parse().map_err(|_| bad())?;
    let unit_ms = match unit {
        "h" => 3_600_000,
        "m" => 60_000,
        "s" => 1_000,
        _ => return Err(bad()),
    };
    Ok(if number == 0 { 3_600_000 } else { number.saturating_mul(unit_ms) })
}

fn error(n: &InfoNode, why: impl Into<String>) -> ValidatorError {
    ValidatorError { line: n.line, why: why.into() }
}

/// The one child `key` of `n`.
fn child<'a>(n: &'a InfoNode, key: &str) -> Result<&'a InfoNode, ValidatorError> {
    n.children.iter().find(|c| c.key == key).ok_or_else(|| error(n, format!("{} has no {key}", n.key)))
}

fn regex(n: &InfoNode) -> Result<NameRegex, ValidatorError> {
    NameRegex::new(&n.value).map_err(|e| error(n, e.to_string()))
}

fn name(n: &InfoNode) -> Result<Name, ValidatorError> {
    Name::from_uri(&n.value).map_err(|e| error(n, format!("name {:?}: {e}", n.value)))
}

fn sig_type(n: &InfoNode) -> Result<u64, ValidatorError> {
    match n.value.as_str() {
        "rsa-sha256" => Ok(signature_type::SHA256_WITH_RSA),
        "ecdsa-sha256" => Ok(signature_type::SHA256_WITH_ECDSA),
        "sha256" => Ok(signature_type::DIGEST_SHA256),
        "hmac-sha256" => Ok(signature_type::HMAC_WITH_SHA256),
        v => Err(error(n, format!("sig-type {v:?}: rsa-sha256, ecdsa-sha256, sha256 or hmac-sha256"))),
    }
}

fn filter(n: &InfoNode) -> Result<Filter, ValidatorError> {
    if child(n, "type")?.value != "name" {
        return Err(error(n, "a filter's type is name"));
    }
    match n.children.iter().find(|c| c.key == "regex") {
        Some(r) => Ok(Filter::Regex(regex(r)?)),
        None => Ok(Filter::Name(name(child(n, "name")?)?, Relation::parse(child(n, "relation")?)?)),
    }
}

fn checker(n: &InfoNode) -> Result<Checker, ValidatorError> {
    let sig_type = n.children.iter().find(|c| c.key == "sig-type").map(sig_type).transpose()?;
    match child(n, "type")?.value.as_str() {
        "hierarchical" => Ok(Checker {
            sig_type,
            key: KeyCheck::Hyper {
                k: NameRegex::new("^(<>*)<KEY><>{1,3}$").expect("a valid pattern"),
                k_expand: "\\1".into(),
                relation: Relation::IsPrefixOf,
                p: NameRegex::new("^(<>*)$").expect("a valid pattern"),
                p_expand: "\\1".into(),
            },
        }),
        "customized" => {
            let kl = child(n, "key-locator")?;
            if child(kl, "type")?.value != "name" {
                return Err(error(kl, "a key-locator's type is name"));
            }
            let key = if let Some(r) = kl.children.iter().find(|c| c.key == "regex") {
                KeyCheck::Regex(regex(r)?)
            } else if let Some(h) = kl.children.iter().find(|c| c.key == "hyper-relation") {
                KeyCheck::Hyper {
                    k: regex(child(h, "k-regex")?)?,
                    k_expand: child(h, "k-expand")?.value.clone(),
                    relation: Relation::parse(child(h, "h-relation")?)?,
                    p: regex(child(h, "p-regex")?)?,
                    p_expand: child(h, "p-expand")?.value.clone(),
                }
            } else {
                KeyCheck::Name(name(child(kl, "name")?)?, Relation::parse(child(kl, "relation")?)?)
            };
            Ok(Checker { sig_type, key })
        }
        t => Err(error(n, format!("checker type {t:?}: customized or hierarchical"))),
    }
}

fn rule(n: &InfoNode) -> Result<Rule, ValidatorError> {
    let for_data = match child(n, "for")?.value.as_str() {
        "data" => true,
        "interest" => false,
        v => Err(error(n, format!("for {v:?}: data or interest")))?,
    };
    let mut r = Rule {
        id: n.children.iter().find(|c| c.key == "id").map(|c| c.value.clone()).unwrap_or_default(),
        for_data,
        filters: Vec::new(),
        checkers: Vec::new(),
    };
    for c in &n.children {
        match c.key.as_str() {
            "filter" => r.filters.push(filter(c)?),
            "checker" => r.checkers.push(checker(c)?),
            "id" | "for" => {}
            k => return Err(error(c, format!("unknown {k:?} in a rule"))),
        }
    }
    if r.checkers.is_empty() {
        return Err(error(n, "a rule needs a checker"));
    }
    Ok(r)
}

/// Adds the trust anchors of a `trust-anchor` section to `v` (with `read` false, checks the
/// section's shape only, reading no file).
fn trust_anchor(n: &InfoNode, v: &mut Validator, read: bool) -> Result<(), ValidatorError> {
    let load = |path: &Path, at: &InfoNode| TrustAnchor::load(path).map_err(|e| error(at, e.to_string()));
    let ty = child(n, "type")?;
    let refresh = n.children.iter().find(|c| c.key == "refresh").map(refresh_period).transpose()?;
    if !read {
        let needs = match ty.value.as_str() {
            "any" => None,
            "file" => Some("file-name"),
            "base64" => Some("base64-string"),
            "dir" => Some("dir"),
            t => return Err(error(n, format!("trust-anchor type {t:?}: file, base64, dir or any"))),
        };
        return needs.map_or(Ok(()), |k| child(n, k).map(|_| ()));
    }
    match ty.value.as_str() {
        "any" => v.any = true,
        "file" | "dir" => {
            let dir = ty.value == "dir";
            let at = child(n, if dir { "dir" } else { "file-name" })?;
            let path = Path::new(&at.value);
            if dir && !path.is_dir() {
                return Err(error(at, format!("{}: not a folder", at.value)));
            }
            let anchors = anchor_files(path, dir).iter().map(|p| load(p, at)).collect::<Result<Vec<_>, _>>()?;
            match refresh {
                Some(period_ms) => v.refreshed.push(RefreshedAnchors { path: path.into(), dir, period_ms, read_ms: None, anchors }),
                None => v.anchors.extend(anchors),
            }
        }
        "base64" => {
            let b = child(n, "base64-string")?;
            let wire = super::authorization::base64_text(b.value.as_bytes()).map_err(|e| error(b, format!("not base64: {e}")))?;
            v.anchors.push(TrustAnchor::from_certificate(&wire, "base64-string").map_err(|e| error(b, e.to_string()))?);
        }
        t => return Err(error(n, format!("trust-anchor type {t:?}: file, base64, dir or any"))),
    }
    Ok(())
}

impl Validator {
    /// A validator from the `rule` and `trust-anchor` sections of a configuration (relative
    /// file and directory names are relative to the working directory: the configuration's
    /// reader resolves them first).
    ///
    /// # Errors
    /// The first section that cannot be used, with its line.
    pub fn from_info(nodes: &[InfoNode]) -> Result<Validator, ValidatorError> {
        Validator::read(nodes, true)
    }

    /// Checks a configuration as [`Validator::from_info`] would read it, but for its trust
    /// anchors' files (a reader that resolves their names later checks the rest first).
    ///
    /// # Errors
    /// As [`Validator::from_info`], no file read.
    pub fn check(nodes: &[InfoNode]) -> Result<(), ValidatorError> {
        Validator::read(nodes, false).map(|_| ())
    }

    fn read(nodes: &[InfoNode], read_anchors: bool) -> Result<Validator, ValidatorError> {
        let mut v = Validator::default();
        for n in nodes {
            match n.key.as_str() {
                "rule" => v.rules.push(rule(n)?),
                "trust-anchor" => trust_anchor(n, &mut v, read_anchors)?,
                k => return Err(error(n, format!("unknown {k:?}: a rule or a trust-anchor"))),
            }
        }
        Ok(v)
    }

    /// Starts validating a signed command Interest at wall-clock time `now_ms`.
    ///
    /// # Errors
    /// The [`Rejection`] when it already fails.
    pub fn start(&mut self, interest: &InterestView<'_>, now_ms: u64) -> Result<Progress, Rejection> {
        if self.any {
            return Ok(Progress::Accepted);
        }
        let command = signed_command(interest)?;
        let Some(KeyLocatorView::Name(locator)) = command.info.key_locator else {
            return Err(Rejection::Silent("the signature has no KeyLocator name".into()));
        };
        let locator = locator.to_name();
        let full = interest.name().to_name();
        let name = full.prefix(full.len().saturating_sub(command.signature_components));
        self.check_rule(false, command.info.signature_type, &name, &locator)?;
        let timestamp = self.timestamps.check(&locator, command.timestamp_ms, now_ms)?;
        let pending = Pending {
            need: locator.clone(),
            locator,
            timestamp: Some(timestamp),
            signed: vec![(command.signed, command.info.signature_type, command.value.to_vec())],
            keys: Vec::new(),
        };
        self.resolve(Box::new(pending), now_ms)
    }

    /// Starts validating a signed Data packet (a prefix announcement, NFD's
    /// `prefix_announcement_validation`) at wall-clock time `now_ms`: the first `for data` rule
    /// matching its name, then its KeyLocator's chain as for a command (no timestamp).
    ///
    /// # Errors
    /// The [`Rejection`] (always [`Rejection::Forbidden`]) when it already fails.
    pub fn start_data(&mut self, data: &[u8], now_ms: u64) -> Result<Progress, Rejection> {
        if self.any {
            return Ok(Progress::Accepted);
        }
        let forbid = |why: String| Rejection::Forbidden(why);
        let data = DataView::decode(data).map_err(|e| forbid(format!("the Data does not decode: {e}")))?;
        let info = data.signature_info();
        let Some(KeyLocatorView::Name(locator)) = info.key_locator else {
            return Err(forbid(format!("{} has no KeyLocator name", data.name())));
        };
        let locator = locator.to_name();
        self.check_rule(true, info.signature_type, &data.name().to_name(), &locator)?;
        let pending = Pending {
            need: locator.clone(),
            locator,
            timestamp: None,
            signed: vec![(data.signed_portion().to_vec(), info.signature_type, data.signature_value().to_vec())],
            keys: Vec::new(),
        };
        self.resolve(Box::new(pending), now_ms)
    }

    /// Goes on with `pending` given `certificate`, the Data its fetch brought.
    ///
    /// # Errors
    /// The [`Rejection`] when the certificate does not do.
    pub fn resume(&mut self, mut pending: Box<Pending>, certificate: &[u8], now_ms: u64) -> Result<Progress, Rejection> {
        let forbid = |why: String| Rejection::Forbidden(why);
        let data = DataView::decode(certificate).map_err(|e| forbid(format!("the certificate does not decode: {e}")))?;
        let cert_name = data.name().to_name();
        if !pending.need.is_prefix_of(&cert_name) {
            return Err(forbid(format!("{cert_name} is not under {}", pending.need)));
        }
        let validity = data.signature_info().validity_period.and_then(super::announce::validity_period);
        if !validity.is_some_and(|(not_before, not_after)| (not_before..=not_after).contains(&now_ms)) {
            return Err(forbid(format!("{cert_name} is outside its ValidityPeriod")));
        }
        let key = TrustAnchor::from_certificate(certificate, &cert_name.to_string()).map_err(|e| forbid(e.to_string()))?;
        let info = data.signature_info();
        let Some(KeyLocatorView::Name(signer)) = info.key_locator else {
            return Err(forbid(format!("{cert_name} has no KeyLocator name")));
        };
        let signer = signer.to_name();
        if signer.is_prefix_of(&cert_name) || pending.keys.iter().any(|k| signer.is_prefix_of(&k.name)) {
            return Err(forbid(format!("{cert_name} is signed by itself or by a certificate below it, and is no trust anchor")));
        }
        self.check_rule(true, info.signature_type, &cert_name, &signer)?;
        pending.signed.push((data.signed_portion().to_vec(), info.signature_type, data.signature_value().to_vec()));
        pending.keys.push(key);
        pending.need = signer;
        self.resolve(pending, now_ms)
    }

    /// The first rule for the packet kind matching `name` must have a checker that passes.
    fn check_rule(&self, for_data: bool, sig_type: u64, name: &Name, locator: &Name) -> Result<(), Rejection> {
        let kind = if for_data { "data" } else { "interest" };
        let Some(rule) = self.rules.iter().find(|r| r.for_data == for_data && r.matches(name)) else {
            return Err(Rejection::Forbidden(format!("no {kind} rule matches {name}")));
        };
        if !rule.checkers.iter().any(|c| c.passes(sig_type, name, locator)) {
            return Err(Rejection::Forbidden(format!("rule {:?}: no checker passes {name} signed by {locator}", rule.id)));
        }
        Ok(())
    }

    /// Verifies the chain if its top is an anchor; else asks for the next certificate.
    fn resolve(&mut self, pending: Box<Pending>, now_ms: u64) -> Result<Progress, Rejection> {
        for r in &mut self.refreshed {
            r.refresh(now_ms);
        }
        let refreshed = self.refreshed.iter().flat_map(|r| &r.anchors);
        let mut anchors = self.anchors.iter().chain(refreshed).filter(|a| pending.need.is_prefix_of(&a.name)).peekable();
        if anchors.peek().is_none() {
            if pending.keys.len() >= MAX_CHAIN {
                return Err(Rejection::Forbidden(format!("no trust anchor within {MAX_CHAIN} certificates")));
            }
            return Ok(Progress::Fetch(pending));
        }
        let (last, below) = pending.signed.split_last().expect("the command is always there");
        let top = anchors.any(|a| a.verifies(last.1, &last.0, &last.2));
        let chain = below.iter().zip(&pending.keys).all(|((signed, ty, value), key)| key.verifies(*ty, signed, value));
        if !top || !chain {
            return Err(Rejection::Forbidden(format!("a signature on the chain of {} does not verify", pending.locator)));
        }
        // Time passed while certificates were fetched: the timestamp must still be the latest.
        if let Some(timestamp) = pending.timestamp {
            let timestamp = self.timestamps.check(&pending.locator, Some(timestamp), now_ms)?;
            self.timestamps.record(pending.locator.clone(), timestamp, now_ms);
        }
        Ok(Progress::Accepted)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use nexthop_wire::{Emit, Interest, KeyLocator, SignatureInfo};
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::SigningKey;
    use p256::pkcs8::EncodePublicKey;

    use super::*;
    use crate::conf::info::parse_info;

    const NOW: u64 = 1_800_000_000_000;

    pub(in crate::mgmt) fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).expect("a valid scalar")
    }

    pub(in crate::mgmt) fn der(key: &SigningKey, message: &[u8]) -> Vec<u8> {
        let s: p256::ecdsa::Signature = key.sign(message);
        s.to_der().as_bytes().to_vec()
    }

    fn validity() -> Vec<u8> {
        let mut v = Vec::new();
        crate::lp::encode::put_tlv(&mut v, 0xfe, b"20200101T000000");
        crate::lp::encode::put_tlv(&mut v, 0xff, b"20400101T000000");
        v
    }

    /// The certificate of `identity`'s key, signed by `signer` as `signer_name`.
    pub(in crate::mgmt) fn certificate(identity: &str, key: &SigningKey, signer: &SigningKey, signer_name: &str) -> Vec<u8> {
        let name = Name::from_uri(&format!("{identity}/KEY/k1/issuer/v1")).unwrap();
        let spki = key.verifying_key().to_public_key_der().unwrap().into_vec();
        signed(nexthop_wire::Data::new(name, spki), signer, signer_name, Some(validity()))
    }

    /// `data` signed with ECDSA by `signer` as `signer_name`, with `validity` as its
    /// ValidityPeriod if given: its encoding.
    pub(in crate::mgmt) fn signed(
        mut data: nexthop_wire::Data,
        signer: &SigningKey,
        signer_name: &str,
        validity: Option<Vec<u8>>,
    ) -> Vec<u8> {
        data.signature_info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(Name::from_uri(signer_name).unwrap())),
            validity_period: validity,
            ..SignatureInfo::digest_sha256()
        };
        data.signature_value = vec![0; 8];
        let wire = data.to_bytes();
        let portion = DataView::decode(&wire).unwrap().signed_portion().to_vec();
        data.signature_value = der(signer, &portion);
        data.to_bytes()
    }

    /// A v0.3 registration command signed by `key` as `locator`.
    fn command(key: &SigningKey, locator: &str, time: u64) -> Vec<u8> {
        let name = Name::from_uri("/localhop/nfd/rib/register/params").unwrap();
        let mut i = Interest::new(name);
        let info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(Name::from_uri(locator).unwrap())),
            time: Some(time),
            nonce: Some(vec![1, 2, 3, 4]),
            ..SignatureInfo::digest_sha256()
        };
        i.sign_with(info, |signed| der(key, signed));
        i.to_bytes()
    }

    /// The sample rules (`localhop_security.sample`) anchored at `anchor_file`.
    fn config(anchor_file: &Path) -> Validator {
        let text = format!("{SAMPLE_RULES}trust-anchor\n{{\n  type file\n  file-name \"{}\"\n}}\n", anchor_file.display());
        Validator::from_info(&parse_info(&text).unwrap()).unwrap()
    }

    /// The testbed root's certificate in a file, and a validator anchored there.
    fn rooted(dir: &Path) -> Validator {
        let root = key(1);
        let file = dir.join("root.ndncert");
        std::fs::write(&file, certificate("/testbed", &root, &root, "/testbed/KEY/k1")).unwrap();
        config(&file)
    }

    fn run(v: &mut Validator, wire: &[u8], certs: &[Vec<u8>], now: u64) -> Result<usize, Rejection> {
        let interest = InterestView::decode(wire).unwrap();
        let mut fetched = 0;
        let mut progress = v.start(&interest, now)?;
        loop {
            match progress {
                Progress::Accepted => return Ok(fetched),
                Progress::Fetch(p) => {
                    let cert = certs.iter().find(|c| p.wanted().is_prefix_of(&DataView::decode(c).unwrap().name().to_name()));
                    let cert = cert.ok_or_else(|| Rejection::Forbidden(format!("test has no {}", p.wanted())))?;
                    fetched += 1;
                    progress = v.resume(p, cert, now)?;
                }
            }
        }
    }

    #[test]
    fn a_chain_to_the_anchor_is_accepted_and_each_break_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = rooted(dir.path());
        let (root, site, alice) = (key(1), key(2), key(3));
        let site_cert = certificate("/testbed/site", &site, &root, "/testbed/KEY/k1");
        let alice_cert = certificate("/testbed/site/alice", &alice, &site, "/testbed/site/KEY/k1");
        let certs = vec![site_cert.clone(), alice_cert.clone()];
        assert_eq!(run(&mut v, &command(&alice, "/testbed/site/alice/KEY/k1", NOW), &certs, NOW), Ok(2));
        // A replay, and an older timestamp.
        assert!(matches!(run(&mut v, &command(&alice, "/testbed/site/alice/KEY/k1", NOW), &certs, NOW), Err(Rejection::Forbidden(_))));
        // Signed by another key under alice's name.
        let forged = command(&key(9), "/testbed/site/alice/KEY/k1", NOW + 1);
        assert!(matches!(run(&mut v, &forged, &certs, NOW), Err(Rejection::Forbidden(_))));
        // A certificate for mallory signed by alice: alice is no prefix of mallory (hierarchical).
        let mallory = key(4);
        let mallory_cert = certificate("/testbed/mallory", &mallory, &alice, "/testbed/site/alice/KEY/k1");
        let mut all = certs.clone();
        all.push(mallory_cert);
        let r = run(&mut v, &command(&mallory, "/testbed/mallory/KEY/k1", NOW + 2), &all, NOW);
        assert!(matches!(&r, Err(Rejection::Forbidden(why)) if why.contains("Hierarchy Rule")), "{r:?}");
        // A self-signed certificate that is no anchor.
        let eve = key(5);
        let eve_cert = certificate("/testbed/eve", &eve, &eve, "/testbed/eve/KEY/k1");
        assert!(matches!(run(&mut v, &command(&eve, "/testbed/eve/KEY/k1", NOW + 3), &[eve_cert], NOW), Err(Rejection::Forbidden(_))));
        // Unsigned: dropped silently.
        let mut plain = Interest::new(Name::from_uri("/localhop/nfd/rib/register/params").unwrap());
        plain.sign_digest_sha256();
        assert!(matches!(run(&mut v, &plain.to_bytes(), &certs, NOW), Err(Rejection::Silent(_))));
        // Outside the certificate's ValidityPeriod.
        let later = 2_300_000_000_000; // 2042
        assert!(matches!(run(&mut v, &command(&alice, "/testbed/site/alice/KEY/k1", later), &certs, later), Err(Rejection::Forbidden(_))));
        // And alice again, later: accepted.
        assert_eq!(run(&mut v, &command(&alice, "/testbed/site/alice/KEY/k1", NOW + 10), &certs, NOW + 10), Ok(2));
    }

    /// A `dir` anchor with `refresh` follows its folder: a root certificate added is trusted,
    /// and one removed no longer, once the period has passed; before, what was read stays.
    #[test]
    fn refreshed_anchors_follow_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let anchors = dir.path().join("anchors");
        std::fs::create_dir(&anchors).unwrap();
        let text = format!("{SAMPLE_RULES}trust-anchor\n{{\n  type dir\n  dir \"{}\"\n  refresh 10s\n}}\n", anchors.display());
        let mut v = Validator::from_info(&parse_info(&text).unwrap()).unwrap();
        let root = key(1);
        let signed = |t: u64| command(&root, "/testbed/KEY/k1", t);
        let no_anchor = |r: Result<usize, Rejection>| matches!(&r, Err(Rejection::Forbidden(why)) if why.contains("test has no"));
        assert!(no_anchor(run(&mut v, &signed(NOW), &[], NOW)), "an empty folder");
        std::fs::write(anchors.join("root.ndncert"), certificate("/testbed", &root, &root, "/testbed/KEY/k1")).unwrap();
        std::fs::write(anchors.join("README"), "not a certificate").unwrap();
        assert!(no_anchor(run(&mut v, &signed(NOW + 5_000), &[], NOW + 5_000)), "read 5 s ago");
        assert_eq!(run(&mut v, &signed(NOW + 10_000), &[], NOW + 10_000), Ok(0), "read again: trusted (README skipped)");
        std::fs::remove_file(anchors.join("root.ndncert")).unwrap();
        assert_eq!(run(&mut v, &signed(NOW + 15_000), &[], NOW + 15_000), Ok(0));
        assert!(no_anchor(run(&mut v, &signed(NOW + 20_000), &[], NOW + 20_000)), "removed");
        let node = |value: &str| InfoNode { key: "refresh".into(), value: value.into(), line: 1, children: Vec::new() };
        assert_eq!(refresh_period(&node("2h")).unwrap(), 7_200_000);
        assert_eq!(refresh_period(&node("0s")).unwrap(), 3_600_000, "0: ndn-cxx's hour");
    }

    #[test]
    fn only_matching_commands_pass_the_interest_rule() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = rooted(dir.path());
        let root = key(1);
        // Signed by the anchor itself: nothing to fetch.
        assert_eq!(run(&mut v, &command(&root, "/testbed/KEY/k1", NOW), &[], NOW), Ok(0));
        let mut other = Interest::new(Name::from_uri("/localhop/nfd/faces/create/params").unwrap());
        let info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(Name::from_uri("/testbed/KEY/k1").unwrap())),
            time: Some(NOW + 1),
            ..SignatureInfo::digest_sha256()
        };
        other.sign_with(info, |s| der(&root, s));
        let r = run(&mut v, &other.to_bytes(), &[], NOW);
        assert!(matches!(&r, Err(Rejection::Forbidden(why)) if why.contains("no interest rule")), "{r:?}");
    }

    #[test]
    fn checkers_relations_and_anchor_any() {
        let n = |s: &str| Name::from_uri(s).unwrap();
        assert_eq!(identity_of(&n("/a/b/KEY/k")), n("/a/b"));
        assert_eq!(identity_of(&n("/a/b/KEY/k/i/v")), n("/a/b"));
        assert_eq!(identity_of(&n("/a/b")), n("/a/b"));
        let named = Checker { sig_type: None, key: KeyCheck::Name(n("/a"), Relation::IsStrictPrefixOf) };
        assert!(named.passes(3, &n("/x"), &n("/a/b/KEY/k")));
        assert!(!named.passes(3, &n("/x"), &n("/a/KEY/k")), "the identity /a is not a strict prefix of itself");
        let typed = Checker { sig_type: Some(1), key: KeyCheck::Name(n("/"), Relation::IsPrefixOf) };
        assert!(!typed.passes(3, &n("/x"), &n("/a/KEY/k")), "RSA asked, ECDSA given");
        let any = Validator::from_info(&parse_info("trust-anchor\n{\n  type any\n}\n").unwrap()).unwrap();
        let mut any = any;
        let mut plain = Interest::new(n("/localhop/nfd/rib/register/p"));
        plain.sign_digest_sha256();
        assert!(matches!(any.start(&InterestView::decode(&plain.to_bytes()).unwrap(), NOW), Ok(Progress::Accepted)));
    }

    proptest::proptest! {
        /// Whatever comes back for a certificate — any bytes, or a Data with any name suffix,
        /// content and signature — is refused or taken, never a panic.
        #[test]
        fn any_certificate_answer_never_panics(
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            suffix in proptest::collection::vec("[a-z]{1,4}", 0..3),
            content in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
            signature in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80),
            locator in "(/testbed(/site)?/KEY/k1)|(/x/y)|(/)",
        ) {
            let dir = tempfile::tempdir().unwrap();
            let fresh = rooted(dir.path());
            let mut v = fresh.clone();
            let wire = command(&key(3), "/testbed/site/alice/KEY/k1", NOW);
            let start = || match fresh.clone().start(&InterestView::decode(&wire).unwrap(), NOW) {
                Ok(Progress::Fetch(p)) => p,
                other => panic!("{other:?}"),
            };
            let _ = v.resume(start(), &junk, NOW);
            let name = Name::from_uri(&format!("/testbed/site/alice/KEY/k1/{}", suffix.join("/"))).unwrap();
            let mut data = nexthop_wire::Data::new(name, content);
            data.signature_info = SignatureInfo {
                signature_type: signature_type::SHA256_WITH_ECDSA,
                key_locator: Some(KeyLocator::Name(Name::from_uri(&locator).unwrap())),
                validity_period: Some(validity()),
                ..SignatureInfo::digest_sha256()
            };
            data.signature_value = signature;
            let _ = v.resume(start(), &data.to_bytes(), NOW);
            // The same bytes as a prefix announcement to validate: refused, or a certificate
            // to fetch, never a panic (and junk never accepted).
            proptest::prop_assert!(!matches!(v.start_data(&junk, NOW), Ok(Progress::Accepted)));
            let _ = v.start_data(&data.to_bytes(), NOW);
        }
    }

    #[test]
    fn bad_configurations_name_their_line() {
        for (text, line) in [
            ("rule\n{\n  for interest\n}\n", 1),
            ("rule\n{\n  for packets\n  checker\n  {\n    type hierarchical\n  }\n}\n", 1),
            ("rule\n{\n  for data\n  checker\n  {\n    type fancy\n  }\n}\n", 4),
            ("rule\n{\n  for data\n  filter\n  {\n    type name\n    regex ^<a\n  }\n  checker\n  {\n    type hierarchical\n  }\n}\n", 7),
            ("trust-anchor\n{\n  type file\n  file-name /nonexistent/root.cert\n}\n", 4),
            ("trust-anchor\n{\n  type dir\n  dir /nonexistent\n}\n", 4),
            ("trust-anchor\n{\n  type dir\n  dir /\n  refresh 1d\n}\n", 5),
            ("trust-anchor\n{\n  type dir\n  dir /\n  refresh h\n}\n", 5),
            ("policy\n{\n}\n", 1),
        ] {
            let e = Validator::from_info(&parse_info(text).unwrap()).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
        }
    }
}
