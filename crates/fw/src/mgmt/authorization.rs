//! Who may send management commands: NFD's `authorizations`, with signed command Interests
//! verified against trust-anchor certificates.
//!
//! # Overview
//! [`Authorizations`] holds grants, each a signer and the modules it may command — `faces`,
//! `fib`, `cs`, `strategy-choice`: NFD's privileges ([`Module`]). The signer is either
//! [`Signer::Any`] (NFD's `certfile any`: every command is accepted, signed or not) or a
//! [`TrustAnchor`], the public key of an NDN certificate. A command for a module is accepted
//! when the module has an `any` grant, or when it is a *signed command Interest* that one of the
//! module's anchors verifies (ndn-cxx's command-Interest policy, as NFD runs it):
//! - signed in either form — a v0.3 signed Interest (InterestSignatureInfo and
//!   InterestSignatureValue), or the older name ending in timestamp, nonce, SignatureInfo and
//!   SignatureValue components;
//! - its KeyLocator a name that is a prefix of the anchor certificate's name (the key name, or
//!   the certificate's own);
//! - its signature, over the form's signed portion, right for the key of an anchor so named:
//!   ECDSA P-256 or RSA (PKCS#1 v1.5), both over SHA-256, the SignatureType matching the key;
//! - its timestamp (SignatureTime, or the name's timestamp component) within
//!   [`GRACE_PERIOD_MS`] of now and later than the last one accepted from the same KeyLocator
//!   for that module; [`MAX_RECORDS`] of those are kept, each for [`RECORD_LIFETIME_MS`].
//!
//! A command nothing accepts is rejected as NFD rejects it ([`Rejection`]): silently (the
//! runtime counts the drop) when it carries no signature or no KeyLocator name, and with a
//! 403 answer otherwise. `rib` commands and status datasets are outside this: NFD checks `rib`
//! commands with its `rib` section's validator, which nexthop does not run (they are served to
//! local faces, and under `/localhop` only when configured to).
//!
//! Certificates are read from files as `ndnsec cert-dump` writes them (base64 of the Data
//! packet; a binary Data packet is read too).

use std::path::Path;

use hashbrown::HashMap;
use nexthop_wire::signature::KeyLocatorView;
use nexthop_wire::tlv::Tlv;
use nexthop_wire::types::{signature_type, DATA, SIGNATURE_INFO, SIGNATURE_VALUE};
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{DataView, InterestView, Name, NameView, SignatureInfoView};
use p256::pkcs8::DecodePublicKey;

/// How far a command's timestamp may be from now (ndn-cxx's default grace period).
pub const GRACE_PERIOD_MS: u64 = 2 * 60 * 1000;
/// The most KeyLocators whose last timestamp is kept, per module (ndn-cxx's default).
pub const MAX_RECORDS: usize = 1000;
/// How long a KeyLocator's last timestamp is kept after its last command (ndn-cxx's default).
pub const RECORD_LIFETIME_MS: u64 = 60 * 60 * 1000;

/// A management module that NFD's authorizations cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Module {
    /// `faces/*` commands.
    Faces,
    /// `fib/*` commands.
    Fib,
    /// `cs/*` commands.
    Cs,
    /// `strategy-choice/*` commands.
    StrategyChoice,
}

impl Module {
    /// Every module, in NFD's order.
    pub const ALL: [Module; 4] = [Module::Faces, Module::Fib, Module::Cs, Module::StrategyChoice];

    /// The module a name component or privilege names, if it is one of these.
    pub fn parse(name: &[u8]) -> Option<Module> {
        Module::ALL.into_iter().find(|m| m.name().as_bytes() == name)
    }

    /// Its name, as in command names and NFD's `privileges`.
    pub fn name(self) -> &'static str {
        match self {
            Module::Faces => "faces",
            Module::Fib => "fib",
            Module::Cs => "cs",
            Module::StrategyChoice => "strategy-choice",
        }
    }
}

/// A certificate or grant that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuthorizationError {
    /// The file could not be read.
    #[error("cannot read certificate {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// Neither base64 nor binary of an NDN certificate (a Data packet named `/…/KEY/…/…/…`).
    #[error("{what}: not an NDN certificate ({why})")]
    NotCertificate {
        /// The file.
        what: String,
        /// Why.
        why: String,
    },
    /// The certificate's key is not one nexthop verifies with.
    #[error("{what}: its key is neither ECDSA P-256 nor RSA")]
    UnsupportedKey {
        /// The file.
        what: String,
    },
    /// A privilege that names no module.
    #[error("unknown privilege {0:?} (faces, fib, cs or strategy-choice)")]
    UnknownPrivilege(String),
}

