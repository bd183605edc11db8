//! TAROC packet formats (draft section 7.3): the COMPRESSED_TCP header with its flag octet, WASI
//! field and options octet, and the CID placement of UNCOMPRESSED_TCP.
//!
//! ```text
//! COMPRESSED_TCP                       WASI (if W, A, S or I)
//! +---------------+                    +----+-------+-------+-------+---------+---------+
//! |      CID      |                    | PT | C_WIN | C_ACK | C_SEQ | C_IP_ID | PADDING |
//! |R|O|I|P|S|A|W|U|                    +----+-------+-------+-------+---------+---------+
//! | TCP checksum  | (2 octets)         bit lengths per PT (W A S I):
//! | IP-ID         | (2, RANDOM, only in   00: 10 11 11  3      01: 14 15 15  7
//! |               |  a random-ID context) 10: 16 19 19 11      11: 16 23 23 15
//! | R-octet       | (if R)
//! | Urgent ptr    | (2, if U)          Options (if O): |0 0 0 0|V|E| SA |, then TS value (if V),
//! | WASI          |                    TS echo (if E) in the 7/14/21/32-bit prefix code, then SA
//! | Options       | (if O)             SACK blocks of (offset from ACK, size) RFC 1144 deltas.
//! | TCP data      |
//! ```

use alloc::vec::Vec;

use taroc_wire::tcp::{SackBlocks, MAX_SACK_BLOCKS};

use crate::encoding::bits::{BitReader, BitWriter};
use crate::encoding::{delta, wlsb};

/// Flag bits of the COMPRESSED_TCP flag octet.
pub mod flag {
    /// R-octet present (reserved bits or ECN differ from the context).
    pub const R: u8 = 0x80;
    /// Options octet present.
    pub const O: u8 = 0x40;
    /// C_IP_ID present in WASI.
    pub const I: u8 = 0x20;
    /// The TCP PSH flag.
    pub const P: u8 = 0x10;
    /// C_SEQ present in WASI.
    pub const S: u8 = 0x08;
    /// C_ACK present in WASI.
    pub const A: u8 = 0x04;
    /// C_WIN present in WASI.
    pub const W: u8 = 0x02;
    /// The TCP URG flag; the urgent pointer follows.
    pub const U: u8 = 0x01;
}

/// Bit lengths of (C_WIN, C_ACK, C_SEQ, C_IP_ID) for PT = 0..=3 (draft section 7.3.2.1).
pub const WASI_BITS: [[u8; 4]; 4] = [
    [10, 11, 11, 3],
    [14, 15, 15, 7],
    [16, 19, 19, 11],
    [16, 23, 23, 15],
];

/// The W-LSB bits needed by the WASI fields, in WASI order: window, ack, seq, IP-ID. `None` for
/// a field that is not sent (its flag is clear).
pub type WasiNeeds = [Option<u8>; 4];

/// The smallest PT whose field lengths cover every needed length, if any.
pub fn choose_pt(needs: &WasiNeeds) -> Option<u8> {
    (0u8..4).find(|&pt| {
        needs
            .iter()
            .zip(WASI_BITS[usize::from(pt)])
            .all(|(need, len)| need.is_none_or(|k| k <= len))
    })
}

/// Writes the WASI field: PT, then the LSBs of each present field at the PT's length, padded.
pub fn put_wasi(out: &mut Vec<u8>, pt: u8, values: &[Option<u32>; 4]) {
    let mut w = BitWriter::new(out);
    w.put(u32::from(pt), 2);
    for (value, len) in values.iter().zip(WASI_BITS[usize::from(pt)]) {
        if let Some(v) = value {
            w.put(wlsb::encode(*v, len), len);
        }
    }
    w.finish();
}

/// The WASI fields as received, in WASI order: the LSBs and their number, or `None` if absent.
pub type WasiFields = [Option<(u32, u8)>; 4];

