//! Golden tests of the RFC 1144 formats on hand-built packets, with the expected bytes worked out
//! from the RFC's text, behaviour tests (LRU slots, toss), and a property test of random flows.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum::{self, Sum};
use taroc_wire::tcp::flags;

use super::format::*;
use super::*;
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

/// A TCP/IPv4 packet, built with valid IP and TCP checksums.
#[derive(Debug, Clone)]
struct Pkt {
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    win: u16,
    id: u16,
    flags: u8,
    urg: u16,
    ttl: u8,
    tos: u8,
    /// The IP flags and fragment offset word.
    frag: u16,
    /// The four bits after the TCP data offset.
    reserved: u8,
    ip_options: Vec<u8>,
    tcp_options: Vec<u8>,
    data: Vec<u8>,
}

impl Default for Pkt {
    fn default() -> Pkt {
        Pkt {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            sport: 1024,
            dport: 80,
            seq: 1000,
            ack: 5000,
            win: 8192,
            id: 100,
            flags: flags::ACK,
            urg: 0,
            ttl: 64,
            tos: 0,
            frag: 0x4000,
            reserved: 0,
            ip_options: vec![],
            tcp_options: vec![],
            data: vec![],
        }
    }
}

/// `n` bytes of data.
fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

impl Pkt {
    fn build(&self) -> Vec<u8> {
        let ihl = 20 + self.ip_options.len();
        let thl = 20 + self.tcp_options.len();
        assert!(ihl & 3 == 0 && thl & 3 == 0 && ihl <= 60 && thl <= 60);
        let total = ihl + thl + self.data.len();
        let mut p = Vec::with_capacity(total);
        p.push(0x40 | (ihl / 4) as u8);
        p.push(self.tos);
        p.extend_from_slice(&(total as u16).to_be_bytes());
        p.extend_from_slice(&self.id.to_be_bytes());
        p.extend_from_slice(&self.frag.to_be_bytes());
        p.extend_from_slice(&[self.ttl, 6, 0, 0]);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        p.extend_from_slice(&self.ip_options);
        let ip_sum = checksum::checksum(&p[..ihl]);
        p[10..12].copy_from_slice(&ip_sum.to_be_bytes());
        p.extend_from_slice(&self.sport.to_be_bytes());
        p.extend_from_slice(&self.dport.to_be_bytes());
        p.extend_from_slice(&self.seq.to_be_bytes());
        p.extend_from_slice(&self.ack.to_be_bytes());
        p.push(((thl / 4) as u8) << 4 | self.reserved);
        p.push(self.flags);
        p.extend_from_slice(&self.win.to_be_bytes());
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(&self.urg.to_be_bytes());
        p.extend_from_slice(&self.tcp_options);
        p.extend_from_slice(&self.data);
        let tcp_sum = Sum::new()
            .add_pseudo_header(
                self.src.into(),
                self.dst.into(),
                6,
                (thl + self.data.len()) as u32,
            )
            .add_bytes(&p[ihl..])
            .checksum();
        p[ihl + 16..ihl + 18].copy_from_slice(&tcp_sum.to_be_bytes());
        p
    }
}

/// The TCP checksum octets of a built packet.
fn tcp_checksum(packet: &[u8]) -> [u8; 2] {
    let at = usize::from(packet[0] & 0x0F) * 4 + 16;
    [packet[at], packet[at + 1]]
}

/// A compressor and decompressor on one clean link.
struct Link {
    c: VjCompressor,
    d: VjDecompressor,
}

impl Link {
    fn new(config: VjConfig) -> Link {
        Link {
            c: VjCompressor::new(config.clone()),
            d: VjDecompressor::new(config),
        }
    }

    /// Sends `p`: checks the frame kind, and that the decompressor gives the packet back. Returns
    /// the frame.
    fn send(&mut self, p: &Pkt, kind: FrameKind) -> Vec<u8> {
        let packet = p.build();
        self.send_bytes(&packet, kind)
    }

    fn send_bytes(&mut self, packet: &[u8], kind: FrameKind) -> Vec<u8> {
        let mut frame = Vec::new();
        assert_eq!(self.c.compress(packet, &mut frame), kind, "{frame:02x?}");
        let mut out = Vec::new();
        assert_eq!(self.d.decompress(kind, &frame, &mut out), Ok(()));
        assert_eq!(out, packet, "round trip of {frame:02x?}");
        frame
    }

    /// Sends `p` and checks the frame is `COMPRESSED_TCP` with header `header` and `p`'s data.
    fn compressed(&mut self, p: &Pkt, header: &[u8]) {
        let frame = self.send(p, FrameKind::CompressedTcp);
        let mut expected = header.to_vec();
        expected.extend_from_slice(&p.data);
        assert_eq!(frame, expected);
    }

    /// Sends `p` and checks the frame is `UNCOMPRESSED_TCP` with connection number `cid`.
    fn uncompressed(&mut self, p: &Pkt, cid: u8) {
        let packet = p.build();
        let frame = self.send_bytes(&packet, FrameKind::UncompressedTcp);
        let mut expected = packet;
        expected[9] = cid;
        assert_eq!(frame, expected);
    }
}

/// The compressed header `mask [cid] checksum deltas…` for packet `p`.
fn header(mask: u8, cid: Option<u8>, p: &Pkt, deltas: &[u8]) -> Vec<u8> {
    let mut h = vec![mask];
    h.extend(cid);
    h.extend_from_slice(&tcp_checksum(&p.build()));
    h.extend_from_slice(deltas);
    h
}

mod formats;
mod property;
mod slots;
mod toss;
