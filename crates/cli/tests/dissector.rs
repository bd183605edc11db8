//! The Wireshark dissector `wireshark/taroc.lua` against our own code, for every frame kind of
//! every scheme `taroc eval --write-frames` writes.
//!
//! - `taroc-plus` and `taroc-plus-u`: captures that together hold every kind byte the profile
//!   sends (checked), read by tshark with the dissector. Per frame: tshark's kind, form, family
//!   and CID are those of our encapsulation, of `taroc_core`'s format functions and of the
//!   `--per-packet` CSV; no frame is unknown, malformed or a Lua error; and every field tshark
//!   reads agrees with the frame's original packet (the CSV's `index` into the capture): whole
//!   fields are equal, LSBs are the low bits of the value (divided by the stride tshark names),
//!   a mirror's differences are those from the reference packet its checksum names.
//! - `taroc` and `taroc-repair`: every kind they send, decoded as that kind with our CID
//!   (`outputs.rs` compares their fields).
//! - `vj` and `iphc`: every kind they send, under its PPP protocol number, handed to Wireshark's
//!   own dissector for it, none malformed.
//!
//! The taroc-plus test runs on the repository's captures, a lossy link and a capture made here
//! (IR-R with both ports whole, TYPE_IP, IP-in-IP); `TAROC_DISSECTOR_ALL=1` adds every capture
//! of `captures/unseen`, `captures/twins` and `../shared/captures/linux`, and
//! `TAROC_DISSECTOR_CAPTURES=a.pcap:b.pcap` any others.
//!
//! Without tshark the tests are skipped with a notice, unless the environment variable `CI` is
//! set (then they fail). The DNS payloads of the mixed captures are made up (Wireshark reports
//! the captures' own DNS packets as malformed), so tshark runs with DNS off.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::DataLink;
use taroc_cli::capture::{self, Capture};
use taroc_core::plus::compact::CompactIr;
use taroc_core::plus::ir_r::{self, IrR};
use taroc_core::plus::packed::PackedIr;
use taroc_core::plus::{cids, co, format, mirror, other, seal};
use taroc_core::tcp::packet::FlowKey;
use taroc_core::FrameKind;

const DISSECTOR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../wireshark/taroc.lua");
const REPO_CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");
const SHARED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/captures/linux"
);

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taroc-dissector-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether tshark runs; if not, fails under CI and returns false otherwise.
fn tshark_available() -> bool {
    let found = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark is not installed, and CI is set: install it (apt-get install -y tshark)"
        );
        println!("notice: tshark is not installed; skipping the tshark check");
    }
    found
}

/// Runs `taroc eval` with `args`.
fn eval(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .arg("eval")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "taroc eval {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The link type and the records of a pcap file.
fn records(path: &Path) -> (DataLink, Vec<Vec<u8>>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = PcapReader::new(file).unwrap();
    let datalink = reader.header().datalink;
    let mut out = Vec::new();
    while let Some(packet) = reader.next_packet() {
        out.push(packet.unwrap().data.into_owned());
    }
    (datalink, out)
}

/// One line of the `--per-packet` CSV: the packet's index (none for feedback), direction, kind.
struct Row {
    index: Option<usize>,
    direction: u8,
    kind: String,
}

fn rows(csv: &Path, scheme: &str) -> Vec<Row> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| line.split(',').collect::<Vec<_>>())
        // A held packet delivered late has a second row, not a frame of its own.
        .filter(|cols| cols[0] == scheme && cols[7] != "delivered_late")
        .map(|cols| Row {
            index: cols[1].parse().ok(),
            direction: u8::from(cols[3] == "reverse"),
            kind: cols[4].to_string(),
        })
        .collect()
}

/// tshark's values of `fields` for every record of `file`, dissector loaded: per record, each
/// field's occurrences.
fn tshark(file: &Path, fields: &[&str], extra: &[&str]) -> Vec<Fields> {
    let mut command = Command::new("tshark");
    command
        .args(["-X", &format!("lua_script:{DISSECTOR}")])
        .args(["--disable-protocol", "dns"])
        .args(extra)
        .arg("-r")
        .arg(file)
        .args(["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"]);
    for field in fields {
        command.args(["-e", field]);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let values = line
                .split('\t')
                .map(|v| {
                    v.split('|')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .collect::<Vec<Vec<String>>>();
            Fields(
                fields
                    .iter()
                    .map(|f| f.to_string())
                    .zip(values.into_iter().chain(std::iter::repeat(Vec::new())))
                    .collect(),
            )
        })
        .collect()
}

/// One record's tshark values, by field name.
struct Fields(HashMap<String, Vec<String>>);

impl Fields {
    fn strings(&self, name: &str) -> &[String] {
        self.0.get(name).map_or(&[], Vec::as_slice)
    }
    fn numbers(&self, name: &str) -> Vec<i64> {
        self.strings(name).iter().map(|s| number(s)).collect()
    }
    /// The field's value if it occurs (its first occurrence).
    fn get(&self, name: &str) -> Option<i64> {
        self.numbers(name).first().copied()
    }
    fn has(&self, name: &str) -> bool {
        !self.strings(name).is_empty()
    }
}

fn number(s: &str) -> i64 {
    match s.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).unwrap(),
        None => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
    }
}

/// The expert messages that say a frame was not read: every one but other protocols' notes.
fn errors(fields: &Fields) -> Vec<String> {
    let mut out: Vec<String> = fields
        .strings("_ws.expert.message")
        .iter()
        .filter(|m| {
            [
                "Malformed TAROC",
                "Dissector error",
                "A kind byte",
                "No frame",
                "No IR-N",
                "Lua Error",
                "Q or Z",
                "The check",
            ]
            .iter()
            .any(|p| m.starts_with(p))
        })
        .cloned()
        .collect();
    if fields.has("_ws.malformed") {
        out.push("_ws.malformed".to_string());
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The original packets, as the checks read them.

/// An IP header of a packet of the captures (IPv4, or IPv6 without extension headers).
struct Ip<'a> {
    bytes: &'a [u8],
    v4: bool,
    header: usize,
    proto: u8,
    id: u16,
    frag: u16,
    ttl: u8,
}

fn ip(bytes: &[u8]) -> Ip<'_> {
    let be16 = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
    if bytes[0] >> 4 == 4 {
        Ip {
            bytes,
            v4: true,
            header: usize::from(bytes[0] & 0x0F) * 4,
            proto: bytes[9],
            id: be16(4),
            frag: be16(6),
            ttl: bytes[8],
        }
    } else {
        Ip {
            bytes,
            v4: false,
            header: 40,
            proto: bytes[6],
            id: 0,
            frag: 0,
            ttl: bytes[7],
        }
    }
}

impl Ip<'_> {
    fn addresses(&self) -> (IpAddr, IpAddr) {
        let b = self.bytes;
        if self.v4 {
            let a = |at: usize| IpAddr::from(<[u8; 4]>::try_from(&b[at..at + 4]).unwrap());
            (a(12), a(16))
        } else {
            let a = |at: usize| IpAddr::from(<[u8; 16]>::try_from(&b[at..at + 16]).unwrap());
            (a(8), a(24))
        }
    }
    /// The inner packet of an IP-in-IP packet.
    fn inner(&self) -> Option<&[u8]> {
        let unfragmented = !self.v4 || self.frag & 0x3FFF == 0;
        ((self.proto == 4 || self.proto == 41) && unfragmented).then(|| &self.bytes[self.header..])
    }
    fn payload(&self) -> &[u8] {
        &self.bytes[self.header..]
    }
}

/// A TCP header and what the checks read of it.
#[derive(Debug, Clone)]
struct Tcp {
    flow: FlowKey,
    seq: u32,
    ack: u32,
    offset: usize,
    flags: u8,
    r_octet: u8,
    win: u16,
    checksum: u16,
    urgent: u16,
    ts: Option<(u32, u32)>,
    sack: Vec<(u32, u32)>,
    mss: Option<u16>,
    wscale: Option<u8>,
    payload: usize,
}

impl Tcp {
    fn next_seq(&self) -> u32 {
        let extra = u32::from(self.flags & 0x02 != 0) + u32::from(self.flags & 0x01 != 0);
        self.seq
            .wrapping_add(self.payload as u32)
            .wrapping_add(extra)
    }
}

fn tcp(ip: &Ip<'_>) -> Option<Tcp> {
    if ip.proto != 6 || ip.bytes.len() < ip.header + 20 {
        return None;
    }
    let t = ip.payload();
    let be16 = |at: usize| u16::from_be_bytes([t[at], t[at + 1]]);
    let be32 = |at: usize| u32::from_be_bytes([t[at], t[at + 1], t[at + 2], t[at + 3]]);
    let offset = usize::from(t[12] >> 4) * 4;
    let (src, dst) = ip.addresses();
    let mut out = Tcp {
        flow: FlowKey {
            src,
            dst,
            src_port: be16(0),
            dst_port: be16(2),
        },
        seq: be32(4),
        ack: be32(8),
        offset,
        flags: t[13],
        r_octet: (t[12] & 0x0F) << 4
            | (t[13] >> 6) << 2
            | if ip.v4 {
                ip.bytes[1] & 0x03
            } else {
                (ip.bytes[1] >> 4) & 0x03
            },
        win: be16(14),
        checksum: be16(16),
        urgent: be16(18),
        ts: None,
        sack: Vec::new(),
        mss: None,
        wscale: None,
        payload: t.len().saturating_sub(offset),
    };
    let mut at = 20;
    while at < offset.min(t.len()) {
        match t[at] {
            0 => break,
            1 => at += 1,
            kind => {
                let len = usize::from(*t.get(at + 1).unwrap_or(&0));
                let Some(o) = t.get(at..at + len).filter(|_| len >= 2) else {
                    break;
                };
                match kind {
                    2 if len == 4 => out.mss = Some(u16::from_be_bytes([o[2], o[3]])),
                    3 if len == 3 => out.wscale = Some(o[2]),
                    5 => {
                        for b in o[2..].chunks_exact(8) {
                            let w =
                                |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                            out.sack.push((w(0), w(4)));
                        }
                    }
                    8 if len == 10 => {
                        let w = |i: usize| u32::from_be_bytes([o[i], o[i + 1], o[i + 2], o[i + 3]]);
                        out.ts = Some((w(2), w(6)));
                    }
                    _ => {}
                }
                at += len.max(2);
            }
        }
    }
    Some(out)
}

