//! Tests of the IPHC codec: golden bytes of every format worked from RFC 2507's text, the twice
//! algorithm and header requests, non-TCP slow-start and refreshes, nested and extension
//! headers, and a random-flow property test.

use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

use taroc_wire::checksum::Sum;

use super::chain::{self, Layout};
use super::full_header::{self, FullId};
use super::{feedback, IphcCompressor, IphcConfig, IphcDecompressor};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};

// ---------------------------------------------------------------------------------------------
// Packet builders (independent of the codec: they compute every checksum themselves).

const A4: [u8; 4] = [10, 0, 0, 1];
const B4: [u8; 4] = [10, 0, 0, 2];
const C4: [u8; 4] = [192, 0, 2, 7];
const D4: [u8; 4] = [192, 0, 2, 9];
const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const C6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c];
const D6: [u8; 16] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0d];

const TCP: u8 = 6;
const UDP: u8 = 17;
const ACK: u8 = 0x10;
const PSH: u8 = 0x08;
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const URG: u8 = 0x20;
const ECE: u8 = 0x40;

/// A TCP header and its payload.
#[derive(Debug, Clone)]
struct Tcp {
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    urgent: u16,
    options: Vec<u8>,
    payload: Vec<u8>,
}

impl Tcp {
    fn new(seq: u32, ack: u32) -> Tcp {
        Tcp {
            sport: 40000,
            dport: 80,
            seq,
            ack,
            flags: ACK,
            window: 1000,
            urgent: 0,
            options: Vec::new(),
            payload: Vec::new(),
        }
    }

    fn payload(mut self, len: usize) -> Tcp {
        self.payload = (0..len).map(|i| (i as u32 ^ self.seq) as u8).collect();
        self
    }

    fn timestamps(mut self, val: u32, ecr: u32) -> Tcp {
        self.options = vec![1, 1, 8, 10];
        self.options.extend_from_slice(&val.to_be_bytes());
        self.options.extend_from_slice(&ecr.to_be_bytes());
        self
    }

    /// The segment, with its checksum under the pseudo-header of `src` and `dst`.
    fn segment(&self, src: &[u8], dst: &[u8]) -> Vec<u8> {
        assert_eq!(self.options.len() % 4, 0);
        let hl = 20 + self.options.len();
        let mut s = Vec::new();
        s.extend_from_slice(&self.sport.to_be_bytes());
        s.extend_from_slice(&self.dport.to_be_bytes());
        s.extend_from_slice(&self.seq.to_be_bytes());
        s.extend_from_slice(&self.ack.to_be_bytes());
        s.push(((hl / 4) as u8) << 4);
        s.push(self.flags);
        s.extend_from_slice(&self.window.to_be_bytes());
        s.extend_from_slice(&[0, 0]);
        s.extend_from_slice(&self.urgent.to_be_bytes());
        s.extend_from_slice(&self.options);
        s.extend_from_slice(&self.payload);
        transport_checksum(&mut s, src, dst, TCP, 16);
        s
    }
}

fn transport_checksum(s: &mut [u8], src: &[u8], dst: &[u8], proto: u8, at: usize) {
    s[at..at + 2].copy_from_slice(&[0, 0]);
    let sum = Sum::new()
        .add_bytes(src)
        .add_bytes(dst)
        .add_u32(s.len() as u32)
        .add_u16(u16::from(proto))
        .add_bytes(s)
        .checksum();
    // A computed zero goes as 0xFFFF in UDP (zero means "no checksum").
    let sum = if sum == 0 && proto == UDP {
        0xFFFF
    } else {
        sum
    };
    s[at..at + 2].copy_from_slice(&sum.to_be_bytes());
}

fn udp(src: &[u8], dst: &[u8], sport: u16, dport: u16, payload: &[u8], checksum: bool) -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(&sport.to_be_bytes());
    s.extend_from_slice(&dport.to_be_bytes());
    s.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    s.extend_from_slice(&[0, 0]);
    s.extend_from_slice(payload);
    if checksum {
        transport_checksum(&mut s, src, dst, UDP, 6);
    }
    s
}

/// IPv4 header fields.
#[derive(Debug, Clone, Copy)]
struct V4 {
    src: [u8; 4],
    dst: [u8; 4],
    id: u16,
    tos: u8,
    ttl: u8,
}

impl V4 {
    fn new(id: u16) -> V4 {
        V4 {
            src: A4,
            dst: B4,
            id,
            tos: 0,
            ttl: 64,
        }
    }

