//! Reading pcap and pcapng captures, and taking the IP packet out of each link-layer frame.
//!
//! [`CaptureReader`] streams a capture one record at a time from a file, standard input (`-`)
//! or memory: every record whose link layer carries IPv4 or IPv6 yields one [`Packet`] holding
//! the bytes from the IP header on, trimmed to the length the IP header announces (so link
//! padding does not reach the codecs). Records that carry something else (ARP, LLDP, …) are
//! skipped and counted ([`CaptureStats`]). A capture cut short in the middle of a record yields
//! its complete records and a warning, as tshark does; a corrupt record or an unsupported link
//! type is an error ([`CaptureError`]), never a panic. [`Capture`] holds a whole capture in
//! memory, for analyses that need to look ahead (`taroc twice`).

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

mod link;
mod reader;
mod timestamps;

pub use link::{link_type_name, LinkType};
pub use reader::{CaptureReader, CaptureStats, Packet};

/// An error reading one capture file: which file, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    /// The file's name as given by the user (or the built-in capture's name).
    pub file: String,
    /// What is wrong, in a few words.
    pub problem: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.problem)
    }
}

impl std::error::Error for CaptureError {}

/// The name reports give standard input when it is read as a capture (`-`).
pub const STDIN_NAME: &str = "stdin";

/// Opens the capture at `path` for streaming; `-` is standard input.
pub fn open(path: &Path) -> Result<CaptureReader<Box<dyn Read>>, CaptureError> {
    if path.as_os_str() == "-" {
        return CaptureReader::new(STDIN_NAME, Box::new(std::io::stdin().lock()));
    }
    let name = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(file) => CaptureReader::new(name, Box::new(file)),
        Err(e) => Err(CaptureError {
            file: name,
            problem: format!("cannot read: {e}"),
        }),
    }
}

/// The IP packets of a whole capture, in capture order, held in memory.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    /// The capture's name in reports (the path as given, `stdin`, or `built-in:…`).
    pub name: String,
    /// Every IP packet, starting at its IPv4 or IPv6 header.
    pub packets: Vec<Vec<u8>>,
    /// Per packet, its capture time since the first record's.
    pub times: Vec<Duration>,
    /// What the records held.
    pub stats: CaptureStats,
    /// Set if the capture was cut short in the middle of a record (see
    /// [`CaptureReader::warning`]).
    pub warning: Option<String>,
}

impl Capture {
    /// Reads every packet `reader` has left.
    pub fn read<R: Read>(mut reader: CaptureReader<R>) -> Result<Capture, CaptureError> {
        let mut capture = Capture {
            name: reader.name().to_string(),
            ..Capture::default()
        };
        while let Some(packet) = reader.next_packet()? {
            capture.packets.push(packet.data.to_vec());
            capture.times.push(packet.time);
        }
        capture.stats = reader.stats().clone();
        capture.warning = reader.warning().map(str::to_string);
        Ok(capture)
    }
}

/// The header of the pcap files the tools write: link type `datalink`, microsecond stamps,
/// native byte order, records up to 256 KiB.
pub fn pcap_header(datalink: pcap_file::DataLink) -> pcap_file::pcap::PcapHeader {
    pcap_file::pcap::PcapHeader {
        snaplen: 262_144,
        datalink,
        ts_resolution: pcap_file::TsResolution::MicroSecond,
        endianness: pcap_file::Endianness::native(),
        ..pcap_file::pcap::PcapHeader::default()
    }
}

/// Reads the whole capture at `path` (`-`: standard input).
pub fn read_file(path: &Path) -> Result<Capture, CaptureError> {
    Capture::read(open(path)?)
}

