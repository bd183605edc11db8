//! KISS framing for packet-radio TNCs (the host-to-TNC protocol of Chepponis and Karn, whose
//! framing is SLIP's, RFC 1055), as a sans-IO encoder and a streaming [`Deframer`].
//!
//! # Frame layout
//!
//! ```text
//! FEND | command | kind (1) | frame (0..=max_frame) | FCS (4 or 2) | FEND
//! 0xC0 |  <------------------ escaped ----------------------------> | 0xC0
//! ```
//!
//! Every frame is preceded and followed by FEND (0xC0): the leading one flushes line noise
//! into a separate frame that is discarded, instead of spoiling the frame that follows (RFC
//! 1055, Phil Karn's change); back-to-back FENDs delimit nothing and are skipped. Between them,
//! FEND is sent as FESC TFEND (0xDB 0xDC) and FESC as FESC TFESC (0xDB 0xDD).
//!
//! The first byte is KISS's command byte: the TNC port in the high nibble (0..=15), the
//! command in the low nibble, 0 for a data frame, whose bytes the TNC transmits on the radio
//! channel. The command byte is escaped like the rest, since port 12's data frames start with
//! 0xC0 and port 13's command 0x0B is 0xDB.
//!
//! KISS itself has no check, so the data a taroc frame puts on the air is `kind | frame | FCS`:
//! the frame kind byte (taroc's `FrameKind` byte), the frame, and the FCS of [`crate::fcs`]
//! over both (FCS-32 by default, for noisy radio links; FCS-16 if set), complemented and least
//! significant octet first as in RFC 1662. The command byte stays between host and TNC and is
//! not covered.
//!
//! # Robustness
//!
//! The [`Deframer`] takes any bytes, in chunks of any size, and never panics. It skips bytes
//! before the first FEND as garbage, ignores empty frames, skips frames of other ports and
//! non-data frames (counted, without buffering them, whatever their length), and discards,
//! counting, frames that are too short, fail their FCS, grow past the maximum or hold an
//! invalid escape. The KISS specification lets frame assembly go on after an invalid escape;
//! with an FCS to protect, the frame is discarded at once instead, as an escape error is what
//! two FESCs in a row, KISS's way of aborting a frame, also are. Its memory is one buffer of
//! fixed size, given at construction; it does not allocate after.
//!
//! Without the standard library, encode into a slice and receive into an array:
//!
//! ```
//! use taroc_wire::framing::{Discard, Event};
//! use taroc_wire::kiss::{self, Config, Deframer};
//!
//! let config = Config { port: 2, max_frame: 256, ..Config::default() };
//! let mut line = [0u8; 600];
//! let n = kiss::encode_to_slice(0x01, &[0xC0, 0xDB, 7], &config, &mut line).unwrap();
//! assert_eq!(line[..2], [kiss::FEND, 0x20]); // port 2, data frame
//!
//! let mut deframer = Deframer::with_buffer(&config, [0u8; 261]);
//! let mut frames = 0;
//! deframer.push(&line[..n], |event| match event {
//!     Event::Frame { kind, frame } => {
//!         assert_eq!((kind, frame), (0x01, &[0xC0, 0xDB, 7][..]));
//!         frames += 1;
//!     }
//!     other => panic!("{other:?}"),
//! });
//! assert_eq!(frames, 1);
//! // The same frame on another port is not ours.
//! let other = Config { port: 3, ..config };
//! let n = kiss::encode_to_slice(0x01, &[7], &other, &mut line).unwrap();
//! deframer.push(&line[..n], |event| assert_eq!(event, Event::Discarded(Discard::OtherPort)));
//! ```

use crate::fcs::Fcs;
use crate::framing::{Counters, Discard, Event, FrameBuf, Sink, SliceSink, DEFAULT_MAX_FRAME};

/// Frame End: begins and ends every frame.
pub const FEND: u8 = 0xC0;

/// Frame Escape.
pub const FESC: u8 = 0xDB;

/// Transposed Frame End: FESC TFEND stands for a FEND in the data.
pub const TFEND: u8 = 0xDC;

