//! The one error type of the wire crate.
//!
//! Every decoder returns either a packet or one of these; none of them panics. Each variant says
//! what was wrong in terms of the NDN specification, so a drop counter can be keyed by it.

/// Why a byte string is not a valid NDN/NDNLPv2 element, or why an encoding could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended inside a VAR-NUMBER, a TLV header or a TLV-VALUE.
    #[error("input truncated")]
    Truncated,
    /// A VAR-NUMBER used more octets than its value needs (nexthop accepts only the shortest form).
    #[error("VAR-NUMBER is not in its shortest form")]
    NonMinimalVarNumber,
    /// TLV-TYPE 0 or a TLV-TYPE above 2^32-1 (both reserved by the specification).
    #[error("TLV-TYPE {0} is reserved")]
    ReservedType(u64),
    /// The outer element has another TLV-TYPE than the one being decoded.
    #[error("expected TLV-TYPE {expected}, found {found}")]
    UnexpectedType {
        /// The TLV-TYPE the decoder wanted.
        expected: u32,
        /// The TLV-TYPE it found.
        found: u32,
    },
    /// An element the decoder does not know, whose TLV-TYPE is critical (< 32 or odd).
    #[error("unrecognised critical element TLV-TYPE {0}")]
    UnrecognizedCritical(u32),
    /// An unknown NDNLPv2 header field outside the ignorable range [800, 959] with low bits 00.
    #[error("NDNLPv2 header field TLV-TYPE {0} is unknown and may not be ignored")]
    UnknownLpField(u32),
    /// A known element appeared after one that the specification orders after it.
    #[error("element TLV-TYPE {0} is out of order")]
    OutOfOrder(u32),
    /// A non-repeatable element appeared twice.
    #[error("element TLV-TYPE {0} is repeated")]
    Repeated(u32),
    /// A required element is absent.
    #[error("required element TLV-TYPE {0} is missing")]
    Missing(u32),
    /// An element is present but its value breaks the specification.
    #[error("invalid value in element TLV-TYPE {ty}: {what}")]
    InvalidValue {
        /// TLV-TYPE of the offending element.
        ty: u32,
        /// What is wrong, in words.
        what: &'static str,
    },
    /// Bytes remain after the outermost element.
    #[error("{0} bytes follow the packet")]
    TrailingBytes(usize),
    /// A ParametersSha256DigestComponent does not match the Interest's parameters.
    #[error("ParametersSha256DigestComponent does not match the parameters")]
    ParametersDigestMismatch,
    /// A string is not a valid NDN URI.
    #[error("invalid NDN URI: {0}")]
    InvalidUri(&'static str),
    /// An output buffer is shorter than the encoding.
    #[error("output buffer too small")]
    BufferTooSmall,
}

/// Result with the wire crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
