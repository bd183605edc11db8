//! Columns of one type in one allocation: a window's columns of `u32`, of `u16` and of `u8`
//! each take one, so that a new window allocates a few times rather than once per column, and
//! a push that writes entry `i` of every column checks `i` once (every column is a slice of
//! the same length, its room).

use alloc::vec;
use alloc::vec::Vec;

/// `N` columns of `T`, each [`Block::room`] long, one after the other in one allocation.
#[derive(Debug, Clone)]
pub struct Block<T, const N: usize> {
    room: usize,
    values: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for Block<T, N> {
    fn default() -> Self {
        Block::new(0)
    }
}

impl<T: Copy + Default, const N: usize> Block<T, N> {
    /// `N` columns of `room` default values.
    pub fn new(room: usize) -> Self {
        Block {
            room,
            values: vec![T::default(); N * room],
        }
    }

    /// How long each column is.
    #[inline]
    pub fn room(&self) -> usize {
        self.room
    }

    /// Column `k`.
    #[inline(always)]
    pub fn column(&self, k: usize) -> &[T] {
        &self.values[k * self.room..][..self.room]
    }

    /// Entries `from..to` of column `k` (`to` at most the room), sliced in one step.
    #[inline(always)]
    pub fn part(&self, k: usize, from: usize, to: usize) -> &[T] {
        debug_assert!(from <= to && to <= self.room && k < N);
        let at = k * self.room;
        &self.values[at + from..at + to]
    }

    /// Entries `from..to` of every column (`to` at most the room): one check of the range
    /// covers them all.
    #[inline(always)]
    pub fn parts(&self, from: usize, to: usize) -> [&[T]; N] {
        let room = self.room;
        let mut rest: &[T] = &self.values;
        core::array::from_fn(|_| {
            let (column, tail) = rest.split_at(room);
            rest = tail;
            &column[from..to]
        })
    }

    /// Every column, to write: all of one length, so that one check of an index covers them
    /// all.
    #[inline(always)]
    pub fn columns_mut(&mut self) -> [&mut [T]; N] {
        let room = self.room;
        let mut rest: &mut [T] = &mut self.values;
        core::array::from_fn(|_| {
            let (column, tail) = core::mem::take(&mut rest).split_at_mut(room);
            rest = tail;
            column
        })
    }

    /// Copies entry `from` of every column over entry `to`.
    #[inline]
    pub fn copy(&mut self, from: usize, to: usize) {
        for column in self.columns_mut() {
            column[to] = column[from];
        }
    }

    /// Moves entries `from..to` of every column to `at` onwards.
    pub fn copy_within(&mut self, from: usize, to: usize, at: usize) {
        for column in self.columns_mut() {
            column.copy_within(from..to, at);
        }
    }

    /// Makes every column `room` long (never shorter than it is), each keeping its values at
    /// their places.
    pub fn grow(&mut self, room: usize) {
        if room <= self.room {
            return;
        }
        let mut grown = Block::new(room);
        for (new, old) in grown.columns_mut().into_iter().zip(self.columns_mut()) {
            new[..old.len()].copy_from_slice(old);
        }
        *self = grown;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_their_values_as_the_block_grows_and_moves() {
        let mut b: Block<u32, 3> = Block::new(4);
        for (k, column) in b.columns_mut().into_iter().enumerate() {
            for (i, v) in column.iter_mut().enumerate() {
                *v = (10 * k + i) as u32;
            }
        }
        b.grow(8);
        assert_eq!(b.room(), 8);
        assert_eq!(b.column(1), &[10, 11, 12, 13, 0, 0, 0, 0]);
        b.copy_within(1, 4, 0);
        assert_eq!(b.column(2)[..4], [21, 22, 23, 23]);
        b.copy(0, 5);
        assert_eq!(b.column(0)[5], 1);
        assert_eq!(b.column(1)[5], 11);
    }
}
