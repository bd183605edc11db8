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
//!   octet the link carries ([`FrameKind::to_byte`]: for the draft 0 `TYPE_IP`,
//!   1 `UNCOMPRESSED_TCP`, 2 `COMPRESSED_TCP`, 6 `CONTEXT_STATE`; for `taroc-plus` its own
//!   kinds, 0x08 and up, as `docs/taroc-plus-format.md` lays them out), then the frame.
//!   `wireshark/taroc.lua` decodes every kind of both.
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
//! `link_lost`). The lines come scheme by scheme, in the order the schemes were asked for: the
//! schemes run in lockstep, so every scheme but the first keeps its lines in an anonymous
//! temporary file beside `FILE.csv` until the end of the run.
//!
//! # Several schemes
//!
//! With one scheme, `--write-frames` and `--write-delivered` write `FILE` itself. With several,
//! each scheme gets its own file: `FILE` with the scheme's name inserted before the extension
//! (`frames.pcap` → `frames.vj.pcap`, `frames.taroc.pcap`, …). Every file is created before the
//! run starts, so an unwritable path fails at once.
//!
//! # Paths that are not regular files
//!
//! No name is derived from a path that exists and is not a regular file ([`Target`]): a
//! derived name beside a device would be a new file in `/dev`. `/dev/null` takes everything
//! meant for it (every scheme's file, and the companion CSV), which keeps nothing; any other
//! (a FIFO, a terminal, another device) takes one stream: `--write-frames` with one scheme, or
//! `--per-packet`. Asking more of it (several schemes' frames, or `--write-delivered`, a pcap
//! and a CSV) is refused before the run.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapWriter};
use pcap_file::{DataLink, PcapError};
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

/// The companion CSV of the delivered-packets pcap `delivered` as written: [`drops_path`], or
/// `delivered` itself if that is `/dev/null`.
fn companion_path(delivered: &Path) -> PathBuf {
    match Target::of(delivered) {
        Target::Null => delivered.to_path_buf(),
        _ => drops_path(delivered),
    }
}

/// What an output path is, which decides whether names are derived from it (see the module
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A regular file, or nothing yet (created), or a directory (whose creation then fails):
    /// names are derived from it.
    File,
    /// `/dev/null` (the device, under any name): everything meant for it goes to it.
    Null,
    /// Another file that is not a regular file, described: it takes one stream.
    Special(&'static str),
}

impl Target {
    /// What `path` is now.
    pub fn of(path: &Path) -> Target {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let Ok(metadata) = std::fs::metadata(path) else {
            return Target::File;
        };
        let kind = metadata.file_type();
        if kind.is_file() || kind.is_dir() {
            return Target::File;
        }
        let null = std::fs::metadata("/dev/null")
            .is_ok_and(|null| null.file_type().is_char_device() && null.rdev() == metadata.rdev());
        if null && kind.is_char_device() {
            Target::Null
        } else if kind.is_fifo() {
            Target::Special("a FIFO")
        } else if kind.is_char_device() {
            Target::Special("a character device")
        } else if kind.is_block_device() {
            Target::Special("a block device")
        } else if kind.is_socket() {
            Target::Special("a socket")
        } else {
            Target::Special("not a regular file")
        }
    }
}

/// A pcap writer's error as the operating system said it (the crate's own words for an I/O
/// error are "Error reading bytes", even when writing).
fn pcap_error(error: PcapError) -> String {
    match error {
        PcapError::IoError(e) => e.to_string(),
        other => other.to_string(),
    }
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
        FrameKind::Profile(_) => ppp_protocol(scheme, kind.family(), frame),
    }
}

