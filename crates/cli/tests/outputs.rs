//! End-to-end: the files `taroc eval` writes (`--write-frames`, `--write-delivered`,
//! `--per-packet`), read back by tshark (VJ frames by Wireshark's own dissector, TAROC frames by
//! `wireshark/taroc.lua`) and by our own code.
//!
//! Without tshark the tshark tests are skipped with a notice, unless the environment variable
//! `CI` is set (then they fail). The shared captures add cases when `../shared/captures` exists.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pcap_file::pcap::PcapReader;
use pcap_file::DataLink;
use taroc_cli::capture::{self, Capture};
use taroc_core::encoding::delta;
use taroc_core::taroc::format::{self, flag};

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/captures");
const DISSECTOR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../wireshark/taroc.lua");

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taroc-outputs-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `taroc eval` with `args`; returns its standard output.
fn eval(args: &[&str]) -> String {
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
    String::from_utf8(out.stdout).unwrap()
}

/// The built-in capture, as `taroc eval` reads it.
fn builtin() -> Capture {
    capture::parse(taroc_cli::BUILTIN_CAPTURE_NAME, taroc_cli::BUILTIN_CAPTURE).unwrap()
}

/// A shared capture, if the shared captures are there (a notice otherwise).
fn shared(name: &str) -> Option<PathBuf> {
    let path = Path::new(CAPTURES).join(name);
    if !path.exists() {
        println!("notice: {} not found; skipping it", path.display());
        return None;
    }
    Some(path)
}

/// The link type and the records (time, data) of a pcap file.
fn records(path: &Path) -> (DataLink, Vec<(std::time::Duration, Vec<u8>)>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = PcapReader::new(file).unwrap();
    let datalink = reader.header().datalink;
    let mut out = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = packet.unwrap();
        out.push((packet.timestamp, packet.data.into_owned()));
    }
    (datalink, out)
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