/// A public key commands are verified with.
#[derive(Debug, Clone)]
enum PublicKey {
    EcdsaP256(p256::ecdsa::VerifyingKey),
    Rsa(rsa::pkcs1v15::VerifyingKey<rsa::sha2::Sha256>),
}

/// The key of a trust-anchor certificate.
#[derive(Debug, Clone)]
pub struct TrustAnchor {
    /// The certificate's name, `/<identity>/KEY/<key id>/<issuer id>/<version>`.
    pub name: Name,
    key: PublicKey,
}

impl TrustAnchor {
    /// The anchor of a certificate Data packet (its wire encoding); `what` names it in errors.
    ///
    /// # Errors
    /// [`AuthorizationError::NotCertificate`] or [`AuthorizationError::UnsupportedKey`].
    pub fn from_certificate(wire: &[u8], what: &str) -> Result<TrustAnchor, AuthorizationError> {
        let not = |why: String| AuthorizationError::NotCertificate { what: what.to_string(), why };
        let data = DataView::decode(wire).map_err(|e| not(e.to_string()))?;
        let name = data.name();
        let key_marker = name.len().checked_sub(4).and_then(|i| name.get(i));
        if key_marker.is_none_or(|c| c.value() != b"KEY") {
            return Err(not(format!("its name {} is not /<identity>/KEY/<key id>/<issuer>/<version>", name.to_name())));
        }
        let spki = data.content().unwrap_or_default();
        let key = if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_der(spki) {
            PublicKey::EcdsaP256(k)
        } else if let Ok(k) = rsa::RsaPublicKey::from_public_key_der(spki) {
            PublicKey::Rsa(rsa::pkcs1v15::VerifyingKey::new(k))
        } else {
            return Err(AuthorizationError::UnsupportedKey { what: what.to_string() });
        };
        Ok(TrustAnchor { name: name.to_name(), key })
    }

    /// The anchor of a certificate file: base64 (what `ndnsec cert-dump` writes and NFD reads;
    /// white space ignored) or the binary Data packet.
    ///
    /// # Errors
    /// As [`TrustAnchor::from_certificate`], or [`AuthorizationError::Read`].
    pub fn load(path: &Path) -> Result<TrustAnchor, AuthorizationError> {
        TrustAnchor::from_certificate(&certificate_file(path)?, &path.display().to_string())
    }

    /// Whether `signature` of type `ty` over `signed` is this key's.
    pub(super) fn verifies(&self, ty: u64, signed: &[u8], signature: &[u8]) -> bool {
        use p256::ecdsa::signature::Verifier;
        match &self.key {
            PublicKey::EcdsaP256(k) if ty == signature_type::SHA256_WITH_ECDSA => {
                p256::ecdsa::Signature::from_der(signature).is_ok_and(|s| k.verify(signed, &s).is_ok())
            }
            PublicKey::Rsa(k) if ty == signature_type::SHA256_WITH_RSA => {
                rsa::pkcs1v15::Signature::try_from(signature).is_ok_and(|s| k.verify(signed, &s).is_ok())
            }
            _ => false,
        }
    }
}

/// The Data packet in a certificate file: base64 (what `ndnsec cert-dump` writes and NFD reads;
/// white space ignored) or the binary packet (not checked further).
///
/// # Errors
/// [`AuthorizationError::Read`], or [`AuthorizationError::NotCertificate`] for text that is
/// not base64.
pub fn certificate_file(path: &Path) -> Result<Vec<u8>, AuthorizationError> {
    let what = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| AuthorizationError::Read { path: what.clone(), error })?;
    if bytes.first() == Some(&(DATA as u8)) {
        return Ok(bytes);
    }
    base64_text(&bytes).map_err(|e| AuthorizationError::NotCertificate { what, why: format!("not base64: {e}") })
}

/// The bytes of base64 text, white space ignored (the files of `ndnsec`'s certificates and keys
/// wrap it in lines).
pub(super) fn base64_text(text: &[u8]) -> Result<Vec<u8>, data_encoding::DecodeError> {
    let text: Vec<u8> = text.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    data_encoding::BASE64.decode(&text)
}

