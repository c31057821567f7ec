//! The keychain of ndn-cxx's `ndnsec` and python-ndn's `pyndnsec`: the identities a user or a
//! forwarder signs as, read where those tools keep them.
//!
//! # Overview
//! A keychain is two stores. The *PIB* (`pib.db`, SQLite: tables `identities`, `keys` and
//! `certificates`, each name stored as its TLV encoding, one row of each marked default) lists
//! the identities, their keys and their certificates; the *file TPM* (a folder, one file per
//! private key, [`CommandKey::tpm_file`]) holds the private keys. [`Keychain::locate`] finds
//! both as ndn-cxx and python-ndn do: by the `pib` and `tpm` client settings
//! ([`super::client_conf`]: `NDN_CLIENT_PIB` and `NDN_CLIENT_TPM`, else `client.conf`), else
//! `~/.ndn` and `~/.ndn/ndnsec-key-file`. Only the `pib-sqlite3` and `tpm-file` schemes exist
//! here (the ones ndn-cxx and python-ndn use on Linux).
//!
//! What reads it: `nexthop ctl --sign-identity` (sign as an identity, as `nfdc` signs as the
//! default one), `[[propagate]] identity` and `forwarder.propagate_keychain` (prefix
//! propagation signing as the keychain's identities, as NFD's `auto_prefix_propagate` does).
//! The PIB is opened read-only and only while a question is asked: nothing here writes to it.

use std::path::{Path, PathBuf};

use nexthop_wire::{Emit, Name, NameView};
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::client_conf::ClientConf;
use super::command_key::{CommandKey, CommandKeyError};

/// A keychain that cannot be found or read.
#[derive(Debug, thiserror::Error)]
pub enum KeychainError {
    /// HOME is not set, so `~/.ndn` cannot be found.
    #[error("no keychain: HOME is not set")]
    NoHome,
    /// A `pib` or `tpm` locator of a scheme this reader does not know.
    #[error("{what} = {locator:?}: only pib-sqlite3 and tpm-file keychains are read")]
    Scheme {
        /// `pib` or `tpm`.
        what: &'static str,
        /// The locator as given.
        locator: String,
    },
    /// `pib.db` could not be opened (absent, or not SQLite).
    #[error("cannot open the PIB {path}: {error}")]
    Open {
        /// The file.
        path: String,
        /// Why.
        error: rusqlite::Error,
    },
    /// A question to the PIB failed (not the tables ndn-cxx makes).
    #[error("the PIB {path} cannot be read: {error}")]
    Query {
        /// The file.
        path: String,
        /// Why.
        error: rusqlite::Error,
    },
    /// A name in the PIB that does not decode.
    #[error("the PIB {path} holds a name that does not decode")]
    BadName {
        /// The file.
        path: String,
    },
    /// The PIB has no such identity, or it has no default key, or the key no default
    /// certificate, or there is no default identity.
    #[error("the PIB {path} has no {what}")]
    Missing {
        /// The file.
        path: String,
        /// What was asked, named.
        what: String,
    },
    /// The private key could not be read from the TPM.
    #[error(transparent)]
    Key(#[from] CommandKeyError),
}

/// Where a keychain's two stores are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keychain {
    /// The PIB's file, `<folder>/pib.db`.
    pib: PathBuf,
    /// The file TPM's folder.
    tpm: PathBuf,
}

/// An identity of the PIB, and whether it is the default one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Its name.
    pub name: Name,
    /// The PIB marks it default.
    pub is_default: bool,
}

impl Keychain {
    /// The keychain whose PIB is `<pib_dir>/pib.db` and whose file TPM is `tpm_dir`.
    pub fn at(pib_dir: &Path, tpm_dir: &Path) -> Keychain {
        Keychain { pib: pib_dir.join("pib.db"), tpm: tpm_dir.to_path_buf() }
    }

    /// The user's keychain, found as ndn-cxx and python-ndn find it (see the module doc).
    ///
    /// # Errors
    /// [`KeychainError::NoHome`], or [`KeychainError::Scheme`] for a locator of another kind.
    pub fn locate() -> Result<Keychain, KeychainError> {
        Keychain::from_conf(&ClientConf::load())
    }

