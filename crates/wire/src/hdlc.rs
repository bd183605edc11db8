//! HDLC-like framing for asynchronous serial lines (RFC 1662, octet-stuffed), as a sans-IO
//! encoder and a streaming [`Deframer`].
//!
//! # Frame layout
//!
//! ```text
//! Flag | kind (1) | frame (0..=max_frame) | FCS (2 or 4) | Flag
//! 0x7E |  <-------------- octet-stuffed --------------->  | 0x7E
//! ```
//!
//! Where PPP puts its Protocol field, taroc puts the frame kind byte (taroc's `FrameKind`
//! byte: which packet type of the compression scheme the frame is); the taroc frame follows as
//! the Information field. The Address (0xFF) and Control (0x03) fields are omitted, as
//! Address-and-Control-Field-Compression allows (RFC 1662 section 3.2): the link is
//! point-to-point and every frame is Unnumbered Information, so they would carry nothing. The
//! FCS (FCS-16 by default, or FCS-32; see [`crate::fcs`]) covers the kind byte and the frame,
//! is complemented and sent least significant octet first (section 3.1, appendix C).
//!
//! # Transparency (section 4.2)
//!
//! After the FCS is computed, every Flag Sequence (0x7E), Control Escape (0x7D) and octet
//! flagged in the sending Async-Control-Character-Map ([`Accm`]) between the flags is sent as
//! 0x7D followed by the octet XOR 0x20. The default map flags 0x00..=0x1F, as on an
//! asynchronous link before LCP has negotiated another. On reception, octets below 0x20 flagged
//! in the receiving ACCM are removed first (modems and other equipment may insert them), then
//! each Control Escape is removed and the next octet XORed with 0x20, unless it is a Flag
//! Sequence, which aborts the frame.
//!
//! # Robustness
//!
//! The encoder always sends an opening flag, so line noise before a frame is flushed as a bad
//! frame and never spoils the next one (section 4.4.2). The [`Deframer`] takes any bytes, in
//! chunks of any size, and never panics: bytes before the first flag are skipped as garbage,
//! empty frames between flags (flag storms, shared flags) are ignored, and a frame is
//! discarded, and counted, when it is too short, fails its FCS, grows past the maximum
//! (everything up to the next flag is then skipped), is aborted or holds an invalid escape. Its
//! memory is one buffer of fixed size, given at construction; it does not allocate after.
//!
//! ```
//! use taroc_wire::framing::Event;
//! use taroc_wire::hdlc::{self, Config, Deframer};
//!
//! let config = Config::default();
//! let mut line = Vec::new();
//! hdlc::encode(0x45, b"a frame \x7e\x03", &config, &mut line);
//!
//! let mut deframer = Deframer::new(&config);
//! let mut got = Vec::new();
//! for chunk in line.chunks(3) {
//!     deframer.push(chunk, |event| {
//!         if let Event::Frame { kind, frame } = event {
//!             got.push((kind, frame.to_vec()));
//!         }
//!     });
//! }
//! assert_eq!(got, [(0x45, b"a frame \x7e\x03".to_vec())]);
//! assert_eq!(deframer.counters().frames, 1);
//! ```

use crate::fcs::Fcs;
use crate::framing::{Counters, Discard, Event, FrameBuf, Sink, SliceSink, DEFAULT_MAX_FRAME};

/// The Flag Sequence, which begins and ends every frame.
pub const FLAG: u8 = 0x7E;

/// The Control Escape octet.
pub const ESCAPE: u8 = 0x7D;

/// What an escaped octet is XORed with (bit 5 complemented).
pub const ESCAPE_XOR: u8 = 0x20;

/// A sending Async-Control-Character-Map: the set of octets sent escaped (RFC 1662 section
/// 7.1). The sending map may cover all 256 octets; the Flag Sequence and Control Escape are
/// always escaped, whatever the map says. It never flags 0x20..=0x3F nor 0x5E, which section
/// 7.1 does not let a sender escape: escaped, they would go out as a control character (which
/// a receiver removes, or, in this crate, refuses as an invalid escape) or as 0x7D 0x7E, the
/// abort sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Accm([u32; 8]);

impl Accm {
    /// Escapes every control character 0x00..=0x1F: the default of an asynchronous link.
    pub const ASYNC_DEFAULT: Accm = Accm::from_lcp(0xFFFF_FFFF);

    /// Escapes nothing beyond the Flag Sequence and Control Escape (an 8-bit clean line).
    pub const NONE: Accm = Accm([0; 8]);

