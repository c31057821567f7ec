//! A veth pair: two Ethernet interfaces joined like a cable, made for one run and removed after
//! it, to join two forwarder processes by an Ethernet link with no IP configuration. Making one
//! needs CAP_NET_ADMIN (iproute2's `ip`, which `scripts/setup.sh` installs if missing).

use std::process::Command;

/// A veth pair, removed on drop.
#[derive(Debug)]
pub struct VethPair {
    /// One end.
    pub a: String,
    /// The other.
    pub b: String,
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ip").args(args).output()?;
    anyhow::ensure!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    Ok(())
}

impl VethPair {
    /// Makes the pair `<tag>a`/`<tag>b` (at most 14 bytes of tag), without IPv6 on either end,
    /// both up.
    ///
    /// # Errors
    /// `ip` is missing or refuses (no CAP_NET_ADMIN).
    pub fn new(tag: &str) -> anyhow::Result<VethPair> {
        let (a, b) = (format!("{tag}a"), format!("{tag}b"));
        let _ = ip(&["link", "del", &a]);
        ip(&["link", "add", &a, "type", "veth", "peer", "name", &b])?;
        let pair = VethPair { a, b };
        for end in [&pair.a, &pair.b] {
            // No IPv6 (no router solicitations or MLD reports on the link while it is measured).
            let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{end}/disable_ipv6"), "1");
            ip(&["link", "set", end, "up"])?;
        }
        Ok(pair)
    }

    /// The Ethernet address of `end` (one of the pair's names).
    ///
    /// # Errors
    /// No such interface.
    pub fn mac(end: &str) -> anyhow::Result<String> {
        Ok(std::fs::read_to_string(format!("/sys/class/net/{end}/address"))?.trim().to_string())
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.a]);
    }
}