/// Who a grant is for.
#[derive(Debug, Clone)]
pub enum Signer {
    /// Anyone: every command is accepted, signed or not (NFD's `certfile any`).
    Any,
    /// Commands signed by this certificate's key.
    Anchor(TrustAnchor),
}

/// A command's rejection, as NFD rejects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Not signed, or no KeyLocator name: dropped without an answer.
    Silent(String),
    /// Answered with a 403 ControlResponse.
    Forbidden(String),
}

/// What one module accepts.
#[derive(Debug, Clone, Default)]
struct ModuleTrust {
    any: bool,
    anchors: Vec<TrustAnchor>,
    timestamps: CommandTimestamps,
}

/// ndn-cxx's command-Interest timestamp policy, which NFD runs: a command's timestamp must be
/// within [`GRACE_PERIOD_MS`] of now and after the last one accepted from its KeyLocator; at
/// most [`MAX_RECORDS`] KeyLocators are remembered, each for [`RECORD_LIFETIME_MS`].
#[derive(Debug, Clone, Default)]
pub(super) struct CommandTimestamps {
    /// KeyLocator → (its last accepted timestamp, when it was accepted), both ms.
    last: HashMap<Name, (u64, u64)>,
}

impl CommandTimestamps {
    /// Whether a command from `locator` with `timestamp` may be accepted at `now_ms` (nothing
    /// is recorded: [`CommandTimestamps::record`] once it is).
    pub(super) fn check(&mut self, locator: &Name, timestamp: Option<u64>, now_ms: u64) -> Result<u64, Rejection> {
        let Some(timestamp) = timestamp else {
            return Err(Rejection::Forbidden("the command has no timestamp".into()));
        };
        if timestamp.abs_diff(now_ms) > GRACE_PERIOD_MS {
            return Err(Rejection::Forbidden("the command's timestamp is outside the grace period".into()));
        }
        self.last.retain(|_, (_, at)| now_ms.saturating_sub(*at) < RECORD_LIFETIME_MS);
        if self.last.get(locator).is_some_and(|&(last, _)| timestamp <= last) {
            return Err(Rejection::Forbidden("the command's timestamp is not after the last one from its key".into()));
        }
        Ok(timestamp)
    }

    /// Records the timestamp of a command accepted from `locator`.
    pub(super) fn record(&mut self, locator: Name, timestamp: u64, now_ms: u64) {
        if self.last.len() >= MAX_RECORDS && !self.last.contains_key(&locator) {
            // The least recently accepted goes, as ndn-cxx's queue drops its front.
            if let Some(oldest) = self.last.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| k.clone()) {
                self.last.remove(&oldest);
            }
        }
        self.last.insert(locator, (timestamp, now_ms));
    }
}

/// The grants, per module, and the command timestamps seen.
#[derive(Debug, Clone, Default)]
pub struct Authorizations {
    modules: [ModuleTrust; 4],
}

/// A signed command's parts: its signature's info and value, what was signed, its timestamp,
/// and how many name components its signature takes (1 for v0.3's ParametersSha256Digest, 4
/// for the older form's timestamp, nonce, SignatureInfo and SignatureValue).
pub(super) struct SignedCommand<'a> {
    pub(super) info: SignatureInfoView<'a>,
    pub(super) value: &'a [u8],
    pub(super) signed: Vec<u8>,
    pub(super) timestamp_ms: Option<u64>,
    pub(super) signature_components: usize,
}

impl Authorizations {
    /// No grants: every command is rejected.
    pub fn none() -> Authorizations {
        Authorizations::default()
    }

    /// `any` for every module (nexthop's default: local faces command everything).
    pub fn any() -> Authorizations {
        let mut a = Authorizations::none();
        for m in Module::ALL {
            a.grant(Signer::Any, m);
        }
        a
    }

    /// Lets `signer` command `module`.
    pub fn grant(&mut self, signer: Signer, module: Module) {
        let trust = &mut self.modules[module as usize];
        match signer {
            Signer::Any => trust.any = true,
            Signer::Anchor(a) => trust.anchors.push(a),
        }
    }

