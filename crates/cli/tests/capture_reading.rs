//! End-to-end: `taroc eval` reads captures as tshark does. A capture cut in the middle of a
//! record gives its complete records and a warning; `-` reads standard input (pcap and
//! pcapng); BSD loopback (NULL, LOOP) and PPP link types give the same packets as raw IP; and
//! captures stream, so memory does not grow with the capture's size.
//!
//! The files are built here, from the built-in capture's records (read by this file's own
//! little pcap reader, not the program's) or from a generated bulk transfer.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// One pcap record: seconds, microseconds, captured bytes.
type Record = (u32, u32, Vec<u8>);

/// The records of a little-endian microsecond pcap file (the built-in capture's format).
fn pcap_records(file: &[u8]) -> Vec<Record> {
    assert_eq!(file[..4], [0xD4, 0xC3, 0xB2, 0xA1], "a little-endian pcap");
    let field = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
    let mut records = Vec::new();
    let mut at = 24;
    while at + 16 <= file.len() {
        let len = field(at + 8) as usize;
        if at + 16 + len > file.len() {
            break;
        }
        records.push((
            field(at),
            field(at + 4),
            file[at + 16..at + 16 + len].to_vec(),
        ));
        at += 16 + len;
    }
    records
}

fn pcap_header(link_type: u32) -> Vec<u8> {
    let mut file = 0xA1B2_C3D4u32.to_le_bytes().to_vec();
    file.extend_from_slice(&[2, 0, 4, 0]);
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&262_144u32.to_le_bytes());
    file.extend_from_slice(&link_type.to_le_bytes());
    file
}

fn pcap_record(file: &mut impl Write, (seconds, micros, data): &Record) {
    let mut header = Vec::with_capacity(16);
    for value in [*seconds, *micros, data.len() as u32, data.len() as u32] {
        header.extend_from_slice(&value.to_le_bytes());
    }
    file.write_all(&header).unwrap();
    file.write_all(data).unwrap();
}

/// A pcap file of link type `link_type` whose frames are `records`' data behind `header`.
fn pcap_file(link_type: u32, header: &[u8], records: &[Record]) -> Vec<u8> {
    let mut file = pcap_header(link_type);
    for (seconds, micros, data) in records {
        let frame = [header, data].concat();
        pcap_record(&mut file, &(*seconds, *micros, frame));
    }
    file
}