    fn wrap(&self, proto: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x45, self.tos];
        p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
        p.extend_from_slice(&self.id.to_be_bytes());
        p.extend_from_slice(&[0x40, 0, self.ttl, proto, 0, 0]);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        let sum = Sum::new().add_bytes(&p).checksum();
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p.extend_from_slice(payload);
        p
    }
}

/// IPv6 header fields.
#[derive(Debug, Clone, Copy)]
struct V6 {
    src: [u8; 16],
    dst: [u8; 16],
    tc: u8,
    flow: u32,
    hop: u8,
}

impl V6 {
    fn new() -> V6 {
        V6 {
            src: A6,
            dst: B6,
            tc: 0,
            flow: 0x12345,
            hop: 64,
        }
    }

    fn wrap(&self, next: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![
            0x60 | (self.tc >> 4),
            (self.tc << 4) | ((self.flow >> 16) as u8 & 0x0F),
        ];
        p.extend_from_slice(&(self.flow as u16).to_be_bytes());
        p.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        p.extend_from_slice(&[next, self.hop]);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        p.extend_from_slice(payload);
        p
    }
}

fn v4_tcp(ip: V4, t: &Tcp) -> Vec<u8> {
    ip.wrap(TCP, &t.segment(&ip.src, &ip.dst))
}

fn v6_tcp(ip: V6, t: &Tcp) -> Vec<u8> {
    ip.wrap(TCP, &t.segment(&ip.src, &ip.dst))
}

fn v4_udp(ip: V4, sport: u16, payload: &[u8], checksum: bool) -> Vec<u8> {
    ip.wrap(UDP, &udp(&ip.src, &ip.dst, sport, 53, payload, checksum))
}

fn v6_udp(ip: V6, sport: u16, payload: &[u8]) -> Vec<u8> {
    ip.wrap(UDP, &udp(&ip.src, &ip.dst, sport, 53, payload, true))
}

/// A compressor and a decompressor joined by a link the test drives.
struct Pair {
    c: IphcCompressor,
    d: IphcDecompressor,
}

impl Pair {
    fn new(config: IphcConfig) -> Pair {
        Pair {
            c: IphcCompressor::new(config.clone()),
            d: IphcDecompressor::new(config),
        }
    }

    fn send(&mut self, packet: &[u8]) -> (FrameKind, Vec<u8>) {
        let mut frame = Vec::new();
        let kind = self.c.compress(packet, &mut frame);
        if kind == FrameKind::Ip {
            assert_eq!(frame, packet);
        }
        (kind, frame)
    }

    fn recv(&mut self, kind: FrameKind, frame: &[u8]) -> Result<Vec<u8>, DropReason> {
        let mut out = vec![0xEE; 3];
        let r = self.d.decompress(kind, frame, &mut out);
        r.map(|()| out)
    }

    /// Sends `packet` over a clean link and checks it arrives whole; returns the frame.
    fn pass(&mut self, packet: &[u8]) -> (FrameKind, Vec<u8>) {
        let (kind, frame) = self.send(packet);
        assert_eq!(
            self.recv(kind, &frame).as_deref(),
            Ok(packet),
            "{kind:?} frame {frame:02x?}"
        );
        (kind, frame)
    }

    /// Moves the decompressor's feedback to the compressor; returns it.
    fn feedback(&mut self) -> Option<Vec<u8>> {
        let mut fb = Vec::new();
        if self.d.take_feedback(&mut fb) {
            self.c.handle_feedback(&fb);
            Some(fb)
        } else {
            None
        }
    }
}

/// Whether packet `i` (from 0) of a non-TCP stream is a slow-start full header (default
/// F_MAX_PERIOD, no time limit reached).
fn slow_start_full(i: usize) -> bool {
    [0, 2, 5, 10, 19, 36, 69, 134, 263].contains(&i)
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// Without guesses: what is sent depends on the packets only (with them, the compressor also
/// sends a header whole when a decompressor that lost packets would guess it wrongly).
fn no_guesses() -> IphcConfig {
    IphcConfig {
        twice: false,
        ..IphcConfig::default()
    }
}

/// Compresses every packet, drops the frames at `lost`, decompresses the rest; returns the
/// decompressor's result per packet (`None` for a lost frame).
fn run_lossy(
    pair: &mut Pair,
    packets: &[Vec<u8>],
    lost: &[usize],
) -> Vec<Option<Result<(), DropReason>>> {
    packets
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (kind, frame) = pair.send(p);
            if lost.contains(&i) {
                return None;
            }
            Some(pair.recv(kind, &frame).map(|out| {
                assert_eq!(&out, p, "packet {i} delivered wrong");
            }))
        })
        .collect()
}

mod formats;
mod nested;
mod non_tcp;
mod probes;
mod property;
mod tcp;