fn reversed(flow: &FlowKey) -> FlowKey {
    FlowKey {
        src: flow.dst,
        dst: flow.src,
        src_port: flow.dst_port,
        dst_port: flow.src_port,
    }
}

fn mask(v: u64, bits: i64) -> i64 {
    (v & ((1u64 << bits) - 1)) as i64
}

// ---------------------------------------------------------------------------------------------
// Our reading of a taroc-plus frame: its form and CID.

/// The form of a taroc-plus frame of kind byte `kind`, as the dissector names it.
fn our_form(kind: u8, frame: &[u8]) -> String {
    let form = match kind {
        0 => "TYPE_IP",
        6 => "CONTEXT_STATE",
        format::IR => "IR",
        format::IR_R | format::IR_R_SOURCE_KEPT | format::IR_R_DEST_KEPT => "IR-R",
        other::IR_N if other::is_replica(frame) => "replicated IR-N",
        other::IR_N => "IR-N",
        format::IR_S => "IR-S",
        format::COMPACT_SYN => "compact SYN",
        format::COMPACT_IR => {
            let view = CompactIr::new_checked(frame).expect("a compact IR's head");
            return match (view.is_short(), view.mirror_flags()) {
                (true, _) => "compact IR, short form",
                (false, 0) => "compact IR",
                (false, m) if m & format::ir::NUMBERED != 0 => "compact IR, mirrored, numbers",
                (false, _) => "compact IR, mirrored",
            }
            .to_string();
        }
        format::PACKED_IR => "packed IR",
        other::CO_N_LONG => "CO-N",
        other::CO_I | other::CO_I_CID => "CO-I",
        _ if other::short_of(kind).is_some() => "CO-S",
        other::TUNNEL => "tunnel",
        cids::PREFIX..cids::SHORT => "CO, CID prefix",
        cids::SHORT..format::CO => "CO, short code",
        _ => "CO",
    };
    form.to_string()
}

/// The CID of a taroc-plus frame (the inner frame's for a tunnel frame), if it has one.
fn our_cid(kind: u8, frame: &[u8]) -> Option<u8> {
    let length_field = |frame: &[u8]| frame[usize::from(frame[0] >> 4 == 6) * 2 + 3];
    match kind {
        // A replicated IR-N: | form | flags | CID | base CID | ...
        other::IR_N if other::is_replica(frame) => Some(frame[2]),
        format::IR | other::IR_N => Some(length_field(frame)),
        k if ir_r::mode(k).is_some() => IrR::parse(ir_r::mode(k)?, frame).ok().map(|f| f.cid),
        format::COMPACT_IR => CompactIr::new_checked(frame).map(|f| f.cid()),
        format::PACKED_IR => PackedIr::new_checked(frame).ok().map(|f| f.cid()),
        other::CO_N..=other::CO_N_LAST => other::cid_of(kind, frame),
        other::TUNNEL => {
            let (inner, at) = tunnel_inner(frame);
            our_cid(inner, &frame[at..])
        }
        cids::PREFIX..format::CO => cids::read(kind, frame).map(|(cid, _, _)| cid),
        format::CO..=FrameKind::PROFILE_LAST => co::Head::parse(kind, None, frame)
            .ok()
            .map(|(head, _)| head.cid),
        _ => None,
    }
}

/// A tunnel frame's inner kind byte and where its inner frame starts: after the CO-N kind
/// byte and header part (`| flags | CID | sequence | IP-ID | fragment field | check |`; an
/// outer context is neither in UDP, RTP nor echo mode, section 8.1).
fn tunnel_inner(frame: &[u8]) -> (u8, usize) {
    assert_eq!(
        frame[0],
        other::CO_N_LONG,
        "a tunnel frame's outer kind byte"
    );
    let flags = frame[1];
    let at = 2
        + usize::from(flags & other::flag::C != 0)
        + usize::from((flags >> other::flag::S_SHIFT) & 0x03)
        + usize::from((flags >> other::flag::I_SHIFT) & 0x03)
        + 2 * usize::from(flags & other::flag::F != 0)
        + 2
        + 2 * usize::from(flags & other::flag::K != 0);
    (frame[at], at + 1)
}

// ---------------------------------------------------------------------------------------------
// The taroc-plus checks.

/// Every field the taroc-plus checks read.
const PLUS_FIELDS: &[&str] = &[
    "taroc.direction",
    "taroc.kind",
    "taroc.form",
    "taroc.family",
    "taroc.profile",
    "taroc.cid",
    "taroc.data_len",
    "taroc.plus.tcp_flags",
    "taroc.plus.seq",
    "taroc.plus.seq.bits",
    "taroc.plus.seq.stride",
    "taroc.plus.ack",
    "taroc.plus.ack.bits",
    "taroc.plus.ack.stride",
    "taroc.plus.ctx.seq_stride",
    "taroc.plus.ip_id.behaviour",
    "taroc.plus.ip_id",
    "taroc.plus.ip_id.bits",
    "taroc.plus.ip_id.random",
    "taroc.plus.ts_val",
    "taroc.plus.ts_val.bits",
    "taroc.plus.ts_ecr",
    "taroc.plus.ts_gap",
    "taroc.plus.ts_ecr.bits",
    "taroc.plus.window",
    "taroc.plus.window.bits",
    "taroc.plus.sack.stride",
    "taroc.plus.sack.offset",
    "taroc.plus.sack.size",
    "taroc.plus.r_octet",
    "taroc.plus.urgent",
    "taroc.plus.outer_id.code",
    "taroc.plus.outer_id.offset",
    "taroc.plus.outer_id.value",
    "taroc.plus.f.ip_id",
    "taroc.plus.f.ttl",
    "taroc.plus.f.src",
    "taroc.plus.f.dst",
    "taroc.plus.f.src6",
    "taroc.plus.f.dst6",
    "taroc.plus.f.sport",
    "taroc.plus.f.dport",
    "taroc.plus.f.seq",
    "taroc.plus.f.ack",
    "taroc.plus.f.data_offset",
    "taroc.plus.f.tcp_flags",
    "taroc.plus.f.window",
    "taroc.plus.f.checksum",
    "taroc.plus.f.mss",
    "taroc.plus.f.wscale",
    "taroc.plus.f.ts_val",
    "taroc.plus.f.ts_ecr",
    "taroc.plus.d.seq",
    "taroc.plus.d.ack",
    "taroc.plus.d.window",
    "taroc.plus.d.ts_val",
    "taroc.plus.d.ts_ecr",
    "taroc.plus.ref_checksum",
    "taroc.plus.irs.ext.r",
    "taroc.plus.n.mode",
    "taroc.plus.n.seq_lsbs",
    "taroc.plus.n.seq_lsbs.bits",
    "taroc.plus.n.co_i.s3",
    "taroc.plus.n.seq",
    "taroc.plus.n.ip_id",
    "taroc.plus.n.ip_id.bits",
    "taroc.plus.n.ip_id.value",
    "taroc.plus.n.frag",
    "taroc.plus.n.crc",
    "taroc.plus.n.checksum",
    "taroc.plus.n.checksum_computed",
    "taroc.plus.n.payload_len",
    "taroc.plus.base_cid",
    "taroc.plus.n.replica.changes",
    "taroc.plus.n.replica.word_index",
    "taroc.plus.n.replica.word",
    "taroc.plus.n.rtp_ts",
    "taroc.plus.n.marker",
    "taroc.plus.n.stride",
    "taroc.plus.n.header",
    "taroc.plus.n.crc_ok",
    "taroc.plus.tunnel.seq_lsbs",
    "taroc.plus.tunnel.seq_lsbs.bits",
    "taroc.plus.tunnel.seq",
    "taroc.plus.tunnel.ip_id",
    "taroc.plus.tunnel.ip_id.bits",
    "taroc.plus.tunnel.outer_id",
    "taroc.plus.tunnel.frag",
    "taroc.plus.tunnel.crc",
    "taroc.plus.tunnel.inner_kind",
    "taroc.plus.fb.type",
    "taroc.plus.fb.cid",
    "taroc.plus.fb.checksum",
    "ip.len",
    "ip.id",
    "ipv6.plen",
    "udp.length",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.window_size_value",
    "tcp.checksum",
    "tcp.len",
    "frame.protocols",
    "_ws.expert.message",
    "_ws.malformed",
];

