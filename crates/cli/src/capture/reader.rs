//! Streaming pcap and pcapng reading: one record at a time from any [`Read`], so memory holds
//! one record (plus a 64 KiB read buffer) whatever the capture's size, and standard input can be
//! read like a file.
//!
//! Like tshark, a capture cut short in the middle of a record yields every complete record
//! before the cut and a warning ([`CaptureReader::warning`]), not an error. A corrupt record
//! (an impossible length, a malformed block) is an error.

use std::io::{ErrorKind, Read};
use std::time::Duration;

use pcap_file::pcap::PcapHeader;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{Endianness, PcapError, TsResolution};

use super::link::{link_type_name, LinkType, SUPPORTED};
use super::timestamps::InterfaceClock;
use super::CaptureError;

/// No real record is bigger than this; a bigger length field means a corrupt file.
const MAX_RECORD_LEN: usize = 64 << 20;

/// How many bytes one read asks for.
const CHUNK: usize = 64 << 10;

/// The pcapng Section Header Block type, the same in either byte order.
const SECTION_HEADER: [u8; 4] = [0x0A, 0x0D, 0x0D, 0x0A];

/// What the records of a capture held, as far as it has been read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// How many packet records were read (IP or not).
    pub records: u64,
    /// Records skipped because their link layer carries no IPv4/IPv6 packet (ARP, LLDP, …) or
    /// is too short to hold its own link header.
    pub non_ip_records: u64,
    /// IP records cut short by the capture's snaplen (captured length < original length). They
    /// are handed over as they are.
    pub truncated_records: u64,
    /// The link types the records used, as LINKTYPE numbers, in order of first use.
    pub link_types: Vec<u32>,
}

/// One IP packet of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The packet, from its IPv4 or IPv6 header on, trimmed to the length the IP header
    /// announces (so link padding does not reach the codecs).
    pub data: &'a [u8],
    /// Its capture time since the first record's (zero where the file gives none, or gives one
    /// before the first record's).
    pub time: Duration,
}

/// The file format and what its header said.
enum Format {
    Pcap { header: PcapHeader, link_type: u32 },
    PcapNg { parser: PcapNgParser },
}

/// One packet record, located in the reader's buffer.
struct Record {
    link_type: u32,
    /// Where the captured frame lies in the buffer.
    frame: std::ops::Range<usize>,
    original_len: usize,
    time: Duration,
}

/// Reads the IP packets of a pcap or pcapng capture (told apart by their magic numbers) one at
/// a time.
pub struct CaptureReader<R> {
    name: String,
    source: R,
    /// Bytes read but not yet consumed are `buffer[start..filled]`; the buffer beyond `filled`
    /// is room, zeroed once, that reads fill (so a refill does not zero it again).
    buffer: Vec<u8>,
    start: usize,
    filled: usize,
    /// Whether the source has reported its end.
    at_end: bool,
    /// File offset of `buffer[start]`.
    offset: u64,
    format: Format,
    /// Records (pcap) or blocks (pcapng) read, for messages.
    units: u64,
    /// The time stamp of the first record, once seen.
    origin: Option<Duration>,
    /// The last time stamp seen (pcapng simple packet blocks carry none).
    last_time: Duration,
    stats: CaptureStats,
    warning: Option<String>,
}

impl<R: Read> CaptureReader<R> {
    /// Starts reading the capture `source`, called `name` in messages, and reads its file
    /// header.
    pub fn new(name: impl Into<String>, source: R) -> Result<CaptureReader<R>, CaptureError> {
        let mut reader = CaptureReader {
            name: name.into(),
            source,
            buffer: Vec::new(),
            start: 0,
            filled: 0,
            at_end: false,
            offset: 0,
            format: Format::Pcap {
                header: PcapHeader::default(),
                link_type: 0,
            },
            units: 0,
            origin: None,
            last_time: Duration::ZERO,
            stats: CaptureStats::default(),
            warning: None,
        };
        reader.format = reader.read_file_header()?;
        Ok(reader)
    }

