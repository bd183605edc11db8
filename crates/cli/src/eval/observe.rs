//! What an evaluation tells an observer as it runs: every frame the link carries and what became
//! of every packet. The report counts the same events; [`super::output`] writes them to files.

use std::time::Duration;

use taroc_core::{DropReason, FrameKind};

use super::transport_checksum_rejects;
use crate::impair::Fate;

/// One packet as its compressor sent it.
#[derive(Debug, Clone, Copy)]
pub struct Sent<'a> {
    /// The packet's position among the capture's IP packets, from 0.
    pub index: usize,
    /// The link direction: 0 forward (source address below destination), 1 reverse.
    pub direction: usize,
    /// The compressor's clock when it sent the packet (capture time since the first record).
    pub time: Duration,
    /// The frame's kind.
    pub kind: FrameKind,
    /// The original packet.
    pub original: &'a [u8],
    /// Its payload bytes (present in the record).
    pub payload: usize,
    /// The frame's bytes on the link, its kind byte included.
    pub on_link: usize,
}

impl Sent<'_> {
    /// Header bytes of the original packet: its bytes minus its payload.
    pub fn original_header_bytes(&self) -> usize {
        self.original.len() - self.payload
    }

    /// Header bytes on the link: the frame's bytes (kind byte included) minus the payload, as the
    /// report's `link_header_bytes` counts them.
    pub fn link_header_bytes(&self) -> i64 {
        self.on_link as i64 - self.payload as i64
    }
}

/// What the link and the decompressor did with a frame.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The link lost the frame ([`Fate::Lost`] or [`Fate::BitError`]).
    Lost(Fate),
    /// The decompressor refused the intact frame.
    Refused(DropReason),
    /// The decompressor delivered this packet (perhaps not the original).
    Delivered(&'a [u8]),
    /// The decompressor delivered this packet late, for a frame it had held
    /// ([`DropReason::Held`]), with the next frame of its context (perhaps not the original).
    Late(&'a [u8]),
}

/// The fate of one packet, as the per-packet outputs name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFate {
    /// Delivered exactly as captured.
    Delivered,
    /// Held (or refused for context damage), then delivered late exactly as captured
    /// ([`Outcome::Late`]).
    DeliveredLate,
    /// Delivered, but different from the original; `undetected` if its TCP/UDP checksum still
    /// verifies (or it carries none).
    Incorrect {
        /// Whether the receiver's checksum would accept it.
        undetected: bool,
    },
    /// Lost on the link; `bit_errors` if the link's CRC discarded it.
    LinkLost {
        /// Discarded for bit errors rather than lost outright.
        bit_errors: bool,
    },
    /// Refused by the decompressor for a missing or damaged context
    /// ([`DropReason::is_context_damage`]).
    ContextDamage(DropReason),
    /// Refused by the decompressor for another reason.
    Refused(DropReason),
}

impl PacketFate {
    /// Classifies what happened to `sent`, as the report counts it.
    pub fn of(sent: &Sent<'_>, outcome: Outcome<'_>) -> PacketFate {
        match outcome {
            Outcome::Lost(fate) => PacketFate::LinkLost {
                bit_errors: fate == Fate::BitError,
            },
            Outcome::Refused(reason) if reason.is_context_damage() => {
                PacketFate::ContextDamage(reason)
            }
            Outcome::Refused(reason) => PacketFate::Refused(reason),
            Outcome::Delivered(packet) if packet == sent.original => PacketFate::Delivered,
            Outcome::Late(packet) if packet == sent.original => PacketFate::DeliveredLate,
            Outcome::Delivered(packet) | Outcome::Late(packet) => PacketFate::Incorrect {
                undetected: !transport_checksum_rejects(packet),
            },
        }
    }

