//! The gateway's data path does not allocate after warm-up: a counting global allocator watches
//! the emulated-link pipeline (compress → link with rate, delay, bit errors and reordering →
//! decompress → oracle → feedback), without TUN devices, carrying a TCP bulk transfer with
//! timestamps in one direction and its ACKs in the other, for every scheme; and the same over
//! two UDP endpoints ([`Endpoint`]: the UDP gateway's data path without sockets), with every
//! frame authenticated, and without; the same over the serial transport (HDLC and KISS framing
//! on a socket pair); and `taroc-plus`'s non-TCP paths (UDP, tunnelled TCP) through its codec.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

mod common;

use common::segment;
use taroc_core::plus::{PlusCompressor, PlusConfig, PlusDecompressor};
use taroc_core::tcp::repair::Repair;
use taroc_core::variant::Variant;
use taroc_core::{Compressor, Decompressor};
use taroc_gateway::auth::{AuthConfig, Key, DEFAULT_TAG_LEN};
use taroc_gateway::endpoint::{introduce, Endpoint, EndpointConfig};
use taroc_gateway::gateway::{Pipeline, PipelineConfig};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::serial::{Framing, SerialTransport};
use taroc_gateway::transport::{Incoming, Transport};
use taroc_wire::checksum::Sum;
use taroc_wire::fcs::Fcs;

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

/// Runs `packets` data segments (and an ACK per two) through the pipeline from step `start`.
fn drive(pipeline: &mut Pipeline, packets: &[(Vec<u8>, Vec<u8>)], start: u64) {
    let mut sink = |_: usize, _: &[u8]| true;
    for (i, (data, ack)) in packets.iter().enumerate() {
        let now = (start + i as u64) * 200_000; // a data segment every 0.2 ms
        pipeline.input(0, now, data, &mut sink);
        if i % 2 == 1 {
            pipeline.input(1, now, ack, &mut sink);
        }
        pipeline.poll(now, &mut sink);
    }
}

const MSS: usize = 1228;
const WARM_UP: usize = 10_000;
const MEASURED: usize = 20_000;

/// A bulk TCP flow: data segments, and an ACK beside each (sent for every other segment); one
/// ACK in 1000 carries RST too (`taroc-plus` sends it as an IR-S frame, outside the CO path).
fn flow() -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..WARM_UP + MEASURED)
        .map(|i| {
            let seq = 1_000 + (i * MSS) as u32;
            // The timestamp moves rarely, so the twice algorithm can repair most losses.
            let ts = 100_000 + (i / 1000) as u32;
            let ack = segment(false, 77, seq + MSS as u32, ts, (i / 2) as u16, 0);
            let ack = if i % 1000 == 501 {
                with_flags(ack, 0x14) // RST, ACK
            } else {
                ack
            };
            (segment(true, seq, 77, ts, i as u16, MSS), ack)
        })
        .collect()
}

/// `packet` (from [`segment`]) with its TCP flags set to `tcp_flags`, TCP checksum recomputed.
pub fn with_flags(mut packet: Vec<u8>, tcp_flags: u8) -> Vec<u8> {
    packet[33] = tcp_flags;
    packet[36..38].fill(0);
    let (src, dst): ([u8; 4], [u8; 4]) = (
        packet[12..16].try_into().unwrap(),
        packet[16..20].try_into().unwrap(),
    );
    let sum = Sum::new()
        .add_pseudo_header(src.into(), dst.into(), 6, (packet.len() - 20) as u32)
        .add_bytes(&packet[20..])
        .checksum();
    packet[36..38].copy_from_slice(&sum.to_be_bytes());
    packet
}

/// The lossy link `variant` runs on (rate, delay, bit errors): it reorders a few frames, but not for VJ, which a link that
/// reorders refuses.
fn link(variant: &Variant) -> LinkConfig {
    LinkConfig {
        rate_bps: 100_000_000,
        delay: Duration::from_millis(5),
        ber: 1e-6,
        reorder: if variant.scheme == taroc_core::Scheme::Vj {
            0.0
        } else {
            0.001
        },
        mtu: 1280,
        ..LinkConfig::default()
    }
}

