//! A builder of TCP/IP test packets with valid checksums.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum::{self, Sum};
use taroc_wire::tcp::flags;

/// A TCP/IP packet with valid checksums. `ts` adds NOP NOP TS; `sack` adds NOP NOP SACK.
#[derive(Clone)]
pub(crate) struct Spec {
    pub v4: bool,
    pub seq: u32,
    pub ack: u32,
    pub win: u16,
    pub ip_id: u16,
    pub ttl: u8,
    pub tos: u8,
    pub ts: Option<(u32, u32)>,
    pub sack: Vec<(u32, u32)>,
    pub flags: u8,
    pub payload: usize,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            v4: true,
            seq: 1000,
            ack: 5000,
            win: 500,
            ip_id: 0x1234,
            ttl: 64,
            tos: 0,
            ts: None,
            sack: vec![],
            flags: flags::ACK,
            payload: 100,
        }
    }
}

impl Spec {
    pub fn build(&self) -> Vec<u8> {
        let mut opts = Vec::new();
        if let Some((v, e)) = self.ts {
            opts.extend_from_slice(&[1, 1, 8, 10]);
            opts.extend_from_slice(&v.to_be_bytes());
            opts.extend_from_slice(&e.to_be_bytes());
        }
        if !self.sack.is_empty() {
            opts.extend_from_slice(&[1, 1, 5, 2 + 8 * self.sack.len() as u8]);
            for (l, r) in &self.sack {
                opts.extend_from_slice(&l.to_be_bytes());
                opts.extend_from_slice(&r.to_be_bytes());
            }
        }
        let mut tcp = Vec::new();
        tcp.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51]);
        tcp.extend_from_slice(&self.seq.to_be_bytes());
        tcp.extend_from_slice(&self.ack.to_be_bytes());
        tcp.push(((20 + opts.len()) / 4) as u8 * 16);
        tcp.push(self.flags);
        tcp.extend_from_slice(&self.win.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0]);
        tcp.extend_from_slice(&opts);
        tcp.extend((0..self.payload).map(|i| (i * 7 + 3) as u8));
        let (src, dst, mut ip) = if self.v4 {
            let mut ip = vec![
                0x45, self.tos, 0, 0, 0, 0, 0x40, 0, self.ttl, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
            ];
            ip[2..4].copy_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
            ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
            let c = checksum::checksum(&ip);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            (
                core::net::IpAddr::from([10, 0, 0, 1]),
                core::net::IpAddr::from([10, 0, 0, 2]),
                ip,
            )
        } else {
            let mut ip = vec![
                0x60 | (self.tos >> 4),
                self.tos << 4,
                0,
                0,
                0,
                0,
                6,
                self.ttl,
            ];
            ip[4..6].copy_from_slice(&(tcp.len() as u16).to_be_bytes());
            let (mut s, mut d) = ([0u8; 16], [0u8; 16]);
            s[0] = 0x20;
            s[15] = 1;
            d[0] = 0x20;
            d[15] = 2;
            ip.extend_from_slice(&s);
            ip.extend_from_slice(&d);
            (core::net::IpAddr::from(s), core::net::IpAddr::from(d), ip)
        };
        let c = Sum::new()
            .add_pseudo_header(src, dst, 6, tcp.len() as u32)
            .add_bytes(&tcp)
            .checksum();
        tcp[16..18].copy_from_slice(&c.to_be_bytes());
        ip.extend_from_slice(&tcp);
        ip
    }
}
