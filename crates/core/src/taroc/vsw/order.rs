//! Which of a window's columns are in order, kept up to date as entries come and go, so that
//! the span of a column in order comes from its first and last entries instead of a scan.
//!
//! A column is *in order* when every entry's offset from the first entry is defined and the
//! offsets never decrease, oldest to newest. What an offset is depends on the column's
//! [`Space`]. Removing entries (from the front or the middle) keeps a column in order; a push
//! keeps it in order if the new value's offset is at least the last's. A column found out of
//! order stays so until an entry leaves; it is then checked again when next asked.

use core::cell::Cell;

/// How a column's values are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// 32-bit sequence space: an offset is `value - first` (wrapping), below 2^31.
    Wrap32,
    /// 16-bit sequence space: an offset is `value - first` (wrapping), below 2^15.
    Wrap16,
    /// Plain unsigned numbers: an offset is `value - first`, with `value >= first`.
    Plain,
}

impl Space {
    /// The offset of `value` from `first`, if it has one (values of 16-bit columns widened).
    #[inline]
    fn offset(self, first: u32, value: u32) -> Option<u32> {
        match self {
            Space::Wrap32 => Some(value.wrapping_sub(first)).filter(|&o| o < 1 << 31),
            Space::Wrap16 => {
                Some(u32::from((value as u16).wrapping_sub(first as u16))).filter(|&o| o < 1 << 15)
            }
            Space::Plain => value.checked_sub(first),
        }
    }
}

/// Whether `column` (values widened to `u32`) is in order in `space`.
fn in_order(space: Space, column: impl Iterator<Item = u32>) -> bool {
    let mut column = column.peekable();
    let Some(&first) = column.peek() else {
        return true;
    };
    let mut last = 0;
    for g in column {
        match space.offset(first, g) {
            Some(o) if o >= last => last = o,
            _ => return false,
        }
    }
    true
}

/// The order of up to 16 columns of one window, one bit per column (the caller numbers them):
/// known in order, known out of order, or unknown (neither).
#[derive(Debug, Clone, Default)]
pub struct ColumnOrder {
    sorted: Cell<u16>,
    unsorted: Cell<u16>,
}

impl ColumnOrder {
    /// Every column in order (an empty window).
    pub fn reset(&mut self) {
        self.sorted.set(u16::MAX);
        self.unsorted.set(0);
    }

    /// Every column unknown (values replaced).
    pub fn forget(&mut self) {
        self.sorted.set(0);
        self.unsorted.set(0);
    }

    /// Entries left: a column out of order may be in order now.
    #[inline]
    pub fn removed(&mut self) {
        self.unsorted.set(0);
    }

    /// Column `bit` (a mask of one bit), whose live values are `first..=last` and not empty, is
    /// getting `value` appended.
    #[inline]
    pub fn pushed(&mut self, bit: u16, space: Space, first: u32, last: u32, value: u32) {
        if self.sorted.get() & bit == 0 {
            return;
        }
        let keeps = match (space.offset(first, value), space.offset(first, last)) {
            (Some(o), Some(l)) => o >= l,
            _ => false,
        };
        if !keeps {
            self.sorted.set(self.sorted.get() & !bit);
            self.unsorted.set(self.unsorted.get() | bit);
        }
    }

    /// Whether column `bit` is known to be in order (not checked if unknown).
    #[inline]
    pub fn known_sorted(&self, bit: u16) -> bool {
        self.sorted.get() & bit != 0
    }

    /// Whether column `bit`, whose live values are `column`, is in order (checked if unknown).
    #[inline]
    fn is_sorted(&self, bit: u16, space: Space, column: impl Iterator<Item = u32>) -> bool {
        if self.sorted.get() & bit != 0 {
            return true;
        }
        if self.unsorted.get() & bit != 0 {
            return false;
        }
        let sorted = in_order(space, column);
        if sorted {
            self.sorted.set(self.sorted.get() | bit);
        } else {
            self.unsorted.set(self.unsorted.get() | bit);
        }
        sorted
    }

    /// The smallest and largest `(v - g) as i32` over the values `g` of 32-bit sequence-space
    /// column `bit`, and 0 (as a fold from `(0, 0)` gives), if the column is in order and no
    /// such distance wraps; `None` if the caller must scan.
    #[inline]
    pub fn distances_32(&self, bit: u16, column: &[u32], v: u32) -> Option<(i32, i32)> {
        let (&first, &last) = (column.first()?, column.last()?);
        if !self.is_sorted(bit, Space::Wrap32, column.iter().copied()) {
            return None;
        }
        let hi = i64::from(v.wrapping_sub(first) as i32);
        let lo = hi - i64::from(last.wrapping_sub(first));
        let lo = i32::try_from(lo).ok()?;
        Some((lo.min(0), (hi as i32).max(0)))
    }

    /// [`ColumnOrder::distances_32`] in 16-bit sequence space.
    #[inline]
    pub fn distances_16(&self, bit: u16, column: &[u16], v: u16) -> Option<(i16, i16)> {
        let (&first, &last) = (column.first()?, column.last()?);
        if !self.is_sorted(bit, Space::Wrap16, column.iter().map(|&g| g.into())) {
            return None;
        }
        let hi = i32::from(v.wrapping_sub(first) as i16);
        let lo = hi - i32::from(last.wrapping_sub(first));
        let lo = i16::try_from(lo).ok()?;
        Some((lo.min(0), (hi as i16).max(0)))
    }