/// Allocations while `variant` carries 20,000 data segments (and 10,000 ACKs) after a warm-up
/// of 10,000, and a line describing the run.
fn measure(variant: &Variant) -> (u64, String) {
    let flow = flow();
    let link = link(variant);
    let mut pipeline = Pipeline::new(&PipelineConfig {
        variants: [variant.clone(), variant.clone()],
        links: [link.clone(), link],
        tun_mtu: 1280,
        seed: 3,
        verify_checksums: true,
    })
    .unwrap();
    drive(&mut pipeline, &flow[..WARM_UP], 0);
    let before = allocations();
    drive(&mut pipeline, &flow[WARM_UP..], WARM_UP as u64);
    let made = allocations() - before;
    let c = pipeline.counters(0);
    assert!(c.delivered > 0, "{}: {c:?}", variant.name);
    assert!(
        c.link_bit_errors > 0,
        "{}: the link lost nothing",
        variant.name
    );
    let line = format!(
        "{}: {made} allocations over {} packets (delivered {}, bit errors {}, feedback {})",
        variant.name,
        MEASURED + MEASURED / 2,
        c.delivered,
        c.link_bit_errors,
        c.feedback_sent + pipeline.counters(1).feedback_sent
    );
    println!("{line}");
    (made, line)
}

/// Every scheme.
#[test]
fn emulated_pipeline_does_not_allocate_after_warm_up() {
    let mut lines = Vec::new();
    let mut allocating = 0;
    for variant in &Variant::all() {
        let (made, line) = measure(variant);
        allocating += usize::from(made > 0);
        lines.push(line);
    }
    assert_eq!(allocating, 0, "{}", lines.join("\n"));
}

/// Datagrams in flight one way between two endpoints: preallocated buffers, reused.
struct Wire {
    buffers: Vec<Vec<u8>>,
    len: usize,
}

impl Wire {
    fn new() -> Wire {
        Wire {
            buffers: (0..256).map(|_| Vec::with_capacity(2048)).collect(),
            len: 0,
        }
    }

    /// Takes a datagram; false (a send error) when full.
    fn push(&mut self, datagram: &[u8]) -> bool {
        let Some(buffer) = self.buffers.get_mut(self.len) else {
            return false;
        };
        buffer.clear();
        buffer.extend_from_slice(datagram);
        self.len += 1;
        true
    }
}

/// Runs `packets` through endpoints `a` (data) and `b` (ACKs) from step `start`, carrying
/// datagrams both ways until the wires are empty.
fn drive_udp(
    ends: &mut [Endpoint; 2],
    wires: &mut [Wire; 2],
    packets: &[(Vec<u8>, Vec<u8>)],
    start: u64,
) {
    let [a, b] = ends;
    let [ab, ba] = wires;
    let mut write = |_: &[u8]| true;
    for (i, (data, ack)) in packets.iter().enumerate() {
        let now = (start + i as u64) * 200_000;
        a.packet(now, data, &mut |d: &[u8]| ab.push(d));
        if i % 2 == 1 {
            b.packet(now, ack, &mut |d: &[u8]| ba.push(d));
        }
        a.poll(now, &mut |d: &[u8]| ab.push(d));
        b.poll(now, &mut |d: &[u8]| ba.push(d));
        for _ in 0..4 {
            for datagram in &ab.buffers[..ab.len] {
                b.datagram(now, true, datagram, &mut |d: &[u8]| ba.push(d), &mut write);
            }
            ab.len = 0;
            for datagram in &ba.buffers[..ba.len] {
                a.datagram(now, true, datagram, &mut |d: &[u8]| ab.push(d), &mut write);
            }
            ba.len = 0;
            if ab.len == 0 {
                break;
            }
        }
    }
}

