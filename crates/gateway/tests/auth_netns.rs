//! The authenticated UDP link under attack, with real TUN devices and kernel TCP: two UDP
//! gateways (one per network namespace's TUN device) talk through a relay on this host's
//! loopback, which forwards every datagram and, while a checked TCP transfer runs, sends the
//! receiving gateway forged, replayed, truncated, oversize and reflected datagrams (some from a
//! third address). Every one must be refused and counted by reason, none may reach the
//! decompressor or the TUN device (the frames the gateway accepted are exactly the genuine
//! ones relayed), and the transfer must arrive intact. A second test restarts the receiving
//! gateway and, right after, replays to it a long frame the sender sent before the restart and
//! the frames that followed it: the restarted gateway must refuse every one (stale, unsynced),
//! and a transfer after it must arrive intact.
//!
//! Needs root, /dev/net/tun and iproute2. Without them the test prints why and passes, unless
//! the environment variable `CI` is set: then it fails (CI runs as root and must run it).

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use taroc_core::variant::Variant;
use taroc_gateway::auth::{AuthConfig, DEFAULT_TAG_LEN, HELLO, LONG};
use taroc_gateway::counters::Counters;
use taroc_gateway::gateway::LoopOptions;
use taroc_gateway::harness;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns::{self, Netns};
use taroc_gateway::socket;
use taroc_gateway::transfer::{self, TransferConfig};
use taroc_gateway::tun::{Tun, TunConfig};
use taroc_gateway::udp::{self, UdpConfig, DEFAULT_SOCKET_BUFFER};
use taroc_gateway::{keyfile, Error};

const MTU: usize = 1280;

/// What the relay forwarded and injected.
#[derive(Debug, Default)]
struct Relayed {
    a_to_b: u64,
    b_to_a: u64,
    replayed: u64,
    /// Forged from a long-form frame: the tag fails ("forged").
    forged_long: u64,
    /// Forged from a short-form frame: the tag fails with the counter rebuilt ("unsynced").
    forged_short: u64,
    truncated: u64,
    oversize: u64,
    reflected: u64,
}

/// Forwards datagrams between gateways A and B until `stop`; after every 40th datagram from A,
/// attacks B: replays a datagram of A's it forwarded 5 before, forges two (a bit of the frame
/// flipped in this one and in A's latest long-form one, sent from `attacker`), truncates one,
/// pads one past the link MTU, and sends back the latest long-form datagram of B's own not yet
/// reflected.
fn relay(
    socket: &UdpSocket,
    attacker: &UdpSocket,
    addrs: [SocketAddr; 2],
    stop: &AtomicBool,
) -> Relayed {
    let mut r = Relayed::default();
    let mut buffer = vec![0u8; 65536];
    let mut history: Vec<Vec<u8>> = Vec::new();
    let mut b_long: Option<Vec<u8>> = None;
    let mut a_long: Vec<u8> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let datagram = &buffer[..n];
        if from == addrs[1] {
            r.b_to_a += 1;
            let _ = socket.send_to(datagram, addrs[0]);
            if datagram[0] & LONG != 0 {
                b_long = Some(datagram.to_vec());
            }
            continue;
        }
        if from != addrs[0] {
            continue;
        }
        r.a_to_b += 1;
        let _ = socket.send_to(datagram, addrs[1]);
        history.push(datagram.to_vec());
        if datagram[0] & LONG != 0 {
            a_long = datagram.to_vec();
        }
        if !history.len().is_multiple_of(40) {
            continue;
        }
        let to = addrs[1];
        let replay = &history[history.len() - 5];
        r.replayed += u64::from(socket.send_to(replay, to).is_ok());
        for original in [datagram, &a_long[..]] {
            if original.is_empty() {
                continue;
            }
            let mut forged = original.to_vec();
            let at = forged.len() / 2;
            forged[at] ^= 0x10;
            let sent = u64::from(attacker.send_to(&forged, to).is_ok());
            if forged[0] & LONG != 0 {
                r.forged_long += sent;
            } else {
                r.forged_short += sent;
            }
        }
        r.truncated += u64::from(socket.send_to(&datagram[..10], to).is_ok());
        let mut oversize = datagram.to_vec();
        oversize.resize(2000, 0);
        r.oversize += u64::from(attacker.send_to(&oversize, to).is_ok());
        if let Some(own) = b_long.take() {
            r.reflected += u64::from(socket.send_to(&own, to).is_ok());
        }
    }
    r
}