    /// The fate's name: `delivered`, `delivered_late`, `incorrect`, `link_lost`,
    /// `context_damage` or `refused`.
    pub fn name(self) -> &'static str {
        match self {
            PacketFate::Delivered => "delivered",
            PacketFate::DeliveredLate => "delivered_late",
            PacketFate::Incorrect { .. } => "incorrect",
            PacketFate::LinkLost { .. } => "link_lost",
            PacketFate::ContextDamage(_) => "context_damage",
            PacketFate::Refused(_) => "refused",
        }
    }

    /// Why: the drop reason of a refusal (`no_context`, `checksum_mismatch`, …), `random_loss`
    /// or `bit_errors` for a link loss, `undetected` or `checksum_rejects` for an incorrect
    /// delivery, empty for a correct one.
    pub fn reason(self) -> &'static str {
        match self {
            PacketFate::Delivered | PacketFate::DeliveredLate => "",
            PacketFate::Incorrect { undetected: true } => "undetected",
            PacketFate::Incorrect { undetected: false } => "checksum_rejects",
            PacketFate::LinkLost { bit_errors: true } => "bit_errors",
            PacketFate::LinkLost { bit_errors: false } => "random_loss",
            PacketFate::ContextDamage(reason) | PacketFate::Refused(reason) => reason.name(),
        }
    }
}

/// Told about every event of an evaluation. Every scheme runs in lockstep, packet by packet, so
/// the events of the schemes interleave: each names its scheme, by its position in the variants
/// the evaluation runs (in one scheme, events come in the order they happened on its link).
/// Every method does nothing by default; `()` is the observer that ignores everything.
pub trait Observer {
    /// A feedback frame (`CONTEXT_STATE`) of scheme `scheme` crossed direction `direction` of
    /// the link at `time`, with this fate.
    fn feedback(
        &mut self,
        scheme: usize,
        direction: usize,
        time: Duration,
        frame: &[u8],
        fate: Fate,
    ) {
        let _ = (scheme, direction, time, frame, fate);
    }

    /// The compressor of scheme `scheme` sent `frame` of `kind` on direction `direction` at
    /// `time` (before the link had its say: lost frames are sent too).
    fn frame(
        &mut self,
        scheme: usize,
        direction: usize,
        time: Duration,
        kind: FrameKind,
        frame: &[u8],
    ) {
        let _ = (scheme, direction, time, kind, frame);
    }

    /// What became of a packet the compressor of scheme `scheme` sent. A packet held (or
    /// refused for context damage) and then delivered late is told twice: refused, then
    /// [`Outcome::Late`].
    fn packet(&mut self, scheme: usize, sent: &Sent<'_>, outcome: Outcome<'_>) {
        let _ = (scheme, sent, outcome);
    }

    /// Every scheme has seen every packet: finish whatever the observer keeps.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}

impl Observer for () {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::tests::packet;

    #[test]
    fn fates_are_classified_as_the_report_counts_them() {
        let original = packet(1, 2, 7, 10);
        let sent = Sent {
            index: 3,
            direction: 0,
            time: Duration::ZERO,
            kind: FrameKind::Ip,
            original: &original,
            payload: 10,
            on_link: 51,
        };
        assert_eq!(
            (sent.original_header_bytes(), sent.link_header_bytes()),
            (40, 41)
        );
        let fate = |outcome| PacketFate::of(&sent, outcome);
        assert_eq!(fate(Outcome::Delivered(&original)), PacketFate::Delivered);
        let mut wrong = original.clone();
        wrong[45] ^= 1;
        // The test packet's TCP checksum is 0, which does not verify either way.
        assert_eq!(
            fate(Outcome::Delivered(&wrong)),
            PacketFate::Incorrect { undetected: false }
        );
        let lost = fate(Outcome::Lost(Fate::BitError));
        assert_eq!((lost.name(), lost.reason()), ("link_lost", "bit_errors"));
        let damage = fate(Outcome::Refused(DropReason::NoContext));
        assert_eq!(
            (damage.name(), damage.reason()),
            ("context_damage", "no_context")
        );
        let refused = fate(Outcome::Refused(DropReason::Malformed));
        assert_eq!((refused.name(), refused.reason()), ("refused", "malformed"));
    }
}
