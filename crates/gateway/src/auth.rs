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

/// The highest accepted counter and which of the [`WINDOW`] counters below it were seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayWindow {
    highest: u64,
    seen: [u64; (WINDOW / 64) as usize],
}

impl ReplayWindow {
    /// A window whose only accepted counter is `first`.
    pub fn new(first: u64) -> ReplayWindow {
        let mut window = ReplayWindow {
            highest: first,
            seen: [0; (WINDOW / 64) as usize],
        };
        window.set(first);
        window
    }

    /// The highest accepted counter.
    pub fn highest(&self) -> u64 {
        self.highest
    }

    fn bit(counter: u64) -> (usize, u64) {
        let i = counter % WINDOW;
        ((i / 64) as usize, 1 << (i % 64))
    }

    fn set(&mut self, counter: u64) {
        let (word, mask) = ReplayWindow::bit(counter);
        self.seen[word] |= mask;
    }

    /// Accepts `counter` if it is new: above the highest, or within the window and not seen.
    pub fn accept(&mut self, counter: u64) -> bool {
        if counter > self.highest {
            let ahead = counter - self.highest;
            if ahead >= WINDOW {
                self.seen = [0; (WINDOW / 64) as usize];
            } else {
                for c in self.highest + 1..=counter {
                    let (word, mask) = ReplayWindow::bit(c);
                    self.seen[word] &= !mask;
                }
            }
            self.highest = counter;
            self.set(counter);
            return true;
        }
        if self.highest - counter >= WINDOW {
            return false;
        }
        let (word, mask) = ReplayWindow::bit(counter);
        if self.seen[word] & mask != 0 {
            return false;
        }
        self.seen[word] |= mask;
        true
    }
}