/// tshark's values of `fields` for every record of `file` (with our dissector loaded): per
/// record, per field, every occurrence as a number.
fn tshark_fields(file: &Path, fields: &[&str]) -> Vec<Vec<Vec<u64>>> {
    let mut command = Command::new("tshark");
    command
        .args(["-X", &format!("lua_script:{DISSECTOR}"), "-r"])
        .arg(file)
        .args(["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]);
    for field in fields {
        command.args(["-e", field]);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let number = |s: &str| match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
    };
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            line.split('\t')
                .map(|values| {
                    values
                        .split(',')
                        .filter(|v| !v.is_empty())
                        .map(number)
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The fields the TAROC test compares, in tshark's names.
const TAROC_FIELDS: [&str; 14] = [
    "taroc.direction",
    "taroc.kind",
    "taroc.cid",
    "taroc.ctx_flags",
    "taroc.flags",
    "taroc.ip_id",
    "taroc.r_octet",
    "taroc.urgent",
    "taroc.wasi.pt",
    "taroc.options",
    "taroc.ts_val",
    "taroc.ts_ecr",
    "taroc.request.cid",
    "taroc.data_len",
];
/// The WASI and SACK fields, compared separately (several per frame).
const WASI_FIELDS: [&str; 6] = [
    "taroc.wasi.win",
    "taroc.wasi.ack",
    "taroc.wasi.seq",
    "taroc.wasi.ip_id",
    "taroc.sack.offset",
    "taroc.sack.size",
];

/// What our own code reads in one record of our TAROC encapsulation, as tshark's fields
/// ([`TAROC_FIELDS`] then [`WASI_FIELDS`]). `random` holds each context's RANDOM IP-ID flag per
/// direction, as the UNCOMPRESSED_TCP frames so far set it.
fn expected_taroc(record: &[u8], random: &mut HashMap<(u8, u8), bool>) -> Vec<Vec<u64>> {
    let (direction, kind, frame) = (record[0], record[1], &record[2..]);
    let mut fields: Vec<Vec<u64>> = vec![Vec::new(); TAROC_FIELDS.len() + WASI_FIELDS.len()];
    fields[0].push(u64::from(direction));
    fields[1].push(u64::from(kind));
    match kind {
        1 => {
            let at = if frame[0] >> 4 == 6 { 4 } else { 2 };
            let (flags, cid) = (frame[at], frame[at + 1]);
            random.insert((direction, cid), frame[0] >> 4 == 4 && flags & 1 != 0);
            fields[2].push(u64::from(cid));
            fields[3].push(u64::from(flags));
        }
        2 => {
            let (cid, flags) = (frame[0], frame[1]);
            fields[2].push(u64::from(cid));
            fields[4].push(u64::from(flags));
            let mut at = 4;
            let mut take = |n: usize, field: usize, fields: &mut Vec<Vec<u64>>| {
                let value = frame[at..at + n]
                    .iter()
                    .fold(0u64, |v, &b| (v << 8) | u64::from(b));
                fields[field].push(value);
                at += n;
            };
            if random.get(&(direction, cid)).copied().unwrap_or(false) {
                take(2, 5, &mut fields);
            }
            if flags & flag::R != 0 {
                take(1, 6, &mut fields);
            }
            if flags & flag::U != 0 {
                take(2, 7, &mut fields);
            }
            let present = [flag::W, flag::A, flag::S, flag::I].map(|bit| flags & bit != 0);
            if present.contains(&true) {
                fields[8].push(u64::from(frame[at] >> 6));
                let (wasi, used) = format::get_wasi(&frame[at..], present).unwrap();
                for (i, value) in wasi.iter().enumerate() {
                    if let Some((lsbs, _)) = value {
                        fields[TAROC_FIELDS.len() + i].push(u64::from(*lsbs));
                    }
                }
                at += used;
            }
            if flags & flag::O != 0 {
                let octet = frame[at];
                fields[9].push(u64::from(octet));
                at += 1;
                for (bit, field) in [(0x08, 10), (0x04, 11)] {
                    if octet & bit != 0 {
                        let (lsbs, _, used) = format::get_ts(&frame[at..]).unwrap();
                        fields[field].push(u64::from(lsbs));
                        at += used;
                    }
                }
                for _ in 0..octet & 0x03 {
                    for field in [4, 5] {
                        let (value, used) = delta::get(&frame[at..]).unwrap();
                        fields[TAROC_FIELDS.len() + field].push(u64::from(value));
                        at += used;
                    }
                }
            }
            fields[13].push((frame.len() - at) as u64);
        }
        6 => fields[12].extend(frame[1..].iter().map(|&cid| u64::from(cid))),
        _ => {}
    }
    fields
}

/// Writes the TAROC frames of `capture` (with `extra` arguments) and checks that tshark with our
/// dissector reads every field as our code does. Returns how many frames of each kind it checked.
fn check_taroc_frames(dir: &Path, capture: Option<&Path>, extra: &[&str]) -> HashMap<u8, usize> {
    let frames = dir.join("frames.pcap");
    let mut args = vec!["--write-frames", frames.to_str().unwrap()];
    args.extend_from_slice(extra);
    if let Some(capture) = capture {
        args.push(capture.to_str().unwrap());
    }
    eval(&args);
    let (datalink, records) = records(&frames);
    assert_eq!(datalink, DataLink::USER0);
    let fields: Vec<&str> = TAROC_FIELDS.iter().chain(&WASI_FIELDS).copied().collect();
    let decoded = tshark_fields(&frames, &fields);
    assert_eq!(decoded.len(), records.len());
    let mut random = HashMap::new();
    let mut kinds = HashMap::new();
    for (number, ((_, record), tshark)) in records.iter().zip(&decoded).enumerate() {
        let expected = expected_taroc(record, &mut random);
        for (name, (ours, theirs)) in fields.iter().zip(expected.iter().zip(tshark)) {
            assert_eq!(ours, theirs, "frame {}: {name}", number + 1);
        }
        *kinds.entry(record[1]).or_default() += 1;
    }
    kinds
}

#[test]
fn taroc_frames_decode_in_tshark_as_our_code_reads_them() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("taroc");
    // The built-in capture on a lossy link, with a decompressor restart: taroc-repair (the
    // draft's format with the bounded repairs) sends context requests (CONTEXT_STATE) too.
    let kinds = check_taroc_frames(
        &dir,
        None,
        &[
            "--scheme",
            "taroc-repair",
            "--loss",
            "0.05",
            "--seed",
            "3",
            "--reset-at",
            "100",
        ],
    );
    for kind in [0, 1, 2, 6] {
        assert!(kinds.get(&kind).is_some_and(|&n| n > 0), "{kinds:?}");
    }
    // Many flows (several CIDs, FIN/RST endings, SACK) and a mixed capture.
    for name in ["linux/f_many_flows_v4.pcap", "linux/h_mixed_v4.pcap"] {
        if let Some(path) = shared(name) {
            let kinds = check_taroc_frames(&dir, Some(&path), &["--scheme", "taroc"]);
            assert!(kinds[&2] > 1000, "{name}: {kinds:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The VJ fields tshark rebuilds, and ours from the original packet.
const VJ_FIELDS: [&str; 7] = [
    "ip.id",
    "tcp.srcport",
    "tcp.ack_raw",
    "tcp.window_size_value",
    "tcp.checksum",
    "tcp.seq_raw",
    "tcp.len",
];

fn vj_expected(packet: &[u8]) -> [u64; 7] {
    let be = |at: usize, n: usize| {
        packet[at..at + n]
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b))
    };
    let th = usize::from(packet[0] & 0x0F) * 4;
    let headers = th + usize::from(packet[th + 12] >> 4) * 4;
    [
        be(4, 2),
        be(th, 2),
        be(th + 8, 4),
        be(th + 14, 2),
        be(th + 16, 2),
        be(th + 4, 4),
        (packet.len() - headers) as u64,
    ]
}

/// Writes the VJ frames of `capture` and checks tshark's VJ dissector rebuilds the first
/// `compared` fields of [`VJ_FIELDS`] of every original packet. Returns the frames per PPP
/// protocol.
fn check_vj_frames(dir: &Path, capture: &Capture, path: Option<&Path>, compared: usize) {
    let frames = dir.join("frames.pcap");
    let mut args = vec!["--scheme", "vj", "--write-frames", frames.to_str().unwrap()];
    if let Some(path) = path {
        args.push(path.to_str().unwrap());
    }
    eval(&args);
    let (datalink, records) = records(&frames);
    assert_eq!(datalink, DataLink::PPP_WITH_DIR);
    let mut fields = vec!["ppp.protocol"];
    fields.extend_from_slice(&VJ_FIELDS[..compared]);
    let decoded = tshark_fields(&frames, &fields);
    assert_eq!(decoded.len(), capture.packets.len());
    let mut compressed = 0;
    for (i, ((record, tshark), packet)) in records
        .iter()
        .zip(&decoded)
        .zip(&capture.packets)
        .enumerate()
    {
        let protocol = u64::from(u16::from_be_bytes([record.1[3], record.1[4]]));
        assert_eq!(tshark[0], [protocol], "frame {}", i + 1);
        compressed += usize::from(protocol == 0x2D);
        let expected = vj_expected(packet);
        for (k, name) in VJ_FIELDS[..compared].iter().enumerate() {
            assert_eq!(tshark[k + 1], [expected[k]], "frame {}: {name}", i + 1);
        }
    }
    assert!(compressed > 0, "no COMPRESSED_TCP frame");
}

#[test]
fn vj_frames_decode_in_tsharks_own_dissector() {
    if !tshark_available() {
        return;
    }
    let dir = scratch("vj");
    // Timestamps on: tshark's VJ dissector drops the TCP options of a compressed frame, so it
    // gets the sequence number and data length of some wrong; the other fields are exact.
    check_vj_frames(&dir, &builtin(), None, 5);
    // Timestamps off: every field of every packet.
    if let Some(path) = shared("linux/b_bulk_v4_nots.pcap") {
        let capture = capture::read_file(&path).unwrap();
        check_vj_frames(&dir, &capture, Some(&path), VJ_FIELDS.len());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn delivered_packets_on_a_clean_link_are_the_capture_byte_for_byte() {
    let dir = scratch("delivered");
    let mut cases = vec![(builtin(), None)];
    if let Some(path) = shared("linux/h_mixed_v4.pcap") {
        cases.push((capture::read_file(&path).unwrap(), Some(path)));
    }
    for (capture, path) in cases {
        let delivered = dir.join("delivered.pcap");
        let mut args = vec!["--write-delivered", delivered.to_str().unwrap()];
        if let Some(path) = &path {
            args.push(path.to_str().unwrap());
        }
        eval(&args);
        for scheme in taroc_core::variant::NAMES {
            let file = dir.join(format!("delivered.{scheme}.pcap"));
            let (datalink, records) = records(&file);
            assert_eq!(datalink, DataLink::RAW);
            assert_eq!(records.len(), capture.packets.len(), "{scheme}");
            for (i, (record, packet)) in records.iter().zip(&capture.packets).enumerate() {
                assert!(record.1 == *packet, "{scheme}: packet {i} differs");
                let time = capture.times[i];
                assert_eq!(record.0.as_micros(), time.as_micros(), "{scheme}: {i}");
            }
            let drops = std::fs::read_to_string(dir.join(format!("delivered.{scheme}.drops.csv")));
            assert_eq!(
                drops.unwrap(),
                "index,time,direction,kind,fate,reason,delivered_record\n"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn per_packet_lines_add_up_to_the_report() {
    let dir = scratch("per-packet");
    let csv = dir.join("packets.csv");
    let delivered = dir.join("delivered.pcap");
    let json = eval(&[
        "--loss",
        "0.05",
        "--ber",
        "1e-5",
        "--seed",
        "5",
        "--json",
        "--per-packet",
        csv.to_str().unwrap(),
        "--write-delivered",
        delivered.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "scheme,index,time,direction,kind,original_header_bytes,link_header_bytes,fate,reason"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut drops_seen = 0;
    for line in json.lines() {
        let result: serde_json::Value = serde_json::from_str(line).unwrap();
        let scheme = result["scheme"].as_str().unwrap();
        // A held packet delivered late has a second row, `delivered_late`.
        let all: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == scheme).collect();
        let late = all.iter().filter(|r| r[7] == "delivered_late").count() as u64;
        let mine: Vec<&&Vec<&str>> = all.iter().filter(|r| r[7] != "delivered_late").collect();
        let packets: Vec<&&&Vec<&str>> = mine.iter().filter(|r| !r[1].is_empty()).collect();
        let count = |fate: &str| packets.iter().filter(|r| r[7] == fate).count() as u64;
        let sum = |column: usize| {
            mine.iter()
                .map(|r| r[column].parse::<i64>().unwrap())
                .sum::<i64>()
        };
        let get = |key: &str| result[key].as_u64().unwrap();
        assert_eq!(packets.len() as u64, get("packets"), "{scheme}");
        assert_eq!(mine.len() as u64 - get("packets"), get("feedback_frames"));
        assert_eq!(sum(6), result["link_header_bytes"].as_i64().unwrap());
        assert_eq!(sum(5), get("original_header_bytes") as i64);
        assert_eq!(
            count("delivered") + count("incorrect") + late,
            get("delivered")
        );
        assert_eq!(late, get("delivered_late"));
        assert_eq!(count("incorrect"), get("incorrect_delivered"));
        assert_eq!(count("link_lost"), get("link_lost"), "{scheme}");
        let bit_errors = packets.iter().filter(|r| r[8] == "bit_errors").count() as u64;
        assert_eq!(bit_errors, get("link_lost_bit_errors"));
        assert_eq!(count("context_damage") - late, get("context_damage_lost"));
        assert_eq!(count("refused"), get("other_refused"));
        // The companion of the delivered pcap lists every packet not delivered as captured.
        let drops =
            std::fs::read_to_string(dir.join(format!("delivered.{scheme}.drops.csv"))).unwrap();
        let listed = drops.lines().count() as u64 - 1;
        assert_eq!(
            listed,
            get("packets") - count("delivered") + late,
            "{scheme}"
        );
        drops_seen += listed;
    }
    assert!(drops_seen > 0, "the lossy link lost nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn outputs_take_one_capture_and_a_writable_path() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_taroc"))
            .arg("eval")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--per-packet", "x.csv", "a.pcap", "b.pcap"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("take one capture (2 given)"), "{err}");
    let out = run(&["--write-frames", "/nonexistent/dir/f.pcap"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("taroc eval: cannot create /nonexistent/dir/f."),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn outputs_from_standard_input_are_those_from_the_file_scheme_by_scheme() {
    let dir = scratch("stdin");
    let input = dir.join("input.pcap");
    std::fs::write(&input, taroc_cli::BUILTIN_CAPTURE).unwrap();
    let run = |tag: &str, source: &str| -> Vec<(String, Vec<u8>)> {
        let out_dir = dir.join(tag);
        std::fs::create_dir_all(&out_dir).unwrap();
        let path = |name: &str| out_dir.join(name).to_str().unwrap().to_string();
        let out = Command::new(env!("CARGO_BIN_EXE_taroc"))
            .arg("eval")
            .args(["--loss", "0.05", "--ber", "1e-5", "--seed", "7", "--json"])
            .args(["--scheme", "vj,iphc,taroc"])
            .args(["--write-frames", &path("f.pcap")])
            .args(["--write-delivered", &path("d.pcap")])
            .args(["--per-packet", &path("p.csv"), source])
            .stdin(std::fs::File::open(&input).unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let name = entry.file_name().into_string().unwrap();
                (name, std::fs::read(entry.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    };
    let from_file = run("file", input.to_str().unwrap());
    let from_stdin = run("stdin", "-");
    let names: Vec<&str> = from_file.iter().map(|(name, _)| name.as_str()).collect();
    // Three schemes: frames, delivered and its companion each, and one per-packet file; no
    // temporary file left behind.
    assert_eq!(names.len(), 3 * 3 + 1, "{names:?}");
    assert!(from_file == from_stdin, "the outputs differ with stdin");
    // The schemes run in lockstep, yet the per-packet lines come scheme by scheme, in order.
    let csv = &from_file
        .iter()
        .find(|(name, _)| name == "p.csv")
        .unwrap()
        .1;
    let text = String::from_utf8(csv.clone()).unwrap();
    let mut order: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|line| line.split(',').next().unwrap())
        .collect();
    order.dedup();
    assert!(
        order == ["vj", "iphc", "taroc"],
        "the per-packet lines come in {} runs of one scheme, not 3",
        order.len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `/dev/null` takes every file meant for it, with no name derived from it (no
/// `/dev/null.vj`, no `/dev/null.drops.csv`); a failed write says writing, naming the file.
#[test]
fn dev_null_takes_everything_and_a_failed_write_names_the_file() {
    let beside: Vec<PathBuf> = ["none", "vj", "drops.csv", "none.drops.csv", "vj.drops.csv"]
        .iter()
        .map(|suffix| PathBuf::from(format!("/dev/null.{suffix}")))
        .collect();
    let before: Vec<bool> = beside.iter().map(|p| p.exists()).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(["eval", "--scheme", "none,vj", "--write-frames", "/dev/null"])
        .args([
            "--write-delivered",
            "/dev/null",
            "--per-packet",
            "/dev/null",
        ])
        .output()
        .unwrap();
    let mut made = Vec::new();
    for (path, existed) in beside.iter().zip(before) {
        if !existed && path.exists() {
            let _ = std::fs::remove_file(path);
            made.push(path);
        }
    }
    assert!(made.is_empty(), "created {made:?}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if Path::new("/dev/full").exists() {
        let out = Command::new(env!("CARGO_BIN_EXE_taroc"))
            .args(["eval", "--scheme", "vj", "--write-frames", "/dev/full"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("taroc eval: cannot write /dev/full: No space left on device"),
            "{err}"
        );
        assert!(!err.contains("reading"), "{err}");
    }
}
