//! Real kernel traffic other than TCP through the gateway, for `taroc-plus` and `taroc-plus-u`,
//! IPv4 and IPv6, on a clean link and a lossy one (BER 1e-5 and 2% of frames lost): between two
//! fresh network namespaces, at the same time,
//! - DNS-like request/response: small queries, each from a new source port, each answered;
//! - RTP-shaped streams, one each way: UDP between even ports, a 12-byte RTP header (version 2,
//!   payload type 0, the marker on the first packet, sequence +1 and timestamp +160 a packet),
//!   160 octets of payload, one packet every 5 ms;
//! - large UDP datagrams (up to 6000 octets) that the kernel fragments, echoed back;
//! - the kernel's ICMP (ICMPv6) echo, by `ping`, which checks the data of every reply.
//!
//! Every datagram received is checked byte for byte against what was sent (queries and
//! datagrams by the server, answers, echoes and RTP packets by their receiver): on the lossy
//! link some may be lost, none altered; on the clean link none is lost either. The gateway's
//! oracle must count no incorrect delivery, and most frames must be compressed ones (the
//! non-TCP CO frames, not only IR-N or TYPE_IP): the frames by kind are printed.
//!
//! Needs root, /dev/net/tun and iproute2 (and iputils `ping` for the echo part: without it
//! that part is skipped, with a note). Without them the tests print why and pass, unless the
//! environment variable `CI` is set: then they fail.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use taroc_core::variant::Variant;
use taroc_core::FrameKind;
use taroc_gateway::gateway::RunReport;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::{netns, Error};
use taroc_lab::harness::{self, IpVersion, Mode, Scenario};
use taroc_lab::transfer::TransferConfig;

/// The variants under test.
const VARIANTS: [&str; 2] = ["taroc-plus", "taroc-plus-u"];

const DNS_PORT: u16 = 53;
const DNS_QUERIES: u32 = 150;
/// Source and destination ports of the RTP stream from A to B, and from B to A.
const RTP_PORTS: [[u16; 2]; 2] = [[40_000, 40_002], [40_010, 40_012]];
const RTP_PACKETS: u32 = 300;
const RTP_PACING: Duration = Duration::from_millis(5);
const BULK_PORT: u16 = 9_000;
const BULK_DATAGRAMS: u32 = 60;
const BULK_SIZES: [usize; 5] = [1_400, 2_000, 3_000, 4_000, 6_000];
const PINGS: u32 = 150;
/// How long a client waits for an answer or echo before it counts the exchange lost.
const ANSWER_WAIT: Duration = Duration::from_millis(300);

/// What one kind of traffic counted.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    /// Datagrams (exchanges, pings) sent.
    sent: u64,
    /// Received and checked intact.
    intact: u64,
    /// Received but differing from what was sent.
    altered: u64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.sent += other.sent;
        self.intact += other.intact;
        self.altered += other.altered;
    }
}

/// What the traffic of one run counted.
#[derive(Debug, Default)]
struct Traffic {
    /// Queries answered (the servers' checks of the queries counted in `altered`).
    dns: Tally,
    /// RTP packets, both streams.
    rtp: Tally,
    /// Large datagrams echoed (the server's checks counted in `altered`).
    bulk: Tally,
    /// Echo requests and their replies, as `ping` counted them (`None`: no `ping`).
    ping: Option<Tally>,
}

