//! The 50 kbit/s radio link of the STIS box: the serialisation queues (one per connection and
//! direction, or one per direction when the rate is shared) and, optionally, one header
//! compressor/decompressor pair per direction of the link, which every connection through the
//! box shares (that is what a radio link's header compressor sees).
//!
//! A packet the box admitted ([`super::stis::Stis::enter`]: buffer drop decision, stall, reordering draw)
//! waits in its queue until it is ready and the packets before it have left. When it starts
//! serialisation it is compressed, and the frame's bytes (plus the link's frame-kind byte) set
//! its serialisation time, so header compression speeds the link, and stalls and reordering act
//! on compressed frames. The receiving end decompresses every frame, also those of a connection
//! that has already finished, compares what it rebuilt byte for byte with the original packet,
//! and counts refusals and wrong deliveries (those the receiving TCP's checksum would catch
//! apart from those it would take). Every frame that is not rebuilt exactly is dropped: the
//! connections only ever see exact packets, and the counters say what a real receiver would
//! have been handed. Decompressor feedback (`CONTEXT_STATE`) travels on
//! the reverse direction: its serialisation time plus the one-way delay, outside the buffer and
//! the connections' queues and stalls (the draft's box has no notion of link-layer control
//! frames).

use std::collections::VecDeque;
use std::time::Duration;

use serde::Serialize;
use taroc_core::variant::Variant;
use taroc_core::{Arrived, DropReason, FrameKind, LinkEnd};

use super::stis::{Admitted, Dir};
use crate::event::Time;
use crate::tcp::segment;

/// Counters of a header-compressed link, over both directions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CodecStats {
    /// Frames sent (data and ACK packets, feedback not included).
    pub frames: u64,
    /// Bytes of those frames on the wire (frame-kind byte included).
    pub wire_bytes: u64,
    /// Bytes of the original packets.
    pub packet_bytes: u64,
    /// Frames that carried a whole header (`TYPE_IP`, `UNCOMPRESSED_TCP`, `FULL_HEADER`): a
    /// context (re)established or a packet the scheme would not compress.
    pub full_headers: u64,
    /// Intact frames the decompressor refused for its context (no context, checksum mismatch):
    /// every frame on this link arrives intact, so each is context damage.
    pub context_damage: u64,
    /// Of those, frames of the data direction (server to client); the rest are ACKs.
    pub context_damage_data: u64,
    /// Intact frames refused for another reason (malformed, unsupported, unknown kind).
    pub other_refusals: u64,
    /// Frames whose rebuilt packet differs from the original yet passes the IP and TCP
    /// checksums: a wrong packet the receiving TCP would take.
    pub incorrect: u64,
    /// Frames whose rebuilt packet differs from the original and fails a checksum, so the
    /// receiving TCP discards it (RFC 1144's decompressor relies on that check).
    pub caught_by_tcp: u64,
    /// Feedback frames sent on the reverse direction.
    pub feedback_frames: u64,
}

impl CodecStats {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &CodecStats) {
        self.frames += other.frames;
        self.wire_bytes += other.wire_bytes;
        self.packet_bytes += other.packet_bytes;
        self.full_headers += other.full_headers;
        self.context_damage += other.context_damage;
        self.context_damage_data += other.context_damage_data;
        self.other_refusals += other.other_refusals;
        self.incorrect += other.incorrect;
        self.caught_by_tcp += other.caught_by_tcp;
        self.feedback_frames += other.feedback_frames;
    }
}

/// A packet in a serialisation queue.
#[derive(Debug)]
struct Waiting {
    ready: Time,
    extra_delay: Time,
    slot: usize,
    gen: u32,
    packet: Vec<u8>,
}

#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<Waiting>,
    busy: bool,
    wake_at: Option<Time>,
}

