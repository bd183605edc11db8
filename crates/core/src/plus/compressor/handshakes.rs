//! The SYN and SYN-ACK segments lately coded against a base (IR-S,
//! [`crate::plus::handshake`]): one sent again is a retransmission, which says the first copy
//! may not have been rebuilt, perhaps because the far end lacks the base (its decompressor
//! restarted, or lost the context). A RST sent again is not (a host answers each stray
//! segment with one), and keeps its base. The retransmission goes without a base (a compact SYN, or an IR), so a new
//! connection is set up by its first retransmitted SYN at the latest, with or without a
//! reverse channel.

use taroc_wire::tcp::flags;

use crate::plus::mirror;
use crate::tcp::packet::TcpIpPacket;

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

    /// Whether `p` is a SYN or SYN-ACK coded against a base lately (so this is its
    /// retransmission).
    pub(super) fn sent_before(&self, p: &TcpIpPacket<'_>) -> bool {
        is_syn(p) && self.recent.contains(&Handshakes::signature(p))
    }

    /// `p` goes against a base.
    pub(super) fn note(&mut self, p: &TcpIpPacket<'_>) {
        if is_syn(p) {
            self.recent[self.next] = Handshakes::signature(p);
            self.next = (self.next + 1) % REMEMBERED;
        }
    }
}

/// Whether `p` opens a connection (a SYN or SYN-ACK), which TCP retransmits on a timeout.
fn is_syn(p: &TcpIpPacket<'_>) -> bool {
    p.flags & flags::SYN != 0
}