/// A flow's context: its direction, the outer addresses of a tunnelled packet, the flow.
type ContextKey = (u8, Option<(IpAddr, IpAddr)>, FlowKey);

/// What the checks of one file keep from frame to frame.
#[derive(Default)]
struct Run {
    /// Per direction, the TCP packets so far (inner ones of tunnels), newest last: the
    /// references a mirror's numbers name.
    sent: [Vec<Tcp>; 2],
    /// The CID of each flow's context, as its last IR frame set it (per direction, outer
    /// addresses of a tunnelled packet, flow).
    cids: HashMap<ContextKey, u8>,
    /// Frames whose mirror the dissector did not know (it took the IP version of the frames
    /// before).
    guessed: usize,
}

/// What the whole test saw: forms, kind bytes, feedback types.
#[derive(Default)]
struct Seen {
    forms: BTreeMap<String, usize>,
    kinds: BTreeSet<u8>,
    feedback: BTreeSet<u8>,
    frames: usize,
}

/// The reference a mirror's numbers name: the newest packet the other direction sent of `flow`
/// (any flow if `None`) with TCP checksum field `checksum`.
fn reference<'a>(run: &'a Run, direction: u8, flow: Option<&FlowKey>, checksum: i64) -> &'a Tcp {
    run.sent[usize::from(1 - direction)]
        .iter()
        .rev()
        .find(|p| i64::from(p.checksum) == checksum && flow.is_none_or(|f| p.flow == *f))
        .unwrap_or_else(|| panic!("no reference with checksum {checksum:#x}"))
}

/// Checks a CO frame's (or an IR-R body's) fields against its packet `p` (`outer`: the outer
/// header of a tunnelled packet).
fn check_co(t: &Fields, p: &Tcp, inner: &Ip<'_>, outer: Option<&Ip<'_>>, at: &str) {
    let stride_of = |v: u32, stride: i64| {
        if stride > 0 {
            u64::from(v / stride as u32)
        } else {
            u64::from(v)
        }
    };
    let seq_stride = t.get("taroc.plus.seq.stride").unwrap();
    let seq_bits = t.get("taroc.plus.seq.bits").unwrap();
    assert_eq!(
        t.get("taroc.plus.seq"),
        Some(mask(stride_of(p.seq, seq_stride), seq_bits)),
        "{at}: sequence LSBs"
    );
    let ack_stride = t.get("taroc.plus.ack.stride").unwrap();
    let ack_bits = t.get("taroc.plus.ack.bits").unwrap();
    assert_eq!(
        t.get("taroc.plus.ack"),
        Some(mask(stride_of(p.ack, ack_stride), ack_bits)),
        "{at}: acknowledgment LSBs"
    );
    match t.get("taroc.plus.ip_id.behaviour") {
        Some(3) => assert_eq!(
            t.get("taroc.plus.ip_id.random"),
            Some(i64::from(inner.id)),
            "{at}"
        ),
        Some(2) => assert_eq!(inner.id, 0, "{at}: a zero IP-ID"),
        Some(b) => {
            let counter = if b == 1 {
                inner.id.swap_bytes()
            } else {
                inner.id
            };
            let stride = t.get("taroc.plus.ctx.seq_stride").unwrap();
            let q = if stride > 0 { p.seq / stride as u32 } else { 0 };
            let offset = counter.wrapping_sub(q as u16);
            let bits = t.get("taroc.plus.ip_id.bits").unwrap();
            assert_eq!(
                t.get("taroc.plus.ip_id"),
                Some(mask(u64::from(offset), bits)),
                "{at}: IP-ID offset LSBs"
            );
        }
        None => panic!("{at}: no IP-ID behaviour"),
    }
    match p.ts {
        Some((val, ecr)) => {
            let bits = t.get("taroc.plus.ts_val.bits").unwrap();
            assert_eq!(
                t.get("taroc.plus.ts_val"),
                Some(mask(u64::from(val), bits)),
                "{at}: TS value"
            );
            let bits = t.get("taroc.plus.ts_ecr.bits").unwrap();
            match t.get("taroc.plus.ts_gap") {
                Some(gap) => assert_eq!(
                    gap,
                    mask(u64::from(val.wrapping_sub(ecr)), bits),
                    "{at}: TS gap"
                ),
                None => assert_eq!(
                    t.get("taroc.plus.ts_ecr"),
                    Some(mask(u64::from(ecr), bits)),
                    "{at}: TS echo"
                ),
            }
        }
        None => assert!(!t.has("taroc.plus.ts_val"), "{at}: timestamps"),
    }
    if let Some(lsbs) = t.get("taroc.plus.window") {
        let bits = t.get("taroc.plus.window.bits").unwrap();
        assert_eq!(lsbs, mask(u64::from(p.win), bits), "{at}: window");
    }
    let offsets = t.numbers("taroc.plus.sack.offset");
    let sizes = t.numbers("taroc.plus.sack.size");
    let stride = t.get("taroc.plus.sack.stride").unwrap_or(1);
    let blocks: Vec<(i64, i64)> = p
        .sack
        .iter()
        .map(|&(left, right)| {
            (
                i64::from(left.wrapping_sub(p.ack)),
                i64::from(right.wrapping_sub(left)),
            )
        })
        .collect();
    let sent: Vec<(i64, i64)> = offsets
        .iter()
        .zip(&sizes)
        .map(|(o, s)| (o * stride, s * stride))
        .collect();
    assert_eq!(sent, blocks, "{at}: SACK blocks");
    if let Some(r) = t.get("taroc.plus.r_octet") {
        assert_eq!(r, i64::from(p.r_octet), "{at}: R-octet");
    }
    if let Some(u) = t.get("taroc.plus.urgent") {
        assert_eq!(u, i64::from(p.urgent), "{at}: urgent pointer");
    }
    if let (Some(outer), Some(code)) = (outer, t.get("taroc.plus.outer_id.code")) {
        if code == 0 {
            let offset = outer.id.wrapping_sub(inner.id);
            assert_eq!(
                t.get("taroc.plus.outer_id.offset"),
                Some(i64::from(offset & 0xFF)),
                "{at}: outer offset"
            );
        } else {
            assert_eq!(
                t.get("taroc.plus.outer_id.value"),
                Some(i64::from(outer.id)),
                "{at}"
            );
        }
    }
}

/// Checks the whole header fields (and differences) of a compact IR, compact SYN, packed IR or
/// IR-S against its packet.
fn check_whole(t: &Fields, run: &Run, direction: u8, p: &Tcp, ip: &Ip<'_>, form: &str, at: &str) {
    let whole = |name: &str, value: i64| {
        if let Some(v) = t.get(name) {
            assert_eq!(v, value, "{at}: {name}");
        }
    };
    whole("taroc.plus.f.seq", i64::from(p.seq));
    whole(
        "taroc.plus.f.ack",
        i64::from(if p.flags & 0x10 != 0 { p.ack } else { 0 }),
    );
    whole("taroc.plus.f.window", i64::from(p.win));
    whole("taroc.plus.f.tcp_flags", i64::from(p.flags));
    whole("taroc.plus.f.data_offset", p.offset as i64);
    whole("taroc.plus.f.sport", i64::from(p.flow.src_port));
    whole("taroc.plus.f.dport", i64::from(p.flow.dst_port));
    if ip.v4 {
        whole("taroc.plus.f.ip_id", i64::from(ip.id));
    }
    if form != "IR-S" {
        whole("taroc.plus.f.ttl", i64::from(ip.ttl));
    }
    whole("taroc.plus.f.mss", p.mss.map_or(-1, i64::from));
    whole("taroc.plus.f.wscale", p.wscale.map_or(-1, i64::from));
    if let Some((val, ecr)) = p.ts {
        whole("taroc.plus.f.ts_val", i64::from(val));
        whole("taroc.plus.f.ts_ecr", i64::from(ecr));
    }
    for (name, addr) in [
        ("taroc.plus.f.src", p.flow.src),
        ("taroc.plus.f.dst", p.flow.dst),
        ("taroc.plus.f.src6", p.flow.src),
        ("taroc.plus.f.dst6", p.flow.dst),
    ] {
        if let Some(s) = t.strings(name).first() {
            assert_eq!(s.parse::<IpAddr>().unwrap(), addr, "{at}: {name}");
        }
    }
    if let Some(c) = t.get("taroc.plus.f.checksum") {
        let expected = match form {
            // Sealed: the seal needs the rebuilt packet, which the checks do not make.
            "IR-S" => c,
            "compact IR" | "compact SYN" => i64::from(p.checksum),
            _ => i64::from(p.checksum ^ mirror::flow_hash(&p.flow)),
        };
        // Numbers against a reference: their seal too (format section 3.4).
        let expected = match t.get("taroc.plus.ref_checksum") {
            Some(_) if form != "IR-S" => {
                expected ^ i64::from(seal::numbers_seal(p.seq, p.ack, p.win, p.ts))
            }
            _ => expected,
        };
        assert_eq!(c, expected, "{at}: TCP checksum field");
    }
    assert_eq!(
        t.get("taroc.data_len"),
        Some(p.payload as i64),
        "{at}: data length"
    );
    // Mirror numbers: differences from the reference the checksum names (section 3.4).
    if let Some(checksum) = t.get("taroc.plus.ref_checksum") {
        let named = form == "IR-S" && t.get("taroc.plus.irs.ext.r") == Some(1);
        let mirror = reversed(&p.flow);
        let r = reference(run, direction, (!named).then_some(&mirror), checksum);
        let add = |base: u32, name: &str| base.wrapping_add(t.get(name).unwrap() as u32);
        if t.has("taroc.plus.d.seq") {
            assert_eq!(
                add(r.ack, "taroc.plus.d.seq"),
                p.seq,
                "{at}: sequence difference"
            );
        }
        assert_eq!(
            add(r.next_seq(), "taroc.plus.d.ack"),
            p.ack,
            "{at}: ack difference"
        );
        if t.has("taroc.plus.d.window") {
            let w = add(u32::from(r.win), "taroc.plus.d.window") as u16;
            assert_eq!(w, p.win, "{at}: window difference");
        }
        if let (Some((val, ecr)), Some((r_val, r_ecr))) = (p.ts, r.ts) {
            if t.has("taroc.plus.d.ts_val") {
                assert_eq!(
                    add(r_ecr, "taroc.plus.d.ts_val"),
                    val,
                    "{at}: TS value difference"
                );
            }
            if t.has("taroc.plus.d.ts_ecr") {
                assert_eq!(
                    add(r_val, "taroc.plus.d.ts_ecr"),
                    ecr,
                    "{at}: TS echo difference"
                );
            }
        }
    }
}

