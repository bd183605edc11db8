//! Reports: an aligned table per capture for people, one JSON object per line for programs.

use std::fmt::Write as _;

use crate::capture::link_type_name;
use crate::eval::{SchemeResult, Way};
use crate::timing::{Spread, Timing};

/// One JSON object (a single line, no newline) for `result`, with its `timing` (median and
/// range over the runs of `--timing`) if measured.
pub fn json_line(result: &SchemeResult, timing: Option<&Timing>) -> String {
    let mut value = serde_json::to_value(result).expect("a SchemeResult always serializes");
    if let (Some(timing), Some(object)) = (timing, value.as_object_mut()) {
        object.insert(
            "timing".to_string(),
            serde_json::to_value(timing).expect("a Timing always serializes"),
        );
    }
    value.to_string()
}

/// The human-readable report of one capture: a heading, a table with one row per scheme (with
/// the time columns if `timings`, one per result), and notes on what was skipped, truncated,
/// impaired or refused.
pub fn table(results: &[SchemeResult], link_types: &[u32], timings: Option<&[Timing]>) -> String {
    let mut out = String::new();
    let Some(first) = results.first() else {
        return out;
    };
    let _ = writeln!(out, "{}", heading(first, link_types));
    let mut headers = vec![
        "scheme",
        "packets",
        "orig hdr B",
        "link hdr B",
        "hdr B/pkt",
        "ratio",
        "delivered",
        "link lost",
        "ctx damage",
        "other drop",
        "incorrect",
        "undetected",
        "outage pkts",
        "outage s",
    ];
    if timings.is_some() {
        headers.extend(["comp ns/pkt", "decomp ns/pkt"]);
    }
    let rows: Vec<Vec<String>> = results
        .iter()
        .enumerate()
        .map(|(i, r)| row(r, timings.and_then(|t| t.get(i))))
        .collect();
    out.push_str(&align(&headers, &rows));
    let timing_runs = timings.and_then(|t| t.first()).map(|t| t.runs);
    let mut notes = capture_notes(first, timing_runs);
    notes.extend(scheme_notes(results));
    for note in notes {
        let _ = writeln!(out, "  {note}");
    }
    out
}

/// The report's first line: the capture, its records and its link types.
fn heading(first: &SchemeResult, link_types: &[u32]) -> String {
    let links: Vec<String> = link_types
        .iter()
        .map(|&n| format!("{n} ({})", link_type_name(n)))
        .collect();
    format!(
        "{}: {} records, link type {}",
        first.capture,
        first.records,
        if links.is_empty() {
            "-".to_string()
        } else {
            links.join(", ")
        }
    )
}

/// One scheme's row of the table, with its time columns if it was timed.
fn row(r: &SchemeResult, timing: Option<&Timing>) -> Vec<String> {
    let mut row = vec![
        r.scheme.clone(),
        r.packets.to_string(),
        r.original_header_bytes.to_string(),
        r.link_header_bytes.to_string(),
        if r.packets == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", r.header_bytes_per_packet)
        },
        r.compression_ratio
            .map_or("-".to_string(), |ratio| format!("{ratio:.2}")),
        r.delivered.to_string(),
        r.link_lost.to_string(),
        r.context_damage_lost.to_string(),
        r.other_refused.to_string(),
        r.incorrect_delivered.to_string(),
        r.incorrect_undetected.to_string(),
        r.outage.longest_outage_packets.to_string(),
        format!(
            "{:.3}{}",
            r.outage.longest_outage_s,
            if r.outage.longest_outage_unended {
                "+"
            } else {
                ""
            }
        ),
    ];
    if let Some(t) = timing {
        let decompressed = r.delivered + r.context_damage_lost + r.other_refused;
        row.push(per_packet(r.packets, &t.compress_ns_per_packet));
        row.push(per_packet(decompressed, &t.decompress_ns_per_packet));
    }
    row
}

/// The notes every scheme shares: how the times were taken (`timing_runs`), what of the
/// capture was skipped or truncated, and how the packets and the link were impaired.
fn capture_notes(first: &SchemeResult, timing_runs: Option<u32>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(runs) = timing_runs {
        notes.push(format!(
            "ns/pkt: median (lowest-highest) of {runs} runs of each scheme (--timing)"
        ));
    }
    if first.non_ip_records > 0 {
        notes.push(format!("{} non-IP records skipped", first.non_ip_records));
    }
    if first.truncated_records > 0 {
        notes.push(format!(
            "{} records truncated by snaplen (sent as they are; they cannot pass a TCP checksum)",
            first.truncated_records
        ));
    }
    let o = &first.options;
    if o.loss_before > 0.0 || o.reorder_before > 0.0 {
        notes.push(format!(
            "before the compressor: {} packets removed (--loss-before {}), {} held back \
             (--reorder-before {})",
            first.removed_before, o.loss_before, first.reordered_before, o.reorder_before
        ));
    }
    if o.reorder > 0.0 {
        notes.push(format!(
            "on the link: {} frames held back (--reorder {})",
            first.reordered_on_link, o.reorder
        ));
    }
    if let Some(way) = o.one_way {
        notes.push(format!(
            "one way: only the {} direction crosses the link (--one-way); {} packets of the \
             other went another way",
            if way == Way::Forward {
                "forward"
            } else {
                "reverse"
            },
            first.off_link
        ));
    }
    if let Some(n) = o.reset_at {
        notes.push(format!(
            "both decompressors reset after {n} packets (--reset-at); outage s with + : still \
             broken at the end of the capture"
        ));
    }
    if o.loss > 0.0 || o.ber > 0.0 {
        let burst = o
            .burst
            .map_or(String::new(), |b| format!(" in bursts of mean {b} frames"));
        notes.push(format!(
            "link: loss {}{burst}, BER {}; seed {}",
            o.loss, o.ber, o.seed
        ));
    }
    notes
}

