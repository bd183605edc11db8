//! `taroc-plus` does not allocate per packet after warm-up on its non-TCP paths either: UDP
//! datagrams (CO-N), TCP in an IPv6 tunnel (a context that keeps the outer header) and TCP in
//! an IPv4 tunnel (tunnel frames), through a compressor and a decompressor, refreshes and
//! all. (`taroc-gateway`'s `alloc_free` test covers TCP bulk flows through the whole gateway
//! pipeline, every scheme.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use taroc_core::plus::{PlusCompressor, PlusDecompressor};
use taroc_core::taroc::{Repair, TarocConfig};
use taroc_core::{Compressor, Decompressor};
use taroc_wire::checksum::{checksum, Sum};

thread_local! {
    /// Allocations (and reallocations) made by this thread.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only a
// const-initialized thread-local Cell, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract for `realloc` is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// An IPv4 header of `protocol` around `payload` (checksum filled), Identification `id`.
fn ipv4(protocol: u8, id: u16, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, protocol, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    let sum = checksum(&p);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

/// A DNS-like UDP datagram, Identification `id` (no UDP checksum).
fn udp(id: u16) -> Vec<u8> {
    let mut d = vec![0x9c, 0x40, 0, 53, 0, 20, 0, 0];
    d.extend_from_slice(&id.to_be_bytes());
    d.extend_from_slice(&[1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    ipv4(17, id, [198, 18, 0, 1], [198, 18, 0, 2], &d)
}

/// The `i`th segment of a bulk IPv4 TCP flow from `port` (256 bytes of payload),
/// Identification `id`.
fn tcp(port: u16, i: u32, id: u16) -> Vec<u8> {
    let seq = 1000 + 256 * i;
    let mut t = port.to_be_bytes().to_vec();
    t.extend_from_slice(&[0, 80]);
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&77u32.to_be_bytes());
    t.extend_from_slice(&[0x50, 0x10, 0x01, 0xf5, 0, 0, 0, 0]);
    t.extend((0..256).map(|b| (b as u32 ^ i) as u8));
    let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let sum = Sum::new()
        .add_bytes(&src)
        .add_bytes(&dst)
        .add_u16(6)
        .add_u16(t.len() as u16)
        .add_bytes(&t)
        .checksum();
    t[16..18].copy_from_slice(&sum.to_be_bytes());
    ipv4(6, id, src, dst, &t)
}

/// `inner` in an IPv6 tunnel.
fn in_v6(inner: &[u8]) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(inner.len() as u16).to_be_bytes());
    p.extend_from_slice(&[4, 64]);
    p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    p.extend_from_slice(inner);
    p
}

#[test]
fn udp_and_tunnelled_tcp_do_not_allocate_after_warm_up() {
    let config = TarocConfig {
        repair: Repair::live(),
        ..TarocConfig::default()
    };
    let packets: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| match i % 3 {
            0 => udp(i as u16),
            1 => in_v6(&tcp(5001, i / 3, 500 + (i / 3) as u16)),
            _ => ipv4(
                4,
                9000 + i as u16,
                [192, 0, 2, 1],
                [192, 0, 2, 2],
                &tcp(5002, i / 3, 7 + (i / 3) as u16),
            ),
        })
        .collect();
    let mut c = PlusCompressor::new(config.clone());
    let mut d = PlusDecompressor::new(config);
    let (mut frame, mut out) = (Vec::with_capacity(2048), Vec::with_capacity(2048));
    let mut run = |packets: &[Vec<u8>]| {
        for p in packets {
            let kind = c.compress(p, &mut frame);
            d.decompress(kind, &frame, &mut out).expect("a clean link");
            assert_eq!(&out, p);
        }
    };
    run(&packets[..300]);
    let before = allocations();
    run(&packets[300..]);
    assert_eq!(allocations() - before, 0, "allocations in 2,700 packets");
}
