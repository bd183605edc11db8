//! The files `taroc eval` writes besides its report: the frames the link carried
//! (`--write-frames`), the packets the decompressors delivered (`--write-delivered`) and one CSV
//! line per packet (`--per-packet`).
//!
//! # Frames (`--write-frames FILE`)
//!
//! A classic pcap (microsecond time stamps: capture time since the first record), one record per
//! frame a compressor sent (frames the link then lost included: `--per-packet` says which) and per
//! feedback frame, in the order they crossed the link, both directions in one file:
//!
//! - `none`, `vj`, `iphc`, `iphc-twice`: link type 204, LINKTYPE_PPP_WITH_DIR. Each record is
//!   `[direction] FF 03 [protocol, 2 octets] [frame]`: direction 0x00 for the forward direction
//!   (libpcap: "received by this host"; Wireshark shows "Received", DCE→DTE), 0x01 for the
//!   reverse ("sent", DTE→DCE); the PPP protocol numbers are those of
//!   RFC 1332 for RFC 1144 (`TYPE_IP` 0x0021, or 0x0057 for IPv6; `COMPRESSED_TCP` 0x002D;
//!   `UNCOMPRESSED_TCP` 0x002F) and of RFC 2509 section 4 for RFC 2507 (`FULL_HEADER` 0x0061,
//!   `COMPRESSED_TCP` 0x0063, `COMPRESSED_TCP_NODELTA` 0x2063, `COMPRESSED_NON_TCP` 0x0065,
//!   `CONTEXT_STATE` 0x2065). Wireshark decodes them with its own PPP, VJ and IPHC dissectors.
//! - `taroc` and its variants: link type 147, LINKTYPE_USER0, our private encapsulation. Each
//!   record is `[direction] [kind] [frame]`: the direction octet as above, then the frame-kind
//!   octet the link carries ([`FrameKind::to_byte`]: 0 `TYPE_IP`, 1 `UNCOMPRESSED_TCP`,
//!   2 `COMPRESSED_TCP`, 6 `CONTEXT_STATE`), then the frame. `wireshark/taroc.lua` decodes it.
//!
//! # Delivered packets (`--write-delivered FILE`)
//!
//! A classic pcap of link type 101 (LINKTYPE_RAW): every packet a decompressor delivered, in
//! delivery order, both directions, wrong ones included, time-stamped as the frames. Beside it,
//! a companion CSV (`FILE` with its extension replaced by `drops.csv`) with one line per packet
//! that was not delivered as captured: `index,time,direction,kind,fate,reason,delivered_record`,
//! where `delivered_record` is the 1-based record number of a wrong delivery in the pcap (empty
//! for a packet not delivered). On a clean link the pcap holds the capture's IP packets byte
//! for byte and the companion only its header line.
//!
//! # Per packet (`--per-packet FILE.csv`)
//!
//! One CSV for every scheme that ran: a header line, then one line per packet and per feedback
//! frame, `scheme,index,time,direction,kind,original_header_bytes,link_header_bytes,fate,reason`:
//! `index` the packet's position among the capture's IP packets from 0 (empty for feedback);
//! `time` in seconds since the first record; `direction` `forward` or `reverse`; `kind` the
//! frame's kind; the header bytes as the report counts them (the link's include the kind byte, so
//! the column sums to the report's `link_header_bytes`); `fate` and `reason` as
//! [`PacketFate::name`] and [`PacketFate::reason`] say (a feedback frame is `delivered` or
//! `link_lost`).
//!
//! # Several schemes
//!
//! With one scheme, `--write-frames` and `--write-delivered` write `FILE` itself. With several,
//! each scheme gets its own file: `FILE` with the scheme's name inserted before the extension
//! (`frames.pcap` → `frames.vj.pcap`, `frames.taroc.pcap`, …). Every file is created before the
//! run starts, so an unwritable path fails at once.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use taroc_core::vj::format::ppp;
use taroc_core::{FrameKind, Scheme, Variant};

use super::observe::{Observer, Outcome, PacketFate, Sent};
use crate::impair::Fate;

/// Where the outputs go; `None` for an output not asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputPaths {
    /// `--write-frames`.
    pub frames: Option<PathBuf>,
    /// `--write-delivered`.
    pub delivered: Option<PathBuf>,
    /// `--per-packet`.
    pub per_packet: Option<PathBuf>,
}

