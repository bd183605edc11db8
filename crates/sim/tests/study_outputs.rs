//! Every study's outputs on a small run, byte for byte against the files in `tests/expected/`:
//! its report and its data files (CSV, JSON; the records `--json` prints are in them), with
//! only the wall-clock figures left out, and its plots (SVG) by digest (`plots.txt`). A change
//! to the simulator that moves any figure of a study shows here; a change meant to move them
//! (a codec's behaviour, a study's model) renews the files with
//! `TAROC_BLESS=1 cargo test -p taroc-sim --test study_outputs`.

use std::path::{Path, PathBuf};

use taroc_core::variant::Variant;
use taroc_sim::studies::appendix_b::{AppendixB, GridOptions};
use taroc_sim::studies::dclor::{Dclor, StudyConfig, StudyOptions};
use taroc_sim::studies::decoupling::{Decoupling, Effort, Options};
use taroc_sim::studies::lowloss::{runs, LowLoss};
use taroc_sim::studies::Study;
use taroc_sim::tcp::timeout::ResponseKind;

/// The schemes of the draft's tables (whose codecs these files pin down).
const DRAFT_SCHEMES: [&str; 5] = ["none", "vj", "iphc", "taroc", "ideal"];

/// What a run of `S` with `options` writes or prints: its report, its data files, and a digest
/// of each of its plots (`plots.txt`), by name.
fn outputs<S: Study>(options: &S::Options) -> Vec<(String, Vec<u8>)> {
    let results = S::run(options, &|_| {}).unwrap();
    let claims = S::claims(&results);
    let records = S::records(&results);
    let mut out = vec![(
        "report.txt".to_string(),
        report(&S::report(&results, &claims)),
    )];
    for (name, bytes) in S::files(&results, &claims, &records).unwrap() {
        let bytes = if name.ends_with(".json") {
            without_wall_clock(&bytes)
        } else {
            bytes
        };
        out.push((name, bytes));
    }
    let mut digests = String::new();
    for (name, svg) in S::plots(&results) {
        digests += &format!(
            "{name} {} bytes, FNV-1a {:016x}\n",
            svg.len(),
            fnv1a(svg.as_bytes())
        );
        let kept = std::env::temp_dir().join(format!("taroc-study-outputs-{name}"));
        let _ = std::fs::write(kept, svg);
    }
    out.push(("plots.txt".into(), digests.into_bytes()));
    out
}

/// The 64-bit FNV-1a hash of `bytes`: a digest that stays the same from one toolchain to the
/// next.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The report without the lines that tell how long the runs took.
fn report(text: &str) -> Vec<u8> {
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains(" s wall")).collect();
    (kept.join("\n") + "\n").into_bytes()
}

/// Indented JSON with the values of its `wall_s` fields masked.
fn without_wall_clock(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        match line.find("\"wall_s\": ") {
            Some(at) => {
                let comma = if line.trim_end().ends_with(',') {
                    ","
                } else {
                    ""
                };
                let end = if line.ends_with('\n') { "\n" } else { "" };
                out += &format!("{}\"wall_s\": \"-\"{comma}{end}", &line[..at]);
            }
            None => out += line,
        }
    }
    out.into_bytes()
}

/// Compares `outputs` with the expected files of `study` (or writes them, with `TAROC_BLESS`).
fn check(study: &str, outputs: Vec<(String, Vec<u8>)>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(study);
    if std::env::var_os("TAROC_BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &outputs {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        return;
    }
    let mut expected: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    expected.sort();
    let mut names: Vec<&str> = outputs.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    let files: Vec<String> = expected
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, files, "{study}: the files written");
    for (name, bytes) in &outputs {
        let want = std::fs::read(dir.join(name)).unwrap();
        if *bytes != want {
            let (got, want) = (
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(&want),
            );
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            panic!(
                "{study}/{name} differs from line {} (the plots of this run are in the temporary \
                 directory, taroc-study-outputs-*):\n  got:  {:?}\n  want: {:?}",
                line + 1,
                got.lines().nth(line),
                want.lines().nth(line)
            );
        }
    }
}

#[test]
fn appendix_b_is_unchanged() {
    let options = GridOptions {
        seeds: 1,
        duration_s: 30.0,
        threads: 2,
        schemes: DRAFT_SCHEMES.map(String::from).to_vec(),
    };
    check("appendix-b", outputs::<AppendixB>(&options));
}

#[test]
fn low_loss_is_unchanged() {
    let options = runs::Options {
        seeds: 1,
        duration_s: 20.0,
        threads: 2,
        schemes: [
            "none",
            "iphc-plain",
            "iphc-twice",
            "iphc",
            "taroc",
            "ideal-5",
        ]
        .map(String::from)
        .to_vec(),
        bers: vec![1e-8, 2e-7, 1e-5],
    };
    check("low-loss", outputs::<LowLoss>(&options));
}

#[test]
fn dclor_is_unchanged() {
    let options = StudyOptions {
        responses: ResponseKind::ALL.to_vec(),
        schemes: [None, Variant::by_name("vj"), Variant::by_name("taroc")].to_vec(),
        seeds: 1,
        threads: 2,
        base: StudyConfig::draft(ResponseKind::Standard, 400, 1),
    };
    check("dclor", outputs::<Dclor>(&options));
}

#[test]
fn decoupling_is_unchanged() {
    let effort = Effort {
        seeds: 1,
        seconds: 0.3,
        quick: true,
    };
    let options = Options { effort, threads: 2 };
    check("decoupling", outputs::<Decoupling>(&options));
}
