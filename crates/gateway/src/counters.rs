//! What the data path counts, per direction: plain integers, updated by the one data-path
//! thread, printed periodically and on exit.
//!
//! Three kinds of loss are kept apart: drops of our own packets and frames (before, on and
//! after the link: [`Counters::drops`]); context damage (intact frames the decompressor refused
//! because its context was out of step, [`Counters::context_damage`]); and datagrams refused
//! *before decompression* on the UDP link ([`Counters::rejected`]: forged, replayed, malformed
//! and the like), which are not necessarily ours and never touch a codec.

use std::fmt::Write as _;

use serde::Serialize;
use taroc_core::{DropReason, FrameKind};

use crate::link::{Fate, LinkDrop};

/// The counters of one direction (compressor → link → decompressor).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Packets read from the TUN device (offered to the compressor, or refused as oversize).
    pub packets_in: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Packets longer than the TUN MTU: refused before the compressor.
    pub oversize_packets: u64,
    /// Frames the compressor made, by kind ([`FrameKind::to_byte`] order); feedback excluded.
    pub frames_by_kind: [u64; 7],
    /// Bytes the link was offered for those frames, with one kind byte per frame.
    pub link_bytes: u64,
    /// Packet bytes minus frame bytes over every compressed packet (kind bytes not counted):
    /// what compression saved.
    pub bytes_saved: i64,
    /// Frames longer than the link MTU: refused before the link.
    pub oversize_frames: u64,
    /// Frames dropped by the link's DropTail queue.
    pub queue_drops: u64,
    /// Frames dropped because every link slot was in use.
    pub slot_drops: u64,
    /// Frames lost on the link (random or burst loss).
    pub link_lost: u64,
    /// Frames discarded for bit errors (the link CRC).
    pub link_bit_errors: u64,
    /// Intact frames the decompressor refused, by reason ([`DropReason::ALL`] order), less
    /// the held ones it delivered late.
    pub refused: [u64; DropReason::ALL.len()],
    /// Refusals that are context damage ([`DropReason::is_context_damage`]).
    pub context_damage: u64,
    /// UDP datagrams refused before decompression, by reason: they reached neither the
    /// decompressor nor the compressor's feedback input.
    pub rejected: Rejected,
    /// Authenticated frames accepted from a source address other than `--peer` (the peer is
    /// pinned by its key, not its address; our frames still go to `--peer`).
    pub other_source: u64,
    /// Packets the decompressor delivered, late ones included.
    pub delivered: u64,
    /// Of those, packets it held for confirmation (or refused for context damage) and
    /// delivered late, with a later frame of their context
    /// ([`taroc_core::Decompressor::take_late`]).
    pub delivered_late: u64,
    /// Their bytes.
    pub delivered_bytes: u64,
    /// Delivered packets that differ from the original (emulated link only: the oracle).
    pub incorrect_delivered: u64,
    /// Incorrect deliveries whose TCP/UDP checksum still verifies (the receiver cannot tell).
    pub incorrect_undetected: u64,
    /// Delivered TCP/UDP packets whose checksum fails (only with `--deliver-bad-checksums`).
    pub checksum_failed: u64,
    /// Rebuilt TCP/UDP packets whose checksum fails, which the gateway dropped instead of
    /// delivering (the default): a wrongly rebuilt packet (VJ's after a loss) never leaves it.
    pub checksum_dropped: u64,
    /// Rebuilt packets longer than the TUN MTU: dropped, not written.
    pub oversize_rebuilt: u64,
    /// Delivered packets the TUN device refused to take.
    pub tun_write_errors: u64,
    /// Link frames the transport failed to send (a gateway with a peer).
    pub send_errors: u64,
    /// Link frames sent to the peer (UDP datagrams, serial frames), feedback and hellos
    /// included (a gateway with a peer).
    pub datagrams_sent: u64,
    /// Bytes the authenticated link's framing added to them beyond the kind byte (sender ids,
    /// counters, tags): `auth_bytes / datagrams_sent` is its overhead per frame.
    pub auth_bytes: u64,
    /// CONTEXT_STATE frames the decompressor sent back on the reverse link.
    pub feedback_sent: u64,
    /// Their bytes, with the kind byte.
    pub feedback_bytes: u64,
    /// CONTEXT_STATE frames handed to this direction's compressor.
    pub feedback_received: u64,
    /// Hellos sent on the authenticated link (frames with no content that tell the peer which
    /// of its runs we heard last: [`crate::auth`]).
    pub hellos_sent: u64,
    /// Authentic, fresh hellos of the peer received.
    pub hellos_received: u64,
    /// Runs of the peer heard (authenticated link: its first, then one per restart of it); at
    /// each, both codecs start afresh, since the new run's codecs know nothing of the old
    /// run's contexts.
    pub peer_runs: u64,
    /// Bytes the transport put on (send direction) or took off (receive direction) the medium,
    /// framing included: a UDP datagram's IP and UDP headers, a serial frame's flags, escapes
    /// and check. What a link engineer pays for.
    pub medium_bytes: u64,
}

