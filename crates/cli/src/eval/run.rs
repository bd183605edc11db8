//! One scheme's run over a capture, a packet at a time: both directions' compressors, links and
//! decompressors, the oracle, and the counts of its [`SchemeResult`] (see the parent module for
//! the model).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use taroc_core::{Arrived, DropReason, FrameKind, LinkEnd, Variant};
use taroc_sim::outage::{FlowId, FrameFate, OutageStats, OutageTracker};

use super::held::HeldFrames;
use super::{
    transport_checksum_rejects, Observer, Options, Outcome, Released, Schedule, SchemeResult, Sent,
};
use crate::capture::CaptureStats;
use crate::impair::{stream, Fate, Link, LossModel, Purpose, Reorder};

/// One direction `d` of the link: the link from node `d` to node `1 - d`, the feedback waiting
/// at node `d` to cross it, and the direction's clock. (Node `d` holds the compressor of
/// direction `d` and the decompressor of the other, [`LinkEnd`].)
struct Direction {
    /// The link carrying this direction's packets.
    link: Link,
    /// The same link's own random streams for the feedback frames it carries, so that feedback
    /// does not shift the losses every scheme meets at the same packet positions.
    feedback_link: Link,
    /// Feedback frames queued at this direction's sending node, produced by the opposite
    /// direction's decompressor, to be sent before this direction's next packet.
    pending: Vec<Vec<u8>>,
    /// The compressor's clock, which never goes back.
    now: Duration,
    /// The link's reordering (`--reorder`), if on: frames that crossed the link wait here.
    reorder: Option<Reorder<InFlight>>,
    /// The frames the last arrival released.
    released: Vec<InFlight>,
}

/// A frame that crossed the link while reordering is on, with what checking it needs.
struct InFlight {
    index: usize,
    time: Duration,
    kind: FrameKind,
    frame: Vec<u8>,
    original: Vec<u8>,
    payload: usize,
    on_link: usize,
}

/// What decompressing a frame changes beyond its two ends: the counts, the outages and the
/// scratch buffers of a [`Run`].
struct Arrival<'a> {
    scheme: usize,
    result: &'a mut SchemeResult,
    decompress_time: &'a mut Duration,
    decompressed: &'a mut u64,
    rebuilt: &'a mut Vec<u8>,
    /// A packet delivered late.
    late: &'a mut Vec<u8>,
    /// The frames held for confirmation or refused for context damage, until delivered
    /// late.
    held: &'a mut HeldFrames,
    feedback: &'a mut Vec<u8>,
    outages: &'a mut OutageTracker<(usize, FlowId)>,
    overhead: Duration,
}