/// What a non-TCP context of mode `mode` (as the dissector names it) compresses of `ip`: the
/// header the check covers, where its transport checksum is, its sequence number; and that the
/// mode fits the packet's protocol.
fn layout(mode: &str, ip: &Ip<'_>, at: &str) -> (usize, Option<usize>, Option<u16>) {
    let h = ip.header;
    let be16 = |at: usize| u16::from_be_bytes([ip.bytes[at], ip.bytes[at + 1]]);
    match mode {
        "UDP" | "RTP" => assert_eq!(ip.proto, 17, "{at}: {mode} mode"),
        "echo" => assert!(ip.proto == 1 || ip.proto == 58, "{at}: echo mode"),
        _ => {}
    }
    match mode {
        "UDP" => (h + 8, Some(h + 6), ip.v4.then_some(ip.id)),
        "RTP" => (h + 20, Some(h + 6), Some(be16(h + 10))),
        "echo" => (h + 8, Some(h + 2), Some(be16(h + 6))),
        "IP only" => (h, None, ip.v4.then_some(ip.id)),
        other => panic!("{at}: mode {other}"),
    }
}

/// Checks a CO-S, CO-I or CO-N frame's header part (`prefix` `taroc.plus.n`, or
/// `taroc.plus.tunnel` for a tunnel frame's outer part, always IP only) against the IP packet
/// `ip` it stands for: the mode, every field carried (sequence number and IP-ID LSBs, fragment
/// field, transport checksum), the sequence number and IP-ID decoded, the check and the
/// payload length.
fn check_other(t: &Fields, prefix: &str, ip: &Ip<'_>, at: &str) {
    let field = |name: &str| t.get(&format!("{prefix}.{name}"));
    let tunnel = prefix == "taroc.plus.tunnel";
    let mode = if tunnel {
        "IP only".to_string()
    } else {
        t.strings("taroc.plus.n.mode")
            .last()
            .cloned()
            .unwrap_or_else(|| panic!("{at}: no mode"))
    };
    let be16 = |at: usize| u16::from_be_bytes([ip.bytes[at], ip.bytes[at + 1]]);
    let (header, checksum_at, seq) = layout(&mode, ip, at);
    if let Some(bits) = field("seq_lsbs.bits") {
        let seq = seq.unwrap_or_else(|| panic!("{at}: sequence LSBs without a sequence"));
        assert_eq!(
            field("seq_lsbs"),
            Some(mask(u64::from(seq), bits)),
            "{at}: sequence number LSBs"
        );
    }
    assert_eq!(field("seq"), seq.map(i64::from), "{at}: sequence number");
    if let Some(bits) = field("ip_id.bits") {
        assert_eq!(
            field("ip_id"),
            Some(mask(u64::from(ip.id), bits)),
            "{at}: IP-ID LSBs"
        );
    }
    let value = if tunnel { "outer_id" } else { "ip_id.value" };
    let expected = (ip.v4 || tunnel).then_some(i64::from(ip.id));
    assert_eq!(field(value), expected, "{at}: IP-ID");
    if let Some(frag) = field("frag") {
        assert_eq!(frag, i64::from(ip.frag), "{at}: fragment field");
    }
    // The check covers the header as it is, its transport checksum field included.
    let original = &ip.bytes[..header];
    if let Some(c) = checksum_at {
        let carried = t.get("taroc.plus.n.checksum");
        let computed = t.has("taroc.plus.n.checksum_computed");
        assert!(
            carried.is_some() != computed,
            "{at}: checksum carried or computed"
        );
        if let Some(carried) = carried {
            assert_eq!(carried, i64::from(be16(c)), "{at}: transport checksum");
        }
    } else if !tunnel {
        assert!(
            !t.has("taroc.plus.n.checksum"),
            "{at}: a checksum without one"
        );
    }
    assert_eq!(
        field("crc"),
        Some(i64::from(other::header_check(original))),
        "{at}: check"
    );
    if !tunnel {
        assert_eq!(
            field("payload_len"),
            Some((ip.bytes.len() - header) as i64),
            "{at}: payload length"
        );
    }
}

/// Checks a replicated IR-N (`| form | flags | CID | base CID | n | n × (word index, word) |
/// ...`) against the IP packet `ip` it stands for: the base CID and the changed words as the
/// frame has them, every per-packet field, the header the dissector rebuilt (lengths, IPv4 header
/// checksum, transport checksum) equal to the packet's, the check over it and the payload length.
fn check_replica(t: &Fields, frame: &[u8], ip: &Ip<'_>, at: &str) {
    let mode = t
        .strings("taroc.plus.n.mode")
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("{at}: no mode"));
    let (header, _, seq) = layout(&mode, ip, at);
    let be16 = |at: usize| u16::from_be_bytes([ip.bytes[at], ip.bytes[at + 1]]);
    assert_eq!(
        t.get("taroc.plus.base_cid"),
        Some(i64::from(frame[3])),
        "{at}: base CID"
    );
    let n = usize::from(frame[4]);
    assert_eq!(
        t.get("taroc.plus.n.replica.changes"),
        Some(n as i64),
        "{at}"
    );
    let words: Vec<(i64, i64)> = frame[5..5 + 3 * n]
        .chunks(3)
        .map(|c| (i64::from(c[0]), i64::from(u16::from_be_bytes([c[1], c[2]]))))
        .collect();
    let shown: Vec<(i64, i64)> = t
        .numbers("taroc.plus.n.replica.word_index")
        .into_iter()
        .zip(t.numbers("taroc.plus.n.replica.word"))
        .collect();
    assert_eq!(shown, words, "{at}: changed words");
    for &(index, _) in &words {
        assert!(2 * index as usize + 2 <= header, "{at}: word {index}");
    }
    assert_eq!(
        t.get("taroc.plus.n.seq"),
        seq.map(i64::from),
        "{at}: sequence number"
    );
    let id = ip.v4.then_some(i64::from(ip.id));
    assert_eq!(t.get("taroc.plus.n.ip_id.value"), id, "{at}: IP-ID");
    if ip.v4 {
        assert_eq!(
            t.get("taroc.plus.n.frag"),
            Some(i64::from(ip.frag)),
            "{at}: fragment field"
        );
        assert_eq!(t.get("ip.id"), id, "{at}: ip.id");
        assert_eq!(t.get("ip.len"), Some(ip.bytes.len() as i64), "{at}: ip.len");
    } else {
        assert_eq!(
            t.get("ipv6.plen"),
            Some(ip.bytes.len() as i64 - 40),
            "{at}: ipv6.plen"
        );
    }
    if mode == "RTP" {
        let h = ip.header;
        assert_eq!(
            t.get("taroc.plus.n.rtp_ts"),
            Some(i64::from(u32::from_be_bytes(
                ip.bytes[h + 12..h + 16].try_into().unwrap()
            ))),
            "{at}: RTP timestamp"
        );
        assert_eq!(
            t.strings("taroc.plus.n.marker"),
            [if ip.bytes[h + 9] & 0x80 != 0 {
                "1"
            } else {
                "0"
            }],
            "{at}: RTP marker"
        );
        assert!(t.has("taroc.plus.n.stride"), "{at}: stride");
    }
    let form = frame[0];
    if let Some(c) = layout(&mode, ip, at).1 {
        let carried = t.get("taroc.plus.n.checksum");
        assert_eq!(carried.is_some(), form & 0x08 != 0, "{at}: K");
        assert_eq!(
            carried.is_none(),
            t.has("taroc.plus.n.checksum_computed"),
            "{at}: checksum carried or computed"
        );
        if let Some(carried) = carried {
            assert_eq!(carried, i64::from(be16(c)), "{at}: transport checksum");
        }
    }
    let rebuilt: String = t
        .strings("taroc.plus.n.header")
        .first()
        .unwrap_or_else(|| panic!("{at}: no rebuilt header"))
        .replace(':', "");
    let original: String = ip.bytes[..header]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(rebuilt, original, "{at}: the rebuilt header");
    assert_eq!(
        t.get("taroc.plus.n.crc"),
        Some(i64::from(other::header_check(&ip.bytes[..header]))),
        "{at}: check"
    );
    assert_eq!(t.strings("taroc.plus.n.crc_ok"), ["1"], "{at}: check match");
    assert_eq!(
        t.get("taroc.plus.n.payload_len"),
        Some((ip.bytes.len() - header) as i64),
        "{at}: payload length"
    );
}

