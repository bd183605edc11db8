//! VJ against two independent C implementations (Linux `slhc` and ppp's `vjcompress`, whose
//! outputs are byte-identical): `shared/captures/local/vj_output_ts_{off,on}_ppp_withdir_s192.pcap`
//! hold their frames for the packets of `vj_input_ts_{off,on}_hdr128.pcap`, one compressor per
//! link direction, 16 slots, connection-number omission on (see that directory's README).
//!
//! The inputs are cut to 128 bytes per record and the outputs to 192 (their original lengths
//! kept); the outputs were made from the uncut captures. So we zero-fill each input packet up to
//! its IP Total Length, and compare, for every packet:
//! - the frame kind (PPP protocol), and the frame length (the output record's original length);
//! - the frame bytes as far as both captures hold real bytes: always the whole header (the IP
//!   and TCP headers of `TYPE_IP` / `UNCOMPRESSED_TCP`, the compressed header of
//!   `COMPRESSED_TCP`) and the data bytes both files kept;
//! - and the other way round, that our decompressor, fed their frames (zero-filled likewise),
//!   rebuilds the input packet: length, headers, and the data bytes both files kept.

mod common;

use std::path::Path;

use taroc_core::vj::format::{kind_of_ppp_protocol, CompressedHeader};
use taroc_core::vj::{VjCompressor, VjConfig, VjDecompressor};
use taroc_core::{Compressor, Decompressor, FrameKind};

/// Bytes before the PPP payload in a LINKTYPE_PPP_WITH_DIR record: direction, FF 03, protocol.
const PPP_WITH_DIR_HEADER: usize = 5;

/// The IP and TCP header length of a TCP/IPv4 packet.
fn tcp_ip_header_len(packet: &[u8]) -> usize {
    let ip = usize::from(packet[0] & 0x0F) * 4;
    ip + usize::from(packet[ip + 12] >> 4) * 4
}

#[derive(Debug, Default)]
struct Tally {
    packets: usize,
    by_kind: [usize; 3],
    /// Frames equal to the reference in kind, length and every byte both captures hold.
    frames_equal: usize,
    /// Reference frames our decompressor turned back into the input packet.
    rebuilt_equal: usize,
    /// Header bytes on the link (kind byte excluded), summed.
    header_bytes: usize,
}

