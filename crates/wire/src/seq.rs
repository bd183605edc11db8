//! Serial-number arithmetic (RFC 1982) for wrapping 32-bit TCP sequence space.

/// Whether `a` is before `b` in wrapping 32-bit sequence space.
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Whether `a` is before or equal to `b` in wrapping 32-bit sequence space.
pub fn seq_le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// The signed distance `a - b` in wrapping 32-bit sequence space.
pub fn seq_diff(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_around() {
        assert!(seq_lt(0xFFFF_FFF0, 0x10));
        assert!(!seq_lt(0x10, 0xFFFF_FFF0));
        assert!(seq_le(5, 5));
        assert_eq!(seq_diff(0x10, 0xFFFF_FFF0), 0x20);
    }
}
