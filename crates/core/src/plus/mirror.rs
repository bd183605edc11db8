//! Mirrors (section 3.3): what the two codecs at one end of a link tell each other of their
//! flows, so that a new flow's IR frames can name the opposite direction's flow (its *mirror*)
//! instead of sending the addresses and ports.
//!
//! The compressor of one direction and the decompressor of the other sit at the same end; they
//! are *siblings*. Each tells the other, by a sibling note that never crosses the link, which
//! flow each of its CIDs holds: the compressor as it sets a context up (the far decompressor
//! holds it once its IR frame arrives), the decompressor once a context's IR frame verified.
//! A compressor whose new flow is the reverse of a flow its sibling decompressor verified names
//! that flow; the far decompressor finds it among the flows of its own sibling compressor,
//! which sent it.
//!
//! Handshake segments (SYN, SYN-ACK, RST: IR-S frames and compact SYNs) set up no context, yet
//! the flow's data follows them at once, often the other way (a SYN-ACK, then the client's
//! data). So each codec also tells its sibling of the handshake segments it sent or delivered.
//!
//! A frame names its mirror by the 16-bit hash of the mirror's flow ([`flow_hash`]), not by a
//! CID: the far end resolves it among the last [`RECENT`] flows its sibling told of (contexts
//! set up, handshake segments), then among the flows its sibling holds now. A CID would go
//! stale: over a link that stalls, the far end's compressor may have given the CID to another
//! flow before this end's decompressor heard of it, and the mirror's frames were refused.
//!
//! ```text
//! note:  | 0 | CID | flow |    the CID holds that flow
//!        | 0 | CID |           the CID holds no flow
//!        | 1 | flow |          a handshake segment of that flow went (or was delivered)
//!        | 2 | hash (2) | numbers |   a packet of a young flow went (or was delivered):
//!                              its numbers ([`Numbers`], section 3.4)
//! flow:  | version (4 or 6) | source address | destination address | source port |
//!        | destination port |
//! ```

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;
use core::net::IpAddr;

use super::numbers::Numbers;
use crate::tcp::context::ALL_CIDS;
use crate::tcp::packet::FlowKey;

/// The flows a codec remembers of those its sibling told of (contexts set up, handshake
/// segments), besides those it holds now.
pub const RECENT: usize = 32;

/// The type octet of a note about a CID.
const CONTEXT_NOTE: u8 = 0;
/// The type octet of a note about a handshake segment.
const HANDSHAKE_NOTE: u8 = 1;
/// The type octet of a note of a packet's numbers.
const NUMBERS_NOTE: u8 = 2;

/// Note type: the far end delivered a packet of the sibling compressor's flow, named by the
/// flow's hash and the packet's TCP checksum field (a mirrored frame coded its numbers against
/// it).
const REFERENCED_NOTE: u8 = 3;

/// Note type: the sibling decompressor sees the link lose frames ([`Note::Lossy`]).
const LOSSY_NOTE: u8 = 4;

/// Note type: the sibling decompressor lost a reference to a burst ([`Note::Bursty`]).
const BURSTY_NOTE: u8 = 5;

/// The packets' numbers a codec remembers of those its sibling told of (a ring): a mirrored IR
/// with numbers names its reference among them.
pub const NUMBERS_KEPT: usize = 1024;

/// Of [`NUMBERS_KEPT`], the newest a compressor codes a mirrored IR's numbers against: the
/// far end's compressor sent fewer than twice as many packets since (unless the link lost more
/// than half of them), so it still has the reference.
pub const NUMBERS_FRESH: usize = 64;

/// What a sibling note says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// The CID holds that flow, or none.
    Context(u8, Option<FlowKey>),
    /// A handshake segment of that flow went, or was delivered.
    Handshake(FlowKey),
    /// A packet of the flow of that [`flow_hash`] went, or was delivered, with these numbers.
    Numbers(u16, Numbers),
    /// A frame from the far end named, as the reference of its numbers ([`super::numbers`]),
    /// the packet of the flow of that [`flow_hash`] with that TCP checksum field, which the
    /// sibling compressor sent, and that packet's next sequence number and acknowledgment
    /// number: the far end delivered it (a *reference receipt*, [`super::receipt`]).
    Referenced(u16, u16, u32, u32),
    /// The sibling decompressor saw the sequential IP-IDs of its flows skip often: the link
    /// loses frames coming in, and likely going out too. Without a reverse channel this is how
    /// a compressor learns that its starts need more IR frames (the note a decompressor with
    /// one sends to the far compressor, [`super::format::LOSS_NOTE`]).
    Lossy,
    /// The sibling decompressor held or refused a CO frame (without a reverse channel): a
    /// burst took more of a flow's frames than the compressor's window reaches, and the link
    /// likely loses such bursts going out too.
    Bursty,
}