/// Transposed Frame Escape: FESC TFESC stands for a FESC in the data.
pub const TFESC: u8 = 0xDD;

/// The command of a data frame (the low nibble of the command byte).
pub const DATA: u8 = 0x00;

/// The settings of one end of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The TNC port frames are sent to and accepted from (0..=15; higher bits are ignored).
    /// Default 0.
    pub port: u8,
    /// The FCS appended to and checked on every frame. Default FCS-32.
    pub fcs: Fcs,
    /// The longest frame the deframer accepts, in bytes, kind byte and FCS not counted. Default
    /// [`DEFAULT_MAX_FRAME`].
    pub max_frame: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            port: 0,
            fcs: Fcs::Fcs32,
            max_frame: DEFAULT_MAX_FRAME,
        }
    }
}

impl Config {
    /// The deframer's buffer size for this configuration: kind byte, `max_frame` bytes and the
    /// FCS (the command byte is not stored).
    pub fn buffer_len(&self) -> usize {
        self.max_frame.saturating_add(1 + self.fcs.field_len())
    }

    /// The command byte of this port's data frames.
    pub fn command(&self) -> u8 {
        (self.port & 0x0F) << 4 | DATA
    }
}

/// The most bytes [`encode`] can write for a frame of `frame_len` bytes: two FENDs, and every
/// byte of command, kind, frame and FCS escaped.
pub fn max_encoded_len(frame_len: usize, fcs: Fcs) -> usize {
    2 + 2 * (2 + frame_len + fcs.field_len())
}

/// Appends the data frame `command | kind | frame | FCS`, escaped and between two FENDs, to
/// `out`.
///
/// Nothing checks `frame` against a maximum: a frame longer than the peer's `max_frame` is
/// discarded by the peer (and a TNC has its own limit).
#[cfg(feature = "std")]
pub fn encode(kind: u8, frame: &[u8], config: &Config, out: &mut std::vec::Vec<u8>) {
    out.reserve(frame.len() + frame.len() / 64 + 16);
    encode_into(kind, frame, config, out);
}

/// Writes the frame as [`encode`] does at the start of `out`, and returns its length; an
/// error, and `out` partly written, if it does not fit ([`max_encoded_len`] always does).
pub fn encode_to_slice(
    kind: u8,
    frame: &[u8],
    config: &Config,
    out: &mut [u8],
) -> Result<usize, crate::framing::BufferTooSmall> {
    let mut sink = SliceSink { buf: out, len: 0 };
    encode_into(kind, frame, config, &mut sink);
    sink.finish()
}

fn encode_into(kind: u8, frame: &[u8], config: &Config, out: &mut impl Sink) {
    let trailer = config.fcs.trailer(&[&[kind], frame]);
    out.put(FEND);
    escape(&[config.command(), kind], out);
    escape(frame, out);
    escape(&trailer[..config.fcs.field_len()], out);
    out.put(FEND);
}

/// Writes `data` with each FEND as FESC TFEND and each FESC as FESC TFESC.
fn escape(mut data: &[u8], out: &mut impl Sink) {
    while let Some(at) = data.iter().position(|&b| b == FEND || b == FESC) {
        out.put_slice(&data[..at]);
        out.put(FESC);
        out.put(if data[at] == FEND { TFEND } else { TFESC });
        data = &data[at + 1..];
    }
    out.put_slice(data);
}

/// Where the deframer is in the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside any frame (at start and after [`Deframer::reset`]): skipping garbage up to a
    /// FEND.
    Hunt,
    /// After a FEND, before the command byte.
    Command,
    /// After the command byte of one of our data frames: collecting the frame.
    Frame,
    /// After a frame was discarded or ignored midway: skipping up to a FEND.
    Skip,
}