impl Counters {
    /// Counts a frame the compressor made from a packet.
    pub fn count_frame(&mut self, kind: FrameKind, packet_len: usize, frame_len: usize) {
        self.frames_by_kind[usize::from(kind.family().to_byte())] += 1;
        self.link_bytes += frame_len as u64 + 1;
        self.bytes_saved += packet_len as i64 - frame_len as i64;
    }

    /// Counts a frame the link refused.
    pub fn count_link_drop(&mut self, drop: LinkDrop) {
        match drop {
            LinkDrop::Oversize => self.oversize_frames += 1,
            LinkDrop::QueueFull => self.queue_drops += 1,
            LinkDrop::SlotsFull => self.slot_drops += 1,
        }
    }

    /// Counts a frame that did not survive the link.
    pub fn count_link_fate(&mut self, fate: Fate) {
        match fate {
            Fate::Intact => {}
            Fate::Lost => self.link_lost += 1,
            Fate::BitError => self.link_bit_errors += 1,
        }
    }

    /// Counts a decompressor refusal.
    pub fn count_refusal(&mut self, reason: DropReason) {
        if let Some(i) = DropReason::ALL.iter().position(|&r| r == reason) {
            self.refused[i] += 1;
        }
        if reason.is_context_damage() {
            self.context_damage += 1;
        }
    }

    /// Counts a packet delivered late, refused before for `reason`: its refusal is undone
    /// (count the packet itself with [`Counters::count_rebuilt`]).
    pub fn count_late(&mut self, reason: DropReason) {
        self.delivered_late += 1;
        let held = DropReason::ALL.iter().position(|&r| r == reason);
        if let Some(n) = held.and_then(|i| self.refused.get_mut(i)) {
            *n = n.saturating_sub(1);
        }
        self.context_damage = self.context_damage.saturating_sub(1);
    }

    /// Counts a packet the decompressor rebuilt, of `len` bytes, whose TCP/UDP checksum
    /// verifies (`Some(true)`), fails (`Some(false)`) or does not apply (`None`). Returns whether
    /// it is to be delivered: not if it is longer than `mtu` (the TUN MTU), nor if its checksum
    /// fails and `verify` is set.
    pub fn count_rebuilt(
        &mut self,
        len: usize,
        mtu: usize,
        checksum: Option<bool>,
        verify: bool,
    ) -> bool {
        if len > mtu {
            self.oversize_rebuilt += 1;
            return false;
        }
        if checksum == Some(false) {
            if verify {
                self.checksum_dropped += 1;
                return false;
            }
            self.checksum_failed += 1;
        }
        self.delivered += 1;
        self.delivered_bytes += len as u64;
        true
    }

    /// Frames the compressor made.
    pub fn frames(&self) -> u64 {
        self.frames_by_kind.iter().sum()
    }

    /// Every drop of our packets and frames, whatever the reason (before, on and after the
    /// link); datagrams refused before decompression ([`Counters::rejected`]) are not in it.
    pub fn drops(&self) -> u64 {
        self.oversize_packets
            + self.oversize_rebuilt
            + self.oversize_frames
            + self.queue_drops
            + self.slot_drops
            + self.link_lost
            + self.link_bit_errors
            + self.refused.iter().sum::<u64>()
            + self.tun_write_errors
            + self.send_errors
            + self.checksum_dropped
    }

