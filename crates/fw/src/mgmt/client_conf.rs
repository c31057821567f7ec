//! ndn-cxx's and python-ndn's client settings (`client.conf`): where an app finds its
//! forwarder (`transport`) and its keychain (`pib`, `tpm`).
//!
//! # Overview
//! Each setting comes from the environment (`NDN_CLIENT_TRANSPORT`, `NDN_CLIENT_PIB`,
//! `NDN_CLIENT_TPM`) or else from the first `client.conf` found: `~/.ndn/client.conf`, then
//! `/usr/local/etc/ndn/client.conf` and `/etc/ndn/client.conf` — `key=value` lines, `;` and
//! `#` starting comments. A relative location in the file is relative to the file's folder
//! (python-ndn's reading). `nexthop ctl` takes its default face from `transport`, as `nfdc`
//! does; [`super::keychain::Keychain::locate`] its stores from `pib` and `tpm`.

use std::path::{Path, PathBuf};

/// The `client.conf` files tried after `~/.ndn/client.conf`.
const SYSTEM_FILES: [&str; 2] = ["/usr/local/etc/ndn/client.conf", "/etc/ndn/client.conf"];

/// The client settings in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientConf {
    /// HOME, where set.
    pub home: Option<PathBuf>,
    /// `transport`: the forwarder's face (`unix:///run/nfd/nfd.sock`, `tcp4://host:port`).
    pub transport: Option<String>,
    /// `pib`: the PIB's locator (`pib-sqlite3[:folder]`).
    pub pib: Option<String>,
    /// `tpm`: the TPM's locator (`tpm-file[:folder]`).
    pub tpm: Option<String>,
    /// The folder of the file read, for its relative locations.
    pub dir: PathBuf,
}

impl ClientConf {
    /// The settings of this process's environment and files.
    pub fn load() -> ClientConf {
        ClientConf::load_with(|k| std::env::var(k).ok(), &SYSTEM_FILES.map(PathBuf::from))
    }

    /// [`ClientConf::load`] with `env` for the environment and `system_files` for the files
    /// tried after `~/.ndn/client.conf`.
    pub(super) fn load_with(env: impl Fn(&str) -> Option<String>, system_files: &[PathBuf]) -> ClientConf {
        let home = env("HOME").map(PathBuf::from);
        let user = home.as_ref().map(|h| h.join(".ndn/client.conf"));
        let file = user.into_iter().chain(system_files.iter().cloned()).find(|p| p.is_file());
        let text = file.as_ref().and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
        let setting = |key: &str| env(&format!("NDN_CLIENT_{}", key.to_uppercase())).or_else(|| value(&text, key));
        ClientConf {
            transport: setting("transport"),
            pib: setting("pib"),
            tpm: setting("tpm"),
            dir: file.as_ref().and_then(|p| p.parent()).unwrap_or(Path::new("")).to_path_buf(),
            home,
        }
    }
}

/// The value of `key` in client.conf's text.
fn value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with(';') && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_over_the_users_file_over_the_systems() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().display().to_string();
        let env = |vars: Vec<(&'static str, String)>| move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        let system = home.path().join("etc-client.conf");
        std::fs::write(&system, "transport=tcp4://hub:6363\ntpm=tpm-file:/keys\n").unwrap();
        let c = ClientConf::load_with(env(vec![("HOME", h.clone())]), std::slice::from_ref(&system));
        assert_eq!((c.transport.as_deref(), c.tpm.as_deref(), c.pib.as_deref()), (Some("tcp4://hub:6363"), Some("tpm-file:/keys"), None));
        assert_eq!(c.dir, home.path());
        let ndn = home.path().join(".ndn");
        std::fs::create_dir_all(&ndn).unwrap();
        std::fs::write(ndn.join("client.conf"), "; comment\n# another\ntransport = unix:///tmp/x.sock\n").unwrap();
        let c = ClientConf::load_with(env(vec![("HOME", h.clone())]), std::slice::from_ref(&system));
        assert_eq!((c.transport.as_deref(), c.tpm.as_deref()), (Some("unix:///tmp/x.sock"), None), "the user's file alone");
        assert_eq!(c.dir, ndn);
        let vars = vec![("HOME", h), ("NDN_CLIENT_TRANSPORT", "tcp6://[::1]:6363".into())];
        assert_eq!(ClientConf::load_with(env(vars), &[system]).transport.as_deref(), Some("tcp6://[::1]:6363"));
        assert_eq!(ClientConf::load_with(env(vec![]), &[]), ClientConf::default(), "no HOME, no file");
    }
}
