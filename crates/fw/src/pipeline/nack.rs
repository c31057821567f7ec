//! The Nack pipeline (NFD's incoming-Nack pipeline, NDN-DPDK's fwd-nack): the upstream's
//! out-record marked, another next hop tried where the strategy does, and a Nack with the least
//! severe reason to every downstream once every upstream has Nacked.

use nexthop_wire::{InterestView, NackReason};

use super::{SendAs, Shard};
use crate::counters::DropReason;
use crate::face::FaceId;
use crate::lp::packet::LinkInfo;
use crate::pipeline::outbox::Outbox;
use crate::pipeline::strategy::NackContext;
use crate::table::pit_token::TokenBuf;

impl Shard {
    pub(super) fn on_nack(
        &mut self,
        now_ms: u64,
        face: FaceId,
        link: &LinkInfo<'_>,
        reason: NackReason,
        interest: &InterestView<'_>,
        out: &mut Outbox,
    ) {
        self.counters.nacks_in.inc();
        let slot = self
            .entry_by_token(link)
            .or_else(|| self.pit.find(interest.name().value(), interest.can_be_prefix(), interest.must_be_fresh()));
        let nonce = interest.nonce();
        let Some(entry) = slot.and_then(|s| self.pit.get_mut(s)) else {
            self.counters.drops.count(DropReason::UnsolicitedNack);
            return;
        };
        let Some(record) = entry.out_record_mut(face).filter(|r| Some(r.nonce) == nonce) else {
            self.counters.drops.count(DropReason::UnsolicitedNack);
            return;
        };
        record.nack = Some(reason);
        let slot = slot.expect("entry found");
        let entry = self.pit.get(slot).expect("entry found");
        let downstreams: Vec<FaceId> = entry.in_records.iter().map(|r| r.face).filter(|f| !self.is_ad_hoc(*f)).collect();
        let name = interest.name();
        let route = self.fib.find(|fib| fib.lookup(&name));
        let mut ctx = NackContext {
            now_ms,
            upstream: face,
            reason,
            name,
            entry,
            downstreams: &downstreams,
            route: route.as_ref().map(|r| r.hops()),
            retry: None,
            nack_now: false,
            unlearn: false,
        };
        self.instances[entry.strategy.0 as usize].1.after_receive_nack(&mut ctx);
        let (retry, nack_now, unlearn) = (ctx.retry, ctx.nack_now, ctx.unlearn);
        drop(route);
        if unlearn {
            out.unlearned.push((face, name.value().to_vec()));
        }
        if nack_now {
            self.nack_downstreams(slot, reason, face, out);
            return;
        }
        let entry = self.pit.get(slot).expect("entry found");
        if let Some(to) = retry {
            let wire = entry.interest.clone();
            let Ok(view) = InterestView::decode(&wire) else { return }; // Decoded once already.
            let (nonce, at) = (view.nonce().unwrap_or_default(), SendAs::of(&view));
            self.hops.clear();
            self.hops.push(to);
            self.forward(now_ms, slot, downstreams.first().copied().unwrap_or(0), nonce, at, out);
            return;
        }
        if entry.out_records.iter().any(|r| r.nack.is_none()) {
            return; // others may still answer
        }
        let least_severe = entry.out_records.iter().filter_map(|r| r.nack).min_by_key(|r| u64::from(*r)).unwrap_or(reason);
        self.nack_downstreams(slot, least_severe, face, out);
    }

    /// Removes the entry in `slot` and sends each downstream a Nack with `reason` (the last
    /// Nack came from `upstream`).
    fn nack_downstreams(&mut self, slot: u32, reason: NackReason, upstream: FaceId, out: &mut Outbox) {
        let Some(entry) = self.pit.remove(slot) else { return };
        self.release_entry(&entry);
        for r in &entry.in_records {
            let fields = self.fields(r.token.as_ref().map(TokenBuf::as_slice), Some(reason), r.face, upstream);
            out.push(r.face, &fields, &entry.interest);
            self.counters.nacks_out.inc();
        }
        self.pit.recycle(entry);
        self.counters.pit_entries.set(self.pit.len() as u64);
    }
}
