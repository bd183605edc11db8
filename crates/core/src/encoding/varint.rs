//! Unsigned LEB128: seven bits per octet, least significant group first, the top bit set on
//! every octet but the last. A `u32` takes one to five octets.

use alloc::vec::Vec;

/// Appends `value`.
pub fn put(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads one value from the start of `data`: the value and the octets it took, or `None` if
/// it is cut short, longer than five octets, or past `u32`.
pub fn get(data: &[u8]) -> Option<(u32, usize)> {
    let mut value = 0u64;
    for (i, &byte) in data.iter().take(5).enumerate() {
        value |= u64::from(byte & 0x7F) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((u32::try_from(value).ok()?, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_a_u32() {
        for (value, len) in [(0u32, 1), (127, 1), (128, 2), (16_383, 2), (u32::MAX, 5)] {
            let mut out = Vec::new();
            put(&mut out, value);
            assert_eq!(out.len(), len);
            assert_eq!(get(&out), Some((value, len)));
        }
        assert_eq!(get(&[0x80]), None);
        assert_eq!(get(&[0xFF, 0xFF, 0xFF, 0xFF, 0x7F]), None);
        assert_eq!(get(&[0x80; 6]), None);
    }
}
