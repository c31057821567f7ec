//! Running as an unprivileged user once started, as NFD's `general.user` and `general.group`
//! have it (NFD's `PrivilegeHelper`).
//!
//! # Overview
//! A forwarder started as root (to open Ethernet ports, bind to an interface, make its Unix
//! socket under `/run`) need not forward as root. With `forwarder.user` (and
//! `forwarder.group`; without it, the user's own group) set, [`Privileges::become_user`]
//! switches the process's *effective* user and group to them once the listeners and faces of
//! the start are open; packets from the network are then handled as that user. The real and
//! saved ids stay root, so that [`Privileges::elevated`] can take root back for the few things
//! that need it later — opening the multicast faces and Ethernet ports of an interface that
//! comes up, and a configuration reload, which may bind new listeners — and drop it again
//! after. This is NFD's scheme: it guards against mistakes made with root's rights (a bug that
//! writes a file, say), not against an attacker who takes the process over and takes root
//! back; a full `setuid` would, but then the forwarder could not follow new interfaces.
//!
//! With no user and no group configured, nothing changes. `setegid`/`seteuid` apply to every
//! thread of the process (glibc passes them on).

use std::ffi::CString;
use std::io;

/// The user and group to run as, and whether they are in effect.
#[derive(Debug, Default)]
pub struct Privileges {
    /// (uid, gid) to drop to; `None`: nothing is changed.
    to: Option<(libc::uid_t, libc::gid_t)>,
}

impl Privileges {
    /// The user `user` and group `group` (names; `group` empty: the user's own group; both
    /// empty: no change).
    ///
    /// # Errors
    /// A user or group this host does not have.
    pub fn lookup(user: &str, group: &str) -> Result<Privileges, String> {
        if user.is_empty() && group.is_empty() {
            return Ok(Privileges::default());
        }
        let (uid, own_gid) = if user.is_empty() {
            // SAFETY: geteuid cannot fail and touches no memory of ours.
            (unsafe { libc::geteuid() }, None)
        } else {
            let (uid, gid) = user_ids(user).ok_or_else(|| format!("forwarder.user: no user {user:?} on this host"))?;
            (uid, Some(gid))
        };
        let gid = if group.is_empty() {
            // SAFETY: getegid cannot fail and touches no memory of ours.
            own_gid.unwrap_or_else(|| unsafe { libc::getegid() })
        } else {
            group_id(group).ok_or_else(|| format!("forwarder.group: no group {group:?} on this host"))?
        };
        Ok(Privileges { to: Some((uid, gid)) })
    }

    /// Switches the effective group, then user, to the configured ones (nothing when none is).
    ///
    /// # Errors
    /// The kernel's refusal (not started as root, say).
    pub fn become_user(&self) -> io::Result<()> {
        let Some((uid, gid)) = self.to else { return Ok(()) };
        // SAFETY: setegid/seteuid take plain integers and change only the process's ids.
        check(unsafe { libc::setegid(gid) })?;
        // SAFETY: as above.
        check(unsafe { libc::seteuid(uid) })
    }

    /// Runs `f` as root again (the real user, which started the forwarder), then drops to the
    /// configured user again; with none configured, just runs `f`. Failing to take root back
    /// is logged and `f` runs as it is (what it opens may then be refused, and says so).
    pub fn elevated<T>(&self, f: impl FnOnce() -> T) -> T {
        if self.to.is_none() {
            return f();
        }
        // SAFETY: getuid/getgid cannot fail; seteuid/setegid take plain integers.
        let raised = unsafe { check(libc::seteuid(libc::getuid())).and_then(|()| check(libc::setegid(libc::getgid()))) };
        if let Err(e) = raised {
            tracing::warn!("cannot take the starting user's privileges back: {e}");
        }
        let out = f();
        if let Err(e) = self.become_user() {
            tracing::error!("cannot drop privileges again: {e}");
        }
        out
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The uid and primary gid of user `name`.
fn user_ids(name: &str) -> Option<(libc::uid_t, libc::gid_t)> {
    let name = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: passwd is plain old data; zeroed is a valid value for getpwnam_r to fill.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to memory we own for the call's length, buf.len() is its size.
    let rc = unsafe { libc::getpwnam_r(name.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found) };
    (rc == 0 && !found.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
}

/// The gid of group `name`.
fn group_id(name: &str) -> Option<libc::gid_t> {
    let name = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 64 * 1024];
    // SAFETY: group is plain old data; zeroed is a valid value for getgrnam_r to fill.
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is to memory we own for the call's length, buf.len() is its size.
    let rc = unsafe { libc::getgrnam_r(name.as_ptr(), &mut grp, buf.as_mut_ptr(), buf.len(), &mut found) };
    (rc == 0 && !found.is_null()).then_some(grp.gr_gid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_and_groups_are_looked_up_by_name() {
        assert_eq!(user_ids("root"), Some((0, 0)));
        assert_eq!(group_id("root"), Some(0));
        assert!(Privileges::lookup("", "").unwrap().to.is_none(), "nothing configured: no change");
        assert_eq!(Privileges::lookup("root", "").unwrap().to, Some((0, 0)), "the user's own group");
        let e = Privileges::lookup("no-such-user-here", "").unwrap_err();
        assert!(e.contains("no user \"no-such-user-here\""), "{e}");
        let e = Privileges::lookup("root", "no-such-group-here").unwrap_err();
        assert!(e.contains("no group"), "{e}");
        // Nothing configured: elevated() just runs.
        assert_eq!(Privileges::default().elevated(|| 7), 7);
        assert!(Privileges::default().become_user().is_ok());
    }
}
