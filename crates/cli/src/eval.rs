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
//! errors is signalled to its decompressor ([`Decompressor::link_error`](taroc_core::Decompressor::link_error), the CRC error a framer
//! reports); a frame lost outright is not.
//!
//! Compression and decompression times are measured per call with [`Instant`](std::time::Instant),
//! minus the cost of one clock read measured at the start of the run.
//!
//! Every scheme runs in lockstep over one pass of the capture ([`evaluate`]): the private `run`
//! module holds one scheme's codecs, links and counts; an [`Observer`] is told of every frame and
//! packet fate ([`output`] writes them to files).

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use serde::Serialize;
use taroc_core::Variant;
use taroc_sim::outage::OutageStats;
use taroc_wire::ip::transport_checksum_ok;

use crate::capture::{CaptureReader, Packet};
use crate::impair::LossModel;

mod held;
mod observe;
pub mod output;
mod prepare;
mod run;
pub use observe::{Observer, Outcome, PacketFate, Sent};
pub use prepare::{direction, one_way_pcap, payload_present, Released, Schedule};
use run::{clock_overhead, Run};

/// One direction of the link ([`direction`]): forward, from the lower address to the higher,
/// or reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Way {
    /// From the lower address to the higher (direction 0).
    Forward,
    /// From the higher address to the lower (direction 1).
    Reverse,
}

impl Way {
    /// The direction's number, as [`direction`] gives it.
    pub fn index(self) -> usize {
        match self {
            Way::Forward => 0,
            Way::Reverse => 1,
        }
    }
}

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
    /// Probability that a frame is held back on the link, between compressor and
    /// decompressor.
    pub reorder: f64,
    /// Probability that a packet is removed before the compressor.
    pub loss_before: f64,
    /// The seed every random stream derives from.
    pub seed: u64,
    /// Replace both decompressors by fresh ones after this many packets (both directions
    /// counted), as when the peer restarts.
    pub reset_at: Option<u64>,
    /// Only this direction's packets cross the link: a link used one way only, whose other
    /// direction goes another way (neither compressed nor counted in `packets`). `None`: both
    /// directions cross the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_way: Option<Way>,
}

