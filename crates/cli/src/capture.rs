//! Reading pcap and pcapng captures, and taking the IP packet out of each link-layer frame.
//!
//! A whole capture is read into memory (the captures we evaluate are a few megabytes). Every
//! record whose link layer carries IPv4 or IPv6 becomes one [`Capture::packets`] entry holding the
//! bytes from the IP header on, trimmed to the length the IP header announces (so Ethernet
//! padding does not reach the codecs). Records that carry something else (ARP, LLDP, …) are
//! skipped and counted. A file that is truncated, corrupt or of an unsupported link type is an
//! error ([`CaptureError`]), never a panic.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

mod timestamps;
use timestamps::InterfaceClock;

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

/// The IP packets of one capture, in capture order, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    /// The capture's name in reports (the path as given, or `built-in:…`).
    pub name: String,
    /// Every IP packet, starting at its IPv4 or IPv6 header.
    pub packets: Vec<Vec<u8>>,
    /// Per packet, its capture time since the first record's (zero where the file gives none,
    /// or gives one before the first record's).
    pub times: Vec<Duration>,
    /// How many packet records the file holds (IP or not).
    pub records: u64,
    /// Records skipped because their link layer carries no IPv4/IPv6 packet (ARP, LLDP, …) or
    /// is too short to hold its own link header.
    pub non_ip_records: u64,
    /// IP records cut short by the capture's snaplen (captured length < original length). They are
    /// kept in [`Capture::packets`] as they are.
    pub truncated_records: u64,
    /// The link types the records used, as LINKTYPE numbers, in order of first use.
    pub link_types: Vec<u32>,
}

/// How the IP packet is found inside a link-layer frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkType {
    /// No link header: the frame starts with the IPv4 or IPv6 header (LINKTYPE 101, 12, 14, 228,
    /// 229).
    Raw,
    /// Ethernet II with any number of 802.1Q / 802.1ad VLAN tags (LINKTYPE 1).
    Ethernet,
    /// Linux "cooked" capture v1 (LINKTYPE 113): 16-byte header, protocol in its last 2 bytes.
    LinuxSll,
    /// Linux "cooked" capture v2 (LINKTYPE 276): 20-byte header, protocol in its first 2 bytes.
    LinuxSll2,
}

/// EtherTypes used here.
mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86DD;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88A8;
    pub const QINQ_OLD: u16 = 0x9100;
}

impl LinkType {
    /// The link type of a LINKTYPE number, or `None` if we cannot take IP packets out of it.
    pub fn from_number(number: u32) -> Option<LinkType> {
        match number {
            101 | 12 | 14 | 228 | 229 => Some(LinkType::Raw),
            1 => Some(LinkType::Ethernet),
            113 => Some(LinkType::LinuxSll),
            276 => Some(LinkType::LinuxSll2),
            _ => None,
        }
    }

    /// The IP packet inside `frame`, or `None` if the frame does not carry IPv4 or IPv6.
    ///
    /// The packet is trimmed to the length its IP header announces when that is shorter than
    /// what is left of the frame (link padding); a frame shorter than the announced length is
    /// returned whole (a snaplen-truncated record).
    pub fn ip_packet(self, frame: &[u8]) -> Option<&[u8]> {
        let packet = match self {
            LinkType::Raw => frame,
            LinkType::Ethernet => {
                let mut offset = 12;
                let mut ethertype = read_u16(frame, offset)?;
                while matches!(
                    ethertype,
                    ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_OLD
                ) {
                    offset += 4;
                    ethertype = read_u16(frame, offset)?;
                }
                if !is_ip_ethertype(ethertype) {
                    return None;
                }
                frame.get(offset + 2..)?
            }
            LinkType::LinuxSll => {
                if !is_ip_ethertype(read_u16(frame, 14)?) {
                    return None;
                }
                frame.get(16..)?
            }
            LinkType::LinuxSll2 => {
                if !is_ip_ethertype(read_u16(frame, 0)?) {
                    return None;
                }
                frame.get(20..)?
            }
        };
        let announced = match packet.first()? >> 4 {
            // A total length below the minimum header (0 in some TSO captures) is no length:
            // keep the frame.
            4 => match usize::from(read_u16(packet, 2)?) {
                total if total < 20 => packet.len(),
                total => total,
            },
            6 => match read_u16(packet, 4)? {
                0 => packet.len(), // a jumbogram: the length is in an option; keep the frame
                payload => 40 + usize::from(payload),
            },
            _ => return None,
        };
        Some(&packet[..announced.min(packet.len())])
    }
}