/// Writes `note` to `out`, cleared first.
pub fn put_note(note: &Note, out: &mut Vec<u8>) {
    out.clear();
    match note {
        Note::Context(cid, flow) => {
            out.extend_from_slice(&[CONTEXT_NOTE, *cid]);
            if let Some(flow) = flow {
                put_flow(flow, out);
            }
        }
        Note::Handshake(flow) => {
            out.push(HANDSHAKE_NOTE);
            put_flow(flow, out);
        }
        Note::Numbers(hash, numbers) => {
            out.push(NUMBERS_NOTE);
            out.extend_from_slice(&hash.to_be_bytes());
            numbers.put(out);
        }
        Note::Lossy => out.push(LOSSY_NOTE),
        Note::Bursty => out.push(BURSTY_NOTE),
        Note::Referenced(hash, checksum, next_seq, ack) => {
            out.push(REFERENCED_NOTE);
            out.extend_from_slice(&hash.to_be_bytes());
            out.extend_from_slice(&checksum.to_be_bytes());
            out.extend_from_slice(&next_seq.to_be_bytes());
            out.extend_from_slice(&ack.to_be_bytes());
        }
    }
}

/// Appends a flow as notes carry it.
fn put_flow(flow: &FlowKey, out: &mut Vec<u8>) {
    match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            out.push(4);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
        }
        (s, d) => {
            out.push(6);
            out.extend_from_slice(&v6_octets(s));
            out.extend_from_slice(&v6_octets(d));
        }
    }
    out.extend_from_slice(&flow.src_port.to_be_bytes());
    out.extend_from_slice(&flow.dst_port.to_be_bytes());
}

/// An address as IPv6 octets (an IPv4 one mapped, which a note never mixes with IPv6).
fn v6_octets(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V6(a) => a.octets(),
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
    }
}

/// Reads a note; `None` if malformed.
pub fn parse_note(note: &[u8]) -> Option<Note> {
    match note.split_first()? {
        (&CONTEXT_NOTE, [cid]) => Some(Note::Context(*cid, None)),
        (&CONTEXT_NOTE, [cid, flow @ ..]) => Some(Note::Context(*cid, Some(parse_flow(flow)?))),
        (&HANDSHAKE_NOTE, flow) => Some(Note::Handshake(parse_flow(flow)?)),
        (&NUMBERS_NOTE, [h0, h1, numbers @ ..]) => Some(Note::Numbers(
            u16::from_be_bytes([*h0, *h1]),
            Numbers::parse(numbers)?,
        )),
        (&LOSSY_NOTE, []) => Some(Note::Lossy),
        (&BURSTY_NOTE, []) => Some(Note::Bursty),
        (&REFERENCED_NOTE, [h0, h1, c0, c1, n0, n1, n2, n3, a0, a1, a2, a3]) => {
            Some(Note::Referenced(
                u16::from_be_bytes([*h0, *h1]),
                u16::from_be_bytes([*c0, *c1]),
                u32::from_be_bytes([*n0, *n1, *n2, *n3]),
                u32::from_be_bytes([*a0, *a1, *a2, *a3]),
            ))
        }
        _ => None,
    }
}

/// Reads a flow as notes carry it; `None` if malformed.
fn parse_flow(flow: &[u8]) -> Option<FlowKey> {
    let (&version, rest) = flow.split_first()?;
    let n = match version {
        4 => 4,
        6 => 16,
        _ => return None,
    };
    if rest.len() != 2 * n + 4 {
        return None;
    }
    let address = |b: &[u8]| -> IpAddr {
        if n == 4 {
            IpAddr::V4(<[u8; 4]>::try_from(b).expect("4 octets").into())
        } else {
            IpAddr::V6(<[u8; 16]>::try_from(b).expect("16 octets").into())
        }
    };
    let port = |at: usize| u16::from_be_bytes([rest[at], rest[at + 1]]);
    Some(FlowKey {
        src: address(&rest[..n]),
        dst: address(&rest[n..2 * n]),
        src_port: port(2 * n),
        dst_port: port(2 * n + 2),
    })
}

