//! Authentication of the UDP link: every frame carries a message authentication code (MAC)
//! under a key both gateways share, a sender id and a counter, so a datagram that is not a
//! fresh frame of the peer never reaches a decompressor or a compressor's feedback input.
//!
//! No I/O here: the key, the sender id, the first counter and the time come in as values
//! (`crate::keyfile` reads and makes keys; [`crate::udp`] reads the clocks and sends hellos).
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
//! - `echo`: the sender id of the peer run whose long frame this gateway last took as the
//!   freshest ([`Opener::echo`]), 0 if none yet.
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
//! it whether a long frame was made before or after it started. The echo can. The *echo
//! candidate* is the sender id of the authentic long frame with the highest counter seen from
//! anyone (counters start at the wall clock, so a later run's are higher): every authentic
//! long frame above that counter makes its sender the candidate, even when its content is then
//! refused, and an old frame replayed (a lower counter) cannot displace it. The content of a
//! long frame of a sender that is not the current peer is accepted only if the frame echoes
//! our own sender id, which no frame made before our start can (ids are random per start):
//! otherwise it is [`Rejection::Stale`]; if it echoes us but its sender is not the candidate
//! (an earlier run of the peer, whose frames a later run has followed), it is
//! [`Rejection::Replayed`]. Accepted, its sender becomes the peer, with a replay window that
//! starts at the highest counter seen from it, so none of its frames refused as stale can be
//! accepted later. The current peer's frames need no echo. A hello that echoes 0 (its sender
//! has heard no one yet, as at start) has no content to refuse: it is taken as a hello (the
//! candidate learned from it like from any long frame) without making its sender the peer.
//!
//! Liveness: a gateway learns the candidate from any authentic long frame, and its next frame
//! after the candidate changed is long, so it echoes the news. A *hello* ([`Sealer::hello`])
//! is a long frame with no content and its own kind value ([`HELLO`], never passed to a
//! codec): authenticated, counted and replay-checked like any frame. A gateway sends one at
//! start, and ([`Session::open`]) whenever the candidate changes, whenever a frame is refused
//! as stale, on a short frame while it has no peer, and on a hello while the candidate is not
//! its peer, at most one per [`HELLO_EVERY`] ns.
//! So two gateways that start together, or a restarted one and its peer, each accept the
//! other about one round trip after the later one starts, even if only one of them has
//! traffic to send. The data path ([`crate::udp`]) also holds a new run's first packets in the
//! kernel (it does not read its TUN device) until it has heard the peer or
//! [`crate::udp::START_WAIT`] passed, so that they do not go out before they can echo it.
//!
//! ## What it does not protect
//!
//! No confidentiality (frames travel in the clear: run the link inside WireGuard or IPsec for
//! that), no hiding of traffic patterns, no defence against flooding the link (a flood of
//! stale frames or short frames at a receiver without a peer draws at most one hello per
//! [`HELLO_EVERY`] ns, sent to the configured peer, not to the flood's source). The order of
//! runs rests on the wall clock: a peer restarted with its clock stepped back below its earlier
//! run's counters is not accepted until its counters pass them.

use std::fmt;
use std::ops::RangeInclusive;

use constant_time_eq::constant_time_eq;
use taroc_core::FrameKind;

use crate::counters::Rejection;

mod replay;

pub use replay::{nearest_counter, ReplayWindow};

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