/// Frames a gateway's data path took in (counters of its send and receive directions): every
/// one ends delivered, refused by the decompressor, dropped for its checksum or length, or
/// handed to the compressor as feedback; a hello is counted apart.
fn accepted(c: &[Counters; 2]) -> u64 {
    let r = &c[1];
    r.delivered
        + r.refused.iter().sum::<u64>()
        + r.checksum_dropped
        + r.oversize_rebuilt
        + c[0].feedback_received
        + r.hellos_received
}

/// Two namespaces with a TUN device each (10.203.x.1 and .2), the gateways' and a relay's
/// loopback sockets, and the settings of each gateway (authenticated, `taroc`).
struct Rig {
    ns: [Netns; 2],
    tuns: [Tun; 2],
    sockets: [UdpSocket; 2],
    relay: UdpSocket,
    addrs: [SocketAddr; 2],
    configs: [UdpConfig; 2],
}

impl Rig {
    fn new(label: &str, subnet: u8) -> Result<Rig, Error> {
        let pid = std::process::id();
        let ns = [
            Netns::create(&format!("taroc-{pid}-{label}-a"))?,
            Netns::create(&format!("taroc-{pid}-{label}-b"))?,
        ];
        let mut tuns = Vec::new();
        for (side, ns) in ns.iter().enumerate() {
            tuns.push(Tun::open(&TunConfig {
                name: "taroc0".into(),
                mtu: MTU as u32,
                netns: Some(ns.name().to_owned()),
            })?);
            let address = format!("10.{subnet}.0.{}/24", side + 1);
            netns::ip(&["-n", ns.name(), "address", "add", &address, "dev", "taroc0"])?;
        }
        let bind = || UdpSocket::bind("127.0.0.1:0").map_err(|e| Error::io("binding", e));
        let (socket_a, socket_b, relay) = (bind()?, bind()?, bind()?);
        let local = |s: &UdpSocket| s.local_addr().map_err(|e| Error::io("local address", e));
        let addrs = [local(&socket_a)?, local(&socket_b)?];
        let relay_addr = local(&relay)?;
        // As large as the gateways' own: with the default, a relay that falls behind on a busy
        // machine loses datagrams, and the codecs' damage would count them.
        socket::size_buffers(&relay, DEFAULT_SOCKET_BUFFER)?;
        relay
            .set_read_timeout(Some(Duration::from_millis(20)))
            .map_err(|e| Error::io("read timeout", e))?;
        let auth = AuthConfig {
            key: keyfile::generate()?,
            tag_len: DEFAULT_TAG_LEN,
        };
        let taroc = Variant::by_name("taroc").ok_or_else(|| Error::new("no taroc"))?;
        let config = |listen| UdpConfig {
            listen,
            peer: relay_addr,
            variants: [taroc.clone(), taroc.clone()],
            link: LinkConfig {
                mtu: MTU,
                ..LinkConfig::default()
            },
            tun_mtu: MTU,
            seed: 1,
            verify_checksums: true,
            auth: Some(auth.clone()),
            socket_buffer: DEFAULT_SOCKET_BUFFER,
        };
        let tun_b = tuns.pop().ok_or_else(|| Error::new("no TUN B"))?;
        let tun_a = tuns.pop().ok_or_else(|| Error::new("no TUN A"))?;
        Ok(Rig {
            configs: [config(addrs[0]), config(addrs[1])],
            ns,
            tuns: [tun_a, tun_b],
            sockets: [socket_a, socket_b],
            relay,
            addrs,
        })
    }

    /// A kernel TCP transfer of `bytes` from namespace A to B (port 5201 of B's address).
    fn transfer(
        &self,
        subnet: u8,
        bytes: u64,
        seed: u64,
    ) -> Result<transfer::TransferResult, Error> {
        transfer::run(
            self.ns[0].name(),
            self.ns[1].name(),
            format!("10.{subnet}.0.2:5201").parse().unwrap(),
            &TransferConfig {
                bytes,
                seed,
                time_limit: Duration::from_secs(60),
            },
        )
    }
}