/// The 16-bit hash of a flow, FNV-1a over the flow as notes carry it, its two halves XORed: a
/// mirrored frame names its mirror's flow by it, and a mirrored compact IR's TCP checksum
/// travels XORed with it (so that a mirror resolved to the reverse flow, whose packet has the
/// same checksums with its ends swapped, does not verify). It depends on the order of the
/// addresses and of the ports.
pub fn flow_hash(flow: &FlowKey) -> u16 {
    let hash = match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let hash = fnv_1a(FNV_OFFSET, 4, 1);
            fnv_1a(fnv_1a(hash, u32::from(s).into(), 4), u32::from(d).into(), 4)
        }
        (s, d) => v6_addresses_hash(s, d),
    };
    let ports = u32::from(flow.src_port) << 16 | u32::from(flow.dst_port);
    let hash = fnv_1a(hash, ports.into(), 4);
    (hash >> 16) as u16 ^ hash as u16
}

/// [`flow_hash`]'s FNV-1a over the addresses of a flow with an IPv6 one (the IPv4 one as an
/// IPv4-mapped IPv6 address). Apart, so that the usual IPv4 flow's hash stays in registers.
#[inline(never)]
fn v6_addresses_hash(s: IpAddr, d: IpAddr) -> u32 {
    let halves = |a: IpAddr| {
        let a = u128::from_be_bytes(v6_octets(a));
        [(a >> 64) as u64, a as u64]
    };
    let [s_high, s_low] = halves(s);
    let [d_high, d_low] = halves(d);
    [s_high, s_low, d_high, d_low]
        .into_iter()
        .fold(fnv_1a(FNV_OFFSET, 6, 1), |hash, half| fnv_1a(hash, half, 8))
}

/// FNV-1a's offset basis.
const FNV_OFFSET: u32 = 0x811c_9dc5;

/// FNV-1a over the `n` low bytes of `bytes`, most significant first (as they go on the wire),
/// from `hash`: read from a register, not byte by byte from memory.
#[inline(always)]
fn fnv_1a(hash: u32, bytes: u64, n: u32) -> u32 {
    (0..n).rev().fold(hash, |hash, i| {
        (hash ^ (bytes >> (8 * i)) as u8 as u32).wrapping_mul(0x0100_0193)
    })
}

/// The flow of the opposite direction: addresses and ports swapped.
pub fn reversed(flow: &FlowKey) -> FlowKey {
    FlowKey {
        src: flow.dst,
        dst: flow.src,
        src_port: flow.dst_port,
        dst_port: flow.src_port,
    }
}

/// The flows a codec's sibling holds, by CID, and the last [`RECENT`] flows it told of.
#[derive(Debug, Clone)]
pub struct Mirrors {
    flows: Vec<Option<FlowKey>>,
    /// The [`flow_hash`] of each flow of `flows` (0 where there is none).
    hashes: Vec<u16>,
    /// A CID of each flow of `flows`.
    by_flow: BTreeMap<FlowKey, u8>,
    /// The last flows told of, with their hashes: a ring.
    recent: [Option<(u16, FlowKey)>; RECENT],
    /// Where the next flow told of goes in `recent`.
    next: usize,
    /// The numbers of the last [`NUMBERS_KEPT`] packets told of, with their flows' hashes,
    /// newest last.
    numbers: VecDeque<(u16, Numbers)>,
}

impl Default for Mirrors {
    fn default() -> Mirrors {
        Mirrors {
            flows: alloc::vec![None; ALL_CIDS],
            hashes: alloc::vec![0; ALL_CIDS],
            by_flow: BTreeMap::new(),
            recent: [None; RECENT],
            next: 0,
            numbers: VecDeque::new(),
        }
    }
}