    /// Adds `other` to these counters.
    pub fn add(&mut self, other: &Counters) {
        macro_rules! sum {
            ($($field:ident),*) => { $(self.$field += other.$field;)* };
        }
        sum!(
            packets_in,
            bytes_in,
            oversize_packets,
            link_bytes,
            bytes_saved,
            oversize_frames,
            queue_drops,
            slot_drops,
            link_lost,
            link_bit_errors,
            context_damage,
            other_source,
            delivered,
            delivered_late,
            delivered_bytes,
            incorrect_delivered,
            incorrect_undetected,
            checksum_failed,
            checksum_dropped,
            oversize_rebuilt,
            tun_write_errors,
            send_errors,
            datagrams_sent,
            auth_bytes,
            feedback_sent,
            feedback_bytes,
            feedback_received,
            hellos_sent,
            hellos_received,
            peer_runs,
            medium_bytes
        );
        for (a, b) in self.frames_by_kind.iter_mut().zip(other.frames_by_kind) {
            *a += b;
        }
        for (a, b) in self.refused.iter_mut().zip(other.refused) {
            *a += b;
        }
        self.rejected.add(&other.rejected);
    }

    /// One line: the counters that matter at a glance. Datagrams refused before decompression
    /// are shown apart from drops and context damage, with their reasons when there are any.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "in {} pkts {} B, saved {} B, delivered {}, drops {} (link {}, queue {}, ctx damage {}), \
             refused before decompression {}",
            self.packets_in,
            self.bytes_in,
            self.bytes_saved,
            self.delivered,
            self.drops(),
            self.link_lost + self.link_bit_errors,
            self.queue_drops,
            self.context_damage,
            self.rejected.total(),
        );
        let reasons: Vec<String> = Rejection::ALL
            .iter()
            .filter(|&&r| self.rejected.get(r) > 0)
            .map(|&r| format!("{} {}", r.name(), self.rejected.get(r)))
            .collect();
        if !reasons.is_empty() {
            let _ = write!(line, " ({})", reasons.join(", "));
        }
        let _ = write!(line, ", incorrect {}", self.incorrect_delivered);
        line
    }
}

/// Why a link frame (a UDP datagram, a frame on a serial line) was refused before
/// decompression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Too short for its form, or a first byte that is no frame kind.
    Malformed,
    /// Longer than the link MTU plus the framing overhead.
    Oversize,
    /// A long-form frame whose tag does not verify.
    Forged,
    /// A short-form frame whose tag does not verify with the peer we know (forged, or sent by
    /// a peer we have not yet heard a long-form frame from), or that came before any long one.
    Unsynced,
    /// An authentic frame whose counter was seen already or is older than the replay window,
    /// or a frame of another sender than the peer that echoes our id but is not of the newest
    /// run we have heard (an earlier run of the peer's).
    Replayed,
    /// An authentic frame carrying our own sender id: one of ours, sent back to us.
    Reflected,
    /// An authentic long frame of a sender that is not our peer and that does not echo our own
    /// sender id: not shown to have been made after we started (a frame of an earlier run, or
    /// of a peer that has not heard from us yet).
    Stale,
    /// `--insecure-no-auth` only: a datagram from an address other than `--peer`.
    Foreign,
    /// A serial frame whose check (FCS) fails: damaged on the line; the decompressor is told
    /// of a link error.
    BadCheck,
    /// A serial frame too short to hold a kind byte and its check.
    Runt,
    /// A serial frame longer than the longest a frame of ours can be: dropped up to the next
    /// flag.
    Overlong,
    /// A serial frame with an escape byte followed by a byte no escape allows, or aborted.
    BadEscape,
    /// Bytes on a serial line outside any frame (line noise before a flag).
    Garbage,
    /// A frame for another user of the medium: a KISS frame of another port or command.
    NotOurs,
}

impl Rejection {
    /// Every reason, in counting order.
    pub const ALL: [Rejection; 14] = [
        Rejection::Malformed,
        Rejection::Oversize,
        Rejection::Forged,
        Rejection::Unsynced,
        Rejection::Replayed,
        Rejection::Reflected,
        Rejection::Stale,
        Rejection::Foreign,
        Rejection::BadCheck,
        Rejection::Runt,
        Rejection::Overlong,
        Rejection::BadEscape,
        Rejection::Garbage,
        Rejection::NotOurs,
    ];

    /// A short name, for summaries and tables.
    pub fn name(self) -> &'static str {
        match self {
            Rejection::Malformed => "malformed",
            Rejection::Oversize => "oversize",
            Rejection::Forged => "forged",
            Rejection::Unsynced => "unsynced",
            Rejection::Replayed => "replayed",
            Rejection::Reflected => "reflected",
            Rejection::Stale => "stale",
            Rejection::Foreign => "foreign",
            Rejection::BadCheck => "bad check",
            Rejection::Runt => "runt",
            Rejection::Overlong => "overlong",
            Rejection::BadEscape => "bad escape",
            Rejection::Garbage => "garbage",
            Rejection::NotOurs => "not ours",
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "link frame refused: {}", self.name())
    }
}

