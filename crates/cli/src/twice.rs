//! The *twice* analysis of Degermark et al. (their Figure 16): for each TCP segment of a capture,
//! would the decompressor repair its context if that one segment were lost?
//!
//! The analysis runs the real codecs. Per link direction, the compressor compresses every
//! packet once; the decompressor then decompresses the frames in order. Before frame `i`, a copy
//! of the decompressor is made, frame `i` is withheld from the copy (the loss), and the copy is
//! fed the frames after it up to and including `j`, the next segment of the same TCP flow (other
//! flows' frames in between are decompressed as usual). The loss of `i` counts as *repaired* if
//! the copy delivers segment `j` exactly as it was captured: after that its context is the
//! compressor's again. The last segment of each flow has no `j` and is not counted.
//!
//! A flow (one direction of a TCP connection) is a *data stream* if more than half of its
//! segments carry payload, an *ACK stream* otherwise, as the paper lists them. The paper's
//! traces were FTP downloads over the 1997 Internet; ours are whatever the capture holds, so the
//! comparison is of kind, not of number.

use std::collections::HashMap;
use std::net::IpAddr;

use serde::Serialize;
use taroc_core::{Compressor, Decompressor, FrameKind, Scheme, Variant};
use taroc_wire::ip::IpInfo;
use taroc_wire::summary::summarize;

use crate::capture::Capture;
use crate::eval::direction;

/// The paper's Figure 16: success rates (%) of the twice algorithm, per trace, for the data and
/// the ACK streams.
pub const PAPER_FIGURE_16: [(&str, f64, f64); 4] = [
    ("Long", 82.8, 45.4),
    ("Medium", 98.6, 97.8),
    ("Short", 99.3, 39.1),
    ("LAN", 66.3, 20.1),
];

/// A repair method the analysis measures.
#[derive(Debug, Clone)]
pub struct Method {
    /// Its name in reports.
    pub name: &'static str,
    /// The scheme and settings that implement it.
    pub variant: Variant,
}

/// The methods measured by default: IPHC's twice as the paper ran it, twice with the paper's
/// suggested extension (multiples of the segment size), and, for contrast, VJ (no repair: a
/// loss leaves a wrong context until the next uncompressed packet) and TAROC (W-LSB, robust by
/// design).
pub fn default_methods() -> Vec<Method> {
    let iphc = |multiples: bool| {
        let mut variant = Variant::of(Scheme::Iphc);
        variant.config.iphc.header_requests = false;
        variant.config.iphc.twice = true;
        variant.config.iphc.twice_segment_multiples = multiples;
        variant
    };
    vec![
        Method {
            name: "twice",
            variant: iphc(false),
        },
        Method {
            name: "twice+k*mss",
            variant: iphc(true),
        },
        Method {
            name: "vj",
            variant: Variant::of(Scheme::Vj),
        },
        Method {
            name: "taroc",
            variant: Variant::of(Scheme::Taroc),
        },
    ]
}

/// Data or ACK stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKind {
    /// More than half of the flow's segments carry payload.
    Data,
    /// The rest.
    Ack,
}

impl StreamKind {
    /// Both kinds, in report order.
    pub const ALL: [StreamKind; 2] = [StreamKind::Data, StreamKind::Ack];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            StreamKind::Data => "data",
            StreamKind::Ack => "ack",
        }
    }
}

/// The result for one method and one stream kind of one capture. One JSON object per line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repair {
    /// The capture's name.
    pub capture: String,
    /// The method's name.
    pub method: String,
    /// Data or ACK streams.
    pub stream: StreamKind,
    /// How many flows of this kind.
    pub flows: u64,
    /// Segments whose loss was tried (every segment with a later one in its flow).
    pub segments: u64,
    /// Of those, the losses after which the next segment of the flow was delivered exactly.
    pub repaired: u64,
    /// Of `segments`, those whose next segment went compressed (a full or uncompressed header
    /// repairs the context by itself).
    pub next_compressed: u64,
    /// `repaired / segments` in percent (null without segments).
    pub success_percent: Option<f64>,
}