impl OutputPaths {
    /// Whether any output was asked for.
    pub fn any(&self) -> bool {
        self.frames.is_some() || self.delivered.is_some() || self.per_packet.is_some()
    }
}

/// The file of `scheme` when several schemes share the path `path`: the scheme's name inserted
/// before the extension.
pub fn scheme_path(path: &Path, scheme: &str) -> PathBuf {
    let mut name = path.file_stem().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(scheme);
    if let Some(extension) = path.extension() {
        name.push(".");
        name.push(extension);
    }
    path.with_file_name(name)
}

/// The companion CSV of a delivered-packets pcap: its extension replaced by `drops.csv`.
pub fn drops_path(delivered: &Path) -> PathBuf {
    delivered.with_extension("drops.csv")
}

/// PPP protocol number of a frame of `scheme` (RFC 1332, RFC 2509; see the module docs).
pub fn ppp_protocol(scheme: Scheme, kind: FrameKind, frame: &[u8]) -> u16 {
    match kind {
        FrameKind::Ip if frame.first().is_some_and(|b| b >> 4 == 6) => 0x0057,
        FrameKind::Ip => ppp::IP,
        FrameKind::UncompressedTcp => ppp::VJ_UNCOMPRESSED_TCP,
        FrameKind::CompressedTcp if scheme == Scheme::Vj => ppp::VJ_COMPRESSED_TCP,
        FrameKind::CompressedTcp => 0x0063,
        FrameKind::FullHeader => 0x0061,
        FrameKind::CompressedTcpNoDelta => 0x2063,
        FrameKind::CompressedNonTcp => 0x0065,
        FrameKind::ContextState => 0x2065,
    }
}

/// The pcap record of one frame: the encapsulation of its scheme (see the module docs).
pub fn frame_record(scheme: Scheme, direction: usize, kind: FrameKind, frame: &[u8]) -> Vec<u8> {
    let mut record = Vec::with_capacity(frame.len() + 5);
    record.push(direction as u8);
    if scheme == Scheme::Taroc {
        record.push(kind.to_byte());
    } else {
        record.extend_from_slice(&[0xFF, 0x03]);
        record.extend_from_slice(&ppp_protocol(scheme, kind, frame).to_be_bytes());
    }
    record.extend_from_slice(frame);
    record
}

/// The link type of the frames file of `scheme`.
pub fn frames_link_type(scheme: Scheme) -> DataLink {
    if scheme == Scheme::Taroc {
        DataLink::USER0
    } else {
        DataLink::PPP_WITH_DIR
    }
}

/// A pcap file being written.
type Pcap = PcapWriter<BufWriter<File>>;

