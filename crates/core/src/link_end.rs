//! One end of a link: the compressor of the direction it sends, the decompressor of the
//! direction it receives, and the sequence every frame takes through them.
//!
//! ```text
//!            end A                                    end B
//!   packet ─► compressor (A→B) ══ frames A→B ══►  decompressor (A→B) ─► packet
//!                 ▲  notes ▼                          ▲ notes ▼
//!   packet ◄─ decompressor (B→A) ◄══ frames B→A ══ compressor (B→A) ◄─ packet
//! ```
//!
//! The two codecs at one end tell each other of the flows they see (*sibling notes*,
//! [`Compressor::take_sibling_note`]): a scheme may code a new flow against the opposite
//! direction's, which only the notes tell it of. The notes never cross the link, and must pass
//! after every compress and every decompress, before the next frame goes or arrives; a driver
//! that forgets them still works, only worse. Feedback does cross the link: what this end's
//! decompressor has for the far end's compressor ([`LinkEnd::take_feedback`]) goes as a
//! [`FrameKind::ContextState`] frame, and one that arrives goes to this end's compressor
//! ([`LinkEnd::receive`]).
//!
//! A `LinkEnd` does that sequence, so that the simulator, the evaluation of captures and the
//! gateway on every transport run the codecs the same way. It does no I/O and reads no clock:
//! the time of each call comes in as a value.

use alloc::vec::Vec;
use core::time::Duration;

use crate::codec::{pass_sibling_notes, Compressor, Decompressor, DropReason, FrameKind};
use crate::scheme::{AnyCompressor, AnyDecompressor};
use crate::variant::Variant;

/// What a frame that reached this end was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrived {
    /// A packet's frame: rebuilt into the output buffer, or refused.
    Packet(Result<(), DropReason>),
    /// Feedback for this end's compressor, which took it.
    Feedback,
}

/// One end of a link: its compressor (of the direction it sends) and decompressor (of the
/// direction it receives).
#[derive(Debug, Clone)]
pub struct LinkEnd<C = AnyCompressor, D = AnyDecompressor> {
    compressor: C,
    decompressor: D,
    notes: Vec<u8>,
}

impl LinkEnd {
    /// The end that sends with `send`'s scheme and receives with `receive`'s, fresh.
    pub fn of(send: &Variant, receive: &Variant) -> LinkEnd {
        LinkEnd::new(send.compressor(), receive.decompressor())
    }
}

impl<C: Compressor, D: Decompressor> LinkEnd<C, D> {
    /// The end made of these codecs.
    pub fn new(compressor: C, decompressor: D) -> LinkEnd<C, D> {
        LinkEnd {
            compressor,
            decompressor,
            notes: Vec::new(),
        }
    }

    /// Compresses `packet`, sent at `now`, into `out` and returns the frame's kind; the
    /// sibling decompressor hears of what it tells.
    pub fn compress(&mut self, now: Duration, packet: &[u8], out: &mut Vec<u8>) -> FrameKind {
        self.compressor.set_time(now);
        let kind = self.compressor.compress(packet, out);
        pass_sibling_notes(
            &mut self.compressor,
            &mut self.decompressor,
            &mut self.notes,
        );
        kind
    }

    /// A frame of `kind` that crossed the link intact arrives at `now`: feedback goes to the
    /// compressor; any other frame is decompressed into `out`, and the sibling compressor hears
    /// of what the decompressor tells. Take the feedback it produced with
    /// [`take_feedback`](Self::take_feedback).
    pub fn receive(
        &mut self,
        now: Duration,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Arrived {
        self.compressor.heard_far_end();
        if kind == FrameKind::ContextState {
            self.compressor.handle_feedback(frame);
            return Arrived::Feedback;
        }
        self.decompressor.set_time(now);
        let result = self.decompressor.decompress(kind, frame, out);
        pass_sibling_notes(
            &mut self.compressor,
            &mut self.decompressor,
            &mut self.notes,
        );
        Arrived::Packet(result)
    }

    /// Moves a packet the last frame received delivered late (one held or kept earlier that
    /// it confirmed, [`Decompressor::take_late`]) into `out` (cleared first), with the reason
    /// its frame was refused; `None` if there is none. Call until it returns `None`: they came
    /// before that frame's packet, the oldest first.
    pub fn take_late(&mut self, out: &mut Vec<u8>) -> Option<DropReason> {
        self.decompressor.take_late(out)
    }

    /// The link received a damaged frame in place of the next one (its check failed).
    pub fn link_error(&mut self) {
        self.decompressor.link_error();
    }

    /// Moves the next feedback for the far end's compressor into `out` (cleared first), to go
    /// as a [`FrameKind::ContextState`] frame; false if there is none.
    pub fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        self.decompressor.take_feedback(out)
    }

    /// The compressor (of the direction this end sends).
    pub fn compressor(&self) -> &C {
        &self.compressor
    }

    /// The decompressor (of the direction this end receives).
    pub fn decompressor(&self) -> &D {
        &self.decompressor
    }

    /// Replaces the compressor, as when the far end restarted and lost what ours assumes.
    pub fn replace_compressor(&mut self, compressor: C) {
        self.compressor = compressor;
    }

