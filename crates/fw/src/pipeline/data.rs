//! The Data pipeline (NFD's incoming-Data pipeline, NDN-DPDK's fwd-data): the PIT entry by
//! token or by name, the content store, what the strategies learn, and the Data sent to every
//! downstream; unsolicited Data counted (and cached where the policy admits it).

use nexthop_cs::Arrival;
use nexthop_wire::DataView;

use super::Shard;
use crate::counters::DropReason;
use crate::face::{FaceId, FaceScope};
use crate::lp::encode::LpFields;
use crate::lp::packet::LinkInfo;
use crate::pipeline::outbox::Outbox;
use crate::pipeline::strategy::DataContext;
use crate::table::pit_token::{PitToken, TokenBuf};

impl Shard {
    pub(super) fn entry_by_token(&self, link: &LinkInfo<'_>) -> Option<u32> {
        let t = PitToken::decode(link.pit_token?)?;
        if t.shard != self.cfg.index || !t.names_generation(self.pit.generation(t.slot)?) {
            return None;
        }
        self.pit.get(t.slot).map(|_| t.slot)
    }

    pub(super) fn on_data(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        data: &DataView<'_>,
        out: &mut Outbox,
    ) {
        self.counters.data_in.inc();
        let name = data.name();
        let mut matched = std::mem::take(&mut self.matched);
        matched.clear();
        if let Some(slot) =
            self.entry_by_token(link).filter(|&s| self.pit.get(s).is_some_and(|e| e.matches(name.value(), || data.implicit_digest())))
        {
            matched.push(slot);
        } else {
            self.pit.matching_data(&name, || data.implicit_digest(), &mut matched);
        }
        if matched.is_empty() {
            // Data from an ASF upstream the Interest also went to is measured all the same.
            for (_, s) in &mut self.instances {
                s.after_receive_unsolicited_data(now_ms, face, &name);
            }
            self.counters.drops.count(DropReason::Unsolicited);
            if self.cfg.unsolicited.admits(scope) && !link.no_cache && self.cs_admit {
                if let Some(cs) = self.cs.as_mut() {
                    let _ = cs.insert_arrived(data.wire(), now_ms, Arrival::Unsolicited);
                    self.counters.cs_entries.set(cs.l1().len() as u64);
                }
            }
            self.matched = matched;
            return;
        }
        if !link.no_cache && self.cs_admit {
            if let Some(cs) = self.cs.as_mut() {
                // A packet the store refuses (larger than a slot) is still forwarded.
                let _ = cs.insert(data.wire(), now_ms);
                self.counters.cs_entries.set(cs.l1().len() as u64);
            }
        }
        matched.sort_unstable();
        matched.dedup();
        for &slot in &matched {
            let Some(entry) = self.pit.remove(slot) else { continue };
            self.release_entry(&entry);
            self.counters.satisfied.inc();
            let Shard { instances, announcements, nonlocal, .. } = self;
            let mut ctx = DataContext {
                now_ms,
                upstream: face,
                name,
                entry: &entry,
                prefix_announcement: link.prefix_announcement,
                announcements,
                nonlocal,
                attach: None,
                learn: None,
            };
            instances[entry.strategy.0 as usize].1.after_receive_data(&mut ctx);
            let (announcement, learned) = (ctx.attach, ctx.learn);
            if let Some(pa) = learned {
                out.learned.push((face, pa));
            }
            let back_out = self.is_ad_hoc(face);
            for r in entry.in_records.iter().filter(|r| r.face != face || back_out) {
                // A mark from upstream travels on to the consumers (as in NFD).
                let fields = LpFields {
                    congestion_mark: link.congestion_mark,
                    prefix_announcement: announcement.as_deref(),
                    ..self.fields(r.token.as_ref().map(TokenBuf::as_slice), None, r.face, face)
                };
                out.push(r.face, &fields, data.wire());
                self.counters.data_out.inc();
            }
            self.pit.recycle(entry);
        }
        self.matched = matched;
    }
}
