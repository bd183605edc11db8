//! Real TCP/IP packets: building IPv4 or IPv6 TCP segments with correct checksums and options
//! (timestamps, SACK), and parsing them back with full checksum verification, using
//! `taroc_wire`'s views and checksums.

use std::net::IpAddr;

use taroc_wire::checksum::{self, Sum};
use taroc_wire::ipv4::Ipv4Packet;
use taroc_wire::ipv6::Ipv6Packet;
use taroc_wire::protocol;
use taroc_wire::tcp::{SackBlocks, TcpOption, TcpSegment};

/// The two ends of a connection, as seen by the side that sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    /// Source address (both addresses are of one family).
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

impl Endpoints {
    /// The same connection seen from the other side.
    pub fn reversed(&self) -> Endpoints {
        Endpoints {
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
        }
    }

    /// Bytes of IP header this connection's packets carry (20 or 40).
    pub fn ip_header_len(&self) -> usize {
        match self.src {
            IpAddr::V4(_) => 20,
            IpAddr::V6(_) => 40,
        }
    }
}

/// What goes into one segment.
#[derive(Debug, Clone, Copy)]
pub struct SegmentSpec<'a> {
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// TCP flags.
    pub flags: u8,
    /// Advertised window.
    pub window: u16,
    /// Timestamps option (TSval, TSecr), if used.
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (at most 4, at most 3 with timestamps; extra ones are left out).
    pub sack: &'a [(u32, u32)],
    /// Payload length; the payload bytes are a deterministic pattern of the stream offset.
    pub payload_len: usize,
    /// Stream offset of the first payload byte (selects the pattern).
    pub payload_offset: u64,
}

/// Bytes of TCP options a segment with these options carries (a multiple of 4).
pub fn options_len(timestamps: bool, sack_blocks: usize) -> usize {
    let ts = if timestamps { 12 } else { 0 };
    let max_blocks = if timestamps { 3 } else { 4 };
    let sack = match sack_blocks.min(max_blocks) {
        0 => 0,
        n => 4 + 8 * n,
    };
    ts + sack
}

/// The payload byte at stream offset `offset`.
pub fn payload_byte(offset: u64) -> u8 {
    (offset.wrapping_mul(0x9E37_79B9) >> 7) as u8
}

/// Builds the packet of `spec` into `out` (cleared first).
pub fn build(ep: &Endpoints, ip_id: u16, spec: &SegmentSpec<'_>, out: &mut Vec<u8>) {
    out.clear();
    let max_blocks = if spec.timestamps.is_some() { 3 } else { 4 };
    let blocks = &spec.sack[..spec.sack.len().min(max_blocks)];
    let opt_len = options_len(spec.timestamps.is_some(), blocks.len());
    let tcp_len = 20 + opt_len + spec.payload_len;
    let ip_len = ep.ip_header_len();
    match (ep.src, ep.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = (ip_len + tcp_len) as u16;
            out.extend_from_slice(&[0x45, 0]);
            out.extend_from_slice(&total.to_be_bytes());
            out.extend_from_slice(&ip_id.to_be_bytes());
            out.extend_from_slice(&[0x40, 0, 64, protocol::TCP, 0, 0]);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
            let c = checksum::checksum(&out[..20]);
            out[10..12].copy_from_slice(&c.to_be_bytes());
        }
        _ => {
            let (s, d) = (v6(ep.src), v6(ep.dst));
            out.extend_from_slice(&[0x60, 0, 0, 0]);
            out.extend_from_slice(&(tcp_len as u16).to_be_bytes());
            out.extend_from_slice(&[protocol::TCP, 64]);
            out.extend_from_slice(&s);
            out.extend_from_slice(&d);
        }
    }
    let t = out.len();
    out.extend_from_slice(&ep.src_port.to_be_bytes());
    out.extend_from_slice(&ep.dst_port.to_be_bytes());
    out.extend_from_slice(&spec.seq.to_be_bytes());
    out.extend_from_slice(&spec.ack.to_be_bytes());
    out.push((((20 + opt_len) / 4) as u8) << 4);
    out.push(spec.flags);
    out.extend_from_slice(&spec.window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    let mut opts = [0u8; 40];
    let mut n = 0;
    if let Some((val, ecr)) = spec.timestamps {
        opts[0] = 1;
        opts[1] = 1;
        n = 2 + TcpOption::Timestamps { val, ecr }
            .emit(&mut opts[2..])
            .unwrap_or(0);
    }
    if !blocks.is_empty() {
        let mut sb = SackBlocks::default();
        for &(l, r) in blocks {
            sb.push(l, r);
        }
        opts[n] = 1;
        opts[n + 1] = 1;
        n += 2 + TcpOption::Sack(sb).emit(&mut opts[n + 2..]).unwrap_or(0);
    }
    out.extend_from_slice(&opts[..n]);
    out.extend((0..spec.payload_len as u64).map(|i| payload_byte(spec.payload_offset + i)));
    let sum = Sum::new()
        .add_pseudo_header(ep.src, ep.dst, protocol::TCP, tcp_len as u32)
        .add_bytes(&out[t..])
        .checksum();
    out[t + 16..t + 18].copy_from_slice(&sum.to_be_bytes());
}

