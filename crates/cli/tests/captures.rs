//! End-to-end: every shared capture through every scheme on a clean link, and the program's
//! handling of unreadable files and of its built-in capture.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use taroc_cli::capture;
use taroc_cli::eval::{self, Options, SchemeResult};
use taroc_core::variant::{self, Variant};

mod capture_dirs;
use capture_dirs::{capture_files, shared_dir as captures_dir};

fn assert_clean(result: &SchemeResult) {
    let what = format!("{} / {}", result.capture, result.scheme);
    assert_eq!(result.delivered, result.packets, "{what}: delivered");
    assert_eq!(
        result.incorrect_delivered, 0,
        "{what}: incorrect deliveries"
    );
    assert_eq!(
        result.context_damage_lost, 0,
        "{what}: context-damage losses"
    );
    assert_eq!(result.link_lost, 0, "{what}: link losses on a clean link");
}

#[test]
fn every_shared_capture_passes_every_scheme_on_a_clean_link() {
    let dir = &captures_dir();
    if !dir.is_dir() {
        // Past the harness's capture (not `print!`): seen without --nocapture.
        let _ = writeln!(
            std::io::stdout(),
            "SKIPPED every_shared_capture_passes_every_scheme_on_a_clean_link: needs {} \
             (absent), so it checked nothing",
            dir.display()
        );
        return;
    }
    let files = capture_files(dir);
    assert!(!files.is_empty(), "no captures under {}", dir.display());
    // Every variant, those not in the default lists too (a link declared lossy, say, is still
    // clean here).
    let mut every = Variant::all();
    every.extend(
        variant::EXTRA_NAMES
            .iter()
            .map(|name| Variant::by_name(name).expect("an extra variant")),
    );
    let (mut evaluated, mut packets, mut ppp, mut cut) = (0, 0u64, 0, 0);
    for file in &files {
        let opened = capture::open(file);
        if let Err(error) = &opened {
            assert_eq!(error.file, file.display().to_string());
            assert!(!error.problem.contains('\n'), "{error}");
            // PPP with direction: not something we take IP packets out of.
            assert!(error.problem.contains("PPP_WITH_DIR"), "{error}");
            ppp += 1;
            continue;
        }
        let mut reader = opened.unwrap();
        let results = eval::evaluate(&mut reader, &every, &Options::default(), |_| {});
        let results = results.unwrap();
        // Some fuzzer-made captures end in a few stray bytes: their complete records are still
        // worth running.
        if let Some(warning) = reader.warning() {
            assert!(warning.contains("cut short"), "{warning}");
            cut += 1;
        }
        assert_eq!(results.len(), every.len());
        for result in &results {
            assert_clean(result);
        }
        evaluated += 1;
        packets += results[0].packets;
    }
    eprintln!(
        "{evaluated} captures ({packets} packets) evaluated with {} schemes; {ppp} PPP_WITH_DIR \
         captures refused, {cut} truncated ones evaluated up to the cut",
        every.len()
    );
    assert!(evaluated > 0);
}

/// A fresh directory for one test's files.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taroc-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn unreadable_files_are_reported_and_the_others_still_run() {
    let dir = scratch_dir("bad-files");
    let truncated = dir.join("truncated.pcap");
    let builtin = taroc_cli::BUILTIN_CAPTURE;
    std::fs::write(&truncated, &builtin[..builtin.len() - 100]).unwrap();
    let garbage = dir.join("garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture at all").unwrap();
    let good = dir.join("good.pcap");
    std::fs::write(&good, builtin).unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(["eval", "--json", "--scheme", "none"])
        .args([&truncated, &garbage, &good])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        !output.status.success(),
        "exit status must report the failures"
    );
    let errors: Vec<&str> = stderr.lines().collect();
    assert_eq!(errors.len(), 2, "{stderr}");
    // A file cut in a record is read up to the cut, with a warning, as tshark does.
    assert!(
        errors[0].contains(&truncated.display().to_string()),
        "{stderr}"
    );
    assert!(
        errors[0].contains("warning") && errors[0].contains("cut short"),
        "{stderr}"
    );
    assert!(
        errors[1].contains(&garbage.display().to_string()),
        "{stderr}"
    );
    assert!(errors[1].contains("not a pcap"), "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0]["capture"], truncated.display().to_string());
    assert_eq!(lines[0]["packets"], 249);
    assert_eq!(lines[1]["capture"], good.display().to_string());
    assert_eq!(lines[1]["packets"], 250);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_builtin_capture_runs() {
    let output = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(["eval", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), variant::NAMES.len());
    for (line, name) in lines.iter().zip(variant::NAMES) {
        assert_eq!(line["capture"], "built-in:default_bulk_v4");
        assert_eq!(line["scheme"], name);
        assert_eq!(line["packets"], 250);
        assert_eq!(line["delivered"], 250);
        assert_eq!(line["incorrect_delivered"], 0);
        assert_eq!(line["context_damage_lost"], 0);
        assert_eq!(line["truncated_records"], 0);
        for field in [
            "original_header_bytes",
            "link_header_bytes",
            "header_bytes_per_packet",
            "link_lost",
        ] {
            assert!(line[field].is_number(), "{field} in {line}");
        }
    }

    // The table names every scheme.
    let output = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .arg("eval")
        .output()
        .unwrap();
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.starts_with("built-in:default_bulk_v4: 250 records"),
        "{table}"
    );
    for name in variant::NAMES {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{table}"
        );
    }
}

