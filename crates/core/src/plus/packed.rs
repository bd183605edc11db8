//! The packed IR (spec section 3.5): the short mirrored compact IR ([`super::compact::SHORT`])
//! of a flow whose usual ECN bits are 0, whose IP-ID is sequential, whose CID is below 32 and
//! whose TCP flags are ACK, with PSH or without, in two octets fewer. Its own kind byte
//! ([`super::format::PACKED_IR`]) stands for the short form's option-layout bits, and one octet
//! `K T P c c c c c` carries the stride bits K and T of the context flags, TCP's PSH flag and
//! the CID, in place of the short form's shape octet, CID octet and TCP flags octet.
//!
//! Both ends convert between the two forms octet for octet: the compressor packs a short form
//! it wrote ([`pack`]), the decompressor unpacks a packed IR ([`PackedIr`], a view of its
//! bytes) into the short form and decodes that as any compact IR.

use alloc::vec::Vec;

use taroc_wire::tcp::flags;

use super::compact::SHORT;
use crate::codec::DropReason;

/// The short form's shape octet is `K T E E 1 1 B B`: these bits must be `0 0 1 1 0 0`.
const SHAPE_FIXED: u8 = 0x3F;

/// CIDs below this one go packed: five bits of the packed octet.
const CIDS: u8 = 32;

/// The packed octet's PSH bit.
const PSH: u8 = 0x20;

/// The short form's octets before the sequence difference: shape, CID, reference's checksum
/// (2), IPv4 Identification (2).
const HEAD: usize = 6;

/// Where the short form's TCP flags octet is: after the sequence and acknowledgment
/// differences, which start at [`HEAD`]. `None` if they run past the end.
fn flags_at(short: &[u8]) -> Option<usize> {
    let mut at = HEAD;
    for _ in 0..2 {
        let len = short.get(at..)?.iter().position(|b| b & 0x80 == 0)? + 1;
        at += len;
    }
    (at < short.len()).then_some(at)
}

/// A view of a packed IR's bytes (the frame after its kind byte): the packed octet
/// `K T P c c c c c`, then the short form's octets from the reference's checksum on, its TCP
/// flags octet left out.
#[derive(Debug, Clone)]
pub struct PackedIr<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PackedIr<T> {
    /// A view of `buffer` if it holds the packed octet.
    pub fn new_checked(buffer: T) -> Result<PackedIr<T>, DropReason> {
        if buffer.as_ref().is_empty() {
            return Err(DropReason::Malformed);
        }
        Ok(PackedIr { buffer })
    }

