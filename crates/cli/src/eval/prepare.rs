//! The scheme-independent part of an evaluation: which direction each packet travels, what
//! happens to it before the compressor, and the order both directions reach their compressors.
//!
//! Packets go through as they are read from the capture: each arrival releases zero or more
//! packets of its own direction (itself, and held packets whose wait is over), so both
//! directions are merged in release order by construction; the packets still held at the end of
//! the capture come out last, forward direction first.

use pcap_file::pcap::{PcapPacket, PcapWriter};
use pcap_file::DataLink;
use taroc_wire::ip::IpInfo;
use taroc_wire::summary::summarize;

use super::{Options, Way};
use crate::capture::{pcap_header, Capture};
use crate::impair::BeforeCompressor;

/// The direction of a packet: 0 (forward, source below destination) or 1 (reverse).
pub fn direction(packet: &[u8]) -> usize {
    match IpInfo::parse(packet) {
        Ok(ip) if ip.src >= ip.dst => 1,
        _ => 0,
    }
}

/// A pcap file (raw IP, microseconds) of the packets of `capture` that travel `way`
/// ([`direction`]), with their times: what a link used one way only carries, for a tool
/// that reads files (`taroc eval --one-way` filters the same packets as they arrive).
pub fn one_way_pcap(capture: &Capture, way: Way) -> Vec<u8> {
    let mut writer = PcapWriter::with_header(Vec::new(), pcap_header(DataLink::RAW))
        .expect("writing a pcap header to memory cannot fail");
    for (packet, &time) in capture.packets.iter().zip(&capture.times) {
        if direction(packet) == way.index() {
            writer
                .write_packet(&PcapPacket::new(time, packet.len() as u32, packet))
                .expect("writing a packet to memory cannot fail");
        }
    }
    writer.into_writer()
}

/// The payload bytes present in a packet (per its IP length, capped at what was captured).
pub fn payload_present(packet: &[u8]) -> usize {
    summarize(packet).map_or(0, |s| {
        s.payload_len.min(packet.len().saturating_sub(s.header_len))
    })
}

/// A packet released to the compressor of `direction`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// The packet's position among the capture's IP packets, from 0.
    pub index: usize,
    /// 0 forward, 1 reverse.
    pub direction: usize,
    /// The packet, from its IP header on.
    pub packet: Vec<u8>,
}

/// The impairments before both directions' compressors, fed one captured packet at a time.
#[derive(Debug, Clone)]
pub struct Schedule {
    directions: [BeforeCompressor<(usize, Vec<u8>)>; 2],
    released: Vec<(usize, Vec<u8>)>,
    /// Packets arrived so far: the index of the next one.
    arrived: usize,
    /// The only direction that crosses the link (`--one-way`), if one.
    one_way: Option<Way>,
    /// Packets of the other direction, which went another way.
    off_link: u64,
}

impl Schedule {
    /// The impairments `options` ask for.
    pub fn new(options: &Options) -> Schedule {
        Schedule {
            directions: [0, 1].map(|d| {
                BeforeCompressor::new(options.seed, d, options.loss_before, options.reorder_before)
            }),
            released: Vec::new(),
            arrived: 0,
            one_way: options.one_way,
            off_link: 0,
        }
    }

    /// The next captured packet arrives: appends to `out` the packets it releases, in the
    /// order they reach their compressor (none if its direction does not cross the link).
    pub fn arrive(&mut self, packet: &[u8], out: &mut Vec<Released>) {
        let d = direction(packet);
        let index = self.arrived;
        self.arrived += 1;
        if self.one_way.is_some_and(|way| way.index() != d) {
            self.off_link += 1;
            return;
        }
        self.directions[d].arrive((index, packet.to_vec()), &mut self.released);
        out.extend(self.released.drain(..).map(|(index, packet)| Released {
            index,
            direction: d,
            packet,
        }));
    }

    /// The end of the capture: appends the packets still held, forward direction first.
    pub fn finish(&mut self, out: &mut Vec<Released>) {
        for d in 0..2 {
            self.directions[d].finish(&mut self.released);
            out.extend(self.released.drain(..).map(|(index, packet)| Released {
                index,
                direction: d,
                packet,
            }));
        }
    }