impl Mirrors {
    /// Takes in a sibling note; a malformed one is ignored.
    pub fn hear(&mut self, note: &[u8]) {
        if let Some(note) = parse_note(note) {
            self.hear_note(note);
        }
    }

    /// [`Mirrors::hear`] for a note already parsed.
    pub fn hear_note(&mut self, note: Note) {
        match note {
            Note::Context(cid, flow) => {
                if let Some(old) = self.flows[usize::from(cid)].take() {
                    if self.by_flow.get(&old) == Some(&cid) {
                        self.by_flow.remove(&old);
                        // Another CID may hold the same flow still.
                        if let Some(other) = self.flows.iter().position(|f| *f == Some(old)) {
                            self.by_flow.insert(old, other as u8);
                        }
                    }
                }
                self.flows[usize::from(cid)] = flow;
                self.hashes[usize::from(cid)] = flow.as_ref().map_or(0, flow_hash);
                if let Some(flow) = flow {
                    self.by_flow.entry(flow).or_insert(cid);
                    self.remember(flow);
                }
            }
            Note::Handshake(flow) => self.remember(flow),
            Note::Numbers(hash, numbers) => {
                if self.numbers.len() == NUMBERS_KEPT {
                    self.numbers.pop_front();
                }
                self.numbers.push_back((hash, numbers));
            }
            // The compressor's to act on ([`super::receipt`]).
            Note::Referenced(..) | Note::Lossy | Note::Bursty => {}
        }
    }

    /// Puts `flow` in the ring of recent flows.
    fn remember(&mut self, flow: FlowKey) {
        self.recent[self.next] = Some((flow_hash(&flow), flow));
        self.next = (self.next + 1) % RECENT;
    }

    /// The hash a new flow's IR frames name their mirror by, if the sibling holds, or told of
    /// lately, the reverse of `flow`.
    pub fn find(&self, flow: &FlowKey) -> Option<u16> {
        let reverse = reversed(flow);
        let hash = flow_hash(&reverse);
        let known = self.by_flow.contains_key(&reverse)
            || self
                .recent
                .iter()
                .flatten()
                .any(|(h, f)| *h == hash && *f == reverse);
        known.then_some(hash)
    }

    /// The reference a compressor codes a mirrored IR's numbers against, its mirror's flow of
    /// hash `hash`: the newest numbers of that flow among the last [`NUMBERS_FRESH`] told of.
    pub fn fresh_numbers(&self, hash: u16) -> Option<&Numbers> {
        self.numbers
            .iter()
            .rev()
            .take(NUMBERS_FRESH)
            .find_map(|(h, n)| (*h == hash).then_some(n))
    }

    /// The reference a mirrored IR with numbers names: the newest numbers told of of the flow of
    /// hash `hash` and of a packet with TCP checksum field `checksum`.
    pub fn numbers(&self, hash: u16, checksum: u16) -> Option<&Numbers> {
        self.numbers
            .iter()
            .rev()
            .find_map(|(h, n)| (*h == hash && n.checksum == checksum).then_some(n))
    }

    /// The newest numbers told of whose TCP checksum field is `checksum`, and their flow's hash:
    /// the reference a short mirrored compact IR names, and through it its mirror
    /// ([`super::compact::SHORT`]).
    pub fn numbers_by_checksum(&self, checksum: u16) -> Option<(u16, &Numbers)> {
        self.numbers
            .iter()
            .rev()
            .find_map(|(h, n)| (n.checksum == checksum).then_some((*h, n)))
    }

    /// Whether `reference` (of the flow of hash `hash`) is what [`Mirrors::numbers_by_checksum`]
    /// finds for its checksum: the newest told of with that checksum, so that the checksum alone
    /// names it and its flow.
    pub fn names(&self, hash: u16, reference: &Numbers) -> bool {
        self.numbers_by_checksum(reference.checksum) == Some((hash, reference))
    }

    /// The flow a mirrored frame names by `hash`: of the last [`RECENT`] the sibling told of,
    /// the newest with that hash; failing that, of those it holds, the one under the lowest CID.
    pub fn resolve(&self, hash: u16) -> Option<&FlowKey> {
        let recent = (1..=RECENT)
            .map(|back| (self.next + RECENT - back) % RECENT)
            .find_map(|i| self.recent[i].as_ref().filter(|(h, _)| *h == hash))
            .map(|(_, f)| f);
        recent.or_else(|| {
            self.hashes
                .iter()
                .zip(&self.flows)
                .find_map(|(&h, f)| f.as_ref().filter(|_| h == hash))
        })
    }
}