impl Arrival<'_> {
    /// Decompresses `frame` of `sent` at the receiving node `node` at `now`, queues the
    /// feedback it has at `pending` (node's own, to cross the other direction's link), and
    /// checks what comes out against the original.
    fn decompress(
        &mut self,
        node: &mut LinkEnd,
        pending: &mut Vec<Vec<u8>>,
        now: Duration,
        sent: &Sent,
        frame: &[u8],
        observer: &mut dyn Observer,
    ) {
        // 4. Decompress what arrived intact; the link carries the kind as one byte.
        let started = Instant::now();
        let outcome = match FrameKind::from_byte(sent.kind.to_byte()) {
            Some(kind) => match node.receive(now, kind, frame, self.rebuilt) {
                Arrived::Packet(result) => result,
                Arrived::Feedback => Err(DropReason::UnknownKind),
            },
            None => Err(DropReason::UnknownKind),
        };
        *self.decompress_time += started.elapsed().saturating_sub(self.overhead);
        *self.decompressed += 1;
        while node.take_feedback(self.feedback) {
            pending.push(self.feedback.clone());
        }
        while let Some(reason) = node.take_late(self.late) {
            self.late(sent, reason, observer);
        }

        // 5. The oracle.
        let (result, outages) = (&mut *self.result, &mut *self.outages);
        let flow = (sent.direction, FlowId::of(sent.original));
        match outcome {
            Ok(()) => {
                observer.packet(self.scheme, sent, Outcome::Delivered(self.rebuilt));
                result.delivered += 1;
                if self.rebuilt.as_slice() != sent.original {
                    count_incorrect(result, self.rebuilt);
                    outages.frame(flow, now, FrameFate::Damaged);
                } else {
                    outages.frame(flow, now, FrameFate::Delivered);
                }
            }
            Err(reason) => {
                observer.packet(self.scheme, sent, Outcome::Refused(reason));
                if reason.is_context_damage() {
                    // It may still go late.
                    self.held.hold(sent);
                    result.context_damage_lost += 1;
                    outages.frame(flow, now, FrameFate::Damaged);
                } else {
                    result.other_refused += 1;
                    outages.frame(flow, now, FrameFate::Lost);
                }
                count(&mut result.drops_by_reason, reason.name());
            }
        }
    }

    /// The frame of `sent` delivered a packet late (refused before for `reason`), before its
    /// own: it is no loss if it is one of the held frames' packets, and a wrong delivery if
    /// not.
    fn late(&mut self, sent: &Sent, reason: DropReason, observer: &mut dyn Observer) {
        let (result, outages) = (&mut *self.result, &mut *self.outages);
        result.delivered += 1;
        let Some(held) = self.held.take(sent.direction, self.late) else {
            observer.packet(self.scheme, sent, Outcome::Late(self.late));
            count_incorrect(result, self.late);
            return;
        };
        observer.packet(
            self.scheme,
            &held.sent(sent.direction),
            Outcome::Late(self.late),
        );
        result.delivered_late += 1;
        result.context_damage_lost -= 1;
        uncount(&mut result.drops_by_reason, reason.name());
        outages.delivered_late((sent.direction, FlowId::of(held.original())));
    }

    /// Decompresses the frames the reordering of direction `direction` (`dir`) released, at
    /// the receiving node `node` (whose feedback waits at `pending`).
    fn decompress_released(
        &mut self,
        direction: usize,
        dir: &mut Direction,
        node: &mut LinkEnd,
        pending: &mut Vec<Vec<u8>>,
        observer: &mut dyn Observer,
    ) {
        let mut released = core::mem::take(&mut dir.released);
        for f in released.drain(..) {
            let sent = Sent {
                index: f.index,
                direction,
                time: f.time,
                kind: f.kind,
                original: &f.original,
                payload: f.payload,
                on_link: f.on_link,
            };
            self.decompress(node, pending, dir.now, &sent, &f.frame, observer);
        }
        dir.released = released;
    }
}

/// Adds one to `name`'s count in `counts`; a name already counted allocates nothing.
fn count(counts: &mut BTreeMap<String, u64>, name: &str) {
    match counts.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            counts.insert(name.to_string(), 1);
        }
    }
}

/// Counts `packet`, delivered though it is not the original, as incorrect, and undetected if
/// the receiver's checksum would accept it.
fn count_incorrect(result: &mut SchemeResult, packet: &[u8]) {
    result.incorrect_delivered += 1;
    if !transport_checksum_rejects(packet) {
        result.incorrect_undetected += 1;
    }
}

/// Takes one from `name`'s count in `counts` (counted before).
fn uncount(counts: &mut BTreeMap<String, u64>, name: &str) {
    if let Some(n) = counts.get_mut(name) {
        *n -= 1;
    }
}

/// The time one clock read costs, measured: subtracted from every timed codec call.
pub(super) fn clock_overhead() -> Duration {
    const READS: u32 = 2000;
    let started = Instant::now();
    let mut last = started;
    for _ in 0..READS {
        last = std::hint::black_box(Instant::now());
    }
    last.duration_since(started) / READS
}

/// One scheme's run over a capture: both directions' codecs and links, and its counts so far.
pub(super) struct Run<'v> {
    /// The scheme's position among the evaluation's variants, as the observer is told it.
    scheme: usize,
    variant: &'v Variant,
    result: SchemeResult,
    /// Node `n`: the compressor of direction `n`, the decompressor of the other.
    nodes: [LinkEnd; 2],
    dirs: [Direction; 2],
    compress_time: Duration,
    decompress_time: Duration,
    decompressed: u64,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
    late: Vec<u8>,
    held: HeldFrames,
    feedback: Vec<u8>,
    outages: OutageTracker<(usize, FlowId)>,
    /// The cost of one clock read, subtracted from every timed codec call.
    overhead: Duration,
    reset_at: Option<u64>,
}