/// A frame on its way: what the engine schedules when a packet starts serialisation.
#[derive(Debug)]
pub struct Transmission {
    /// When its last bit has left (the buffer frees the packet's bytes then).
    pub done_at: Time,
    /// When it reaches the far end.
    pub arrive_at: Time,
    /// The frame, ready for [`Radio::receive`].
    pub frame: Frame,
    /// The original packet's length (what it held of the buffer).
    pub packet_len: usize,
}

/// A frame on the link.
#[derive(Debug)]
pub struct Frame {
    /// The connection's slot.
    pub slot: usize,
    /// The connection's generation when it was sent.
    pub gen: u32,
    /// Its direction.
    pub dir: Dir,
    /// Its kind ([`FrameKind::Ip`] without header compression).
    pub kind: FrameKind,
    /// Its bytes (the packet itself without header compression).
    pub bytes: Vec<u8>,
    /// The original packet, kept to check the decompressor's output (with compression only).
    pub original: Option<Vec<u8>>,
}

/// What [`Radio::next`] found to do.
#[derive(Debug)]
pub enum Next {
    /// Nothing: the queue is busy, empty, or already waiting for its front.
    Idle,
    /// The queue's front becomes ready then: call [`Radio::next`] again at that time.
    WakeAt(Time),
    /// A frame started serialisation.
    Sent(Transmission),
}

/// The radio link: queues per direction and an optional codec pair per direction.
#[derive(Debug)]
pub struct Radio {
    queues: Vec<[Queue; 2]>,
    /// The radio's two ends, by the direction each sends: [`LinkEnd`]s.
    codecs: Option<[LinkEnd; 2]>,
    overhead: usize,
    feedback: Vec<u8>,
    /// Counters of the codecs (zero without header compression).
    pub stats: CodecStats,
}

impl Radio {
    /// A link with `queues` queues per direction, compressing with `variant` (none: packets
    /// cross unchanged, with no frame-kind byte), each frame costing `overhead` bytes more.
    pub fn new(queues: usize, variant: Option<&Variant>, overhead: usize) -> Radio {
        Radio {
            queues: (0..queues.max(1)).map(|_| Default::default()).collect(),
            codecs: variant.map(|v| [(); 2].map(|()| LinkEnd::of(v, v))),
            overhead,
            feedback: Vec::new(),
            stats: CodecStats::default(),
        }
    }

    /// Puts a packet the box admitted into queue `queue` of `dir`.
    pub fn push(
        &mut self,
        queue: usize,
        dir: Dir,
        admitted: Admitted,
        slot: usize,
        gen: u32,
        packet: Vec<u8>,
    ) {
        self.queues[queue][dir as usize].waiting.push_back(Waiting {
            ready: admitted.ready,
            extra_delay: admitted.extra_delay,
            slot,
            gen,
            packet,
        });
    }

    /// Starts the next frame of queue `queue` of `dir` at `now` if the link is free and the
    /// queue's front is ready. `tx_time` gives a frame's serialisation time from its bytes,
    /// `delay` is the one-way delay.
    pub fn next(
        &mut self,
        now: Time,
        queue: usize,
        dir: Dir,
        tx_time: impl Fn(usize) -> Time,
        delay: Time,
    ) -> Next {
        let q = &mut self.queues[queue][dir as usize];
        if q.busy {
            return Next::Idle;
        }
        let Some(front) = q.waiting.front() else {
            return Next::Idle;
        };
        if front.ready > now {
            if q.wake_at == Some(front.ready) {
                return Next::Idle;
            }
            q.wake_at = Some(front.ready);
            return Next::WakeAt(front.ready);
        }
        let Some(w) = q.waiting.pop_front() else {
            return Next::Idle;
        };
        q.busy = true;
        q.wake_at = None;
        let packet_len = w.packet.len();
        let (kind, bytes, original, wire) = match &mut self.codecs {
            None => (FrameKind::Ip, w.packet, None, packet_len),
            Some(ends) => {
                let mut frame = Vec::with_capacity(packet_len + 8);
                let at = Duration::from_nanos(now);
                let kind = ends[dir as usize].compress(at, &w.packet, &mut frame);
                let wire = frame.len() + self.overhead;
                self.stats.frames += 1;
                self.stats.wire_bytes += wire as u64;
                self.stats.packet_bytes += packet_len as u64;
                // A profile's own kinds count by the named kind they stand for.
                if matches!(
                    kind.family(),
                    FrameKind::Ip | FrameKind::UncompressedTcp | FrameKind::FullHeader
                ) {
                    self.stats.full_headers += 1;
                }
                (kind, frame, Some(w.packet), wire)
            }
        };
        let done_at = now + tx_time(wire);
        Next::Sent(Transmission {
            done_at,
            arrive_at: done_at + delay + w.extra_delay,
            frame: Frame {
                slot: w.slot,
                gen: w.gen,
                dir,
                kind,
                bytes,
                original,
            },
            packet_len,
        })
    }