    /// Replaces the decompressor, as when this end restarts its receiving side.
    pub fn replace_decompressor(&mut self, decompressor: D) {
        self.decompressor = decompressor;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    /// An IPv4/TCP segment of flow `port` with `payload` bytes.
    fn segment(port: u16, seq: u32, ack: u32, id: u16, payload: usize) -> Vec<u8> {
        let len = 40 + payload;
        let mut p = alloc::vec![0x45, 0, (len >> 8) as u8, len as u8];
        p.extend_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&[0x40, 0, 64, 6, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
        p.extend_from_slice(&port.to_be_bytes());
        p.extend_from_slice(&[0, 80]);
        p.extend_from_slice(&seq.to_be_bytes());
        p.extend_from_slice(&ack.to_be_bytes());
        p.extend_from_slice(&[0x50, 0x10, 0x01, 0xf5, 0, 0, 0, 0]);
        p.extend((0..payload).map(|i| (i * 7 + seq as usize) as u8));
        let sum = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        let tcp = taroc_wire::checksum::Sum::new()
            .add_bytes(&p[12..20])
            .add_u16(6)
            .add_u16((len - 20) as u16)
            .add_bytes(&p[20..])
            .checksum();
        p[36..38].copy_from_slice(&tcp.to_be_bytes());
        p
    }

    /// Reverses a segment's direction (addresses and ports swapped), checksums refilled.
    fn reply(seq: u32, ack: u32, id: u16) -> Vec<u8> {
        let mut p = segment(5001, seq, ack, id, 0);
        let (src, dst) = (p[12..16].to_vec(), p[16..20].to_vec());
        p[12..16].copy_from_slice(&dst);
        p[16..20].copy_from_slice(&src);
        p[20..24].copy_from_slice(&[0, 80, 0x13, 0x89]);
        p[10..12].fill(0);
        let sum = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p[36..38].fill(0);
        let tcp = taroc_wire::checksum::Sum::new()
            .add_bytes(&p[12..20])
            .add_u16(6)
            .add_u16((p.len() - 20) as u16)
            .add_bytes(&p[20..])
            .checksum();
        p[36..38].copy_from_slice(&tcp.to_be_bytes());
        p
    }

    #[test]
    fn two_ends_carry_both_directions_exactly_for_every_scheme() {
        let names = crate::variant::NAMES
            .iter()
            .chain(&crate::variant::EXTRA_NAMES);
        for name in names {
            let v = Variant::by_name(name).unwrap();
            let (mut a, mut b) = (LinkEnd::of(&v, &v), LinkEnd::of(&v, &v));
            let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..40u32 {
                let now = Duration::from_millis(u64::from(i));
                let data = segment(5001, 1000 + 1000 * i, 77, i as u16, 1000);
                let kind = a.compress(now, &data, &mut frame);
                let arrived = b.receive(now, kind, &frame, &mut out);
                assert_eq!(arrived, Arrived::Packet(Ok(())), "{name} {i}");
                assert_eq!(out, data, "{name} {i}");
                while b.take_feedback(&mut feedback) {
                    let kind = FrameKind::ContextState;
                    assert_eq!(a.receive(now, kind, &feedback, &mut out), Arrived::Feedback);
                }
                let ack = reply(77, 2000 + 1000 * i, 100 + i as u16);
                let kind = b.compress(now, &ack, &mut frame);
                assert_eq!(
                    a.receive(now, kind, &frame, &mut out),
                    Arrived::Packet(Ok(())),
                    "{name} ack {i}"
                );
                assert_eq!(out, ack, "{name} ack {i}");
            }
        }
    }

    #[test]
    fn a_replaced_decompressor_refuses_or_delivers_exactly_and_asks_for_repair() {
        let v = Variant::by_name("taroc-plus").unwrap();
        let (mut a, mut b) = (LinkEnd::of(&v, &v), LinkEnd::of(&v, &v));
        let (mut frame, mut out, mut feedback) = (Vec::new(), Vec::new(), Vec::new());
        let now = Duration::ZERO;
        for i in 0..20u32 {
            let data = segment(5001, 1000 + 1000 * i, 77, i as u16, 1000);
            let kind = a.compress(now, &data, &mut frame);
            assert_eq!(
                b.receive(now, kind, &frame, &mut out),
                Arrived::Packet(Ok(()))
            );
        }
        b.replace_decompressor(v.decompressor());
        let mut repaired = false;
        for i in 20..40u32 {
            let data = segment(5001, 1000 + 1000 * i, 77, i as u16, 1000);
            let kind = a.compress(now, &data, &mut frame);
            match b.receive(now, kind, &frame, &mut out) {
                Arrived::Packet(Ok(())) => {
                    assert_eq!(out, data);
                    repaired = true;
                }
                Arrived::Packet(Err(_)) => assert!(!repaired, "refused after the repair"),
                Arrived::Feedback => unreachable!(),
            }
            while b.take_feedback(&mut feedback) {
                a.receive(now, FrameKind::ContextState, &feedback, &mut out);
            }
        }
        assert!(repaired);
    }
}
