//! Freshness of authenticated frames: the anti-replay window (the highest accepted counter and a
//! bitmap of the [`WINDOW`] counters below it, as IPsec and WireGuard keep) and the rebuilding
//! of a short form's 16-bit counter.

use super::WINDOW;

/// The highest accepted counter and which of the [`WINDOW`] counters below it were seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayWindow {
    highest: u64,
    seen: [u64; (WINDOW / 64) as usize],
}

impl ReplayWindow {
    /// A window whose highest accepted counter is `first`, and that refuses every counter
    /// below it: frames of the peer from before it was accepted are not taken later.
    pub fn new(first: u64) -> ReplayWindow {
        ReplayWindow {
            highest: first,
            seen: [u64::MAX; (WINDOW / 64) as usize],
        }
    }

    /// The highest accepted counter.
    pub fn highest(&self) -> u64 {
        self.highest
    }

    fn bit(counter: u64) -> (usize, u64) {
        let i = counter % WINDOW;
        ((i / 64) as usize, 1 << (i % 64))
    }

    fn set(&mut self, counter: u64) {
        let (word, mask) = ReplayWindow::bit(counter);
        self.seen[word] |= mask;
    }

    /// Accepts `counter` if it is new: above the highest, or within the window and not seen.
    pub fn accept(&mut self, counter: u64) -> bool {
        if counter > self.highest {
            let ahead = counter - self.highest;
            if ahead >= WINDOW {
                self.seen = [0; (WINDOW / 64) as usize];
            } else {
                for c in self.highest + 1..=counter {
                    let (word, mask) = ReplayWindow::bit(c);
                    self.seen[word] &= !mask;
                }
            }
            self.highest = counter;
            self.set(counter);
            return true;
        }
        if self.highest - counter >= WINDOW {
            return false;
        }
        let (word, mask) = ReplayWindow::bit(counter);
        if self.seen[word] & mask != 0 {
            return false;
        }
        self.seen[word] |= mask;
        true
    }
}

/// The value with low 16 bits `low` nearest `reference`.
pub fn nearest_counter(reference: u64, low: u16) -> u64 {
    let candidate = (reference & !0xffff) | u64::from(low);
    let ahead = candidate.wrapping_sub(reference) as i64;
    if ahead > 0x8000 {
        candidate.wrapping_sub(0x1_0000)
    } else if ahead < -0x8000 {
        candidate.wrapping_add(0x1_0000)
    } else {
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_counter_takes_the_value_nearest_the_reference() {
        assert_eq!(nearest_counter(0x1_fff0, 0x0005), 0x2_0005);
        assert_eq!(nearest_counter(0x2_0005, 0xfff0), 0x1_fff0);
        assert_eq!(nearest_counter(0x2_0005, 0x0004), 0x2_0004);
        assert_eq!(nearest_counter(0x5_0000, 0x8000), 0x5_8000);
        assert_eq!(nearest_counter(0x5_0000, 0x8001), 0x4_8001);
        assert_eq!(nearest_counter(0, 0xffff), u64::MAX);
    }

    #[test]
    fn the_window_accepts_each_counter_once_and_nothing_older_than_itself() {
        let mut w = ReplayWindow::new(5000);
        assert!(!w.accept(5000));
        assert!(
            !w.accept(4999),
            "below the first: before the peer was accepted"
        );
        assert!(w.accept(5003));
        assert_eq!(w.highest(), 5003);
        assert!(w.accept(5001), "within the window, not seen");
        assert!(!w.accept(5001));
        assert!(w.accept(5002));
        assert!(!w.accept(4990), "below the first, within the window");
        assert!(w.accept(5003 + WINDOW - 1));
        assert!(w.accept(5004), "the oldest unseen counter the window holds");
        assert!(!w.accept(5002), "older than the window");
        let w_highest = 5003 + WINDOW - 1;
        // A jump of a whole window forgets every bit; the counters it skipped are new.
        assert!(w.accept(w_highest + 2 * WINDOW));
        assert!(w.accept(w_highest + 2 * WINDOW - 1));
        assert!(!w.accept(w_highest + 2 * WINDOW - 1));
        // A jump within the window clears the bits it passes (their slots are reused).
        let mut w = ReplayWindow::new(0);
        assert!(w.accept(WINDOW - 1));
        assert!(w.accept(WINDOW + 10));
        assert!(
            w.accept(WINDOW + 5),
            "its slot, counter 5's, was cleared by the jump"
        );
        assert!(!w.accept(WINDOW - 1));
    }
}