impl std::error::Error for Rejection {}

/// Link frames refused before decompression, one count per [`Rejection`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// [`Rejection::Malformed`].
    pub malformed: u64,
    /// [`Rejection::Oversize`].
    pub oversize: u64,
    /// [`Rejection::Forged`].
    pub forged: u64,
    /// [`Rejection::Unsynced`].
    pub unsynced: u64,
    /// [`Rejection::Replayed`].
    pub replayed: u64,
    /// [`Rejection::Reflected`].
    pub reflected: u64,
    /// [`Rejection::Stale`].
    pub stale: u64,
    /// [`Rejection::Foreign`].
    pub foreign: u64,
    /// [`Rejection::BadCheck`].
    pub bad_check: u64,
    /// [`Rejection::Runt`].
    pub runt: u64,
    /// [`Rejection::Overlong`].
    pub overlong: u64,
    /// [`Rejection::BadEscape`].
    pub bad_escape: u64,
    /// [`Rejection::Garbage`].
    pub garbage: u64,
    /// [`Rejection::NotOurs`].
    pub not_ours: u64,
}

impl Rejected {
    fn slot(&mut self, reason: Rejection) -> &mut u64 {
        match reason {
            Rejection::Malformed => &mut self.malformed,
            Rejection::Oversize => &mut self.oversize,
            Rejection::Forged => &mut self.forged,
            Rejection::Unsynced => &mut self.unsynced,
            Rejection::Replayed => &mut self.replayed,
            Rejection::Reflected => &mut self.reflected,
            Rejection::Stale => &mut self.stale,
            Rejection::Foreign => &mut self.foreign,
            Rejection::BadCheck => &mut self.bad_check,
            Rejection::Runt => &mut self.runt,
            Rejection::Overlong => &mut self.overlong,
            Rejection::BadEscape => &mut self.bad_escape,
            Rejection::Garbage => &mut self.garbage,
            Rejection::NotOurs => &mut self.not_ours,
        }
    }

    /// Counts one datagram refused for `reason`.
    pub fn count(&mut self, reason: Rejection) {
        *self.slot(reason) += 1;
    }

    /// The count for `reason`.
    pub fn get(&self, reason: Rejection) -> u64 {
        match reason {
            Rejection::Malformed => self.malformed,
            Rejection::Oversize => self.oversize,
            Rejection::Forged => self.forged,
            Rejection::Unsynced => self.unsynced,
            Rejection::Replayed => self.replayed,
            Rejection::Reflected => self.reflected,
            Rejection::Stale => self.stale,
            Rejection::Foreign => self.foreign,
            Rejection::BadCheck => self.bad_check,
            Rejection::Runt => self.runt,
            Rejection::Overlong => self.overlong,
            Rejection::BadEscape => self.bad_escape,
            Rejection::Garbage => self.garbage,
            Rejection::NotOurs => self.not_ours,
        }
    }

    /// Every refused datagram.
    pub fn total(&self) -> u64 {
        Rejection::ALL.iter().map(|&r| self.get(r)).sum()
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &Rejected) {
        for reason in Rejection::ALL {
            *self.slot(reason) += other.get(reason);
        }
    }
}

