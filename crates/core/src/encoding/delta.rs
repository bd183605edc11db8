//! The variable-length delta of RFC 1144 (section 3.2.2): a value 1..=255 takes one octet; 0 or
//! 256..=65535 takes three (a zero octet, then the value in two octets, big-endian).

use alloc::vec::Vec;

/// Appends `value` in the RFC 1144 delta encoding; returns false (appending nothing) if the value
/// does not fit in 16 bits.
pub fn put(out: &mut Vec<u8>, value: u32) -> bool {
    match value {
        1..=255 => out.push(value as u8),
        0 | 256..=0xFFFF => {
            out.push(0);
            out.extend_from_slice(&(value as u16).to_be_bytes());
        }
        _ => return false,
    }
    true
}

/// Reads one delta from the start of `data`: the value and the bytes it took.
pub fn get(data: &[u8]) -> Option<(u32, usize)> {
    match *data.first()? {
        0 => {
            let hi = *data.get(1)?;
            let lo = *data.get(2)?;
            Some((u32::from(u16::from_be_bytes([hi, lo])), 3))
        }
        b => Some((u32::from(b), 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_of_rfc_1144() {
        for (value, bytes) in [
            (1u32, &[1u8][..]),
            (255, &[255]),
            (0, &[0, 0, 0]),
            (256, &[0, 1, 0]),
            (65535, &[0, 255, 255]),
        ] {
            let mut out = Vec::new();
            assert!(put(&mut out, value));
            assert_eq!(out, bytes);
            assert_eq!(get(&out), Some((value, bytes.len())));
        }
        assert!(!put(&mut Vec::new(), 65536));
        assert_eq!(get(&[0, 1]), None);
        assert_eq!(get(&[]), None);
    }
}
