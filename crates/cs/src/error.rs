//! Errors: what the store refuses, and why. Nothing already stored changes when an operation fails.

use std::path::PathBuf;

/// A Data packet the store would not take.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InsertError {
    /// The bytes are not a valid Data packet (why, in the message rather than as a separate
    /// cause, so that it is said once).
    #[error("not a Data packet: {0}")]
    Malformed(nexthop_wire::Error),
    /// The packet is larger than a chunk slot.
    #[error("Data packet of {len} bytes exceeds the {max}-byte chunk slot")]
    TooLarge {
        /// The packet's size.
        len: usize,
        /// The largest packet a slot holds.
        max: usize,
    },
}

impl From<nexthop_wire::Error> for InsertError {
    fn from(e: nexthop_wire::Error) -> Self {
        InsertError::Malformed(e)
    }
}

/// Why an L2 could not be opened or configured.
#[derive(Debug, thiserror::Error)]
pub enum L2Error {
    /// The configuration is inconsistent.
    #[error("L2 configuration: {0}")]
    Config(String),
    /// The file does not exist and creating it was not asked for.
    #[error("L2 file {0} does not exist")]
    Missing(PathBuf),
    /// The file exists but is smaller than the configured capacity.
    #[error("L2 file {path} holds {actual} bytes, less than the configured {wanted}")]
    TooSmall {
        /// The file.
        path: PathBuf,
        /// Its size.
        actual: u64,
        /// The configured capacity.
        wanted: u64,
    },
    /// The filesystem refuses O_DIRECT and direct I/O was required.
    #[error("L2 file {0}: the filesystem refuses O_DIRECT (set direct = preferred to fall back to buffered I/O)")]
    NoDirectIo(PathBuf),
    /// Any other I/O failure.
    #[error("L2 file {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error (in the message, not a separate cause).
        error: std::io::Error,
    },
}