/// Checks one taroc-plus frame (the inner frame of a tunnel frame too) of kind byte `kind`
/// against `packet`, the IP packet it stands for (`outer`: its tunnel's outer header).
#[allow(clippy::too_many_arguments)]
fn check_plus_frame(
    t: &Fields,
    run: &mut Run,
    direction: u8,
    (kind, frame): (u8, &[u8]),
    packet: &[u8],
    outer: Option<&Ip<'_>>,
    at: &str,
) {
    let form = our_form(kind, frame);
    let inner = ip(packet);
    let p = tcp(&inner);
    let key = |p: &Tcp| (direction, outer.map(|o| o.addresses()), p.flow);
    match form.as_str() {
        "CO" | "CO, CID prefix" | "CO, short code" => {
            let p = p.unwrap_or_else(|| panic!("{at}: a CO frame of a packet not TCP"));
            assert_eq!(
                t.get("taroc.plus.tcp_flags"),
                Some(i64::from(p.flags)),
                "{at}: TCP flags"
            );
            assert_eq!(
                t.get("taroc.data_len"),
                Some(p.payload as i64),
                "{at}: data length"
            );
            check_co(t, &p, &inner, outer, at);
            let cid = t.get("taroc.cid").unwrap();
            assert_eq!(
                run.cids.get(&key(&p)).map(|&c| i64::from(c)),
                Some(cid),
                "{at}: the flow's CID"
            );
        }
        "IR" => {
            let p = p.unwrap();
            let (len, plen) = (t.get("ip.len"), t.get("ipv6.plen"));
            let restored = if inner.v4 { len } else { plen };
            let expected = packet.len() - if inner.v4 { 0 } else { 40 };
            assert_eq!(restored, Some(expected as i64), "{at}: the restored length");
            for (name, v) in [
                ("tcp.srcport", i64::from(p.flow.src_port)),
                ("tcp.dstport", i64::from(p.flow.dst_port)),
                ("tcp.seq_raw", i64::from(p.seq)),
                ("tcp.ack_raw", i64::from(p.ack)),
                ("tcp.window_size_value", i64::from(p.win)),
                ("tcp.checksum", i64::from(p.checksum)),
                ("tcp.len", p.payload as i64),
            ] {
                assert_eq!(t.get(name), Some(v), "{at}: {name}");
            }
            if inner.v4 {
                assert_eq!(t.get("ip.id"), Some(i64::from(inner.id)), "{at}: ip.id");
            }
            run.cids.insert(key(&p), t.get("taroc.cid").unwrap() as u8);
        }
        "IR-R" => {
            let p = p.unwrap();
            assert_eq!(
                t.get("taroc.plus.tcp_flags"),
                Some(i64::from(p.flags)),
                "{at}: TCP flags"
            );
            check_whole(t, run, direction, &p, &inner, &form, at);
            check_co(t, &p, &inner, None, at);
            run.cids.insert(key(&p), t.get("taroc.cid").unwrap() as u8);
        }
        "IR-S" | "compact SYN" => check_whole(t, run, direction, &p.unwrap(), &inner, &form, at),
        _ if form.starts_with("compact IR") || form == "packed IR" => {
            let p = p.unwrap();
            check_whole(t, run, direction, &p, &inner, &form, at);
            run.cids.insert(key(&p), t.get("taroc.cid").unwrap() as u8);
        }
        "IR-N" => {
            let (len, plen) = (t.get("ip.len"), t.get("ipv6.plen"));
            let restored = if inner.v4 { len } else { plen };
            let expected = packet.len() - if inner.v4 { 0 } else { 40 };
            assert_eq!(restored, Some(expected as i64), "{at}: the restored length");
            if inner.v4 {
                assert_eq!(t.get("ip.id"), Some(i64::from(inner.id)), "{at}: ip.id");
            }
            let mode = t.strings("taroc.plus.n.mode").last().unwrap().clone();
            let (_, _, seq) = layout(&mode, &inner, at);
            assert_eq!(
                t.get("taroc.plus.n.seq"),
                seq.map(i64::from),
                "{at}: sequence number"
            );
            if mode == "RTP" {
                let udp = (packet.len() - inner.header) as i64;
                assert_eq!(t.get("udp.length"), Some(udp), "{at}: UDP length");
            }
        }
        "replicated IR-N" => check_replica(t, frame, &inner, at),
        "CO-S" | "CO-I" | "CO-N" => check_other(t, "taroc.plus.n", &inner, at),
        other => panic!("{at}: form {other} in a tunnel"),
    }
}