/// At most one hello per this long, ns.
pub const HELLO_EVERY: u64 = 50_000_000;

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
    last_hello: Option<u64>,
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
            last_hello: None,
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
        self.write(kind.to_byte(), long, frame, out);
        if long {
            self.echo_changed = false;
        }
        self.sent += 1;
        self.last_sent = Some(now);
    }

    /// Writes a hello (a long frame of kind [`HELLO`] with no content) into `out`, unless one
    /// was written less than [`HELLO_EVERY`] ns before `now`: then returns false and leaves
    /// `out` alone.
    pub fn hello(&mut self, now: u64, out: &mut Vec<u8>) -> bool {
        if self
            .last_hello
            .is_some_and(|last| now.saturating_sub(last) < HELLO_EVERY)
        {
            return false;
        }
        self.last_hello = Some(now);
        self.write(HELLO, true, &[], out);
        true
    }

    /// Writes a datagram with the next counter. Hellos leave the data frames' schedule of
    /// forms alone (a data frame after a pause stays long, and so does the first after the
    /// echo changed, even if a hello went out meanwhile).
    fn write(&mut self, kind: u8, long: bool, frame: &[u8], out: &mut Vec<u8>) {
        let counter = self.counter;
        out.clear();
        let echo = if long {
            out.push(kind | LONG);
            out.extend_from_slice(&self.id.to_be_bytes());
            out.extend_from_slice(&counter.to_be_bytes());
            out.extend_from_slice(&self.echo.to_be_bytes());
            Some(self.echo)
        } else {
            out.push(kind);
            out.extend_from_slice(&(counter as u16).to_be_bytes());
            None
        };
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
    /// The echo candidate: the sender id and counter of the authentic long frame with the
    /// highest counter seen.
    freshest: Option<(u64, u64)>,
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
            freshest: None,
        }
    }

    /// The sender id of the peer, once a long frame of it was accepted.
    pub fn peer_id(&self) -> Option<u64> {
        self.peer.as_ref().map(|p| p.id)
    }

    /// The echo our long frames carry: the sender id of the authentic long frame with the
    /// highest counter seen (its content accepted or not), 0 if none yet.
    pub fn echo(&self) -> u64 {
        self.freshest.map_or(0, |(id, _)| id)
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
            let window = &mut self.peer.as_mut().ok_or(Rejection::Unsynced)?.window;
            if !window.accept(counter) {
                return Err(Rejection::Replayed);
            }
        }
        Ok(match kind {
            Some(kind) => Opened::Frame(kind, frame),
            None => Opened::Hello,
        })
    }

    /// Freshness of an authentic long frame (or `hello`) of another sender than us: learns the
    /// echo candidate, then accepts the frame's content if it is the peer's and new, or if it
    /// echoes us and comes from the candidate (which then becomes the peer). A hello that
    /// echoes no one asks for our id and has no content to refuse: it is taken, and its sender
    /// does not become the peer.
    fn fresh_long(
        &mut self,
        id: u64,
        counter: u64,
        echo: u64,
        hello: bool,
    ) -> Result<(), Rejection> {
        if self.freshest.is_none_or(|(_, highest)| counter > highest) {
            self.freshest = Some((id, counter));
        }
        if let Some(peer) = self.peer.as_mut().filter(|peer| peer.id == id) {
            return if peer.window.accept(counter) {
                Ok(())
            } else {
                Err(Rejection::Replayed)
            };
        }
        if hello && echo == 0 {
            return Ok(());
        }
        if echo != self.own_id || echo == 0 {
            return Err(Rejection::Stale);
        }
        match self.freshest {
            Some((candidate, highest)) if candidate == id => {
                self.peer = Some(Peer {
                    id,
                    window: ReplayWindow::new(highest),
                });
                Ok(())
            }
            _ => Err(Rejection::Replayed),
        }
    }
}

/// One gateway's end of the link: its [`Sealer`] and [`Opener`], and when to send a hello.
#[derive(Debug, Clone)]
pub struct Session {
    /// The sending end.
    pub sealer: Sealer,
    /// The receiving end.
    pub opener: Opener,
}

impl Session {
    /// The end of a gateway with sender id `id` (random per start) whose first frame gets
    /// counter `first_counter`, refusing frames longer than `max_frame`.
    pub fn new(config: &AuthConfig, id: u64, first_counter: u64, max_frame: usize) -> Session {
        Session {
            sealer: Sealer::new(config, id, first_counter),
            opener: Opener::new(config, id, max_frame),
        }
    }

    /// Opens `datagram` ([`Opener::open`]), passes the echo on to the sealer, and says whether
    /// to send the peer a hello ([`Sealer::hello`]): when the echo changed (it tells the peer we
    /// heard its new run), when the datagram was refused as stale (the peer, or a later run of
    /// it, has not heard from this run of ours), when a short frame came while we have no
    /// peer (we restarted, and the peer's next long frame may be far), or when a hello came
    /// while the freshest sender we heard is not yet our peer (it may not have heard us).
    pub fn open<'a>(&mut self, datagram: &'a [u8]) -> (Result<Opened<'a>, Rejection>, bool) {
        let opened = self.opener.open(datagram);
        let changed = self.sealer.set_echo(self.opener.echo());
        let unheard = self.opener.peer_id() != Some(self.opener.echo());
        let hello = changed
            || opened == Err(Rejection::Stale)
            || (opened == Err(Rejection::Unsynced) && self.opener.peer_id().is_none())
            || (opened == Ok(Opened::Hello) && unheard);
        (opened, hello)
    }
}

#[cfg(test)]
mod tests;
