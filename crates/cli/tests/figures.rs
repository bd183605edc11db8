//! The figures a user sees, locked: `taroc eval` on every capture (the shared ones beside the
//! checkout and the project's own, `captures/`), every scheme on a clean link, and the
//! robust schemes on a lossy one, must give exactly the figures stored in
//! `tests/figures.tsv`. A change that moves a byte on the wire, or a frame's fate, fails here
//! with the rows that moved; a change meant to move them stores the new figures with
//! `TAROC_BLESS=1 cargo test -p taroc-cli --test figures` (and says so in its commit).
//!
//! The shared captures are read from `$TAROC_SHARED_CAPTURES` or `../shared/captures`; where
//! they are absent, their rows are not compared (the test says so) and the project's own still
//! are.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use taroc_cli::capture;
use taroc_cli::eval::{self, Options, SchemeResult};
use taroc_core::variant::{self, Variant};

mod capture_dirs;
use capture_dirs::{capture_files, shared_dir};

/// The stored figures.
const STORED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/figures.tsv");

/// The lossy setting: 10% random loss, seed 3.
const LOSS: f64 = 0.1;
const SEED: u64 = 3;

/// The schemes run on the lossy link (those that repair their contexts).
const LOSSY_SCHEMES: [&str; 3] = ["taroc-repair", "taroc-plus", "taroc-plus-u"];

fn own_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures"))
}

/// Every capture under `dir` that holds IP packets, sorted, each with the name its rows
/// carry (`shared/…` or `own/…`, relative to `dir`).
fn captures(dir: &Path, prefix: &str) -> Vec<(String, PathBuf)> {
    capture_files(dir)
        .into_iter()
        .filter(|path| capture::open(path).is_ok())
        .map(|path| {
            let name = format!(
                "{prefix}/{}",
                path.strip_prefix(dir).unwrap_or(&path).display()
            );
            (name, path)
        })
        .collect()
}

/// A row's figures: what a user reads in `taroc eval`'s output.
fn row(result: &SchemeResult) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        result.packets,
        result.link_header_bytes,
        result.feedback_bytes,
        result.delivered,
        result.link_lost,
        result.context_damage_lost,
        result.other_refused,
        result.incorrect_delivered
    )
}

const HEADER: &str = "capture\tlink\tscheme\tpackets\tlink_header_bytes\tfeedback_bytes\t\
                      delivered\tlink_lost\tcontext_damage\tother_refused\tincorrect";

/// The figures of `file` (named `name`): every scheme on a clean link, the lossy schemes at
/// [`LOSS`].
fn figures_of(name: &str, file: &Path, rows: &mut BTreeMap<String, String>) {
    let mut every = Variant::all();
    for extra in variant::EXTRA_NAMES {
        every.push(Variant::by_name(extra).expect("extra variant"));
    }
    let mut reader = capture::open(file).expect("capture");
    let clean = eval::evaluate(&mut reader, &every, &Options::default(), |_| {}).expect("eval");
    for r in &clean {
        // Stored or not, a clean link neither damages a context nor delivers a wrong packet.
        assert_eq!(
            (r.context_damage_lost, r.incorrect_delivered),
            (0, 0),
            "{name} / {} on a clean link",
            r.scheme
        );
        rows.insert(format!("{name}\tclean\t{}", r.scheme), row(r));
    }
    let lossy: Vec<Variant> = LOSSY_SCHEMES
        .iter()
        .map(|s| Variant::by_name(s).expect("scheme"))
        .collect();
    let options = Options {
        loss: LOSS,
        seed: SEED,
        ..Options::default()
    };
    let mut reader = capture::open(file).expect("capture");
    for r in eval::evaluate(&mut reader, &lossy, &options, |_| {}).expect("eval") {
        rows.insert(format!("{name}\tloss{LOSS}\t{}", r.scheme), row(&r));
    }
}

fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut fields = line.splitn(4, '\t');
            let key = [fields.next()?, fields.next()?, fields.next()?].join("\t");
            Some((key, fields.next()?.to_owned()))
        })
        .collect()
}

fn render(rows: &BTreeMap<String, String>) -> String {
    let mut out = format!("{HEADER}\n");
    for (key, value) in rows {
        let _ = writeln!(out, "{key}\t{value}");
    }
    out
}

#[test]
fn every_capture_gives_the_stored_figures() {
    let shared = shared_dir();
    let have_shared = shared.is_dir();
    let mut files = captures(&own_dir(), "own");
    if have_shared {
        files.extend(captures(&shared, "shared"));
    }
    assert!(!files.is_empty(), "no captures");
    let mut measured = BTreeMap::new();
    for (name, file) in &files {
        figures_of(name, file, &mut measured);
    }
    if std::env::var_os("TAROC_BLESS").is_some() {
        assert!(have_shared, "bless with the shared captures present");
        std::fs::write(STORED, render(&measured)).expect("writing the stored figures");
        return;
    }
    let stored = parse(&std::fs::read_to_string(STORED).expect("the stored figures"));
    let mut moved = Vec::new();
    for (key, value) in &stored {
        if !have_shared && key.starts_with("shared/") {
            continue;
        }
        match measured.get(key) {
            Some(now) if now == value => {}
            Some(now) => moved.push(format!("{key}\n  stored   {value}\n  measured {now}")),
            None => moved.push(format!("{key}: stored, not measured (capture gone?)")),
        }
    }
    for key in measured.keys() {
        if !stored.contains_key(key) {
            moved.push(format!(
                "{key}: measured, not stored (a new capture or scheme?)"
            ));
        }
    }
    if !have_shared {
        println!(
            "NOTE: {} absent: the shared captures' figures were not compared",
            shared.display()
        );
    }
    assert!(
        moved.is_empty(),
        "{} rows differ from tests/figures.tsv (columns: {}):\n{}\nIf the change is meant to \
         move them: TAROC_BLESS=1 cargo test -p taroc-cli --test figures",
        moved.len(),
        HEADER.split('\t').skip(3).collect::<Vec<_>>().join(", "),
        moved.join("\n")
    );
}