/// A pcapng file (one raw-IP interface, microsecond time stamps) of `records`.
fn pcapng_file(records: &[Record]) -> Vec<u8> {
    fn block(file: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let len = 12 + body.len().div_ceil(4) * 4;
        file.extend_from_slice(&kind.to_le_bytes());
        file.extend_from_slice(&(len as u32).to_le_bytes());
        file.extend_from_slice(body);
        file.resize(file.len() + len - 12 - body.len(), 0);
        file.extend_from_slice(&(len as u32).to_le_bytes());
    }
    let mut file = Vec::new();
    let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut file, 0x0A0D_0D0A, &shb);
    block(&mut file, 1, &[101, 0, 0, 0, 0, 0, 0, 0]);
    for (seconds, micros, data) in records {
        let ticks = u64::from(*seconds) * 1_000_000 + u64::from(*micros);
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend_from_slice(&((ticks >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ticks as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(data);
        block(&mut file, 6, &epb);
    }
    file
}

/// A fresh directory for one test's files.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taroc-reading-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `taroc` with `args`, feeding it `stdin`.
fn taroc(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        // The program may stop reading early (a bad file): a broken pipe is no failure here.
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    output
}

/// The JSON lines of a run, without its name and timings (which differ between runs).
fn results(output: &Output) -> Vec<Value> {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    stdout
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            let object = value.as_object_mut().unwrap();
            for field in [
                "capture",
                "compress_ns_per_packet",
                "decompress_ns_per_packet",
            ] {
                object.remove(field);
            }
            value
        })
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// `taroc eval --json` of the file at `path` with `schemes`.
fn eval_file(path: &Path, schemes: &str) -> Output {
    let path = path.to_str().unwrap();
    taroc(&["eval", "--json", "--scheme", schemes, path], b"")
}

#[test]
fn a_capture_cut_in_a_record_yields_its_complete_records_and_a_warning() {
    let dir = scratch_dir("cut");
    let builtin = taroc_cli::BUILTIN_CAPTURE;
    let complete = pcap_records(builtin).len();
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &builtin[..builtin.len() - 100]).unwrap();
    let kept = pcap_records(&builtin[..builtin.len() - 100]).len();
    assert_eq!(kept, complete - 1);

    let output = eval_file(&cut, "none,taroc");
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = results(&output);
    assert_eq!(lines.len(), 2);
    for line in &lines {
        assert_eq!(line["records"], kept);
        assert_eq!(line["packets"], kept);
        assert_eq!(line["delivered"], kept);
    }
    let warning = stderr(&output);
    assert_eq!(warning.lines().count(), 1, "{warning}");
    assert!(
        warning.starts_with(&format!(
            "taroc eval: warning: {}: cut short",
            cut.display()
        )),
        "{warning}"
    );
    assert!(
        warning.contains(&format!("read the {kept} complete records")),
        "{warning}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn standard_input_is_read_as_pcap_or_pcapng() {
    let builtin = taroc_cli::BUILTIN_CAPTURE;
    let from_file = taroc(&["eval", "--json", "--scheme", "none,vj,iphc"], b"");
    assert!(from_file.status.success());
    let expected = results(&from_file);
    assert_eq!(expected.len(), 3);

    let pcapng = pcapng_file(&pcap_records(builtin));
    for input in [builtin, &pcapng[..]] {
        let output = taroc(&["eval", "--json", "--scheme", "none,vj,iphc", "-"], input);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stderr(&output), "");
        let stdout = String::from_utf8(output.stdout.clone()).unwrap();
        assert!(stdout.contains(r#""capture":"stdin""#), "{stdout}");
        assert_eq!(results(&output), expected);
    }

    let empty = taroc(&["eval", "-"], b"");
    assert!(!empty.status.success());
    assert_eq!(stderr(&empty), "taroc eval: stdin: empty file\n");
}

#[test]
fn bsd_loopback_and_ppp_captures_give_the_packets_of_raw_ip() {
    let dir = scratch_dir("links");
    let records = pcap_records(taroc_cli::BUILTIN_CAPTURE);
    let raw = dir.join("raw.pcap");
    std::fs::write(&raw, pcap_file(101, &[], &records)).unwrap();
    let schemes = "none,taroc-plus";
    let expected = results(&eval_file(&raw, schemes));
    assert_eq!(expected[0]["packets"], records.len());

    let framings: [(&str, u32, &[u8]); 6] = [
        ("null-host-order", 0, &2u32.to_le_bytes()),
        ("null-network-order", 0, &2u32.to_be_bytes()),
        ("loop", 108, &2u32.to_be_bytes()),
        ("ppp", 9, &[0x00, 0x21]),
        ("ppp-hdlc-framing", 9, &[0xFF, 0x03, 0x00, 0x21]),
        ("ppp-hdlc", 50, &[0xFF, 0x03, 0x00, 0x21]),
    ];
    for (name, link_type, header) in framings {
        let path = dir.join(format!("{name}.pcap"));
        std::fs::write(&path, pcap_file(link_type, header, &records)).unwrap();
        let output = eval_file(&path, schemes);
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert_eq!(results(&output), expected, "{name}");
        let table = taroc(&["eval", "--scheme", "none", path.to_str().unwrap()], b"");
        let first = String::from_utf8(table.stdout).unwrap();
        let first = first.lines().next().unwrap().to_string();
        assert!(
            first.contains(&format!("link type {link_type} (")),
            "{first}"
        );
    }

    // A loopback frame of another family (AF_APPLETALK, 16) and a PPP LCP frame are counted
    // and skipped, not sent.
    let mut mixed = records[..3].to_vec();
    mixed[1].2 = [&16u32.to_le_bytes()[..], &records[1].2].concat();
    mixed[0].2 = [&2u32.to_le_bytes()[..], &records[0].2].concat();
    mixed[2].2 = [&2u32.to_le_bytes()[..], &records[2].2].concat();
    let path = dir.join("mixed-null.pcap");
    std::fs::write(&path, pcap_file(0, &[], &mixed)).unwrap();
    let line = &results(&eval_file(&path, "none"))[0];
    assert_eq!(
        (&line["records"], &line["non_ip_records"]),
        (&3.into(), &1.into())
    );
    assert_eq!(line["packets"], 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// RFC 1071 checksum of `bytes` added to `sum`.
fn checksum(mut sum: u32, bytes: &[u8]) -> u16 {
    for pair in bytes.chunks(2) {
        sum += u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Packet `i` of a bulk transfer: two data segments of 1448 bytes, then an ACK, over and over
/// (IPv4, TCP with valid checksums, no options).
fn bulk_packet(i: u64) -> Vec<u8> {
    let round = (i / 3) as u32;
    let (src, dst, seq, ack, payload) = match i % 3 {
        0 | 1 => (
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            1 + (2 * round + (i % 3) as u32) * 1448,
            1,
            1448,
        ),
        _ => (
            [10, 0, 0, 2],
            [10, 0, 0, 1],
            1,
            1 + (2 * round + 2) * 1448,
            0,
        ),
    };
    let total = 40 + payload;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&(i as u16).to_be_bytes());
    p[6] = 0x40;
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let ports: [u16; 2] = if payload > 0 { [5001, 80] } else { [80, 5001] };
    p[20..22].copy_from_slice(&ports[0].to_be_bytes());
    p[22..24].copy_from_slice(&ports[1].to_be_bytes());
    p[24..28].copy_from_slice(&seq.to_be_bytes());
    p[28..32].copy_from_slice(&ack.to_be_bytes());
    p[32] = 0x50;
    p[33] = 0x10;
    p[34..36].copy_from_slice(&64_000u16.to_be_bytes());
    for (k, byte) in p[40..].iter_mut().enumerate() {
        *byte = (k as u64 ^ i) as u8;
    }
    let header = checksum(0, &p[..20]);
    p[10..12].copy_from_slice(&header.to_be_bytes());
    let pseudo = [
        &src[..],
        &dst,
        &[0, 6],
        &((total - 20) as u16).to_be_bytes(),
    ]
    .concat();
    let pseudo_sum = pseudo
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    let tcp = checksum(pseudo_sum, &p[20..]);
    p[36..38].copy_from_slice(&tcp.to_be_bytes());
    p
}

/// Writes a raw-IP pcap of `packets` packets of a bulk transfer (one every 100 µs) to `path`;
/// returns its size in bytes.
fn write_bulk_capture(path: &Path, packets: u64) -> u64 {
    let mut file = BufWriter::new(std::fs::File::create(path).unwrap());
    file.write_all(&pcap_header(101)).unwrap();
    for i in 0..packets {
        let time = i * 100;
        let record = (
            (time / 1_000_000) as u32,
            (time % 1_000_000) as u32,
            bulk_packet(i),
        );
        pcap_record(&mut file, &record);
    }
    file.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Runs `taroc eval --json --scheme SCHEMES FILE` under `/usr/bin/time` and returns its
/// maximum resident set size in KiB, checking every packet was delivered.
fn max_rss_kib(path: &Path, schemes: &str, packets: u64) -> u64 {
    let report = path.with_extension("time");
    let output = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_taroc"))
        .args(["eval", "--json", "--scheme", schemes])
        .arg(path)
        .output()
        .expect("/usr/bin/time (Debian package `time`) runs");
    assert!(output.status.success(), "{}", stderr(&output));
    for line in results(&output) {
        assert_eq!(line["packets"], packets, "{line}");
        assert_eq!(line["delivered"], packets, "{line}");
        assert_eq!(line["incorrect_delivered"], 0, "{line}");
    }
    let report = std::fs::read_to_string(&report).unwrap();
    report.trim().parse().unwrap()
}

#[test]
fn memory_does_not_grow_with_the_capture() {
    let dir = scratch_dir("memory");
    let (small, large) = (dir.join("small.pcap"), dir.join("large.pcap"));
    let small_size = write_bulk_capture(&small, 3_000);
    let large_size = write_bulk_capture(&large, 60_000);
    let small_rss = max_rss_kib(&small, "none,vj", 3_000);
    let large_rss = max_rss_kib(&large, "none,vj", 60_000);
    println!(
        "max RSS: {small_rss} KiB for a {small_size}-byte capture, {large_rss} KiB for a \
         {large_size}-byte capture"
    );
    // Holding the capture would add its 60 MB; streaming adds nothing that grows with it.
    assert!(large_size - small_size > 55_000_000);
    assert!(
        large_rss < small_rss + 8 * 1024,
        "{large_rss} KiB for {large_size} bytes vs {small_rss} KiB for {small_size} bytes"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The figure in docs/results/speed.md: build with `--release` and run
/// `cargo test --release -p taroc-cli --test capture_reading -- --ignored --nocapture`.
#[test]
#[ignore = "writes a 1 GB capture of 10^6 packets and runs every scheme on it (minutes in a \
            debug build); run with --release --ignored for the figure in docs/results/speed.md"]
fn memory_on_a_capture_of_a_million_packets() {
    let dir = scratch_dir("million");
    let path = dir.join("million.pcap");
    let packets = 1_000_000;
    let size = write_bulk_capture(&path, packets);
    let schemes = taroc_core::variant::NAMES.join(",");
    let rss = max_rss_kib(&path, &schemes, packets);
    println!(
        "{packets} packets, {size} bytes ({:.1} MiB): max RSS of `taroc eval --scheme {schemes}` \
         {rss} KiB ({:.1} MiB)",
        size as f64 / 1048576.0,
        rss as f64 / 1024.0
    );
    assert!(rss * 1024 < size / 20, "{rss} KiB for {size} bytes");
    std::fs::remove_dir_all(&dir).unwrap();
}