/// Creates `path`, or says why not in one line.
fn create(path: &Path) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Creates a pcap file of link type `datalink`.
fn create_pcap(path: &Path, datalink: DataLink) -> Result<Pcap, String> {
    let header = PcapHeader {
        snaplen: 262_144,
        datalink,
        ts_resolution: TsResolution::MicroSecond,
        endianness: Endianness::native(),
        ..PcapHeader::default()
    };
    PcapWriter::with_header(create(path)?, header)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The files of one scheme.
struct SchemeFiles {
    scheme: Scheme,
    name: &'static str,
    frames: Option<(PathBuf, Pcap)>,
    /// The delivered pcap, its companion, and the records written so far.
    delivered: Option<(PathBuf, Pcap, BufWriter<File>, u64)>,
}

/// The output files of one evaluation: an [`Observer`] that writes every event it is told.
pub struct Outputs {
    schemes: Vec<SchemeFiles>,
    /// The scheme being run: an index into `schemes`.
    current: Option<usize>,
    per_packet: Option<(PathBuf, BufWriter<File>)>,
    /// The first write error; the rest of the run writes nothing more.
    error: Option<String>,
}

const DIRECTIONS: [&str; 2] = ["forward", "reverse"];

impl Outputs {
    /// Creates every file `paths` asks for, for runs of `variants` in this order.
    pub fn create(paths: &OutputPaths, variants: &[Variant]) -> Result<Outputs, String> {
        let several = variants.len() > 1;
        let path_of = |path: &Path, variant: &Variant| {
            if several {
                scheme_path(path, variant.name)
            } else {
                path.to_path_buf()
            }
        };
        let mut schemes = Vec::with_capacity(variants.len());
        for variant in variants {
            let frames = match &paths.frames {
                Some(path) => {
                    let path = path_of(path, variant);
                    let pcap = create_pcap(&path, frames_link_type(variant.scheme))?;
                    Some((path, pcap))
                }
                None => None,
            };
            let delivered = match &paths.delivered {
                Some(path) => {
                    let path = path_of(path, variant);
                    let pcap = create_pcap(&path, DataLink::RAW)?;
                    let companion = drops_path(&path);
                    let mut drops = create(&companion)?;
                    writeln!(
                        drops,
                        "index,time,direction,kind,fate,reason,delivered_record"
                    )
                    .map_err(|e| format!("cannot write {}: {e}", companion.display()))?;
                    Some((path, pcap, drops, 0))
                }
                None => None,
            };
            schemes.push(SchemeFiles {
                scheme: variant.scheme,
                name: variant.name,
                frames,
                delivered,
            });
        }
        let per_packet = match &paths.per_packet {
            Some(path) => {
                let mut out = create(path)?;
                writeln!(
                    out,
                    "scheme,index,time,direction,kind,original_header_bytes,\
                     link_header_bytes,fate,reason"
                )
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Some((path.clone(), out))
            }
            None => None,
        };
        Ok(Outputs {
            schemes,
            current: None,
            per_packet,
            error: None,
        })
    }

    /// Writes one per-packet line, if asked for.
    fn per_packet_line(&mut self, line: std::fmt::Arguments<'_>) {
        let Some(name) = self.current.map(|i| self.schemes[i].name) else {
            return;
        };
        if let Some((path, out)) = &mut self.per_packet {
            if let Err(e) = writeln!(out, "{name},{line}") {
                self.error
                    .get_or_insert(format!("cannot write {}: {e}", path.display()));
            }
        }
    }

    /// The files of the scheme being run, unless a write already failed.
    fn files(&mut self) -> Option<&mut SchemeFiles> {
        if self.error.is_some() {
            return None;
        }
        self.current.map(|i| &mut self.schemes[i])
    }

    /// Writes a frame record into the current scheme's frames file.
    fn write_frame(&mut self, direction: usize, time: Duration, kind: FrameKind, frame: &[u8]) {
        let Some(files) = self.files() else { return };
        let scheme = files.scheme;
        if let Some((path, pcap)) = &mut files.frames {
            let record = frame_record(scheme, direction, kind, frame);
            if let Err(e) = pcap.write_packet(&PcapPacket::new(time, record.len() as u32, &record))
            {
                let problem = format!("cannot write {}: {e}", path.display());
                self.error = Some(problem);
            }
        }
    }
}

/// Seconds with microseconds, as the CSV files write times.
fn seconds(time: Duration) -> String {
    format!("{}.{:06}", time.as_secs(), time.subsec_micros())
}

impl Observer for Outputs {
    fn begin(&mut self, variant: &Variant) -> Result<(), String> {
        let next = self.current.map_or(0, |i| i + 1);
        match self.schemes.get(next) {
            Some(files) if files.name == variant.name => {
                self.current = Some(next);
                Ok(())
            }
            _ => Err(format!("no output files for scheme {variant}")),
        }
    }

    fn end(&mut self) -> Result<(), String> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let Some(files) = self.current.map(|i| &mut self.schemes[i]) else {
            return Ok(());
        };
        let flush = |path: &Path, out: &mut BufWriter<File>| {
            out.flush()
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        };
        // Closing the files: each pcap writer hands back its buffer, flushed here so that an
        // error is reported rather than lost in a drop.
        if let Some((path, pcap)) = files.frames.take() {
            flush(&path, &mut pcap.into_writer())?;
        }
        if let Some((path, pcap, mut drops, _)) = files.delivered.take() {
            flush(&path, &mut pcap.into_writer())?;
            flush(&drops_path(&path), &mut drops)?;
        }
        if let Some((path, out)) = &mut self.per_packet {
            flush(path, out)?;
        }
        Ok(())
    }

    fn feedback(&mut self, direction: usize, time: Duration, frame: &[u8], fate: Fate) {
        self.write_frame(direction, time, FrameKind::ContextState, frame);
        let fate = match fate {
            Fate::Delivered => PacketFate::Delivered,
            lost => PacketFate::LinkLost {
                bit_errors: lost == Fate::BitError,
            },
        };
        self.per_packet_line(format_args!(
            ",{},{},{},0,{},{},{}",
            seconds(time),
            DIRECTIONS[direction],
            FrameKind::ContextState.name(),
            1 + frame.len(),
            fate.name(),
            fate.reason()
        ));
    }

    fn frame(&mut self, direction: usize, time: Duration, kind: FrameKind, frame: &[u8]) {
        self.write_frame(direction, time, kind, frame);
    }

    fn packet(&mut self, sent: &Sent<'_>, outcome: Outcome<'_>) {
        let fate = PacketFate::of(sent, outcome);
        self.per_packet_line(format_args!(
            "{},{},{},{},{},{},{},{}",
            sent.index,
            seconds(sent.time),
            DIRECTIONS[sent.direction],
            sent.kind.name(),
            sent.original_header_bytes(),
            sent.link_header_bytes(),
            fate.name(),
            fate.reason()
        ));
        let Some(files) = self.files() else { return };
        let Some((path, pcap, drops, records)) = &mut files.delivered else {
            return;
        };
        let mut written = Ok(());
        if let Outcome::Delivered(packet) = outcome {
            written = pcap
                .write_packet(&PcapPacket::new(sent.time, packet.len() as u32, packet))
                .map(|_| *records += 1)
                .map_err(|e| format!("cannot write {}: {e}", path.display()));
        }
        if written.is_ok() && fate != PacketFate::Delivered {
            let record = match fate {
                PacketFate::Incorrect { .. } => records.to_string(),
                _ => String::new(),
            };
            written = writeln!(
                drops,
                "{},{},{},{},{},{},{record}",
                sent.index,
                seconds(sent.time),
                DIRECTIONS[sent.direction],
                sent.kind.name(),
                fate.name(),
                fate.reason()
            )
            .map_err(|e| format!("cannot write {}: {e}", drops_path(path).display()));
        }
        if let Err(problem) = written {
            self.error = Some(problem);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_schemes_get_one_file_each() {
        let path = Path::new("out/frames.pcap");
        assert_eq!(scheme_path(path, "vj"), Path::new("out/frames.vj.pcap"));
        assert_eq!(scheme_path(Path::new("f"), "iphc"), Path::new("f.iphc"));
        assert_eq!(
            drops_path(Path::new("d.taroc.pcap")),
            Path::new("d.taroc.drops.csv")
        );
    }

    #[test]
    fn frames_are_encapsulated_per_scheme() {
        let v4 = [0x45, 0, 0, 20];
        let v6 = [0x60, 0, 0, 0];
        assert_eq!(
            frame_record(Scheme::Vj, 1, FrameKind::CompressedTcp, &[9, 8]),
            [1, 0xFF, 0x03, 0x00, 0x2D, 9, 8]
        );
        assert_eq!(
            frame_record(Scheme::Taroc, 0, FrameKind::CompressedTcp, &[9, 8]),
            [0, 2, 9, 8]
        );
        for (scheme, kind, frame, protocol) in [
            (Scheme::None, FrameKind::Ip, &v4[..], 0x0021),
            (Scheme::Iphc, FrameKind::Ip, &v6, 0x0057),
            (Scheme::Vj, FrameKind::UncompressedTcp, &v4, 0x002F),
            (Scheme::Iphc, FrameKind::FullHeader, &v4, 0x0061),
            (Scheme::Iphc, FrameKind::CompressedTcp, &[1], 0x0063),
            (Scheme::Iphc, FrameKind::CompressedTcpNoDelta, &[1], 0x2063),
            (Scheme::Iphc, FrameKind::CompressedNonTcp, &[1], 0x0065),
            (Scheme::Iphc, FrameKind::ContextState, &[1], 0x2065),
        ] {
            assert_eq!(ppp_protocol(scheme, kind, frame), protocol, "{kind:?}");
        }
        assert_eq!(frames_link_type(Scheme::Taroc), DataLink::USER0);
        assert_eq!(frames_link_type(Scheme::Iphc), DataLink::PPP_WITH_DIR);
    }
}