/// The notes on what each scheme did: its feedback, forgotten flows, frames by kind, refusals
/// by reason and incorrect deliveries.
fn scheme_notes(results: &[SchemeResult]) -> Vec<String> {
    let mut notes = Vec::new();
    for r in results.iter().filter(|r| r.feedback_frames > 0) {
        notes.push(format!(
            "{}: {} feedback frames sent back ({} bytes, in the link counts; {} lost)",
            r.scheme, r.feedback_frames, r.feedback_bytes, r.feedback_lost
        ));
    }
    let forgotten: Vec<String> = results
        .iter()
        .filter(|r| r.outage.forgotten_flows > 0)
        .map(|r| format!("{} {}", r.scheme, r.outage.forgotten_flows))
        .collect();
    if !forgotten.is_empty() {
        notes.push(format!(
            "outages: more than {} flows at once, so the least recently seen were forgotten \
             ({}; a broken one counts as an unended outage)",
            taroc_sim::outage::MAX_FLOWS,
            forgotten.join(", ")
        ));
    }
    if results.iter().any(|r| r.incorrect_delivered > 0) {
        notes.push(
            "incorrect: delivered packets that differ from the original; undetected: of those, \
             the ones whose TCP/UDP checksum still verifies"
                .to_string(),
        );
    }
    for r in results {
        if r.frames_by_kind
            .iter()
            .any(|(kind, &n)| kind != "TYPE_IP" && n > 0)
        {
            let kinds: Vec<String> = r
                .frames_by_kind
                .iter()
                .filter(|(_, &n)| n > 0)
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            notes.push(format!("{} frames: {}", r.scheme, kinds.join(", ")));
        }
        let drops: Vec<String> = r
            .drops_by_reason
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        if !drops.is_empty() {
            notes.push(format!("{} refused: {}", r.scheme, drops.join(", ")));
        }
        if r.incorrect_delivered > 0 {
            notes.push(format!(
                "{}: {} incorrect deliveries, {} of them not caught by the TCP/UDP checksum",
                r.scheme, r.incorrect_delivered, r.incorrect_undetected
            ));
        }
    }
    notes
}

/// A per-packet time as `median (min-max)`, or `-` when there was no packet to time.
fn per_packet(count: u64, ns: &Spread) -> String {
    if count == 0 {
        "-".to_string()
    } else {
        ns.text()
    }
}

/// Lays out `rows` under `headers`: the first column left-aligned, the others right-aligned.
fn align(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    let header_row: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header_row).chain(rows) {
        let mut line = String::new();
        for (column, (cell, width)) in row.iter().zip(&widths).enumerate() {
            if column == 0 {
                let _ = write!(line, "{cell:<width$}");
            } else {
                let _ = write!(line, "  {cell:>width$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_says_what_was_skipped_and_truncated() {
        let ip = [
            0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
        ];
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x08, 0x00]);
        frame.extend_from_slice(&ip);
        let arp = [[0u8; 12].as_slice(), &[0x08, 0x06], &[0; 28]].concat();
        // Two ARP frames and an IP packet cut short by the snaplen.
        let file = crate::capture::tests::pcap_file(1, &[(&arp, 42), (&arp, 42), (&frame, 100)]);
        let mut reader = crate::capture::CaptureReader::new("t.pcap", &file[..]).unwrap();
        let results = crate::eval::evaluate(
            &mut reader,
            &[taroc_core::Variant::of(taroc_core::Scheme::None)],
            &crate::eval::Options::default(),
            |_| {},
        )
        .unwrap();
        let text = table(&results, &reader.stats().link_types, None);
        assert!(
            text.starts_with("t.pcap: 3 records, link type 1 (ETHERNET)\n"),
            "{text}"
        );
        assert!(text.contains("2 non-IP records skipped"), "{text}");
        assert!(text.contains("1 records truncated by snaplen"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&json_line(&results[0], None)).unwrap();
        assert_eq!(json["truncated_records"], 1);
        assert_eq!(json["scheme"], "none");
        // No time without --timing, in the table or the JSON.
        assert!(!text.contains("ns/pkt"), "{text}");
        assert!(json.get("compress_ns_per_packet").is_none() && json.get("timing").is_none());
        let timing = Timing {
            runs: 5,
            compress_ns_per_packet: Spread::of(&mut [3.0, 1.0, 2.0, 9.0, 2.5]),
            decompress_ns_per_packet: Spread::default(),
        };
        let timed = table(&results, &reader.stats().link_types, Some(&[timing]));
        assert!(
            timed
                .lines()
                .nth(1)
                .unwrap()
                .ends_with("comp ns/pkt  decomp ns/pkt"),
            "{timed}"
        );
        assert!(timed.contains("2.5 (1.0-9.0)"), "{timed}");
        assert!(
            timed.contains("median (lowest-highest) of 5 runs"),
            "{timed}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&json_line(&results[0], Some(&timing))).unwrap();
        assert_eq!(json["timing"]["compress_ns_per_packet"]["median"], 2.5);
        assert_eq!(json["timing"]["runs"], 5);
    }

    #[test]
    fn columns_line_up() {
        let text = align(
            &["scheme", "packets"],
            &[
                vec!["none".to_string(), "5".to_string()],
                vec!["taroc".to_string(), "12345678".to_string()],
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "scheme   packets");
        assert_eq!(lines[1], "none           5");
        assert_eq!(lines[2], "taroc   12345678");
    }
}
