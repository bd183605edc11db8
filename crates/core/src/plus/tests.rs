//! Unit tests of the `taroc-plus` codec: round trips of the formats, and the decompressor's
//! refusals.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum::Sum;

use super::{PlusCompressor, PlusDecompressor};
use crate::codec::{Compressor, Decompressor, DropReason, FrameKind};
use crate::taroc::{Repair, TarocConfig};

fn config() -> TarocConfig {
    TarocConfig {
        repair: Repair::live(),
        ..TarocConfig::default()
    }
}

/// An IPv4/TCP segment with timestamps: `seq`, `ack`, IP-ID `id`, TS `ts`, `payload` bytes.
pub(super) fn segment(seq: u32, ack: u32, id: u16, ts: u32, payload: usize) -> Vec<u8> {
    let len = 52 + payload;
    let mut p = vec![0x45, 0, (len >> 8) as u8, len as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, 6, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
    p.extend_from_slice(&[0x13, 0x89, 0, 80]);
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[0x80, 0x10, 0x01, 0xf5, 0, 0, 0, 0]);
    p.extend_from_slice(&[1, 1, 8, 10]);
    p.extend_from_slice(&ts.to_be_bytes());
    p.extend_from_slice(&(ts / 2).to_be_bytes());
    p.extend((0..payload).map(|i| (i * 7 + seq as usize) as u8));
    let ip = Sum::new().add_bytes(&p[..20]).checksum();
    p[10..12].copy_from_slice(&ip.to_be_bytes());
    let tcp = Sum::new()
        .add_bytes(&p[12..20])
        .add_u16(6)
        .add_u16((len - 20) as u16)
        .add_bytes(&p[20..])
        .checksum();
    p[36..38].copy_from_slice(&tcp.to_be_bytes());
    p
}

#[test]
fn bulk_round_trips_and_shrinks() {
    let mut c = PlusCompressor::new(config());
    let mut d = PlusDecompressor::new(config());
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    let mut sizes = Vec::new();
    for i in 0..200u32 {
        let p = segment(1000 + 1448 * i, 77, 500 + i as u16, 10_000 + i / 4, 1448);
        let kind = c.compress(&p, &mut frame);
        d.decompress(kind, &frame, &mut out).unwrap();
        assert_eq!(out, p, "packet {i}");
        sizes.push(frame.len() + 1 - 1448);
    }
    // Scaled sequence, IP-ID offset unchanged, timestamps: a few bytes.
    assert!(sizes[150..].iter().all(|&n| n <= 7), "{:?}", &sizes[150..]);
}

#[test]
fn refusals_never_panic_or_deliver() {
    let mut d = PlusDecompressor::new(config());
    let mut out = Vec::new();
    assert_eq!(
        d.decompress(FrameKind::Profile(0x40), &[0, 0, 0], &mut out),
        Err(DropReason::NoContext)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x08), &[0x45, 0], &mut out),
        Err(DropReason::Malformed)
    );
    assert_eq!(
        d.decompress(FrameKind::Profile(0x20), &[], &mut out),
        Err(DropReason::UnknownKind)
    );
    assert!(out.is_empty());
}