/// One direction of a TCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FlowKey {
    src: IpAddr,
    dst: IpAddr,
    ports: [u8; 4],
}

/// The flow of an unfragmented TCP packet and whether it carries payload.
fn tcp_flow(packet: &[u8]) -> Option<(FlowKey, bool)> {
    let ip = IpInfo::parse(packet).ok()?;
    if ip.protocol != 6 || ip.fragment {
        return None;
    }
    let ports = packet.get(ip.transport_offset..ip.transport_offset + 4)?;
    let payload = summarize(packet).is_some_and(|s| s.payload_len > 0);
    Some((
        FlowKey {
            src: ip.src,
            dst: ip.dst,
            ports: ports.try_into().ok()?,
        },
        payload,
    ))
}

/// Runs the analysis of `capture` for every method.
pub fn analyse(capture: &Capture, methods: &[Method]) -> Vec<Repair> {
    // Flows and their kinds.
    let flows: Vec<Option<(FlowKey, bool)>> = capture.packets.iter().map(|p| tcp_flow(p)).collect();
    let mut tally: HashMap<FlowKey, (u64, u64)> = HashMap::new();
    for (key, payload) in flows.iter().flatten() {
        let entry = tally.entry(*key).or_default();
        entry.0 += 1;
        entry.1 += u64::from(*payload);
    }
    let kind_of = |key: &FlowKey| {
        let (segments, with_payload) = tally[key];
        if 2 * with_payload > segments {
            StreamKind::Data
        } else {
            StreamKind::Ack
        }
    };
    let mut flow_counts: HashMap<StreamKind, u64> = HashMap::new();
    for key in tally.keys() {
        *flow_counts.entry(kind_of(key)).or_default() += 1;
    }

    // Per direction, the packets in order and, for each, the position of the next one of its
    // flow.
    let mut directions: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (index, packet) in capture.packets.iter().enumerate() {
        directions[direction(packet)].push(index);
    }
    let next_of_flow: [Vec<Option<usize>>; 2] = [0, 1].map(|d| {
        let order = &directions[d];
        let mut next = vec![None; order.len()];
        let mut last: HashMap<FlowKey, usize> = HashMap::new();
        for (position, &index) in order.iter().enumerate().rev() {
            if let Some((key, _)) = flows[index] {
                next[position] = last.insert(key, position);
            }
        }
        next
    });

    let mut results = Vec::new();
    for method in methods {
        // Per stream kind: segments tried, repaired, next one compressed.
        let mut counts: HashMap<StreamKind, (u64, u64, u64)> = HashMap::new();
        for d in 0..2 {
            let order = &directions[d];
            let mut compressor = method.variant.compressor();
            let frames: Vec<(FrameKind, Vec<u8>)> = order
                .iter()
                .map(|&index| {
                    let mut frame = Vec::new();
                    let kind = compressor.compress(&capture.packets[index], &mut frame);
                    (kind, frame)
                })
                .collect();
            let mut decompressor = method.variant.decompressor();
            let mut out = Vec::new();
            for (position, &index) in order.iter().enumerate() {
                if let (Some((key, _)), Some(next)) = (flows[index], next_of_flow[d][position]) {
                    let mut trial = decompressor.clone();
                    let mut outcome = Err(taroc_core::DropReason::NoContext);
                    for (kind, frame) in &frames[position + 1..=next] {
                        outcome = trial.decompress(*kind, frame, &mut out);
                    }
                    let repaired = outcome.is_ok() && out == capture.packets[order[next]];
                    let compressed = !matches!(
                        frames[next].0,
                        FrameKind::Ip | FrameKind::UncompressedTcp | FrameKind::FullHeader
                    );
                    let entry = counts.entry(kind_of(&key)).or_default();
                    entry.0 += 1;
                    entry.1 += u64::from(repaired);
                    entry.2 += u64::from(compressed);
                }
                let (kind, frame) = &frames[position];
                // Its outcome does not matter here: this is the lossless run.
                let _ = decompressor.decompress(*kind, frame, &mut out);
            }
        }
        for stream in StreamKind::ALL {
            let (segments, repaired, next_compressed) =
                counts.get(&stream).copied().unwrap_or_default();
            results.push(Repair {
                capture: capture.name.clone(),
                method: method.name.to_string(),
                stream,
                flows: flow_counts.get(&stream).copied().unwrap_or_default(),
                segments,
                repaired,
                next_compressed,
                success_percent: (segments > 0).then(|| 100.0 * repaired as f64 / segments as f64),
            });
        }
    }
    results
}

