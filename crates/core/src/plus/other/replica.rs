//! The replicated IR-N (spec section 8): a new context's first packet coded against another
//! context of the same shape, its base, as the words of the template that differ and the
//! per-packet fields whole. Read and written in one place, [`Replica::parse`] and
//! [`Replica::emit`].
//!
//! ```text
//! | form: 0 0 0 0 K F M 0 | IR-N flags | CID | base CID | n | n × (word index, word) |
//! | IP-ID (2, IPv4) | fragment field (2, if F) | sequence number (2, RTP or echo) |
//! | timestamp (4, RTP) | stride (2, RTP) | check (2) | transport checksum (2, if K) | payload |
//! ```
//!
//! An IR-N frame in its plain form starts with an IP version of 4 or 6; a first octet below
//! `0x10` marks this form.

use alloc::vec::Vec;

use super::fields::Dynamic;
use super::{Shape, FRAME, PAIR, STEP};
use crate::codec::DropReason;

/// Form octet: the transport checksum follows.
pub const K: u8 = 0x08;
/// Form octet: the fragment field follows (else the base's reference's).
pub const F: u8 = 0x04;
/// Form octet: the RTP marker.
pub const M: u8 = 0x02;

/// Most template words a replica changes.
pub const MAX_CHANGES: usize = 8;

/// Whether an IR-N frame is in the replicated form.
pub fn is_replica(frame: &[u8]) -> bool {
    frame.first().is_some_and(|&b| b < 0x10)
}

/// The CID a replicated IR-N frame sets up, if `frame` is one (read before anything else of it
/// is parsed): a replica refused, for a base the decompressor lacks or holds for another flow,
/// asks for it.
pub fn replica_cid(frame: &[u8]) -> Option<u8> {
    frame.get(2).copied().filter(|_| is_replica(frame))
}

/// A replicated IR-N's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica<'a> {
    /// The new context's CID.
    pub cid: u8,
    /// The base's CID.
    pub base: u8,
    /// The IR-N flags (mode and step).
    pub flags: u8,
    /// The changed template words: 3 octets each (index, word).
    pub changes: &'a [u8],
    /// The per-packet fields (the sequence number of an IPv4 IP-only context is its IP-ID).
    pub fields: Dynamic,
    /// Whether the fragment field travels (else the base's reference's).
    pub frag_sent: bool,
    /// The RTP stride.
    pub stride: u16,
    /// The check of the original header ([`super::header_crc`]).
    pub crc: u16,
    /// The transport checksum, when carried.
    pub checksum: Option<[u8; 2]>,
}

impl<'a> Replica<'a> {
    /// Parses a replicated IR-N (all but its payload); `shape_of` gives the shape of the
    /// context a CID names. The fields and the octets they took.
    pub fn parse(
        frame: &'a [u8],
        shape_of: impl Fn(u8) -> Option<Shape>,
    ) -> Result<(Replica<'a>, Shape, usize), DropReason> {
        let bad = || DropReason::Malformed;
        let [form, flags, cid, base, n, rest @ ..] = frame else {
            return Err(bad());
        };
        let n = usize::from(*n);
        if form & !(K | F | M) != 0 || n > MAX_CHANGES {
            return Err(bad());
        }
        let changes = rest.get(..3 * n).ok_or_else(bad)?;
        let s = shape_of(*base).ok_or(DropReason::NoContext)?;
        if s.flags() != flags & !(STEP | FRAME | PAIR)
            || !super::decompressor::extras_fit(s, *flags)
            || (form & F != 0 && !s.v4)
            || (form & M != 0 && !s.rtp)
            || (form & K != 0 && s.checksum_at().is_none())
            || changes
                .chunks(3)
                .any(|c| 2 * usize::from(c[0]) + 2 > s.header)
        {
            return Err(bad());
        }
        let mut at = 5 + 3 * n;
        let mut number = |len: usize| -> Result<u32, DropReason> {
            let bytes = frame.get(at..at + len).ok_or_else(bad)?;
            at += len;
            Ok(bytes.iter().fold(0, |v, &b| v << 8 | u32::from(b)))
        };
        let mut fields = Dynamic::default();
        if s.v4 {
            fields.ip_id = number(2)? as u16;
            fields.seq = fields.ip_id;
        }
        let frag_sent = form & F != 0;
        if frag_sent {
            fields.frag = number(2)? as u16;
        }
        let mut stride = 0;
        if s.rtp || s.echo {
            fields.seq = number(2)? as u16;
        }
        if s.rtp {
            fields.ts = number(4)?;
            stride = number(2)? as u16;
            fields.marker = form & M != 0;
        }
        let crc = number(2)? as u16;
        let checksum = if form & K != 0 {
            Some((number(2)? as u16).to_be_bytes())
        } else {
            None
        };
        let replica = Replica {
            cid: *cid,
            base: *base,
            flags: *flags,
            changes,
            fields,
            frag_sent,
            stride,
            crc,
            checksum,
        };
        Ok((replica, s, at))
    }

    /// Writes the frame (after what `out` holds, without the payload) for a base of shape `s`.
    pub fn emit(&self, s: Shape, out: &mut Vec<u8>) {
        let mut form = 0;
        if self.checksum.is_some() {
            form |= K;
        }
        if self.frag_sent {
            form |= F;
        }
        if self.fields.marker {
            form |= M;
        }
        out.extend_from_slice(&[form, self.flags, self.cid, self.base]);
        out.push((self.changes.len() / 3) as u8);
        out.extend_from_slice(self.changes);
        let f = &self.fields;
        if s.v4 {
            out.extend_from_slice(&f.ip_id.to_be_bytes());
        }
        if self.frag_sent {
            out.extend_from_slice(&f.frag.to_be_bytes());
        }
        if s.rtp || s.echo {
            out.extend_from_slice(&f.seq.to_be_bytes());
        }
        if s.rtp {
            out.extend_from_slice(&f.ts.to_be_bytes());
            out.extend_from_slice(&self.stride.to_be_bytes());
        }
        out.extend_from_slice(&self.crc.to_be_bytes());
        if let Some(sum) = self.checksum {
            out.extend_from_slice(&sum);
        }
    }

    /// Applies the changes to `template` (the base's, which `template` holds).
    pub fn apply(&self, template: &mut [u8]) {
        for c in self.changes.chunks(3) {
            let at = 2 * usize::from(c[0]);
            template[at..at + 2].copy_from_slice(&c[1..3]);
        }
    }
}

/// The changed words of `template` against `base` (same length) as 3-octet entries into
/// `out`, if there are at most [`MAX_CHANGES`] (none: a context moved to another CID).
pub fn changes(base: &[u8], template: &[u8], out: &mut [u8; 3 * MAX_CHANGES]) -> Option<usize> {
    if base.len() != template.len() {
        return None;
    }
    let mut n = 0;
    for (i, (b, t)) in base.chunks(2).zip(template.chunks(2)).enumerate() {
        if b != t {
            if n == MAX_CHANGES {
                return None;
            }
            out[3 * n] = i as u8;
            out[3 * n + 1..3 * n + 3].copy_from_slice(t);
            n += 1;
        }
    }
    Some(3 * n)
}
