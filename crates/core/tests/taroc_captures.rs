//! TAROC over the real Linux captures: byte-exact round trips on a clean link, and no incorrect
//! delivery when frames are lost.

mod common;

use common::Outcome;
use taroc_core::taroc::{TarocCompressor, TarocConfig, TarocDecompressor, Why};

/// Runs `packets` through a compressor/decompressor pair per direction; `lose(i)` drops frame i.
fn run(packets: &[Vec<u8>], lose: impl Fn(usize) -> bool) -> Outcome {
    common::round_trip(
        packets,
        [
            TarocCompressor::new(TarocConfig::default()),
            TarocCompressor::new(TarocConfig::default()),
        ],
        [
            TarocDecompressor::new(TarocConfig::default()),
            TarocDecompressor::new(TarocConfig::default()),
        ],
        |c| c.stats().clone(),
        lose,
    )
}

#[test]
fn clean_link_round_trips_every_capture() {
    let Some(dir) = common::linux_captures() else {
        return;
    };
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 8);
    for path in names {
        let packets = common::read_raw_ip_pcap(&path);
        let o = run(&packets, |_| false);
        let compressed: u64 = o.stats.iter().map(|s| s.frames(Why::Compressed)).sum();
        eprintln!(
            "{}: {} packets, {} compressed, {:.2} header bytes/packet",
            path.file_name().unwrap().to_string_lossy(),
            o.packets,
            compressed,
            o.link_header_bytes as f64 / o.packets as f64
        );
        for why in Why::ALL {
            let n: u64 = o.stats.iter().map(|s| s.frames(why)).sum();
            if n > 0 {
                eprint!(" {}={n}", why.name());
            }
        }
        eprintln!();
        for part in taroc_core::taroc::Part::ALL {
            let n: u64 = o.stats.iter().map(|s| s.bytes(part)).sum();
            eprint!(" {}={:.2}/pkt", part.name(), n as f64 / o.packets as f64);
        }
        eprintln!();
        assert_eq!(
            (o.delivered, o.damaged),
            (o.packets, 0),
            "{}",
            path.display()
        );
    }
}

#[test]
fn lossy_link_never_delivers_a_wrong_packet() {
    let Some(dir) = common::linux_captures() else {
        return;
    };
    for name in [
        "a_bulk_v4_default.pcap",
        "b_bulk_v4_nots.pcap",
        "d_bulk_v6_default.pcap",
    ] {
        let packets = common::read_raw_ip_pcap(&dir.join(name));
        // Lose every 37th frame and a burst of 5 in the middle.
        let mid = packets.len() / 2;
        let o = run(&packets, |i| i % 37 == 5 || (mid..mid + 5).contains(&i));
        let intact = o.delivered + o.damaged;
        eprintln!(
            "{name}: {} intact frames, {} context-damage losses",
            intact, o.damaged
        );
        assert!(
            o.damaged * 1000 <= intact,
            "{name}: {} context-damage losses of {intact}",
            o.damaged
        );
    }
}

/// Without the shared captures the capture tests pass having checked nothing, so they say so
/// where a user sees it: a `SKIPPED` line in `cargo test`'s own output (no `--nocapture`).
#[test]
fn a_skipped_capture_test_says_so_without_nocapture() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["clean_link_round_trips_every_capture", "--exact"])
        .env("TAROC_SHARED_CAPTURES", "/nonexistent/taroc-captures")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "SKIPPED clean_link_round_trips_every_capture: needs \
             /nonexistent/taroc-captures/linux (absent)"
        ),
        "{stdout}"
    );
}