    /// The smallest and largest of `v` and the values of plain column `bit`, if the column is in
    /// order; `None` if the caller must scan.
    #[inline]
    pub fn range(&self, bit: u16, column: &[u32], v: u32) -> Option<(u32, u32)> {
        let (&first, &last) = (column.first()?, column.last()?);
        self.is_sorted(bit, Space::Plain, column.iter().copied())
            .then(|| (v.min(first), v.max(last)))
    }

    /// Whether every value of plain column `bit` equals `v`, if the column is in order (then
    /// its first and last bound every value); `None` if the caller must scan.
    #[inline]
    pub fn all_equal(&self, bit: u16, column: &[u32], v: u32) -> Option<bool> {
        let (&first, &last) = (column.first()?, column.last()?);
        self.is_sorted(bit, Space::Plain, column.iter().copied())
            .then_some(first == v && last == v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// The fold the window's scan makes over a 32-bit column.
    fn scan_32(column: &[u32], v: u32) -> (i32, i32) {
        column.iter().fold((0, 0), |(lo, hi), &g| {
            let d = v.wrapping_sub(g) as i32;
            (lo.min(d), hi.max(d))
        })
    }

    fn scan_16(column: &[u16], v: u16) -> (i16, i16) {
        column.iter().fold((0, 0), |(lo, hi), &g| {
            let d = v.wrapping_sub(g) as i16;
            (lo.min(d), hi.max(d))
        })
    }

    /// Values near each other (so that columns are often in order), or anywhere.
    fn value() -> impl Strategy<Value = u32> {
        prop_oneof![
            3 => (0u32..64).prop_map(|d| d.wrapping_mul(1000)),
            2 => (0u32..64).prop_map(|d| d.wrapping_mul(1000).wrapping_sub(20_000)),
            1 => any::<u32>(),
            1 => Just(u32::MAX),
        ]
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(u32),
        PopFront,
        RemoveAt(usize),
        Query(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => value().prop_map(Op::Push),
            1 => Just(Op::PopFront),
            1 => any::<usize>().prop_map(Op::RemoveAt),
            3 => value().prop_map(Op::Query),
        ]
    }

    proptest! {
        /// The kept order gives what a scan gives, over random pushes, removals from the front
        /// and the middle, and queries, in every space.
        #[test]
        fn kept_order_answers_as_a_scan(base in any::<u32>(), ops in proptest::collection::vec(op(), 1..80)) {
            let mut w32: Vec<u32> = Vec::new();
            let mut w16: Vec<u16> = Vec::new();
            let mut plain: Vec<u32> = Vec::new();
            let mut order = ColumnOrder::default();
            order.reset();
            let (b32, b16, bp) = (1, 2, 4);
            for op in ops {
                match op {
                    Op::Push(x) => {
                        let x32 = x.wrapping_add(base);
                        let x16 = (x >> 4) as u16;
                        if let (Some(&f), Some(&l)) = (w32.first(), w32.last()) {
                            order.pushed(b32, Space::Wrap32, f, l, x32);
                            order.pushed(b16, Space::Wrap16, w16[0].into(), w16[w16.len() - 1].into(), x16.into());
                            order.pushed(bp, Space::Plain, plain[0], plain[plain.len() - 1], x);
                        } else {
                            order.reset();
                        }
                        w32.push(x32);
                        w16.push(x16);
                        plain.push(x);
                    }
                    Op::PopFront if !w32.is_empty() => {
                        w32.remove(0);
                        w16.remove(0);
                        plain.remove(0);
                        order.removed();
                    }
                    Op::RemoveAt(i) if !w32.is_empty() => {
                        let i = i % w32.len();
                        w32.remove(i);
                        w16.remove(i);
                        plain.remove(i);
                        order.removed();
                    }
                    Op::Query(v) => {
                        let v32 = v.wrapping_add(base);
                        if let Some(d) = order.distances_32(b32, &w32, v32) {
                            prop_assert_eq!(d, scan_32(&w32, v32));
                        }
                        let v16 = (v >> 4) as u16;
                        if let Some(d) = order.distances_16(b16, &w16, v16) {
                            prop_assert_eq!(d, scan_16(&w16, v16));
                        }
                        let range = plain.iter().fold((v, v), |(lo, hi), &g| (lo.min(g), hi.max(g)));
                        if let Some(r) = order.range(bp, &plain, v) {
                            prop_assert_eq!(r, range);
                        }
                        if let Some(e) = order.all_equal(bp, &plain, v) {
                            prop_assert_eq!(e, plain.iter().all(|&g| g == v));
                        }
                        // A column in order is answered without a scan.
                        prop_assert_eq!(order.range(bp, &plain, v).is_some() || plain.is_empty(),
                            in_order(Space::Plain, plain.iter().copied()));
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn a_column_in_order_across_the_wrap_is_answered_without_a_scan() {
        let column = [u32::MAX - 10, u32::MAX, 5, 5, 100];
        let mut order = ColumnOrder::default();
        order.reset();
        assert_eq!(order.distances_32(1, &column, 200), Some((0, 211)));
        assert_eq!(scan_32(&column, 200), (0, 211));
        assert_eq!(order.distances_32(1, &column, 0), Some((-100, 11)));
        assert_eq!(scan_32(&column, 0), (-100, 11));
    }
}
