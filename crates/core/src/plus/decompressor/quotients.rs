//! The reference's sequence, next sequence and acknowledgment numbers over their strides, kept
//! from the frame that made them the reference: a scaled number decodes against its reference's
//! quotient, which would otherwise cost a hardware division per number per frame.

use crate::plus::scaled::quotient;

/// One number's quotient, with the number and stride it is of: [`Quotient::of`] answers from it
/// only for that same number and stride, so a stale entry costs a division, never a wrong
/// answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Quotient {
    value: u32,
    stride: u16,
    q: u32,
}

impl Quotient {
    /// The quotient `q` of `value` by `stride`, as the decoding found it.
    pub(super) fn known(value: u32, stride: u16, q: u32) -> Quotient {
        debug_assert_eq!(q, quotient(value, stride));
        Quotient { value, stride, q }
    }

    /// `value / stride` ([`quotient`]), from this entry if it is of `value` and `stride`.
    #[inline]
    pub(super) fn of(self, value: u32, stride: u16) -> u32 {
        if self.value == value && self.stride == stride {
            self.q
        } else {
            quotient(value, stride)
        }
    }
}

/// The reference's quotients ([`Quotient`]), sequence and acknowledgment numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Quotients {
    /// The sequence number's.
    pub(super) seq: Quotient,
    /// The acknowledgment number's.
    pub(super) ack: Quotient,
    /// The next sequence number's (what a sequence number is decoded against).
    pub(super) next: Quotient,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_quotient_answers_only_for_its_own_number_and_stride() {
        let kept = Quotient::known(1448 * 7 + 5, 1448, 7);
        assert_eq!(kept.of(1448 * 7 + 5, 1448), 7);
        // Another number, another stride, no stride: divided, not the kept answer.
        assert_eq!(kept.of(1448 * 9, 1448), 9);
        assert_eq!(kept.of(1448 * 7 + 5, 1000), 10);
        assert_eq!(kept.of(1448 * 7 + 5, 0), 0);
        // Nothing kept yet.
        assert_eq!(Quotient::default().of(3000, 1000), 3);
        assert_eq!(Quotient::default().of(0, 0), 0);
    }
}