fn is_ip_ethertype(ethertype: u16) -> bool {
    ethertype == ethertype::IPV4 || ethertype == ethertype::IPV6
}

fn read_u16(bytes: &[u8], offset: usize) -> Option<u16> {
    let pair = bytes.get(offset..offset + 2)?;
    Some(u16::from_be_bytes([pair[0], pair[1]]))
}

/// The name libpcap gives a LINKTYPE number, for error messages (`LINKTYPE_204` if unknown).
pub fn link_type_name(number: u32) -> String {
    match DataLink::from(number) {
        DataLink::Unknown(n) => format!("LINKTYPE_{n}"),
        known => format!("{known:?}"),
    }
}

/// No real record is bigger than this; a bigger length field means a corrupt file.
const MAX_RECORD_LEN: usize = 64 << 20;

/// Reads the capture file at `path` (pcap or pcapng, told apart by their magic numbers).
pub fn read_file(path: &Path) -> Result<Capture, CaptureError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| CaptureError {
        file: name.clone(),
        problem: format!("cannot read: {e}"),
    })?;
    parse(&name, &bytes)
}

/// Parses the bytes of a whole pcap or pcapng file named `name`.
pub fn parse(name: &str, bytes: &[u8]) -> Result<Capture, CaptureError> {
    match parse_partial(name, bytes) {
        (capture, None) => Ok(capture),
        (_, Some(error)) => Err(error),
    }
}

/// Like [`parse`], but also returns the records read before an error (for example all complete
/// records of a file cut short in its last record), with the error if there was one.
pub fn parse_partial(name: &str, bytes: &[u8]) -> (Capture, Option<CaptureError>) {
    let mut builder = Builder {
        capture: Capture {
            name: name.to_string(),
            ..Capture::default()
        },
        origin: None,
    };
    let outcome = if bytes.is_empty() {
        Err("empty file".to_string())
    } else {
        match bytes.get(..4) {
            Some([0xA1, 0xB2, 0xC3, 0xD4])
            | Some([0xD4, 0xC3, 0xB2, 0xA1])
            | Some([0xA1, 0xB2, 0x3C, 0x4D])
            | Some([0x4D, 0x3C, 0xB2, 0xA1]) => parse_pcap(bytes, &mut builder),
            Some([0x0A, 0x0D, 0x0D, 0x0A]) => parse_pcapng(bytes, &mut builder),
            _ => {
                let shown: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
                Err(format!(
                    "not a pcap or pcapng file (starts with {})",
                    shown.join(" ")
                ))
            }
        }
    };
    let error = outcome.err().map(|problem| CaptureError {
        file: name.to_string(),
        problem,
    });
    (builder.capture, error)
}

/// Collects records into a [`Capture`].
struct Builder {
    capture: Capture,
    /// The time stamp of the first record, once seen.
    origin: Option<Duration>,
}