impl Options {
    /// Checks the options and returns the link's loss model.
    pub fn loss_model(&self) -> Result<LossModel, String> {
        for (name, p) in [
            ("--ber", self.ber),
            ("--loss", self.loss),
            ("--reorder-before", self.reorder_before),
            ("--reorder", self.reorder),
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
    /// Packets the decompressors delivered (correct or not), late ones included.
    pub delivered: u64,
    /// Of `delivered`, packets held for confirmation (or refused for context damage and kept) and
    /// delivered late, with a later frame of their context
    /// ([`taroc_core::Decompressor::take_late`]); their frames are not counted in
    /// `context_damage_lost`.
    pub delivered_late: u64,
    /// Frames the link lost (random loss and bit errors).
    pub link_lost: u64,
    /// Of `link_lost`, the frames discarded for bit errors.
    pub link_lost_bit_errors: u64,
    /// Frames the link delivered intact that a decompressor refused for lack of, or damage to,
    /// its context ([`DropReason::is_context_damage`](taroc_core::DropReason::is_context_damage)).
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
    /// Packets of the direction that does not cross the link (`--one-way`); not counted in
    /// `packets` (not serialized when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub off_link: u64,
    /// Frames held back on the link (`--reorder`), both directions.
    pub reordered_on_link: u64,
    /// Frames sent, by packet kind.
    pub frames_by_kind: BTreeMap<String, u64>,
    /// Intact frames the decompressors refused, by reason.
    pub drops_by_reason: BTreeMap<String, u64>,
    /// How long flows stayed broken (see `taroc_sim::outage`), in capture-timestamp seconds
    /// and in packets: `outages`, `unended_outages`, `longest_outage_packets`,
    /// `longest_outage_s`, `longest_outage_unended`, the most intact frames of a flow refused
    /// in a row and for how long (`longest_refused_run`, `longest_refused_run_s`), and
    /// `forgotten_flows` when the capture
    /// had more flows at once than the tracking follows (only then serialized). A wrong
    /// delivery counts as a refusal.
    #[serde(flatten)]
    pub outage: OutageStats,
    /// The options of the run.
    pub options: Options,
}

/// Whether the receiver's TCP or UDP checksum would reject `packet` (false when it has none to
/// check: other protocols, fragments, IPv4 UDP without checksum, unparsable headers).
fn transport_checksum_rejects(packet: &[u8]) -> bool {
    transport_checksum_ok(packet) == Some(false)
}

/// Runs every scheme variant of `variants` over the capture `reader` reads, in one pass: each
/// packet goes through every scheme before the next one is read, so memory does not grow with
/// the capture. `progress` is called after each packet read. Fails if the options are invalid
/// or the capture cannot be read (see [`CaptureReader::warning`] for a capture cut short,
/// which is not a failure).
pub fn evaluate<R: Read>(
    reader: &mut CaptureReader<R>,
    variants: &[Variant],
    options: &Options,
    progress: impl FnMut(&CaptureReader<R>),
) -> Result<Vec<SchemeResult>, String> {
    evaluate_observed(reader, variants, options, progress, &mut ())
}

/// [`evaluate`], telling `observer` of every frame and packet fate of every scheme (the
/// scheme's position in `variants` names it), then [`Observer::finish`], whose failure fails
/// the evaluation.
pub fn evaluate_observed<R: Read>(
    reader: &mut CaptureReader<R>,
    variants: &[Variant],
    options: &Options,
    mut progress: impl FnMut(&CaptureReader<R>),
    observer: &mut dyn Observer,
) -> Result<Vec<SchemeResult>, String> {
    let loss = options
        .loss_model()
        .map_err(|problem| format!("{}: {problem}", reader.name()))?;
    let overhead = clock_overhead();
    let mut runs: Vec<Run> = variants
        .iter()
        .enumerate()
        .map(|(i, variant)| Run::new(reader.name(), i, variant, options, &loss, overhead))
        .collect();
    let mut schedule = Schedule::new(options);
    let mut released = Vec::new();
    let mut sent = 0u64;
    let mut offer = |released: &mut Vec<Released>, time: Option<Duration>| {
        for packet in released.drain(..) {
            let payload = payload_present(&packet.packet);
            for run in &mut runs {
                run.step(sent, &packet, payload, time, observer);
            }
            sent += 1;
        }
    };
    loop {
        let packet = reader.next_packet().map_err(|error| error.to_string())?;
        let Some(Packet { data, time }) = packet else {
            break;
        };
        schedule.arrive(data, &mut released);
        offer(&mut released, Some(time));
        progress(reader);
    }
    schedule.finish(&mut released);
    offer(&mut released, None);
    for run in &mut runs {
        run.drain(observer);
    }
    observer.finish()?;
    Ok(runs
        .into_iter()
        .map(|run| run.finish(reader.stats(), &schedule))
        .collect())
}

/// Whether `n` is 0 (serde's `skip_serializing_if` for counts that are usually 0).
fn is_zero(n: &u64) -> bool {
    *n == 0
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

    /// A raw-IP pcap file of 400 packets: 200 of 100 bytes of payload one way, each answered by
    /// an empty one the other way.
    pub(crate) fn capture() -> Vec<u8> {
        let mut packets = Vec::new();
        for i in 0..200u32 {
            packets.push(packet(1, 2, i * 100, 100));
            packets.push(packet(2, 1, i, 0));
        }
        let records: Vec<(&[u8], u32)> = packets.iter().map(|p| (&p[..], p.len() as u32)).collect();
        crate::capture::tests::pcap_file(101, &records)
    }

    /// [`evaluate`] on the capture file `file`.
    pub(crate) fn evaluate_file(
        file: &[u8],
        variants: &[Variant],
        options: &Options,
    ) -> Result<Vec<SchemeResult>, String> {
        let mut reader = CaptureReader::new("test", file).map_err(|e| e.to_string())?;
        evaluate(&mut reader, variants, options, |_| {})
    }

    #[test]
    fn clean_link_with_no_compression_counts_bytes() {
        let capture = capture();
        let options = Options::default();
        let results = evaluate_file(&capture, &[Variant::of(Scheme::None)], &options).unwrap();
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
    fn one_way_runs_one_direction_as_a_capture_of_it_alone_does() {
        let file = capture();
        let plus_u = Variant::by_name("taroc-plus-u-lossy").unwrap();
        let options = Options {
            loss: 0.2,
            burst: Some(4.0),
            seed: 7,
            one_way: Some(Way::Reverse),
            ..Options::default()
        };
        let r = evaluate_file(&file, std::slice::from_ref(&plus_u), &options).unwrap();
        assert_eq!((r[0].packets, r[0].off_link), (200, 200));
        let alone = crate::capture::parse("test", &file)
            .map(|c| one_way_pcap(&c, Way::Reverse))
            .unwrap();
        let both_ways = Options {
            one_way: None,
            ..options
        };
        let a = evaluate_file(&alone, &[plus_u], &both_ways).unwrap();
        assert_eq!(a[0].off_link, 0);
        let figures = |r: &SchemeResult| {
            (
                r.packets,
                r.link_header_bytes,
                r.link_lost,
                r.context_damage_lost,
                r.delivered,
            )
        };
        assert_eq!(figures(&r[0]), figures(&a[0]));
        assert!(r[0].link_lost > 0);
    }

    #[test]
    fn impairments_are_counted_and_reproducible() {
        let capture = capture();
        let options = Options {
            loss: 0.1,
            ber: 1e-4,
            loss_before: 0.05,
            reorder_before: 0.1,
            reorder: 0.0,
            seed: 42,
            ..Options::default()
        };
        let run = || evaluate_file(&capture, &[Variant::of(Scheme::None)], &options).unwrap();
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
        let file = crate::BUILTIN_CAPTURE;
        let options = Options {
            reset_at: Some(100),
            ..Options::default()
        };
        let run = |name: &str, options: &Options| {
            let variant = Variant::by_name(name).unwrap();
            evaluate_file(file, &[variant], options).unwrap().remove(0)
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
        let error = evaluate_file(&capture(), &[Variant::of(Scheme::None)], &options);
        assert!(error.unwrap_err().starts_with("test: "));
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
