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
    /// `bit` if appending `value` to a column in order whose live values run from `first` to
    /// `last` leaves it out of order, else 0 (without branches).
    #[inline]
    pub fn breaks(self, bit: u16, first: u32, last: u32, value: u32) -> u16 {
        let (o, l) = (value.wrapping_sub(first), last.wrapping_sub(first));
        let keeps = match self {
            Space::Wrap32 => (o >= l) & (o < 1 << 31),
            Space::Wrap16 => {
                let (o, l) = (o as u16, l as u16);
                (o >= l) & (o < 1 << 15)
            }
            Space::Plain => (value >= last) & (value >= first),
        };
        bit & u16::from(!keeps).wrapping_neg()
    }
}

/// Whether `column` is in order, given the offset of a value `g` from the first, `offset(first,
/// g)`, and the bound every offset stays below (a loop without branches, which vectorizes).
fn in_order<T: Copy>(column: &[T], offset: impl Fn(T, T) -> u32, limit: u32) -> bool {
    let (Some(&first), Some(&last)) = (column.first(), column.last()) else {
        return true;
    };
    let rising = column.iter().zip(&column[1..]).fold(true, |ok, (&a, &b)| {
        ok & (offset(first, b) >= offset(first, a))
    });
    rising & (offset(first, last) < limit)
}

/// [`in_order`] for a 32-bit column.
fn in_order_32(space: Space, column: &[u32]) -> bool {
    match space {
        Space::Plain => column
            .iter()
            .zip(&column[1..])
            .fold(true, |ok, (&a, &b)| ok & (b >= a)),
        _ => in_order(column, |f: u32, g: u32| g.wrapping_sub(f), 1 << 31),
    }
}

/// [`in_order`] for a 16-bit sequence-space column.
fn in_order_16(column: &[u16]) -> bool {
    in_order(
        column,
        |f: u16, g: u16| u32::from(g.wrapping_sub(f)),
        1 << 15,
    )
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

    /// Values were appended to every column; those of the columns in `broken` (a mask) left
    /// their column's order ([`Space::breaks`]).
    #[inline]
    pub fn pushed(&mut self, broken: u16) {
        let broken = broken & self.sorted.get();
        self.sorted.set(self.sorted.get() & !broken);
        self.unsorted.set(self.unsorted.get() | broken);
    }

    /// Whether 32-bit sequence-space column `bit` is in order (checked if unknown).
    #[inline]
    pub fn sorted_32(&self, bit: u16, column: &[u32]) -> bool {
        self.is_sorted(bit, || in_order_32(Space::Wrap32, column))
    }

    /// Whether column `bit` is in order (checked by `in_order` if unknown).
    #[inline]
    fn is_sorted(&self, bit: u16, in_order: impl FnOnce() -> bool) -> bool {
        if self.sorted.get() & bit != 0 {
            return true;
        }
        if self.unsorted.get() & bit != 0 {
            return false;
        }
        let sorted = in_order();
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
        if !self.is_sorted(bit, || in_order_32(Space::Wrap32, column)) {
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
        if !self.is_sorted(bit, || in_order_16(column)) {
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
        self.is_sorted(bit, || in_order_32(Space::Plain, column))
            .then(|| (v.min(first), v.max(last)))
    }

    /// Whether every value of plain column `bit` equals `v`, if the column is in order (then
    /// its first and last bound every value); `None` if the caller must scan.
    #[inline]
    pub fn all_equal(&self, bit: u16, column: &[u32], v: u32) -> Option<bool> {
        let (&first, &last) = (column.first()?, column.last()?);
        self.is_sorted(bit, || in_order_32(Space::Plain, column))
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
                            order.pushed(
                                Space::Wrap32.breaks(b32, f, l, x32)
                                    | Space::Wrap16.breaks(b16, w16[0].into(), w16[w16.len() - 1].into(), x16.into())
                                    | Space::Plain.breaks(bp, plain[0], plain[plain.len() - 1], x),
                            );
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
                            plain.windows(2).all(|w| w[0] <= w[1]));
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