/// A streaming receiver of KISS data frames for one port: feed it the bytes from the TNC as
/// they arrive, it reports each good frame and each discarded one.
///
/// The buffer `B` (a `Vec<u8>`, an array, a `&mut [u8]`) holds the frame being received; its
/// length caps the frame length on top of [`Config::max_frame`] ([`Config::buffer_len`] is
/// enough).
#[derive(Debug, Clone)]
pub struct Deframer<B> {
    fcs: Fcs,
    command: u8,
    buf: FrameBuf<B>,
    state: State,
    escaped: bool,
    /// Garbage bytes skipped in the current run ([`State::Hunt`]).
    garbage: usize,
    counters: Counters,
}

#[cfg(feature = "std")]
impl Deframer<std::vec::Vec<u8>> {
    /// A deframer with a buffer of [`Config::buffer_len`] bytes, allocated here once.
    pub fn new(config: &Config) -> Deframer<std::vec::Vec<u8>> {
        Deframer::with_buffer(config, std::vec![0; config.buffer_len()])
    }
}

impl<B: AsMut<[u8]>> Deframer<B> {
    /// A deframer that receives frames into `buf`. Frames longer than `buf` allows (kind byte
    /// and FCS included) are discarded as too long, like frames longer than
    /// [`Config::max_frame`].
    pub fn with_buffer(config: &Config, buf: B) -> Deframer<B> {
        Deframer {
            fcs: config.fcs,
            command: config.command(),
            buf: FrameBuf::new(buf, config.buffer_len()),
            state: State::Hunt,
            escaped: false,
            garbage: 0,
            counters: Counters::default(),
        }
    }

    /// The longest frame delivered, kind byte and FCS not counted: [`Config::max_frame`], or
    /// less if the buffer is shorter.
    pub fn max_frame(&self) -> usize {
        self.buf.limit.saturating_sub(1 + self.fcs.field_len())
    }

    /// The counts so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Forgets any partly received frame and skips bytes up to the next FEND, as at the start
    /// (for instance after the line was reopened). The counters stay.
    pub fn reset(&mut self) {
        self.state = State::Hunt;
        self.buf.len = 0;
        self.escaped = false;
        self.garbage = 0;
    }

    /// Processes `bytes`, the next bytes from the TNC, calling `on_event` for each frame
    /// delivered, discarded or ignored, and for each run of garbage that ends. A frame split
    /// across calls is kept until its closing FEND arrives.
    pub fn push(&mut self, bytes: &[u8], mut on_event: impl FnMut(Event<'_>)) {
        let mut rest = bytes;
        while !rest.is_empty() {
            match self.state {
                State::Hunt | State::Skip => {
                    let Some(at) = rest.iter().position(|&b| b == FEND) else {
                        self.skipped(rest.len());
                        return;
                    };
                    self.skipped(at);
                    if self.garbage > 0 {
                        on_event(Event::Garbage(self.garbage));
                        self.garbage = 0;
                    }
                    self.open();
                    rest = &rest[at + 1..];
                }
                State::Command | State::Frame => rest = self.frame_bytes(rest, &mut on_event),
            }
        }
    }

    /// Counts `n` skipped bytes: garbage when hunting, part of a discarded frame otherwise.
    fn skipped(&mut self, n: usize) {
        if self.state == State::Hunt {
            self.garbage = self.garbage.saturating_add(n);
            self.counters.garbage_bytes = self.counters.garbage_bytes.saturating_add(n as u64);
        }
    }

    /// Starts a new frame after a FEND.
    fn open(&mut self) {
        self.state = State::Command;
        self.buf.len = 0;
        self.escaped = false;
    }

    /// Takes bytes of a frame from `rest` up to the end of a run of plain bytes, or one byte;
    /// returns what is left.
    fn frame_bytes<'r>(
        &mut self,
        rest: &'r [u8],
        on_event: &mut impl FnMut(Event<'_>),
    ) -> &'r [u8] {
        if self.state == State::Frame && !self.escaped {
            let run = rest
                .iter()
                .position(|&b| b == FEND || b == FESC)
                .unwrap_or(rest.len());
            if run > 0 {
                if !self.buf.extend(&rest[..run]) {
                    self.discard(Discard::TooLong, State::Skip, on_event);
                }
                return &rest[run..];
            }
        }
        let b = match (rest[0], self.escaped) {
            (FEND, false) => {
                self.close(on_event);
                self.open();
                return &rest[1..];
            }
            (FEND, true) => {
                // The frame ends inside an escape: discarded; the FEND opens the next.
                self.discard(Discard::InvalidEscape, State::Command, on_event);
                self.open();
                return &rest[1..];
            }
            (FESC, false) => {
                self.escaped = true;
                return &rest[1..];
            }
            (TFEND, true) => FEND,
            (TFESC, true) => FESC,
            (_, true) => {
                self.discard(Discard::InvalidEscape, State::Skip, on_event);
                return &rest[1..];
            }
            (b, false) => b,
        };
        self.escaped = false;
        if self.state == State::Command {
            if b >> 4 != self.command >> 4 {
                self.discard(Discard::OtherPort, State::Skip, on_event);
            } else if b != self.command {
                self.discard(Discard::NotData, State::Skip, on_event);
            } else {
                self.state = State::Frame;
            }
        } else if !self.buf.push(b) {
            self.discard(Discard::TooLong, State::Skip, on_event);
        }
        &rest[1..]
    }

