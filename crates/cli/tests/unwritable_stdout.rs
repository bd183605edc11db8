//! End to end through the `taroc` binary: results that cannot be written to standard output
//! (`> /dev/full`) make every command fail with status 1 and a one-line error, never exit 0
//! (the results lost) or panic (101); a reader that has gone (a broken pipe, as `| head`
//! leaves) makes it fail quietly, without a panic.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A fresh directory for one command's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taroc-stdout-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every command that prints results, with options that keep it short; files go to `dir`.
fn commands(dir: &str) -> Vec<Vec<String>> {
    let commands: [&[&str]; 20] = [
        &["eval"],
        &["eval", "--json", "--scheme", "vj"],
        &["twice"],
        &["twice", "--json"],
        &["sim", "--duration", "5"],
        &["sim", "--duration", "5", "--json"],
        &["sim", "--print-scenario"],
        &["mat"],
        &["mat", "--json"],
        &["mat", "--ber", "1e-6"],
        &[
            "reproduce",
            "--seeds",
            "1",
            "--duration",
            "10",
            "--schemes",
            "none",
            "--no-png",
            "--out",
            dir,
        ],
        &[
            "reproduce",
            "low-loss",
            "--quick",
            "--seeds",
            "1",
            "--duration",
            "10",
            "--schemes",
            "none",
            "--no-png",
            "--out",
            dir,
        ],
        &[
            "reproduce",
            "dclor",
            "--scale-down",
            "200",
            "--no-png",
            "--out",
            dir,
        ],
        &["completions", "bash"],
        &["man"],
        &["gateway", "genkey"],
        &["--help"],
        &["--version"],
        &["eval", "--help"],
        &["gateway", "bench", "-h"],
    ];
    commands
        .iter()
        .map(|args| args.iter().map(|a| a.to_string()).collect())
        .collect()
}

/// Runs `taroc ARGS` with standard output going to `stdout`.
fn run(args: &[String], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("the taroc binary runs")
}

#[test]
fn a_full_standard_output_fails_every_command_with_one_line() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        println!("notice: no /dev/full; skipping");
        return;
    };
    let dir = scratch("full");
    for args in commands(dir.to_str().unwrap()) {
        let out = run(&args, Stdio::from(full.try_clone().unwrap()));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.ends_with(
                "cannot write to standard output: No space left on device (os error 28)\n"
            ) && err.starts_with("taroc"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reader_gone_fails_quietly_without_a_panic() {
    let dir = scratch("pipe");
    for args in commands(dir.to_str().unwrap()) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = run(&args, Stdio::from(writer));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("standard output"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
