//! The compressor's table of contexts: which CID a packet's flow has, a CID for a new flow
//! (cheap ones first, then those of flows that are over, then the least recently used), and
//! a new context's setup. Every change of a CID's flow is noted for the sibling decompressor
//! ([`crate::plus::mirror`]).

use alloc::boxed::Box;

use super::{
    flow_slot, Context, PlusCompressor, CHEAP_CIDS, HORIZON_PACKETS, MAX_WINDOW_PACKETS,
    MIN_WINDOW_PACKETS, PROTECTED_PACKETS, RECENT_FLOWS,
};
use crate::plus::ipid::Detector;
use crate::plus::mirror;
use crate::plus::numbers;
use crate::plus::outer::{Outer, Predictors};
use crate::plus::scaled::{Learner, Strides};
use crate::plus::seal;
use crate::plus::stale::{Recent, Trace};
use crate::plus::window::{DerivedColumns, Scaler, Scaling};
use crate::tcp::context::Identity;
use crate::tcp::cwnd::{AckTracker, SeqTracker, TrackerParams};
use crate::tcp::packet::TcpIpPacket;
use crate::tcp::repair::Watch;
use crate::tcp::vsw::{Progress, Vsw};

impl PlusCompressor {
    /// The context of the packet's flow, made if need be. A flow whose template (or use of
    /// timestamps) changed moves to a fresh CID, so that no CO frame is ever rebuilt with a
    /// stale field the TCP checksum does not cover.
    pub(super) fn context_for(&mut self, p: &TcpIpPacket<'_>, outer: Option<&Outer>) -> u8 {
        let mapped = match self.last_flow {
            Some((key, cid)) if key == p.key => Some(cid),
            _ => self.recent_flow(p),
        };
        if let Some(cid) = mapped {
            let ctx = self.contexts[usize::from(cid)]
                .as_mut()
                .expect("mapped CIDs hold contexts");
            if ctx.identity.matches(p, false) && ctx.outer.as_ref() == outer {
                self.last_flow = Some((p.key, cid));
                return cid;
            }
            self.stats.identity_changes += 1;
            if let Some(old) = self.contexts[usize::from(cid)].take() {
                self.retire(old);
            }
            self.outbox.changed(cid);
            self.by_flow.remove(&p.key);
            self.forget_flows();
            let fresh = self.allocate(Some(cid));
            self.install(fresh, p, outer);
            return fresh;
        }
        let cid = self.allocate(None);
        self.install(cid, p, outer);
        cid
    }

    /// The CID `by_flow` maps the packet's flow to, if any, from the cache of recent flows if
    /// it holds the flow (else from the map, and then the cache holds it).
    fn recent_flow(&mut self, p: &TcpIpPacket<'_>) -> Option<u8> {
        let slot = flow_slot(&p.key);
        match self.recent_flows[slot] {
            Some((key, cid)) if key == p.key => Some(cid),
            _ => {
                let cid = self.by_flow.get(&p.key).copied()?;
                self.recent_flows[slot] = Some((p.key, cid));
                Some(cid)
            }
        }
    }

    /// Empties the caches in front of `by_flow` (a mapping left it).
    fn forget_flows(&mut self) {
        self.last_flow = None;
        self.recent_flows = [None; RECENT_FLOWS];
    }

    /// A CID for a new context (not `avoid`): the lowest free one of the first
    /// [`CHEAP_CIDS`], else one of those whose flow is over (it sent a FIN and has been idle a
    /// while, or has been idle long: [`Context::is_over`]), else the lowest free one, else the
    /// least recently used.
    fn allocate(&mut self, avoid: Option<u8>) -> u8 {
        let n = self.contexts.len();
        let cheap = n.min(CHEAP_CIDS);
        let usable = |i: usize| Some(i as u8) != avoid;
        // CID 0 and the CIDs the kind byte names (short codes) cost no CID octet at all: take
        // one of them, free or over, first; not on a link that loses frames (which may reorder
        // them too: an old flow's late frame then meets a new flow's context sooner).
        let free_or_over = |i: usize| {
            self.contexts[i]
                .as_ref()
                .is_none_or(|c| c.is_over(self.clock))
        };
        let cheapest = if self.lossy() { 0 } else { n.min(3) };
        if let Some(i) = (0..cheapest).find(|&i| usable(i) && free_or_over(i)) {
            return self.evict(i);
        }
        if let Some(i) = (0..cheap).find(|&i| self.contexts[i].is_none() && usable(i)) {
            return i as u8;
        }
        let over = (0..cheap)
            .filter(|&i| usable(i))
            .filter(|&i| {
                self.contexts[i]
                    .as_ref()
                    .is_some_and(|c| c.is_over(self.clock))
            })
            .min_by_key(|&i| self.contexts[i].as_ref().map_or(0, |c| c.last_used));
        if let Some(i) = over {
            return self.evict(i);
        }
        if let Some(i) = (0..n).find(|&i| self.contexts[i].is_none() && usable(i)) {
            return i as u8;
        }
        let lru = (0..n)
            .filter(|&i| usable(i))
            .min_by_key(|&i| self.contexts[i].as_ref().map_or(0, |c| c.last_used))
            .unwrap_or(0);
        self.evict(lru)
    }

