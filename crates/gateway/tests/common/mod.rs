//! Packets for the gateway's tests and benchmarks.

use taroc_wire::checksum::{checksum, Sum};

/// An IPv4 TCP segment with the timestamps option and valid checksums.
pub fn segment(forward: bool, seq: u32, ack: u32, ts: u32, ip_id: u16, payload: usize) -> Vec<u8> {
    let (src, dst) = if forward {
        ([10, 201, 0, 1], [10, 201, 0, 2])
    } else {
        ([10, 201, 0, 2], [10, 201, 0, 1])
    };
    let total = 20 + 32 + payload;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&ip_id.to_be_bytes());
    p[6] = 0x40; // DF
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let c = checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let t = &mut p[20..];
    let (sport, dport) = if forward {
        (40000u16, 5201u16)
    } else {
        (5201, 40000)
    };
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&seq.to_be_bytes());
    t[8..12].copy_from_slice(&ack.to_be_bytes());
    t[12] = 8 << 4; // 32-byte header
    t[13] = 0x10; // ACK
    t[14..16].copy_from_slice(&502u16.to_be_bytes());
    t[20..24].copy_from_slice(&[1, 1, 8, 10]);
    t[24..28].copy_from_slice(&ts.to_be_bytes());
    t[28..32].copy_from_slice(&(ts - 3).to_be_bytes());
    for (i, byte) in t[32..].iter_mut().enumerate() {
        *byte = (seq as usize + i) as u8;
    }
    let sum = Sum::new()
        .add_pseudo_header(src.into(), dst.into(), 6, (total - 20) as u32)
        .add_bytes(&p[20..])
        .checksum();
    p[36..38].copy_from_slice(&sum.to_be_bytes());
    p
}