fn v6(addr: IpAddr) -> [u8; 16] {
    match addr {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}

/// Why a received packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentError {
    /// Not a well-formed IPv4/IPv6 TCP packet.
    Malformed,
    /// The IPv4 header checksum or the TCP checksum failed.
    BadChecksum,
}

impl std::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SegmentError::Malformed => "not a well-formed TCP/IP packet",
            SegmentError::BadChecksum => "IPv4 header or TCP checksum failed",
        })
    }
}

impl std::error::Error for SegmentError {}

/// The fields of a received, verified segment.
#[derive(Debug, Clone, Copy)]
pub struct Parsed {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flags.
    pub flags: u8,
    /// Window.
    pub window: u16,
    /// Payload length.
    pub payload_len: usize,
    /// Timestamps (TSval, TSecr), if present.
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks.
    pub sack: SackBlocks,
}

/// The destination address of an IP packet, if it has one.
pub fn destination(packet: &[u8]) -> Option<IpAddr> {
    match packet.first()? >> 4 {
        4 => Ipv4Packet::new_checked(packet).ok().map(|p| p.dst().into()),
        6 => Ipv6Packet::new_checked(packet).ok().map(|p| p.dst().into()),
        _ => None,
    }
}

/// Bytes of IP and TCP headers of a packet (its length minus its TCP payload), if it is TCP.
pub fn header_bytes(packet: &[u8]) -> Option<usize> {
    let (offset, len) = locate(packet).ok()?;
    let tcp = TcpSegment::new_checked(&packet[offset..offset + len]).ok()?;
    Some(packet.len() - tcp.payload().len())
}

fn locate(packet: &[u8]) -> Result<(usize, usize), SegmentError> {
    match packet.first().map(|b| b >> 4) {
        Some(4) => {
            let ip = Ipv4Packet::new_checked(packet).map_err(|_| SegmentError::Malformed)?;
            if !ip.is_exact() || ip.protocol() != protocol::TCP || ip.is_fragment() {
                return Err(SegmentError::Malformed);
            }
            Ok((ip.header_len(), ip.payload().len()))
        }
        Some(6) => {
            let ip = Ipv6Packet::new_checked(packet).map_err(|_| SegmentError::Malformed)?;
            let upper = ip.upper_layer().map_err(|_| SegmentError::Malformed)?;
            if !ip.is_exact() || upper.protocol != protocol::TCP || upper.fragment {
                return Err(SegmentError::Malformed);
            }
            Ok((upper.offset, packet.len() - upper.offset))
        }
        _ => Err(SegmentError::Malformed),
    }
}