/// Deterministic bytes for datagram `index` of the traffic kind `tag`.
fn fill(tag: u64, index: u32, len: usize) -> Vec<u8> {
    let mut state = tag << 32 ^ u64::from(index) ^ 0x7A20_C0DE_5EED_0001;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// DNS query `i`: a header with ID `i`, one question `q<i>-<label>.example.` of type A.
fn dns_query(i: u32) -> Vec<u8> {
    let mut q = Vec::new();
    q.extend_from_slice(&(i as u16).to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    let label = format!("q{i}-{}", "x".repeat((i % 23) as usize));
    q.push(label.len() as u8);
    q.extend_from_slice(label.as_bytes());
    q.push(7);
    q.extend_from_slice(b"example");
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    q
}

/// The answer to `query`: the query as a response with one A record made from its bytes.
fn dns_answer(query: &[u8]) -> Vec<u8> {
    let mut a = query.to_vec();
    if a.len() >= 12 {
        a[2..4].copy_from_slice(&[0x81, 0x80]);
        a[6..8].copy_from_slice(&[0, 1]);
    }
    a.extend_from_slice(&[0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x0E, 0x10, 0, 4]);
    let sum = query
        .iter()
        .fold(0u32, |s, &b| s.rotate_left(5) ^ u32::from(b));
    a.extend_from_slice(&sum.to_be_bytes());
    a
}

/// RTP packet `k` of stream `stream` (0: A to B, 1: B to A).
fn rtp_packet(stream: usize, k: u32) -> Vec<u8> {
    let seq = (0x1234 + 0x4000 * stream as u32 + k) as u16;
    let ts = 0x0102_0304u32.wrapping_add(160 * k);
    let marker = if k == 0 { 0x80 } else { 0 };
    let mut p = vec![0x80, marker];
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ts.to_be_bytes());
    p.extend_from_slice(&(0xC0FF_EE00u32 + stream as u32).to_be_bytes());
    p.extend_from_slice(&fill(2 + stream as u64, k, 160));
    p
}

/// The index of RTP packet `p` of stream `stream`, from its sequence number.
fn rtp_index(stream: usize, p: &[u8]) -> Option<u32> {
    let seq = u16::from_be_bytes([*p.get(2)?, *p.get(3)?]);
    let k = seq.wrapping_sub((0x1234 + 0x4000 * stream as u32) as u16);
    (u32::from(k) < RTP_PACKETS).then_some(u32::from(k))
}

/// Large datagram `i`: its index, then bytes, of one of [`BULK_SIZES`].
fn bulk_datagram(i: u32) -> Vec<u8> {
    let len = BULK_SIZES[i as usize % BULK_SIZES.len()];
    let mut d = i.to_be_bytes().to_vec();
    d.extend_from_slice(&fill(4, i, len - 4));
    d
}

fn bind(address: IpAddr, port: u16) -> Result<UdpSocket, Error> {
    let socket = UdpSocket::bind((address, port))
        .map_err(|e| Error::io(format!("binding UDP {address}:{port}"), e))?;
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .map_err(|e| Error::io("setting a read timeout", e))?;
    Ok(socket)
}

/// A server loop in the calling thread's namespace: each datagram on `socket` is checked by
/// `check` (which says whether it is intact) and answered with `answer` of it, until `stop`.
fn serve(
    socket: &UdpSocket,
    stop: &AtomicBool,
    check: impl Fn(&[u8]) -> bool,
    answer: impl Fn(&[u8]) -> Option<Vec<u8>>,
) -> Tally {
    let mut tally = Tally::default();
    let mut buffer = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let datagram = &buffer[..n];
        if check(datagram) {
            tally.intact += 1;
        } else {
            tally.altered += 1;
        }
        if let Some(reply) = answer(datagram) {
            let _ = socket.send_to(&reply, from);
        }
    }
    tally
}

/// Waits on `socket` for the reply `expected`, up to [`ANSWER_WAIT`]: counts it intact or
/// altered in `tally` (a late reply of an earlier exchange is skipped).
fn await_reply(
    socket: &UdpSocket,
    expected: &[u8],
    matches: impl Fn(&[u8]) -> bool,
    tally: &mut Tally,
) {
    let deadline = Instant::now() + ANSWER_WAIT;
    let mut buffer = vec![0u8; 65_536];
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if left.is_zero() || socket.set_read_timeout(Some(left)).is_err() {
            break;
        }
        let Ok(n) = socket.recv(&mut buffer) else {
            break;
        };
        let reply = &buffer[..n];
        if reply == expected {
            tally.intact += 1;
            return;
        }
        if matches(reply) {
            tally.altered += 1;
            return;
        }
        // Otherwise a late reply to an earlier exchange (whose wait ran out): skipped.
    }
}

/// The DNS-like client in A: [`DNS_QUERIES`] queries, each from a new socket (a new source
/// port), each waiting for its answer.
fn dns_client(server: SocketAddr) -> Result<Tally, Error> {
    let mut tally = Tally::default();
    let local = match server.ip() {
        IpAddr::V4(_) => IpAddr::from([0u8; 4]),
        IpAddr::V6(_) => IpAddr::from([0u16; 8]),
    };
    for i in 0..DNS_QUERIES {
        let socket = bind(local, 0)?;
        socket
            .connect(server)
            .map_err(|e| Error::io(format!("connecting UDP to {server}"), e))?;
        let query = dns_query(i);
        socket
            .send(&query)
            .map_err(|e| Error::io("sending a query", e))?;
        tally.sent += 1;
        let expected = dns_answer(&query);
        // Any answer on this socket is this query's (its port is new).
        await_reply(&socket, &expected, |_| true, &mut tally);
    }
    Ok(tally)
}