/// Allocations of two UDP endpoints carrying the first half of the flow of [`measure`]: 5,000
/// data segments and 2,500 ACKs after the same warm-up of 10,000 (TAROC's contexts still grow
/// after 5,000), with authentication or without, and a line describing the run. (The codecs
/// are the pipeline's, measured at full length there.)
fn measure_udp(variant: &Variant, auth: bool) -> (u64, String) {
    const MEASURED: usize = 5_000;
    let mut flow = flow();
    flow.truncate(WARM_UP + MEASURED);
    let config = || EndpointConfig {
        variants: [variant.clone(), variant.clone()],
        link: link(variant),
        tun_mtu: 1280,
        seed: 3,
        verify_checksums: true,
        auth: auth.then(|| AuthConfig {
            key: Key::from_bytes([9; 32]),
            tag_len: DEFAULT_TAG_LEN,
        }),
        may_reorder: true,
    };
    let start = 1_700_000_000_000_000_000;
    let mut ends = [
        Endpoint::new(&config(), 1, start).unwrap(),
        Endpoint::new(&config(), 2, start + 7).unwrap(),
    ];
    let [a, b] = &mut ends;
    introduce([a, b], 0);
    let mut wires = [Wire::new(), Wire::new()];
    drive_udp(&mut ends, &mut wires, &flow[..WARM_UP], 0);
    let before = allocations();
    drive_udp(&mut ends, &mut wires, &flow[WARM_UP..], WARM_UP as u64);
    let made = allocations() - before;
    let label = format!(
        "udp {} {}",
        variant.name,
        if auth { "auth" } else { "no-auth" }
    );
    let [a, b] = [&ends[0].counters(), &ends[1].counters()];
    assert!(b[1].delivered > 0 && a[1].delivered > 0, "{label}: {b:?}");
    assert!(a[0].link_bit_errors > 0, "{label}: the link lost nothing");
    // Genuine frames only: none may be refused before decompression, nor fail to send.
    assert_eq!(
        (a[1].rejected.total(), b[1].rejected.total()),
        (0, 0),
        "{label}"
    );
    assert_eq!((a[0].send_errors, b[0].send_errors), (0, 0), "{label}");
    assert_eq!(a[0].auth_bytes > 0, auth, "{label}");
    let line = format!(
        "{label}: {made} allocations over {} packets (delivered {}, bit errors {}, feedback {})",
        MEASURED + MEASURED / 2,
        b[1].delivered,
        a[0].link_bit_errors,
        a[1].feedback_sent + b[1].feedback_sent
    );
    println!("{line}");
    (made, line)
}

/// Every scheme over authenticated UDP endpoints; and one without authentication.
#[test]
fn udp_endpoints_do_not_allocate_after_warm_up() {
    let mut lines = Vec::new();
    let mut allocating = 0;
    let taroc = Variant::by_name("taroc").unwrap();
    let runs = Variant::all().into_iter().map(|v| (v, true));
    for (variant, auth) in runs.chain([(taroc, false)]) {
        let (made, line) = measure_udp(&variant, auth);
        allocating += usize::from(made > 0);
        lines.push(line);
    }
    assert_eq!(allocating, 0, "{}", lines.join("\n"));
}

