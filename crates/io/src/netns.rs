//! Network namespaces made for one run (a test, an experiment) and removed after it, with
//! threads that run inside them: where ports meet real interfaces without touching the host's.
//!
//! # Overview
//! [`Netns::new`] makes a namespace with `ip netns add` (its loopback up); dropping it deletes
//! it and every interface in it (a veth end's peer with it). [`Netns::enter`] moves the calling
//! thread into it: sockets, XDP attachments and interface lookups made by that thread then
//! see the namespace's interfaces. [`veth`] joins two namespaces by a veth pair.

use std::io;
use std::os::fd::AsRawFd;
use std::process::Command;

/// A network namespace, deleted on drop.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim())))
    }
}

impl Netns {
    /// A new namespace called `name` (one left by an earlier run is deleted first).
    ///
    /// # Errors
    /// `ip` is missing or refuses (no CAP_SYS_ADMIN).
    pub fn new(name: &str) -> io::Result<Netns> {
        let _ = ip(&["netns", "del", name]);
        ip(&["netns", "add", name])?;
        let ns = Netns { name: name.to_string() };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// A namespace for a test: [`Netns::new`], or `None` where the test is to be skipped
    /// (`NEXTHOP_SKIP_NET_ADMIN=1`, on a machine without CAP_SYS_ADMIN).
    ///
    /// # Panics
    /// The namespace cannot be made and skipping was not asked for: the test fails, saying why.
    pub fn for_test(name: &str) -> Option<Netns> {
        match Netns::new(name) {
            Ok(ns) => Some(ns),
            Err(e) => {
                let skip = std::env::var("NEXTHOP_SKIP_NET_ADMIN").is_ok_and(|v| v == "1");
                assert!(skip, "making a network namespace (needs CAP_SYS_ADMIN; NEXTHOP_SKIP_NET_ADMIN=1 skips): {e}");
                None
            }
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n <name> <args>`.
    ///
    /// # Errors
    /// `ip` failed.
    pub fn ip(&self, args: &[&str]) -> io::Result<()> {
        let mut all = vec!["-n", &self.name];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Runs `cmd` inside the namespace (`ip netns exec`), returning its output.
    ///
    /// # Errors
    /// It could not start.
    pub fn exec(&self, cmd: &[&str]) -> io::Result<std::process::Output> {
        Command::new("ip").args(["netns", "exec", &self.name]).args(cmd).output()
    }

    /// Moves the calling thread into the namespace (threads it starts later are in it too).
    ///
    /// # Errors
    /// As [`enter`].
    pub fn enter(&self) -> io::Result<()> {
        enter(&self.name)
    }
}

/// Moves the calling thread into the namespace called `name` (threads it starts later are in it
/// too): for a thread that holds only the name of a [`Netns`] another owns.
///
/// # Errors
/// The namespace's file cannot be opened, or `setns` refuses.
pub fn enter(name: &str) -> io::Result<()> {
    let f = std::fs::File::open(format!("/run/netns/{name}"))?;
    // SAFETY: setns only reads the descriptor, a namespace file open for the call; it changes the
    // calling thread's network namespace and touches no memory of this process.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// Joins `a` and `b` by a veth pair, end `a_end` in `a` and `b_end` in `b`, both up, without
/// IPv6 (no router solicitations on a link being measured), each end with `queues` receive and
/// transmit queues.
///
/// # Errors
/// `ip` refused.
pub fn veth(a: &Netns, a_end: &str, b: &Netns, b_end: &str, queues: u32) -> io::Result<()> {
    let q = queues.to_string();
    let each = ["numtxqueues", &q, "numrxqueues", &q];
    let mut args = vec!["link", "add", a_end];
    args.extend_from_slice(&each);
    args.extend_from_slice(&["type", "veth", "peer", "name", b_end]);
    args.extend_from_slice(&each);
    args.extend_from_slice(&["netns", b.name()]);
    a.ip(&args)?;
    for (ns, end) in [(a, a_end), (b, b_end)] {
        let _ = ns.exec(&["sysctl", "-qw", &format!("net.ipv6.conf.{end}.disable_ipv6=1")]);
        ns.ip(&["link", "set", end, "up"])?;
    }
    Ok(())
}