    fn discard(&mut self, reason: Discard, then: State, on_event: &mut impl FnMut(Event<'_>)) {
        self.counters.count(reason);
        on_event(Event::Discarded(reason));
        self.state = then;
        self.buf.len = 0;
        self.escaped = false;
    }

    /// A closing FEND: delivers or discards the frame collected (nothing if empty).
    fn close(&mut self, on_event: &mut impl FnMut(Event<'_>)) {
        if self.state == State::Command {
            // Nothing since the FEND: back-to-back FENDs.
            return;
        }
        let fcs = self.fcs;
        let content = self.buf.bytes();
        let reason = match content {
            c if c.len() < 1 + fcs.field_len() => Discard::Runt,
            c if !fcs.check(c) => Discard::BadFcs,
            [kind, rest @ ..] => {
                let frame = &rest[..rest.len() - fcs.field_len()];
                on_event(Event::Frame { kind: *kind, frame });
                self.counters.frames = self.counters.frames.saturating_add(1);
                return;
            }
            [] => Discard::Runt,
        };
        self.counters.count(reason);
        on_event(Event::Discarded(reason));
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::framing::testing::{chunked, frames, Owned, Rng};

    /// Decodes `stream` with a fresh deframer, fed in chunks (see [`chunked`]).
    fn decode(
        config: &Config,
        stream: &[u8],
        max_chunk: usize,
        seed: u64,
    ) -> (Vec<Owned>, Counters) {
        let mut deframer = Deframer::new(config);
        let mut events = Vec::new();
        chunked(stream, max_chunk, seed, |chunk| {
            deframer.push(chunk, |e| events.push(Owned::from(e)))
        });
        (events, *deframer.counters())
    }

    fn encoded(kind: u8, frame: &[u8], config: &Config) -> Vec<u8> {
        let mut out = Vec::new();
        encode(kind, frame, config, &mut out);
        out
    }

    /// Both FCSs, on port 0 and on port 12 (whose data command byte is FEND itself).
    fn configs(max_frame: usize) -> Vec<Config> {
        let mut all = Vec::new();
        for fcs in [Fcs::Fcs32, Fcs::Fcs16] {
            for port in [0, 12] {
                all.push(Config {
                    port,
                    fcs,
                    max_frame,
                });
            }
        }
        all
    }

    #[test]
    fn layout_and_escapes() {
        let config = Config::default();
        let frame = [0xC0, 0xDB, 0xDC, 0xDD, 0x7E];
        let out = encoded(0xC0, &frame, &config);
        let mut content = vec![0xC0];
        content.extend_from_slice(&frame);
        let fcs = Fcs::Fcs32.compute(&content).to_le_bytes();
        let mut expected = vec![
            FEND, 0x00, FESC, TFEND, FESC, TFEND, FESC, TFESC, 0xDC, 0xDD, 0x7E,
        ];
        for b in fcs {
            match b {
                FEND => expected.extend_from_slice(&[FESC, TFEND]),
                FESC => expected.extend_from_slice(&[FESC, TFESC]),
                b => expected.push(b),
            }
        }
        expected.push(FEND);
        assert_eq!(out, expected);
        // Port 12's data command is 0xC0, port 13's command 11 is 0xDB: both escaped.
        assert_eq!(
            encoded(1, &[], &Config { port: 12, ..config })[..3],
            [FEND, FESC, TFEND]
        );
        assert_eq!(Config { port: 13, ..config }.command(), 0xD0);
        assert_eq!(
            Config {
                port: 0x1F,
                ..config
            }
            .command(),
            0xF0
        );
        // The FCS covers kind and frame only, not the command byte.
        let port5 = encoded(0xC0, &frame, &Config { port: 5, ..config });
        assert_eq!(port5[1], 0x50);
        assert_eq!(port5[2..], out[2..]);
    }

    #[test]
    fn encode_to_slice_matches_encode() {
        for config in configs(4000) {
            let mut rng = Rng::new(7);
            for len in [0, 1, 5, 300] {
                let frame = rng.bytes(len);
                let expected = encoded(0xDB, &frame, &config);
                let mut buf = vec![0; max_encoded_len(len, config.fcs)];
                let n = encode_to_slice(0xDB, &frame, &config, &mut buf).unwrap();
                assert_eq!(buf[..n], expected);
                let all = vec![FEND; len];
                assert!(encoded(FESC, &all, &config).len() <= max_encoded_len(len, config.fcs));
                let short = &mut buf[..expected.len() - 1];
                let err = encode_to_slice(0xDB, &frame, &config, short).unwrap_err();
                assert_eq!(err.needed, expected.len());
            }
        }
    }

    /// Every length 0..=2000 (kind byte turning through all 256 values), and every kind byte
    /// with a few lengths, in one stream fed all at once, in random chunks and a byte at a time.
    #[test]
    fn round_trip_every_length_and_kind() {
        let specials = [FEND, FESC, TFEND, TFESC, 0x7E, 0x7D, 0x00, 0x11, 0xFF];
        let mut rng = Rng::new(11);
        let mut sent = Vec::new();
        for len in 0..=2000usize {
            let frame = (0..len)
                .map(|_| {
                    if rng.below(4) == 0 {
                        specials[rng.below(specials.len())]
                    } else {
                        rng.byte()
                    }
                })
                .collect::<Vec<u8>>();
            sent.push((len as u8, frame));
        }
        for kind in 0..=255u8 {
            for len in [0, 1, 2, 3, 4, 5, 64] {
                sent.push((kind, rng.bytes(len)));
            }
        }
        for config in configs(2000) {
            let mut stream = Vec::new();
            for (kind, frame) in &sent {
                encode(*kind, frame, &config, &mut stream);
            }
            let (whole, counters) = decode(&config, &stream, 0, 0);
            assert_eq!(frames(&whole), sent, "{config:?}");
            assert_eq!(whole.len(), sent.len(), "only frames");
            assert_eq!(counters.frames, sent.len() as u64);
            assert_eq!((counters.discarded(), counters.garbage_bytes), (0, 0));
            for (max_chunk, seed) in [(1, 0), (7, 1), (100, 2), (5000, 3)] {
                assert_eq!(decode(&config, &stream, max_chunk, seed).0, whole);
            }
        }
    }

    /// Frame B between good frames A and C has one bit flipped, every bit in turn: A and C are
    /// delivered, B never, with both FCSs.
    #[test]
    fn every_single_bit_flip_is_caught() {
        let mut rng = Rng::new(3);
        for config in configs(2048) {
            for len in [0, 1, 40] {
                let a = (1u8, rng.bytes(20));
                let b = (
                    2u8,
                    (0..len)
                        .map(|i| [FEND, FESC, TFEND, rng.byte()][i % 4])
                        .collect::<Vec<u8>>(),
                );
                let c = (3u8, rng.bytes(20));
                let ea = encoded(a.0, &a.1, &config);
                let eb = encoded(b.0, &b.1, &config);
                let ec = encoded(c.0, &c.1, &config);
                for bit in 0..eb.len() * 8 {
                    let mut bad = eb.clone();
                    bad[bit / 8] ^= 1 << (bit % 8);
                    let stream = [&ea[..], &bad, &ec].concat();
                    let (events, _) = decode(&config, &stream, 0, 0);
                    let want = vec![a.clone(), c.clone()];
                    assert_eq!(frames(&events), want, "{config:?} len {len} bit {bit}");
                }
            }
        }
    }

    #[test]
    fn truncations_are_caught() {
        let mut rng = Rng::new(4);
        for config in configs(2048) {
            let b = rng.bytes(60);
            let eb = encoded(9, &b, &config);
            let c = (3u8, rng.bytes(10));
            let ec = encoded(c.0, &c.1, &config);
            for cut in 0..eb.len() - 1 {
                let stream = [&eb[..cut], &ec[..]].concat();
                let (events, _) = decode(&config, &stream, 0, 0);
                assert_eq!(frames(&events), vec![c.clone()], "cut {cut}");
            }
        }
    }

    #[test]
    fn garbage_around_frames() {
        let mut rng = Rng::new(5);
        for config in configs(2048) {
            let sent: Vec<(u8, Vec<u8>)> =
                (0..200).map(|i| (i as u8, rng.some_bytes(300))).collect();
            let lead: Vec<u8> = rng.bytes(500).into_iter().filter(|&b| b != FEND).collect();
            let mut stream = lead.clone();
            for (i, (kind, frame)) in sent.iter().enumerate() {
                encode(*kind, frame, &config, &mut stream);
                let noise = rng.some_bytes(40);
                if i % 3 == 0 {
                    stream.extend(noise.iter().filter(|&&b| b != FEND));
                } else {
                    stream.extend_from_slice(&noise);
                }
            }
            stream.extend(rng.bytes(100));
            let (events, counters) = decode(&config, &stream, 13, 6);
            assert_eq!(events[0], Owned::Garbage(lead.len()));
            assert_eq!(counters.garbage_bytes, lead.len() as u64);
            assert_eq!(frames(&events), sent, "{config:?}");
            assert!(counters.discarded() > 100);
            assert_eq!(decode(&config, &stream, 1, 0).0, events);
        }
    }

    #[test]
    fn fend_storms_are_ignored() {
        let config = Config::default();
        let mut stream = vec![FEND; 1000];
        for i in 0..50u8 {
            encode(i, &[i; 10], &config, &mut stream);
            stream.extend(std::iter::repeat_n(FEND, usize::from(i) * 7));
        }
        let (events, counters) = decode(&config, &stream, 0, 0);
        assert_eq!(frames(&events).len(), 50);
        assert_eq!(events.len(), 50);
        assert_eq!((counters.discarded(), counters.garbage_bytes), (0, 0));
        let (events, _) = decode(&config, &vec![FEND; 100_000], 1000, 0);
        assert!(events.is_empty());
    }

    #[test]
    fn overlong_frames_are_dropped_and_the_next_decoded() {
        for config in configs(100) {
            let mut stream = Vec::new();
            encode(1, &[FEND; 100], &config, &mut stream);
            encode(2, &[0x55; 101], &config, &mut stream);
            encode(3, &[FESC; 5000], &config, &mut stream);
            encode(4, &[0x44; 7], &config, &mut stream);
            for max_chunk in [0, 1, 64] {
                let (events, counters) = decode(&config, &stream, max_chunk, 9);
                assert_eq!(
                    events,
                    vec![
                        Owned::Frame(1, vec![FEND; 100]),
                        Owned::Discarded(Discard::TooLong),
                        Owned::Discarded(Discard::TooLong),
                        Owned::Frame(4, vec![0x44; 7]),
                    ]
                );
                assert_eq!(counters.too_long, 2);
            }
        }
        let config = Config::default();
        let mut deframer = Deframer::with_buffer(&config, [0u8; 15]);
        assert_eq!(deframer.max_frame(), 10);
        let mut got = Vec::new();
        let stream = [encoded(1, &[0; 10], &config), encoded(2, &[0; 11], &config)].concat();
        deframer.push(&stream, |e| got.push(Owned::from(e)));
        let want = vec![
            Owned::Frame(1, vec![0; 10]),
            Owned::Discarded(Discard::TooLong),
        ];
        assert_eq!(got, want);
    }

    /// Frames for other ports and TNC commands are skipped whatever their length; runts, bad
    /// FCSs and invalid escapes are discarded; each is counted, and the next frame decodes.
    #[test]
    fn other_ports_commands_and_errors() {
        let config = Config {
            port: 3,
            ..Config::default()
        };
        let good = encoded(5, b"ok", &config);
        let other = encoded(5, &[0x42; 5000], &Config { port: 4, ..config });
        let mut stream = Vec::new();
        stream.extend_from_slice(&other);
        stream.extend_from_slice(&[FEND, 0x31, 50, FEND]); // TXDELAY 500 ms on port 3
        stream.extend_from_slice(&[FEND, 0xFF, FEND]); // return from KISS: port 15
        stream.extend_from_slice(&good);
        stream.extend_from_slice(&[FEND, 0x30, 1, 2, 3, FEND]); // runt: kind and 3 octets
        stream.extend_from_slice(&[FEND, 0x30, FEND]); // runt: command byte only
        stream.extend_from_slice(&[FEND, 0x30, 1, FESC, 0x01, 2, 3, 4, 5, 6]); // bad escape
        stream.extend_from_slice(&[FEND, 0x30, 1, FESC, FESC, 2, 3, 4, 5, 6]); // KISS abort
        stream.extend_from_slice(&[FEND, 0x30, 1, 2, 3, 4, 5, FESC]); // escape, then FEND
        stream.extend_from_slice(&good);
        let mut bad = good.clone();
        bad[3] ^= 0x01;
        stream.extend_from_slice(&bad);
        let (events, counters) = decode(&config, &stream, 0, 0);
        use Discard::*;
        assert_eq!(
            events,
            vec![
                Owned::Discarded(OtherPort),
                Owned::Discarded(NotData),
                Owned::Discarded(OtherPort),
                Owned::Frame(5, b"ok".to_vec()),
                Owned::Discarded(Runt),
                Owned::Discarded(Runt),
                Owned::Discarded(InvalidEscape),
                Owned::Discarded(InvalidEscape),
                Owned::Discarded(InvalidEscape),
                Owned::Frame(5, b"ok".to_vec()),
                Owned::Discarded(BadFcs),
            ]
        );
        assert_eq!(counters.other_port, 2);
        assert_eq!(counters.not_data, 1);
        assert_eq!(counters.runt, 2);
        assert_eq!(counters.invalid_escape, 3);
        assert_eq!(counters.bad_fcs, 1);
        assert_eq!(counters.frames, 2);
        assert_eq!(counters.discarded(), 9);
        assert_eq!(decode(&config, &stream, 1, 0).0, events);
    }

    /// Random bytes, mostly specials, in random chunks: no panic, the same events however the
    /// bytes are split, and every frame delivered re-encodes to itself.
    #[test]
    fn random_line_bytes() {
        let mut rng = Rng::new(8);
        for round in 0..200 {
            let config = configs(1 + rng.below(64))[round % 4];
            let n = rng.below(3000);
            let stream: Vec<u8> = (0..n)
                .map(|_| match rng.below(6) {
                    0 => FEND,
                    1 => FESC,
                    2 => [TFEND, TFESC, config.command()][rng.below(3)],
                    _ => rng.byte(),
                })
                .collect();
            let (events, counters) = decode(&config, &stream, 0, 0);
            assert_eq!(
                decode(&config, &stream, 1 + rng.below(20), round as u64).0,
                events
            );
            for (kind, frame) in frames(&events) {
                assert!(frame.len() <= config.max_frame);
                let (again, _) = decode(&config, &encoded(kind, &frame, &config), 0, 0);
                assert_eq!(again, vec![Owned::Frame(kind, frame)]);
            }
            assert_eq!(counters.frames as usize, frames(&events).len());
        }
    }
}