impl Builder {
    /// Adds one record of link type `link_type`, captured at `time`, whose original length was
    /// `original_len`.
    fn record(
        &mut self,
        link_type: u32,
        frame: &[u8],
        original_len: usize,
        time: Duration,
    ) -> Result<(), String> {
        let link = LinkType::from_number(link_type).ok_or_else(|| unsupported(link_type))?;
        let origin = *self.origin.get_or_insert(time);
        let capture = &mut self.capture;
        capture.records += 1;
        if !capture.link_types.contains(&link_type) {
            capture.link_types.push(link_type);
        }
        match link.ip_packet(frame) {
            Some(packet) => {
                if frame.len() < original_len {
                    capture.truncated_records += 1;
                }
                capture.packets.push(packet.to_vec());
                capture.times.push(time.saturating_sub(origin));
            }
            None => capture.non_ip_records += 1,
        }
        Ok(())
    }
}

/// The problem of a file of link type `link_type`, which we cannot read.
fn unsupported(link_type: u32) -> String {
    format!(
        "unsupported link type {link_type} ({}); supported: raw IP (101, 12, 14), IPv4 (228), \
         IPv6 (229), Ethernet (1), Linux SLL (113), SLL2 (276)",
        link_type_name(link_type)
    )
}

fn describe(error: &PcapError) -> String {
    match error {
        PcapError::IncompleteBuffer => "unexpected end of file".to_string(),
        PcapError::InvalidField(what) => format!("corrupt ({what})"),
        other => other.to_string(),
    }
}

fn parse_pcap(bytes: &[u8], builder: &mut Builder) -> Result<(), String> {
    let (mut rest, parser) =
        PcapParser::new(bytes).map_err(|e| format!("bad pcap file header: {}", describe(&e)))?;
    let header = parser.header();
    // The upper bits of the field may carry an FCS length (which the IP-length trim removes).
    let link_type = u32::from(header.datalink) & 0xFFFF;
    if LinkType::from_number(link_type).is_none() {
        return Err(unsupported(link_type));
    }
    let mut index = 0u64;
    while !rest.is_empty() {
        index += 1;
        let offset = bytes.len() - rest.len();
        let where_ = || format!("record {index} at byte {offset}");
        if rest.len() < 16 {
            return Err(format!(
                "truncated file: {} stray bytes at byte {offset}",
                rest.len()
            ));
        }
        let length_field = [rest[8], rest[9], rest[10], rest[11]];
        let captured = match header.endianness {
            Endianness::Big => u32::from_be_bytes(length_field),
            Endianness::Little => u32::from_le_bytes(length_field),
        } as usize;
        if captured > MAX_RECORD_LEN {
            return Err(format!("corrupt {}: captured length {captured}", where_()));
        }
        let (next, raw) = parser.next_raw_packet(rest).map_err(|e| match e {
            PcapError::IncompleteBuffer => {
                format!("truncated file: {} ends before its data", where_())
            }
            other => format!("{}: {}", where_(), describe(&other)),
        })?;
        let fraction = match header.ts_resolution {
            TsResolution::MicroSecond => Duration::from_micros(u64::from(raw.ts_frac)),
            TsResolution::NanoSecond => Duration::from_nanos(u64::from(raw.ts_frac)),
        };
        let time = Duration::from_secs(u64::from(raw.ts_sec)) + fraction;
        builder.record(link_type, &raw.data, raw.orig_len as usize, time)?;
        rest = next;
    }
    Ok(())
}

