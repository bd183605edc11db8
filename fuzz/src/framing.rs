//! The serial-line deframers of `taroc_wire` ([`hdlc_deframe`], [`kiss_deframe`]).
//!
//! Input: a configuration byte, a chunking seed, then the rest.
//! - Configuration bit 0: FCS-32 (HDLC) or FCS-16 (KISS) instead of the default; bit 1: HDLC
//!   on an 8-bit clean line (no ACCM either way), KISS on port 12 (data command byte 0xC0)
//!   instead of port 0; bits 2-3: `max_frame` 2048, 1, 16 or 200; bits 5-7: the largest chunk
//!   the line bytes are fed in (all at once, 1, 2, 3, 7, 16, 64, 256 bytes; sizes drawn from the
//!   seed).
//! - Bit 4 clear: the rest is the line's bytes. Set: the rest is records, each `tag` then
//!   either, for an even tag, `kind len_lo frame[len]` (a frame to encode, `len = len_lo |
//!   (tag >> 1 & 7) << 8`, cut short where the input ends) or, for an odd tag, `noise[tag >>
//!   1]` (bytes put on the line as they are, between two frames).
//!
//! Asserted: no panic; the same events whatever the chunking; the counters agree with the
//! events; every frame delivered fits `max_frame` and re-encodes to bytes that decode to that
//! frame alone. With records: every frame encoded that fits `max_frame` is delivered, in order,
//! whatever noise lies between the frames (each starts with its own delimiter); noise may add
//! frames of its own that pass the FCS (with FCS-16 a fuzzer can find them).

use taroc_wire::fcs::Fcs;
use taroc_wire::framing::{Counters, Event};
use taroc_wire::{hdlc, kiss};

/// An event with its frame copied out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owned {
    Frame(u8, Vec<u8>),
    Discarded(taroc_wire::framing::Discard),
    Garbage(usize),
}

impl From<Event<'_>> for Owned {
    fn from(e: Event<'_>) -> Owned {
        match e {
            Event::Frame { kind, frame } => Owned::Frame(kind, frame.to_vec()),
            Event::Discarded(d) => Owned::Discarded(d),
            Event::Garbage(n) => Owned::Garbage(n),
        }
    }
}

/// Appends the encoding of a frame (kind byte, frame) to a line.
type Encode<'a> = &'a dyn Fn(u8, &[u8], &mut Vec<u8>);

/// Runs a fresh deframer over a line fed in chunks (largest chunk, seed): its events and
/// counters.
type Decode<'a> = &'a dyn Fn(&[u8], usize, u8) -> (Vec<Owned>, Counters);

/// The header of an input: the configuration byte's fields.
struct Header {
    alternate_fcs: bool,
    variant: bool,
    max_frame: usize,
    records: bool,
    max_chunk: usize,
    seed: u8,
}

fn header(data: &[u8]) -> Option<(Header, &[u8])> {
    let (&conf, rest) = data.split_first()?;
    let (&seed, rest) = rest.split_first()?;
    let header = Header {
        alternate_fcs: conf & 1 != 0,
        variant: conf & 2 != 0,
        max_frame: [2048, 1, 16, 200][usize::from(conf >> 2 & 3)],
        records: conf & 0x10 != 0,
        max_chunk: [0, 1, 2, 3, 7, 16, 64, 256][usize::from(conf >> 5)],
        seed,
    };
    Some((header, rest))
}

/// Splits `stream` into chunks of sizes in `1..=max_chunk` drawn from `seed` (all at once for
/// `max_chunk` 0), handing each to `push`.
fn chunked(stream: &[u8], max_chunk: usize, seed: u8, mut push: impl FnMut(&[u8])) {
    if max_chunk == 0 {
        push(stream);
        return;
    }
    let mut state = u64::from(seed) << 8 | 0x9E;
    let mut rest = stream;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let n = (1 + (state % max_chunk as u64) as usize).min(rest.len());
        push(&rest[..n]);
        rest = &rest[n..];
    }
}

/// The line bytes of `records` (see the module docs), and the frames encoded in them.
fn line_of(mut records: &[u8], encode: Encode<'_>) -> (Vec<u8>, Vec<(u8, Vec<u8>)>) {
    let mut line = Vec::new();
    let mut sent = Vec::new();
    while let Some((&tag, rest)) = records.split_first() {
        if tag & 1 == 1 {
            let n = usize::from(tag >> 1).min(rest.len());
            line.extend_from_slice(&rest[..n]);
            records = &rest[n..];
            continue;
        }
        let [kind, len_lo, rest @ ..] = rest else {
            break;
        };
        let len = (usize::from(*len_lo) | usize::from(tag >> 1 & 7) << 8).min(rest.len());
        encode(*kind, &rest[..len], &mut line);
        sent.push((*kind, rest[..len].to_vec()));
        records = &rest[len..];
    }
    (line, sent)
}