impl<'v> Run<'v> {
    /// A fresh run of `variant`, the evaluation's `scheme`-th, over the capture `capture`.
    pub(super) fn new(
        capture: &str,
        scheme: usize,
        variant: &'v Variant,
        options: &Options,
        loss: &LossModel,
        overhead: Duration,
    ) -> Run<'v> {
        let result = SchemeResult {
            capture: capture.to_string(),
            scheme: variant.name.to_string(),
            packets: 0,
            original_header_bytes: 0,
            link_header_bytes: 0,
            header_bytes_per_packet: 0.0,
            compression_ratio: None,
            link_bytes: 0,
            feedback_frames: 0,
            feedback_bytes: 0,
            feedback_lost: 0,
            delivered: 0,
            delivered_late: 0,
            link_lost: 0,
            link_lost_bit_errors: 0,
            context_damage_lost: 0,
            other_refused: 0,
            incorrect_delivered: 0,
            incorrect_undetected: 0,
            compress_ns_per_packet: 0.0,
            decompress_ns_per_packet: 0.0,
            records: 0,
            non_ip_records: 0,
            truncated_records: 0,
            removed_before: 0,
            reordered_before: 0,
            off_link: 0,
            reordered_on_link: 0,
            frames_by_kind: FrameKind::ALL
                .iter()
                .map(|k| (k.name().to_string(), 0))
                .collect(),
            drops_by_reason: DropReason::ALL
                .iter()
                .map(|r| (r.name().to_string(), 0))
                .collect(),
            outage: OutageStats::default(),
            options: options.clone(),
        };
        let dirs = [0, 1].map(|d| Direction {
            link: Link::new(options.seed, d, loss.clone(), options.ber),
            feedback_link: Link::new(options.seed, d + 2, loss.clone(), options.ber),
            pending: Vec::new(),
            now: Duration::ZERO,
            reorder: (options.reorder > 0.0).then(|| {
                Reorder::new(
                    options.reorder,
                    stream(options.seed, d, Purpose::LinkReorder),
                )
            }),
            released: Vec::new(),
        });
        Run {
            scheme,
            variant,
            result,
            nodes: [0, 1].map(|_| LinkEnd::of(variant, variant)),
            dirs,
            compress_time: Duration::ZERO,
            decompress_time: Duration::ZERO,
            decompressed: 0,
            frame: Vec::with_capacity(2048),
            rebuilt: Vec::with_capacity(2048),
            late: Vec::new(),
            held: HeldFrames::default(),
            feedback: Vec::new(),
            outages: OutageTracker::new(),
            overhead,
            reset_at: options.reset_at,
        }
    }

    /// Offers `released` (with `payload` bytes of payload) to the compressor of its direction,
    /// the `sent`-th packet offered (both directions counted), released at capture time `time`
    /// (`None` at the end of the capture: the clock stays), telling `observer` of every frame
    /// and of the packet's fate.
    pub(super) fn step(
        &mut self,
        sent: u64,
        released: &Released,
        payload: usize,
        time: Option<Duration>,
        observer: &mut dyn Observer,
    ) {
        let Run {
            scheme,
            variant,
            result,
            nodes,
            dirs,
            compress_time,
            decompress_time,
            decompressed,
            frame,
            rebuilt,
            late,
            held,
            feedback,
            outages,
            overhead,
            reset_at,
        } = self;
        if *reset_at == Some(sent) {
            // A restarted peer: fresh decompressors, from the time of the last packet.
            for node in nodes.iter_mut() {
                node.replace_decompressor(variant.decompressor());
            }
            outages.reset(dirs[0].now.max(dirs[1].now));
        }
        let (d, packet) = (released.direction, released.packet.as_slice());
        // Node `d` sends; node `1 - d` receives.
        let [node_0, node_1] = nodes;
        let (sender, receiver) = if d == 0 {
            (node_0, node_1)
        } else {
            (node_1, node_0)
        };
        let [dir_0, dir_1] = dirs;
        let (dir, reverse) = if d == 0 {
            (dir_0, dir_1)
        } else {
            (dir_1, dir_0)
        };

        // 1. Feedback queued at the sending node crosses the link first, to the receiving
        //    node's compressor (of the other direction).
        for message in dir.pending.drain(..) {
            let on_link = 1 + message.len();
            result.feedback_frames += 1;
            result.feedback_bytes += on_link as u64;
            result.link_bytes += on_link as u64;
            result.link_header_bytes += on_link as i64;
            count(&mut result.frames_by_kind, FrameKind::ContextState.name());
            let fate = dir.feedback_link.send(8 * on_link as u64);
            observer.feedback(*scheme, d, dir.now, &message, fate);
            match fate {
                Fate::Delivered => {
                    receiver.receive(dir.now, FrameKind::ContextState, &message, rebuilt);
                }
                Fate::Lost | Fate::BitError => result.feedback_lost += 1,
            }
        }

        // 2. Compress; the sending node's decompressor (of the other direction) hears of new
        //    flows.
        if let Some(time) = time {
            dir.now = dir.now.max(time);
        }
        let started = Instant::now();
        let kind = sender.compress(dir.now, packet, frame);
        *compress_time += started.elapsed().saturating_sub(*overhead);

        // 3. Count the bytes and send the frame over the link.
        let on_link = 1 + frame.len();
        result.packets += 1;
        result.original_header_bytes += (packet.len() - payload) as u64;
        result.link_header_bytes += on_link as i64 - payload as i64;
        result.link_bytes += on_link as u64;
        count(&mut result.frames_by_kind, kind.name());
        let flow = (d, FlowId::of(packet));
        observer.frame(*scheme, d, dir.now, kind, frame);
        let sent = Sent {
            index: released.index,
            direction: d,
            time: dir.now,
            kind,
            original: packet,
            payload,
            on_link,
        };
        match dir.link.send(8 * on_link as u64) {
            Fate::Delivered => {}
            Fate::Lost => {
                observer.packet(*scheme, &sent, Outcome::Lost(Fate::Lost));
                result.link_lost += 1;
                outages.frame(flow, dir.now, FrameFate::Lost);
                return;
            }
            Fate::BitError => {
                // The frame arrived damaged: the framer's CRC check tells the decompressor.
                observer.packet(*scheme, &sent, Outcome::Lost(Fate::BitError));
                result.link_lost += 1;
                result.link_lost_bit_errors += 1;
                receiver.link_error();
                outages.frame(flow, dir.now, FrameFate::Lost);
                return;
            }
        }

        let mut arrival = Arrival {
            scheme: *scheme,
            result,
            decompress_time,
            decompressed,
            rebuilt,
            late,
            held,
            feedback,
            outages,
            overhead: *overhead,
        };
        // The receiving node's feedback waits there for the other direction's link.
        let pending = &mut reverse.pending;
        match &mut dir.reorder {
            None => arrival.decompress(receiver, pending, dir.now, &sent, frame, observer),
            Some(reorder) => {
                let held = InFlight {
                    index: sent.index,
                    time: sent.time,
                    kind,
                    frame: frame.clone(),
                    original: packet.to_vec(),
                    payload,
                    on_link,
                };
                reorder.arrive(held, &mut dir.released);
                arrival.decompress_released(d, dir, receiver, pending, observer);
            }
        }
    }

    /// The end of the capture: the frames the links still hold back arrive.
    pub(super) fn drain(&mut self, observer: &mut dyn Observer) {
        let Run {
            scheme,
            result,
            nodes,
            dirs,
            decompress_time,
            decompressed,
            rebuilt,
            late,
            held,
            feedback,
            outages,
            overhead,
            ..
        } = self;
        let mut arrival = Arrival {
            scheme: *scheme,
            result,
            decompress_time,
            decompressed,
            rebuilt,
            late,
            held,
            feedback,
            outages,
            overhead: *overhead,
        };
        for d in 0..2 {
            let [dir_0, dir_1] = &mut *dirs;
            let (dir, reverse) = if d == 0 {
                (dir_0, dir_1)
            } else {
                (dir_1, dir_0)
            };
            let receiver = &mut nodes[1 - d];
            if let Some(reorder) = &mut dir.reorder {
                reorder.finish(&mut dir.released);
                arrival.result.reordered_on_link += reorder.reordered;
                arrival.decompress_released(d, dir, receiver, &mut reverse.pending, observer);
            }
        }
    }

    /// The result, once every packet has been offered.
    pub(super) fn finish(self, stats: &CaptureStats, schedule: &Schedule) -> SchemeResult {
        let Run {
            mut result,
            dirs,
            compress_time,
            decompress_time,
            decompressed,
            outages,
            ..
        } = self;
        result.records = stats.records;
        result.non_ip_records = stats.non_ip_records;
        result.truncated_records = stats.truncated_records;
        result.removed_before = schedule.removed();
        result.off_link = schedule.off_link();
        result.reordered_before = schedule.reordered();
        result.outage = outages.stats(dirs[0].now.max(dirs[1].now));
        if result.packets > 0 {
            result.header_bytes_per_packet =
                result.link_header_bytes as f64 / result.packets as f64;
            result.compress_ns_per_packet = compress_time.as_nanos() as f64 / result.packets as f64;
        }
        if decompressed > 0 {
            result.decompress_ns_per_packet =
                decompress_time.as_nanos() as f64 / decompressed as f64;
        }
        if result.link_header_bytes > 0 {
            result.compression_ratio =
                Some(result.original_header_bytes as f64 / result.link_header_bytes as f64);
        }
        result
    }
}
