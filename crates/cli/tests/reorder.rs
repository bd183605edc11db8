//! End-to-end: a link that reorders frames between compressor and decompressor
//! (`taroc eval --reorder`). Every scheme that runs there delivers no packet wrong; VJ, which
//! cannot, is refused with its reason.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use taroc_cli::capture;
use taroc_cli::eval::{self, Options};
use taroc_core::variant::{self, Variant};

/// The shared Linux captures: `$TAROC_SHARED_CAPTURES/linux` if set, else beside the checkout.
fn linux_captures() -> PathBuf {
    std::env::var_os("TAROC_SHARED_CAPTURES")
        .map_or_else(
            || {
                PathBuf::from(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../../shared/captures"
                ))
            },
            PathBuf::from,
        )
        .join("linux")
}

#[test]
fn every_scheme_that_runs_on_a_reordering_link_delivers_nothing_wrong() {
    let dir = linux_captures();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        let _ = writeln!(
            std::io::stdout(),
            "SKIPPED every_scheme_that_runs_on_a_reordering_link_delivers_nothing_wrong: needs {} \
             (absent), so it checked nothing",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    files.sort();
    let schemes: Vec<Variant> = variant::NAMES
        .iter()
        .chain(&variant::EXTRA_NAMES)
        .filter(|&&name| name != "vj")
        .map(|name| {
            Variant::by_name(name)
                .unwrap()
                .for_reordering_link()
                .unwrap()
        })
        .collect();
    let mut reordered = 0;
    for (i, file) in files.iter().enumerate() {
        // Both a light and a heavy reordering, a capture each in turn.
        let (reorder, seed) = [(0.05, 1), (0.3, 2)][i % 2];
        {
            let options = Options {
                reorder,
                seed,
                ..Options::default()
            };
            let mut reader = capture::open(file).unwrap();
            let results = eval::evaluate(&mut reader, &schemes, &options, |_| {}).unwrap();
            for r in &results {
                let what = format!("{} / {} at --reorder {reorder}", r.capture, r.scheme);
                assert_eq!(r.incorrect_delivered, 0, "{what}");
                assert_eq!(r.link_lost, 0, "{what}");
                assert_eq!(
                    r.delivered + r.context_damage_lost + r.other_refused,
                    r.packets,
                    "{what}: every frame arrives, held back or not"
                );
                assert!(r.reordered_on_link > 0, "{what}");
                reordered += r.reordered_on_link;
            }
        }
    }
    assert!(reordered > 0, "no capture under {}", dir.display());
    // What EXPECT_REORDERING prevents: IPHC's deltas applied out of order rebuild a wrong IPv4
    // Identification that passes the TCP checksum.
    let plain = Variant::by_name("iphc").unwrap();
    let options = Options {
        reorder: 0.05,
        seed: 1,
        ..Options::default()
    };
    let mut reader = capture::open(&dir.join("a_bulk_v4_default.pcap")).unwrap();
    let results = eval::evaluate(&mut reader, &[plain], &options, |_| {}).unwrap();
    assert!(results[0].incorrect_undetected > 0, "{:?}", results[0]);
}

#[test]
fn vj_is_refused_on_a_reordering_link_and_left_out_of_the_default_list() {
    let builtin = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_taroc"))
            .args(["eval", "--json", "--reorder", "0.1"])
            .args(extra)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let (code, stdout, stderr) = builtin(&["--scheme", "vj"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("cannot run on a link that reorders") && stderr.contains("RFC 1144"),
        "{stderr}"
    );
    let (code, stdout, stderr) = builtin(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("left out"), "{stderr}");
    let schemes: Vec<String> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["scheme"].to_string())
        .collect();
    assert_eq!(schemes.len(), variant::NAMES.len() - 1, "{schemes:?}");
    assert!(!schemes.iter().any(|s| s == "\"vj\""));
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["incorrect_delivered"], 0, "{line}");
    }
}