    /// The frame serialising on queue `queue` of `dir` has left: the queue is free.
    pub fn done(&mut self, queue: usize, dir: Dir) {
        self.queues[queue][dir as usize].busy = false;
    }

    /// A frame reaches the far end at `now`: the packet to deliver, if the decompressor
    /// rebuilt it exactly (a refused frame or a wrong packet is counted and dropped). Feedback
    /// the decompressor produced is pushed to `feedback` (each for the compressor of the same
    /// direction, carried on the reverse one).
    pub fn receive(
        &mut self,
        now: Time,
        frame: Frame,
        feedback: &mut Vec<Vec<u8>>,
    ) -> Option<Vec<u8>> {
        let Some(ends) = &mut self.codecs else {
            return Some(frame.bytes);
        };
        // The receiving end: the one that sends the other direction.
        let end = &mut ends[1 - frame.dir as usize];
        let mut packet = Vec::with_capacity(frame.bytes.len() + 60);
        let at = Duration::from_nanos(now);
        let result = match end.receive(at, frame.kind, &frame.bytes, &mut packet) {
            Arrived::Packet(result) => result,
            Arrived::Feedback => Err(DropReason::UnknownKind),
        };
        while end.take_feedback(&mut self.feedback) {
            self.stats.feedback_frames += 1;
            feedback.push(self.feedback.clone());
        }
        match result {
            Err(reason) if reason.is_context_damage() => {
                if frame.dir == Dir::Down {
                    self.stats.context_damage_data += 1;
                }
                self.stats.context_damage += 1;
                None
            }
            Err(_) => {
                self.stats.other_refusals += 1;
                None
            }
            Ok(()) if frame.original.as_deref() != Some(&packet[..]) => {
                if segment::parse(&packet).is_ok() {
                    self.stats.incorrect += 1;
                } else {
                    self.stats.caught_by_tcp += 1;
                }
                None
            }
            Ok(()) => Some(packet),
        }
    }

    /// Feedback for the compressor of `dir` arrives.
    pub fn feedback(&mut self, dir: Dir, frame: &[u8]) {
        if let Some(ends) = &mut self.codecs {
            let feedback = FrameKind::ContextState;
            ends[dir as usize].receive(Duration::ZERO, feedback, frame, &mut Vec::new());
        }
    }

