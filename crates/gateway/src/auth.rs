//! Authentication of the UDP link: every frame carries a message authentication code (MAC)
//! under a key both gateways share, a sender id and a counter, so a datagram that is not a
//! fresh frame of the peer never reaches a decompressor or a compressor's feedback input.
//!
//! No I/O here: the key, the sender id, the first counter and the time come in as values
//! (`crate::keyfile` reads and makes keys; [`crate::udp`] reads the clocks).
//!
//! ## Wire format
//!
//! ```text
//!  short form (the usual one)              long form (kind byte's top bit set)
//!  +------+---------+-------+-----+        +-------+-----------+---------+-------+-----+
//!  | kind | counter | frame | tag |        | kind  | sender id | counter | frame | tag |
//!  |      | low 16  |       |     |        | |0x80 | 64 bits   | 64 bits |       |     |
//!  +------+---------+-------+-----+        +-------+-----------+---------+-------+-----+
//!    1 B     2 B      ...    T B             1 B      8 B         8 B       ...   T B
//! ```
//!
//! - `kind`: the [`FrameKind`] byte (0..=6); its top bit (0x80) marks the long form. Numbers
//!   are big-endian.
//! - `tag`: the first T bytes (`--tag-len`, 4..=16, default 8; both ends must agree) of the
//!   BLAKE3 keyed hash, in extendable-output mode, of
//!   `T (1 byte) ‖ sender id (8) ‖ full counter (8) ‖ kind byte as sent (1) ‖ frame`.
//!   The MAC key is `blake3::derive_key(KEY_CONTEXT, file key)`: the 32 bytes of the key file
//!   are never used directly, and the context string names the protocol version.
//! - A short-form frame carries neither the sender id nor the counter's high bits: the receiver
//!   uses the sender id of the peer it knows and rebuilds the counter as the value with those
//!   16 low bits nearest its highest accepted counter; the tag then verifies only if both are
//!   right.
//!
//! ## Sending ([`Sealer`])
//!
//! The counter starts at the wall-clock time in nanoseconds since the UNIX epoch when the
//! gateway starts, and goes up by one per frame; the sender id is 64 random bits per start. So
//! a restarted gateway's counters are above everything it sent before, *assuming* the clock
//! does not step back across the restart and the gateway sent fewer than 10^9 frames per
//! second on average. The long form goes with the first [`LONG_AT_START`] frames, every
//! [`LONG_EVERY`]th frame, and any frame after [`LONG_AFTER_IDLE`] ns without sending; the
//! short form otherwise.
//!
//! ## Receiving ([`Opener`])
//!
//! In this order: malformed (too short for its form, or no frame kind), oversize (the frame is
//! longer than the link MTU), then the tag, then freshness. A long frame whose tag fails is
//! [`Rejection::Forged`]; a short one is [`Rejection::Unsynced`] (forged, or from a peer we have
//! no long frame of yet: we cannot tell which). An authentic frame with our own sender id is
//! [`Rejection::Reflected`]. Freshness: the highest accepted counter and a bitmap of the
//! [`WINDOW`] counters below it, as IPsec and WireGuard keep; a counter seen already or older
//! than the window is [`Rejection::Replayed`]. A long frame from a new sender id (the peer
//! restarted) is accepted only if its counter is above the highest accepted, so an old long
//! frame replayed later cannot roll the state back; it then becomes the peer.
//!
//! Hence: a restarted *sender* is accepted at once (new id, counter above the old ones); a
//! restarted *receiver* (no peer, no highest counter) resynchronises at the first long frame,
//! within [`LONG_EVERY`] frames or at the first frame after a pause.
//!
//! ## What it does not protect
//!
//! No confidentiality (frames travel in the clear: run the link inside WireGuard or IPsec for
//! that), no hiding of traffic patterns, no defence against flooding the link. A receiver keeps
//! no state across restarts: until the current peer's next long frame, a restarted receiver
//! accepts a replayed long frame of an *earlier* run of the peer and that run's later frames,
//! each once.

use std::fmt;
use std::ops::RangeInclusive;

use constant_time_eq::constant_time_eq;
use taroc_core::FrameKind;

use crate::counters::Rejection;

mod replay;

pub use replay::{nearest_counter, ReplayWindow};

/// The context string of the MAC key derivation: names the protocol and its version. A change
/// of the wire format must change it.
pub const KEY_CONTEXT: &str = "taroc gateway UDP link 2025-01 frame MAC v1";

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

