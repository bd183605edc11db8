//! `taroc reproduce low-loss` end to end: bad input is a usage error (2) with a one-line
//! message, an unwritable --out a failure (1), and a small run prints one JSON record per
//! figure, scheme and BER and writes the JSON and plots.

mod common;
use common::taroc;

#[test]
fn bad_input_is_a_usage_error_and_bad_out_a_failure() {
    for args in [
        &["reproduce", "low-loss", "--seeds", "0"][..],
        &["reproduce", "low-loss", "--schemes", "zip"],
        &["reproduce", "low-loss", "--schemes", "none,none"],
        &["reproduce", "low-loss", "--duration", "-1"],
        &["reproduce", "low-loss", "--bogus"],
    ] {
        let (code, _, err) = taroc(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(!err.is_empty(), "{args:?}");
    }
    let (code, _, err) = taroc(&["reproduce", "low-loss", "--out", "/dev/null/sub"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_small_run_prints_json_records_and_writes_plots() {
    let dir = std::env::temp_dir().join(format!("taroc-lowloss-cli-{}", std::process::id()));
    let out = dir.to_str().unwrap();
    let (code, stdout, err) = taroc(&[
        "reproduce",
        "low-loss",
        "--quick",
        "--seeds",
        "1",
        "--duration",
        "10",
        "--schemes",
        "none,iphc-plain",
        "--json",
        "--no-png",
        "--out",
        out,
    ]);
    assert_eq!(code, Some(0), "{err}");
    // Figures 10, 11, 12, 14, 18 (one BER each) and 19 (the quick run's three): 8 x 2 schemes.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 16, "{stdout}");
    for field in [
        "\"study\":\"low-loss\"",
        "\"figure\":",
        "\"topology\":",
        "\"scheme\":",
        "\"ber\":",
        "\"goodput_bytes_per_s\":",
        "\"delivered_segments\":",
        "\"seeds\":1",
    ] {
        assert!(lines.iter().all(|l| l.contains(field)), "{field}: {stdout}");
    }
    for name in [
        "low-loss.json",
        "low-loss-figure-10.svg",
        "low-loss-figure-19.svg",
        "low-loss-analytic.svg",
    ] {
        assert!(dir.join(name).exists(), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