/// The value with low 16 bits `low` nearest `reference`.
pub fn nearest_counter(reference: u64, low: u16) -> u64 {
    let candidate = (reference & !0xffff) | u64::from(low);
    let ahead = candidate.wrapping_sub(reference) as i64;
    if ahead > 0x8000 {
        candidate.wrapping_sub(0x1_0000)
    } else if ahead < -0x8000 {
        candidate.wrapping_add(0x1_0000)
    } else {
        candidate
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
mod tests {
    use super::*;

    const START: u64 = 1_700_000_000_000_000_000;
    const MS: u64 = 1_000_000;

    fn config(tag_len: usize) -> AuthConfig {
        AuthConfig {
            key: Key::from_bytes([7; KEY_LEN]),
            tag_len,
        }
    }

    /// A sender (id 1) and a receiver (id 2) sharing a key, with frames of up to 1500 bytes.
    fn pair(tag_len: usize) -> (Sealer, Opener) {
        let c = config(tag_len);
        (Sealer::new(&c, 1, START), Opener::new(&c, 2, 1500))
    }

    /// Seals frame `i` at `now` (a distinct frame per `i`).
    fn seal(sealer: &mut Sealer, now: u64, i: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let frame = vec![i as u8; 20 + i % 50];
        sealer.seal(now, FrameKind::CompressedTcp, &frame, &mut out);
        out
    }

    fn opens(opener: &mut Opener, datagram: &[u8]) -> Result<usize, Rejection> {
        opener.open(datagram).map(|(_, frame)| frame.len())
    }

    #[test]
    fn round_trip_every_kind_and_tag_length_and_the_forms_as_scheduled() {
        for tag_len in TAG_LENS {
            let (mut sealer, mut opener) = pair(tag_len);
            let mut longs = Vec::new();
            for (i, kind) in FrameKind::ALL.iter().cycle().take(300).enumerate() {
                // 1 ms apart, with one pause of 250 ms before frame 200.
                let now = i as u64 * MS + if i >= 200 { 250 * MS } else { 0 };
                let frame: Vec<u8> = (0..i % 40).map(|b| b as u8).collect();
                let mut out = Vec::new();
                sealer.seal(now, *kind, &frame, &mut out);
                let long = out[0] & LONG != 0;
                let header = if long { LONG_HEADER } else { SHORT_HEADER };
                assert_eq!(out.len(), header + frame.len() + tag_len);
                if long {
                    longs.push(i);
                }
                assert_eq!(opener.open(&out), Ok((*kind, &frame[..])), "frame {i}");
            }
            let expected: Vec<usize> = (0..16).chain([64, 128, 192, 200, 256]).collect();
            assert_eq!(longs, expected);
            assert_eq!(opener.peer_id(), Some(1));
        }
    }

    #[test]
    fn a_flipped_bit_anywhere_is_refused_and_changes_nothing() {
        let (mut sealer, mut opener) = pair(8);
        let datagrams: Vec<Vec<u8>> = (0..20)
            .map(|i| seal(&mut sealer, i * MS, i as usize))
            .collect();
        assert!(opens(&mut opener, &datagrams[0]).is_ok());
        // Frame 1 is long (one of the first 16), frame 17 short.
        assert_eq!((datagrams[1][0] & LONG, datagrams[17][0] & LONG), (LONG, 0));
        for d in [&datagrams[1], &datagrams[17]] {
            for byte in 0..d.len() {
                for bit in 0..8 {
                    let mut forged = d.clone();
                    forged[byte] ^= 1 << bit;
                    let r = opens(&mut opener, &forged);
                    assert!(
                        matches!(
                            r,
                            Err(Rejection::Forged | Rejection::Unsynced | Rejection::Malformed)
                        ),
                        "byte {byte} bit {bit}: {r:?}"
                    );
                }
            }
        }
        // The genuine frames still open: nothing forged moved the window.
        for d in &datagrams[1..] {
            assert!(opens(&mut opener, d).is_ok());
        }
    }

    #[test]
    fn forged_tags_and_a_wrong_key_are_refused() {
        let (mut sealer, mut opener) = pair(8);
        let long = seal(&mut sealer, 0, 0);
        let mut other = Sealer::new(
            &AuthConfig {
                key: Key::from_bytes([8; KEY_LEN]),
                tag_len: 8,
            },
            1,
            START,
        );
        assert_eq!(
            opens(&mut opener, &seal(&mut other, 0, 0)),
            Err(Rejection::Forged)
        );
        let mut zero_tag = long.clone();
        let n = zero_tag.len();
        zero_tag[n - 8..].fill(0);
        assert_eq!(opens(&mut opener, &zero_tag), Err(Rejection::Forged));
        assert!(opens(&mut opener, &long).is_ok());
        // A tag of another length does not verify either.
        let (mut sealer16, _) = pair(16);
        let mut d = seal(&mut sealer16, 0, 3);
        d.truncate(d.len() - 8);
        assert_eq!(opens(&mut opener, &d), Err(Rejection::Forged));
    }

    #[test]
    fn truncated_malformed_and_oversize_datagrams_are_refused() {
        let (mut sealer, mut opener) = pair(8);
        let long = seal(&mut sealer, 0, 0);
        for len in 0..LONG_HEADER + 8 {
            assert_eq!(opens(&mut opener, &long[..len]), Err(Rejection::Malformed));
        }
        // A shorter frame whose tag is cut: the tag does not verify.
        assert_eq!(
            opens(&mut opener, &long[..long.len() - 1]),
            Err(Rejection::Forged)
        );
        for kind in (7..=0x7f).filter(|&b| FrameKind::from_byte(b).is_none()) {
            assert_eq!(opens(&mut opener, &[kind; 40]), Err(Rejection::Malformed));
            assert_eq!(
                opens(&mut opener, &[kind | LONG; 40]),
                Err(Rejection::Malformed)
            );
        }
        let mut big = Vec::new();
        sealer.seal(MS, FrameKind::Ip, &[0; 1501], &mut big);
        assert_eq!(opens(&mut opener, &big), Err(Rejection::Oversize));
        sealer.seal(2 * MS, FrameKind::Ip, &[0; 1500], &mut big);
        assert_eq!(opens(&mut opener, &big), Ok(1500));
    }

    #[test]
    fn replays_are_refused_within_and_beyond_the_window() {
        let (mut sealer, mut opener) = pair(8);
        let datagrams: Vec<Vec<u8>> = (0..3000)
            .map(|i| seal(&mut sealer, i as u64 * MS, i))
            .collect();
        // Every other frame first, then the rest out of order (within the window): all accepted.
        for d in datagrams.iter().step_by(2) {
            assert!(opens(&mut opener, d).is_ok());
        }
        for d in datagrams.iter().skip(2001).step_by(2) {
            assert!(opens(&mut opener, d).is_ok());
        }
        // Seen already, or older than the window (highest: frame 2999), short or long; the
        // unseen ones within the window are still accepted, once.
        for (i, d) in datagrams.iter().enumerate() {
            let r = opens(&mut opener, d);
            if i % 2 == 1 && i <= 2000 && 2999 - i < WINDOW as usize {
                assert!(r.is_ok(), "frame {i}: {r:?}");
                assert_eq!(opens(&mut opener, d), Err(Rejection::Replayed));
            } else {
                assert_eq!(r, Err(Rejection::Replayed), "frame {i}");
            }
        }
    }

    #[test]
    fn reflected_frames_are_refused() {
        let c = config(8);
        let mut ours = Sealer::new(&c, 2, START + 5);
        let mut opener = Opener::new(&c, ours.id(), 1500);
        let own = seal(&mut ours, 0, 0);
        assert_eq!(opens(&mut opener, &own), Err(Rejection::Reflected));
        assert_eq!(opener.peer_id(), None);
    }

    #[test]
    fn an_old_long_frame_after_a_sender_restart_is_refused() {
        let c = config(8);
        let mut before = Sealer::new(&c, 10, START);
        let mut opener = Opener::new(&c, 2, 1500);
        let old: Vec<Vec<u8>> = (0..100)
            .map(|i| seal(&mut before, i * MS, i as usize))
            .collect();
        for d in &old {
            assert!(opens(&mut opener, d).is_ok());
        }
        // The sender restarts one second later: a new id, a counter above the old ones; its
        // very first frame is accepted.
        let mut after = Sealer::new(&c, 11, START + 1_000_000_000);
        assert!(opens(&mut opener, &seal(&mut after, 0, 0)).is_ok());
        assert_eq!(opener.peer_id(), Some(11));
        // Old long frames replayed now cannot take the state back; old short ones fail.
        for d in &old {
            let r = opens(&mut opener, d);
            if d[0] & LONG != 0 {
                assert_eq!(r, Err(Rejection::Replayed));
            } else {
                assert_eq!(r, Err(Rejection::Unsynced));
            }
        }
        assert_eq!(opener.peer_id(), Some(11));
        for i in 1..200 {
            assert!(opens(&mut opener, &seal(&mut after, i * MS, i as usize)).is_ok());
        }
    }

    #[test]
    fn a_restarted_receiver_resynchronises_within_64_frames_or_after_a_pause() {
        let (mut sealer, _) = pair(8);
        for i in 0..1000 {
            seal(&mut sealer, i * MS, i as usize);
        }
        // A new receiver, frames sent 1 ms apart: short ones are unsynced until the next long.
        let mut opener = Opener::new(&config(8), 2, 1500);
        let mut first_accepted = None;
        for i in 1000..1100u64 {
            let d = seal(&mut sealer, i * MS, i as usize);
            match opens(&mut opener, &d) {
                Ok(_) => {
                    first_accepted.get_or_insert(i);
                }
                Err(r) => {
                    assert_eq!(r, Rejection::Unsynced);
                    assert!(first_accepted.is_none(), "frame {i} refused after sync");
                }
            }
        }
        assert_eq!(first_accepted, Some(1024), "the 64th frame is long");
        // After a pause the next frame is long, whatever its number.
        let mut opener = Opener::new(&config(8), 2, 1500);
        let d = seal(&mut sealer, 2000 * MS, 7);
        assert_eq!(d[0] & LONG, LONG);
        assert!(opens(&mut opener, &d).is_ok());
    }

    #[test]
    fn short_counters_are_rebuilt_across_the_16_bit_wrap() {
        assert_eq!(nearest_counter(0x1_fff0, 0x0005), 0x2_0005);
        assert_eq!(nearest_counter(0x2_0005, 0xfff0), 0x1_fff0);
        assert_eq!(nearest_counter(0x2_0005, 0x0004), 0x2_0004);
        assert_eq!(nearest_counter(0x5_0000, 0x8000), 0x5_8000);
        assert_eq!(nearest_counter(0x5_0000, 0x8001), 0x4_8001);
        assert_eq!(nearest_counter(0, 0xffff), u64::MAX);
        // Through a sealer whose counter starts just below a multiple of 2^16, losing frames.
        let c = config(8);
        let mut sealer = Sealer::new(&c, 1, 0xabcd_0000_ffc0);
        let mut opener = Opener::new(&c, 2, 1500);
        for i in 0..500u64 {
            let d = seal(&mut sealer, i * MS, i as usize);
            if i % 7 != 3 {
                assert!(opens(&mut opener, &d).is_ok(), "frame {i}");
            }
        }
    }

    /// The tag by the module doc's formula, with BLAKE3's streaming XOF interface.
    fn documented_tag(tag_len: usize, id: u64, counter: u64, kind: u8, frame: &[u8]) -> Vec<u8> {
        let mac_key = blake3::derive_key(KEY_CONTEXT, &[7; KEY_LEN]);
        let mut hasher = blake3::Hasher::new_keyed(&mac_key);
        hasher.update(&[tag_len as u8]);
        hasher.update(&id.to_be_bytes());
        hasher.update(&counter.to_be_bytes());
        hasher.update(&[kind]);
        hasher.update(frame);
        let mut tag = vec![0; tag_len];
        hasher.finalize_xof().fill(&mut tag);
        tag
    }

    #[test]
    fn tags_follow_the_documented_formula_in_both_forms_at_every_length() {
        // Frame lengths around BLAKE3's 64-byte blocks and 1024-byte chunks (with the 18 bytes
        // hashed before the frame).
        for len in [
            0, 1, 45, 46, 47, 110, 1005, 1006, 1007, 1500, 2030, 2031, 4000,
        ] {
            let frame: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
            for tag_len in [4, 8, 13, 16] {
                let mut sealer = Sealer::new(&config(tag_len), 0x0102_0304_0506_0708, START);
                let mut opener = Opener::new(&config(tag_len), 2, 4000);
                let mut out = Vec::new();
                for i in 0..=LONG_AT_START {
                    sealer.seal(i * MS, FrameKind::Ip, &frame, &mut out);
                    let form = (out[0] & LONG, out.len() - len - tag_len);
                    let expected = if i < LONG_AT_START {
                        (LONG, LONG_HEADER)
                    } else {
                        (0, SHORT_HEADER)
                    };
                    assert_eq!(form, expected, "frame {i}");
                    let tag =
                        documented_tag(tag_len, 0x0102_0304_0506_0708, START + i, out[0], &frame);
                    assert_eq!(
                        &out[out.len() - tag_len..],
                        &tag[..],
                        "len {len} tag {tag_len}"
                    );
                    assert_eq!(opens(&mut opener, &out), Ok(len));
                }
            }
        }
    }

    #[test]
    fn a_datagram_is_byte_for_byte_what_the_first_version_sent() {
        // Sealed by the implementation this format shipped with: a change here is a change of
        // the wire format, which must change KEY_CONTEXT.
        let mut sealer = Sealer::new(&config(8), 0x0102_0304_0506_0708, START);
        let mut out = Vec::new();
        sealer.seal(0, FrameKind::CompressedTcp, b"taroc", &mut out);
        let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "82010203040506070817979cfe362a00007461726f6345946b6bd3880610"
        );
    }

    #[test]
    fn keys_parse_from_hex_and_errors_do_not_show_the_key() {
        let key = Key::from_bytes(core::array::from_fn(|i| i as u8 * 7));
        let text = format!("{}\n", key.to_hex());
        assert_eq!(text.len(), 65);
        assert_eq!(Key::parse(&text), Ok(key.clone()));
        assert_eq!(Key::parse(&text.to_uppercase()), Ok(key.clone()));
        assert_eq!(format!("{key:?}"), "Key(..)");
        let e = Key::parse("abc").unwrap_err();
        assert!(e.contains("found 3 characters"), "{e}");
        let mut bad = key.to_hex();
        bad.replace_range(10..11, "g");
        let e = Key::parse(&bad).unwrap_err();
        assert!(e.contains("position 11") && !e.contains(&bad), "{e}");
        assert!(Key::parse(&format!("{}0", key.to_hex())).is_err());
        assert!(config(3).check().is_err() && config(17).check().is_err());
        assert!(config(4).check().is_ok() && config(16).check().is_ok());
        assert_eq!(config(8).max_overhead(), 25);
    }
}
