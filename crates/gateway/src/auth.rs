//! Authentication of the UDP link: every frame carries a message authentication code (MAC)
//! under a key both gateways share, a sender id and a counter, so a datagram that is not a
//! fresh frame of the peer never reaches a decompressor or a compressor's feedback input.
//!
//! No I/O here: the key, the sender id, the first counter and the time come in as values
//! (`crate::keyfile` reads and makes keys; [`crate::endpoint`] sends hellos; the transports'
//! loop reads the clocks).
//!
//! ## Wire format
//!
//! ```text
//!  short form (the usual one)         long form (kind byte's top bit set)
//!  +------+---------+-------+-----+   +-------+-----------+---------+---------+-------+-----+
//!  | kind | counter | frame | tag |   | kind  | sender id | counter |  echo   | frame | tag |
//!  |      | low 16  |       |     |   | |0x80 | 64 bits   | 64 bits | 64 bits |       |     |
//!  +------+---------+-------+-----+   +-------+-----------+---------+---------+-------+-----+
//!    1 B     2 B      ...    T B        1 B      8 B         8 B       8 B       ...   T B
//! ```
//!
//! - `kind`: the [`FrameKind`] byte (0x00..=0x06, or a profile's own 0x08..=0x7F), or
//!   [`HELLO`] (0x07, long form only, no frame); its top bit (0x80) marks the long form.
//!   Numbers are big-endian.
//! - `echo`: the sender id of the peer's run this gateway takes frames of, or of a run it
//!   heard and wants to be heard by ([`Opener::echo`], [`Session::hello`]), 0 if none yet.
//! - `tag`: the first T bytes (`--tag-len`, 4..=16, default 8; both ends must agree) of the
//!   BLAKE3 keyed hash, in extendable-output mode, of
//!   `T (1 byte) ‖ sender id (8) ‖ full counter (8) ‖ kind byte as sent (1) ‖ echo (8, long
//!   form only) ‖ frame`. The MAC key is `blake3::derive_key(KEY_CONTEXT, file key)`: the 32
//!   bytes of the key file are never used directly, and the context string names the protocol
//!   version (v2: the echo).
//! - A short-form frame carries neither the sender id nor the counter's high bits nor an echo:
//!   the receiver uses the sender id of the peer it knows and rebuilds the counter as the value
//!   with those 16 low bits nearest its highest accepted counter; the tag then verifies only if
//!   both are right.
//!
//! ## Sending ([`Sealer`])
//!
//! The counter starts at the wall-clock time in nanoseconds since the UNIX epoch when the
//! gateway starts, and goes up by one per frame; the sender id is 64 random bits per start. So
//! a restarted gateway's counters are above everything it sent before, *assuming* the clock
//! does not step back across the restart and the gateway sent fewer than 10^9 frames per
//! second on average. The long form goes with the first [`LONG_AT_START`] frames, every
//! [`LONG_EVERY`]th frame, any frame after [`LONG_AFTER_IDLE`] ns without sending one, and the
//! first frame after the echo changed; the short form otherwise. Hellos take a counter but do
//! not count here.
//!
//! ## Receiving ([`Opener`])
//!
//! In this order: malformed (too short for its form, no frame kind, or a hello that is short
//! or carries bytes), oversize (the frame is longer than the link MTU), then the tag, then
//! freshness. A long frame whose tag fails is [`Rejection::Forged`]; a short one is
//! [`Rejection::Unsynced`] (forged, or from a peer we have no long frame of yet: we cannot tell
//! which). An authentic frame with our own sender id is [`Rejection::Reflected`].
//!
//! Freshness within a run of the peer: the highest accepted counter and a bitmap of the
//! [`WINDOW`] counters below it, as IPsec and WireGuard keep; a counter seen already or older
//! than the window is [`Rejection::Replayed`].
//!
//! Freshness across runs: a receiver that restarts remembers nothing, so a counter cannot tell
//! it whether a long frame was made before or after it started. The echo can: sender ids are
//! random per start, so no frame made before our start echoes our id. The content of a long
//! frame of a sender that is not the current peer is accepted only if the frame echoes our own
//! sender id (otherwise [`Rejection::Stale`]) and its counter is above every counter of the
//! current peer's (otherwise [`Rejection::Replayed`]: an earlier run of the peer, which heard
//! us but which a later run has followed; counters start at the sender's wall clock, so a later
//! run's are higher). Accepted, its sender becomes the peer, with a replay window that starts
//! at the highest counter seen from it, so none of its frames refused as stale can be accepted
//! later. The current peer's frames need no echo. A hello that echoes 0 (its sender has heard
//! no one yet, as at start) has no content to refuse: it is taken as a hello without making its
//! sender the peer.
//!
//! What a gateway echoes in its data frames' long form: the *candidate*, the sender of the
//! authentic long frame with the highest counter seen above the peer's counters, or without one
//! the peer. A later run of the peer becomes the candidate, and must hear it before it takes
//! our frames. The candidate may also be a replayed frame of an earlier run of *this* gateway,
//! which no receiver can tell from a peer's (its counter, from this gateway's clock, may stand
//! above those of a peer whose clock is behind, or that started earlier). So the candidate
//! never decides the peer (the peer's frames need no echo, so echoing a candidate costs the
//! peer nothing), and hellos that could echo either echo the peer and the candidate in turn. That a replay cannot wedge
//! the link follows: of two gateways A and B, at most one is fooled at a time, whatever their
//! clocks' offset s (B's clock minus A's). For A to be fooled, an earlier run of A must count
//! above B's current run: it started after B's current run, `a_old + 0 > b_cur + s`; for B,
//! `b_old + s > a_cur`. Both at once would give `b_old + s > a_cur > a_old > b_cur + s`, yet
//! `b_cur > b_old`. The gateway not fooled has the other's current run as its candidate (the
//! other's earlier runs count lower, on the same clock) and echoes it; the other takes it as its
//! peer (the hello echoes it) and echoes it back. The adversarial test (`tests/adversary.rs`:
//! random restarts, loss, reordering, replays of any datagram of either side to either side,
//! forgeries) measures the time to resume once restarts stop, and holds it below four hello
//! intervals.
//!
//! Liveness: a gateway owes its peer a hello ([`Session::open`], sent by [`Session::hello`] at
//! most one per [`HELLO_EVERY`] ns on average, and kept owed until it goes) whenever its echo or its
//! candidate changes, a frame is refused as stale, a short frame comes while it has no peer,
//! or a hello comes while it has no peer or has a candidate. A *hello* is a long frame with no
//! content and its own kind value ([`HELLO`], never passed to a codec): authenticated, counted
//! and replay-checked like any frame. A gateway sends one at start. So two gateways that start
//! together, or a restarted one and its peer, each accept the other about one round trip after
//! the later one starts, even if only one of them has traffic to send. The data path
//! ([`crate::endpoint`]) also holds a new run's first packets in the kernel (it does not read
//! its TUN device) until it has heard the peer or [`crate::endpoint::START_WAIT`] passed, so
//! that they do not go out before they can echo it, and restarts its codecs only when its peer
//! changes.
//!
//! ## What it does not protect
//!
//! No confidentiality (frames travel in the clear: run the link inside WireGuard or IPsec for
//! that), no hiding of traffic patterns, no defence against flooding the link (a flood of
//! stale frames or short frames at a receiver without a peer draws [`HELLO_BURST`] hellos, then
//! at most one per [`HELLO_EVERY`] ns, sent to the configured peer, not to the flood's source). The order of
//! runs rests on the wall clock: a peer restarted with its clock stepped back below its earlier
//! run's counters is not accepted until its counters pass them.