/// The notes a codec has for its sibling, bounded whether or not anyone takes them: the CIDs
/// whose flow changed (one bit each: a note tells the CID's flow as it is when taken) and the
/// last [`PENDING_HANDSHAKES`] handshake segments.
#[derive(Debug, Clone, Default)]
pub struct Outbox {
    changed: Changed,
    handshakes: VecDeque<FlowKey>,
    /// Packets' numbers, the last [`PENDING_NUMBERS`].
    numbers: VecDeque<(u16, Numbers)>,
    /// The last reference a frame from the far end named (flow hash, TCP checksum field, next
    /// sequence number, acknowledgment number).
    referenced: Option<(u16, u16, u32, u32)>,
    /// Whether there may be a note: harnesses ask after every frame and nearly always find
    /// none, which this answers without a search.
    pending: bool,
}

/// The handshake notes an [`Outbox`] keeps for a sibling that does not take them.
pub const PENDING_HANDSHAKES: usize = 8;

/// The numbers notes an [`Outbox`] keeps for a sibling that does not take them.
pub const PENDING_NUMBERS: usize = 8;

impl Outbox {
    /// The flow CID `cid` holds changed.
    pub fn changed(&mut self, cid: u8) {
        self.changed.mark(cid);
        self.pending = true;
    }

    /// A handshake segment of `flow` went, or was delivered.
    pub fn handshake(&mut self, flow: FlowKey) {
        if self.handshakes.len() == PENDING_HANDSHAKES {
            self.handshakes.pop_front();
        }
        self.handshakes.push_back(flow);
        self.pending = true;
    }

    /// A packet of the flow of hash `hash` (a young one) went, or was delivered.
    pub fn numbers(&mut self, hash: u16, numbers: Numbers) {
        if self.numbers.len() == PENDING_NUMBERS {
            self.numbers.pop_front();
        }
        self.numbers.push_back((hash, numbers));
        self.pending = true;
    }

    /// A frame from the far end named the packet of the flow of hash `hash` with `numbers` as
    /// its reference ([`Note::Referenced`]).
    pub fn referenced(&mut self, hash: u16, numbers: &Numbers) {
        self.referenced = Some((hash, numbers.checksum, numbers.next_seq, numbers.ack));
        self.pending = true;
    }

    /// Writes the next note to `out` (`flow_of` tells the flow a CID holds now); false when
    /// there is none.
    pub fn take(&mut self, flow_of: impl Fn(u8) -> Option<FlowKey>, out: &mut Vec<u8>) -> bool {
        if !self.pending {
            return false;
        }
        let note = match self.changed.take() {
            Some(cid) => Note::Context(cid, flow_of(cid)),
            None => match self.handshakes.pop_front() {
                Some(flow) => Note::Handshake(flow),
                None => match self.numbers.pop_front() {
                    Some((hash, numbers)) => Note::Numbers(hash, numbers),
                    None => match self.referenced.take() {
                        Some((h, c, n, a)) => Note::Referenced(h, c, n, a),
                        None => {
                            self.pending = false;
                            return false;
                        }
                    },
                },
            },
        };
        put_note(&note, out);
        true
    }
}

/// The CIDs whose flow changed since the sibling last heard of them, one bit each.
#[derive(Debug, Clone, Default)]
struct Changed {
    bits: [u64; ALL_CIDS / 64],
}

impl Changed {
    /// Marks `cid` as changed.
    fn mark(&mut self, cid: u8) {
        self.bits[usize::from(cid / 64)] |= 1 << (cid % 64);
    }

    /// Unmarks and returns the lowest changed CID, if any.
    fn take(&mut self) -> Option<u8> {
        let (word, bits) = self.bits.iter_mut().enumerate().find(|(_, b)| **b != 0)?;
        let bit = bits.trailing_zeros();
        *bits &= *bits - 1;
        Some((word * 64) as u8 + bit as u8)
    }
}

#[cfg(test)]
mod tests;
