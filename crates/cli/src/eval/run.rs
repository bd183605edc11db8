//! One scheme's run over a capture, a packet at a time: both directions' compressors, links and
//! decompressors, the oracle, and the counts of its [`SchemeResult`] (see the parent module for
//! the model).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use taroc_core::codec::pass_sibling_notes;
use taroc_core::{
    AnyCompressor, AnyDecompressor, Compressor, Decompressor, DropReason, FrameKind, Variant,
};
use taroc_sim::outage::{FlowId, FrameFate, OutageStats, OutageTracker};

use super::{
    transport_checksum_rejects, Observer, Options, Outcome, Released, Schedule, SchemeResult, Sent,
};
use crate::capture::CaptureStats;
use crate::impair::{Fate, Link, LossModel};

/// One end of the link's two directions: the compressor that sends direction `d`, the
/// decompressor that receives it, the link between them, and the feedback waiting to travel.
struct End {
    compressor: AnyCompressor,
    decompressor: AnyDecompressor,
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
    ends: [End; 2],
    compress_time: Duration,
    decompress_time: Duration,
    decompressed: u64,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
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
        let ends = [0, 1].map(|d| End {
            compressor: variant.compressor(),
            decompressor: variant.decompressor(),
            link: Link::new(options.seed, d, loss.clone(), options.ber),
            feedback_link: Link::new(options.seed, d + 2, loss.clone(), options.ber),
            pending: Vec::new(),
            now: Duration::ZERO,
        });
        Run {
            scheme,
            variant,
            result,
            ends,
            compress_time: Duration::ZERO,
            decompress_time: Duration::ZERO,
            decompressed: 0,
            frame: Vec::with_capacity(2048),
            rebuilt: Vec::with_capacity(2048),
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
            ends,
            compress_time,
            decompress_time,
            decompressed,
            frame,
            rebuilt,
            feedback,
            outages,
            overhead,
            reset_at,
        } = self;
        if *reset_at == Some(sent) {
            // A restarted peer: fresh decompressors, from the time of the last packet.
            for end in ends.iter_mut() {
                end.decompressor = variant.decompressor();
            }
            outages.reset(ends[0].now.max(ends[1].now));
        }
        let (d, packet) = (released.direction, released.packet.as_slice());
        let [forward, reverse] = ends;
        let (end, other) = if d == 0 {
            (forward, reverse)
        } else {
            (reverse, forward)
        };

        // 1. Feedback queued at this node crosses the link first, to the opposite direction's
        //    compressor (which sits at the far end of this direction).
        for message in end.pending.drain(..) {
            let on_link = 1 + message.len();
            result.feedback_frames += 1;
            result.feedback_bytes += on_link as u64;
            result.link_bytes += on_link as u64;
            result.link_header_bytes += on_link as i64;
            count(&mut result.frames_by_kind, FrameKind::ContextState.name());
            let fate = end.feedback_link.send(8 * on_link as u64);
            observer.feedback(*scheme, d, end.now, &message, fate);
            match fate {
                Fate::Delivered => other.compressor.handle_feedback(&message),
                Fate::Lost | Fate::BitError => result.feedback_lost += 1,
            }
        }

        // 2. Compress.
        if let Some(time) = time {
            end.now = end.now.max(time);
        }
        end.compressor.set_time(end.now);
        let started = Instant::now();
        let kind = end.compressor.compress(packet, frame);
        // The sending node's decompressor (of the other direction) hears of new flows.
        pass_sibling_notes(&mut end.compressor, &mut other.decompressor, feedback);
        *compress_time += started.elapsed().saturating_sub(*overhead);

        // 3. Count the bytes and send the frame over the link.
        let on_link = 1 + frame.len();
        result.packets += 1;
        result.original_header_bytes += (packet.len() - payload) as u64;
        result.link_header_bytes += on_link as i64 - payload as i64;
        result.link_bytes += on_link as u64;
        count(&mut result.frames_by_kind, kind.name());
        let flow = (d, FlowId::of(packet));
        observer.frame(*scheme, d, end.now, kind, frame);
        let sent = Sent {
            index: released.index,
            direction: d,
            time: end.now,
            kind,
            original: packet,
            payload,
            on_link,
        };
        match end.link.send(8 * on_link as u64) {
            Fate::Delivered => {}
            Fate::Lost => {
                observer.packet(*scheme, &sent, Outcome::Lost(Fate::Lost));
                result.link_lost += 1;
                outages.frame(flow, end.now, FrameFate::Lost);
                return;
            }
            Fate::BitError => {
                // The frame arrived damaged: the framer's CRC check tells the decompressor.
                observer.packet(*scheme, &sent, Outcome::Lost(Fate::BitError));
                result.link_lost += 1;
                result.link_lost_bit_errors += 1;
                end.decompressor.link_error();
                outages.frame(flow, end.now, FrameFate::Lost);
                return;
            }
        }

        // 4. Decompress what arrived intact; the link carries the kind as one byte.
        let started = Instant::now();
        end.decompressor.set_time(end.now);
        let outcome = match FrameKind::from_byte(kind.to_byte()) {
            Some(kind) => end.decompressor.decompress(kind, frame, rebuilt),
            None => Err(DropReason::UnknownKind),
        };
        // The receiving node's compressor (of the other direction) hears of verified flows.
        pass_sibling_notes(&mut other.compressor, &mut end.decompressor, feedback);
        *decompress_time += started.elapsed().saturating_sub(*overhead);
        *decompressed += 1;
        while end.decompressor.take_feedback(feedback) {
            other.pending.push(feedback.clone());
        }

        // 5. The oracle.
        match outcome {
            Ok(()) => {
                observer.packet(*scheme, &sent, Outcome::Delivered(rebuilt));
                result.delivered += 1;
                if rebuilt.as_slice() != packet {
                    result.incorrect_delivered += 1;
                    if !transport_checksum_rejects(rebuilt) {
                        result.incorrect_undetected += 1;
                    }
                    outages.frame(flow, end.now, FrameFate::Damaged);
                } else {
                    outages.frame(flow, end.now, FrameFate::Delivered);
                }
            }
            Err(reason) => {
                observer.packet(*scheme, &sent, Outcome::Refused(reason));
                if reason.is_context_damage() {
                    result.context_damage_lost += 1;
                    outages.frame(flow, end.now, FrameFate::Damaged);
                } else {
                    result.other_refused += 1;
                    outages.frame(flow, end.now, FrameFate::Lost);
                }
                count(&mut result.drops_by_reason, reason.name());
            }
        }
    }

    /// The result, once every packet has been offered.
    pub(super) fn finish(self, stats: &CaptureStats, schedule: &Schedule) -> SchemeResult {
        let Run {
            mut result,
            ends,
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
        result.reordered_before = schedule.reordered();
        result.outage = outages.stats(ends[0].now.max(ends[1].now));
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