use std::fmt;
use std::ops::RangeInclusive;

use constant_time_eq::constant_time_eq;
use taroc_core::FrameKind;

use crate::counters::Rejection;

mod replay;
mod session;

pub use replay::{nearest_counter, ReplayWindow};
pub use session::Session;

/// The context string of the MAC key derivation: names the protocol and its version. A change
/// of the wire format must change it.
pub const KEY_CONTEXT: &str = "taroc gateway UDP link 2025-01 frame MAC v2";

/// Bytes of a key.
pub const KEY_LEN: usize = 32;

/// The tag length unless `--tag-len` says otherwise, bytes.
pub const DEFAULT_TAG_LEN: usize = 8;

/// The tag lengths allowed, bytes.
pub const TAG_LENS: RangeInclusive<usize> = 4..=16;

/// The top bit of the kind byte: the long form.
pub const LONG: u8 = 0x80;

/// Header bytes of the short form: kind, counter's low 16 bits.
pub const SHORT_HEADER: usize = 3;

/// Header bytes of the long form: kind, sender id, counter, echo.
pub const LONG_HEADER: usize = 25;

/// The kind value of a hello: a long frame with no content. 0x07 is the one byte below the long
/// form's bit that is no [`FrameKind`] (0x00..=0x06 are the named kinds, 0x08..=0x7F the
/// profiles' own, e.g. `taroc-plus`'s CO kind bytes up to 0x7F).
pub const HELLO: u8 = 0x07;

