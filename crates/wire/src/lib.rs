//! nexthop-wire: the NDN packet format v0.3 and NDNLPv2, as zero-copy views and owned
//! representations. No I/O.
//!
//! # Overview of types
//! | element | checked view (borrowed) | owned representation |
//! |---|---|---|
//! | any packet on a face | [`PacketView`] | — |
//! | Interest | [`InterestView`] | [`Interest`] |
//! | Data | [`DataView`] | [`Data`] |
//! | NDNLPv2 LpPacket | [`LpPacketView`] | [`LpPacket`] (with [`Nack`], [`NackReason`]) |
//! | Name | [`NameView`] | [`Name`] |
//! | name component | [`ComponentRef`] | [`Component`] |
//! | MetaInfo, SignatureInfo | [`MetaInfoView`], [`SignatureInfoView`] | [`MetaInfo`], [`SignatureInfo`] |
//! | any TLV element | [`tlv::Tlv`], [`tlv::TlvReader`] | [`tlv::UnknownElement`] |
//!
//! # The contract (after smoltcp's `wire`)
//! - `XView::decode(&[u8]) -> Result<XView>` validates the whole element once: framing,
//!   element order, the critical/non-critical TLV-TYPE rule, sizes and cross-element rules.
//!   It never panics and never allocates, for any input. After it succeeds no accessor fails.
//! - `X::decode` = `XView::decode` + `to_owned()`; allocation is bounded by the input length.
//! - Owned types implement [`Emit`]: `encoded_len()` is exact, `emit(&mut [u8])` writes into a
//!   caller's buffer, `to_bytes()` allocates. For every packet in canonical encoding (shortest
//!   VAR-NUMBERs and NonNegativeIntegers, which is what every NDN library writes),
//!   `X::decode(b)?.to_bytes() == b`: unrecognised non-critical elements are kept in place.
//! - Every failure is a typed [`Error`], so the forwarder can count drops by reason.
//!
//! Choices where the specifications leave room are written in each module's documentation:
//! VAR-NUMBERs must be in shortest form ([`varnum`]); known elements must appear in the
//! specified order; the ForwardingHint is the v0.3 form ([`interest`]).
//!
//! # Example
//! ```
//! use nexthop_wire::{Data, DataView, Emit, Interest, InterestView, Name};
//!
//! let mut interest = Interest::new(Name::from_uri("/example/testApp/randomData").unwrap());
//! interest.can_be_prefix = true;
//! interest.nonce = Some([1, 2, 3, 4]);
//! let bytes = interest.to_bytes();
//! let view = InterestView::decode(&bytes).unwrap();
//! assert_eq!(view.name().to_string(), "/example/testApp/randomData");
//!
//! let mut data = Data::new(view.name().to_name(), b"Hello, world!".to_vec());
//! data.sign_digest_sha256();
//! let bytes = data.to_bytes();
//! assert!(DataView::decode(&bytes).unwrap().verify_digest_sha256());
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod component;
pub mod data;
mod error;
pub mod fuzzing;
pub mod interest;
pub mod lp;
pub mod meta_info;
pub mod name;
pub mod packet;
pub mod signature;
pub mod tlv;
pub mod types;
pub mod varnum;
pub mod writer;

pub use component::{Component, ComponentRef, Kind};
pub use data::{Data, DataView};
pub use error::{Error, Result};
pub use interest::{Interest, InterestView};
pub use lp::{LpPacket, LpPacketView, Nack, NackReason};
pub use meta_info::{MetaInfo, MetaInfoView};
pub use name::{Name, NameView};
pub use packet::PacketView;
pub use signature::{KeyLocator, SignatureInfo, SignatureInfoView};
pub use writer::{Emit, Writer};
