//! End to end through the `taroc` binary: one exit-code rule for every command (0 done, 1 a
//! failure, 2 a bad command line), no progress bar where standard error is not a terminal, and
//! times only with `--timing`.

mod common;
use common::taroc;

#[test]
fn every_command_follows_one_exit_code_rule() {
    let usage: [&[&str]; 13] = [
        &["eval", "--burst", "3"],
        &["eval", "--scheme", "vj,vj"],
        &["eval", "--scheme", "zip"],
        &["sim", "--ber", "3", "--duration", "1"],
        &["sim", "--plot-window", "5"],
        &["reproduce", "--seeds", "0"],
        &["reproduce", "--schemes", "taroc,taroc"],
        &["reproduce", "appendix-b", "--seeds", "0"],
        &["reproduce", "--quick", "appendix-b"],
        &["gateway", "--tun-a", "a"],
        &["twice", "--nope"],
        &["mat", "--ber", "3"],
        &["reproduce", "decoupling", "--seeds", "1"],
    ];
    for args in usage {
        let (code, _, err) = taroc(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(!err.is_empty(), "{args:?}");
    }
    let failure: [&[&str]; 5] = [
        &["eval", "/nonexistent.pcap"],
        &["twice", "/nonexistent.pcap"],
        &["sim", "--scenario", "/nonexistent.toml"],
        &["reproduce", "--out", "/dev/null/sub", "--seeds", "1"],
        &[
            "reproduce",
            "decoupling",
            "--quick",
            "--out",
            "/dev/null/sub",
        ],
    ];
    for args in failure {
        let (code, _, err) = taroc(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    let (code, out, _) = taroc(&["sim", "--print-scenario"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("scheme = \"taroc\""), "{out}");
}

/// A run longer than a second with standard error piped: no progress bar, nothing on stderr.
#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // Simulated seconds, multiplied until the run outlasts the bar's delay (a release build
    // simulates 3000 s in a fifth of a second, a debug build in seconds).
    let mut duration = 3000u64;
    loop {
        let started = std::time::Instant::now();
        let (code, out, err) = taroc(&[
            "sim",
            "--duration",
            &duration.to_string(),
            "--bandwidth-kbps",
            "64",
        ]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.starts_with("taroc over 64 kbit/s"), "{out}");
        assert_eq!(err, "");
        if started.elapsed().as_secs_f64() > 1.0 {
            return;
        }
        assert!(duration < 3_000_000, "no run outlasted the bar's delay");
        duration *= 8;
    }
}

#[test]
fn times_only_with_timing() {
    let (code, out, _) = taroc(&["eval", "--scheme", "none,taroc"]);
    assert_eq!(code, Some(0));
    assert!(!out.contains("ns/pkt"), "{out}");
    let (code, out, _) = taroc(&["eval", "--scheme", "none,taroc", "--timing=3"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("comp ns/pkt") && out.contains("of 3 runs"),
        "{out}"
    );
    let (_, json, _) = taroc(&["eval", "--scheme", "taroc", "--json", "--timing=3"]);
    let line: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    let t = &line["timing"]["compress_ns_per_packet"];
    assert!(t["min"].as_f64() <= t["median"].as_f64() && t["median"].as_f64() <= t["max"].as_f64());
    assert!(line.get("compress_ns_per_packet").is_none());
}