/// At most one hello per this long on average, ns, with bursts of [`HELLO_BURST`].
pub const HELLO_EVERY: u64 = 50_000_000;

/// Hellos that may go back to back (a start's hello, then the answer to the peer's): a token
/// bucket of this many, refilled one per [`HELLO_EVERY`].
pub const HELLO_BURST: u64 = 3;

/// The first this many frames after a start go in the long form.
pub const LONG_AT_START: u64 = 16;

/// Then every this many frames.
pub const LONG_EVERY: u64 = 64;

/// And any frame after this long without sending, ns.
pub const LONG_AFTER_IDLE: u64 = 200_000_000;

/// Counters below the highest accepted one that the replay window remembers.
pub const WINDOW: u64 = 1024;

/// A pre-shared key: 32 bytes, the same on both gateways. Its `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; KEY_LEN]);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// The key made of `bytes`.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Key {
        Key(bytes)
    }

    /// Reads a key written as 64 hexadecimal digits (surrounding whitespace, such as the final
    /// newline, is ignored). The error says what is wrong without showing the text.
    pub fn parse(text: &str) -> Result<Key, String> {
        let digits = text.trim();
        if digits.len() != 2 * KEY_LEN {
            return Err(format!(
                "expected {} hexadecimal digits (as `taroc gateway genkey` writes), found {} \
                 characters",
                2 * KEY_LEN,
                digits.chars().count()
            ));
        }
        let mut bytes = [0u8; KEY_LEN];
        for (i, pair) in digits.as_bytes().chunks(2).enumerate() {
            let digit = |b: u8| (b as char).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(hi), Some(lo)) => bytes[i] = (hi * 16 + lo) as u8,
                _ => {
                    return Err(format!(
                        "expected {} hexadecimal digits (as `taroc gateway genkey` writes), \
                         found a character that is not one at position {}",
                        2 * KEY_LEN,
                        2 * i + 1 + usize::from(digit(pair[0]).is_some())
                    ))
                }
            }
        }
        Ok(Key(bytes))
    }

    /// The key as 64 lowercase hexadecimal digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The MAC key derived from this key ([`KEY_CONTEXT`]).
    fn mac_key(&self) -> [u8; 32] {
        blake3::derive_key(KEY_CONTEXT, &self.0)
    }
}

/// The settings of an authenticated link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// The pre-shared key.
    pub key: Key,
    /// Tag bytes per frame, in [`TAG_LENS`].
    pub tag_len: usize,
}