/// Reads a WASI field for the fields whose flags are set (`present`, in WASI order). Returns
/// the LSBs with their lengths, and the bytes consumed.
pub fn get_wasi(data: &[u8], present: [bool; 4]) -> Option<(WasiFields, usize)> {
    let mut r = BitReader::new(data);
    let pt = r.get(2)? as usize;
    let mut fields = [None; 4];
    for (i, len) in WASI_BITS[pt].into_iter().enumerate() {
        if present[i] {
            fields[i] = Some((r.get(len)?, len));
        }
    }
    Some((fields, r.bytes_consumed()))
}

/// The TS prefix code (draft section 7.3.2.2, read as a prefix code carrying 7, 14, 21 or 32
/// LSBs): `0` + 7 bits, `10` + 14 bits, `110` + 21 bits, or `1110 ----` + 32 bits.
pub fn put_ts(out: &mut Vec<u8>, value: u32, k: u8) {
    match k {
        0..=7 => out.push((value & 0x7F) as u8),
        8..=14 => out.extend_from_slice(&((0b10 << 14) | (value & 0x3FFF) as u16).to_be_bytes()),
        15..=21 => {
            let v = (0b110 << 21) | (value & 0x1F_FFFF);
            out.extend_from_slice(&v.to_be_bytes()[1..]);
        }
        _ => {
            out.push(0b1110_0000);
            out.extend_from_slice(&value.to_be_bytes());
        }
    }
}

/// Reads one TS prefix code: the LSBs, their number, and the bytes consumed.
pub fn get_ts(data: &[u8]) -> Option<(u32, u8, usize)> {
    let first = *data.first()?;
    if first & 0x80 == 0 {
        Some((u32::from(first), 7, 1))
    } else if first & 0x40 == 0 {
        let v = u16::from_be_bytes([first, *data.get(1)?]);
        Some((u32::from(v & 0x3FFF), 14, 2))
    } else if first & 0x20 == 0 {
        let v = u32::from_be_bytes([0, first, *data.get(1)?, *data.get(2)?]);
        Some((v & 0x1F_FFFF, 21, 3))
    } else if first & 0x10 == 0 {
        let b = data.get(1..5)?;
        Some((u32::from_be_bytes([b[0], b[1], b[2], b[3]]), 32, 5))
    } else {
        None
    }
}

/// Writes the SACK blocks as (left edge - ACK, right edge - left edge) RFC 1144 deltas; false if
/// a block cannot be coded (an edge before the ACK, or a distance of 64 KiB or more).
pub fn put_sack(out: &mut Vec<u8>, ack: u32, blocks: &SackBlocks) -> bool {
    let start = out.len();
    for &(left, right) in blocks.as_slice() {
        if !(delta::put(out, left.wrapping_sub(ack)) && delta::put(out, right.wrapping_sub(left))) {
            out.truncate(start);
            return false;
        }
    }
    true
}

/// Reads `count` SACK blocks coded against `ack`; returns them and the bytes consumed.
pub fn get_sack(data: &[u8], ack: u32, count: usize) -> Option<(SackBlocks, usize)> {
    let mut blocks = SackBlocks::default();
    let mut at = 0;
    for _ in 0..count.min(MAX_SACK_BLOCKS) {
        let (offset, n) = delta::get(data.get(at..)?)?;
        at += n;
        let (size, n) = delta::get(data.get(at..)?)?;
        at += n;
        let left = ack.wrapping_add(offset);
        blocks.push(left, left.wrapping_add(size));
    }
    Some((blocks, at))
}

/// The options octet: `|0 0 0 0|V|E|SA|`.
pub fn options_octet(ts_val: bool, ts_echo: bool, sack_blocks: usize) -> u8 {
    (u8::from(ts_val) << 3) | (u8::from(ts_echo) << 2) | (sack_blocks as u8 & 0x03)
}