/// The pcap record of one frame: the encapsulation of its scheme (see the module docs).
pub fn frame_record(scheme: Scheme, direction: usize, kind: FrameKind, frame: &[u8]) -> Vec<u8> {
    let mut record = Vec::with_capacity(frame.len() + 5);
    record.push(direction as u8);
    if matches!(scheme, Scheme::Taroc | Scheme::Plus) {
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
    if matches!(scheme, Scheme::Taroc | Scheme::Plus) {
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
    PcapWriter::with_header(create(path)?, crate::capture::pcap_header(datalink))
        .map_err(|e| cannot_write(path, pcap_error(e)))
}

/// The delivered pcap of one scheme, its companion CSV, and the records written so far.
type Delivered = (PathBuf, Pcap, BufWriter<File>, u64);

/// The files of one scheme.
struct SchemeFiles {
    scheme: Scheme,
    name: &'static str,
    frames: Option<(PathBuf, Pcap)>,
    delivered: Option<Delivered>,
    /// The scheme's per-packet lines until the end of the run (every scheme but the first,
    /// whose lines go straight into the per-packet file).
    per_packet: Option<BufWriter<File>>,
}

/// The output files of one evaluation: an [`Observer`] that writes every event it is told.
pub struct Outputs {
    schemes: Vec<SchemeFiles>,
    per_packet: Option<(PathBuf, BufWriter<File>)>,
    /// The first write error; the rest of the run writes nothing more.
    error: Option<String>,
}

const DIRECTIONS: [&str; 2] = ["forward", "reverse"];

/// The message of a failed write to `path`.
fn cannot_write(path: &Path, e: impl std::fmt::Display) -> String {
    format!("cannot write {}: {e}", path.display())
}

/// An anonymous temporary file in the directory of `path` (deleted when closed), or in the
/// system's temporary directory if `path` is not a regular file (`/dev` takes no files).
fn spill_beside(path: &Path) -> Result<BufWriter<File>, String> {
    let temp = std::env::temp_dir();
    let dir = match path.parent() {
        _ if Target::of(path) != Target::File => temp.as_path(),
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    tempfile::tempfile_in(dir)
        .map(BufWriter::new)
        .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))
}

impl Outputs {
    /// Creates every file `paths` asks for, for runs of `variants` in this order; refuses a
    /// path that is not a regular file if it would have to take more than one stream (see the
    /// module docs).
    pub fn create(paths: &OutputPaths, variants: &[Variant]) -> Result<Outputs, String> {
        let several = variants.len() > 1;
        if let Some(path) = &paths.frames {
            if let (Target::Special(kind), true) = (Target::of(path), several) {
                return Err(format!(
                    "--write-frames {}: {kind}, not a regular file, takes one stream, and {} \
                     schemes need a file each: give a file (or /dev/null), or one --scheme",
                    path.display(),
                    variants.len()
                ));
            }
        }
        if let Some(path) = &paths.delivered {
            if let Target::Special(kind) = Target::of(path) {
                return Err(format!(
                    "--write-delivered {}: {kind}, not a regular file, takes one stream, and \
                     this writes a pcap and a CSV beside it: give a file (or /dev/null)",
                    path.display()
                ));
            }
        }
        let path_of = |path: &Path, variant: &Variant| {
            if several && Target::of(path) == Target::File {
                scheme_path(path, variant.name)
            } else {
                path.to_path_buf()
            }
        };
        let per_packet = match &paths.per_packet {
            Some(path) => {
                let mut out = create(path)?;
                writeln!(
                    out,
                    "scheme,index,time,direction,kind,original_header_bytes,\
                     link_header_bytes,fate,reason"
                )
                .map_err(|e| cannot_write(path, e))?;
                Some((path.clone(), out))
            }
            None => None,
        };
        let mut schemes = Vec::with_capacity(variants.len());
        for (i, variant) in variants.iter().enumerate() {
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
                    let companion = companion_path(&path);
                    let mut drops = create(&companion)?;
                    writeln!(
                        drops,
                        "index,time,direction,kind,fate,reason,delivered_record"
                    )
                    .map_err(|e| cannot_write(&companion, e))?;
                    Some((path, pcap, drops, 0))
                }
                None => None,
            };
            let per_packet = match &per_packet {
                Some((path, _)) if i > 0 => Some(spill_beside(path)?),
                _ => None,
            };
            schemes.push(SchemeFiles {
                scheme: variant.scheme,
                name: variant.name,
                frames,
                delivered,
                per_packet,
            });
        }
        Ok(Outputs {
            schemes,
            per_packet,
            error: None,
        })
    }

    /// Writes one per-packet line of scheme `scheme`, if asked for.
    fn per_packet_line(&mut self, scheme: usize, line: std::fmt::Arguments<'_>) {
        if self.error.is_some() {
            return;
        }
        let Some((path, direct)) = &mut self.per_packet else {
            return;
        };
        let files = &mut self.schemes[scheme];
        let (out, problem) = match &mut files.per_packet {
            Some(spill) => (spill, "a temporary file beside "),
            None => (direct, ""),
        };
        if let Err(e) = writeln!(out, "{},{line}", files.name) {
            self.error = Some(format!("cannot write {problem}{}: {e}", path.display()));
        }
    }

    /// The files of scheme `scheme`, unless a write already failed.
    fn files(&mut self, scheme: usize) -> Option<&mut SchemeFiles> {
        if self.error.is_some() {
            return None;
        }
        self.schemes.get_mut(scheme)
    }

    /// Writes a frame record into the frames file of scheme `scheme`.
    fn write_frame(
        &mut self,
        scheme: usize,
        direction: usize,
        time: Duration,
        kind: FrameKind,
        frame: &[u8],
    ) {
        let Some(files) = self.files(scheme) else {
            return;
        };
        let scheme = files.scheme;
        if let Some((path, pcap)) = &mut files.frames {
            let record = frame_record(scheme, direction, kind, frame);
            if let Err(e) = pcap.write_packet(&PcapPacket::new(time, record.len() as u32, &record))
            {
                self.error = Some(cannot_write(path, pcap_error(e)));
            }
        }
    }

    /// Closes every file: each pcap writer hands back its buffer, flushed here so that an error
    /// is reported rather than lost in a drop; the schemes' per-packet lines are appended to
    /// the per-packet file in order.
    fn close(&mut self) -> Result<(), String> {
        let flush =
            |path: &Path, out: &mut BufWriter<File>| out.flush().map_err(|e| cannot_write(path, e));
        for files in &mut self.schemes {
            if let Some((path, pcap)) = files.frames.take() {
                flush(&path, &mut pcap.into_writer())?;
            }
            if let Some((path, pcap, mut drops, _)) = files.delivered.take() {
                flush(&path, &mut pcap.into_writer())?;
                flush(&companion_path(&path), &mut drops)?;
            }
        }
        if let Some((path, mut out)) = self.per_packet.take() {
            for files in &mut self.schemes {
                if let Some(spill) = files.per_packet.take() {
                    let mut lines = spill.into_inner().map_err(|e| {
                        format!(
                            "cannot write a temporary file beside {}: {e}",
                            path.display()
                        )
                    })?;
                    lines
                        .seek(SeekFrom::Start(0))
                        .and_then(|_| std::io::copy(&mut lines, &mut out))
                        .map_err(|e| cannot_write(&path, e))?;
                }
            }
            flush(&path, &mut out)?;
        }
        Ok(())
    }
}

