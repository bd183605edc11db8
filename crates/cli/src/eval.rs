//! The evaluation harness: runs a capture through compressor → link → decompressor, one pair per
//! link direction, and checks every delivered packet against the original (the oracle).
//!
//! A packet's direction: forward if its source address is lower than its destination address
//! (`IpAddr` ordering), reverse otherwise; a packet whose IP header cannot be parsed goes
//! forward. Both directions run interleaved in capture order, because a decompressor may send
//! feedback (RFC 2507 header requests) to the compressor of its direction over the opposite
//! direction of the link: a feedback frame waits at its node and crosses the link just before
//! that node's next packet (the link has no delay of its own, so capture order is its clock),
//! meets the same kind of losses as packets (from random streams of its own, so every scheme
//! still meets the same losses at the same packet positions), and costs its bytes in the
//! counts. Compressors get the capture's time stamps as their clock. A frame discarded for bit
//! errors is signalled to its decompressor ([`Decompressor::link_error`], the CRC error a framer
//! reports); a frame lost outright is not.
//!
//! Compression and decompression times are measured per call with [`Instant`], minus the cost
//! of one clock read measured at the start of the run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use taroc_core::{
    AnyCompressor, AnyDecompressor, Compressor, Decompressor, DropReason, FrameKind, Variant,
};
use taroc_sim::outage::{FlowId, FrameFate, OutageStats, OutageTracker};
use taroc_wire::checksum::transport_verifies;
use taroc_wire::ip::IpInfo;

use crate::capture::Capture;
use crate::impair::{Fate, Link, LossModel};

mod observe;
pub mod output;
mod prepare;
pub use observe::{Observer, Outcome, PacketFate, Sent};
pub use prepare::{direction, prepare, Prepared};

/// How to run an evaluation: the impairments (the codecs' settings come with each [`Variant`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Options {
    /// Independent bit-error probability per bit on the link.
    pub ber: f64,
    /// Frame loss rate on the link.
    pub loss: f64,
    /// Mean length of link loss bursts in frames (Gilbert–Elliott), or independent losses.
    pub burst: Option<f64>,
    /// Probability that a packet is held back before the compressor.
    pub reorder_before: f64,
    /// Probability that a packet is removed before the compressor.
    pub loss_before: f64,
    /// The seed every random stream derives from.
    pub seed: u64,
    /// Replace both decompressors by fresh ones after this many packets (both directions
    /// counted), as when the peer restarts.
    pub reset_at: Option<u64>,
}

impl Options {
    /// Checks the options and returns the link's loss model.
    pub fn loss_model(&self) -> Result<LossModel, String> {
        for (name, p) in [
            ("--ber", self.ber),
            ("--loss", self.loss),
            ("--reorder-before", self.reorder_before),
            ("--loss-before", self.loss_before),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} {p} is not a probability in [0, 1]"));
            }
        }
        LossModel::new(self.loss, self.burst)
    }
}

