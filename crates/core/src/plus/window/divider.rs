//! Division of a window's numbers by a context's strides without hardware divisions.

/// Division of any `u32` by a fixed divisor with one 64-bit multiplication (D. Lemire's direct
/// computation, `M = ceil(2^64 / d)`), exact for every `u32`: the window scan divides every
/// entry by the strides. A divisor of 1 (no stride) needs no multiplication.
#[derive(Debug, Clone, Copy)]
pub(super) struct Divider {
    d: u32,
    /// `ceil(2^64 / d)`, or 0 for `d == 1`.
    m: u64,
}

impl Divider {
    #[inline]
    pub(super) fn new(d: u16) -> Divider {
        let d = u32::from(d.max(1));
        let m = if d == 1 {
            0
        } else {
            u64::MAX / u64::from(d) + 1
        };
        Divider { d, m }
    }

    /// `(n / d, n % d)`.
    #[inline]
    pub(super) fn div_rem(self, n: u32) -> (u32, u32) {
        if self.m == 0 {
            return (n, 0);
        }
        let q = ((u128::from(self.m) * u128::from(n)) >> 64) as u32;
        (q, n - q * self.d)
    }
}