fn parse_pcapng(bytes: &[u8], builder: &mut Builder) -> Result<(), String> {
    let (mut rest, mut parser) = PcapNgParser::new(bytes)
        .map_err(|e| format!("bad pcapng section header: {}", describe(&e)))?;
    let mut index = 0u64;
    let mut last_time = Duration::ZERO;
    while !rest.is_empty() {
        index += 1;
        let offset = bytes.len() - rest.len();
        let (next, block) = parser.next_block(rest).map_err(|e| match e {
            PcapError::IncompleteBuffer => {
                format!("truncated file: block {index} at byte {offset} is cut short")
            }
            other => format!("block {index} at byte {offset}: {}", describe(&other)),
        })?;
        // Time stamps count ticks of the interface's resolution (pcap-file hands them over as
        // nanoseconds). Simple packet blocks carry none: they take the last time seen.
        let (interface, data, original_len, ticks) = match &block {
            Block::EnhancedPacket(epb) => (
                epb.interface_id,
                &epb.data,
                epb.original_len,
                Some(epb.timestamp.as_nanos() as u64),
            ),
            Block::SimplePacket(spb) => (0, &spb.data, spb.original_len, None),
            Block::Packet(pb) => (
                u32::from(pb.interface_id),
                &pb.data,
                pb.original_len,
                Some(pb.timestamp),
            ),
            _ => {
                rest = next;
                continue;
            }
        };
        let description = parser.interfaces().get(interface as usize).ok_or_else(|| {
            format!("block {index} at byte {offset}: packet of undeclared interface {interface}")
        })?;
        if let Some(ticks) = ticks {
            last_time = InterfaceClock::of(description).time(ticks);
        }
        let mut frame: &[u8] = data;
        if let Block::SimplePacket(_) = block {
            // The block's data is padded to 32 bits and cut at the interface's snaplen.
            let mut keep = frame.len().min(original_len as usize);
            if description.snaplen != 0 {
                keep = keep.min(description.snaplen as usize);
            }
            frame = &frame[..keep];
        }
        builder.record(
            u32::from(description.linktype),
            frame,
            original_len as usize,
            last_time,
        )?;
        rest = next;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal IPv4/TCP packet (20 + 20 bytes, 4 bytes of payload).
    fn ipv4_packet() -> Vec<u8> {
        let mut p = vec![0u8; 44];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&44u16.to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[32] = 0x50;
        p
    }

    fn ipv6_packet() -> Vec<u8> {
        let mut p = vec![0u8; 40 + 20];
        p[0] = 0x60;
        p[4..6].copy_from_slice(&20u16.to_be_bytes());
        p[6] = 6;
        p[7] = 64;
        p[23] = 1;
        p[39] = 2;
        p[40 + 12] = 0x50;
        p
    }

    #[test]
    fn raw_link_types_take_the_frame_as_it_is() {
        for number in [101, 12, 14, 228, 229] {
            let link = LinkType::from_number(number).unwrap();
            assert_eq!(link.ip_packet(&ipv4_packet()), Some(&ipv4_packet()[..]));
            assert_eq!(link.ip_packet(&ipv6_packet()), Some(&ipv6_packet()[..]));
            assert_eq!(link.ip_packet(&[0x20, 0, 0, 0]), None);
            assert_eq!(link.ip_packet(&[]), None);
        }
    }

    #[test]
    fn ethernet_with_and_without_vlan_tags_and_padding() {
        let ip = ipv4_packet();
        let mut frame = vec![0xAA; 12];
        frame.extend_from_slice(&[0x08, 0x00]);
        frame.extend_from_slice(&ip);
        frame.extend_from_slice(&[0; 6]); // padding to 60 bytes
        let link = LinkType::from_number(1).unwrap();
        assert_eq!(link.ip_packet(&frame), Some(&ip[..]));

        let ip6 = ipv6_packet();
        let mut tagged = vec![0xAA; 12];
        tagged.extend_from_slice(&[0x88, 0xA8, 0x00, 0x05, 0x81, 0x00, 0x00, 0x07, 0x86, 0xDD]);
        tagged.extend_from_slice(&ip6);
        assert_eq!(link.ip_packet(&tagged), Some(&ip6[..]));

        let mut arp = vec![0xFF; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0; 28]);
        assert_eq!(link.ip_packet(&arp), None);
        assert_eq!(link.ip_packet(&frame[..13]), None);
        assert_eq!(link.ip_packet(&tagged[..17]), None);
    }

    #[test]
    fn linux_cooked_v1_and_v2() {
        let ip = ipv4_packet();
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&ip);
        let v1 = LinkType::from_number(113).unwrap();
        assert_eq!(v1.ip_packet(&sll), Some(&ip[..]));
        sll[14..16].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(v1.ip_packet(&sll), None);

        let ip6 = ipv6_packet();
        let mut sll2 = vec![0x86, 0xDD];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip6);
        let v2 = LinkType::from_number(276).unwrap();
        assert_eq!(v2.ip_packet(&sll2), Some(&ip6[..]));
        assert_eq!(v2.ip_packet(&sll2[..19]), None);
    }

    #[test]
    fn truncated_ip_packets_are_kept_whole() {
        let ip = ipv4_packet();
        let link = LinkType::from_number(101).unwrap();
        assert_eq!(link.ip_packet(&ip[..30]), Some(&ip[..30]));
        let mut no_length = ip.clone();
        no_length[2..4].copy_from_slice(&[0, 0]);
        assert_eq!(link.ip_packet(&no_length), Some(&no_length[..]));
    }

    #[test]
    fn unsupported_link_types_are_named() {
        assert_eq!(LinkType::from_number(204), None);
        assert_eq!(link_type_name(204), "PPP_WITH_DIR");
        assert_eq!(link_type_name(60000), "LINKTYPE_60000");
    }

    fn pcap_file(link_type: u32, records: &[(&[u8], u32)]) -> Vec<u8> {
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
        assert_eq!(capture.records, 3);
        assert_eq!(capture.packets, vec![ip.clone(), ip[..24].to_vec()]);
        // Record i is stamped i seconds; times count from the first record.
        assert_eq!(capture.times, vec![Duration::ZERO, Duration::from_secs(2)]);
        assert_eq!(capture.non_ip_records, 1);
        assert_eq!(capture.truncated_records, 1);
        assert_eq!(capture.link_types, vec![101]);
    }

    #[test]
    fn bad_files_give_errors_naming_the_problem() {
        let ip = ipv4_packet();
        let file = pcap_file(101, &[(&ip, 44), (&ip, 44)]);
        let cut = parse("cut.pcap", &file[..file.len() - 5]).unwrap_err();
        assert_eq!(cut.file, "cut.pcap");
        assert!(cut.problem.contains("truncated"), "{cut}");
        let mut huge = file.clone();
        huge[24 + 16 + 44 + 8..24 + 16 + 44 + 12].copy_from_slice(&[0xFF; 4]);
        let corrupt = parse("huge.pcap", &huge).unwrap_err();
        assert!(corrupt.problem.contains("corrupt record 2"), "{corrupt}");
        let cut = parse("cut.pcap", &file[..file.len() - 50]).unwrap_err();
        assert!(cut.problem.contains("truncated"), "{cut}");
        let (partial, error) = parse_partial("cut.pcap", &file[..file.len() - 5]);
        assert_eq!(partial.packets, vec![ip.clone()]);
        assert!(error.is_some());
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

    fn pcapng_file(link_type: u16, packets: &[&[u8]]) -> Vec<u8> {
        fn block(file: &mut Vec<u8>, kind: u32, body: &[u8]) {
            let len = (12 + body.len()).div_ceil(4) * 4;
            file.extend_from_slice(&kind.to_le_bytes());
            file.extend_from_slice(&(len as u32).to_le_bytes());
            file.extend_from_slice(body);
            file.resize(file.len() + len - 12 - body.len(), 0);
            file.extend_from_slice(&(len as u32).to_le_bytes());
        }
        let mut file = Vec::new();
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1A2B3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut file, 0x0A0D0D0A, &shb);
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
        assert_eq!(capture.non_ip_records, 1);
        assert_eq!(capture.link_types, vec![276]);

        let cut = parse("cut.pcapng", &file[..file.len() - 3]).unwrap_err();
        assert!(cut.problem.contains("truncated"), "{cut}");
        let ppp = parse("p.pcapng", &pcapng_file(204, &[&[1, 2, 3]])).unwrap_err();
        assert!(ppp.problem.contains("PPP_WITH_DIR"), "{ppp}");
    }
}
