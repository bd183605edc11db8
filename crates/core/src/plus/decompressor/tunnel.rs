//! Tunnel frames (format section 8.1): a TCP or non-TCP frame inside, decompressed first, and
//! the outer IP header rebuilt around it.

use alloc::vec::Vec;

use super::PlusDecompressor;
use crate::codec::{Decompressor, DropReason, FrameKind};
use crate::plus::cids;
use crate::plus::format;
use crate::plus::other;
use crate::plus::outer::Outer;

impl PlusDecompressor {
    /// A tunnel frame: the inner TCP frame decompressed (and verified) first, then the outer
    /// header rebuilt around it and checked against its CRC.
    pub(super) fn tunnel(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let [outer, rest @ ..] = frame else {
            return Err(DropReason::Malformed);
        };
        if !(other::CO_N..=other::CO_N_LAST).contains(outer) {
            return Err(DropReason::Malformed);
        }
        let (head, at) = self.other.head(*outer, rest).inspect_err(|_| {
            if let Some(cid) = other::cid_of(*outer, rest) {
                self.other_requests.refused(cid);
            }
        })?;
        // A tunnel's outer header goes as CO-N, never CO-S (its decoding by trial would come
        // after the inner frame's, which the outer fields set up).
        if !matches!(head.form, other::Form::Long { .. }) {
            return Err(DropReason::Malformed);
        }
        let [inner_kind, inner_frame @ ..] = &rest[at..] else {
            return Err(DropReason::Malformed);
        };
        let kind = match FrameKind::from_byte(*inner_kind) {
            Some(
                k @ FrameKind::Profile(
                    format::IR
                    | format::COMPACT_IR
                    | format::PACKED_IR
                    | format::IR_R
                    | format::IR_R_SOURCE_KEPT
                    | format::IR_R_DEST_KEPT,
                ),
            ) => k,
            Some(FrameKind::Profile(b)) if b >= cids::PREFIX => FrameKind::Profile(b),
            // A tunnelled packet that is not TCP (section 8.1).
            Some(k @ FrameKind::Profile(other::IR_N | other::CO_N..=other::CO_N_LAST)) => k,
            _ => return Err(DropReason::Malformed),
        };
        let mut inner = core::mem::take(&mut self.tunnel);
        self.tunnel_outer = Some(
            self.other
                .ip_fields(&head)
                .and_then(|(t, fragment, id)| Some((Outer::from_template(t, fragment)?, id))),
        );
        self.installed = None;
        let result = self.decompress(kind, inner_frame, &mut inner);
        self.tunnel_outer = None;
        let result = result.and_then(|()| {
            // An outer header that fails its CRC says the outer context is stale (a sparse
            // context: only IR frames of its inner flows consult it): ask for it, as for any
            // CO-N frame, else every tunnel frame after it fails alike until its refresh.
            let outer = self.other.rebuild(&head, &inner, out);
            if !self.other.held() {
                self.other_requests.record(head.cid, &outer);
            }
            outer
        });
        if result.is_err() {
            // A context set up under an outer header that failed its CRC keeps nothing.
            if let Some(cid) = self.installed {
                if self.contexts[usize::from(cid)]
                    .as_ref()
                    .is_some_and(|c| c.outer.is_some())
                {
                    self.contexts[usize::from(cid)] = None;
                    self.outbox.changed(cid);
                }
            }
        }
        self.tunnel = inner;
        result
    }
}
