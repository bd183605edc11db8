//! What the serial-line framings ([`crate::hdlc`], [`crate::kiss`]) share: the events a
//! deframer reports, why it discards a frame, its counters, and the encoders' error.
//!
//! Both framings carry one taroc frame per line frame as `kind | frame | FCS`: the frame kind
//! byte (what taroc's `FrameKind::to_byte` gives), the frame's bytes, and an FCS of
//! [`crate::fcs`] over the kind byte and the frame.

/// The default largest frame a deframer accepts, in bytes, not counting the kind byte and the
/// FCS: room for a 1500-byte packet sent whole with some header to spare.
pub const DEFAULT_MAX_FRAME: usize = 2048;

/// What a deframer found in the bytes it was fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A frame that passed its check: its kind byte and its bytes (without kind and FCS). The
    /// bytes borrow the deframer's buffer, valid until the event handler returns.
    Frame {
        /// The frame kind byte.
        kind: u8,
        /// The frame, kind byte and FCS removed.
        frame: &'a [u8],
    },
    /// A frame was discarded, for this reason.
    Discarded(Discard),
    /// This many bytes arrived outside any frame (before the first frame delimiter, after
    /// a reset) and were skipped. Reported when the next delimiter ends the run.
    Garbage(usize),
}

/// Why a deframer discarded a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Discard {
    /// The FCS over the frame is not the good FCS: corrupted on the line, or line noise taken
    /// for a frame.
    BadFcs,
    /// Too short to hold a kind byte and the FCS (and, for KISS, the command byte); not empty.
    Runt,
    /// Longer than the configured maximum: dropped, and everything up to the next delimiter
    /// skipped.
    TooLong,
    /// HDLC: a frame ended by Control Escape followed by a Flag Sequence (0x7D 0x7E), the
    /// abort sequence of RFC 1662 section 4.3.
    Abort,
    /// An escape octet followed by an octet no sender puts there (see each framing); the rest
    /// of the frame is skipped.
    InvalidEscape,
    /// KISS: a frame for another TNC port.
    OtherPort,
    /// KISS: a frame for our port that is not a data frame (a TNC command, or the return
    /// command 0xFF).
    NotData,
}

impl Discard {
    /// Every reason, in declaration order.
    pub const ALL: [Discard; 7] = [
        Discard::BadFcs,
        Discard::Runt,
        Discard::TooLong,
        Discard::Abort,
        Discard::InvalidEscape,
        Discard::OtherPort,
        Discard::NotData,
    ];
}

impl core::fmt::Display for Discard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Discard::BadFcs => "bad FCS",
            Discard::Runt => "runt frame",
            Discard::TooLong => "frame too long",
            Discard::Abort => "aborted frame",
            Discard::InvalidEscape => "invalid escape",
            Discard::OtherPort => "frame for another port",
            Discard::NotData => "not a data frame",
        })
    }
}

/// A deframer's running counts: frames delivered, frames discarded per reason, bytes skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames delivered ([`Event::Frame`]).
    pub frames: u64,
    /// Discarded: [`Discard::BadFcs`].
    pub bad_fcs: u64,
    /// Discarded: [`Discard::Runt`].
    pub runt: u64,
    /// Discarded: [`Discard::TooLong`].
    pub too_long: u64,
    /// Discarded: [`Discard::Abort`].
    pub abort: u64,
    /// Discarded: [`Discard::InvalidEscape`].
    pub invalid_escape: u64,
    /// Discarded: [`Discard::OtherPort`].
    pub other_port: u64,
    /// Discarded: [`Discard::NotData`].
    pub not_data: u64,
    /// Bytes skipped outside any frame ([`Event::Garbage`]), counted as they arrive.
    pub garbage_bytes: u64,
}

impl Counters {
    /// The count of frames discarded for `reason`.
    pub fn get(&self, reason: Discard) -> u64 {
        match reason {
            Discard::BadFcs => self.bad_fcs,
            Discard::Runt => self.runt,
            Discard::TooLong => self.too_long,
            Discard::Abort => self.abort,
            Discard::InvalidEscape => self.invalid_escape,
            Discard::OtherPort => self.other_port,
            Discard::NotData => self.not_data,
        }
    }

    /// Frames discarded for any reason.
    pub fn discarded(&self) -> u64 {
        Discard::ALL.iter().map(|&r| self.get(r)).sum()
    }

    /// Counts one frame discarded for `reason`.
    pub(crate) fn count(&mut self, reason: Discard) {
        let n = match reason {
            Discard::BadFcs => &mut self.bad_fcs,
            Discard::Runt => &mut self.runt,
            Discard::TooLong => &mut self.too_long,
            Discard::Abort => &mut self.abort,
            Discard::InvalidEscape => &mut self.invalid_escape,
            Discard::OtherPort => &mut self.other_port,
            Discard::NotData => &mut self.not_data,
        };
        *n = n.saturating_add(1);
    }
}

/// The output buffer of an `encode_to_slice` was too small for the encoded frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferTooSmall {
    /// The length of the whole encoded frame.
    pub needed: usize,
}

