//! Replays saved fuzz inputs through the fuzz targets' own logic (`fuzz/src/lib.rs`, included
//! here as a module) on stable Rust, without libFuzzer, so they run in CI:
//! - `fuzz/seeds/<target>/`: the small seed corpus, which must pass;
//! - `fuzz/regressions/<target>/`: minimized inputs of fixed bugs, which must pass;
//! - `fuzz/known-bugs/<target>/`: minimized inputs of bugs not fixed yet; replayed by the ignored
//!   test [`known_bugs_still_reproduce`], and moved to `regressions/` once fixed.

#[path = "../../../fuzz/src/lib.rs"]
mod logic;

use std::path::{Path, PathBuf};

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 10] = [
    ("taroc_decompress", logic::taroc_decompress),
    ("taroc_plus_decompress", logic::taroc_plus_decompress),
    ("taroc_roundtrip", logic::taroc_roundtrip),
    ("wire_parse", logic::wire_parse),
    ("vj_decompress", logic::vj_decompress),
    ("vj_roundtrip", logic::vj_roundtrip),
    ("iphc_decompress", logic::iphc_decompress),
    ("iphc_roundtrip", logic::iphc_roundtrip),
    ("hdlc_deframe", logic::hdlc_deframe),
    ("kiss_deframe", logic::kiss_deframe),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The regular files of `dir` (none if it does not exist), sorted, dot-files skipped.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    files
}

#[test]
fn seeds_and_regressions_pass() {
    let mut replayed = 0;
    for (target, run) in TARGETS {
        for kind in ["seeds", "regressions"] {
            for file in inputs(&fuzz_dir().join(kind).join(target)) {
                let data = std::fs::read(&file).unwrap();
                eprintln!("{}", file.display());
                run(&data);
                replayed += 1;
            }
        }
    }
    assert!(replayed >= TARGETS.len(), "no seed inputs found");
}

#[test]
#[ignore = "replays inputs of known, unfixed bugs: each is expected to fail until fixed"]
fn known_bugs_still_reproduce() {
    let mut failing = Vec::new();
    for (target, run) in TARGETS {
        for file in inputs(&fuzz_dir().join("known-bugs").join(target)) {
            let data = std::fs::read(&file).unwrap();
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failing.push(file.display().to_string());
            }
        }
    }
    assert!(
        failing.is_empty(),
        "known bugs still reproduce:\n{}",
        failing.join("\n")
    );
}

/// The logic's own sanity: the primed frames start with an UNCOMPRESSED_TCP per flow and go on
/// compressed, and packets round-trip through the input format.
#[test]
fn harness_primes_deep_paths() {
    let frames = logic::primed_frames();
    assert!(frames
        .iter()
        .any(|(k, _)| *k == taroc_core::FrameKind::CompressedTcp));
    logic::taroc_roundtrip(&logic::roundtrip_input(0, &[]));
}

/// The `taroc-plus` frames the fuzzer mutates include every frame type of the profile's
/// handshake path (IR-S, kind byte 0x0B), not only IR, IR-R, CO, IR-N and CO-N.
#[test]
fn primed_plus_frames_include_ir_s() {
    // Against a context of the same hosts (the one against a mirror is counted below).
    let mirror = taroc_core::plus::handshake::MIRROR;
    let kinds: Vec<u8> = logic::primed_plus_frames()
        .iter()
        .filter(|(_, frame)| frame.get(1).is_some_and(|shape| shape & mirror == 0))
        .map(|(kind, _)| kind.to_byte())
        .collect();
    assert_eq!(
        kinds.iter().filter(|&&k| k == 0x0B).count(),
        3,
        "{kinds:02x?}"
    );
}