impl AuthConfig {
    /// Checks the tag length.
    pub fn check(&self) -> Result<(), String> {
        if TAG_LENS.contains(&self.tag_len) {
            Ok(())
        } else {
            Err(format!(
                "tag length {} is outside {}..={} bytes",
                self.tag_len,
                TAG_LENS.start(),
                TAG_LENS.end()
            ))
        }
    }

    /// The most bytes framing adds to a frame (the long form's).
    pub fn max_overhead(&self) -> usize {
        LONG_HEADER + self.tag_len
    }
}

/// The tag of a frame: the first `tag_len` bytes of the returned array. `echo` is the long
/// form's (none in the short form).
fn tag(
    mac_key: &[u8; 32],
    tag_len: usize,
    id: u64,
    counter: u64,
    kind: u8,
    echo: Option<u64>,
    frame: &[u8],
) -> [u8; 16] {
    let mut head = [0u8; 26];
    head[0] = tag_len as u8;
    head[1..9].copy_from_slice(&id.to_be_bytes());
    head[9..17].copy_from_slice(&counter.to_be_bytes());
    head[17] = kind;
    let head_len = match echo {
        Some(echo) => {
            head[18..26].copy_from_slice(&echo.to_be_bytes());
            26
        }
        None => 18,
    };
    let mut hasher = blake3::Hasher::new_keyed(mac_key);
    hasher.update(&head[..head_len]);
    hasher.update(frame);
    let mut out = [0u8; 16];
    hasher.finalize_xof().fill(&mut out[..tag_len]);
    out
}

/// The sending end: frames to datagrams.
#[derive(Debug, Clone)]
pub struct Sealer {
    mac_key: [u8; 32],
    tag_len: usize,
    id: u64,
    counter: u64,
    sent: u64,
    last_sent: Option<u64>,
    echo: u64,
    echo_changed: bool,
    /// When the hello bucket is full again (the virtual time of the generic cell rate
    /// algorithm), ns.
    hello_full_at: u64,
}

impl Sealer {
    /// A sender with sender id `id` (random per start) whose first frame gets counter
    /// `first_counter` (the wall clock at start, in ns since the UNIX epoch). The settings must
    /// pass [`AuthConfig::check`].
    pub fn new(config: &AuthConfig, id: u64, first_counter: u64) -> Sealer {
        Sealer {
            mac_key: config.key.mac_key(),
            tag_len: config.tag_len,
            id,
            counter: first_counter,
            sent: 0,
            last_sent: None,
            echo: 0,
            echo_changed: false,
            hello_full_at: 0,
        }
    }

    /// This sender's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Sets the echo the long form carries ([`Opener::echo`]). Returns whether it changed;
    /// if so, the next frame goes in the long form.
    pub fn set_echo(&mut self, echo: u64) -> bool {
        if echo == self.echo {
            return false;
        }
        self.echo = echo;
        self.echo_changed = true;
        true
    }

    /// Writes `frame` of `kind`, sent at `now` (ns, any monotonic clock), as a datagram into
    /// `out`.
    pub fn seal(&mut self, now: u64, kind: FrameKind, frame: &[u8], out: &mut Vec<u8>) {
        let long = self.echo_changed
            || self.sent < LONG_AT_START
            || self.sent.is_multiple_of(LONG_EVERY)
            || self
                .last_sent
                .is_none_or(|last| now.saturating_sub(last) >= LONG_AFTER_IDLE);
        self.write(kind.to_byte(), long.then_some(self.echo), frame, out);
        if long {
            self.echo_changed = false;
        }
        self.sent += 1;
        self.last_sent = Some(now);
    }

    /// Writes a hello (a long frame of kind [`HELLO`] with no content) that echoes `echo`
    /// into `out`, unless [`HELLO_BURST`] hellos went in the last [`HELLO_EVERY`]s (more
    /// precisely, the token bucket is empty): then returns false and leaves `out` alone.
    pub fn hello(&mut self, now: u64, echo: u64, out: &mut Vec<u8>) -> bool {
        if now < self.next_hello_at() {
            return false;
        }
        self.hello_full_at = self.hello_full_at.max(now).saturating_add(HELLO_EVERY);
        self.write(HELLO, Some(echo), &[], out);
        true
    }