/// What one scheme did with one capture. Serialized as one JSON object per line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemeResult {
    /// The capture's name.
    pub capture: String,
    /// The scheme's name (its variant's: `iphc-twice`, for instance).
    pub scheme: String,
    /// Packets offered to the compressors (after `--loss-before`).
    pub packets: u64,
    /// Header bytes of those packets: packet bytes minus payload bytes.
    pub original_header_bytes: u64,
    /// Bytes on the link (frames plus 1 packet-kind byte each, feedback included) minus the
    /// original payload bytes.
    pub link_header_bytes: i64,
    /// `link_header_bytes / packets`.
    pub header_bytes_per_packet: f64,
    /// `original_header_bytes / link_header_bytes` (null if the link carried no header bytes).
    pub compression_ratio: Option<f64>,
    /// Every byte the link carried, packet-kind bytes and feedback included.
    pub link_bytes: u64,
    /// Feedback frames (`CONTEXT_STATE`, header requests) sent back over the link.
    pub feedback_frames: u64,
    /// Bytes of those feedback frames, kind bytes included (counted in `link_bytes` and
    /// `link_header_bytes` too).
    pub feedback_bytes: u64,
    /// Feedback frames the link lost.
    pub feedback_lost: u64,
    /// Packets the decompressors delivered (correct or not).
    pub delivered: u64,
    /// Frames the link lost (random loss and bit errors).
    pub link_lost: u64,
    /// Of `link_lost`, the frames discarded for bit errors.
    pub link_lost_bit_errors: u64,
    /// Frames the link delivered intact that a decompressor refused for lack of, or damage to,
    /// its context ([`DropReason::is_context_damage`]).
    pub context_damage_lost: u64,
    /// Frames the link delivered intact that a decompressor refused for another reason.
    pub other_refused: u64,
    /// Delivered packets that differ from the original.
    pub incorrect_delivered: u64,
    /// Of `incorrect_delivered`, those whose TCP/UDP checksum still verifies (or that carry
    /// none), which the receiver would not catch.
    pub incorrect_undetected: u64,
    /// Nanoseconds of compression per packet offered, in this one run (not serialized: a
    /// single run's time swings with the machine's load; `--timing` reports the median of
    /// several, see `crate::timing`).
    #[serde(skip)]
    pub compress_ns_per_packet: f64,
    /// Nanoseconds of decompression per frame handed to a decompressor, in this one run (not
    /// serialized, likewise).
    #[serde(skip)]
    pub decompress_ns_per_packet: f64,
    /// Packet records in the capture file.
    pub records: u64,
    /// Records skipped because they carry no IP packet.
    pub non_ip_records: u64,
    /// IP records cut short by the capture's snaplen (sent as they are).
    pub truncated_records: u64,
    /// Packets removed before the compressor (`--loss-before`); not counted in `packets`.
    pub removed_before: u64,
    /// Packets held back before the compressor (`--reorder-before`).
    pub reordered_before: u64,
    /// Frames sent, by packet kind.
    pub frames_by_kind: BTreeMap<String, u64>,
    /// Intact frames the decompressors refused, by reason.
    pub drops_by_reason: BTreeMap<String, u64>,
    /// How long flows stayed broken (see `taroc_sim::outage`), in capture-timestamp seconds
    /// and in packets: `outages`, `unended_outages`, `longest_outage_packets`,
    /// `longest_outage_s`, `longest_outage_unended`. A wrong delivery counts as a refusal.
    #[serde(flatten)]
    pub outage: OutageStats,
    /// The options of the run.
    pub options: Options,
}

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

/// The time one clock read costs, measured: subtracted from every timed codec call.
fn clock_overhead() -> Duration {
    const READS: u32 = 2000;
    let started = Instant::now();
    let mut last = started;
    for _ in 0..READS {
        last = std::hint::black_box(Instant::now());
    }
    last.duration_since(started) / READS
}

/// Runs one scheme variant over a prepared capture. Fails only if the options are invalid.
pub fn run_scheme(
    capture: &Capture,
    prepared: &Prepared,
    variant: &Variant,
    options: &Options,
) -> Result<SchemeResult, String> {
    run_scheme_observed(capture, prepared, variant, options, &mut ())
}