/// The large-datagram client in A: [`BULK_DATAGRAMS`] datagrams, each waiting for its echo.
fn bulk_client(socket: &UdpSocket, server: SocketAddr) -> Result<Tally, Error> {
    let mut tally = Tally::default();
    socket
        .connect(server)
        .map_err(|e| Error::io(format!("connecting UDP to {server}"), e))?;
    for i in 0..BULK_DATAGRAMS {
        let datagram = bulk_datagram(i);
        socket
            .send(&datagram)
            .map_err(|e| Error::io("sending a large datagram", e))?;
        tally.sent += 1;
        let index = i.to_be_bytes();
        await_reply(socket, &datagram, |r| r.starts_with(&index), &mut tally);
    }
    Ok(tally)
}

/// Sends RTP stream `stream` on `socket` (connected), one packet every [`RTP_PACING`].
fn rtp_send(socket: &UdpSocket, stream: usize) -> Result<u64, Error> {
    let start = Instant::now();
    for k in 0..RTP_PACKETS {
        let due = start + RTP_PACING * k;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        socket
            .send(&rtp_packet(stream, k))
            .map_err(|e| Error::io("sending an RTP packet", e))?;
    }
    Ok(u64::from(RTP_PACKETS))
}

/// Receives RTP stream `stream` on `socket` until `stop`, each packet checked against the one
/// of its sequence number.
fn rtp_receive(socket: &UdpSocket, stream: usize, stop: &AtomicBool) -> Tally {
    serve(
        socket,
        stop,
        |p| rtp_index(stream, p).is_some_and(|k| p == rtp_packet(stream, k)),
        |_| None,
    )
}

/// `ping` from namespace `ns` to `to`: the requests sent and the replies received, as it
/// counts them, with the replies whose data it found wrong (or duplicated) as altered.
fn ping(ns: &str, to: IpAddr) -> Result<Option<Tally>, Error> {
    if Command::new("ping").arg("-V").output().is_err() {
        eprintln!("NOTE: no `ping` (iputils): the ICMP echo part is skipped");
        return Ok(None);
    }
    let count = PINGS.to_string();
    let output = Command::new("ip")
        .args([
            "netns", "exec", ns, "ping", "-n", "-c", &count, "-i", "0.01",
        ])
        .args(["-s", "120", "-W", "1", &to.to_string()])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io("running ping", e))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let number_before = |word: &str| -> Option<u64> {
        let at = text.find(word)?;
        text[..at].split_whitespace().last()?.parse().ok()
    };
    let (Some(sent), Some(received)) = (
        number_before(" packets transmitted"),
        number_before(" received"),
    ) else {
        return Err(Error::new(format!(
            "ping's output is not understood:\n{text}"
        )));
    };
    let altered = text
        .lines()
        .filter(|l| l.contains("wrong data") || l.contains("DUP!") || l.contains("BAD CHECKSUM"))
        .count() as u64;
    Ok(Some(Tally {
        sent,
        intact: received.saturating_sub(altered),
        altered,
    }))
}

/// The result of a traffic thread (one that panicked is an error).
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T, Error>>) -> Result<T, Error> {
    handle
        .join()
        .unwrap_or_else(|_| Err(Error::new("a traffic thread panicked")))
}