/// An IPv4 header of `protocol` around `payload` (checksum filled), Identification `id`.
fn ipv4(protocol: u8, id: u16, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, protocol, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    let sum = taroc_wire::checksum::checksum(&p);
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
fn taroc_plus_udp_and_tunnelled_tcp_do_not_allocate_after_warm_up() {
    // The codec alone: its non-TCP paths (UDP as CO-N, TCP in an IPv6 tunnel in a context that
    // keeps the outer header, TCP in an IPv4 tunnel in tunnel frames), refreshes and all.
    let config = PlusConfig {
        repair: Repair::live(),
        ..PlusConfig::default()
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

/// Two gateways' data paths joined by the serial transport (HDLC, then KISS) over a socket
/// pair standing in for the line: a packet in at one end, its line frames deframed at the
/// other, both ways, authenticated; the allocations after warm-up.
fn measure_serial(framing: Framing) -> (u64, String) {
    const MEASURED: usize = 5_000;
    let mut flow = flow();
    flow.truncate(WARM_UP + MEASURED);
    let variant = Variant::by_name("taroc-plus").unwrap();
    let config = EndpointConfig {
        variants: [variant.clone(), variant.clone()],
        link: LinkConfig {
            mtu: 1280,
            ..LinkConfig::default()
        },
        tun_mtu: 1280,
        seed: 3,
        verify_checksums: true,
        auth: Some(AuthConfig {
            key: Key::from_bytes([9; 32]),
            tag_len: 4,
        }),
        may_reorder: false,
    };
    let start = 1_700_000_000_000_000_000;
    let mut ends = [
        Endpoint::new(&config, 1, start).unwrap(),
        Endpoint::new(&config, 2, start + 7).unwrap(),
    ];
    let [a, b] = &mut ends;
    introduce([a, b], 0);
    let (x, y) = UnixStream::pair().unwrap();
    x.set_nonblocking(true).unwrap();
    y.set_nonblocking(true).unwrap();
    let line =
        |s: UnixStream| SerialTransport::new(File::from(OwnedFd::from(s)), 4_000_000, framing);
    let mut lines = [line(x), line(y)];
    let mut buffer = vec![0u8; 4096];
    let mut drive = |ends: &mut [Endpoint; 2],
                     lines: &mut [SerialTransport; 2],
                     packets: &[(Vec<u8>, Vec<u8>)],
                     start: u64| {
        let mut write = |_: &[u8]| true;
        for (i, (data, ack)) in packets.iter().enumerate() {
            let now = (start + i as u64) * 200_000;
            let [ea, eb] = &mut *ends;
            let [la, lb] = &mut *lines;
            ea.packet(now, data, &mut |d: &[u8]| la.send(now, d));
            if i % 2 == 1 {
                eb.packet(now, ack, &mut |d: &[u8]| lb.send(now, d));
            }
            for _ in 0..4 {
                let mut moved = false;
                while let Some(Incoming::Frame { len, .. }) = lb.receive(&mut buffer).unwrap() {
                    eb.datagram(
                        now,
                        true,
                        &buffer[..len],
                        &mut |d: &[u8]| lb.send(now, d),
                        &mut write,
                    );
                    moved = true;
                }
                while let Some(Incoming::Frame { len, .. }) = la.receive(&mut buffer).unwrap() {
                    ea.datagram(
                        now,
                        true,
                        &buffer[..len],
                        &mut |d: &[u8]| la.send(now, d),
                        &mut write,
                    );
                    moved = true;
                }
                if !moved {
                    break;
                }
            }
        }
    };
    drive(&mut ends, &mut lines, &flow[..WARM_UP], 0);
    let before = allocations();
    drive(&mut ends, &mut lines, &flow[WARM_UP..], WARM_UP as u64);
    let made = allocations() - before;
    let [a, b] = [&ends[0].counters(), &ends[1].counters()];
    let label = format!("serial {}", framing.describe());
    assert!(
        b[1].delivered > WARM_UP as u64 && a[1].delivered > 0,
        "{label}: {b:?}"
    );
    assert_eq!(
        (a[1].rejected.total(), b[1].rejected.total()),
        (0, 0),
        "{label}"
    );
    let line = format!(
        "{label}: {made} allocations over {} packets (delivered {} and {})",
        MEASURED + MEASURED / 2,
        b[1].delivered,
        a[1].delivered
    );
    println!("{line}");
    (made, line)
}

/// The serial transport's path, HDLC and KISS, does not allocate after warm-up.
#[test]
fn serial_transport_does_not_allocate_after_warm_up() {
    let mut lines = Vec::new();
    let mut allocating = 0;
    for framing in [
        Framing::hdlc(Fcs::Fcs16, 2048),
        Framing::kiss(0, Fcs::Fcs32, 2048),
    ] {
        let (made, line) = measure_serial(framing);
        allocating += usize::from(made > 0);
        lines.push(line);
    }
    assert_eq!(allocating, 0, "{}", lines.join("\n"));
}