/// Among them, CO frames with a scaling note (the extension's N flag), the stride the priming
/// IPv4 flow takes on with its full-sized segments.
#[test]
fn primed_plus_frames_include_scaling_notes() {
    let notes = logic::primed_plus_frames()
        .iter()
        .filter(|(kind, frame)| {
            // CID 0 CO frames with an extension (kind bit X): the extension comes first.
            matches!(kind.to_byte(), 0x60..=0x7F)
                && taroc_core::plus::ack::get_extension(frame).is_some_and(|(x, _)| x.note)
        })
        .count();
    assert!(notes >= 2, "{notes} note frames");
}

/// Among them, mirrored frames (spec section 3.3): compact IRs naming a mirror (context flags
/// bit M), packed IRs (section 3.5) and an IR-S against a mirror (shape bit M), which the primed decompressor resolves
/// with its sibling notes.
#[test]
fn primed_plus_frames_include_mirrored_frames() {
    use taroc_core::plus::compact::CompactIr;
    use taroc_core::plus::format::ir::{MIRRORED, NUMBERED};
    use taroc_core::plus::format::{COMPACT_IR, IR_S, PACKED_IR};
    use taroc_core::plus::handshake::{Base, IrS};
    let frames = logic::primed_plus_frames();
    let of_kind = |kind: u8| {
        frames
            .iter()
            .filter(move |(k, _)| k.to_byte() == kind)
            .map(|(_, f)| f.as_slice())
    };
    let compact = |bit: u8| {
        of_kind(COMPACT_IR)
            .filter(|f| CompactIr::new_checked(*f).is_some_and(|v| v.mirror_flags() & bit != 0))
            .count()
    };
    // Packed IRs are short mirrored compact IRs with numbers in two octets fewer.
    let packed = of_kind(PACKED_IR).count();
    assert!(packed >= 1, "packed IRs");
    assert_eq!(compact(MIRRORED) + packed, 6, "compact IRs");
    assert_eq!(compact(NUMBERED) + packed, 6, "with numbers");
    let ir_s: Vec<_> = of_kind(IR_S).filter_map(IrS::new_checked).collect();
    let mirrored = ir_s
        .iter()
        .filter(|v| matches!(v.base(), Base::Mirror(_) | Base::Reference(_)))
        .count();
    assert_eq!(mirrored, 1, "IR-S");
    // The IR-S codes its acknowledgment number and TS echo against the SYN (extension bit N).
    let numbered_ir_s = ir_s.iter().any(|v| v.reference_checksum().is_some());
    assert!(numbered_ir_s, "an IR-S with numbers");
}

/// `taroc_roundtrip`'s context requests (bit 14 of a record's length) reach `taroc-plus`'s
/// deep paths on a clean link: answers, and the longer starts from young bases of a link that
/// loses frames, for three flows between the same hosts, each round-tripping exactly.
#[test]
fn roundtrip_requests_drive_lossy_link_starts() {
    let mut input = vec![0xFC]; // taroc-plus, every bounded repair on
    for (flow, port) in [5001u16, 5002, 5003].into_iter().enumerate() {
        for i in 0..10u32 {
            let mut p = vec![0x45, 0, 0, 0, 0, i as u8, 0x40, 0, 64, 6, 0, 0];
            p.extend_from_slice(&[198, 18, 0, 1, 198, 18, 0, 2]);
            p.extend_from_slice(&port.to_be_bytes());
            p.extend_from_slice(&[0, 80]);
            p.extend_from_slice(&(1000 + 100 * i).to_be_bytes());
            p.extend_from_slice(&77u32.to_be_bytes());
            p.extend_from_slice(&[0x50, 0x10, 0x01, 0xf5, 0, 0, 0, 0]);
            p.extend((0..100).map(|b| (b * 3 + i) as u8));
            let request = if flow == 0 && i == 6 { 0x4000 } else { 0 };
            let header = 0x8000 | request | p.len() as u16;
            input.extend_from_slice(&header.to_be_bytes());
            input.extend_from_slice(&p);
        }
    }
    logic::taroc_roundtrip(&input);
}
