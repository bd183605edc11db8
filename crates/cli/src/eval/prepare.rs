//! The scheme-independent part of an evaluation: which direction each packet travels, what
//! happens to it before the compressor, and the order both directions reach their compressors.

use taroc_wire::ip::IpInfo;
use taroc_wire::summary::summarize;

use super::Options;
use crate::capture::Capture;
use crate::impair::{before_compressor, BeforeCompressor};

/// The scheme-independent part of an evaluation: directions, impairments before the
/// compressor, and payload sizes.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Per direction (forward, reverse), the packets the compressor sees, in order.
    pub directions: [BeforeCompressor; 2],
    /// Per packet of the capture, its payload bytes present in the record (per the IP length,
    /// capped at what was captured).
    pub payload: Vec<usize>,
    /// Both directions merged in time: (direction, position in that direction's `order`), in
    /// the order the packets reach their compressors.
    pub schedule: Vec<(u8, u32)>,
}

/// The direction of a packet: 0 (forward, source below destination) or 1 (reverse).
pub fn direction(packet: &[u8]) -> usize {
    match IpInfo::parse(packet) {
        Ok(ip) if ip.src >= ip.dst => 1,
        _ => 0,
    }
}

/// Splits the capture into directions and applies the impairments before the compressor.
pub fn prepare(capture: &Capture, options: &Options) -> Prepared {
    let mut split: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut payload = Vec::with_capacity(capture.packets.len());
    for (index, packet) in capture.packets.iter().enumerate() {
        split[direction(packet)].push(index);
        let present = summarize(packet).map_or(0, |s| {
            s.payload_len.min(packet.len().saturating_sub(s.header_len))
        });
        payload.push(present);
    }
    let directions = [0, 1].map(|d| {
        before_compressor(
            &split[d],
            options.seed,
            d,
            options.loss_before,
            options.reorder_before,
        )
    });
    let schedule = merge(&directions);
    Prepared {
        directions,
        payload,
        schedule,
    }
}

/// Merges the two directions by release time (ties: forward first; within a direction, its own
/// order).
fn merge(directions: &[BeforeCompressor; 2]) -> Vec<(u8, u32)> {
    let total = directions[0].order.len() + directions[1].order.len();
    let mut schedule = Vec::with_capacity(total);
    let mut next = [0usize; 2];
    while schedule.len() < total {
        let at = |d: usize| directions[d].released_at.get(next[d]).copied();
        let d = match (at(0), at(1)) {
            (Some(a), Some(b)) => usize::from(b < a),
            (Some(_), None) => 0,
            _ => 1,
        };
        schedule.push((d as u8, next[d] as u32));
        next[d] += 1;
    }
    schedule
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::tests::{capture, packet};

    #[test]
    fn directions_follow_address_order() {
        assert_eq!(direction(&packet(1, 2, 0, 0)), 0);
        assert_eq!(direction(&packet(2, 1, 0, 0)), 1);
        assert_eq!(direction(&[0xFF; 3]), 0);
    }

    #[test]
    fn directions_are_merged_in_capture_order() {
        let prepared = prepare(&capture(), &Options::default());
        let expected: Vec<(u8, u32)> = (0..200).flat_map(|i| [(0, i), (1, i)]).collect();
        assert_eq!(prepared.schedule, expected);
        // A held-back packet is scheduled where it is released, not where it was captured.
        let options = Options {
            reorder_before: 0.3,
            seed: 7,
            ..Options::default()
        };
        let prepared = prepare(&capture(), &options);
        assert_eq!(prepared.schedule.len(), 400);
        let released: Vec<usize> = prepared
            .schedule
            .iter()
            .map(|&(d, p)| prepared.directions[usize::from(d)].released_at[p as usize])
            .collect();
        assert!(released.windows(2).all(|w| w[0] <= w[1]), "{released:?}");
    }
}