/// Header bytes of the long form: kind, sender id, counter.
pub const LONG_HEADER: usize = 17;

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

/// The tag of a frame: the first `tag_len` bytes of the returned array.
fn tag(
    mac_key: &[u8; 32],
    tag_len: usize,
    id: u64,
    counter: u64,
    kind: u8,
    frame: &[u8],
) -> [u8; 16] {
    let mut head = [0u8; 18];
    head[0] = tag_len as u8;
    head[1..9].copy_from_slice(&id.to_be_bytes());
    head[9..17].copy_from_slice(&counter.to_be_bytes());
    head[17] = kind;
    let mut hasher = blake3::Hasher::new_keyed(mac_key);
    hasher.update(&head);
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
        }
    }

    /// This sender's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Writes `frame` of `kind`, sent at `now` (ns, any monotonic clock), as a datagram into
    /// `out`.
    pub fn seal(&mut self, now: u64, kind: FrameKind, frame: &[u8], out: &mut Vec<u8>) {
        let long = self.sent < LONG_AT_START
            || self.sent.is_multiple_of(LONG_EVERY)
            || self
                .last_sent
                .is_none_or(|last| now.saturating_sub(last) >= LONG_AFTER_IDLE);
        let counter = self.counter;
        out.clear();
        if long {
            out.push(kind.to_byte() | LONG);
            out.extend_from_slice(&self.id.to_be_bytes());
            out.extend_from_slice(&counter.to_be_bytes());
        } else {
            out.push(kind.to_byte());
            out.extend_from_slice(&(counter as u16).to_be_bytes());
        }
        out.extend_from_slice(frame);
        let t = tag(&self.mac_key, self.tag_len, self.id, counter, out[0], frame);
        out.extend_from_slice(&t[..self.tag_len]);
        self.counter = counter.wrapping_add(1);
        self.sent += 1;
        self.last_sent = Some(now);
    }
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
        }
    }

    /// The sender id of the peer, once a long frame of it was accepted.
    pub fn peer_id(&self) -> Option<u64> {
        self.peer.as_ref().map(|p| p.id)
    }

    /// The frame a datagram carries, if it is an authentic, fresh frame of the peer.
    pub fn open<'a>(&mut self, datagram: &'a [u8]) -> Result<(FrameKind, &'a [u8]), Rejection> {
        let &first = datagram.first().ok_or(Rejection::Malformed)?;
        let kind = FrameKind::from_byte(first & !LONG).ok_or(Rejection::Malformed)?;
        let long = first & LONG != 0;
        let header = if long { LONG_HEADER } else { SHORT_HEADER };
        if datagram.len() < header + self.tag_len {
            return Err(Rejection::Malformed);
        }
        let (rest, received_tag) = datagram.split_at(datagram.len() - self.tag_len);
        let frame = &rest[header..];
        if frame.len() > self.max_frame {
            return Err(Rejection::Oversize);
        }
        let verifies = |id: u64, counter: u64| {
            let t = tag(&self.mac_key, self.tag_len, id, counter, first, frame);
            constant_time_eq(&t[..self.tag_len], received_tag)
        };
        if long {
            let word = |at: usize| {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(&datagram[at..at + 8]);
                u64::from_be_bytes(bytes)
            };
            let (id, counter) = (word(1), word(9));
            if !verifies(id, counter) {
                return Err(Rejection::Forged);
            }
            if id == self.own_id {
                return Err(Rejection::Reflected);
            }
            match &mut self.peer {
                Some(peer) if peer.id == id => {
                    if !peer.window.accept(counter) {
                        return Err(Rejection::Replayed);
                    }
                }
                Some(peer) if counter <= peer.window.highest() => {
                    return Err(Rejection::Replayed);
                }
                _ => {
                    self.peer = Some(Peer {
                        id,
                        window: ReplayWindow::new(counter),
                    })
                }
            }
        } else {
            let peer = self.peer.as_ref().ok_or(Rejection::Unsynced)?;
            let low = u16::from_be_bytes([datagram[1], datagram[2]]);
            let counter = nearest_counter(peer.window.highest(), low);
            if !verifies(peer.id, counter) {
                return Err(Rejection::Unsynced);
            }
            let window = &mut self.peer.as_mut().ok_or(Rejection::Unsynced)?.window;
            if !window.accept(counter) {
                return Err(Rejection::Replayed);
            }
        }
        Ok((kind, frame))
    }
}

#[cfg(test)]
mod tests;
