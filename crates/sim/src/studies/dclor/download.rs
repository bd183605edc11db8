//! What one download records: its time, its timeouts with their ground-truth labels, and the
//! response's decisions scored against them.

use serde::Serialize;

/// One finished download.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Download {
    /// Index of its class in the mix.
    pub class: usize,
    /// First SYN sent to the last byte delivered in order, seconds.
    pub time_s: f64,
    /// Retransmission timeouts of the data sender.
    pub timeouts: u32,
    /// Of those, spurious by the ground truth (the guarded segment was not dropped).
    pub spurious: u32,
    /// Of those, declared spurious by the response.
    pub detected: u32,
    /// The response's decisions matched to each timeout's label.
    pub scoring: Scoring,
    /// Payload bytes the receiver got twice.
    pub redundant_bytes: u64,
    /// The sender's cwnd, bytes, averaged over the ACKs it received.
    pub mean_cwnd_bytes: f64,
}

/// One retransmission timeout of a download: its ground-truth label and what followed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeoutRecord {
    /// The segment the timer guarded was not dropped (ground truth).
    pub spurious: bool,
    /// It repeats the previous timeout: no ACK advanced `snd_una` in between (a backed-off
    /// timer expiring again, typically while a stall still holds the connection).
    pub repeat: bool,
    /// The response declared its episode spurious.
    pub declared: bool,
    /// The highest offset sent when it expired.
    pub sent: u64,
    /// An ACK advanced `snd_una` after it before the download ended.
    pub acked: bool,
    /// That first advancing ACK acknowledged everything sent (nothing outstanding was left to
    /// tell a spurious timeout from a genuine one).
    pub acked_all: bool,
    /// An ACK of everything sent before it expired reached the sender before the download
    /// ended (the evidence every response waits for at the latest).
    pub covered: bool,
}

impl TimeoutRecord {
    /// A timeout expired with `sent` the highest offset sent; `spurious` is its label.
    pub fn on_timeout(records: &mut Vec<TimeoutRecord>, spurious: bool, sent: u64) {
        let repeat = records.last().is_some_and(|r| !r.acked);
        records.push(TimeoutRecord {
            spurious,
            repeat,
            sent,
            ..TimeoutRecord::default()
        });
    }

    /// The sender processed an ACK: whether the response declared a spurious timeout on it,
    /// `snd_una` before and after it, and the highest offset sent before it. A declaration
    /// belongs to the latest episode (the latest timeout and the ones it repeats).
    pub fn after_ack(records: &mut [TimeoutRecord], declared: bool, una: (u64, u64), max: u64) {
        let Some(last) = records.len().checked_sub(1) else {
            return;
        };
        let first = records[..=last]
            .iter()
            .rposition(|r| !r.repeat)
            .unwrap_or(0);
        for r in &mut records[first..] {
            r.declared |= declared;
            if una.1 > una.0 && !r.acked {
                r.acked = true;
                r.acked_all = una.1 >= max;
            }
            r.covered |= una.1 >= r.sent;
        }
    }

    /// The decisions scored against the labels.
    pub fn score(records: &[TimeoutRecord]) -> Scoring {
        let mut s = Scoring::default();
        for r in records {
            match (r.spurious, r.declared) {
                (true, true) => s.true_detections += 1,
                (false, true) => s.false_detections += 1,
                (false, false) => {}
                (true, false) if r.acked_all => s.missed_all_acked += 1,
                (true, false) if !r.covered => s.missed_unresolved += 1,
                (true, false) => s.missed_other += 1,
            }
            if r.spurious && r.repeat {
                s.spurious_repeats += 1;
            }
        }
        s
    }
}

/// A response's decisions matched to the timeouts' ground-truth labels. A timeout the response
/// did not declare spurious counts as declared genuine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Scoring {
    /// Spurious timeouts declared spurious.
    pub true_detections: u64,
    /// Genuine timeouts declared spurious.
    pub false_detections: u64,
    /// Spurious timeouts not declared because the evidence never reached the sender: the
    /// download ended (its last byte reached the receiver) before an ACK of everything sent
    /// before the timeout came back, so the response had not decided yet.
    pub missed_unresolved: u64,
    /// Spurious timeouts not declared whose first advancing ACK acknowledged everything sent
    /// (RFC 3522 step 5 ends detection there without a D-SACK; F-RTO has no new data to send).
    pub missed_all_acked: u64,
    /// Spurious timeouts not declared for any other reason.
    pub missed_other: u64,
    /// Spurious timeouts that repeat an earlier one of the same episode.
    pub spurious_repeats: u64,
}

impl Scoring {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Scoring) {
        self.true_detections += other.true_detections;
        self.false_detections += other.false_detections;
        self.missed_unresolved += other.missed_unresolved;
        self.missed_all_acked += other.missed_all_acked;
        self.missed_other += other.missed_other;
        self.spurious_repeats += other.spurious_repeats;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two spurious expiries in one stall then a declaration: both detected, the second a
    /// repeat. A genuine one declared: a false detection. A spurious one whose first ACK
    /// acknowledged everything, and one whose download ended before the ACK of what it had
    /// sent: missed, each in its bin.
    #[test]
    fn declarations_belong_to_the_latest_episode_and_misses_are_binned() {
        let mut r = Vec::new();
        TimeoutRecord::on_timeout(&mut r, true, 3000);
        TimeoutRecord::on_timeout(&mut r, true, 3000);
        TimeoutRecord::after_ack(&mut r, false, (0, 1000), 3000);
        TimeoutRecord::after_ack(&mut r, true, (1000, 3000), 4000);
        TimeoutRecord::on_timeout(&mut r, false, 5000);
        TimeoutRecord::after_ack(&mut r, true, (3000, 5000), 5000);
        TimeoutRecord::on_timeout(&mut r, true, 6000);
        TimeoutRecord::after_ack(&mut r, false, (5000, 6000), 6000);
        TimeoutRecord::on_timeout(&mut r, true, 9000);
        TimeoutRecord::after_ack(&mut r, false, (6000, 7000), 9000);
        assert_eq!(
            TimeoutRecord::score(&r),
            Scoring {
                true_detections: 2,
                false_detections: 1,
                missed_unresolved: 1,
                missed_all_acked: 1,
                missed_other: 0,
                spurious_repeats: 1,
            }
        );
    }
}