    /// The earliest time (ns) the next hello may go: when the bucket holds a token again.
    pub fn next_hello_at(&self) -> u64 {
        self.hello_full_at
            .saturating_sub((HELLO_BURST - 1) * HELLO_EVERY)
    }

    /// Writes a datagram with the next counter: the long form with `echo`, or the short form.
    /// Hellos leave the data frames' schedule of forms alone (a data frame after a pause stays
    /// long, and so does the first after the echo changed, even if a hello went out meanwhile).
    fn write(&mut self, kind: u8, echo: Option<u64>, frame: &[u8], out: &mut Vec<u8>) {
        let counter = self.counter;
        out.clear();
        if let Some(echo) = echo {
            out.push(kind | LONG);
            out.extend_from_slice(&self.id.to_be_bytes());
            out.extend_from_slice(&counter.to_be_bytes());
            out.extend_from_slice(&echo.to_be_bytes());
        } else {
            out.push(kind);
            out.extend_from_slice(&(counter as u16).to_be_bytes());
        }
        out.extend_from_slice(frame);
        let t = tag(
            &self.mac_key,
            self.tag_len,
            self.id,
            counter,
            out[0],
            echo,
            frame,
        );
        out.extend_from_slice(&t[..self.tag_len]);
        self.counter = counter.wrapping_add(1);
    }
}

/// What an authentic, fresh datagram of the peer carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened<'a> {
    /// A frame of this kind, for a codec.
    Frame(FrameKind, &'a [u8]),
    /// A hello: nothing for a codec.
    Hello,
}

#[derive(Debug, Clone)]
struct Peer {
    id: u64,
    window: ReplayWindow,
}

/// The receiving end: datagrams to frames, or refusals.
#[derive(Debug, Clone)]
pub struct Opener {
    mac_key: [u8; 32],
    tag_len: usize,
    own_id: u64,
    max_frame: usize,
    peer: Option<Peer>,
    /// The candidate: the sender id and counter of the authentic long frame with the highest
    /// counter seen from a sender that is not the peer, above the peer's highest counter.
    candidate: Option<(u64, u64)>,
}

impl Opener {
    /// A receiver that refuses frames longer than `max_frame` (the link MTU) and frames with
    /// sender id `own_id` (its own sender's). The settings must pass [`AuthConfig::check`].
    pub fn new(config: &AuthConfig, own_id: u64, max_frame: usize) -> Opener {
        Opener {
            mac_key: config.key.mac_key(),
            tag_len: config.tag_len,
            own_id,
            max_frame,
            peer: None,
            candidate: None,
        }
    }

    /// The sender id of the peer, once a long frame of it that echoes us was accepted.
    pub fn peer_id(&self) -> Option<u64> {
        self.peer.as_ref().map(|p| p.id)
    }

    /// The sender id of the candidate: the authentic long frame with the highest counter from
    /// a sender other than the peer, above every counter of the peer's.
    pub fn candidate_id(&self) -> Option<u64> {
        self.candidate.map(|(id, _)| id)
    }

    /// The echo our data frames carry: the candidate's sender id (news for a later run of the
    /// peer), or the peer's, 0 if neither.
    pub fn echo(&self) -> u64 {
        self.candidate_id().or(self.peer_id()).unwrap_or(0)
    }