/// The human-readable report of one capture: success rates per method, data and ACK streams,
/// beside the paper's Figure 16.
pub fn table(results: &[Repair]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let Some(first) = results.first() else {
        return out;
    };
    let find = |method: &str, stream: StreamKind| {
        results
            .iter()
            .find(|r| r.method == method && r.stream == stream)
    };
    let data = find(&first.method, StreamKind::Data);
    let ack = find(&first.method, StreamKind::Ack);
    let describe = |r: Option<&Repair>| {
        r.map_or("-".to_string(), |r| {
            format!("{} flows, {} segments", r.flows, r.segments)
        })
    };
    let _ = writeln!(
        out,
        "{}: data streams {}; ACK streams {}",
        first.capture,
        describe(data),
        describe(ack)
    );
    let mut methods: Vec<&str> = Vec::new();
    for r in results {
        if !methods.contains(&r.method.as_str()) {
            methods.push(&r.method);
        }
    }
    let percent = |r: Option<&Repair>| {
        r.and_then(|r| r.success_percent)
            .map_or("-".to_string(), |p| format!("{p:.1}"))
    };
    let compressed = |r: Option<&Repair>| {
        r.filter(|r| r.segments > 0).map_or("-".to_string(), |r| {
            format!(
                "{:.1}",
                100.0 * r.next_compressed as f64 / r.segments as f64
            )
        })
    };
    let width = methods.iter().map(|m| m.len()).max().unwrap_or(0).max(12);
    let _ = writeln!(
        out,
        "{:<width$}  {:>10}  {:>10}  {:>12}  {:>12}",
        "method", "data rep%", "ack rep%", "data comp%", "ack comp%"
    );
    for method in &methods {
        let _ = writeln!(
            out,
            "{method:<width$}  {:>10}  {:>10}  {:>12}  {:>12}",
            percent(find(method, StreamKind::Data)),
            percent(find(method, StreamKind::Ack)),
            compressed(find(method, StreamKind::Data)),
            compressed(find(method, StreamKind::Ack)),
        );
    }
    for (trace, data, ack) in PAPER_FIGURE_16 {
        let label = format!("paper {trace}");
        let _ = writeln!(out, "{label:<width$}  {data:>10.1}  {ack:>10.1}");
    }
    let _ = writeln!(
        out,
        "rep%: losses after which the next segment of the flow was delivered exactly; comp%: \
         losses whose next segment went compressed (the rest are repaired by a full header)"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/TCP segment from host `src` to host `dst`.
    fn segment(src: u8, dst: u8, seq: u32, ack: u32, payload: usize, id: u16) -> Vec<u8> {
        let total = 40 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, src]);
        p[16..20].copy_from_slice(&[10, 0, 0, dst]);
        p[20..22].copy_from_slice(&1000u16.to_be_bytes());
        p[22..24].copy_from_slice(&2000u16.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[28..32].copy_from_slice(&ack.to_be_bytes());
        p[32] = 0x50;
        p[33] = 0x10;
        p[34..36].copy_from_slice(&8192u16.to_be_bytes());
        for (i, byte) in p[40..].iter_mut().enumerate() {
            *byte = (seq as usize + i) as u8;
        }
        let header = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&header.to_be_bytes());
        let sum = taroc_wire::checksum::Sum::new()
            .add_pseudo_header(
                [10, 0, 0, src].into(),
                [10, 0, 0, dst].into(),
                6,
                (total - 20) as u32,
            )
            .add_bytes(&p[20..])
            .checksum();
        p[36..38].copy_from_slice(&sum.to_be_bytes());
        p
    }

    /// A bulk transfer: equal-sized segments one way (IP-ID counting), and back an ACK after
    /// every 1, 2 or 3 segments in a fixed irregular pattern (IP-ID 0, as stacks that set DF
    /// may send) in which every four ACKs in a row include one of a single segment (our IPHC
    /// takes the segment size of an ACK stream as the smallest of its last four ACK deltas).
    fn bulk(segments: u32, mss: usize) -> Capture {
        const PATTERN: [u32; 6] = [2, 1, 2, 2, 1, 3];
        let mut packets = Vec::new();
        let (mut pending, mut turn) = (0, 0);
        for i in 0..segments {
            packets.push(segment(1, 2, 1 + i * mss as u32, 1, mss, i as u16));
            pending += 1;
            if pending == PATTERN[turn % PATTERN.len()] {
                packets.push(segment(2, 1, 1, 1 + (i + 1) * mss as u32, 0, 0));
                pending = 0;
                turn += 1;
            }
        }
        Capture {
            name: "bulk".to_string(),
            packets,
            ..Capture::default()
        }
    }

    #[test]
    fn flows_are_classified_and_counted() {
        let results = analyse(&bulk(200, 100), &default_methods());
        let data = results
            .iter()
            .find(|r| r.method == "twice" && r.stream == StreamKind::Data)
            .unwrap();
        let ack = results
            .iter()
            .find(|r| r.method == "twice" && r.stream == StreamKind::Ack)
            .unwrap();
        // Every segment but each flow's last is tried.
        assert_eq!((data.flows, data.segments), (1, 199));
        // 200 segments in ACKs of 11 per 6 ACKs: 109 ACKs.
        assert_eq!((ack.flows, ack.segments), (1, 108));
    }

    /// The success rate of `method` on `stream`, which the analysis must have measured.
    fn success_percent(results: &[Repair], method: &str, stream: StreamKind) -> f64 {
        results
            .iter()
            .find(|r| r.method == method && r.stream == stream)
            .and_then(|r| r.success_percent)
            .unwrap()
    }

    #[test]
    fn taroc_repairs_every_single_loss_and_vj_none_of_the_compressed_ones() {
        let results = analyse(&bulk(200, 100), &default_methods());
        let rate = |method: &str, stream| success_percent(&results, method, stream);
        // All but the loss of each flow's first packet, which creates the context (its second
        // is already compressed: compression slow-start).
        for r in results.iter().filter(|r| r.method == "taroc") {
            assert_eq!(r.repaired, r.segments - 1, "{r:?}");
        }
        // VJ rebuilds the next segment from a stale context: wrong, so never repaired once it
        // compresses (its first segments go uncompressed and survive a loss).
        assert!(rate("vj", StreamKind::Data) < 10.0);
    }

    #[test]
    fn twice_repairs_equal_increments_and_multiples_repair_more() {
        let results = analyse(&bulk(200, 100), &default_methods());
        let rate = |method: &str, stream| success_percent(&results, method, stream);
        // Equal segments, equal deltas: twice repairs (almost) every loss of the data stream.
        assert!(rate("twice", StreamKind::Data) > 95.0);
        // ACKs of 1, 2 or 3 segments: twice repairs a loss only between equal ACKs; trying
        // multiples of the segment size repairs the others too.
        let (plain, multiples) = (
            rate("twice", StreamKind::Ack),
            rate("twice+k*mss", StreamKind::Ack),
        );
        assert!(plain < 60.0 && multiples > 95.0, "{plain} {multiples}");
        let text = table(&results);
        assert!(
            text.starts_with("bulk: data streams 1 flows, 199 segments"),
            "{text}"
        );
        assert!(text.contains("paper Medium"), "{text}");
    }
}
