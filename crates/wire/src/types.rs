//! TLV-TYPE numbers of the NDN packet format v0.3, its naming conventions (rev. 3) and NDNLPv2,
//! exactly as the specifications assign them, and the critical-type rule.

/// Interest packet.
pub const INTEREST: u32 = 5;
/// Data packet.
pub const DATA: u32 = 6;
/// Name.
pub const NAME: u32 = 7;
/// GenericNameComponent.
pub const GENERIC_NAME_COMPONENT: u32 = 8;
/// ImplicitSha256DigestComponent.
pub const IMPLICIT_SHA256_DIGEST_COMPONENT: u32 = 1;
/// ParametersSha256DigestComponent.
pub const PARAMETERS_SHA256_DIGEST_COMPONENT: u32 = 2;
/// KeywordNameComponent.
pub const KEYWORD_NAME_COMPONENT: u32 = 32;
/// SegmentNameComponent (naming conventions rev. 3).
pub const SEGMENT_NAME_COMPONENT: u32 = 50;
/// ByteOffsetNameComponent.
pub const BYTE_OFFSET_NAME_COMPONENT: u32 = 52;
/// VersionNameComponent.
pub const VERSION_NAME_COMPONENT: u32 = 54;
/// TimestampNameComponent.
pub const TIMESTAMP_NAME_COMPONENT: u32 = 56;
/// SequenceNumNameComponent.
pub const SEQUENCE_NUM_NAME_COMPONENT: u32 = 58;

/// CanBePrefix.
pub const CAN_BE_PREFIX: u32 = 33;
/// MustBeFresh.
pub const MUST_BE_FRESH: u32 = 18;
/// ForwardingHint.
pub const FORWARDING_HINT: u32 = 30;
/// Nonce.
pub const NONCE: u32 = 10;
/// InterestLifetime.
pub const INTEREST_LIFETIME: u32 = 12;
/// HopLimit.
pub const HOP_LIMIT: u32 = 34;
/// ApplicationParameters.
pub const APPLICATION_PARAMETERS: u32 = 36;
/// InterestSignatureInfo.
pub const INTEREST_SIGNATURE_INFO: u32 = 44;
/// InterestSignatureValue.
pub const INTEREST_SIGNATURE_VALUE: u32 = 46;

/// MetaInfo.
pub const META_INFO: u32 = 20;
/// Content.
pub const CONTENT: u32 = 21;
/// SignatureInfo.
pub const SIGNATURE_INFO: u32 = 22;
/// SignatureValue.
pub const SIGNATURE_VALUE: u32 = 23;
/// ContentType.
pub const CONTENT_TYPE: u32 = 24;
/// FreshnessPeriod.
pub const FRESHNESS_PERIOD: u32 = 25;
/// FinalBlockId.
pub const FINAL_BLOCK_ID: u32 = 26;

/// SignatureType.
pub const SIGNATURE_TYPE: u32 = 27;
/// KeyLocator.
pub const KEY_LOCATOR: u32 = 28;
/// KeyDigest.
pub const KEY_DIGEST: u32 = 29;
/// SignatureNonce.
pub const SIGNATURE_NONCE: u32 = 38;
/// SignatureTime.
pub const SIGNATURE_TIME: u32 = 40;
/// SignatureSeqNum.
pub const SIGNATURE_SEQ_NUM: u32 = 42;
/// ValidityPeriod (certificates).
pub const VALIDITY_PERIOD: u32 = 253;

/// NDNLPv2 LpPacket.
pub const LP_PACKET: u32 = 100;
/// NDNLPv2 Fragment.
pub const FRAGMENT: u32 = 80;
/// NDNLPv2 Sequence.
pub const SEQUENCE: u32 = 81;
/// NDNLPv2 FragIndex.
pub const FRAG_INDEX: u32 = 82;
/// NDNLPv2 FragCount.
pub const FRAG_COUNT: u32 = 83;
/// NDNLPv2 PitToken.
pub const PIT_TOKEN: u32 = 98;
/// NDNLPv2 Nack.
pub const NACK: u32 = 800;
/// NDNLPv2 NackReason.
pub const NACK_REASON: u32 = 801;
/// NDNLPv2 IncomingFaceId (0x032C; 817 = 0x0331 is its former number, now reserved).
pub const INCOMING_FACE_ID: u32 = 812;
/// NDNLPv2 NextHopFaceId.
pub const NEXT_HOP_FACE_ID: u32 = 816;
/// NDNLPv2 CachePolicy.
pub const CACHE_POLICY: u32 = 820;
/// NDNLPv2 CachePolicyType.
pub const CACHE_POLICY_TYPE: u32 = 821;
/// NDNLPv2 CongestionMark.
pub const CONGESTION_MARK: u32 = 832;
/// NDNLPv2 Ack.
pub const ACK: u32 = 836;
/// NDNLPv2 TxSequence.
pub const TX_SEQUENCE: u32 = 840;
/// NDNLPv2 NonDiscovery.
pub const NON_DISCOVERY: u32 = 844;
/// NDNLPv2 PrefixAnnouncement.
pub const PREFIX_ANNOUNCEMENT: u32 = 848;

/// ContentType values.
pub mod content_type {
    /// BLOB: payload bytes (the default).
    pub const BLOB: u64 = 0;
    /// LINK: a list of delegation names.
    pub const LINK: u64 = 1;
    /// KEY: a public key or certificate.
    pub const KEY: u64 = 2;
    /// NACK: application-level negative acknowledgement.
    pub const NACK: u64 = 3;
    /// PREFIX_ANN: a prefix announcement.
    pub const PREFIX_ANN: u64 = 5;
}

/// SignatureType values.
pub mod signature_type {
    /// DigestSha256: SHA-256 of the signed portion, no key.
    pub const DIGEST_SHA256: u64 = 0;
    /// SignatureSha256WithRsa.
    pub const SHA256_WITH_RSA: u64 = 1;
    /// SignatureSha256WithEcdsa.
    pub const SHA256_WITH_ECDSA: u64 = 3;
    /// SignatureHmacWithSha256.
    pub const HMAC_WITH_SHA256: u64 = 4;
    /// SignatureEd25519.
    pub const ED25519: u64 = 5;
}

/// True when an unrecognised element of this TLV-TYPE must make the packet invalid.
///
/// NDN packet format v0.3, "Considerations for evolvability of TLV-based encoding": TLV-TYPE
/// numbers in 0–31 and all odd numbers are *critical*; an even number ≥ 32 may be skipped.
#[inline]
pub const fn is_critical(ty: u32) -> bool {
    ty < 32 || ty & 1 == 1
}

/// True when an unknown NDNLPv2 header field of this TLV-TYPE may be ignored
/// (NDNLPv2: TLV-TYPE in [800, 959] with its two least significant bits 00).
#[inline]
pub const fn is_ignorable_lp_field(ty: u32) -> bool {
    ty >= 800 && ty <= 959 && ty & 0b11 == 0
}
