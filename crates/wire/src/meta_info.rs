//! MetaInfo of a Data packet.
//!
//! ```text
//! MetaInfo = META-INFO-TYPE TLV-LENGTH [ContentType] [FreshnessPeriod] [FinalBlockId]
//! FinalBlockId = FINAL-BLOCK-ID-TYPE TLV-LENGTH NameComponent
//! ```

use crate::component::{Component, ComponentRef};
use crate::tlv::{
    collect_unknowns, emit_unknowns, once, skip_non_critical, tlv_len, unknowns_len, Elements, Item, Slot, Tlv, UnknownElement,
};
use crate::types::*;
use crate::varnum::{nonneg_len, read_nonneg};
use crate::writer::Writer;
use crate::{Error, Result};

const SLOTS: &[Slot] = &[once(CONTENT_TYPE), once(FRESHNESS_PERIOD), once(FINAL_BLOCK_ID)];

/// A checked MetaInfo, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaInfoView<'a> {
    value: &'a [u8],
    /// ContentType (`None`: absent, meaning BLOB).
    pub content_type: Option<u64>,
    /// FreshnessPeriod in milliseconds (`None`: absent, meaning 0: never fresh).
    pub freshness_period_ms: Option<u64>,
    /// FinalBlockId.
    pub final_block_id: Option<ComponentRef<'a>>,
}

impl<'a> MetaInfoView<'a> {
    /// Validates a MetaInfo TLV-VALUE.
    ///
    /// # Errors
    /// A framing, order or value error. Never panics.
    pub fn parse(value: &'a [u8]) -> Result<Self> {
        let mut v = MetaInfoView { value, content_type: None, freshness_period_ms: None, final_block_id: None };
        for item in Elements::new(value, SLOTS, skip_non_critical) {
            let Item::Known(_, tlv) = item? else { continue };
            match tlv.ty {
                CONTENT_TYPE => v.content_type = Some(read_nonneg(tlv.ty, tlv.value)?),
                FRESHNESS_PERIOD => v.freshness_period_ms = Some(read_nonneg(tlv.ty, tlv.value)?),
                _ => {
                    let c = Tlv::read(tlv.value)?;
                    if c.wire.len() != tlv.value.len() {
                        return Err(Error::InvalidValue { ty: FINAL_BLOCK_ID, what: "must hold exactly one name component" });
                    }
                    v.final_block_id = Some(ComponentRef::new(c.ty, c.value)?);
                }
            }
        }
        Ok(v)
    }

    /// The owned copy.
    pub fn to_owned(&self) -> MetaInfo {
        MetaInfo {
            content_type: self.content_type,
            freshness_period_ms: self.freshness_period_ms,
            final_block_id: self.final_block_id.map(|c| c.to_owned()),
            unknown: collect_unknowns(self.value, SLOTS, skip_non_critical),
        }
    }
}

/// MetaInfo, owned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct MetaInfo {
    /// ContentType; see [`crate::types::content_type`].
    pub content_type: Option<u64>,
    /// FreshnessPeriod in milliseconds.
    pub freshness_period_ms: Option<u64>,
    /// FinalBlockId.
    pub final_block_id: Option<Component>,
    /// Unrecognised non-critical elements.
    pub unknown: Vec<UnknownElement>,
}

impl MetaInfo {
    fn value_len(&self) -> usize {
        self.content_type.map_or(0, |t| tlv_len(CONTENT_TYPE, nonneg_len(t)))
            + self.freshness_period_ms.map_or(0, |f| tlv_len(FRESHNESS_PERIOD, nonneg_len(f)))
            + self.final_block_id.as_ref().map_or(0, |c| tlv_len(FINAL_BLOCK_ID, c.as_ref().encoded_len()))
            + unknowns_len(&self.unknown)
    }

    pub(crate) fn encoded_len(&self) -> usize {
        tlv_len(META_INFO, self.value_len())
    }

    pub(crate) fn emit_to(&self, w: &mut Writer<'_>) -> Result<()> {
        let u = &self.unknown;
        w.put_header(META_INFO, self.value_len())?;
        emit_unknowns(w, u, 0)?;
        if let Some(t) = self.content_type {
            w.put_nonneg_tlv(CONTENT_TYPE, t)?;
        }
        emit_unknowns(w, u, 1)?;
        if let Some(f) = self.freshness_period_ms {
            w.put_nonneg_tlv(FRESHNESS_PERIOD, f)?;
        }
        emit_unknowns(w, u, 2)?;
        if let Some(c) = &self.final_block_id {
            w.put_header(FINAL_BLOCK_ID, c.as_ref().encoded_len())?;
            w.put_tlv(c.ty(), c.value())?;
        }
        emit_unknowns(w, u, 3)
    }
}