    /// Grants from configuration: each a certificate file (or `any`) and the privileges it has.
    ///
    /// # Errors
    /// The first certificate that cannot be used, or an unknown privilege.
    pub fn from_config<'a>(grants: impl IntoIterator<Item = (&'a str, &'a [String])>) -> Result<Authorizations, AuthorizationError> {
        let mut a = Authorizations::none();
        for (certfile, privileges) in grants {
            let signer = if certfile == "any" { Signer::Any } else { Signer::Anchor(TrustAnchor::load(Path::new(certfile))?) };
            for p in privileges {
                let module = Module::parse(p.as_bytes()).ok_or_else(|| AuthorizationError::UnknownPrivilege(p.clone()))?;
                a.grant(signer.clone(), module);
            }
        }
        Ok(a)
    }

    /// Decides on a command for `module` at wall-clock time `now_ms`.
    ///
    /// # Errors
    /// The [`Rejection`] when no grant accepts it.
    pub fn authorize(&mut self, module: Module, interest: &InterestView<'_>, now_ms: u64) -> Result<(), Rejection> {
        let trust = &mut self.modules[module as usize];
        if trust.any {
            return Ok(());
        }
        let command = signed_command(interest)?;
        let Some(KeyLocatorView::Name(locator)) = command.info.key_locator else {
            return Err(Rejection::Silent("the signature has no KeyLocator name".into()));
        };
        let locator = locator.to_name();
        let timestamp = trust.timestamps.check(&locator, command.timestamp_ms, now_ms)?;
        let mut named = trust.anchors.iter().filter(|a| locator.is_prefix_of(&a.name)).peekable();
        if named.peek().is_none() {
            return Err(Rejection::Forbidden(format!("no certificate granted {} is named by {locator}", module.name())));
        }
        if !named.any(|a| a.verifies(command.info.signature_type, &command.signed, command.value)) {
            return Err(Rejection::Forbidden(format!("the signature is not the key's of {locator}")));
        }
        trust.timestamps.record(locator, timestamp, now_ms);
        Ok(())
    }
}

/// The signature, signed portion and timestamp of a command in either signed form.
pub(super) fn signed_command<'a>(interest: &InterestView<'a>) -> Result<SignedCommand<'a>, Rejection> {
    if let (Some(info), Some(value)) = (interest.signature_info(), interest.signature_value()) {
        let mut signed = Vec::new();
        interest.signed_portion(|part| signed.extend_from_slice(part));
        return Ok(SignedCommand { info, value, signed, timestamp_ms: info.time, signature_components: 1 });
    }
    let unsigned = || Rejection::Silent("the command is not signed".into());
    let name = interest.name();
    let n = name.len();
    if n < 4 {
        return Err(unsigned());
    }
    let component = |i: usize| name.get(i).map(|c| c.value()).unwrap_or_default();
    let inner = |i: usize, ty: u32| Tlv::read_exact(component(i), ty).ok().map(|t| t.value);
    let (Some(info), Some(value)) = (inner(n - 2, SIGNATURE_INFO), inner(n - 1, SIGNATURE_VALUE)) else {
        return Err(unsigned());
    };
    let info = SignatureInfoView::parse(info).map_err(|_| unsigned())?;
    let timestamp_ms = read_nonneg(0, component(n - 4)).ok();
    Ok(SignedCommand { info, value, signed: name_before_last(&name).to_vec(), timestamp_ms, signature_components: 4 })
}