/// [`run_scheme`], telling `observer` of every frame and of every packet's fate.
pub fn run_scheme_observed(
    capture: &Capture,
    prepared: &Prepared,
    variant: &Variant,
    options: &Options,
    observer: &mut dyn Observer,
) -> Result<SchemeResult, String> {
    let loss = options.loss_model()?;
    let mut result = SchemeResult {
        capture: capture.name.clone(),
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
        records: capture.records,
        non_ip_records: capture.non_ip_records,
        truncated_records: capture.truncated_records,
        removed_before: prepared.directions.iter().map(|d| d.removed).sum(),
        reordered_before: prepared.directions.iter().map(|d| d.reordered).sum(),
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
    let mut ends = [0, 1].map(|d| End {
        compressor: variant.compressor(),
        decompressor: variant.decompressor(),
        link: Link::new(options.seed, d, loss.clone(), options.ber),
        feedback_link: Link::new(options.seed, d + 2, loss.clone(), options.ber),
        pending: Vec::new(),
        now: Duration::ZERO,
    });
    let overhead = clock_overhead();
    let mut compress_time = Duration::ZERO;
    let mut decompress_time = Duration::ZERO;
    let mut decompressed = 0u64;
    let mut frame = Vec::with_capacity(2048);
    let mut rebuilt = Vec::with_capacity(2048);
    let mut feedback = Vec::new();
    let mut outages = OutageTracker::new();

    for (sent, &(d, position)) in prepared.schedule.iter().enumerate() {
        if options.reset_at == Some(sent as u64) {
            // A restarted peer: fresh decompressors, from the time of the last packet.
            for end in &mut ends {
                end.decompressor = variant.decompressor();
            }
            outages.reset(ends[0].now.max(ends[1].now));
        }
        let d = usize::from(d);
        let index = prepared.directions[d].order[position as usize];
        let packet = capture.packets[index].as_slice();
        let [forward, reverse] = &mut ends;
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
            *result
                .frames_by_kind
                .entry(FrameKind::ContextState.name().to_string())
                .or_default() += 1;
            let fate = end.feedback_link.send(8 * on_link as u64);
            observer.feedback(d, end.now, &message, fate);
            match fate {
                Fate::Delivered => other.compressor.handle_feedback(&message),
                Fate::Lost | Fate::BitError => result.feedback_lost += 1,
            }
        }

        // 2. Compress.
        let released = prepared.directions[d].released_at[position as usize];
        if let Some(&time) = capture.times.get(released) {
            end.now = end.now.max(time);
        }
        end.compressor.set_time(end.now);
        let started = Instant::now();
        let kind = end.compressor.compress(packet, &mut frame);
        compress_time += started.elapsed().saturating_sub(overhead);

        // 3. Count the bytes and send the frame over the link.
        let payload = prepared.payload[index];
        let on_link = 1 + frame.len();
        result.packets += 1;
        result.original_header_bytes += (packet.len() - payload) as u64;
        result.link_header_bytes += on_link as i64 - payload as i64;
        result.link_bytes += on_link as u64;
        *result
            .frames_by_kind
            .entry(kind.name().to_string())
            .or_default() += 1;
        let flow = (d, FlowId::of(packet));
        observer.frame(d, end.now, kind, &frame);
        let sent = Sent {
            index,
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
                observer.packet(&sent, Outcome::Lost(Fate::Lost));
                result.link_lost += 1;
                outages.frame(flow, end.now, FrameFate::Lost);
                continue;
            }
            Fate::BitError => {
                // The frame arrived damaged: the framer's CRC check tells the decompressor.
                observer.packet(&sent, Outcome::Lost(Fate::BitError));
                result.link_lost += 1;
                result.link_lost_bit_errors += 1;
                end.decompressor.link_error();
                outages.frame(flow, end.now, FrameFate::Lost);
                continue;
            }
        }

        // 4. Decompress what arrived intact; the link carries the kind as one byte.
        let started = Instant::now();
        end.decompressor.set_time(end.now);
        let outcome = match FrameKind::from_byte(kind.to_byte()) {
            Some(kind) => end.decompressor.decompress(kind, &frame, &mut rebuilt),
            None => Err(DropReason::UnknownKind),
        };
        decompress_time += started.elapsed().saturating_sub(overhead);
        decompressed += 1;
        while end.decompressor.take_feedback(&mut feedback) {
            other.pending.push(feedback.clone());
        }

        // 5. The oracle.
        match outcome {
            Ok(()) => {
                observer.packet(&sent, Outcome::Delivered(&rebuilt));
                result.delivered += 1;
                if rebuilt != packet {
                    result.incorrect_delivered += 1;
                    if !transport_checksum_rejects(&rebuilt) {
                        result.incorrect_undetected += 1;
                    }
                    outages.frame(flow, end.now, FrameFate::Damaged);
                } else {
                    outages.frame(flow, end.now, FrameFate::Delivered);
                }
            }
            Err(reason) => {
                observer.packet(&sent, Outcome::Refused(reason));
                if reason.is_context_damage() {
                    result.context_damage_lost += 1;
                    outages.frame(flow, end.now, FrameFate::Damaged);
                } else {
                    result.other_refused += 1;
                    outages.frame(flow, end.now, FrameFate::Lost);
                }
                *result
                    .drops_by_reason
                    .entry(reason.name().to_string())
                    .or_default() += 1;
            }
        }
    }

    result.outage = outages.stats(ends[0].now.max(ends[1].now));
    if result.packets > 0 {
        result.header_bytes_per_packet = result.link_header_bytes as f64 / result.packets as f64;
        result.compress_ns_per_packet = compress_time.as_nanos() as f64 / result.packets as f64;
    }
    if decompressed > 0 {
        result.decompress_ns_per_packet = decompress_time.as_nanos() as f64 / decompressed as f64;
    }
    if result.link_header_bytes > 0 {
        result.compression_ratio =
            Some(result.original_header_bytes as f64 / result.link_header_bytes as f64);
    }
    Ok(result)
}