/// The checks common to both framings; `decode` runs a fresh deframer over chunks of bytes.
fn check(header: &Header, rest: &[u8], encode: Encode<'_>, decode: Decode<'_>) {
    let (line, sent) = if header.records {
        line_of(rest, encode)
    } else {
        (rest.to_vec(), Vec::new())
    };
    let (events, counters) = decode(&line, 0, 0);
    if header.max_chunk > 0 {
        let (chunked_events, chunked_counters) = decode(&line, header.max_chunk, header.seed);
        assert_eq!(chunked_events, events, "events depend on the chunking");
        assert_eq!(chunked_counters, counters);
    }
    let delivered: Vec<(u8, Vec<u8>)> = events
        .iter()
        .filter_map(|e| match e {
            Owned::Frame(k, f) => Some((*k, f.clone())),
            _ => None,
        })
        .collect();
    let discarded = events
        .iter()
        .filter(|e| matches!(e, Owned::Discarded(_)))
        .count();
    let garbage: usize = events
        .iter()
        .map(|e| match e {
            Owned::Garbage(n) => *n,
            _ => 0,
        })
        .sum();
    assert_eq!(counters.frames, delivered.len() as u64);
    assert_eq!(counters.discarded(), discarded as u64);
    assert!(counters.garbage_bytes >= garbage as u64);
    for (kind, frame) in &delivered {
        assert!(frame.len() <= header.max_frame, "frame over max_frame");
        let mut again = Vec::new();
        encode(*kind, frame, &mut again);
        let (events, _) = decode(&again, 0, 0);
        assert_eq!(
            events,
            vec![Owned::Frame(*kind, frame.clone())],
            "re-encoded"
        );
    }
    // Every frame sent that fits arrives, in order, among the frames delivered.
    let mut delivered = delivered.iter();
    for frame in sent.iter().filter(|(_, f)| f.len() <= header.max_frame) {
        assert!(
            delivered.any(|d| d == frame),
            "frame sent but not delivered: kind {:#04x}, {} bytes",
            frame.0,
            frame.1.len()
        );
    }
}

/// `hdlc::Deframer` on arbitrary line bytes, or on encoded frames with noise between them.
pub fn hdlc_deframe(data: &[u8]) {
    let Some((header, rest)) = header(data) else {
        return;
    };
    let mut config = hdlc::Config {
        max_frame: header.max_frame,
        ..hdlc::Config::default()
    };
    if header.alternate_fcs {
        config.fcs = Fcs::Fcs32;
    }
    if header.variant {
        config.accm = hdlc::Accm::NONE;
        config.rx_accm = 0;
    }
    let encode =
        |kind: u8, frame: &[u8], out: &mut Vec<u8>| hdlc::encode(kind, frame, &config, out);
    let decode = |line: &[u8], max_chunk: usize, seed: u8| {
        let mut deframer = hdlc::Deframer::new(&config);
        let mut events = Vec::new();
        chunked(line, max_chunk, seed, |chunk| {
            deframer.push(chunk, |e| events.push(Owned::from(e)))
        });
        (events, *deframer.counters())
    };
    check(&header, rest, &encode, &decode);
}

/// `kiss::Deframer` on arbitrary bytes from a TNC, or on encoded frames with noise between
/// them.
pub fn kiss_deframe(data: &[u8]) {
    let Some((header, rest)) = header(data) else {
        return;
    };
    let mut config = kiss::Config {
        max_frame: header.max_frame,
        ..kiss::Config::default()
    };
    if header.alternate_fcs {
        config.fcs = Fcs::Fcs16;
    }
    if header.variant {
        config.port = 12;
    }
    let encode =
        |kind: u8, frame: &[u8], out: &mut Vec<u8>| kiss::encode(kind, frame, &config, out);
    let decode = |line: &[u8], max_chunk: usize, seed: u8| {
        let mut deframer = kiss::Deframer::new(&config);
        let mut events = Vec::new();
        chunked(line, max_chunk, seed, |chunk| {
            deframer.push(chunk, |e| events.push(Owned::from(e)))
        });
        (events, *deframer.counters())
    };
    check(&header, rest, &encode, &decode);
}
