//! `taroc reproduce dclor` end to end: bad input is a usage error (2) with a one-line message,
//! an unwritable --out a failure (1), and a short run's JSON Lines hold one record per file
//! size and response with the fields the study reports; `--check` fails exactly when a claim
//! printed as FAILS; with `--schemes`, a record per scheme carries the codec's counters.

mod common;
use common::taroc;

#[test]
fn bad_input_is_a_usage_error_and_an_unwritable_out_a_failure() {
    let usage: [&[&str]; 7] = [
        &["reproduce", "dclor", "--responses", "reno"],
        &["reproduce", "dclor", "--schemes", "rohc"],
        &["reproduce", "dclor", "--seeds", "0"],
        &["reproduce", "dclor", "--reorder", "2"],
        &["reproduce", "dclor", "--max-wait-s=-1"],
        &["reproduce", "dclor", "--iw", "0"],
        &["reproduce", "dclor", "--scale-down", "0"],
    ];
    for args in usage {
        let (code, _, err) = taroc(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    let (code, _, err) = taroc(&["reproduce", "dclor", "--quick", "--out", "/dev/null/sub"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn json_has_a_record_per_size_and_response_and_check_follows_the_claims() {
    let dir = std::env::temp_dir().join(format!("taroc-dclor-cli-{}", std::process::id()));
    let out_dir = dir.to_str().unwrap();
    let (code, out, err) = taroc(&[
        "reproduce",
        "dclor",
        "--scale-down",
        "200",
        "--json",
        "--no-png",
        "--out",
        out_dir,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON per line"))
        .collect();
    assert_eq!(records.len(), 3 * 5, "5, 10, 100 KB x five responses");
    for r in &records {
        assert_eq!(r["study"], "dclor");
        for field in [
            "file_kb",
            "response",
            "downloads",
            "download_time_mean_s",
            "download_time_variance_s2",
            "spectral_efficiency",
            "timeouts",
            "spurious_timeouts",
            "detected_spurious",
            "seeds",
        ] {
            assert!(!r[field].is_null(), "{field} in {r}");
        }
        assert!(r["spurious_timeouts"].as_u64() <= r["timeouts"].as_u64());
    }
    for file in ["dclor.csv", "dclor.json", "dclor-cdf.svg"] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    let (code, table, err) = taroc(&[
        "reproduce",
        "dclor",
        "--scale-down",
        "200",
        "--check",
        "--no-png",
        "--responses",
        "standard,dclor,eifel,frto",
        "--out",
        out_dir,
    ]);
    let failed = table.contains("[FAILS]");
    assert_eq!(code, Some(if failed { 1 } else { 0 }), "{table}{err}");
    assert!(table.contains("The draft's claims:"), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schemes_add_a_record_per_scheme_with_the_codec_counters() {
    let dir = std::env::temp_dir().join(format!("taroc-dclor-hc-{}", std::process::id()));
    let (code, out, err) = taroc(&[
        "reproduce",
        "dclor",
        "--scale-down",
        "400",
        "--responses",
        "dclor",
        "--schemes",
        "none,taroc",
        "--json",
        "--no-png",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON per line"))
        .collect();
    assert_eq!(records.len(), 3 * 2, "5, 10, 100 KB x two schemes");
    for (r, scheme) in records.iter().zip(["none", "taroc"].iter().cycle()) {
        assert_eq!(r["scheme"], *scheme, "{r}");
        let codec = &r["codec"];
        assert!(codec["frames"].as_u64() > Some(0), "{r}");
        for field in ["context_damage", "incorrect", "caught_by_tcp"] {
            assert!(codec[field].is_u64(), "{field} in {r}");
        }
        for field in ["true_detections", "false_detections", "missed_unresolved"] {
            assert!(r[field].is_u64(), "{field} in {r}");
        }
    }
    let none = &records[0]["codec"];
    assert_eq!(
        none["wire_bytes"].as_u64(),
        Some(none["packet_bytes"].as_u64().unwrap() + none["frames"].as_u64().unwrap()),
        "none: the packet and its kind byte"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