    /// The packed octet.
    fn first(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    /// The CID.
    pub fn cid(&self) -> u8 {
        self.first() & (CIDS - 1)
    }

    /// The context flags' stride bits K and T, in their places there.
    pub fn stride_flags(&self) -> u8 {
        (self.first() & 0xC0) >> 2
    }

    /// The TCP flags: ACK, with PSH if the packed octet says so.
    pub fn tcp_flags(&self) -> u8 {
        flags::ACK
            | if self.first() & PSH != 0 {
                flags::PSH
            } else {
                0
            }
    }

    /// Writes the short mirrored compact IR this packed IR stands for to `out` (cleared
    /// first).
    pub fn unpack(&self, out: &mut Vec<u8>) -> Result<(), DropReason> {
        out.clear();
        let packed = self.buffer.as_ref();
        out.extend_from_slice(&[self.stride_flags() << 2 | SHORT, self.cid()]);
        out.extend_from_slice(&packed[1..]);
        let at = flags_at(out).ok_or(DropReason::Malformed)?;
        out.insert(at, self.tcp_flags());
        Ok(())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PackedIr<T> {
    /// Sets the CID, which must be below 32.
    pub fn set_cid(&mut self, cid: u8) {
        debug_assert!(cid < CIDS);
        let first = &mut self.buffer.as_mut()[0];
        *first = *first & !(CIDS - 1) | cid & (CIDS - 1);
    }
}

/// Writes the packed form of the short mirrored compact IR `short` (the frame after its kind
/// byte) to `out` (cleared first), if it has one; returns whether it did.
pub fn pack(short: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let [shape, cid, ..] = *short else {
        return false;
    };
    let Some(at) = flags_at(short) else {
        return false;
    };
    let tcp_flags = short[at];
    if shape & SHAPE_FIXED != SHORT || cid >= CIDS || tcp_flags & !flags::PSH != flags::ACK {
        return false;
    }
    let psh = if tcp_flags & flags::PSH != 0 { PSH } else { 0 };
    out.push(shape & 0xC0 | psh | cid);
    out.extend_from_slice(&short[2..at]);
    out.extend_from_slice(&short[at + 1..]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short form as the unseen many-flows capture has them: shape
    /// `0x4C` (a sequence stride), CID 2, reference checksum, IP-ID, two one-octet
    /// differences, ACK|PSH, a window difference, the checksum, two timestamp differences
    /// (the first of two octets) and a payload octet.
    const SHORT_FORM: [u8; 17] = [
        0x4C, 0x02, 0xC7, 0xF6, 0x4D, 0x01, 0x00, 0x00, 0x18, 0x02, 0xAF, 0xD6, 0xA4, 0x01, 0x00,
        0x55, 0x66,
    ];

    #[test]
    fn a_packed_ir_is_two_octets_shorter_and_unpacks_to_the_short_form() {
        let mut packed = Vec::new();
        assert!(pack(&SHORT_FORM, &mut packed));
        assert_eq!(packed.len(), SHORT_FORM.len() - 2);
        assert_eq!(packed[0], 0x40 | PSH | 0x02);
        assert_eq!(&packed[1..7], &SHORT_FORM[2..8]);
        let view = PackedIr::new_checked(&packed[..]).unwrap();
        assert_eq!(
            (view.cid(), view.stride_flags(), view.tcp_flags()),
            (2, 0x10, flags::ACK | flags::PSH)
        );
        let mut back = Vec::new();
        view.unpack(&mut back).unwrap();
        assert_eq!(back, SHORT_FORM);
        let mut moved = packed.clone();
        PackedIr::new_checked(&mut moved[..]).unwrap().set_cid(31);
        assert_eq!((moved[0], &moved[1..]), (0x40 | PSH | 31, &packed[1..]));
    }

    #[test]
    fn only_the_usual_short_forms_pack() {
        let mut out = Vec::new();
        let with = |i: usize, v: u8| {
            let mut f = SHORT_FORM;
            f[i] = v;
            f
        };
        // ECN bits, another IP-ID behaviour, a high CID, a FIN, the long form.
        for frame in [
            with(0, 0x5C),
            with(0, 0x4D),
            with(1, 32),
            with(8, 0x11),
            with(0, 0x44),
        ] {
            assert!(!pack(&frame, &mut out), "{frame:02x?}");
            assert!(out.is_empty());
        }
        assert!(pack(&with(1, 31), &mut out));
        // Differences that run past the end.
        assert!(!pack(&[0x0C, 0, 1, 2, 3, 4, 0x80, 0x80], &mut out));
    }

    #[test]
    fn a_truncated_packed_ir_is_malformed() {
        let mut out = Vec::new();
        assert!(PackedIr::new_checked(&[][..]).is_err());
        let unpack = |packed: &[u8], out: &mut Vec<u8>| {
            PackedIr::new_checked(packed).and_then(|p| p.unpack(out))
        };
        assert_eq!(
            unpack(&[0x02, 1, 2, 3, 4, 0x80], &mut out),
            Err(DropReason::Malformed)
        );
        // Nothing after the differences: no room for what follows the flags.
        assert_eq!(
            unpack(&[0x02, 1, 2, 3, 4, 0, 0], &mut out),
            Err(DropReason::Malformed)
        );
    }
}