    /// The keychain `conf` names (`~/.ndn` and `~/.ndn/ndnsec-key-file` where it names none).
    fn from_conf(conf: &ClientConf) -> Result<Keychain, KeychainError> {
        let ndn = conf.home.as_ref().ok_or(KeychainError::NoHome)?.join(".ndn");
        let location = |what: &'static str, locator: &Option<String>, scheme: &str, default: PathBuf| {
            let Some(locator) = locator else { return Ok(default) };
            let (s, loc) = locator.split_once(':').unwrap_or((locator.as_str(), ""));
            if s != scheme {
                return Err(KeychainError::Scheme { what, locator: locator.clone() });
            }
            Ok(if loc.is_empty() { default } else { conf.dir.join(loc) })
        };
        let pib = location("pib", &conf.pib, "pib-sqlite3", ndn.clone())?;
        let tpm = location("tpm", &conf.tpm, "tpm-file", ndn.join("ndnsec-key-file"))?;
        Ok(Keychain::at(&pib, &tpm))
    }

    /// The PIB's file.
    pub fn pib_file(&self) -> &Path {
        &self.pib
    }

    /// The PIB's folder.
    pub fn pib_dir(&self) -> &Path {
        self.pib.parent().unwrap_or(Path::new(""))
    }

    /// The file TPM's folder.
    pub fn tpm_dir(&self) -> &Path {
        &self.tpm
    }

    /// Whether there is a PIB to read (ndn-cxx makes it with the first identity).
    pub fn exists(&self) -> bool {
        self.pib.is_file()
    }

    /// Every identity of the PIB, in the order they were made.
    ///
    /// # Errors
    /// [`KeychainError::Open`], [`KeychainError::Query`] or [`KeychainError::BadName`].
    pub fn identities(&self) -> Result<Vec<Identity>, KeychainError> {
        let db = self.open()?;
        let mut statement = db.prepare("SELECT identity, is_default FROM identities ORDER BY id").map_err(|e| self.query(e))?;
        let rows = statement.query_map([], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Option<i64>>(1)?))).map_err(|e| self.query(e))?;
        let mut identities = Vec::new();
        for row in rows {
            let (wire, is_default) = row.map_err(|e| self.query(e))?;
            identities.push(Identity { name: self.name(&wire)?, is_default: is_default == Some(1) });
        }
        Ok(identities)
    }

    /// The default identity.
    ///
    /// # Errors
    /// As [`Keychain::identities`], or [`KeychainError::Missing`] when none is default.
    pub fn default_identity(&self) -> Result<Name, KeychainError> {
        let found = self.identities()?.into_iter().find(|i| i.is_default).map(|i| i.name);
        found.ok_or_else(|| self.missing("default identity".into()))
    }

    /// The default key of `identity` (`/<identity>/KEY/<key id>`).
    ///
    /// # Errors
    /// As [`Keychain::identities`], or [`KeychainError::Missing`].
    pub fn default_key(&self, identity: &Name) -> Result<Name, KeychainError> {
        let sql = "SELECT keys.key_name FROM keys JOIN identities ON keys.identity_id = identities.id \
                   WHERE identities.identity = ?1 AND keys.is_default = 1";
        let wire = self.one(sql, &identity.to_bytes())?;
        let wire = wire.ok_or_else(|| self.missing(format!("default key of the identity {identity}")))?;
        self.name(&wire)
    }

    /// The default certificate of `key` (a Data packet's encoding), or `None` when the PIB
    /// has none for it.
    ///
    /// # Errors
    /// [`KeychainError::Open`] or [`KeychainError::Query`].
    pub fn default_certificate(&self, key: &Name) -> Result<Option<Vec<u8>>, KeychainError> {
        let sql = "SELECT certificates.certificate_data FROM certificates JOIN keys ON certificates.key_id = keys.id \
                   WHERE keys.key_name = ?1 AND certificates.is_default = 1";
        self.one(sql, &key.to_bytes())
    }

    /// The private key `name`, from the file TPM.
    ///
    /// # Errors
    /// [`KeychainError::Key`]: not in the TPM, or not a key.
    pub fn private_key(&self, name: Name) -> Result<CommandKey, KeychainError> {
        let path = CommandKey::tpm_file(&self.tpm, &name);
        Ok(CommandKey::load(name, &path)?)
    }

    /// What signs as `identity`: its default key, and that key's default certificate.
    ///
    /// # Errors
    /// As [`Keychain::default_key`], [`Keychain::private_key`] and
    /// [`Keychain::default_certificate`].
    pub fn signer(&self, identity: &Name) -> Result<(CommandKey, Option<Vec<u8>>), KeychainError> {
        let key = self.default_key(identity)?;
        let certificate = self.default_certificate(&key)?;
        Ok((self.private_key(key)?, certificate))
    }

    fn open(&self) -> Result<Connection, KeychainError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Connection::open_with_flags(&self.pib, flags).map_err(|error| KeychainError::Open { path: self.shown(), error })?;
        // ndnsec may be writing it: wait a little for its lock rather than fail.
        db.busy_timeout(std::time::Duration::from_millis(500)).map_err(|e| self.query(e))?;
        Ok(db)
    }

    /// The one blob `sql` selects with `parameter`, if any.
    fn one(&self, sql: &str, parameter: &[u8]) -> Result<Option<Vec<u8>>, KeychainError> {
        let db = self.open()?;
        db.query_row(sql, [parameter], |r| r.get::<_, Vec<u8>>(0)).optional().map_err(|e| self.query(e))
    }

    fn name(&self, wire: &[u8]) -> Result<Name, KeychainError> {
        NameView::decode(wire).map(|n| n.to_name()).map_err(|_| KeychainError::BadName { path: self.shown() })
    }

    fn shown(&self) -> String {
        self.pib.display().to_string()
    }

    fn query(&self, error: rusqlite::Error) -> KeychainError {
        KeychainError::Query { path: self.shown(), error }
    }

    fn missing(&self, what: String) -> KeychainError {
        KeychainError::Missing { path: self.shown(), what }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PIB with ndn-cxx's tables (the columns read here) and a file TPM, in `dir`.
    fn keychain(dir: &Path, identities: &[(&str, bool)]) -> Keychain {
        let db = Connection::open(dir.join("pib.db")).unwrap();
        db.execute_batch(
            "CREATE TABLE identities(id INTEGER PRIMARY KEY, identity BLOB NOT NULL, is_default INTEGER DEFAULT 0);
             CREATE TABLE keys(id INTEGER PRIMARY KEY, identity_id INTEGER NOT NULL, key_name BLOB NOT NULL,
                               key_bits BLOB NOT NULL, is_default INTEGER DEFAULT 0);
             CREATE TABLE certificates(id INTEGER PRIMARY KEY, key_id INTEGER NOT NULL, certificate_name BLOB NOT NULL,
                                       certificate_data BLOB NOT NULL, is_default INTEGER DEFAULT 0);",
        )
        .unwrap();
        let tpm = dir.join("tpm");
        std::fs::create_dir_all(&tpm).unwrap();
        for (i, (identity, is_default)) in identities.iter().enumerate() {
            let id = i as i64 + 1;
            let name = Name::from_uri(identity).unwrap();
            db.execute("INSERT INTO identities VALUES (?1, ?2, ?3)", (id, name.to_bytes(), *is_default as i64)).unwrap();
            // Two keys; the second is the default.
            for k in 0..2i64 {
                let key = name.clone().with_generic("KEY").with_generic(format!("k{k}"));
                let key_id = id * 10 + k;
                db.execute("INSERT INTO keys VALUES (?1, ?2, ?3, x'00', ?4)", (key_id, id, key.to_bytes(), k)).unwrap();
                let secret = p256::SecretKey::from_slice(&[(key_id % 200) as u8 + 1; 32]).unwrap();
                let sec1 = secret.to_sec1_der().unwrap();
                std::fs::write(CommandKey::tpm_file(&tpm, &key), data_encoding::BASE64.encode(&sec1)).unwrap();
                let mut cert = nexthop_wire::Data::new(key.clone().with_generic("self").with_generic("v1"), vec![k as u8]);
                cert.sign_digest_sha256();
                db.execute("INSERT INTO certificates VALUES (?1, ?2, ?3, ?4, 1)", (key_id, key_id, cert.name.to_bytes(), cert.to_bytes()))
                    .unwrap();
            }
        }
        Keychain::at(dir, &tpm)
    }

    #[test]
    fn identities_keys_and_certificates_are_read_with_their_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let k = keychain(dir.path(), &[("/alice", false), ("/bob/home", true)]);
        let names: Vec<String> =
            k.identities().unwrap().iter().map(|i| format!("{}{}", i.name, if i.is_default { "*" } else { "" })).collect();
        assert_eq!(names, ["/alice", "/bob/home*"]);
        assert_eq!(k.default_identity().unwrap().to_string(), "/bob/home");
        let alice = Name::from_uri("/alice").unwrap();
        let key = k.default_key(&alice).unwrap();
        assert_eq!(key.to_string(), "/alice/KEY/k1");
        let (signer, cert) = k.signer(&alice).unwrap();
        assert_eq!(signer.name(), &key);
        let cert = nexthop_wire::DataView::decode(cert.as_deref().unwrap()).unwrap().name().to_name();
        assert_eq!(cert.to_string(), "/alice/KEY/k1/self/v1");
        assert_eq!(k.default_certificate(&Name::from_uri("/alice/KEY/none").unwrap()).unwrap(), None);
    }

    #[test]
    fn what_is_missing_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let k = keychain(dir.path(), &[("/alice", false)]);
        let e = k.default_identity().unwrap_err().to_string();
        assert!(e.contains("no default identity"), "{e}");
        let e = k.default_key(&Name::from_uri("/carol").unwrap()).unwrap_err().to_string();
        assert!(e.contains("no default key of the identity /carol"), "{e}");
        std::fs::remove_file(CommandKey::tpm_file(&dir.path().join("tpm"), &Name::from_uri("/alice/KEY/k1").unwrap())).unwrap();
        assert!(matches!(k.signer(&Name::from_uri("/alice").unwrap()), Err(KeychainError::Key(CommandKeyError::Read { .. }))));
        let absent = Keychain::at(&dir.path().join("nowhere"), dir.path());
        assert!(!absent.exists());
        assert!(matches!(absent.identities(), Err(KeychainError::Open { .. })));
        std::fs::write(dir.path().join("junk.db"), b"not sqlite at all, not at all").unwrap();
        let junk = Keychain { pib: dir.path().join("junk.db"), tpm: dir.path().into() };
        assert!(matches!(junk.identities(), Err(KeychainError::Open { .. } | KeychainError::Query { .. })));
    }

    #[test]
    fn the_keychain_is_located_as_ndn_cxx_and_python_ndn_locate_it() {
        let home = PathBuf::from("/home/u");
        let conf = |pib: Option<&str>, tpm: Option<&str>, dir: &str| ClientConf {
            home: Some(home.clone()),
            pib: pib.map(String::from),
            tpm: tpm.map(String::from),
            dir: dir.into(),
            ..Default::default()
        };
        let ndn = home.join(".ndn");
        assert_eq!(Keychain::from_conf(&conf(None, None, "")).unwrap(), Keychain::at(&ndn, &ndn.join("ndnsec-key-file")), "defaults");
        assert!(matches!(Keychain::from_conf(&ClientConf::default()), Err(KeychainError::NoHome)));
        // Relative locations from client.conf's folder; a scheme alone keeps the default.
        let c = conf(Some("pib-sqlite3:pibs"), Some("tpm-file"), "/home/u/.ndn");
        assert_eq!(Keychain::from_conf(&c).unwrap(), Keychain::at(&ndn.join("pibs"), &ndn.join("ndnsec-key-file")));
        let c = conf(Some("pib-sqlite3:/p"), Some("tpm-file:/t"), "/etc/ndn");
        assert_eq!(Keychain::from_conf(&c).unwrap(), Keychain::at(Path::new("/p"), Path::new("/t")));
        let e = Keychain::from_conf(&conf(None, Some("tpm-osxkeychain:"), "")).unwrap_err().to_string();
        assert!(e.contains("only pib-sqlite3 and tpm-file"), "{e}");
    }
}