/// Every kind of traffic at once between namespaces A and B (`ns`), addresses of `ip`.
fn traffic(ns: &[String; 2], ip: IpVersion) -> Result<Traffic, Error> {
    let [a, b] = [ip.address(0), ip.address(1)];
    let stop = AtomicBool::new(false);
    // Sockets first (binding in the namespaces), so that nothing is sent before its
    // receiver is there.
    let b_sockets = netns::run_in(Some(&ns[1]), || {
        Ok([
            bind(b, DNS_PORT)?,
            bind(b, BULK_PORT)?,
            bind(b, RTP_PORTS[0][1])?,
            bind(b, RTP_PORTS[1][0])?,
        ])
    })?;
    let a_sockets = netns::run_in(Some(&ns[0]), || {
        Ok([
            bind(a, RTP_PORTS[0][0])?,
            bind(a, RTP_PORTS[1][1])?,
            bind(a, 0)?,
        ])
    })?;
    let [dns_socket, bulk_socket, rtp_in_b, rtp_out_b] = &b_sockets;
    let [rtp_out_a, rtp_in_a, bulk_socket_a] = &a_sockets;
    let connect = |s: &UdpSocket, to: SocketAddr| {
        s.connect(to)
            .map_err(|e| Error::io(format!("connecting UDP to {to}"), e))
    };
    connect(rtp_out_a, SocketAddr::new(b, RTP_PORTS[0][1]))?;
    connect(rtp_out_b, SocketAddr::new(a, RTP_PORTS[1][1]))?;
    std::thread::scope(|scope| -> Result<Traffic, Error> {
        let stop = &stop;
        // Sockets keep the namespace they were made in: the threads using them need not enter.
        let servers = [
            scope.spawn(move || {
                serve(
                    dns_socket,
                    stop,
                    |q| q.len() >= 2 && q == dns_query(u32::from(u16::from_be_bytes([q[0], q[1]]))),
                    |q| Some(dns_answer(q)),
                )
            }),
            scope.spawn(move || {
                serve(
                    bulk_socket,
                    stop,
                    |d| {
                        d.len() >= 4
                            && d == bulk_datagram(u32::from_be_bytes([d[0], d[1], d[2], d[3]]))
                    },
                    |d| Some(d.to_vec()),
                )
            }),
            scope.spawn(move || rtp_receive(rtp_in_b, 0, stop)),
            scope.spawn(move || rtp_receive(rtp_in_a, 1, stop)),
        ];
        let ns_a = &ns[0];
        let dns = scope
            .spawn(move || netns::run_in(Some(ns_a), || dns_client(SocketAddr::new(b, DNS_PORT))));
        let bulk = scope.spawn(move || bulk_client(bulk_socket_a, SocketAddr::new(b, BULK_PORT)));
        let rtp = [
            scope.spawn(move || rtp_send(rtp_out_a, 0)),
            scope.spawn(move || rtp_send(rtp_out_b, 1)),
        ];
        let pinged = ping(ns_a, b);
        let dns = joined(dns);
        let bulk = joined(bulk);
        let rtp_sent: Result<Vec<u64>, Error> = rtp.into_iter().map(joined).collect();
        // Let the last packets arrive, then stop the receivers.
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        let [dns_server, bulk_server, rtp_b, rtp_a] = servers.map(|h| h.join());
        let server = |t: std::thread::Result<Tally>| {
            t.map_err(|_| Error::new("a receiving thread panicked"))
        };
        let (dns_server, bulk_server) = (server(dns_server)?, server(bulk_server)?);
        let (rtp_a, rtp_b) = (server(rtp_a)?, server(rtp_b)?);
        let mut result = Traffic {
            dns: dns?,
            bulk: bulk?,
            ping: pinged?,
            ..Traffic::default()
        };
        // What the servers found altered in what reached them counts with the replies.
        result.dns.altered += dns_server.altered;
        result.bulk.altered += bulk_server.altered;
        result.rtp.sent = rtp_sent?.iter().sum();
        result.rtp.add(rtp_a);
        result.rtp.add(rtp_b);
        Ok(result)
    })
}

fn scenario(variant: &Variant, ip_version: IpVersion, lossy: bool, seed: u64) -> Scenario {
    Scenario {
        variants: [variant.clone(), variant.clone()],
        link: LinkConfig {
            rate_bps: 8_000_000,
            delay: Duration::from_millis(2),
            queue: 100,
            ber: if lossy { 1e-5 } else { 0.0 },
            loss: if lossy { 0.02 } else { 0.0 },
            mtu: 1280,
            slots: 1024,
            ..LinkConfig::default()
        },
        tun_mtu: 1280,
        ip_version,
        timestamps: true,
        congestion_control: None,
        // Unused: the traffic is this file's.
        transfer: TransferConfig {
            bytes: 0,
            seed,
            time_limit: Duration::from_secs(30),
        },
        seed,
        mode: Mode::Emulated,
        authenticated: true,
    }
}

/// The frames of both directions, by kind family.
fn frames_by_family(report: &RunReport) -> [u64; 7] {
    let mut frames = [0; 7];
    for c in &report.counters {
        for (sum, n) in frames.iter_mut().zip(c.frames_by_kind) {
            *sum += n;
        }
    }
    frames
}