    /// What a datagram carries, if it is an authentic, fresh frame or hello of the peer.
    pub fn open<'a>(&mut self, datagram: &'a [u8]) -> Result<Opened<'a>, Rejection> {
        let &first = datagram.first().ok_or(Rejection::Malformed)?;
        let long = first & LONG != 0;
        let kind = match first & !LONG {
            HELLO => None,
            byte => Some(FrameKind::from_byte(byte).ok_or(Rejection::Malformed)?),
        };
        let header = if long { LONG_HEADER } else { SHORT_HEADER };
        if datagram.len() < header + self.tag_len
            || (kind.is_none() && (!long || datagram.len() != header + self.tag_len))
        {
            return Err(Rejection::Malformed);
        }
        let (rest, received_tag) = datagram.split_at(datagram.len() - self.tag_len);
        let frame = &rest[header..];
        if frame.len() > self.max_frame {
            return Err(Rejection::Oversize);
        }
        let verifies = |id: u64, counter: u64, echo: Option<u64>| {
            let t = tag(&self.mac_key, self.tag_len, id, counter, first, echo, frame);
            constant_time_eq(&t[..self.tag_len], received_tag)
        };
        if long {
            let word = |at: usize| {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(&datagram[at..at + 8]);
                u64::from_be_bytes(bytes)
            };
            let (id, counter, echo) = (word(1), word(9), word(17));
            if !verifies(id, counter, Some(echo)) {
                return Err(Rejection::Forged);
            }
            if id == self.own_id {
                return Err(Rejection::Reflected);
            }
            self.fresh_long(id, counter, echo, kind.is_none())?;
        } else {
            let peer = self.peer.as_ref().ok_or(Rejection::Unsynced)?;
            let low = u16::from_be_bytes([datagram[1], datagram[2]]);
            let counter = nearest_counter(peer.window.highest(), low);
            if !verifies(peer.id, counter, None) {
                return Err(Rejection::Unsynced);
            }
            self.peer_accepts(counter)?;
        }
        Ok(match kind {
            Some(kind) => Opened::Frame(kind, frame),
            None => Opened::Hello,
        })
    }

    /// Counter `counter` of the peer, authentic: accepted if new ([`ReplayWindow`]); a
    /// candidate the peer's counters have passed is dropped.
    fn peer_accepts(&mut self, counter: u64) -> Result<(), Rejection> {
        let peer = self.peer.as_mut().ok_or(Rejection::Unsynced)?;
        if !peer.window.accept(counter) {
            return Err(Rejection::Replayed);
        }
        let highest = peer.window.highest();
        self.candidate = self.candidate.filter(|&(_, c)| c > highest);
        Ok(())
    }

    /// Freshness of an authentic long frame (or `hello`) of another sender than us: the peer's
    /// if new; otherwise learns the candidate, and accepts the frame's content only if it
    /// echoes us and its counter is above every counter of the peer's (a later run of the
    /// peer), making its sender the peer. A hello that echoes no one asks for our id and has no
    /// content to refuse: it is taken, and its sender does not become the peer.
    fn fresh_long(
        &mut self,
        id: u64,
        counter: u64,
        echo: u64,
        hello: bool,
    ) -> Result<(), Rejection> {
        if self.peer_id() == Some(id) {
            return self.peer_accepts(counter);
        }
        let floor = self.peer.as_ref().map(|p| p.window.highest());
        let above_peer = floor.is_none_or(|highest| counter > highest);
        if above_peer && self.candidate.is_none_or(|(_, c)| counter > c) {
            self.candidate = Some((id, counter));
        }
        if hello && echo == 0 {
            return Ok(());
        }
        if echo != self.own_id || echo == 0 {
            return Err(Rejection::Stale);
        }
        if !above_peer {
            // An earlier run of the peer: it heard us, but a later run has followed it.
            return Err(Rejection::Replayed);
        }
        // Frames of this run seen before (refused as stale) are not taken later.
        let first = match self.candidate {
            Some((candidate, highest)) if candidate == id => highest.max(counter),
            _ => counter,
        };
        self.peer = Some(Peer {
            id,
            window: ReplayWindow::new(first),
        });
        self.candidate = self
            .candidate
            .filter(|&(c, highest)| c != id && highest > first);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