    /// Packets removed before the compressors (`--loss-before`), both directions.
    pub fn removed(&self) -> u64 {
        self.directions.iter().map(|d| d.removed).sum()
    }

    /// Packets of the direction that does not cross the link (`--one-way`).
    pub fn off_link(&self) -> u64 {
        self.off_link
    }

    /// Packets held back before the compressors (`--reorder-before`), both directions.
    pub fn reordered(&self) -> u64 {
        self.directions.iter().map(|d| d.reordered()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::tests::packet;

    #[test]
    fn a_one_way_pcap_holds_one_direction_with_its_times() {
        let capture = Capture {
            packets: vec![packet(1, 2, 0, 3), packet(2, 1, 0, 4), packet(1, 2, 0, 5)],
            times: [0, 1, 2].map(std::time::Duration::from_secs).to_vec(),
            ..Capture::default()
        };
        let forward = crate::capture::parse("f", &one_way_pcap(&capture, Way::Forward)).unwrap();
        assert_eq!(
            forward.packets,
            [capture.packets[0].clone(), capture.packets[2].clone()]
        );
        assert_eq!(forward.times, [0, 2].map(std::time::Duration::from_secs));
        let reverse = crate::capture::parse("r", &one_way_pcap(&capture, Way::Reverse)).unwrap();
        assert_eq!(reverse.packets, [capture.packets[1].clone()]);
    }

    #[test]
    fn directions_follow_address_order() {
        assert_eq!(direction(&packet(1, 2, 0, 0)), 0);
        assert_eq!(direction(&packet(2, 1, 0, 0)), 1);
        assert_eq!(direction(&[0xFF; 3]), 0);
        assert_eq!(payload_present(&packet(1, 2, 0, 7)), 7);
        assert_eq!(payload_present(&packet(1, 2, 0, 7)[..45]), 5);
    }

    /// The sequence numbers the compressors see, per arrival (`None`: the end); checks that
    /// each released packet keeps its position in the capture.
    fn run(options: &Options) -> Vec<(Option<u32>, usize, u32)> {
        let mut schedule = Schedule::new(options);
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut take = |at: Option<u32>, out: &mut Vec<Released>| {
            for r in out.drain(..) {
                let seq =
                    u32::from_be_bytes([r.packet[24], r.packet[25], r.packet[26], r.packet[27]]);
                // Packet i of direction d was the capture's packet 2i + d.
                assert_eq!(r.index, 2 * seq as usize + r.direction);
                seen.push((at, r.direction, seq));
            }
        };
        for i in 0..200u32 {
            for p in [packet(1, 2, i, 100), packet(2, 1, i, 0)] {
                schedule.arrive(&p, &mut out);
                take(Some(i), &mut out);
            }
        }
        schedule.finish(&mut out);
        take(None, &mut out);
        seen
    }

    #[test]
    fn packets_reach_their_compressors_in_capture_order_or_a_little_late() {
        let clean = run(&Options::default());
        let expected: Vec<_> = (0..200)
            .flat_map(|i| [(Some(i), 0, i), (Some(i), 1, i)])
            .collect();
        assert_eq!(clean, expected);
        // A held packet is released by a later arrival of its own direction.
        let options = Options {
            reorder_before: 0.3,
            reorder: 0.0,
            seed: 7,
            ..Options::default()
        };
        let late = run(&options);
        assert_eq!(late.len(), 400);
        assert!(late
            .iter()
            .any(|&(at, _, seq)| at.is_some_and(|at| at > seq)));
        for &(at, _, seq) in &late {
            assert!(
                at.is_none_or(|at| at >= seq && at <= seq + 3),
                "{seq} at {at:?}"
            );
        }
        let ends: Vec<usize> = late.iter().filter(|r| r.0.is_none()).map(|r| r.1).collect();
        assert!(ends.windows(2).all(|w| w[0] <= w[1]), "forward first");
    }
}