impl core::fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "output buffer too small: {} bytes needed", self.needed)
    }
}

impl core::error::Error for BufferTooSmall {}

/// Where an encoder writes: a growing vector, or a slice that records how much it missed.
pub(crate) trait Sink {
    fn put(&mut self, b: u8);
    fn put_slice(&mut self, s: &[u8]);
}

#[cfg(feature = "std")]
impl Sink for std::vec::Vec<u8> {
    fn put(&mut self, b: u8) {
        self.push(b);
    }
    fn put_slice(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }
}

/// A slice being filled; writes past its end are counted, not stored.
pub(crate) struct SliceSink<'a> {
    pub(crate) buf: &'a mut [u8],
    pub(crate) len: usize,
}

impl SliceSink<'_> {
    /// The number of bytes written, or the error if they did not all fit.
    pub(crate) fn finish(self) -> Result<usize, BufferTooSmall> {
        if self.len <= self.buf.len() {
            Ok(self.len)
        } else {
            Err(BufferTooSmall { needed: self.len })
        }
    }
}

impl Sink for SliceSink<'_> {
    fn put(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
        }
        self.len += 1;
    }
    fn put_slice(&mut self, s: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + s.len()) {
            dst.copy_from_slice(s);
        } else if let Some(rest) = self.buf.get_mut(self.len..) {
            let n = rest.len();
            rest.copy_from_slice(&s[..n]);
        }
        self.len += s.len();
    }
}

/// A deframer's frame buffer: the bytes of the frame being received, at most `limit` of them.
#[derive(Debug, Clone)]
pub(crate) struct FrameBuf<B> {
    pub(crate) buf: B,
    pub(crate) len: usize,
    /// `min(buf.len(), the configured maximum)`: a frame growing past it is too long.
    pub(crate) limit: usize,
}

impl<B: AsMut<[u8]>> FrameBuf<B> {
    pub(crate) fn new(mut buf: B, wanted: usize) -> FrameBuf<B> {
        let limit = buf.as_mut().len().min(wanted);
        FrameBuf { buf, len: 0, limit }
    }

    /// Appends `b`; false (nothing stored) if the frame would grow past the limit.
    #[inline]
    pub(crate) fn push(&mut self, b: u8) -> bool {
        if self.len >= self.limit {
            return false;
        }
        match self.buf.as_mut().get_mut(self.len) {
            Some(slot) => {
                *slot = b;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Appends `s`; false (nothing stored) if the frame would grow past the limit.
    #[inline]
    pub(crate) fn extend(&mut self, s: &[u8]) -> bool {
        if s.len() > self.limit - self.len {
            return false;
        }
        match self.buf.as_mut().get_mut(self.len..self.len + s.len()) {
            Some(dst) => {
                dst.copy_from_slice(s);
                self.len += s.len();
                true
            }
            None => false,
        }
    }

    pub(crate) fn bytes(&mut self) -> &[u8] {
        let len = self.len;
        self.buf.as_mut().get(..len).unwrap_or(&[])
    }
}

/// Test helpers shared by the framings' tests.
#[cfg(all(test, feature = "std"))]
pub(crate) mod testing {
    use super::{Discard, Event};

    /// xorshift64*: a small seeded generator, enough for test data and chunk sizes.
    pub(crate) struct Rng(u64);

    impl Rng {
        pub(crate) fn new(seed: u64) -> Rng {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }
        pub(crate) fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Uniform-ish in `0..n` (`n > 0`).
        pub(crate) fn below(&mut self, n: usize) -> usize {
            (self.next_u64() % n as u64) as usize
        }
        pub(crate) fn byte(&mut self) -> u8 {
            (self.next_u64() >> 32) as u8
        }
        pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.byte()).collect()
        }
        /// Random bytes, fewer than `below` of them.
        pub(crate) fn some_bytes(&mut self, below: usize) -> Vec<u8> {
            let n = self.below(below);
            self.bytes(n)
        }
    }

    /// An [`Event`] with its frame copied out.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) enum Owned {
        Frame(u8, Vec<u8>),
        Discarded(Discard),
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

    /// Splits `stream` into chunks: all at once (`max_chunk` 0), or random sizes in
    /// `1..=max_chunk`, and hands each to `push`.
    pub(crate) fn chunked(stream: &[u8], max_chunk: usize, seed: u64, mut push: impl FnMut(&[u8])) {
        if max_chunk == 0 {
            push(stream);
            return;
        }
        let mut rng = Rng::new(seed);
        let mut rest = stream;
        while !rest.is_empty() {
            let n = (1 + rng.below(max_chunk)).min(rest.len());
            push(&rest[..n]);
            rest = &rest[n..];
        }
    }

    /// The frames among `events`.
    pub(crate) fn frames(events: &[Owned]) -> Vec<(u8, Vec<u8>)> {
        events
            .iter()
            .filter_map(|e| match e {
                Owned::Frame(k, f) => Some((*k, f.clone())),
                _ => None,
            })
            .collect()
    }
}