#[test]
fn forged_replayed_truncated_oversize_and_reflected_datagrams_are_refused() -> Result<(), Error> {
    if !harness::environment_or_skip("auth netns") {
        return Ok(());
    }
    let rig = Rig::new("auth", 203)?;
    let [tun_a, tun_b] = &rig.tuns;
    let [socket_a, socket_b] = &rig.sockets;
    let (socket_a, socket_b) = (clone(socket_a)?, clone(socket_b)?);
    let [config_a, config_b] = &rig.configs;
    let (socket_r, addrs) = (&rig.relay, rig.addrs);
    let attacker = UdpSocket::bind("127.0.0.1:0").map_err(|e| Error::io("binding", e))?;
    let stop_gateways = AtomicBool::new(false);
    let stop_relay = AtomicBool::new(false);
    let options = LoopOptions::default();
    let (reports, relayed, transfer) = std::thread::scope(|scope| {
        let gateway_a =
            scope.spawn(|| udp::run_udp_on(tun_a, socket_a, config_a, &stop_gateways, &options));
        let gateway_b =
            scope.spawn(|| udp::run_udp_on(tun_b, socket_b, config_b, &stop_gateways, &options));
        let relay = scope.spawn(|| relay(socket_r, &attacker, addrs, &stop_relay));
        let transfer = rig.transfer(203, 2 << 20, 5);
        // Let the last datagrams land, then stop the relay before the gateways.
        std::thread::sleep(Duration::from_millis(200));
        stop_relay.store(true, Ordering::Relaxed);
        let relayed = relay.join().expect("relay panicked");
        std::thread::sleep(Duration::from_millis(100));
        stop_gateways.store(true, Ordering::Relaxed);
        let a = gateway_a.join().expect("gateway A panicked");
        let b = gateway_b.join().expect("gateway B panicked");
        (a.and_then(|a| b.map(|b| [a, b])), relayed, transfer)
    });
    let [a, b] = reports?;
    let transfer = transfer?;
    let r = &b.counters[1].rejected;
    println!(
        "transfer: {} of {} bytes in {:.2} s, intact {}; relayed A->B {}, B->A {}; injected: \
         replayed {}, forged long {} short {}, truncated {}, oversize {}, reflected {}; B \
         refused {r:?}; \
         accepted by B {}, by A {}",
        transfer.bytes_received,
        transfer.bytes_sent,
        transfer.elapsed_ns as f64 / 1e9,
        transfer.is_intact(),
        relayed.a_to_b,
        relayed.b_to_a,
        relayed.replayed,
        relayed.forged_long,
        relayed.forged_short,
        relayed.truncated,
        relayed.oversize,
        relayed.reflected,
        accepted(&b.counters),
        accepted(&a.counters),
    );
    for (name, c) in [("A", &a.counters[0]), ("B", &b.counters[0])] {
        println!(
            "{name} sent {} datagrams with {} bytes of authentication beyond the kind byte: {:.2} \
             bytes per datagram",
            c.datagrams_sent,
            c.auth_bytes,
            c.auth_bytes as f64 / c.datagrams_sent.max(1) as f64
        );
    }
    println!(
        "peer runs heard: A {}, B {}; context damage: at A {}, at B {}; refused by reason at A \
         {:?}, at B {:?}",
        a.counters[1].peer_runs,
        b.counters[1].peer_runs,
        a.counters[1].context_damage,
        b.counters[1].context_damage,
        a.counters[1].refused,
        b.counters[1].refused
    );
    assert!(transfer.is_intact(), "{transfer:?}");
    assert!(
        relayed.replayed >= 20 && relayed.reflected > 0 && relayed.forged_long > 0,
        "{relayed:?}"
    );
    assert_eq!(r.replayed, relayed.replayed);
    // A flipped bit fails the tag: "forged" for a long-form frame, "unsynced" for a short one.
    assert_eq!(r.forged, relayed.forged_long);
    assert_eq!(r.unsynced, relayed.forged_short);
    assert_eq!(r.malformed, relayed.truncated);
    assert_eq!(r.oversize, relayed.oversize);
    assert_eq!(r.reflected, relayed.reflected);
    assert_eq!(r.foreign, 0);
    // No genuine frame is stale: each gateway waits to hear the other before it reads its
    // TUN device, and a hello that echoes no one is taken.
    assert_eq!(r.stale, 0);
    // Nothing injected got in: B took exactly the genuine frames, A everything B sent.
    assert_eq!(accepted(&b.counters), relayed.a_to_b);
    assert_eq!(accepted(&a.counters), relayed.b_to_a);
    assert_eq!(a.counters[1].rejected.total(), 0);
    assert_eq!(
        b.counters[1].context_damage + a.counters[1].context_damage,
        0
    );
    assert_eq!(b.counters[1].other_source, 0);
    drop(rig);
    Ok(())
}

/// Another handle on `socket`.
fn clone(socket: &UdpSocket) -> Result<UdpSocket, Error> {
    socket
        .try_clone()
        .map_err(|e| Error::io("cloning a socket", e))
}

/// Forwards datagrams between gateways A and B until `stop`, keeping every datagram of A's in
/// `history` and counting them in `a_to_b`.
fn forward(
    socket: &UdpSocket,
    addrs: [SocketAddr; 2],
    stop: &AtomicBool,
    history: &Mutex<Vec<Vec<u8>>>,
    a_to_b: &AtomicU64,
) {
    let mut buffer = vec![0u8; 65536];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let datagram = &buffer[..n];
        if from == addrs[1] {
            let _ = socket.send_to(datagram, addrs[0]);
        } else if from == addrs[0] {
            a_to_b.fetch_add(1, Ordering::Relaxed);
            let _ = socket.send_to(datagram, addrs[1]);
            history.lock().unwrap().push(datagram.to_vec());
        }
    }
}