/// The TLV-VALUE of `name` up to its last component: what the older signed-command form signs.
fn name_before_last<'a>(name: &NameView<'a>) -> &'a [u8] {
    let value = name.value();
    let last = name.last().map_or(0, |c| c.encoded_len());
    &value[..value.len() - last]
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_wire::{Component, Emit, Interest, KeyLocator, SignatureInfo};
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::SigningKey;
    use p256::pkcs8::EncodePublicKey;

    const NOW: u64 = 1_800_000_000_000;

    /// An ECDSA signature in DER, as NDN carries it.
    fn der_signature(key: &SigningKey, message: &[u8]) -> Vec<u8> {
        let s: p256::ecdsa::Signature = key.sign(message);
        s.to_der().as_bytes().to_vec()
    }

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).expect("a valid scalar")
    }

    /// A self-signed-shaped certificate for `key` (the anchor reads only its name and key).
    fn certificate(identity: &str, key: &SigningKey) -> Vec<u8> {
        let name = Name::from_uri(&format!("{identity}/KEY/k1/self/v1")).expect("name");
        let spki = key.verifying_key().to_public_key_der().expect("der").into_vec();
        let mut data = nexthop_wire::Data::new(name, spki);
        data.sign_digest_sha256();
        data.to_bytes()
    }

    fn anchor(identity: &str, key: &SigningKey) -> TrustAnchor {
        TrustAnchor::from_certificate(&certificate(identity, key), "test").expect("anchor")
    }

    /// A v0.3 signed command for `module`, signed by `key` as `locator` at `time`.
    fn command(module: &str, key: &SigningKey, locator: &str, time: Option<u64>) -> Vec<u8> {
        let name = Name::from_uri(&format!("/localhost/nfd/{module}/add-nexthop")).expect("name").with_generic(vec![0x68, 0]);
        let mut i = Interest::new(name);
        let mut info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(Name::from_uri(locator).expect("locator"))),
            ..Default::default()
        };
        info.time = time;
        i.sign_with(info, |signed| der_signature(key, signed));
        i.to_bytes()
    }

    fn decide(a: &mut Authorizations, module: Module, wire: &[u8], now: u64) -> Result<(), Rejection> {
        a.authorize(module, &InterestView::decode(wire).expect("interest"), now)
    }

    fn granted(key: &SigningKey, module: Module) -> Authorizations {
        let mut a = Authorizations::none();
        a.grant(Signer::Anchor(anchor("/op", key)), module);
        a
    }

    #[test]
    fn any_accepts_unsigned_commands() {
        let wire = Interest::new(Name::from_uri("/localhost/nfd/fib/add-nexthop").expect("name")).to_bytes();
        assert_eq!(decide(&mut Authorizations::any(), Module::Fib, &wire, NOW), Ok(()));
        assert!(matches!(decide(&mut Authorizations::none(), Module::Fib, &wire, NOW), Err(Rejection::Silent(_))));
    }

    #[test]
    fn a_granted_key_commands_its_modules_only() {
        let k = key(7);
        let mut a = granted(&k, Module::Fib);
        assert_eq!(decide(&mut a, Module::Fib, &command("fib", &k, "/op/KEY/k1", Some(NOW)), NOW), Ok(()));
        let faces = command("faces", &k, "/op/KEY/k1", Some(NOW + 1));
        assert!(matches!(decide(&mut a, Module::Faces, &faces, NOW), Err(Rejection::Forbidden(_))));
        // The certificate's full name locates it too.
        assert_eq!(decide(&mut a, Module::Fib, &command("fib", &k, "/op/KEY/k1/self/v1", Some(NOW + 2)), NOW), Ok(()));
    }

    #[test]
    fn another_key_or_a_tampered_command_is_forbidden() {
        let (k, other) = (key(7), key(9));
        let mut a = granted(&k, Module::Fib);
        let forged = command("fib", &other, "/op/KEY/k1", Some(NOW));
        assert!(matches!(decide(&mut a, Module::Fib, &forged, NOW), Err(Rejection::Forbidden(_))));
        // One byte of the signed name changed after signing.
        let mut tampered = command("fib", &k, "/op/KEY/k1", Some(NOW));
        let at = tampered.windows(3).position(|w| w == b"fib").expect("module");
        tampered[at] = b'F';
        assert!(matches!(decide(&mut a, Module::Fib, &tampered, NOW), Err(Rejection::Forbidden(_))));
        assert!(matches!(
            decide(&mut a, Module::Fib, &command("fib", &k, "/elsewhere/KEY/k1", Some(NOW)), NOW),
            Err(Rejection::Forbidden(_))
        ));
    }

    /// Every single-bit change of a signed command either fails to decode or is refused (and
    /// one that passed would have to lie outside what was signed).
    #[test]
    fn a_changed_bit_passes_only_outside_the_signed_portion() {
        let k = key(7);
        let original = command("fib", &k, "/op/KEY/k1", Some(NOW));
        let signed_portion = |wire: &[u8]| {
            let mut out = Vec::new();
            InterestView::decode(wire).expect("decodes").signed_portion(|p| out.extend_from_slice(p));
            out
        };
        let signed = signed_portion(&original);
        let (mut decoded, mut passed) = (0, 0);
        for i in 0..original.len() {
            let mut changed = original.clone();
            changed[i] ^= 1 << (i % 8);
            // (A change after ApplicationParameters breaks the name's parameters digest.)
            let Ok(view) = InterestView::decode(&changed) else { continue };
            decoded += 1;
            if granted(&k, Module::Fib).authorize(Module::Fib, &view, NOW).is_ok() {
                assert_eq!(signed_portion(&changed), signed, "byte {i} changed what was signed, and passed");
                passed += 1;
            }
        }
        assert!(decoded > 20 && passed == 0, "{decoded} changed commands decoded, {passed} passed");
    }

    #[test]
    fn timestamps_must_be_fresh_and_increasing() {
        let k = key(7);
        let mut a = granted(&k, Module::Fib);
        let at = |t| command("fib", &k, "/op/KEY/k1", Some(t));
        assert!(matches!(decide(&mut a, Module::Fib, &command("fib", &k, "/op/KEY/k1", None), NOW), Err(Rejection::Forbidden(_))));
        assert!(decide(&mut a, Module::Fib, &at(NOW - GRACE_PERIOD_MS - 1), NOW).is_err());
        assert!(decide(&mut a, Module::Fib, &at(NOW + GRACE_PERIOD_MS + 1), NOW).is_err());
        assert_eq!(decide(&mut a, Module::Fib, &at(NOW + 5), NOW), Ok(()));
        assert!(decide(&mut a, Module::Fib, &at(NOW + 5), NOW).is_err(), "a replay");
        assert!(decide(&mut a, Module::Fib, &at(NOW + 4), NOW).is_err(), "an older one");
        assert_eq!(decide(&mut a, Module::Fib, &at(NOW + 6), NOW), Ok(()));
        // A record lapses after its lifetime.
        let later = NOW + RECORD_LIFETIME_MS + 10;
        assert_eq!(decide(&mut a, Module::Fib, &at(later - 1000), later), Ok(()));
    }

    #[test]
    fn the_older_signed_name_form_verifies() {
        let k = key(7);
        let mut a = granted(&k, Module::Fib);
        let old_form = |t: u64, signer: &SigningKey| {
            let mut name = Name::from_uri("/localhost/nfd/fib/add-nexthop").expect("name").with_generic(vec![0x68, 0]);
            name = name.with_generic(t.to_be_bytes().to_vec()).with_generic(vec![1; 8]);
            let info = SignatureInfo {
                signature_type: signature_type::SHA256_WITH_ECDSA,
                key_locator: Some(KeyLocator::Name(Name::from_uri("/op/KEY/k1").expect("locator"))),
                ..Default::default()
            };
            let mut info_tlv = vec![0u8; info.encoded_len_as(SIGNATURE_INFO)];
            info.emit_as(SIGNATURE_INFO, &mut nexthop_wire::Writer::new(&mut info_tlv)).expect("fits");
            name = name.with_generic(info_tlv);
            let signature = der_signature(signer, name.value());
            let mut value_tlv = vec![SIGNATURE_VALUE as u8, signature.len() as u8];
            value_tlv.extend_from_slice(&signature);
            Interest::new(name.with(Component::generic(value_tlv))).to_bytes()
        };
        assert_eq!(decide(&mut a, Module::Fib, &old_form(NOW, &k), NOW), Ok(()));
        assert!(decide(&mut a, Module::Fib, &old_form(NOW + 1, &key(9)), NOW).is_err());
        // Unsigned and DigestSha256 commands are dropped silently.
        let plain = Interest::new(Name::from_uri("/localhost/nfd/fib/add-nexthop/x").expect("name")).to_bytes();
        assert!(matches!(decide(&mut a, Module::Fib, &plain, NOW), Err(Rejection::Silent(_))));
        let mut digest = Interest::new(Name::from_uri("/localhost/nfd/fib/add-nexthop/x").expect("name"));
        digest.sign_digest_sha256();
        assert!(matches!(decide(&mut a, Module::Fib, &digest.to_bytes(), NOW), Err(Rejection::Silent(_))));
    }

    #[test]
    fn certificates_load_from_base64_files() {
        let k = key(7);
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("op.ndncert");
        let text = data_encoding::BASE64.encode(&certificate("/op", &k));
        let wrapped: Vec<String> = text.as_bytes().chunks(64).map(|c| String::from_utf8_lossy(c).into_owned()).collect();
        std::fs::write(&path, wrapped.join("\n")).expect("write");
        let a = TrustAnchor::load(&path).expect("loads");
        assert_eq!(a.name, Name::from_uri("/op/KEY/k1/self/v1").expect("name"));
        std::fs::write(&path, "not a certificate").expect("write");
        assert!(matches!(TrustAnchor::load(&path), Err(AuthorizationError::NotCertificate { .. })));
        assert!(matches!(TrustAnchor::load(&dir.path().join("missing")), Err(AuthorizationError::Read { .. })));
        let grants = [("any", &["fib".to_string(), "bogus".to_string()][..])];
        assert!(matches!(Authorizations::from_config(grants), Err(AuthorizationError::UnknownPrivilege(p)) if p == "bogus"));
    }
}