/// Reads the whole capture in `bytes`, named `name`.
pub fn parse(name: &str, bytes: &[u8]) -> Result<Capture, CaptureError> {
    Capture::read(CaptureReader::new(name, bytes)?)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use link::tests::{ipv4_packet, ipv6_packet};

    /// A little-endian, microsecond pcap file of link type `link_type`; record `i` is stamped
    /// `i` seconds and holds `records[i].0`, of original length `records[i].1`.
    pub(crate) fn pcap_file(link_type: u32, records: &[(&[u8], u32)]) -> Vec<u8> {
        let mut file = Vec::new();
        file.extend_from_slice(&0xA1B2C3D4u32.to_le_bytes());
        file.extend_from_slice(&2u16.to_le_bytes());
        file.extend_from_slice(&4u16.to_le_bytes());
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&link_type.to_le_bytes());
        for (i, (data, orig)) in records.iter().enumerate() {
            file.extend_from_slice(&(i as u32).to_le_bytes());
            file.extend_from_slice(&0u32.to_le_bytes());
            file.extend_from_slice(&(data.len() as u32).to_le_bytes());
            file.extend_from_slice(&orig.to_le_bytes());
            file.extend_from_slice(data);
        }
        file
    }

    #[test]
    fn pcap_files_are_read_and_counted() {
        let ip = ipv4_packet();
        let file = pcap_file(101, &[(&ip, 44), (&[0x00, 1, 2], 3), (&ip[..24], 1500)]);
        let capture = parse("t.pcap", &file).unwrap();
        assert_eq!(capture.stats.records, 3);
        assert_eq!(capture.packets, vec![ip.clone(), ip[..24].to_vec()]);
        // Record i is stamped i seconds; times count from the first record.
        assert_eq!(capture.times, vec![Duration::ZERO, Duration::from_secs(2)]);
        assert_eq!(capture.stats.non_ip_records, 1);
        assert_eq!(capture.stats.truncated_records, 1);
        assert_eq!(capture.stats.link_types, vec![101]);
        assert_eq!(capture.warning, None);
    }

    /// A source that hands over at most 1 to 7 bytes per read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 = self.1 % 7 + 1;
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn short_reads_give_the_same_packets() {
        let (ip, ip6) = (ipv4_packet(), ipv6_packet());
        let pcap = pcap_file(101, &[(&ip, 44), (&ip6, 60), (&[0x00, 1, 2], 3)]);
        let pcapng = pcapng_file(101, &[&ip, &ip6, &[0x00, 1, 2]]);
        for file in [pcap, pcapng] {
            let whole = parse("w", &file).unwrap();
            let trickled = Capture::read(CaptureReader::new("t", Trickle(&file, 0)).unwrap());
            let trickled = trickled.unwrap();
            assert_eq!(trickled.packets, vec![ip.clone(), ip6.clone()]);
            assert_eq!(
                (&trickled.packets, &trickled.stats),
                (&whole.packets, &whole.stats)
            );
        }
    }

    #[test]
    fn a_capture_cut_in_a_record_yields_its_complete_records_and_a_warning() {
        let ip = ipv4_packet();
        let file = pcap_file(101, &[(&ip, 44), (&ip, 44)]);
        for cut in [5, 50, 60 - 16] {
            let capture = parse("cut.pcap", &file[..file.len() - cut]).unwrap();
            assert_eq!(capture.packets, vec![ip.clone()], "cut {cut}");
            let warning = capture.warning.unwrap();
            assert!(warning.contains("cut short"), "{warning}");
            assert!(warning.contains("record 2 at byte 84"), "{warning}");
            assert!(warning.ends_with("read the 1 complete records before it"));
        }
        let pcapng = pcapng_file(101, &[&ip, &ip]);
        for cut in [3, 20] {
            let capture = parse("cut.pcapng", &pcapng[..pcapng.len() - cut]).unwrap();
            assert_eq!(capture.packets, vec![ip.clone()], "cut {cut}");
            assert!(capture
                .warning
                .unwrap()
                .contains("cut short in the middle of block 4"));
        }
        // Cut exactly between records: nothing is missing.
        let whole = parse("w.pcap", &file[..24 + 16 + 44]).unwrap();
        assert_eq!((whole.packets.len(), whole.warning), (1, None));
    }

    #[test]
    fn bad_files_give_errors_naming_the_problem() {
        let ip = ipv4_packet();
        let file = pcap_file(101, &[(&ip, 44), (&ip, 44)]);
        let mut huge = file.clone();
        huge[24 + 16 + 44 + 8..24 + 16 + 44 + 12].copy_from_slice(&[0xFF; 4]);
        let corrupt = parse("huge.pcap", &huge).unwrap_err();
        assert!(corrupt.problem.contains("corrupt record 2"), "{corrupt}");
        assert_eq!(corrupt.file, "huge.pcap");
        let header = parse("h.pcap", &file[..10]).unwrap_err();
        assert!(header.problem.contains("header"), "{header}");
        let ppp = parse("ppp.pcap", &pcap_file(204, &[])).unwrap_err();
        assert!(ppp.problem.contains("PPP_WITH_DIR"), "{ppp}");
        let garbage = parse("g.bin", b"hello world").unwrap_err();
        assert!(
            garbage.to_string().starts_with("g.bin: not a pcap"),
            "{garbage}"
        );
        assert!(parse("e", b"").unwrap_err().problem.contains("empty"));
    }

    #[test]
    fn garbage_after_a_good_header_never_panics() {
        let ip = ipv4_packet();
        let file = pcap_file(1, &[(&ip, 44)]);
        let mut state = 0x1234_5678u32;
        for len in 0..file.len() {
            for _ in 0..4 {
                let mut mutated = file[..len].to_vec();
                for byte in mutated.iter_mut().skip(4) {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    if state >> 28 == 0 {
                        *byte = (state >> 16) as u8;
                    }
                }
                let _ = parse("m.pcap", &mutated);
            }
        }
    }

    /// Appends a pcapng block of `kind` holding `body` (padded to 32 bits) to `file`.
    pub(crate) fn pcapng_block(file: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let len = (12 + body.len()).div_ceil(4) * 4;
        file.extend_from_slice(&kind.to_le_bytes());
        file.extend_from_slice(&(len as u32).to_le_bytes());
        file.extend_from_slice(body);
        file.resize(file.len() + len - 12 - body.len(), 0);
        file.extend_from_slice(&(len as u32).to_le_bytes());
    }

    /// A pcapng file's start: its little-endian Section Header Block, version 1.0.
    pub(crate) fn pcapng_start() -> Vec<u8> {
        let mut file = Vec::new();
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1A2B3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        pcapng_block(&mut file, 0x0A0D0D0A, &shb);
        file
    }

    pub(crate) fn pcapng_file(link_type: u16, packets: &[&[u8]]) -> Vec<u8> {
        let block = pcapng_block;
        let mut file = pcapng_start();
        let mut idb = Vec::new();
        idb.extend_from_slice(&link_type.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&0u32.to_le_bytes());
        block(&mut file, 1, &idb);
        for packet in packets {
            let mut epb = Vec::new();
            epb.extend_from_slice(&0u32.to_le_bytes());
            epb.extend_from_slice(&[0; 8]);
            epb.extend_from_slice(&(packet.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(packet.len() as u32).to_le_bytes());
            epb.extend_from_slice(packet);
            epb.resize(20 + packet.len().div_ceil(4) * 4, 0);
            block(&mut file, 6, &epb);
        }
        file
    }

    #[test]
    fn pcapng_files_are_read() {
        let ip = ipv6_packet();
        let mut sll2 = vec![0x86, 0xDD];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip);
        let file = pcapng_file(276, &[&sll2, &[0x08, 0x06, 0, 0]]);
        let capture = parse("t.pcapng", &file).unwrap();
        assert_eq!(capture.packets, vec![ip]);
        assert_eq!(capture.stats.non_ip_records, 1);
        assert_eq!(capture.stats.link_types, vec![276]);

        let mut bad_length = file.clone();
        bad_length[file.len() - 32..file.len() - 28].copy_from_slice(&13u32.to_le_bytes());
        let corrupt = parse("c.pcapng", &bad_length).unwrap_err();
        assert!(corrupt.problem.contains("block length 13"), "{corrupt}");
        let ppp = parse("p.pcapng", &pcapng_file(204, &[&[1, 2, 3]])).unwrap_err();
        assert!(ppp.problem.contains("PPP_WITH_DIR"), "{ppp}");
    }
}
