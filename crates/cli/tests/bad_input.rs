//! End to end through the `taroc` binary: bad input gives a one-line error and exit status 1,
//! never a panic (101) or a run-away read.

use std::process::Command;

/// Runs `taroc ARGS`: (exit code, stderr).
fn taroc(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(args)
        .output()
        .expect("the taroc binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sim_refuses_endless_files_and_settings_that_would_panic() {
    let (code, err) = taroc(&["sim", "--scenario", "/dev/zero"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/dev/zero: larger than"), "{err}");

    let dir = std::env::temp_dir().join(format!("taroc-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (setting, name) in [
        ("min_rto_ms = 61000", "min_rto_ms"),
        ("wired_delay_ms = 18446744073709551615", "wired_delay_ms"),
        ("decompressor_reset_s = nan", "decompressor_reset_s"),
        ("[errors]\nkind = \"gilbert_elliott_time\"\ngood_ber = 0.0\nbad_ber = 1.0\nmean_good_s = 1.0\nmean_bad_s = 0.0", "mean_bad_s"),
    ] {
        let file = dir.join("s.toml");
        std::fs::write(&file, format!("duration_s = 5.0\n{setting}\n")).unwrap();
        let (code, err) = taroc(&["sim", "--scenario", file.to_str().unwrap()]);
        assert_eq!(code, Some(1), "{setting}: {err}");
        assert_eq!(err.lines().count(), 1, "{setting}: {err}");
        assert!(err.starts_with("taroc sim: ") && err.contains(name), "{setting}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A time too large for the clocks is a usage error naming the option and its limit, not a
/// panic: the gateway, `transfer`, `resume` and `bench` alike.
#[test]
fn gateway_times_beyond_the_limit_are_usage_errors() {
    for args in [
        &["gateway", "--duration", "1e20"][..],
        &["gateway", "--stats-interval", "1e20"],
        &["gateway", "--delay", "1e30"],
        &[
            "gateway",
            "transfer",
            "--send",
            "127.0.0.1:9",
            "--time-limit",
            "1e20",
        ],
        &["gateway", "resume", "--time-limit", "1e20"],
        &["gateway", "bench", "--duration", "1e20"],
    ] {
        let (code, err) = taroc(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("limit of 1000000000") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