/// Parses and verifies a packet: IPv4 header checksum, TCP checksum, option syntax.
pub fn parse(packet: &[u8]) -> Result<Parsed, SegmentError> {
    let (offset, len) = locate(packet)?;
    let (src, dst): (IpAddr, IpAddr) = if packet[0] >> 4 == 4 {
        let ip = Ipv4Packet::new_checked(packet).map_err(|_| SegmentError::Malformed)?;
        if !ip.header_checksum_ok() {
            return Err(SegmentError::BadChecksum);
        }
        (ip.src().into(), ip.dst().into())
    } else {
        let ip = Ipv6Packet::new_checked(packet).map_err(|_| SegmentError::Malformed)?;
        (ip.src().into(), ip.dst().into())
    };
    let bytes = &packet[offset..offset + len];
    let tcp = TcpSegment::new_checked(bytes).map_err(|_| SegmentError::Malformed)?;
    if !checksum::transport_verifies(src, dst, protocol::TCP, bytes) {
        return Err(SegmentError::BadChecksum);
    }
    let mut timestamps = None;
    let mut sack = SackBlocks::default();
    for option in tcp.option_iter() {
        match option {
            Ok(TcpOption::Timestamps { val, ecr }) => timestamps = Some((val, ecr)),
            Ok(TcpOption::Sack(blocks)) => sack = blocks,
            Ok(_) => {}
            Err(_) => return Err(SegmentError::Malformed),
        }
    }
    Ok(Parsed {
        src,
        dst,
        src_port: tcp.src_port(),
        dst_port: tcp.dst_port(),
        seq: tcp.seq(),
        ack: tcp.ack(),
        flags: tcp.flags(),
        window: tcp.window(),
        payload_len: tcp.payload().len(),
        timestamps,
        sack,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use taroc_wire::tcp::flags;

    fn ep4() -> Endpoints {
        Endpoints {
            src: Ipv4Addr::new(10, 0, 0, 1).into(),
            dst: Ipv4Addr::new(10, 0, 0, 3).into(),
            src_port: 5000,
            dst_port: 80,
        }
    }

    #[test]
    fn ipv4_round_trip_with_options() {
        let spec = SegmentSpec {
            seq: 1000,
            ack: 7,
            flags: flags::ACK,
            window: 65535,
            timestamps: Some((11, 22)),
            sack: &[(1, 2), (3, 4), (5, 6), (7, 8)],
            payload_len: 536,
            payload_offset: 99,
        };
        let mut out = Vec::new();
        build(&ep4(), 5, &spec, &mut out);
        assert_eq!(out.len(), 20 + 20 + 12 + 28 + 536);
        let p = parse(&out).unwrap();
        assert_eq!((p.seq, p.ack, p.payload_len), (1000, 7, 536));
        assert_eq!(p.timestamps, Some((11, 22)));
        assert_eq!(p.sack.as_slice(), &[(1, 2), (3, 4), (5, 6)]);
        assert_eq!(header_bytes(&out), Some(80));
        // Any flipped bit in the TCP part is caught.
        out[60] ^= 0x10;
        assert_eq!(parse(&out).unwrap_err(), SegmentError::BadChecksum);
    }

    #[test]
    fn ipv6_round_trip() {
        let ep = Endpoints {
            src: Ipv6Addr::LOCALHOST.into(),
            dst: "2001:db8::1".parse::<Ipv6Addr>().unwrap().into(),
            src_port: 1,
            dst_port: 2,
        };
        let spec = SegmentSpec {
            seq: u32::MAX,
            ack: 0,
            flags: flags::ACK,
            window: 100,
            timestamps: None,
            sack: &[],
            payload_len: 10,
            payload_offset: 0,
        };
        let mut out = Vec::new();
        build(&ep, 0, &spec, &mut out);
        assert_eq!(out.len(), 70);
        let p = parse(&out).unwrap();
        assert_eq!((p.seq, p.payload_len, p.dst), (u32::MAX, 10, ep.dst));
        assert_eq!(destination(&out), Some(ep.dst));
    }

    #[test]
    fn garbage_is_refused() {
        assert!(parse(&[]).is_err());
        assert!(parse(&[0x45; 30]).is_err());
    }
}
