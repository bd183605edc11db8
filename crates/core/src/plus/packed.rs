//! The packed IR (spec section 3.5): the short mirrored compact IR ([`super::compact::SHORT`])
//! of a flow whose usual ECN bits are 0, whose IP-ID is sequential, whose CID is below 32 and
//! whose TCP flags are ACK, with PSH or without, in two octets fewer. Its own kind byte
//! ([`super::format::PACKED_IR`]) stands for the short form's option-layout bits, and one octet
//! `K T P c c c c c` carries the stride bits K and T of the context flags, TCP's PSH flag and
//! the CID, in place of the short form's shape octet, CID octet and TCP flags octet.
//!
//! Both ends convert between the two forms octet for octet: the compressor packs a short form
//! it wrote, the decompressor unpacks a packed IR into the short form and decodes that as any
//! compact IR.

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

/// Writes the short mirrored compact IR that the packed IR `packed` (the frame after its kind
/// byte) stands for to `out` (cleared first).
pub fn unpack(packed: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
    out.clear();
    let [first, ..] = *packed else {
        return Err(DropReason::Malformed);
    };
    out.extend_from_slice(&[first & 0xC0 | SHORT, first & (CIDS - 1)]);
    out.extend_from_slice(&packed[1..]);
    let at = flags_at(out).ok_or(DropReason::Malformed)?;
    let psh = if first & PSH != 0 { flags::PSH } else { 0 };
    out.insert(at, flags::ACK | psh);
    Ok(())
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
        let mut back = Vec::new();
        unpack(&packed, &mut back).unwrap();
        assert_eq!(back, SHORT_FORM);
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
        assert_eq!(unpack(&[], &mut out), Err(DropReason::Malformed));
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