#[test]
fn a_replayed_long_frame_of_before_a_restart_is_refused_right_after_it() -> Result<(), Error> {
    if !harness::environment_or_skip("auth netns restart") {
        return Ok(());
    }
    let rig = Rig::new("fresh", 204)?;
    let [tun_a, tun_b] = &rig.tuns;
    let [config_a, config_b] = &rig.configs;
    let addrs = rig.addrs;
    let options = LoopOptions::default();
    let (stop_a, stop_b1, stop_b2, stop_relay) = (
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    let history = Mutex::new(Vec::new());
    let a_to_b = AtomicU64::new(0);
    // B's socket stays open across the restart: what comes meanwhile waits for B's next run.
    let socket_a = clone(&rig.sockets[0])?;
    let (socket_b1, socket_b2) = (clone(&rig.sockets[1])?, clone(&rig.sockets[1])?);
    let run = std::thread::scope(|scope| {
        let gateway_a =
            scope.spawn(|| udp::run_udp_on(tun_a, socket_a, config_a, &stop_a, &options));
        let gateway_b1 =
            scope.spawn(|| udp::run_udp_on(tun_b, socket_b1, config_b, &stop_b1, &options));
        let relay = scope.spawn(|| forward(&rig.relay, addrs, &stop_relay, &history, &a_to_b));
        let before = rig.transfer(204, 256 << 10, 6);
        std::thread::sleep(Duration::from_millis(200));
        stop_b1.store(true, Ordering::Relaxed);
        let b1 = gateway_b1.join().expect("gateway B panicked");
        // Right after the restart, before B's next run reads anything: A's latest long frame
        // of before the restart and the frames that followed it, replayed.
        let injected: Vec<Vec<u8>> = {
            let history = history.lock().unwrap();
            let data = |d: &&Vec<u8>| d[0] != HELLO | LONG;
            let long = history
                .iter()
                .rposition(|d| d[0] & LONG != 0 && data(&d))
                .unwrap_or(0);
            history[long..]
                .iter()
                .filter(data)
                .take(40)
                .cloned()
                .collect()
        };
        for d in &injected {
            let _ = rig.relay.send_to(d, addrs[1]);
        }
        let gateway_b2 =
            scope.spawn(|| udp::run_udp_on(tun_b, socket_b2, config_b, &stop_b2, &options));
        std::thread::sleep(Duration::from_millis(200));
        let after = rig.transfer(204, 256 << 10, 7);
        std::thread::sleep(Duration::from_millis(200));
        stop_relay.store(true, Ordering::Relaxed);
        relay.join().expect("relay panicked");
        std::thread::sleep(Duration::from_millis(100));
        stop_b2.store(true, Ordering::Relaxed);
        stop_a.store(true, Ordering::Relaxed);
        let b2 = gateway_b2.join().expect("gateway B panicked");
        let a = gateway_a.join().expect("gateway A panicked");
        (before, after, a, b1, b2, injected)
    });
    let (before, after, a, b1, b2, injected) = run;
    let (before, after, _a, b1, b2) = (before?, after?, a?, b1?, b2?);
    let long = injected.iter().filter(|d| d[0] & LONG != 0).count() as u64;
    let short = injected.len() as u64 - long;
    let r = &b2.counters[1].rejected;
    println!(
        "transfers intact {} {} ({:.2} s, {:.2} s); injected into the restarted B: {long} long and \
         {short} short frames of before the restart; B refused {r:?}; B accepted before the \
         restart {}, after {}, of {} relayed",
        before.is_intact(),
        after.is_intact(),
        before.elapsed_ns as f64 / 1e9,
        after.elapsed_ns as f64 / 1e9,
        accepted(&b1.counters),
        accepted(&b2.counters),
        a_to_b.load(Ordering::Relaxed),
    );
    assert!(
        before.is_intact() && after.is_intact(),
        "{before:?} {after:?}"
    );
    assert!(long == 1 && short >= 10, "{injected:?}");
    // The long frame echoes B's first run: stale; the short ones come before B has a peer.
    assert_eq!(
        (r.stale, r.unsynced, r.total()),
        (long, short, long + short)
    );
    // Nothing injected got in: B's two runs took every genuine frame.
    assert_eq!(b1.counters[1].rejected.total(), 0);
    assert_eq!(
        accepted(&b1.counters) + accepted(&b2.counters),
        a_to_b.load(Ordering::Relaxed)
    );
    drop(rig);
    Ok(())
}