    /// Frees CID `i` (dropping its context, if any, and every mapping to it) and returns it.
    fn evict(&mut self, i: usize) -> u8 {
        if let Some(old) = self.contexts[i].take() {
            self.outbox.changed(i as u8);
            self.by_flow.remove(&old.key);
            self.forget_flows();
            self.stats.evictions += 1;
            self.retire(old);
        }
        i as u8
    }

    /// Keeps the windows of a context that left the table, emptied, for the next new context
    /// (an empty window is the same whatever it held, and its columns need not be allocated
    /// again).
    fn retire(&mut self, old: Box<Context>) {
        let Context {
            mut vsw,
            mut horizon,
            ..
        } = *old;
        vsw.clear();
        horizon.clear();
        self.spare_windows = Some((vsw, horizon));
    }

    /// Empty windows for a new context: the last retired context's, else new ones.
    fn windows(&mut self) -> (Vsw<DerivedColumns>, Vsw<DerivedColumns>) {
        self.spare_windows.take().unwrap_or_else(|| {
            let vsw = Vsw::with_extras(
                self.config.max_vsw_entries.min(MAX_WINDOW_PACKETS),
                Progress::SincePush,
            )
            .with_min_len(MIN_WINDOW_PACKETS)
            .with_protected(PROTECTED_PACKETS);
            (vsw, Vsw::with_extras(HORIZON_PACKETS, Progress::SincePush))
        })
    }

    fn install(&mut self, cid: u8, p: &TcpIpPacket<'_>, outer: Option<&Outer>) {
        let params = TrackerParams::new(self.config.mss, self.config.issthresh);
        // A new flow between known hosts most likely has their segment size and ACK step.
        let strides = self
            .same_hosts(p)
            .and_then(|hosts| hosts.max_by_key(|(_, c)| c.last_used))
            .map_or(Strides::default(), |(_, base)| base.strides);
        let identity = Identity::of(p, false);
        let behaviour = Detector::initial(p.v4, p.fields.ip_id);
        let (vsw, horizon) = self.windows();
        self.contexts[usize::from(cid)] = Some(Box::new(Context {
            key: p.key,
            flow_hash: mirror::flow_hash(&p.key),
            identity_hash: seal::identity_hash(&identity, outer),
            identity,
            outer: outer.copied(),
            predictors: Predictors::default(),
            behaviour,
            detector: Detector::new(p.fields.ip_id),
            strides,
            scaler: Scaler::new(Scaling { strides, behaviour }),
            learner: Learner::new(p.fields.ack),
            vsw,
            seq: SeqTracker::new(params, p.fields.seq),
            ack: AckTracker::new(params, p.fields.ack),
            last_used: 0,
            created: self.clock,
            co_run: 0,
            irs_due: self.start_irs(),
            notes_due: 0,
            depth: 0,
            fin: false,
            full_only: false,
            issued: Default::default(),
            numbers_noted: 0,
            recent: Recent::new(Trace {
                ip_id: p.fields.ip_id,
                next: numbers::next_seq(p.fields.seq, p.payload_len(), p.flags),
                ack: p.fields.ack,
            }),
            spread_due: self.spreads(),
            held_far: false,
            repair_mirrored: false,
            since_wide: 0,
            wide_at: self.now,
            horizon,
            since_sample: 0,
            wide_notes: 0,
            scaled_from: (0, 0),
            watch: Watch::new(p, self.now),
            floor: Default::default(),
        }));
        self.by_flow.insert(p.key, cid);
        self.last_flow = Some((p.key, cid));
        self.recent_flows[flow_slot(&p.key)] = Some((p.key, cid));
        self.outbox.changed(cid);
        self.stats.contexts_created += 1;
    }
}