/// Whether the receiver's TCP or UDP checksum would reject `packet` (false when it has none to
/// check: other protocols, fragments, unparsable headers).
fn transport_checksum_rejects(packet: &[u8]) -> bool {
    let Ok(ip) = IpInfo::parse(packet) else {
        return false;
    };
    if ip.fragment || !(ip.protocol == 6 || ip.protocol == 17) {
        return false;
    }
    match packet.get(ip.transport_offset..ip.declared_len.min(packet.len())) {
        Some(segment) => !transport_verifies(ip.src, ip.dst, ip.protocol, segment),
        None => true,
    }
}

/// Runs every scheme variant of `variants` over `capture`, calling `progress` after each one.
pub fn evaluate(
    capture: &Capture,
    variants: &[Variant],
    options: &Options,
    progress: impl FnMut(usize, &Variant),
) -> Result<Vec<SchemeResult>, String> {
    evaluate_observed(capture, variants, options, progress, &mut ())
}

/// [`evaluate`], telling `observer` of every run, frame and packet fate.
pub fn evaluate_observed(
    capture: &Capture,
    variants: &[Variant],
    options: &Options,
    mut progress: impl FnMut(usize, &Variant),
    observer: &mut dyn Observer,
) -> Result<Vec<SchemeResult>, String> {
    options.loss_model()?;
    let prepared = prepare(capture, options);
    let mut results = Vec::with_capacity(variants.len());
    for (done, variant) in variants.iter().enumerate() {
        observer.begin(variant)?;
        results.push(run_scheme_observed(
            capture, &prepared, variant, options, observer,
        )?);
        observer.end()?;
        progress(done + 1, variant);
    }
    Ok(results)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use taroc_core::Scheme;

    /// An IPv4/TCP packet from `src` to `dst` with `payload` bytes of payload.
    pub(crate) fn packet(src: u8, dst: u8, seq: u32, payload: usize) -> Vec<u8> {
        let total = 40 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, src]);
        p[16..20].copy_from_slice(&[10, 0, 0, dst]);
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 0x50;
        p
    }

    pub(crate) fn capture() -> Capture {
        let mut packets = Vec::new();
        for i in 0..200u32 {
            packets.push(packet(1, 2, i * 100, 100));
            packets.push(packet(2, 1, i, 0));
        }
        Capture {
            name: "test".to_string(),
            records: packets.len() as u64,
            packets,
            ..Capture::default()
        }
    }

    #[test]
    fn clean_link_with_no_compression_counts_bytes() {
        let capture = capture();
        let options = Options::default();
        let results =
            evaluate(&capture, &[Variant::of(Scheme::None)], &options, |_, _| {}).unwrap();
        let r = &results[0];
        assert_eq!(r.packets, 400);
        assert_eq!(r.delivered, 400);
        assert_eq!(r.original_header_bytes, 400 * 40);
        assert_eq!(r.link_header_bytes, 400 * 41);
        assert_eq!(r.header_bytes_per_packet, 41.0);
        assert_eq!(r.link_bytes, 400 * 41 + 200 * 100);
        assert_eq!(r.frames_by_kind["TYPE_IP"], 400);
        assert_eq!(
            (r.link_lost, r.context_damage_lost, r.incorrect_delivered),
            (0, 0, 0)
        );
    }

    #[test]
    fn impairments_are_counted_and_reproducible() {
        let capture = capture();
        let options = Options {
            loss: 0.1,
            ber: 1e-4,
            loss_before: 0.05,
            reorder_before: 0.1,
            seed: 42,
            ..Options::default()
        };
        let run = || evaluate(&capture, &[Variant::of(Scheme::None)], &options, |_, _| {}).unwrap();
        let r = run().remove(0);
        assert_eq!(r.packets + r.removed_before, 400);
        assert!(r.removed_before > 0 && r.reordered_before > 0);
        assert!(r.link_lost_bit_errors > 0 && r.link_lost > r.link_lost_bit_errors);
        assert_eq!(
            r.delivered + r.link_lost + r.context_damage_lost + r.other_refused,
            r.packets
        );
        assert_eq!(r.incorrect_delivered, 0);
        let again = run().remove(0);
        assert_eq!(
            (r.delivered, r.link_lost, r.link_header_bytes),
            (again.delivered, again.link_lost, again.link_header_bytes)
        );
    }

    #[test]
    fn a_decompressor_reset_breaks_flows_until_the_context_is_rebuilt() {
        let capture =
            crate::capture::parse(crate::BUILTIN_CAPTURE_NAME, crate::BUILTIN_CAPTURE).unwrap();
        let options = Options {
            reset_at: Some(100),
            ..Options::default()
        };
        let run = |name: &str, options: &Options| {
            let variant = Variant::by_name(name).unwrap();
            evaluate(&capture, &[variant], options, |_, _| {})
                .unwrap()
                .remove(0)
        };
        // Nothing to lose without a context; nothing breaks on a clean link without a reset.
        assert_eq!(run("none", &options).outage, OutageStats::default());
        assert_eq!(
            run("vj", &Options::default()).outage,
            OutageStats::default()
        );
        // VJ's fresh decompressors refuse the first COMPRESSED_TCP of each direction; the next
        // packet goes UNCOMPRESSED_TCP (its timestamp option changed) and repairs it.
        let vj = run("vj", &options);
        assert_eq!(vj.context_damage_lost, 2, "{vj:?}");
        assert_eq!(vj.outage.outages, 2, "{vj:?}");
        assert_eq!(vj.outage.unended_outages, 0);
        assert_eq!(vj.outage.longest_outage_packets, 1);
        assert!(vj.outage.longest_outage_s > 0.0 && vj.outage.longest_outage_s < 0.1);
        // The draft's TAROC has no way to rebuild a context in a replay (no TCP to time out):
        // its flows stay broken to the end of the capture.
        let taroc = run("taroc", &options);
        assert!(taroc.outage.unended_outages >= 1, "{taroc:?}");
        assert!(taroc.outage.longest_outage_unended);
        assert!(taroc.outage.longest_outage_packets * 2 >= taroc.context_damage_lost);
        let end = capture.times.last().unwrap().as_secs_f64();
        let reset = capture.times[99].as_secs_f64();
        assert!(taroc.outage.longest_outage_s <= end - reset + 1e-9);
        let json: serde_json::Value =
            serde_json::from_str(&crate::report::json_line(&taroc, None)).unwrap();
        assert_eq!(
            json["longest_outage_packets"],
            taroc.outage.longest_outage_packets
        );
        assert_eq!(json["longest_outage_unended"], true);
        assert_eq!(json["options"]["reset_at"], 100);
    }

    #[test]
    fn bad_options_are_refused() {
        let options = Options {
            loss: 1.5,
            ..Options::default()
        };
        assert!(evaluate(
            &capture(),
            &[Variant::of(Scheme::None)],
            &options,
            |_, _| {}
        )
        .is_err());
    }

    #[test]
    fn checksum_rejection_of_wrong_packets() {
        let mut p = packet(1, 2, 7, 10);
        // Set the checksum so that the segment verifies.
        let sum = taroc_wire::checksum::Sum::new()
            .add_pseudo_header(
                "10.0.0.1".parse().unwrap(),
                "10.0.0.2".parse().unwrap(),
                6,
                30,
            )
            .add_bytes(&p[20..])
            .checksum();
        p[36..38].copy_from_slice(&sum.to_be_bytes());
        assert!(!transport_checksum_rejects(&p));
        p[45] ^= 1;
        assert!(transport_checksum_rejects(&p));
    }
}