    /// The map an LCP ACCM option negotiates: bit `n` flags the control character `n`
    /// (0..=31).
    pub const fn from_lcp(map: u32) -> Accm {
        Accm([map, 0, 0, 0, 0, 0, 0, 0])
    }

    /// This map with `octet` flagged too (for instance 0x91 and 0x93, XON and XOFF with parity
    /// set, for modems that intercept them). Octets that may not be escaped (0x20..=0x3F,
    /// 0x5E) are left out.
    pub const fn with(self, octet: u8) -> Accm {
        if matches!(octet, 0x20..=0x3F | 0x5E) {
            return self;
        }
        let mut map = self.0;
        map[(octet >> 5) as usize] |= 1 << (octet & 31);
        Accm(map)
    }

    /// Whether `octet` is flagged.
    #[inline]
    pub const fn contains(&self, octet: u8) -> bool {
        self.0[(octet >> 5) as usize] >> (octet & 31) & 1 != 0
    }
}

impl Default for Accm {
    fn default() -> Accm {
        Accm::ASYNC_DEFAULT
    }
}

/// The settings of both directions of one end of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The FCS appended to and checked on every frame. Default FCS-16.
    pub fcs: Fcs,
    /// The sending ACCM: octets the encoder escapes. Default [`Accm::ASYNC_DEFAULT`].
    pub accm: Accm,
    /// The receiving ACCM: bit `n` set means a raw control character `n` on the line is noise
    /// and removed (RFC 1662 section 4.2). It must not flag an octet the peer sends raw.
    /// Default 0xFFFFFFFF.
    pub rx_accm: u32,
    /// The longest frame the deframer accepts, in bytes, kind byte and FCS not counted. Default
    /// [`DEFAULT_MAX_FRAME`].
    pub max_frame: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            fcs: Fcs::Fcs16,
            accm: Accm::ASYNC_DEFAULT,
            rx_accm: 0xFFFF_FFFF,
            max_frame: DEFAULT_MAX_FRAME,
        }
    }
}

impl Config {
    /// The deframer's buffer size for this configuration: kind byte, `max_frame` bytes and the
    /// FCS.
    pub fn buffer_len(&self) -> usize {
        self.max_frame.saturating_add(1 + self.fcs.field_len())
    }
}

/// The most bytes [`encode`] can write for a frame of `frame_len` bytes: two flags, and every
/// octet of kind, frame and FCS escaped.
pub fn max_encoded_len(frame_len: usize, fcs: Fcs) -> usize {
    2 + 2 * (1 + frame_len + fcs.field_len())
}

/// Appends the frame `kind | frame | FCS`, stuffed and between an opening and a closing flag,
/// to `out`.
///
/// Nothing checks `frame` against a maximum: a frame longer than the peer's `max_frame` is
/// discarded by the peer.
#[cfg(feature = "std")]
pub fn encode(kind: u8, frame: &[u8], config: &Config, out: &mut std::vec::Vec<u8>) {
    out.reserve(frame.len() + frame.len() / 16 + 16);
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
    let map = config.accm.with(FLAG).with(ESCAPE);
    let trailer = config.fcs.trailer(&[&[kind], frame]);
    out.put(FLAG);
    stuff(&[kind], &map, out);
    stuff(frame, &map, out);
    stuff(&trailer[..config.fcs.field_len()], &map, out);
    out.put(FLAG);
}

/// Writes `data`, each octet in `map` as Control Escape and the octet XOR 0x20, runs of the
/// others as they are.
fn stuff(mut data: &[u8], map: &Accm, out: &mut impl Sink) {
    while let Some(at) = data.iter().position(|b| map.contains(*b)) {
        out.put_slice(&data[..at]);
        out.put(ESCAPE);
        out.put(data[at] ^ ESCAPE_XOR);
        data = &data[at + 1..];
    }
    out.put_slice(data);
}

/// Where the deframer is in the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside any frame (at start and after [`Deframer::reset`]): skipping garbage up to a
    /// flag.
    Hunt,
    /// After a flag: collecting a frame.
    Frame,
    /// After a frame was discarded midway (too long, invalid escape): skipping up to a flag.
    Skip,
}