fn compare(name: &str, dir: &Path) -> Tally {
    let input = common::read_pcap(&dir.join(format!("vj_input_{name}_hdr128.pcap")));
    let output = common::read_pcap(&dir.join(format!("vj_output_{name}_ppp_withdir_s192.pcap")));
    assert_eq!(input.link_type, 1, "{name}: input is Ethernet");
    assert_eq!(output.link_type, 204, "{name}: output is PPP_WITH_DIR");
    assert_eq!(input.records.len(), output.records.len(), "{name}: counts");

    let mut compressors = [0, 1].map(|_| VjCompressor::new(VjConfig::default()));
    let mut decompressors = [0, 1].map(|_| VjDecompressor::new(VjConfig::default()));
    let mut tally = Tally::default();
    let mut problems = Vec::new();
    let (mut ours, mut rebuilt) = (Vec::new(), Vec::new());
    for (i, (inp, out)) in input.records.iter().zip(&output.records).enumerate() {
        let n = i + 1; // tshark's frame number
        let (packet, captured) = common::ethernet_ipv4_zero_filled(&inp.data)
            .unwrap_or_else(|| panic!("{name} #{n}: not IPv4 over Ethernet"));
        let record = &out.data;
        assert!(
            record.len() > PPP_WITH_DIR_HEADER,
            "{name} #{n}: short record"
        );
        assert_eq!(
            record[1..3],
            [0xFF, 0x03],
            "{name} #{n}: PPP address/control"
        );
        let direction = usize::from(record[0]);
        assert!(direction < 2, "{name} #{n}: direction {direction}");
        let protocol = u16::from_be_bytes([record[3], record[4]]);
        let kind = kind_of_ppp_protocol(protocol)
            .unwrap_or_else(|| panic!("{name} #{n}: PPP protocol {protocol:#06x}"));
        let theirs = &record[PPP_WITH_DIR_HEADER..];
        let their_len = out.original_len - PPP_WITH_DIR_HEADER;
        let headers = tcp_ip_header_len(&packet);
        tally.packets += 1;

        // Our compressor against theirs.
        let our_kind = compressors[direction].compress(&packet, &mut ours);
        tally.by_kind[usize::from(our_kind.to_byte())] += 1;
        // How many of our frame's bytes come from captured bytes (not our zero fill), and how
        // long its header is.
        let (our_known, header) = match our_kind {
            FrameKind::CompressedTcp => {
                let (_, used) = CompressedHeader::decode(&ours).expect("our own header");
                (used + captured.saturating_sub(headers), used)
            }
            _ => (captured, headers.min(packet.len())),
        };
        tally.header_bytes += ours.len() + headers - packet.len();
        let known = our_known.min(theirs.len());
        if our_kind != kind {
            problems.push(format!(
                "#{n} dir {direction}: we sent {our_kind:?}, they {kind:?}"
            ));
        } else if ours.len() != their_len {
            problems.push(format!(
                "#{n} dir {direction} {kind:?}: length {} against {their_len}",
                ours.len()
            ));
        } else if known < header || ours[..known] != theirs[..known] {
            problems.push(format!(
                "#{n} dir {direction} {kind:?}: bytes differ (compared {known})\n  ours:   {}\n  theirs: {}",
                hex(&ours[..known.min(48)]),
                hex(&theirs[..known.min(48)])
            ));
        } else {
            tally.frames_equal += 1;
        }

        // Our decompressor on their frame, zero-filled as the input packet is.
        let mut frame = theirs.to_vec();
        frame.resize(their_len, 0);
        match decompressors[direction].decompress(kind, &frame, &mut rebuilt) {
            Err(reason) => problems.push(format!(
                "#{n} dir {direction} {kind:?}: our decompressor refused their frame: {reason:?}"
            )),
            Ok(()) => {
                // Data bytes both captures kept: theirs from the frame's data start.
                let their_header = match kind {
                    FrameKind::CompressedTcp => CompressedHeader::decode(&frame).map_or(0, |h| h.1),
                    _ => headers,
                };
                let their_known = headers + theirs.len().saturating_sub(their_header);
                let known = captured.min(their_known).max(headers);
                if rebuilt.len() != packet.len() || rebuilt[..known] != packet[..known] {
                    problems.push(format!(
                        "#{n} dir {direction} {kind:?}: rebuilt packet differs\n  rebuilt: {}\n  input:   {}",
                        hex(&rebuilt[..rebuilt.len().min(60)]),
                        hex(&packet[..packet.len().min(60)])
                    ));
                } else {
                    tally.rebuilt_equal += 1;
                }
            }
        }
    }
    eprintln!(
        "{name}: {} packets; ours: {} TYPE_IP, {} UNCOMPRESSED_TCP, {} COMPRESSED_TCP; {} frames \
         equal to the C implementations', {} of their frames rebuilt exactly; {:.2} header bytes \
         per packet on the link (kind byte excluded)",
        tally.packets,
        tally.by_kind[0],
        tally.by_kind[1],
        tally.by_kind[2],
        tally.frames_equal,
        tally.rebuilt_equal,
        tally.header_bytes as f64 / tally.packets as f64
    );
    assert!(
        problems.is_empty(),
        "{name}: {} problems; the first ones:\n{}",
        problems.len(),
        problems[..problems.len().min(12)].join("\n")
    );
    tally
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn timestamps_off_matches_slhc_byte_for_byte() {
    let Some(dir) = common::local_captures() else {
        return;
    };
    let tally = compare("ts_off", &dir);
    assert_eq!(tally.packets, 2297);
    assert_eq!(tally.frames_equal, tally.packets);
    assert_eq!(tally.rebuilt_equal, tally.packets);
    assert!(tally.by_kind[2] > tally.packets / 2, "mostly compressed");
}

#[test]
fn timestamps_on_matches_slhc_byte_for_byte() {
    let Some(dir) = common::local_captures() else {
        return;
    };
    let tally = compare("ts_on", &dir);
    assert_eq!(tally.packets, 2379);
    assert_eq!(tally.frames_equal, tally.packets);
    assert_eq!(tally.rebuilt_equal, tally.packets);
}