/// A table of the counters of several directions, one column each, headed by `labels`.
pub fn table(labels: &[&str], columns: &[&Counters]) -> String {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |name: &str, value: &dyn Fn(&Counters) -> String| {
        rows.push((name.to_owned(), columns.iter().map(|c| value(c)).collect()));
    };
    row("packets in", &|c| c.packets_in.to_string());
    row("bytes in", &|c| c.bytes_in.to_string());
    row("link bytes", &|c| c.link_bytes.to_string());
    row("bytes saved", &|c| c.bytes_saved.to_string());
    for kind in FrameKind::ALL {
        if kind != FrameKind::ContextState {
            let i = usize::from(kind.to_byte());
            row(&format!("frames {}", kind.name()), &|c| {
                c.frames_by_kind[i].to_string()
            });
        }
    }
    row("delivered", &|c| c.delivered.to_string());
    row("drop oversize packet", &|c| c.oversize_packets.to_string());
    row("drop oversize frame", &|c| c.oversize_frames.to_string());
    row("drop queue full", &|c| c.queue_drops.to_string());
    row("drop link slots full", &|c| c.slot_drops.to_string());
    row("drop link loss", &|c| c.link_lost.to_string());
    row("drop link bit error", &|c| c.link_bit_errors.to_string());
    for (i, reason) in DropReason::ALL.iter().enumerate() {
        row(&format!("refused {}", reason.name()), &|c| {
            c.refused[i].to_string()
        });
    }
    row("context damage", &|c| c.context_damage.to_string());
    row("drop oversize rebuilt", &|c| c.oversize_rebuilt.to_string());
    for reason in Rejection::ALL {
        row(&format!("rejected {}", reason.name()), &|c| {
            c.rejected.get(reason).to_string()
        });
    }
    row("from other source", &|c| c.other_source.to_string());
    row("tun write errors", &|c| c.tun_write_errors.to_string());
    row("send errors", &|c| c.send_errors.to_string());
    row("link frames sent", &|c| c.datagrams_sent.to_string());
    row("auth bytes", &|c| c.auth_bytes.to_string());
    row("checksum dropped", &|c| c.checksum_dropped.to_string());
    row("checksum failed", &|c| c.checksum_failed.to_string());
    row("incorrect delivered", &|c| {
        c.incorrect_delivered.to_string()
    });
    row("incorrect undetected", &|c| {
        c.incorrect_undetected.to_string()
    });
    row("feedback sent", &|c| c.feedback_sent.to_string());
    row("feedback received", &|c| c.feedback_received.to_string());
    row("hellos sent", &|c| c.hellos_sent.to_string());
    row("hellos received", &|c| c.hellos_received.to_string());
    row("peer runs", &|c| c.peer_runs.to_string());
    row("medium bytes", &|c| c.medium_bytes.to_string());

    let name_width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| {
            rows.iter()
                .map(|(_, v)| v[i].len())
                .chain([labels.get(i).map_or(0, |l| l.len())])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:name_width$}", "");
    for (i, width) in widths.iter().enumerate() {
        let _ = write!(out, "  {:>width$}", labels.get(i).copied().unwrap_or(""));
    }
    out.push('\n');
    for (name, values) in &rows {
        let _ = write!(out, "{name:name_width$}");
        for (value, width) in values.iter().zip(&widths) {
            let _ = write!(out, "  {value:>width$}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_refusals_and_sums() {
        let mut c = Counters::default();
        c.count_frame(FrameKind::CompressedTcp, 1500, 1450);
        c.count_refusal(DropReason::ChecksumMismatch);
        c.count_refusal(DropReason::Malformed);
        c.count_link_fate(Fate::BitError);
        assert_eq!(c.frames(), 1);
        assert_eq!((c.link_bytes, c.bytes_saved), (1451, 50));
        assert_eq!((c.context_damage, c.drops()), (1, 3));
        let mut total = Counters::default();
        total.add(&c);
        total.add(&c);
        assert_eq!(total.frames(), 2);
        assert_eq!(total.refused.iter().sum::<u64>(), 4);
        let text = table(&["a->b"], &[&total]);
        assert!(text.contains("context damage") && text.contains("a->b"));
        assert!(c
            .summary()
            .contains("refused before decompression 0, incorrect 0"));
    }

    #[test]
    fn rejections_are_counted_apart_from_drops_and_context_damage() {
        let mut c = Counters::default();
        c.rejected.count(Rejection::Forged);
        c.rejected.count(Rejection::Forged);
        c.rejected.count(Rejection::Replayed);
        assert!(!c.count_rebuilt(1501, 1500, Some(true), true));
        assert!(c.count_rebuilt(1500, 1500, None, true));
        assert_eq!((c.rejected.total(), c.drops(), c.context_damage), (3, 1, 0));
        assert_eq!((c.oversize_rebuilt, c.delivered), (1, 1));
        let line = c.summary();
        assert!(
            line.contains("refused before decompression 3 (forged 2, replayed 1)"),
            "{line}"
        );
        let mut total = Counters::default();
        total.add(&c);
        total.add(&c);
        assert_eq!(total.rejected.forged, 4);
        assert_eq!(total.rejected.total(), 6);
        for reason in Rejection::ALL {
            let mut r = Rejected::default();
            r.count(reason);
            assert_eq!((r.get(reason), r.total()), (1, 1), "{}", reason.name());
        }
        assert!(table(&["receive"], &[&c]).contains("rejected forged"));
    }
}