/// Writes the frames of `capture` (the built-in one if `None`) under `scheme` with `extra`
/// arguments, and checks every frame tshark reads against our code and the original packets.
fn check_plus(dir: &Path, scheme: &str, capture: Option<&Path>, extra: &[&str], seen: &mut Seen) {
    let frames = dir.join("frames.pcap");
    let csv = dir.join("packets.csv");
    let mut args = vec![
        "--scheme",
        scheme,
        "--write-frames",
        frames.to_str().unwrap(),
        "--per-packet",
        csv.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let original: Capture = match capture {
        Some(path) => {
            args.push(path.to_str().unwrap());
            capture::read_file(path).unwrap()
        }
        None => {
            capture::parse(taroc_cli::BUILTIN_CAPTURE_NAME, taroc_cli::BUILTIN_CAPTURE).unwrap()
        }
    };
    eval(&args);
    let (datalink, records) = records(&frames);
    assert_eq!(datalink, DataLink::USER0);
    let rows = rows(&csv, scheme);
    assert_eq!(rows.len(), records.len(), "one CSV line per frame");
    let decoded = tshark(&frames, PLUS_FIELDS, &[]);
    assert_eq!(decoded.len(), records.len());
    let name = capture.map_or("built-in".to_string(), |p| p.display().to_string());
    let mut run = Run::default();
    let mut originals = None;
    for (n, ((record, row), t)) in records.iter().zip(&rows).zip(&decoded).enumerate() {
        let at = format!("{scheme} {name} {extra:?} frame {}", n + 1);
        let (direction, kind, frame) = (record[0], record[1], &record[2..]);
        assert_eq!(direction, row.direction, "{at}");
        assert_eq!(t.get("taroc.direction"), Some(i64::from(direction)), "{at}");
        assert_eq!(t.get("taroc.kind"), Some(i64::from(kind)), "{at}");
        let mut errors = errors(t);
        // A packet carried whole (TYPE_IP, IR-N, IR) that Wireshark finds malformed in the
        // capture itself (the fuzzers' captures) is malformed in its frame too.
        if errors == ["_ws.malformed"] {
            let malformed = originals.get_or_insert_with(|| malformed_packets(dir, &original));
            if row.index.is_some_and(|i| malformed[i]) {
                errors.clear();
            }
        }
        assert!(errors.is_empty(), "{at}: {errors:?}");
        run.guessed += t
            .strings("_ws.expert.message")
            .iter()
            .filter(|m| m.starts_with("Mirror not known"))
            .count();
        // The kind: our byte, our family (the CSV's), our form.
        let family = FrameKind::from_byte(kind).unwrap();
        assert_eq!(row.kind, family.name(), "{at}: the CSV's kind");
        assert_eq!(
            t.strings("taroc.family"),
            [family.family().name()],
            "{at}: family"
        );
        let form = our_form(kind, frame);
        let forms = t.strings("taroc.form");
        assert_eq!(forms.first(), Some(&form), "{at}: form");
        let profile = if kind == 0 {
            "draft or taroc-plus"
        } else {
            "taroc-plus"
        };
        assert_eq!(t.strings("taroc.profile"), [profile], "{at}");
        *seen.forms.entry(form.clone()).or_default() += 1;
        if form == "CO-I" {
            // CO-I in RTP and echo mode, and in IPv4 contexts whose sequence number is the IP-ID.
            let mode = t.strings("taroc.plus.n.mode").last().cloned();
            let mode = mode.unwrap_or_else(|| panic!("{at}: no mode"));
            *seen.forms.entry(format!("CO-I, {mode}")).or_default() += 1;
            if t.has("taroc.plus.n.co_i.s3") {
                // Frame mode: the marker, the timestamp's LSB, the IP-ID offset.
                *seen.forms.entry("CO-I, frame mode".into()).or_default() += 1;
            }
        }
        if form == "replicated IR-N" && frame.get(2) == frame.get(3) {
            // A refresh replicated from the context itself.
            *seen
                .forms
                .entry("replicated IR-N, own base".into())
                .or_default() += 1;
        }
        seen.kinds.insert(kind);
        seen.frames += 1;
        // The CID.
        assert_eq!(
            t.get("taroc.cid"),
            our_cid(kind, frame).map(i64::from),
            "{at}: CID"
        );
        let Some(index) = row.index else {
            // Feedback: the type and what follows, as our code reads them.
            assert_eq!(kind, 6, "{at}");
            seen.feedback.insert(frame[0]);
            assert_eq!(
                t.get("taroc.plus.fb.type"),
                Some(i64::from(frame[0])),
                "{at}"
            );
            let (cids, checksums): (Vec<i64>, Vec<i64>) = match frame[0] {
                4 => taroc_core::plus::receipt::ReceiptFrame::new_checked(frame)
                    .unwrap()
                    .receipts()
                    .map(|(c, s)| (i64::from(c), i64::from(s)))
                    .unzip(),
                2 => (
                    other::parse_request(frame)
                        .unwrap()
                        .iter()
                        .map(|&c| i64::from(c))
                        .collect(),
                    Vec::new(),
                ),
                _ => (
                    frame[1..].iter().map(|&c| i64::from(c)).collect(),
                    Vec::new(),
                ),
            };
            assert_eq!(t.numbers("taroc.plus.fb.cid"), cids, "{at}: CIDs");
            assert_eq!(t.numbers("taroc.plus.fb.checksum"), checksums, "{at}");
            continue;
        };
        let packet = &original.packets[index];
        let outer = ip(packet);
        match kind {
            0 => {
                let chain = t.strings("frame.protocols").join(":");
                let layers: Vec<&str> = chain.split(':').collect();
                assert_eq!(layers[0], "taroc", "{at}: {chain}");
                assert!(
                    layers[1] == "ip" || layers[1] == "ipv6",
                    "{at}: TYPE_IP: {chain}"
                );
            }
            other::TUNNEL => {
                check_other(t, "taroc.plus.tunnel", &outer, &at);
                assert_eq!(
                    t.get("taroc.plus.tunnel.outer_id"),
                    Some(i64::from(outer.id)),
                    "{at}"
                );
                let (inner_kind, start) = tunnel_inner(frame);
                assert_eq!(
                    t.get("taroc.plus.tunnel.inner_kind"),
                    Some(i64::from(inner_kind)),
                    "{at}"
                );
                let inner_form = our_form(inner_kind, &frame[start..]);
                assert_eq!(forms.get(1), Some(&inner_form), "{at}: inner form");
                *seen
                    .forms
                    .entry(format!("tunnel: {inner_form}"))
                    .or_default() += 1;
                let inner = outer.inner().unwrap();
                let inner_frame = (inner_kind, &frame[start..]);
                check_plus_frame(
                    t,
                    &mut run,
                    direction,
                    inner_frame,
                    inner,
                    Some(&outer),
                    &at,
                );
            }
            _ => {
                // A plain frame of a tunnelled context stands for the inner TCP packet.
                let tunnelled = outer
                    .inner()
                    .filter(|i| ip(i).proto == 6 && tcp(&outer).is_none());
                let is_tcp_form = !matches!(kind, other::IR_N | other::CO_N..=other::CO_N_LAST)
                    || kind == format::PACKED_IR;
                let (packet, outer) = match tunnelled.filter(|_| is_tcp_form) {
                    Some(inner) => (inner, Some(&outer)),
                    None => (&packet[..], None),
                };
                check_plus_frame(t, &mut run, direction, (kind, frame), packet, outer, &at);
            }
        }
        // The packet is a reference for the other direction's mirrors from now on.
        let tcp_packet = outer.inner().map(ip).unwrap_or_else(|| ip(packet));
        if let Some(p) = tcp(&tcp_packet) {
            run.sent[usize::from(direction)].push(p);
        }
    }
    println!(
        "{scheme} {name} {extra:?}: {} frames decoded, {} mirrors not known",
        records.len(),
        run.guessed
    );
}

/// Writes `packets` as a raw-IP pcap.
fn write_raw(path: &Path, packets: &[Vec<u8>]) {
    let header = PcapHeader {
        datalink: DataLink::RAW,
        ..PcapHeader::default()
    };
    let mut writer = PcapWriter::with_header(std::fs::File::create(path).unwrap(), header).unwrap();
    for (i, p) in packets.iter().enumerate() {
        let time = Duration::from_millis(i as u64);
        writer
            .write_packet(&PcapPacket::new(time, p.len() as u32, p))
            .unwrap();
    }
}

/// Which of the capture's packets Wireshark itself finds malformed.
fn malformed_packets(dir: &Path, capture: &Capture) -> Vec<bool> {
    let path = dir.join("original.pcap");
    write_raw(&path, &capture.packets);
    tshark(&path, &["_ws.malformed"], &[])
        .iter()
        .map(|t| t.has("_ws.malformed"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// A capture of what the repository's captures lack: a new flow of known hosts without a mirror
// (IR-R with both ports whole), packets no context takes (TYPE_IP), IP-in-IP.

fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum = 0u32;
    for pair in header.chunks(2) {
        sum += u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 TCP packet with both ports moved by `by` and its TCP checksum made again.
fn ports_moved(packet: &[u8], by: u16) -> Vec<u8> {
    let mut p = packet.to_vec();
    let h = usize::from(p[0] & 0x0F) * 4;
    for at in [h, h + 2] {
        let port = u16::from_be_bytes([p[at], p[at + 1]]).wrapping_add(by);
        p[at..at + 2].copy_from_slice(&port.to_be_bytes());
    }
    p[h + 16..h + 18].fill(0);
    let mut pseudo = p[12..20].to_vec();
    pseudo.extend_from_slice(&[0, 6]);
    pseudo.extend_from_slice(&((p.len() - h) as u16).to_be_bytes());
    pseudo.extend_from_slice(&p[h..]);
    let sum = ipv4_checksum(&pseudo);
    p[h + 16..h + 18].copy_from_slice(&sum.to_be_bytes());
    p
}

/// An IPv4 header of protocol `proto` from `src` to `dst` (last octets) for `payload` octets.
fn ipv4_header(
    proto: u8,
    id: u16,
    src: [u8; 4],
    dst: [u8; 4],
    payload: usize,
    options: &[u8],
) -> Vec<u8> {
    let len = 20 + options.len();
    let mut h = vec![0x40 | (len / 4) as u8, 0];
    h.extend_from_slice(&((len + payload) as u16).to_be_bytes());
    h.extend_from_slice(&id.to_be_bytes());
    h.extend_from_slice(&[0x40, 0, 64, proto, 0, 0]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(options);
    let sum = ipv4_checksum(&h);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    h
}

/// The packet in an IP-in-IP tunnel whose ends are per direction (forward: the lower inner
/// source address): IPv4 with a per-direction counter as Identification, or IPv6.
fn tunnelled(packet: &[u8], v6: bool, ids: &mut [u16; 2]) -> Vec<u8> {
    let (src, dst) = ip(packet).addresses();
    let d = usize::from(src > dst);
    let (a, b) = if d == 0 { (1, 2) } else { (2, 1) };
    let mut out = if v6 {
        let mut h = vec![0x60, 0, 0, 0];
        h.extend_from_slice(&(packet.len() as u16).to_be_bytes());
        h.extend_from_slice(&[4, 64]);
        for end in [a, b] {
            h.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, end]);
        }
        h
    } else {
        ids[d] = ids[d].wrapping_add(1);
        ipv4_header(4, ids[d], [192, 0, 2, a], [192, 0, 2, b], packet.len(), &[])
    };
    out.extend_from_slice(packet);
    out
}

/// Writes the made-up capture (raw IP) and returns its path.
fn made_up(dir: &Path) -> PathBuf {
    let builtin =
        capture::parse(taroc_cli::BUILTIN_CAPTURE_NAME, taroc_cli::BUILTIN_CAPTURE).unwrap();
    let mixed =
        capture::read_file(&Path::new(REPO_CAPTURES).join("unseen/h_mixed_v4.pcap")).unwrap();
    let mut packets: Vec<Vec<u8>> = builtin.packets.clone();
    // The same transfer again between the same hosts on other ports, its handshake left out:
    // no mirror, so its first IR frames replicate the first transfer's context.
    packets.extend(builtin.packets[2..].iter().map(|p| ports_moved(p, 1000)));
    // UDP with an IP option: no context takes it.
    for id in 0..2 {
        let mut p = ipv4_header(
            17,
            id,
            [198, 51, 100, 1],
            [198, 51, 100, 2],
            12,
            &[1, 1, 1, 0],
        );
        p.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e, 0, 12, 0, 0, b'p', b'i', b'n', b'g']);
        packets.push(p);
    }
    // The mixed capture in an IPv4 tunnel, the built-in one in an IPv6 tunnel.
    let mut ids = [0x1000, 0x8000];
    packets.extend(mixed.packets.iter().map(|p| tunnelled(p, false, &mut ids)));
    packets.extend(builtin.packets.iter().map(|p| tunnelled(p, true, &mut ids)));
    let path = dir.join("made_up.pcap");
    write_raw(&path, &packets);
    path
}

fn repo(name: &str) -> PathBuf {
    Path::new(REPO_CAPTURES).join(name)
}

/// More captures to check taroc-plus on, clean link: with TAROC_DISSECTOR_ALL set, every
/// capture of the repository's unseen and twin sets and of the shared Linux set; and those named
/// in TAROC_DISSECTOR_CAPTURES (paths separated by colons).
fn more_captures() -> Vec<PathBuf> {
    let mut all = Vec::new();
    if std::env::var_os("TAROC_DISSECTOR_ALL").is_some() {
        for set in [repo("unseen"), repo("twins"), PathBuf::from(SHARED)] {
            let Ok(entries) = std::fs::read_dir(&set) else {
                continue;
            };
            all.extend(
                entries
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "pcap")),
            );
        }
        all.sort();
    }
    if let Some(more) = std::env::var_os("TAROC_DISSECTOR_CAPTURES") {
        all.extend(std::env::split_paths(&more).filter(|p| !p.as_os_str().is_empty()));
    }
    all
}

