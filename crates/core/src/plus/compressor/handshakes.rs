//! The handshake segments lately coded against a base (IR-S, [`crate::plus::handshake`]): a
//! segment sent again is a retransmission, which says the first copy may not have been
//! rebuilt, perhaps because the far end lacks the base (its decompressor restarted, or lost
//! the context). The retransmission goes without a base (a compact SYN, or an IR), so a new
//! connection is set up by its first retransmitted SYN at the latest, with or without a
//! reverse channel.

use crate::plus::mirror;
use crate::taroc::packet::TcpIpPacket;

/// Handshake segments remembered: more than the connections a host opens to one peer within
/// a retransmission timeout in any capture we have.
const REMEMBERED: usize = 16;

/// The last [`REMEMBERED`] handshake segments coded against a base, by their flow, sequence
/// number and flags.
#[derive(Debug, Clone, Default)]
pub(super) struct Handshakes {
    recent: [u64; REMEMBERED],
    next: usize,
}

impl Handshakes {
    /// A segment's signature: its flow's hash, sequence number and flags, with a top bit that
    /// no empty slot has.
    fn signature(p: &TcpIpPacket<'_>) -> u64 {
        1 << 63
            | u64::from(mirror::flow_hash(&p.key)) << 40
            | u64::from(p.fields.seq) << 8
            | u64::from(p.flags)
    }

    /// Whether `p` was coded against a base lately (so this is a retransmission).
    pub(super) fn sent_before(&self, p: &TcpIpPacket<'_>) -> bool {
        let signature = Handshakes::signature(p);
        self.recent.contains(&signature)
    }

    /// `p` goes against a base.
    pub(super) fn note(&mut self, p: &TcpIpPacket<'_>) {
        self.recent[self.next] = Handshakes::signature(p);
        self.next = (self.next + 1) % REMEMBERED;
    }
}