#[test]
fn same_seed_same_numbers() {
    let run = |seed: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_taroc"))
            .args([
                "eval",
                "--json",
                "--loss",
                "0.05",
                "--burst",
                "2",
                "--ber",
                "1e-5",
                "--reorder-before",
                "0.02",
                "--loss-before",
                "0.01",
                "--seed",
                seed,
            ])
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                let object = v.as_object_mut().unwrap();
                object.remove("compress_ns_per_packet");
                object.remove("decompress_ns_per_packet");
                v
            })
            .collect::<Vec<_>>()
    };
    let first = run("7");
    assert_eq!(first, run("7"));
    assert_ne!(first, run("8"));
    for line in &first {
        if line["scheme"] == "vj" {
            // RFC 1144 does not verify what it rebuilds: after a loss it delivers wrong packets
            // (here the link loses frames) for the receiver's TCP checksum to reject.
            assert!(line["incorrect_delivered"].as_u64().unwrap() > 0, "{line}");
        } else {
            assert_eq!(line["incorrect_delivered"], 0, "{line}");
        }
        let sum = [
            "delivered",
            "link_lost",
            "context_damage_lost",
            "other_refused",
        ]
        .iter()
        .map(|f| line[*f].as_u64().unwrap())
        .sum::<u64>();
        assert_eq!(sum, line["packets"].as_u64().unwrap());
    }
}

/// Without the shared captures the end-to-end test passes having checked nothing, so it says so
/// where a user sees it: a `SKIPPED` line in `cargo test`'s own output (no `--nocapture`).
#[test]
fn a_skipped_capture_test_says_so_without_nocapture() {
    let test = "every_shared_capture_passes_every_scheme_on_a_clean_link";
    let output = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact"])
        .env("TAROC_SHARED_CAPTURES", "/nonexistent/taroc-captures")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "SKIPPED {test}: needs /nonexistent/taroc-captures (absent)"
        )),
        "{stdout}"
    );
}

/// `taroc-plus-u` over a link losing 30% of the frames in bursts of mean 50 (seed 5) on the
/// shared capture without timestamps: the frames kept while bursts took the reference are
/// decoded late across the link's gaps, by trials further back where the mirrored interval
/// falls short (format section 5.9). Measured: 5 frames lost to context damage and 47 delivered
/// late, 13 and 39 without the trials; none wrong.
#[test]
fn kept_frames_decode_across_the_gaps_of_a_bursty_link() {
    let file = captures_dir().join("linux/b_bulk_v4_nots.pcap");
    if !file.is_file() {
        let _ = writeln!(
            std::io::stdout(),
            "SKIPPED kept_frames_decode_across_the_gaps_of_a_bursty_link: needs {} (absent), \
             so it checked nothing",
            file.display()
        );
        return;
    }
    let options = Options {
        loss: 0.3,
        burst: Some(50.0),
        seed: 5,
        ..Options::default()
    };
    let scheme = Variant::by_name("taroc-plus-u").unwrap();
    let mut reader = capture::open(&file).unwrap();
    let results = eval::evaluate(&mut reader, &[scheme], &options, |_| {}).unwrap();
    let r = &results[0];
    assert_eq!(r.incorrect_delivered, 0);
    assert!(r.delivered_late > 40, "{}", r.delivered_late);
    assert!(r.context_damage_lost <= 10, "{}", r.context_damage_lost);
}
