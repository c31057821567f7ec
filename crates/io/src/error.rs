//! What opening or using a port can fail with.

use std::io;

/// A port's error: its configuration, its interface, or the system call that failed.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// A configuration the port cannot have.
    #[error("{0}")]
    Config(String),
    /// No interface of that name in this network namespace.
    #[error("no interface named {0:?}")]
    NoSuchInterface(String),
    /// A frame longer than a pool frame holds.
    #[error("a frame of {len} bytes does not fit in {max}")]
    FrameTooLong {
        /// Its length.
        len: usize,
        /// The most that fits.
        max: usize,
    },
    /// A system call failed.
    #[error("{what}: {source}")]
    Os {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl PortError {
    /// A system call's failure while doing `what`.
    pub fn os(what: impl Into<String>, source: io::Error) -> PortError {
        PortError::Os { what: what.into(), source }
    }
}