/// UNCOMPRESSED_TCP: the first length field (IPv4 Total Length, IPv6 Payload Length) carries the
/// context flags octet (the draft's "LSB of pkt nr", unused by the draft) and the CID.
pub mod uncompressed {
    /// Context flag: the IPv4 Identification is RANDOM and travels whole in every
    /// COMPRESSED_TCP header of this context (RFC 2507 section 7 terminology).
    pub const RANDOM_IP_ID: u8 = 0x01;
    /// Every defined context flag.
    pub const ALL_FLAGS: u8 = RANDOM_IP_ID;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pt_table_and_choice() {
        // Length of WASI in bytes for each PT: fewest (I plus window) and most (all four).
        let total = |pt: usize, fields: &[usize]| {
            (2 + fields
                .iter()
                .map(|&i| WASI_BITS[pt][i] as usize)
                .sum::<usize>())
            .div_ceil(8)
        };
        let spans: Vec<_> = (0..4)
            .map(|pt| (total(pt, &[0, 3]), total(pt, &[0, 1, 2, 3])))
            .collect();
        // The draft's table says 2~5, 3~7, 4~9, 5~11; the last maximum is 10 (79 bits).
        assert_eq!(spans, [(2, 5), (3, 7), (4, 9), (5, 10)]);
        assert_eq!(choose_pt(&[None, None, Some(11), Some(3)]), Some(0));
        assert_eq!(choose_pt(&[Some(11), None, None, Some(3)]), Some(1));
        assert_eq!(choose_pt(&[None, Some(20), None, Some(0)]), Some(3));
        assert_eq!(choose_pt(&[None, None, Some(24), None]), None);
        assert_eq!(choose_pt(&[None, None, None, Some(16)]), None);
    }

    #[test]
    fn wasi_round_trip() {
        let mut out = Vec::new();
        put_wasi(
            &mut out,
            1,
            &[Some(0x3ABC), None, Some(0x7FFF_1234), Some(0x45)],
        );
        // 2 + 14 + 15 + 7 = 38 bits -> 5 bytes.
        assert_eq!(out.len(), 5);
        let (fields, used) = get_wasi(&out, [true, false, true, true]).unwrap();
        assert_eq!(used, 5);
        assert_eq!(
            fields,
            [
                Some((0x3ABC, 14)),
                None,
                Some((0x1234, 15)),
                Some((0x45, 7))
            ]
        );
        assert_eq!(get_wasi(&out[..3], [true, false, true, true]), None);
    }

    #[test]
    fn ts_prefix_codes() {
        for (value, k, len) in [
            (0x55u32, 3u8, 1usize),
            (0x1234, 10, 2),
            (0x1A_BCDE, 20, 3),
            (0xDEAD_BEEF, 30, 5),
        ] {
            let mut out = Vec::new();
            put_ts(&mut out, value, k);
            assert_eq!(out.len(), len);
            let (lsbs, bits, used) = get_ts(&out).unwrap();
            assert_eq!(used, len);
            assert_eq!(lsbs, wlsb::encode(value, bits));
            assert!(bits >= k);
        }
        assert_eq!(get_ts(&[0xF0, 0, 0, 0, 0]), None);
        assert_eq!(get_ts(&[0xE0, 0, 0]), None);
    }

    #[test]
    fn sack_blocks_as_deltas() {
        let mut blocks = SackBlocks::default();
        blocks.push(1000 + 2896, 1000 + 4344);
        blocks.push(1000 + 100, 1000 + 356);
        let mut out = Vec::new();
        assert!(put_sack(&mut out, 1000, &blocks));
        assert_eq!(out, [0, 0x0B, 0x50, 0, 0x05, 0xA8, 100, 0, 1, 0]);
        assert_eq!(get_sack(&out, 1000, 2), Some((blocks, out.len())));
        // A D-SACK block below the ACK cannot be coded.
        let mut dsack = SackBlocks::default();
        dsack.push(500, 600);
        assert!(!put_sack(&mut out, 1000, &dsack));
        assert_eq!(out.len(), 10);
    }
}
