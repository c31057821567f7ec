//! A key that signs management commands, for a forwarder whose authorizations name its
//! certificate ([`super::authorization`]): what `nexthop ctl --sign-key` uses.
//!
//! # Overview
//! A [`CommandKey`] is an ECDSA P-256 or RSA private key and its key name
//! (`/<identity>/KEY/<key id>`). It signs a command Interest as ndn-cxx's command signer does:
//! a v0.3 signed Interest whose InterestSignatureInfo carries the key name as KeyLocator, a
//! SignatureTime (later than the last one this key signed, so that two commands in one
//! millisecond are both fresh) and an 8-byte SignatureNonce. Keys are read from the file TPM
//! that ndn-cxx's `ndnsec` and python-ndn's `pyndnsec` keep (by default
//! `~/.ndn/ndnsec-key-file`, found by [`super::keychain::Keychain`]): one file per key named by
//! the SHA-256 of the key name's encoding, holding the private key in base64 DER (SEC1 for EC,
//! PKCS#1 for RSA; PKCS#8 is read too).

use std::path::{Path, PathBuf};

use nexthop_wire::types::signature_type;
use nexthop_wire::{Emit, Interest, KeyLocator, Name, SignatureInfo};
use p256::pkcs8::DecodePrivateKey;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use sha2::{Digest, Sha256};

/// A key that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CommandKeyError {
    /// The file could not be read.
    #[error("cannot read the key of {name} from {path}: {error}")]
    Read {
        /// The key's name.
        name: String,
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// Not base64, or not an EC P-256 or RSA private key in SEC1, PKCS#1 or PKCS#8 DER.
    #[error("{path}: not an ECDSA P-256 or RSA private key in base64 DER")]
    NotKey {
        /// The file.
        path: String,
    },
}

/// A private key that signs.
#[derive(Clone)]
enum PrivateKey {
    EcdsaP256(p256::ecdsa::SigningKey),
    Rsa(Box<rsa::pkcs1v15::SigningKey<rsa::sha2::Sha256>>),
}

/// A key that signs management commands, with the time of its last signature.
#[derive(Clone)]
pub struct CommandKey {
    name: Name,
    key: PrivateKey,
    last_ms: u64,
}

impl std::fmt::Debug for CommandKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandKey").field("name", &self.name.to_string()).finish_non_exhaustive()
    }
}

impl CommandKey {
    /// The key `name` from its DER (EC: SEC1 or PKCS#8; RSA: PKCS#1 or PKCS#8); `None` if it is
    /// neither.
    pub fn from_der(name: Name, der: &[u8]) -> Option<CommandKey> {
        let key = if let Ok(k) = p256::SecretKey::from_sec1_der(der).or_else(|_| p256::SecretKey::from_pkcs8_der(der)) {
            PrivateKey::EcdsaP256(k.into())
        } else if let Ok(k) = rsa::RsaPrivateKey::from_pkcs1_der(der).or_else(|_| rsa::RsaPrivateKey::from_pkcs8_der(der)) {
            PrivateKey::Rsa(Box::new(rsa::pkcs1v15::SigningKey::new(k)))
        } else {
            return None;
        };
        Some(CommandKey { name, key, last_ms: 0 })
    }

    /// The key `name` from a file of its base64 DER (white space ignored).
    ///
    /// # Errors
    /// [`CommandKeyError::Read`] or [`CommandKeyError::NotKey`].
    pub fn load(name: Name, path: &Path) -> Result<CommandKey, CommandKeyError> {
        let shown = path.display().to_string();
        let text = std::fs::read(path).map_err(|error| CommandKeyError::Read { name: name.to_string(), path: shown.clone(), error })?;
        let der = super::authorization::base64_text(&text).map_err(|_| CommandKeyError::NotKey { path: shown.clone() })?;
        CommandKey::from_der(name, &der).ok_or(CommandKeyError::NotKey { path: shown })
    }

    /// Where the file TPM in `dir` keeps key `name`: the hex SHA-256 of the name's encoding.
    pub fn tpm_file(dir: &Path, name: &Name) -> PathBuf {
        let digest = Sha256::digest(name.to_bytes());
        dir.join(format!("{}.privkey", data_encoding::HEXLOWER.encode(&digest)))
    }

    /// The key's name, the KeyLocator of what it signs.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// Signs `interest` at wall-clock time `now_ms` with SignatureTime, a SignatureNonce from
    /// `nonce`, and this key as KeyLocator.
    pub fn sign(&mut self, interest: &mut Interest, now_ms: u64, nonce: [u8; 8]) {
        self.last_ms = now_ms.max(self.last_ms + 1);
        let signature_type = match self.key {
            PrivateKey::EcdsaP256(_) => signature_type::SHA256_WITH_ECDSA,
            PrivateKey::Rsa(_) => signature_type::SHA256_WITH_RSA,
        };
        let info = SignatureInfo {
            signature_type,
            key_locator: Some(KeyLocator::Name(self.name.clone())),
            nonce: Some(nonce.to_vec()),
            time: Some(self.last_ms),
            ..Default::default()
        };
        interest.sign_with(info, |signed| match &self.key {
            PrivateKey::EcdsaP256(k) => {
                let s: p256::ecdsa::Signature = k.sign(signed);
                s.to_der().as_bytes().to_vec()
            }
            PrivateKey::Rsa(k) => k.sign(signed).to_vec(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::authorization::{Authorizations, Module, Signer, TrustAnchor};
    use nexthop_wire::InterestView;
    use p256::pkcs8::EncodePublicKey;

    const NOW: u64 = 1_800_000_000_000;

    #[test]
    fn a_signed_command_passes_the_authorization_of_its_certificate() {
        let secret = p256::SecretKey::from_slice(&[5; 32]).expect("scalar");
        let sec1 = secret.to_sec1_der().expect("sec1");
        let name = Name::from_uri("/op/KEY/k").expect("name");
        let dir = tempfile::tempdir().expect("dir");
        let path = CommandKey::tpm_file(dir.path(), &name);
        std::fs::write(&path, data_encoding::BASE64.encode(&sec1)).expect("write");
        let mut key = CommandKey::load(name.clone(), &path).expect("loads");

        let spki = secret.public_key().to_public_key_der().expect("der").into_vec();
        let mut cert = nexthop_wire::Data::new(Name::from_uri("/op/KEY/k/self/v1").expect("name"), spki);
        cert.sign_digest_sha256();
        let mut auth = Authorizations::none();
        auth.grant(Signer::Anchor(TrustAnchor::from_certificate(&cert.to_bytes(), "test").expect("anchor")), Module::Fib);

        // Two commands in the same millisecond both pass: the second's time is one later.
        for nonce in [[1; 8], [2; 8]] {
            let mut i = Interest::new(Name::from_uri("/localhost/nfd/fib/add-nexthop/x").expect("name"));
            key.sign(&mut i, NOW, nonce);
            let wire = i.to_bytes();
            assert_eq!(auth.authorize(Module::Fib, &InterestView::decode(&wire).expect("decodes"), NOW), Ok(()));
        }
        std::fs::write(&path, "AAAA").expect("write");
        assert!(matches!(CommandKey::load(name, &path), Err(CommandKeyError::NotKey { .. })));
    }
}