    /// The capture's name in messages and reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the records read so far held.
    pub fn stats(&self) -> &CaptureStats {
        &self.stats
    }

    /// Why reading stopped early, if the capture was cut short in the middle of a record (its
    /// complete records were all read): one line, without the capture's name.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// How many bytes of the capture have been consumed.
    pub fn bytes_read(&self) -> u64 {
        self.offset
    }

    /// The next IP packet, or `None` at the end of the capture (or at a cut, see
    /// [`CaptureReader::warning`]). Records that carry no IP packet are counted and skipped.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        loop {
            let record = match self.next_record() {
                Ok(Some(record)) => record,
                Ok(None) => return Ok(None),
                Err(problem) => return Err(self.error(problem)),
            };
            let Some(link) = LinkType::from_number(record.link_type) else {
                return Err(self.error(unsupported(record.link_type)));
            };
            let origin = *self.origin.get_or_insert(record.time);
            let stats = &mut self.stats;
            stats.records += 1;
            if !stats.link_types.contains(&record.link_type) {
                stats.link_types.push(record.link_type);
            }
            let frame = &self.buffer[record.frame.clone()];
            let Some(packet) = link.ip_packet(frame) else {
                stats.non_ip_records += 1;
                continue;
            };
            if frame.len() < record.original_len {
                stats.truncated_records += 1;
            }
            // The packet's place in the buffer: it lies inside the frame.
            let skipped = packet.as_ptr() as usize - frame.as_ptr() as usize;
            let at = record.frame.start + skipped;
            let len = packet.len();
            return Ok(Some(Packet {
                data: &self.buffer[at..at + len],
                time: record.time.saturating_sub(origin),
            }));
        }
    }

    fn error(&self, problem: String) -> CaptureError {
        CaptureError {
            file: self.name.clone(),
            problem,
        }
    }

    /// The unconsumed bytes in the buffer.
    fn window(&self) -> &[u8] {
        &self.buffer[self.start..self.filled]
    }

    /// Reads until at least `wanted` unconsumed bytes are buffered; false if the source ends
    /// first.
    fn fill(&mut self, wanted: usize) -> Result<bool, String> {
        if self.filled - self.start >= wanted {
            return Ok(true);
        }
        self.buffer.copy_within(self.start..self.filled, 0);
        self.filled -= self.start;
        self.start = 0;
        while self.filled < wanted && !self.at_end {
            // Room for a chunk at least, beyond what is wanted.
            let room = wanted.max(self.filled + CHUNK);
            if self.buffer.len() < room {
                self.buffer.resize(room, 0);
            }
            let read = loop {
                match self.source.read(&mut self.buffer[self.filled..]) {
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            match read {
                Ok(n) => {
                    self.filled += n;
                    self.at_end = n == 0;
                }
                Err(e) => return Err(format!("cannot read: {e}")),
            }
        }
        Ok(self.filled >= wanted)
    }

    /// Marks `len` buffered bytes as consumed.
    fn consume(&mut self, len: usize) {
        self.start += len;
        self.offset += len as u64;
    }

    fn read_file_header(&mut self) -> Result<Format, CaptureError> {
        self.fill(4).map_err(|p| self.error(p))?;
        let magic = self.window().get(..4).unwrap_or(self.window());
        match magic {
            [] => Err(self.error("empty file".to_string())),
            [0xA1, 0xB2, 0xC3, 0xD4]
            | [0xD4, 0xC3, 0xB2, 0xA1]
            | [0xA1, 0xB2, 0x3C, 0x4D]
            | [0x4D, 0x3C, 0xB2, 0xA1] => {
                self.fill(24).map_err(|p| self.error(p))?;
                let (_, header) = PcapHeader::from_slice(self.window())
                    .map_err(|e| self.error(format!("bad pcap file header: {}", describe(&e))))?;
                // The upper bits of the field may carry an FCS length (which the IP-length
                // trim removes).
                let link_type = u32::from(header.datalink) & 0xFFFF;
                if LinkType::from_number(link_type).is_none() {
                    return Err(self.error(unsupported(link_type)));
                }
                self.consume(24);
                Ok(Format::Pcap { header, link_type })
            }
            [0x0A, 0x0D, 0x0D, 0x0A] => {
                let len = self
                    .pcapng_block_len(None)
                    .and_then(|len| {
                        self.fill(len)?;
                        Ok(len)
                    })
                    .map_err(|p| self.error(format!("bad pcapng section header: {p}")))?;
                let window = &self.buffer[self.start..self.filled];
                let (_, parser) = PcapNgParser::new(window).map_err(|e| {
                    self.error(format!("bad pcapng section header: {}", describe(&e)))
                })?;
                self.consume(len.min(window.len()));
                self.units = 1;
                Ok(Format::PcapNg { parser })
            }
            _ => {
                let shown: Vec<String> = magic.iter().map(|b| format!("{b:02x}")).collect();
                Err(self.error(format!(
                    "not a pcap or pcapng file (starts with {})",
                    shown.join(" ")
                )))
            }
        }
    }

    /// The total length of the pcapng block that starts the window (in the byte order of
    /// `section`, or of its own magic if it is a section header), once 12 bytes are buffered.
    fn pcapng_block_len(&mut self, section: Option<Endianness>) -> Result<usize, String> {
        if !self.fill(12)? {
            return Err("unexpected end of file".to_string());
        }
        let window = self.window();
        let endianness = if window[..4] == SECTION_HEADER {
            match window[8..12] {
                [0x1A, 0x2B, 0x3C, 0x4D] => Endianness::Big,
                [0x4D, 0x3C, 0x2B, 0x1A] => Endianness::Little,
                _ => return Err("corrupt (bad byte-order magic)".to_string()),
            }
        } else {
            section.unwrap_or(Endianness::Little)
        };
        let field = [window[4], window[5], window[6], window[7]];
        let len = match endianness {
            Endianness::Big => u32::from_be_bytes(field),
            Endianness::Little => u32::from_le_bytes(field),
        } as usize;
        if len < 12 || !len.is_multiple_of(4) || len > MAX_RECORD_LEN {
            return Err(format!("corrupt (block length {len})"));
        }
        Ok(len)
    }

    /// Ends the capture: cleanly if nothing is left, with a warning if `what` was cut short.
    fn end(&mut self, what: String) -> Result<Option<Record>, String> {
        let left = self.filled - self.start;
        if left > 0 {
            self.warning = Some(format!(
                "cut short in the middle of {what} (its last {left} bytes); read the {} \
                 complete records before it",
                self.stats.records
            ));
            self.consume(left);
        }
        Ok(None)
    }

    fn next_record(&mut self) -> Result<Option<Record>, String> {
        if self.warning.is_some() {
            return Ok(None);
        }
        match self.format {
            Format::Pcap { header, link_type } => self.next_pcap_record(header, link_type),
            Format::PcapNg { .. } => self.next_pcapng_record(),
        }
    }

    fn next_pcap_record(
        &mut self,
        header: PcapHeader,
        link_type: u32,
    ) -> Result<Option<Record>, String> {
        self.units += 1;
        // Only messages need it: not made for every record.
        let (units, offset) = (self.units, self.offset);
        let where_ = || format!("record {units} at byte {offset}");
        if !self.fill(16)? {
            return self.end(where_());
        }
        let field = |i: usize| {
            let b = &self.window()[4 * i..4 * i + 4];
            let b = [b[0], b[1], b[2], b[3]];
            match header.endianness {
                Endianness::Big => u32::from_be_bytes(b),
                Endianness::Little => u32::from_le_bytes(b),
            }
        };
        let (seconds, fraction, captured, original) = (field(0), field(1), field(2), field(3));
        let captured = captured as usize;
        if captured > MAX_RECORD_LEN {
            return Err(format!("corrupt {}: captured length {captured}", where_()));
        }
        if !self.fill(16 + captured)? {
            return self.end(where_());
        }
        let fraction = match header.ts_resolution {
            TsResolution::MicroSecond => Duration::from_micros(u64::from(fraction)),
            TsResolution::NanoSecond => Duration::from_nanos(u64::from(fraction)),
        };
        let frame = self.start + 16..self.start + 16 + captured;
        self.consume(16 + captured);
        Ok(Some(Record {
            link_type,
            frame,
            original_len: original as usize,
            time: Duration::from_secs(u64::from(seconds)) + fraction,
        }))
    }

    fn next_pcapng_record(&mut self) -> Result<Option<Record>, String> {
        loop {
            self.units += 1;
            let (units, offset) = (self.units, self.offset);
            let where_ = || format!("block {units} at byte {offset}");
            if !self.fill(1)? {
                return Ok(None);
            }
            let Format::PcapNg { parser } = &self.format else {
                unreachable!("a pcapng reader has a pcapng parser");
            };
            let section = parser.section().endianness;
            let len = match self.pcapng_block_len(Some(section)) {
                Ok(len) => len,
                Err(_) if self.filled - self.start < 12 => return self.end(where_()),
                Err(problem) => return Err(format!("{}: {problem}", where_())),
            };
            if !self.fill(len)? {
                return self.end(where_());
            }
            let Format::PcapNg { parser } = &mut self.format else {
                unreachable!("a pcapng reader has a pcapng parser");
            };
            let block_start = self.start;
            let window = &self.buffer[block_start..block_start + len];
            let (_, block) = parser
                .next_block(window)
                .map_err(|e| format!("{}: {}", where_(), describe(&e)))?;
            // Where each packet block's data starts (after its fixed fields), the captured
            // length, the original length and the time stamp in ticks (simple packet blocks
            // have none: they take the last time seen).
            let summary = match &block {
                Block::EnhancedPacket(epb) => Some((
                    epb.interface_id,
                    28,
                    epb.data.len(),
                    epb.original_len,
                    Some(epb.timestamp.as_nanos() as u64),
                )),
                Block::SimplePacket(spb) => Some((0, 12, spb.data.len(), spb.original_len, None)),
                Block::Packet(pb) => Some((
                    u32::from(pb.interface_id),
                    28,
                    pb.data.len(),
                    pb.original_len,
                    Some(pb.timestamp),
                )),
                _ => None,
            };
            let simple = matches!(block, Block::SimplePacket(_));
            drop(block);
            let Some((interface, data_at, captured, original_len, ticks)) = summary else {
                self.consume(len);
                continue;
            };
            let description = parser.interfaces().get(interface as usize).ok_or_else(|| {
                format!("{}: packet of undeclared interface {interface}", where_())
            })?;
            if let Some(ticks) = ticks {
                self.last_time = InterfaceClock::of(description).time(ticks);
            }
            let mut keep = captured;
            if simple {
                // The block's data is padded to 32 bits and cut at the interface's snaplen.
                keep = keep.min(original_len as usize);
                if description.snaplen != 0 {
                    keep = keep.min(description.snaplen as usize);
                }
            }
            let link_type = u32::from(description.linktype);
            let frame_start = block_start + data_at;
            if frame_start + keep > block_start + len {
                return Err(format!("{}: corrupt (data beyond the block)", where_()));
            }
            self.consume(len);
            return Ok(Some(Record {
                link_type,
                frame: frame_start..frame_start + keep,
                original_len: original_len as usize,
                time: self.last_time,
            }));
        }
    }
}

/// The problem of a file of link type `link_type`, which we cannot read.
fn unsupported(link_type: u32) -> String {
    format!(
        "unsupported link type {link_type} ({}); supported: {SUPPORTED}",
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