/// Every form and kind byte taroc-plus sends (`docs/taroc-plus-format.md`, section 1).
const PLUS_FORMS: &[&str] = &[
    "TYPE_IP",
    "CONTEXT_STATE",
    "IR",
    "IR-R",
    "IR-N",
    "replicated IR-N",
    "IR-S",
    "compact IR",
    "compact IR, mirrored",
    "compact IR, mirrored, numbers",
    "compact IR, short form",
    "compact SYN",
    "packed IR",
    "CO-S",
    "CO-I",
    "CO-N",
    "tunnel",
    "CO",
    "CO, CID prefix",
    "CO, short code",
];

#[test]
fn taroc_plus_frames_of_every_kind_decode_in_tshark_as_our_code_wrote_them() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("plus");
    let made_up = made_up(&dir);
    let lossy = ["--loss", "0.05", "--seed", "3", "--reset-at", "100"];
    let bursty = ["--loss", "0.2", "--burst", "3", "--seed", "2"];
    let cases: Vec<(Option<PathBuf>, &[&str])> = vec![
        (None, &lossy),
        (Some(repo("unseen/h_mixed_v4.pcap")), &lossy),
        (Some(repo("unseen/f_many_flows_v4.pcap")), &bursty),
        (Some(repo("twins/f_many_flows_v4.pcap")), &[]),
        (Some(repo("unseen/d_bulk_v6_default.pcap")), &[]),
        (Some(made_up.clone()), &[]),
        // CO-S frames of every CID (ICMPv6 echo mode), RTP mode.
        (Some(repo("mixed/icmp_v6.pcap")), &lossy),
        (Some(repo("mixed/rtp_voice_v4.pcap")), &[]),
        // Replicated IR-N (a DNS query from a new source port against the context of the
        // last), CO-I in IPv4 UDP contexts.
        (Some(repo("mixed/dns_v6.pcap")), &lossy),
        (Some(repo("mixed/dns_v4.pcap")), &[]),
        // Frame mode (CO-I with the marker, the timestamp's LSB and the IP-ID offset), refreshes
        // replicated from the context itself.
        (Some(repo("mixed/rtp_video_v4.pcap")), &lossy),
    ];
    let mut seen = Seen::default();
    for (capture, extra) in &cases {
        check_plus(&dir, "taroc-plus", capture.as_deref(), extra, &mut seen);
    }
    for capture in more_captures() {
        check_plus(&dir, "taroc-plus", Some(&capture), &[], &mut seen);
    }
    println!("taroc-plus: {} frames, forms {:?}", seen.frames, seen.forms);
    for form in PLUS_FORMS {
        assert!(
            seen.forms.contains_key(*form),
            "no {form} frame: {:?}",
            seen.forms
        );
    }
    for kind in [
        format::IR_R,
        format::IR_R_SOURCE_KEPT,
        format::IR_R_DEST_KEPT,
    ] {
        assert!(seen.kinds.contains(&kind), "no kind {kind:#x}");
    }
    assert_eq!(
        seen.feedback,
        BTreeSet::from([1, 2, 3, 4, 5]),
        "feedback types"
    );
    for inner in [
        "CO-I, UDP",
        "CO-I, echo",
        "CO-I, frame mode",
        "replicated IR-N, own base",
        "tunnel: compact IR",
        "tunnel: IR-N",
        "tunnel: CO-I",
        "tunnel: CO-N",
    ] {
        assert!(
            seen.forms.contains_key(inner),
            "no {inner}: {:?}",
            seen.forms
        );
    }

    // Without context requests: the same forms but feedback, which it never sends.
    let mut seen = Seen::default();
    for (capture, extra) in &cases {
        check_plus(&dir, "taroc-plus-u", capture.as_deref(), extra, &mut seen);
    }
    println!(
        "taroc-plus-u: {} frames, forms {:?}",
        seen.frames, seen.forms
    );
    assert!(!seen.forms.contains_key("CONTEXT_STATE"));
    for form in PLUS_FORMS.iter().filter(|f| **f != "CONTEXT_STATE") {
        assert!(
            seen.forms.contains_key(*form),
            "taroc-plus-u: no {form} frame: {:?}",
            seen.forms
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The profile preference: a taroc-plus file read as the draft's has unknown kinds; read as
/// taroc-plus, as auto reads it.
#[test]
fn the_profile_preference_picks_the_format() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("preference");
    let frames = dir.join("frames.pcap");
    eval(&[
        "--scheme",
        "taroc-plus",
        "--write-frames",
        frames.to_str().unwrap(),
    ]);
    let fields = ["taroc.form", "taroc.profile", "_ws.expert.message"];
    let auto = tshark(&frames, &fields, &[]);
    let plus = tshark(&frames, &fields, &["-o", "taroc.profile:plus"]);
    let draft = tshark(&frames, &fields, &["-o", "taroc.profile:draft"]);
    let (_, records) = records(&frames);
    for (i, record) in records.iter().enumerate() {
        assert_eq!(auto[i].strings("taroc.form"), plus[i].strings("taroc.form"));
        if record[1] >= 8 {
            assert!(!draft[i].has("taroc.form"), "frame {}", i + 1);
            assert_eq!(
                draft[i].strings("_ws.expert.message"),
                ["A kind byte this format does not send"]
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn draft_taroc_frames_of_every_kind_decode_in_tshark() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("draft");
    let lossy = ["--loss", "0.05", "--seed", "3", "--reset-at", "100"];
    let fields = [
        "taroc.kind",
        "taroc.form",
        "taroc.profile",
        "taroc.cid",
        "_ws.expert.message",
        "_ws.malformed",
    ];
    for (scheme, expected) in [("taroc", &[0u8, 1, 2][..]), ("taroc-repair", &[0, 1, 2, 6])] {
        let mut kinds = BTreeMap::<u8, usize>::new();
        for capture in [
            None,
            Some(repo("unseen/h_mixed_v4.pcap")),
            Some(repo("unseen/d_bulk_v6_default.pcap")),
        ] {
            let frames = dir.join("frames.pcap");
            let mut args = vec![
                "--scheme",
                scheme,
                "--write-frames",
                frames.to_str().unwrap(),
            ];
            args.extend_from_slice(&lossy);
            if let Some(capture) = &capture {
                args.push(capture.to_str().unwrap());
            }
            eval(&args);
            let (datalink, records) = records(&frames);
            assert_eq!(datalink, DataLink::USER0);
            let decoded = tshark(&frames, &fields, &[]);
            assert_eq!(decoded.len(), records.len());
            for (i, (record, t)) in records.iter().zip(&decoded).enumerate() {
                let at = format!("{scheme} {capture:?} frame {}", i + 1);
                let (kind, frame) = (record[1], &record[2..]);
                assert_eq!(t.get("taroc.kind"), Some(i64::from(kind)), "{at}");
                let name = FrameKind::from_byte(kind).unwrap().name();
                assert_eq!(t.strings("taroc.form"), [name], "{at}");
                let profile = if kind == 0 {
                    "draft or taroc-plus"
                } else {
                    "draft"
                };
                assert_eq!(t.strings("taroc.profile"), [profile], "{at}");
                let cid = match kind {
                    1 => Some(frame[usize::from(frame[0] >> 4 == 6) * 2 + 3]),
                    2 => Some(frame[0]),
                    _ => None,
                };
                assert_eq!(t.get("taroc.cid"), cid.map(i64::from), "{at}: CID");
                let errors = errors(t);
                assert!(errors.is_empty(), "{at}: {errors:?}");
                *kinds.entry(kind).or_default() += 1;
            }
        }
        println!("{scheme}: frames per kind {kinds:?}");
        let kinds: Vec<u8> = kinds.into_keys().collect();
        assert_eq!(kinds, expected, "{scheme}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Wireshark's dissector of each PPP protocol our VJ and IPHC frames use (`None`: Wireshark has
/// none, and shows the frame as PPP data), and the protocol of each kind.
fn ppp_dissector(protocol: u16) -> Option<&'static str> {
    match protocol {
        0x0021 => Some("ip"),
        0x0057 => Some("ipv6"),
        0x002D | 0x002F => Some("vjc"),
        0x0061 => Some("crtp"),
        // RFC 2507's TCP header request, which wireshark/taroc.lua decodes (Wireshark's own
        // context-state dissector reads RTP's only).
        0x2065 => Some("taroc_iphc_cs"),
        _ => None,
    }
}

fn ppp_protocols(kind: &str) -> &'static [u16] {
    match kind {
        "TYPE_IP" => &[0x0021, 0x0057],
        "UNCOMPRESSED_TCP" => &[0x002F],
        "FULL_HEADER" => &[0x0061],
        "COMPRESSED_TCP" => &[0x002D, 0x0063],
        "COMPRESSED_TCP_NODELTA" => &[0x2063],
        "COMPRESSED_NON_TCP" => &[0x0065],
        "CONTEXT_STATE" => &[0x2065],
        other => panic!("kind {other}"),
    }
}

#[test]
fn vj_and_iphc_frames_of_every_kind_go_to_wiresharks_own_dissectors() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("ppp");
    let lossy = ["--loss", "0.05", "--seed", "3", "--reset-at", "100"];
    let fields = [
        "ppp.protocol",
        "frame.protocols",
        "_ws.malformed",
        "_ws.expert.message",
    ];
    let expected: [(&str, &[&str]); 2] = [
        ("vj", &["COMPRESSED_TCP", "TYPE_IP", "UNCOMPRESSED_TCP"]),
        (
            "iphc",
            &[
                "COMPRESSED_NON_TCP",
                "COMPRESSED_TCP",
                "COMPRESSED_TCP_NODELTA",
                "CONTEXT_STATE",
                "FULL_HEADER",
                "TYPE_IP",
            ],
        ),
    ];
    let captures = [
        None,
        Some(repo("unseen/h_mixed_v4.pcap")),
        Some(repo("unseen/d_bulk_v6_default.pcap")),
        Some(repo("unseen/b_bulk_v4_nots.pcap")),
    ];
    for (scheme, kinds_expected) in expected {
        let mut kinds = BTreeMap::<String, usize>::new();
        let mut protocols = BTreeMap::<u16, usize>::new();
        let mut short_segments = 0;
        for capture in &captures {
            let frames = dir.join("frames.pcap");
            let csv = dir.join("packets.csv");
            let mut args = vec![
                "--scheme",
                scheme,
                "--write-frames",
                frames.to_str().unwrap(),
                "--per-packet",
                csv.to_str().unwrap(),
            ];
            args.extend_from_slice(&lossy);
            let original = match capture {
                Some(path) => {
                    args.push(path.to_str().unwrap());
                    capture::read_file(path).unwrap()
                }
                None => capture::parse(taroc_cli::BUILTIN_CAPTURE_NAME, taroc_cli::BUILTIN_CAPTURE)
                    .unwrap(),
            };
            eval(&args);
            let (datalink, records) = records(&frames);
            assert_eq!(datalink, DataLink::PPP_WITH_DIR);
            let rows = rows(&csv, scheme);
            let decoded = tshark(&frames, &fields, &[]);
            assert_eq!(decoded.len(), records.len());
            assert_eq!(rows.len(), records.len());
            for (i, ((record, row), t)) in records.iter().zip(&rows).zip(&decoded).enumerate() {
                let at = format!("{scheme} {capture:?} frame {}", i + 1);
                let protocol = u16::from_be_bytes([record[3], record[4]]);
                assert_eq!(record[0], row.direction, "{at}");
                assert_eq!(t.get("ppp.protocol"), Some(i64::from(protocol)), "{at}");
                assert!(
                    ppp_protocols(&row.kind).contains(&protocol),
                    "{at}: {}",
                    row.kind
                );
                let chain = t
                    .strings("frame.protocols")
                    .first()
                    .cloned()
                    .unwrap_or_default();
                let layers: Vec<&str> = chain.split(':').collect();
                assert_eq!(layers[0], "ppp", "{at}: {chain}");
                match ppp_dissector(protocol) {
                    Some(name) => assert_eq!(layers.get(1), Some(&name), "{at}: {chain}"),
                    None => assert!(layers.len() == 1 || layers[1] == "data", "{at}: {chain}"),
                }
                let errors = errors(t);
                // Wireshark's VJ dissector rebuilds a COMPRESSED_TCP frame's TCP header without
                // its options but with its data offset: with less payload than the options took,
                // the TCP dissector then finds the header short. Nothing else may be malformed.
                let short_segment = protocol == 0x002D
                    && t.strings("_ws.expert.message")
                        .iter()
                        .any(|m| m.starts_with("Short segment"))
                    && row
                        .index
                        .and_then(|i| tcp(&ip(&original.packets[i])))
                        .is_some_and(|p| p.offset > 20 && p.payload < p.offset - 20);
                if short_segment {
                    short_segments += 1;
                } else {
                    assert!(errors.is_empty(), "{at}: {errors:?}");
                }
                *kinds.entry(row.kind.clone()).or_default() += 1;
                *protocols.entry(protocol).or_default() += 1;
            }
        }
        let protocols: BTreeMap<String, usize> = protocols
            .into_iter()
            .map(|(p, n)| (format!("{p:#06x}"), n))
            .collect();
        println!("{scheme}: frames per kind {kinds:?}, per PPP protocol {protocols:?}");
        if short_segments > 0 {
            println!(
                "{scheme}: {short_segments} COMPRESSED_TCP frames of packets with less data than \
                 TCP options, which Wireshark's VJ dissector rebuilds short"
            );
        }
        let kinds: Vec<&str> = kinds.keys().map(String::as_str).collect();
        assert_eq!(kinds, kinds_expected, "{scheme}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Frames cut short or with an octet changed (each record of the taroc-plus and taroc frames of
/// the built-in capture and the made-up one, cut in half, less its last octet, one octet
/// inverted, then whole): tshark reads every one, a frame that breaks its format as expert
/// info, never a Lua error.
#[test]
fn cut_and_changed_frames_are_expert_info_not_lua_errors() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("damaged");
    let made_up = made_up(&dir);
    // Replicated IR-Ns and the CO-S, CO-I and CO-N frames of their contexts.
    let dns = repo("mixed/dns_v6.pcap");
    let mut malformed = 0;
    let mut total = 0;
    for (scheme, capture) in [
        ("taroc-plus", None),
        ("taroc-plus", Some(&made_up)),
        ("taroc-plus", Some(&dns)),
        ("taroc-repair", None),
    ] {
        let frames = dir.join("frames.pcap");
        let mut args = vec![
            "--scheme",
            scheme,
            "--write-frames",
            frames.to_str().unwrap(),
        ];
        args.extend_from_slice(&["--loss", "0.05", "--seed", "3", "--reset-at", "100"]);
        if let Some(capture) = capture {
            args.push(capture.to_str().unwrap());
        }
        eval(&args);
        let (_, records) = records(&frames);
        let damaged = dir.join("damaged.pcap");
        let header = PcapHeader {
            datalink: DataLink::USER0,
            ..PcapHeader::default()
        };
        let mut writer =
            PcapWriter::with_header(std::fs::File::create(&damaged).unwrap(), header).unwrap();
        let mut count = 0;
        for (i, record) in records.iter().enumerate() {
            let mut changed = record.clone();
            let at = 2 + i % (record.len() - 2).max(1);
            if at < changed.len() {
                changed[at] ^= 0xFF;
            }
            let half = 2 + (record.len() - 2) / 2;
            for r in [
                &record[..half],
                &record[..record.len() - 1],
                &changed,
                record,
            ] {
                let time = Duration::from_micros(count);
                writer
                    .write_packet(&PcapPacket::new(time, r.len() as u32, r))
                    .unwrap();
                count += 1;
            }
        }
        drop(writer);
        let decoded = tshark(&damaged, &["taroc.kind", "_ws.expert.message"], &[]);
        assert_eq!(decoded.len() as u64, count);
        for (i, t) in decoded.iter().enumerate() {
            let messages = t.strings("_ws.expert.message");
            let bad: Vec<&String> = messages
                .iter()
                .filter(|m| m.starts_with("Lua Error") || m.starts_with("Dissector error"))
                .collect();
            assert!(
                bad.is_empty(),
                "{scheme} {capture:?} record {}: {bad:?}",
                i + 1
            );
            assert!(t.has("taroc.kind"), "record {}", i + 1);
            malformed += usize::from(messages.iter().any(|m| m.starts_with("Malformed TAROC")));
        }
        total += decoded.len();
    }
    // Every kind byte with no frame, one octet and two octets of frame, and tunnel frames cut
    // after their inner kind byte or naming an inner kind no tunnel carries.
    let mut edge: Vec<Vec<u8>> = vec![
        vec![
            0,
            other::TUNNEL,
            other::CO_N_LONG,
            0,
            0xAA,
            0xBB,
            format::COMPACT_IR,
        ],
        vec![
            0,
            other::TUNNEL,
            other::CO_N_LONG,
            0,
            0xAA,
            0xBB,
            format::IR_S,
            1,
            2,
            3,
        ],
        vec![
            0,
            other::TUNNEL,
            other::short_kind(0, 1),
            0xAA,
            0xBB,
            format::IR,
        ],
    ];
    for kind in (0..=0x7F).chain([0x80, 0xFF]) {
        edge.extend([vec![0, kind], vec![1, kind, 0], vec![1, kind, 0xFF, 0xFF]]);
    }
    let path = dir.join("edge.pcap");
    let header = PcapHeader {
        datalink: DataLink::USER0,
        ..PcapHeader::default()
    };
    let mut writer =
        PcapWriter::with_header(std::fs::File::create(&path).unwrap(), header).unwrap();
    for (i, r) in edge.iter().enumerate() {
        let time = Duration::from_micros(i as u64);
        writer
            .write_packet(&PcapPacket::new(time, r.len() as u32, r))
            .unwrap();
    }
    drop(writer);
    let decoded = tshark(&path, &["taroc.kind", "_ws.expert.message"], &[]);
    assert_eq!(decoded.len(), edge.len());
    for (record, t) in edge.iter().zip(&decoded) {
        let messages = t.strings("_ws.expert.message");
        let bad: Vec<&String> = messages
            .iter()
            .filter(|m| m.starts_with("Lua Error") || m.starts_with("Dissector error"))
            .collect();
        assert!(bad.is_empty(), "{record:02x?}: {bad:?}");
        malformed += usize::from(messages.iter().any(|m| m.starts_with("Malformed TAROC")));
    }
    total += decoded.len();
    println!("{total} cut or changed records read, {malformed} of them malformed");
    assert!(malformed > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