    /// The bytes a feedback frame of `len` bytes takes on the wire.
    pub fn wire_len(&self, len: usize) -> usize {
        len + self.overhead
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taroc_core::plus::compact::CompactIr;

    fn tx(bytes: usize) -> Time {
        bytes as Time
    }

    fn sent(next: Next) -> Transmission {
        match next {
            Next::Sent(t) => t,
            other => panic!("expected a transmission, got {other:?}"),
        }
    }

    #[test]
    fn a_queue_serialises_in_order_and_waits_for_its_front() {
        let mut radio = Radio::new(1, None, 1);
        let at = |ready, extra_delay| Admitted { ready, extra_delay };
        radio.push(0, Dir::Down, at(0, 7), 0, 1, vec![0; 10]);
        radio.push(0, Dir::Down, at(50, 0), 0, 1, vec![0; 20]);
        let first = sent(radio.next(0, 0, Dir::Down, tx, 100));
        assert_eq!((first.done_at, first.arrive_at), (10, 117));
        assert!(matches!(radio.next(5, 0, Dir::Down, tx, 100), Next::Idle));
        radio.done(0, Dir::Down);
        assert!(matches!(
            radio.next(10, 0, Dir::Down, tx, 100),
            Next::WakeAt(50)
        ));
        assert!(matches!(radio.next(10, 0, Dir::Down, tx, 100), Next::Idle));
        let second = sent(radio.next(50, 0, Dir::Down, tx, 100));
        assert_eq!((second.done_at, second.frame.bytes.len()), (70, 20));
        assert_eq!(radio.stats, CodecStats::default(), "no codec, no counts");
    }

    /// The radio passes the sibling notes at each end: `taroc-plus`'s ACKs (up) start from
    /// the data flow (down) the mobile end verified, their three start IRs mirrored, and the
    /// data flow's second and third IRs from the ACK flow.
    #[test]
    fn the_ends_share_their_flows() {
        use crate::tcp::segment::{build, Endpoints, SegmentSpec};
        let plus = Variant::by_name("taroc-plus").expect("taroc-plus");
        let mut radio = Radio::new(1, Some(&plus), 1);
        let server = Endpoints {
            src: [10, 0, 0, 1].into(),
            dst: [10, 0, 0, 3].into(),
            src_port: 80,
            dst_port: 40_000,
        };
        let spec = |seq: u32, ack: u32, payload_len: usize| SegmentSpec {
            seq,
            ack,
            flags: 0x10,
            window: 500,
            timestamps: Some((1_000 + seq, 7)),
            sack: &[],
            payload_len,
            payload_offset: u64::from(seq),
        };
        let at = Admitted {
            ready: 0,
            extra_delay: 0,
        };
        let mut mirrored = [0; 2];
        for i in 0..6u32 {
            for (dir, ep, s) in [
                (Dir::Down, server, spec(100 * i, 1, 100)),
                (Dir::Up, server.reversed(), spec(1, 100 * (i + 1), 0)),
            ] {
                let mut packet = Vec::new();
                build(&ep, i as u16, &s, &mut packet);
                let now = Time::from(i) * 1_000;
                radio.push(0, dir, at, 0, 1, packet.clone());
                let t = sent(radio.next(now, 0, dir, tx, 100));
                radio.done(0, dir);
                let frame = &t.frame.bytes;
                // A packed IR is always mirrored (a short mirrored compact IR, spec 3.5).
                mirrored[dir as usize] += usize::from(
                    t.frame.kind == FrameKind::Profile(PACKED_IR)
                        || t.frame.kind == FrameKind::Profile(COMPACT_IR)
                            && CompactIr::new_checked(frame).is_some_and(|f| {
                                f.mirror_flags() & taroc_core::plus::format::ir::MIRRORED != 0
                            }),
                );
                let delivered = radio.receive(t.arrive_at, t.frame, &mut Vec::new());
                assert_eq!(delivered, Some(packet));
            }
        }
        // Each start ends early, as a frame from the other end codes its numbers against one of
        // its IR frames (a reference receipt, `taroc_core::plus::receipt`): the ACK flow sends
        // two IR frames, both mirrored; of the data flow's, only the second is mirrored (the
        // first has no ACK flow to name yet).
        assert_eq!(mirrored[Dir::Up as usize], 2, "the ACK flow's start IRs");
        assert_eq!(mirrored[Dir::Down as usize], 1, "the data flow's second");
    }

    const COMPACT_IR: u8 = taroc_core::plus::format::COMPACT_IR;
    const PACKED_IR: u8 = taroc_core::plus::format::PACKED_IR;
}