/// Seconds with microseconds, as the CSV files write times.
fn seconds(time: Duration) -> String {
    format!("{}.{:06}", time.as_secs(), time.subsec_micros())
}

impl Observer for Outputs {
    fn feedback(
        &mut self,
        scheme: usize,
        direction: usize,
        time: Duration,
        frame: &[u8],
        fate: Fate,
    ) {
        self.write_frame(scheme, direction, time, FrameKind::ContextState, frame);
        let fate = match fate {
            Fate::Delivered => PacketFate::Delivered,
            lost => PacketFate::LinkLost {
                bit_errors: lost == Fate::BitError,
            },
        };
        self.per_packet_line(
            scheme,
            format_args!(
                ",{},{},{},0,{},{},{}",
                seconds(time),
                DIRECTIONS[direction],
                FrameKind::ContextState.name(),
                1 + frame.len(),
                fate.name(),
                fate.reason()
            ),
        );
    }

    fn frame(
        &mut self,
        scheme: usize,
        direction: usize,
        time: Duration,
        kind: FrameKind,
        frame: &[u8],
    ) {
        self.write_frame(scheme, direction, time, kind, frame);
    }

    fn packet(&mut self, scheme: usize, sent: &Sent<'_>, outcome: Outcome<'_>) {
        let fate = PacketFate::of(sent, outcome);
        self.per_packet_line(
            scheme,
            format_args!(
                "{},{},{},{},{},{},{},{}",
                sent.index,
                seconds(sent.time),
                DIRECTIONS[sent.direction],
                sent.kind.name(),
                sent.original_header_bytes(),
                sent.link_header_bytes(),
                fate.name(),
                fate.reason()
            ),
        );
        let Some(files) = self.files(scheme) else {
            return;
        };
        let Some((path, pcap, drops, records)) = &mut files.delivered else {
            return;
        };
        let mut written = Ok(());
        if let Outcome::Delivered(packet) | Outcome::Late(packet) = outcome {
            written = pcap
                .write_packet(&PcapPacket::new(sent.time, packet.len() as u32, packet))
                .map(|_| *records += 1)
                .map_err(|e| cannot_write(path, pcap_error(e)));
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
            .map_err(|e| cannot_write(&companion_path(path), e));
        }
        if let Err(problem) = written {
            self.error = Some(problem);
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        match self.error.take() {
            Some(error) => Err(error),
            None => self.close(),
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

    /// The files a test may create beside `/dev/null` by mistake: removed (they are the
    /// test's own, as they were not there before) and reported.
    fn beside_dev_null() -> Vec<PathBuf> {
        ["none", "vj", "none.drops.csv", "vj.drops.csv", "drops.csv"]
            .iter()
            .map(|suffix| PathBuf::from(format!("/dev/null.{suffix}")))
            .collect()
    }

    #[test]
    fn dev_null_takes_every_file_and_gets_no_names_derived() {
        let two: Vec<Variant> = ["none", "vj"]
            .iter()
            .map(|name| Variant::parse(name).unwrap())
            .collect();
        let before: Vec<bool> = beside_dev_null().iter().map(|p| p.exists()).collect();
        let null = Some(PathBuf::from("/dev/null"));
        let paths = OutputPaths {
            frames: null.clone(),
            delivered: null.clone(),
            per_packet: null,
        };
        let created = Outputs::create(&paths, &two).map(|mut o| o.finish());
        let mut made = Vec::new();
        for (path, existed) in beside_dev_null().into_iter().zip(before) {
            if !existed && path.exists() {
                let _ = std::fs::remove_file(&path);
                made.push(path);
            }
        }
        assert!(made.is_empty(), "created {made:?}");
        assert_eq!(created, Ok(Ok(())));
        assert_eq!(Target::of(Path::new("/dev/null")), Target::Null);
        assert_eq!(Target::of(Path::new("/nonexistent/f.pcap")), Target::File);
    }

    #[test]
    fn a_fifo_takes_one_stream_only() {
        let dir = std::env::temp_dir().join(format!("taroc-output-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("frames.pcap");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            println!("notice: mkfifo failed; skipping the FIFO test");
            return;
        }
        assert_eq!(Target::of(&fifo), Target::Special("a FIFO"));
        let two: Vec<Variant> = ["none", "vj"]
            .iter()
            .map(|name| Variant::parse(name).unwrap())
            .collect();
        let frames = OutputPaths {
            frames: Some(fifo.clone()),
            ..OutputPaths::default()
        };
        let e = Outputs::create(&frames, &two).err().unwrap();
        assert!(
            e.contains("--write-frames") && e.contains("a FIFO") && e.contains("one --scheme"),
            "{e}"
        );
        let delivered = OutputPaths {
            delivered: Some(fifo.clone()),
            ..OutputPaths::default()
        };
        let e = Outputs::create(&delivered, &two[..1]).err().unwrap();
        assert!(
            e.contains("--write-delivered") && e.contains("a FIFO"),
            "{e}"
        );
        // Nothing was created beside it.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["frames.pcap"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_says_writing_and_names_the_file() {
        let full = std::io::Error::from_raw_os_error(28);
        let e = cannot_write(Path::new("f.pcap"), pcap_error(PcapError::IoError(full)));
        assert!(e.starts_with("cannot write f.pcap: No space left"), "{e}");
        assert!(!e.contains("reading"), "{e}");
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