/// A streaming receiver of HDLC-like frames: feed it the bytes of the line as they arrive,
/// it reports each good frame and each discarded one.
///
/// The buffer `B` (a `Vec<u8>`, an array, a `&mut [u8]`) holds the frame being received; its
/// length caps the frame length on top of [`Config::max_frame`] ([`Config::buffer_len`] is
/// enough).
#[derive(Debug, Clone)]
pub struct Deframer<B> {
    fcs: Fcs,
    rx_accm: u32,
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
            rx_accm: config.rx_accm,
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

    /// Forgets any partly received frame and skips bytes up to the next flag, as at the start
    /// (for instance after the line was reopened). The counters stay.
    pub fn reset(&mut self) {
        self.state = State::Hunt;
        self.buf.len = 0;
        self.escaped = false;
        self.garbage = 0;
    }

    /// Processes `bytes`, the next bytes from the line, calling `on_event` for each frame
    /// delivered or discarded, and for each run of garbage that ends. A frame split across
    /// calls is kept until its closing flag arrives.
    pub fn push(&mut self, bytes: &[u8], mut on_event: impl FnMut(Event<'_>)) {
        let mut rest = bytes;
        while !rest.is_empty() {
            match self.state {
                State::Hunt | State::Skip => {
                    let Some(at) = rest.iter().position(|&b| b == FLAG) else {
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
                State::Frame => rest = self.frame_bytes(rest, &mut on_event),
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

    /// Starts a new frame after a flag.
    fn open(&mut self) {
        self.state = State::Frame;
        self.buf.len = 0;
        self.escaped = false;
    }

    /// Whether the deframer must look at `b` on its own: a flag, an escape or a control
    /// character to remove.
    #[inline]
    fn special(&self, b: u8) -> bool {
        b == FLAG || b == ESCAPE || (b < 0x20 && self.rx_accm >> b & 1 != 0)
    }

    /// Takes bytes of a frame from `rest` ([`State::Frame`]) up to the end of a run of plain
    /// bytes, or one special byte; returns what is left.
    fn frame_bytes<'r>(
        &mut self,
        rest: &'r [u8],
        on_event: &mut impl FnMut(Event<'_>),
    ) -> &'r [u8] {
        if !self.escaped {
            let run = rest
                .iter()
                .position(|&b| self.special(b))
                .unwrap_or(rest.len());
            if run > 0 {
                if !self.buf.extend(&rest[..run]) {
                    self.discard(Discard::TooLong, State::Skip, on_event);
                }
                return &rest[run..];
            }
        }
        let b = rest[0];
        if b == FLAG {
            if self.escaped {
                self.discard(Discard::Abort, State::Frame, on_event);
            } else {
                self.close(on_event);
            }
            self.open();
        } else if b < 0x20 && self.rx_accm >> b & 1 != 0 {
            // Inserted by equipment on the way: removed, escaped or not.
        } else if self.escaped {
            self.escaped = false;
            if b < 0x20 {
                // Would stand for 0x20..=0x3F, octets no sender escapes.
                self.discard(Discard::InvalidEscape, State::Skip, on_event);
            } else if !self.buf.push(b ^ ESCAPE_XOR) {
                self.discard(Discard::TooLong, State::Skip, on_event);
            }
        } else if b == ESCAPE {
            self.escaped = true;
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

    /// A closing flag: delivers or discards the frame collected (nothing if empty).
    fn close(&mut self, on_event: &mut impl FnMut(Event<'_>)) {
        let fcs = self.fcs;
        let content = self.buf.bytes();
        let reason = match content {
            [] => return,
            c if c.len() < 1 + fcs.field_len() => Discard::Runt,
            c if !fcs.check(c) => Discard::BadFcs,
            [kind, rest @ ..] => {
                let frame = &rest[..rest.len() - fcs.field_len()];
                on_event(Event::Frame { kind: *kind, frame });
                self.counters.frames = self.counters.frames.saturating_add(1);
                return;
            }
        };
        self.counters.count(reason);
        on_event(Event::Discarded(reason));
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::fcs::{fcs16, FCS16_GOOD, FCS16_INIT};
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

    /// The configurations the round trips run with: both FCSs, the default ACCMs, and an
    /// 8-bit clean line that sends control characters raw.
    fn configs(max_frame: usize) -> Vec<Config> {
        let clean = Config {
            accm: Accm::NONE,
            rx_accm: 0,
            max_frame,
            ..Config::default()
        };
        vec![
            Config {
                max_frame,
                ..Config::default()
            },
            Config {
                fcs: Fcs::Fcs32,
                max_frame,
                ..Config::default()
            },
            clean,
            Config {
                fcs: Fcs::Fcs32,
                ..clean
            },
        ]
    }

    #[test]
    fn rfc1662_escapes_and_layout() {
        let config = Config::default();
        let frame = [0x7E, 0x7D, 0x03, 0x41, 0x11, 0x93];
        let out = encoded(0x21, &frame, &config);
        // Section 4.2: 0x7E -> 7D 5E, 0x7D -> 7D 5D, 0x03 -> 7D 23; 0x11 (XON) -> 7D 31; 0x93
        // is above the 32-bit map and goes raw.
        let mut content = vec![0x21, 0x7E, 0x7D, 0x03, 0x41, 0x11, 0x93];
        let fcs = !fcs16(FCS16_INIT, &content);
        content.extend_from_slice(&fcs.to_le_bytes());
        assert_eq!(fcs16(FCS16_INIT, &content), FCS16_GOOD);
        let mut expected = vec![
            FLAG, 0x21, 0x7D, 0x5E, 0x7D, 0x5D, 0x7D, 0x23, 0x41, 0x7D, 0x31, 0x93,
        ];
        for b in fcs.to_le_bytes() {
            if b == FLAG || b == ESCAPE || b < 0x20 {
                expected.extend_from_slice(&[ESCAPE, b ^ 0x20]);
            } else {
                expected.push(b);
            }
        }
        expected.push(FLAG);
        assert_eq!(out, expected);

        // XON and XOFF with parity set, added to the map: 0x91 -> 7D B1, 0x93 -> 7D B3.
        let config = Config {
            accm: Accm::ASYNC_DEFAULT.with(0x91).with(0x93),
            ..config
        };
        let out = encoded(0x91, &[0x93], &config);
        assert_eq!(out[..5], [FLAG, 0x7D, 0xB1, 0x7D, 0xB3]);
        // An empty map still escapes flag and escape, and nothing else.
        let config = Config {
            accm: Accm::NONE,
            ..config
        };
        assert_eq!(
            encoded(0x00, &[0x7E, 0x01], &config)[..5],
            [FLAG, 0x00, 0x7D, 0x5E, 0x01]
        );
    }

    #[test]
    fn accm() {
        let map = Accm::from_lcp(0x000A_0000);
        assert!(map.contains(0x11) && map.contains(0x13));
        assert!(!map.contains(0x00) && !map.contains(0x7E) && !map.contains(0xFF));
        assert!(map.with(0xFF).contains(0xFF));
        // Never an octet whose escape would be a control character or the abort sequence.
        let all = (0..=255).fold(Accm::NONE, |map, b| map.with(b));
        assert!((0..=255).all(|b| all.contains(b) != matches!(b, 0x20..=0x3F | 0x5E)));
        let config = Config {
            accm: all,
            ..Config::default()
        };
        let frame: Vec<u8> = (0..=255).collect();
        let (events, _) = decode(&config, &encoded(0x5E, &frame, &config), 1, 0);
        assert_eq!(events, vec![Owned::Frame(0x5E, frame)]);
        assert!((0..32).all(|b| Accm::ASYNC_DEFAULT.contains(b)));
        assert!((32..=255).all(|b| !Accm::ASYNC_DEFAULT.contains(b)));
        assert_eq!(Accm::default(), Accm::ASYNC_DEFAULT);
    }

    #[test]
    fn encode_to_slice_matches_encode() {
        for config in configs(4000) {
            let mut rng = Rng::new(7);
            for len in [0, 1, 5, 300] {
                let frame = rng.bytes(len);
                let expected = encoded(0x7E, &frame, &config);
                let mut buf = vec![0; max_encoded_len(len, config.fcs)];
                let n = encode_to_slice(0x7E, &frame, &config, &mut buf).unwrap();
                assert_eq!(buf[..n], expected);
                let all = vec![0x7E; len];
                assert!(encoded(0x7D, &all, &config).len() <= max_encoded_len(len, config.fcs));
                let short = &mut buf[..expected.len() - 1];
                assert_eq!(
                    encode_to_slice(0x7E, &frame, &config, short)
                        .unwrap_err()
                        .needed,
                    expected.len()
                );
            }
        }
    }

    /// Every length 0..=2000 (kind byte turning through all 256 values), and every kind byte
    /// with a few lengths, of random bytes mixed with the special ones, in one stream fed all at
    /// once, in random chunks and a byte at a time: each frame delivered once, in order, equal.
    #[test]
    fn round_trip_every_length_and_kind() {
        let specials = [
            0x7E, 0x7D, 0xC0, 0xDB, 0xDC, 0xDD, 0x00, 0x11, 0x13, 0x1F, 0x20, 0x5E, 0xFF,
        ];
        let mut rng = Rng::new(1);
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
                assert_eq!(
                    decode(&config, &stream, max_chunk, seed).0,
                    whole,
                    "{max_chunk}"
                );
            }
        }
    }

    /// Frames with a shared flag between them (the closing flag of one opens the next) decode
    /// as well.
    #[test]
    fn shared_flags() {
        let config = Config::default();
        let mut stream = Vec::new();
        for i in 0..10u8 {
            let one = encoded(i, &[i; 3], &config);
            stream.extend_from_slice(&one[..one.len() - 1]);
        }
        stream.push(FLAG);
        let (events, _) = decode(&config, &stream, 0, 0);
        assert_eq!(
            frames(&events),
            (0..10u8).map(|i| (i, vec![i; 3])).collect::<Vec<_>>()
        );
    }

    /// Frame B between good frames A and C has one bit flipped, every bit in turn: A and C are
    /// delivered, B never (not even altered), with both FCSs and a clean line.
    #[test]
    fn every_single_bit_flip_is_caught() {
        let mut rng = Rng::new(3);
        for config in configs(2048) {
            for len in [0, 1, 40] {
                let a = (1u8, rng.bytes(20));
                let b = (
                    2u8,
                    (0..len)
                        .map(|i| [0x7E, 0x7D, 0x05, rng.byte()][i % 4])
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
                    let (events, counters) = decode(&config, &stream, 0, 0);
                    assert_eq!(
                        frames(&events),
                        vec![a.clone(), c.clone()],
                        "{config:?} len {len} bit {bit}"
                    );
                    assert!(counters.discarded() >= 1 || counters.garbage_bytes > 0 || bit < 8);
                }
            }
        }
    }

    /// Frame B cut short at every point, then frame C: B is never delivered, C always is.
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

    /// Random bytes before, between and after frames, with and without flags in them: every
    /// frame sent still arrives, since each starts with its own flag. Garbage before the first
    /// flag is reported as such.
    #[test]
    fn garbage_around_frames() {
        let mut rng = Rng::new(5);
        for config in configs(2048) {
            let sent: Vec<(u8, Vec<u8>)> =
                (0..200).map(|i| (i as u8, rng.some_bytes(300))).collect();
            let lead: Vec<u8> = rng.bytes(500).into_iter().filter(|&b| b != FLAG).collect();
            let mut stream = lead.clone();
            for (i, (kind, frame)) in sent.iter().enumerate() {
                encode(*kind, frame, &config, &mut stream);
                let noise = rng.some_bytes(40);
                if i % 3 == 0 {
                    stream.extend(noise.iter().filter(|&&b| b != FLAG));
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
    fn flag_storms_are_ignored() {
        let config = Config::default();
        let mut stream = vec![FLAG; 1000];
        for i in 0..50u8 {
            encode(i, &[i; 10], &config, &mut stream);
            stream.extend(std::iter::repeat_n(FLAG, usize::from(i) * 7));
        }
        let (events, counters) = decode(&config, &stream, 0, 0);
        assert_eq!(events.len(), 50);
        assert_eq!(frames(&events).len(), 50);
        assert_eq!((counters.discarded(), counters.garbage_bytes), (0, 0));
        let (events, _) = decode(&config, &vec![FLAG; 100_000], 1000, 0);
        assert!(events.is_empty());
    }

    #[test]
    fn overlong_frames_are_dropped_and_the_next_decoded() {
        for config in configs(100) {
            let mut stream = Vec::new();
            encode(1, &[0x7E; 100], &config, &mut stream);
            encode(2, &[0x55; 101], &config, &mut stream);
            encode(3, &[0x7D; 5000], &config, &mut stream);
            encode(4, &[0x44; 7], &config, &mut stream);
            for max_chunk in [0, 1, 64] {
                let (events, counters) = decode(&config, &stream, max_chunk, 9);
                assert_eq!(
                    events,
                    vec![
                        Owned::Frame(1, vec![0x7E; 100]),
                        Owned::Discarded(Discard::TooLong),
                        Owned::Discarded(Discard::TooLong),
                        Owned::Frame(4, vec![0x44; 7]),
                    ]
                );
                assert_eq!(counters.too_long, 2);
            }
        }
        // A buffer shorter than max_frame allows caps the frame length too.
        let config = Config::default();
        let mut deframer = Deframer::with_buffer(&config, [0u8; 13]);
        assert_eq!(deframer.max_frame(), 10);
        let mut got = Vec::new();
        let stream = [encoded(1, &[0; 10], &config), encoded(2, &[0; 11], &config)].concat();
        deframer.push(&stream, |e| got.push(Owned::from(e)));
        assert_eq!(
            got,
            vec![
                Owned::Frame(1, vec![0; 10]),
                Owned::Discarded(Discard::TooLong)
            ]
        );
        // Even a buffer too small for any frame does no harm.
        let mut deframer = Deframer::with_buffer(&config, &mut [][..]);
        assert_eq!(deframer.max_frame(), 0);
        deframer.push(&stream, |_| {});
        assert_eq!(deframer.counters().too_long, 2);
    }

    #[test]
    fn aborts_runts_and_invalid_escapes() {
        let config = Config {
            rx_accm: 0,
            ..Config::default()
        };
        let good = encoded(5, b"ok", &config);
        let mut stream = Vec::new();
        // An aborted frame: its flag still opens the next frame.
        stream.extend_from_slice(&[FLAG, 1, 2, 3, ESCAPE, FLAG]);
        stream.extend_from_slice(&good[1..]);
        // A runt: kind and one FCS octet.
        stream.extend_from_slice(&[FLAG, 1, 2, FLAG]);
        // An escape of a raw control character (would be 0x21).
        stream.extend_from_slice(&[FLAG, 1, ESCAPE, 0x01, 2, 3, 4, 5]);
        stream.extend_from_slice(&good);
        let (events, counters) = decode(&config, &stream, 0, 0);
        assert_eq!(
            events,
            vec![
                Owned::Discarded(Discard::Abort),
                Owned::Frame(5, b"ok".to_vec()),
                Owned::Discarded(Discard::Runt),
                Owned::Discarded(Discard::InvalidEscape),
                Owned::Frame(5, b"ok".to_vec()),
            ]
        );
        assert_eq!(
            (counters.abort, counters.runt, counters.invalid_escape),
            (1, 1, 1)
        );
        assert_eq!(counters.frames, 2);
        // A bad FCS.
        let mut bad = good.clone();
        bad[1] ^= 0x40;
        let (events, counters) = decode(&config, &bad, 0, 0);
        assert_eq!(events, vec![Owned::Discarded(Discard::BadFcs)]);
        assert_eq!(counters.get(Discard::BadFcs), 1);
    }

    /// Control characters flagged in the receiving ACCM that equipment inserts on the way
    /// (XON/XOFF, NUL) are removed before the FCS check, even after an escape.
    #[test]
    fn flagged_control_characters_are_removed() {
        let config = Config::default();
        let frame = [0x00, 0x11, 0x7E, 0x20, 0x13];
        let out = encoded(0x7D, &frame, &config);
        let mut noisy = Vec::new();
        for b in &out {
            noisy.push(*b);
            if *b != FLAG {
                noisy.extend_from_slice(&[0x11, 0x13, 0x00]);
            }
        }
        let (events, _) = decode(&config, &noisy, 0, 0);
        assert_eq!(events, vec![Owned::Frame(0x7D, frame.to_vec())]);
    }

    #[test]
    fn reset_hunts_for_a_flag() {
        let config = Config::default();
        let out = encoded(1, &[1, 2, 3], &config);
        let mut deframer = Deframer::new(&config);
        let mut got = Vec::new();
        deframer.push(&out[..5], |e| got.push(Owned::from(e)));
        deframer.reset();
        deframer.push(&out[5..], |e| got.push(Owned::from(e)));
        // The rest of the frame is garbage; its closing flag opens the next frame.
        assert_eq!(got, vec![Owned::Garbage(out.len() - 6)]);
        deframer.push(&out, |e| got.push(Owned::from(e)));
        assert_eq!(got[1], Owned::Frame(1, vec![1, 2, 3]));
    }

    /// Random line bytes, mostly specials, in random chunks: no panic, the same events however
    /// the bytes are split, and every frame delivered passes its FCS and fits.
    #[test]
    fn random_line_bytes() {
        let mut rng = Rng::new(8);
        for round in 0..200 {
            let config = configs(1 + rng.below(64))[round % 4];
            let stream: Vec<u8> = (0..rng.below(3000))
                .map(|_| match rng.below(6) {
                    0 => FLAG,
                    1 => ESCAPE,
                    2 => rng.byte() & 0x3F,
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