/// Runs both variants (in parallel, each in its own namespaces) and checks them.
fn run_variants(ip_version: IpVersion, lossy: bool) {
    if !harness::environment_or_skip("non-TCP netns") {
        return;
    }
    let cases = VARIANTS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let variant = Variant::by_name(name).expect("the variant exists");
            let s = scenario(&variant, ip_version, lossy, 31 + i as u64);
            (variant, s)
        })
        .collect();
    let started = Instant::now();
    let outcomes = harness::run_each(cases, |s| {
        harness::run_traffic(s, |ns| traffic(ns, s.ip_version))
    });
    let link = if lossy {
        "lossy (BER 1e-5, loss 2%)"
    } else {
        "clean"
    };
    let mut failures = Vec::new();
    for (variant, outcome) in &outcomes {
        let label = format!("IPv{} {link} {}", ip_version.number(), variant.name);
        let (traffic, report) = match outcome {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let [a, b] = &report.counters;
        let frames = frames_by_family(report);
        let family = |kind: FrameKind| frames[usize::from(kind.to_byte())];
        let (ip, full, compressed) = (
            family(FrameKind::Ip),
            family(FrameKind::UncompressedTcp),
            family(FrameKind::CompressedNonTcp),
        );
        let all: u64 = frames.iter().sum();
        println!(
            "{label}: dns {:?}, rtp {:?}, large {:?}, ping {:?}; frames {all}: TYPE_IP {ip}, \
             IR-N (full-header family) {full}, CO (non-TCP compressed family) {compressed}, \
             TCP {}; link lost {}, ctx damage {}, checksum dropped {}, incorrect {}; \
             bytes in {} on link {} ({:.1} s so far)",
            traffic.dns,
            traffic.rtp,
            traffic.bulk,
            traffic.ping,
            family(FrameKind::CompressedTcp),
            a.link_lost + a.link_bit_errors + b.link_lost + b.link_bit_errors,
            a.context_damage + b.context_damage,
            a.checksum_dropped + b.checksum_dropped,
            a.incorrect_delivered + b.incorrect_delivered,
            a.bytes_in + b.bytes_in,
            a.link_bytes + b.link_bytes,
            started.elapsed().as_secs_f64(),
        );
        let kinds = [
            ("dns", Some(traffic.dns)),
            ("rtp", Some(traffic.rtp)),
            ("large", Some(traffic.bulk)),
            ("ping", traffic.ping),
        ];
        for (name, tally) in kinds {
            let Some(t) = tally else { continue };
            if t.altered > 0 {
                failures.push(format!("{label}: {name}: {} altered: {t:?}", t.altered));
            }
            // A clean link loses nothing to the codec (no context damage, no checksum drop, nothing
            // altered: checked here and below); the emulated link's queue (bursts of fragments)
            // and, on a loaded host, the kernel's buffers may still drop a few datagrams.
            if !lossy && t.intact * 10 < t.sent * 9 {
                failures.push(format!("{label}: {name}: lost on a clean link: {t:?}"));
            }
            // A lossy link loses some, not most (a large datagram's exchange is up to ten
            // frames of 1280 octets, of which about one in eight is lost: a fifth must pass).
            let share = if name == "large" { 5 } else { 2 };
            if t.intact * share < t.sent {
                failures.push(format!("{label}: {name}: most lost: {t:?}"));
            }
        }
        let incorrect = a.incorrect_delivered + b.incorrect_delivered;
        if incorrect > 0 {
            failures.push(format!(
                "{label}: the oracle counted {incorrect} incorrect deliveries"
            ));
        }
        let checksum_dropped = a.checksum_dropped + b.checksum_dropped;
        if checksum_dropped > 0 {
            failures.push(format!(
                "{label}: {checksum_dropped} rebuilt packets failed their checksum"
            ));
        }
        if !lossy && a.context_damage + b.context_damage > 0 {
            failures.push(format!("{label}: context damage on a clean link"));
        }
        if lossy && a.link_lost + a.link_bit_errors + b.link_lost + b.link_bit_errors == 0 {
            failures.push(format!("{label}: the lossy link lost nothing"));
        }
        // The RTP streams, the echoes and the fragments compress; a DNS query from a new port
        // is a new context (IR-N), and an IPv6 fragment (an extension header) goes TYPE_IP.
        if compressed * 2 < all {
            failures.push(format!(
                "{label}: only {compressed} of {all} frames compressed (CO): {frames:?}"
            ));
        }
    }
    println!(
        "IPv{} {link}: {:.1} s",
        ip_version.number(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

#[test]
fn ipv4_clean_link_non_tcp() {
    run_variants(IpVersion::V4, false);
}

#[test]
fn ipv4_lossy_link_non_tcp() {
    run_variants(IpVersion::V4, true);
}

#[test]
fn ipv6_clean_link_non_tcp() {
    run_variants(IpVersion::V6, false);
}

#[test]
fn ipv6_lossy_link_non_tcp() {
    run_variants(IpVersion::V6, true);
}
