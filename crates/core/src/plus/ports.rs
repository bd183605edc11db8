//! The TCP ports of a flow coded against a base context's (IR-R and IR-S frames): a flow between
//! the hosts of a base usually shares one port with it (the server's) and has an ephemeral port
//! near the base's, so one port goes as nothing and the other as a small signed difference.
//!
//! ```text
//! Whole:       | source port (2) | destination port (2) |
//! SourceKept:  | destination port - the base's, zigzag, LEB128 (1-3 octets) |
//! DestKept:    | source port - the base's, zigzag, LEB128 (1-3 octets) |
//! ```
//!
//! The difference is taken in 16-bit arithmetic as a signed number (-32768..=32767); zigzag
//! maps 0, -1, 1, -2, ... to 0, 1, 2, 3, ..., so differences within ±64 take one octet.

use alloc::vec::Vec;

use crate::encoding::varint;

/// How a frame's ports are coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Both ports follow whole.
    Whole,
    /// The source port is the base's; the destination port's difference follows.
    SourceKept,
    /// The destination port is the base's; the source port's difference follows.
    DestKept,
}

/// The mode for `ports` (source, destination, as on the wire) against the base's `base`.
pub fn mode(ports: &[u8; 4], base: &[u8; 4]) -> Mode {
    if ports[..2] == base[..2] {
        Mode::SourceKept
    } else if ports[2..] == base[2..] {
        Mode::DestKept
    } else {
        Mode::Whole
    }
}

fn port(bytes: &[u8]) -> u16 {
    u16::from_be_bytes([bytes[0], bytes[1]])
}

fn zigzag(d: i16) -> u32 {
    ((i32::from(d) << 1) ^ (i32::from(d) >> 15)) as u32
}

fn unzigzag(z: u32) -> Option<i16> {
    let z = u16::try_from(z).ok()?;
    Some(((z >> 1) as i16) ^ -((z & 1) as i16))
}

/// Ports coded against a base's: at most four octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coded {
    bytes: [u8; 4],
    len: u8,
}

impl Coded {
    /// The octets.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// `ports` coded in `mode` ([`mode`]) against `base`.
pub fn encode(mode: Mode, ports: &[u8; 4], base: &[u8; 4]) -> Coded {
    let at = match mode {
        Mode::Whole => {
            return Coded {
                bytes: *ports,
                len: 4,
            }
        }
        Mode::SourceKept => 2,
        Mode::DestKept => 0,
    };
    let d = port(&ports[at..]).wrapping_sub(port(&base[at..])) as i16;
    // A zigzag value below 2^16 takes at most three octets.
    let mut coded = Coded {
        bytes: [0; 4],
        len: 0,
    };
    let mut value = zigzag(d);
    loop {
        let more = value >= 0x80;
        coded.bytes[usize::from(coded.len)] = value as u8 & 0x7F | if more { 0x80 } else { 0 };
        coded.len += 1;
        value >>= 7;
        if !more {
            return coded;
        }
    }
}

/// Appends `ports` coded in `mode` ([`mode`]) against `base`.
pub fn put(out: &mut Vec<u8>, mode: Mode, ports: &[u8; 4], base: &[u8; 4]) {
    out.extend_from_slice(encode(mode, ports, base).as_bytes());
}

/// Reads ports coded in `mode` against `base` from the start of `data`: the ports and the
/// octets taken, or `None` if cut short or out of range.
pub fn get(data: &[u8], mode: Mode, base: &[u8; 4]) -> Option<([u8; 4], usize)> {
    let at = match mode {
        Mode::Whole => return Some((data.get(..4)?.try_into().ok()?, 4)),
        Mode::SourceKept => 2,
        Mode::DestKept => 0,
    };
    let (z, used) = varint::get(data)?;
    let value = port(&base[at..]).wrapping_add(unzigzag(z)? as u16);
    let mut ports = *base;
    ports[at..at + 2].copy_from_slice(&value.to_be_bytes());
    Some((ports, used))
}

/// The octets of ports coded in `mode` at the start of `data`, or `None` if cut short or out
/// of range (what [`get`] takes, without the base).
pub fn coded_len(data: &[u8], mode: Mode) -> Option<usize> {
    match mode {
        Mode::Whole => (data.len() >= 4).then_some(4),
        Mode::SourceKept | Mode::DestKept => {
            let (z, used) = varint::get(data)?;
            unzigzag(z).map(|_| used)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(src: u16, dst: u16) -> [u8; 4] {
        let [a, b] = src.to_be_bytes();
        let [c, d] = dst.to_be_bytes();
        [a, b, c, d]
    }

    #[test]
    fn a_kept_port_costs_nothing_and_a_near_one_an_octet() {
        let base = ports(42_490, 80);
        for (p, m, len) in [
            (ports(42_520, 80), Mode::DestKept, 1),
            (ports(42_400, 80), Mode::DestKept, 2),
            (ports(80, 42_491), Mode::Whole, 4),
            (ports(42_490, 443), Mode::SourceKept, 2),
            (ports(1, 80), Mode::DestKept, 3),
            (ports(65_535, 80), Mode::DestKept, 3),
        ] {
            assert_eq!(mode(&p, &base), m);
            let mut out = Vec::new();
            put(&mut out, m, &p, &base);
            assert_eq!(out.len(), len);
            out.push(0xAB);
            assert_eq!(get(&out, m, &base), Some((p, len)));
            assert_eq!(coded_len(&out, m), Some(len));
        }
        // Past 16 bits, or cut short: refused.
        assert_eq!(get(&[0x80, 0x80, 0x04], Mode::DestKept, &base), None);
        assert_eq!(get(&[0x80], Mode::SourceKept, &base), None);
        assert_eq!(get(&[1, 2, 3], Mode::Whole, &base), None);
        for (data, m) in [
            (&[0x80, 0x80, 0x04][..], Mode::DestKept),
            (&[0x80], Mode::SourceKept),
            (&[1, 2, 3], Mode::Whole),
        ] {
            assert_eq!(coded_len(data, m), None);
        }
    }

    #[test]
    fn zigzag_round_trips_every_difference() {
        for d in i16::MIN..=i16::MAX {
            assert_eq!(unzigzag(zigzag(d)), Some(d));
        }
        assert_eq!([zigzag(0), zigzag(-1), zigzag(1)], [0, 1, 2]);
    }
}
