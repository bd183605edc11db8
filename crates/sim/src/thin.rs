//! Bounded traces: a series that keeps at most a fixed number of points however long the run,
//! thinned evenly (every point until it fills, then every 2nd, every 4th, ... point offered).

use serde::Serialize;

/// The most points a plot trace keeps (a plot is 1800 pixels wide at most: two a pixel).
pub const TRACE_POINTS: usize = 4096;

/// At most `cap` points of a series offered one by one, evenly thinned: the points kept are
/// those whose offer index is a multiple of [`Thinned::stride`], which doubles each time the
/// buffer fills. Memory stays bounded by `cap` points whatever the number offered.
#[derive(Debug, Clone, PartialEq)]
pub struct Thinned<T> {
    points: Vec<T>,
    cap: usize,
    stride: u64,
    offered: u64,
}

impl<T> Thinned<T> {
    /// An empty series keeping at most `cap` points (at least 2).
    pub fn new(cap: usize) -> Thinned<T> {
        Thinned {
            points: Vec::new(),
            cap: cap.max(2),
            stride: 1,
            offered: 0,
        }
    }

    /// Offers the next point of the series.
    pub fn push(&mut self, point: T) {
        if self.offered.is_multiple_of(self.stride) {
            self.points.push(point);
            if self.points.len() >= self.cap {
                let mut index = 0;
                self.points.retain(|_| {
                    index += 1;
                    index % 2 == 1
                });
                self.stride *= 2;
            }
        }
        self.offered += 1;
    }

    /// The points kept, in the order offered.
    pub fn points(&self) -> &[T] {
        &self.points
    }

    /// The last point kept, if any.
    pub fn last(&self) -> Option<&T> {
        self.points.last()
    }

    /// Every how many offered points one is kept.
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// Points offered so far.
    pub fn offered(&self) -> u64 {
        self.offered
    }
}

impl<T: Serialize> Serialize for Thinned<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.points.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_most_cap_points_evenly_spaced() {
        let mut t = Thinned::new(8);
        for i in 0..5u64 {
            t.push(i);
        }
        assert_eq!(t.points(), [0, 1, 2, 3, 4]);
        assert_eq!(t.stride(), 1);
        for i in 5..1000u64 {
            t.push(i);
            assert!(t.points().len() < 8);
        }
        assert_eq!(t.offered(), 1000);
        let stride = t.stride();
        assert!(stride > 1);
        // Every kept point is a multiple of the stride, and none of those is missing.
        let expected: Vec<u64> = (0..1000).step_by(stride as usize).collect();
        assert_eq!(t.points(), expected.as_slice());
    }
}
