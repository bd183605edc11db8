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
//! Two more replay to a gateway a long frame of its OWN earlier run (B starts after A, so its
//! counters, from the wall clock, count above A's), recorded by the harness's relay
//! ([`harness::LivePair`]): to the restarted B the moment its new run says hello, then
//! transfers 1 s and 10 s after the restart must arrive intact; and to B (and A) after the
//! restarted B and A have paired and carried a transfer, then a transfer must arrive intact and
//! neither gateway may count a new peer run (B's codecs must not restart).
//!
//! Needs root, /dev/net/tun and iproute2. Without them the test prints why and passes, unless
//! the environment variable `CI` is set: then it fails (CI runs as root and must run it).

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use taroc_core::variant::Variant;
use taroc_gateway::auth::{AuthConfig, DEFAULT_TAG_LEN, HELLO, LONG};
use taroc_gateway::counters::Counters;
use taroc_gateway::endpoint::EndpointConfig;
use taroc_gateway::gateway::LoopOptions;
use taroc_gateway::gateway::RunReport;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns::{self, Netns};
use taroc_gateway::socket;
use taroc_gateway::socket::DEFAULT_SOCKET_BUFFER;
use taroc_gateway::tun::{Tun, TunConfig};
use taroc_gateway::udp::{self, UdpConfig};
use taroc_gateway::{keyfile, Error};
use taroc_lab::harness::{self, IpVersion, LivePair, LiveReport, Mode, Scenario};
use taroc_lab::transfer::{self, TransferConfig};

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
        // A padded hello is malformed (a hello carries nothing), not oversize: pad frames only.
        if datagram[0] & !LONG != HELLO {
            let mut oversize = datagram.to_vec();
            oversize.resize(2000, 0);
            r.oversize += u64::from(attacker.send_to(&oversize, to).is_ok());
        }
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
            socket_buffer: DEFAULT_SOCKET_BUFFER,
            endpoint: EndpointConfig {
                variants: [taroc.clone(), taroc.clone()],
                link: LinkConfig {
                    mtu: MTU,
                    ..LinkConfig::default()
                },
                tun_mtu: MTU,
                seed: 1,
                verify_checksums: true,
                auth: Some(auth.clone()),
                may_reorder: true,
            },
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

/// B starts this long after A in the replays of a gateway's own earlier run: B's counters, from
/// the wall clock at its start, then count above A's, and so does a replayed frame of B's
/// earlier run. That is the case where the restarted B could take the replay for news of a
/// run fresher than its peer's.
const STAGGER: Duration = Duration::from_millis(100);

/// How long a restarted gateway stays down.
const DOWN: Duration = Duration::from_millis(500);

/// Bytes of each transfer of the replays of a gateway's own earlier run.
const REPLAY_TRANSFER_BYTES: u64 = 200 << 10;

/// Each transfer of the replays of a gateway's own earlier run must complete within this, from
/// its start (connecting included) to the end of its stream; it is also the transfer's time
/// limit. Undisturbed, 200 KiB take about 0.3 s at 8 Mbit/s; the bound leaves room for a busy
/// machine and for the SYN retransmissions at 1, 3 and 7 s (Linux's first retransmission
/// timeout of 1 s, doubling) if the first SYNs are lost, but not for a link that does not work.
const TRANSFER_BOUND: Duration = Duration::from_secs(15);

/// When the transfers after a replay at a restart start, after the restart.
const AFTER_RESTART: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(10)];

/// Two authenticated UDP gateways with `taroc-repair` both ways, 8 Mbit/s and 2 ms each way,
/// MTU 1280, through the harness's relay.
fn live_scenario(seed: u64) -> Scenario {
    let variant = Variant::by_name("taroc-repair").expect("a variant");
    Scenario {
        variants: [variant.clone(), variant],
        link: LinkConfig {
            rate_bps: 8_000_000,
            delay: Duration::from_millis(2),
            queue: 100,
            mtu: MTU,
            slots: 1024,
            ..LinkConfig::default()
        },
        tun_mtu: MTU as u32,
        ip_version: IpVersion::V4,
        timestamps: true,
        congestion_control: None,
        transfer: transfer_config(seed),
        seed,
        mode: Mode::Udp,
        authenticated: true,
    }
}

/// A transfer of [`REPLAY_TRANSFER_BYTES`] of the stream of `seed`, within [`TRANSFER_BOUND`].
fn transfer_config(seed: u64) -> TransferConfig {
    TransferConfig {
        bytes: REPLAY_TRANSFER_BYTES,
        seed,
        time_limit: TRANSFER_BOUND,
    }
}

/// A transfer through `live` and how long it took from its start, connecting included; an
/// error (it could not connect within [`TRANSFER_BOUND`], say) names the transfer, `what`.
fn timed_transfer(
    live: &LivePair,
    seed: u64,
    what: &str,
) -> Result<(transfer::TransferResult, Duration), Error> {
    let started = Instant::now();
    let result = live
        .transfer(&transfer_config(seed))
        .map_err(|e| Error::new(format!("{what}, after {:?}: {e}", started.elapsed())))?;
    Ok((result, started.elapsed()))
}

/// Starts a live pair (B [`STAGGER`] after A), carries a transfer while recording what B
/// sends, and returns the pair and the last long-form data frame (not a hello) B sent: a frame
/// of B's first run that echoes A.
fn pair_and_record_b(seed: u64) -> Result<(LivePair, Vec<u8>), Error> {
    let live = LivePair::start(&live_scenario(seed), STAGGER)?;
    live.relay().start_recording(1);
    let (first, took) = timed_transfer(&live, seed, "the first transfer")?;
    let recorded = live.relay().take_recorded(1);
    assert!(first.is_intact(), "the first transfer: {first:?}");
    assert!(took <= TRANSFER_BOUND, "the first transfer took {took:?}");
    let old = recorded
        .iter()
        .rev()
        .find(|d| d[0] & LONG != 0 && d[0] != HELLO | LONG)
        .cloned()
        .unwrap_or_else(|| panic!("no long data frame among B's {} datagrams", recorded.len()));
    Ok((live, old))
}

/// The reports of gateway `side`'s runs, checked to be `runs` many.
fn runs(report: &LiveReport, side: usize, runs: usize) -> &[RunReport] {
    let reports = &report.runs[side];
    assert_eq!(reports.len(), runs, "runs of gateway {side}");
    reports
}

#[test]
fn a_replay_of_its_own_earlier_run_the_moment_a_restarted_gateway_says_hello_is_harmless(
) -> Result<(), Error> {
    if !harness::environment_or_skip("auth netns own replay at restart") {
        return Ok(());
    }
    let (mut live, old) = pair_and_record_b(11)?;
    live.stop(1)?;
    std::thread::sleep(DOWN);
    // B is down: the next datagram from its address is the new run's first, its hello.
    live.relay().inject_after_next(1, 1, old.clone());
    live.start_again(1)?;
    let restarted = Instant::now();
    while live.relay().injected_after().is_none() && restarted.elapsed() < TRANSFER_BOUND {
        std::thread::sleep(Duration::from_millis(1));
    }
    let went_after = live.relay().injected_after();
    let mut transfers = Vec::new();
    for (i, at) in AFTER_RESTART.into_iter().enumerate() {
        std::thread::sleep(at.saturating_sub(restarted.elapsed()));
        transfers.push(timed_transfer(
            &live,
            12 + i as u64,
            &format!("the transfer {at:?} after B's restart"),
        )?);
    }
    let report = live.finish()?;
    let (a, b) = (&runs(&report, 0, 1)[0], &runs(&report, 1, 2)[1]);
    for ((t, took), at) in transfers.iter().zip(AFTER_RESTART) {
        println!(
            "transfer {:.0} s after B's restart: intact {}, {} bytes in {:.3} s (connecting \
             included)",
            at.as_secs_f64(),
            t.is_intact(),
            t.bytes_received,
            took.as_secs_f64()
        );
    }
    println!(
        "replayed to the restarted B: B's own earlier long frame (kind {:#04x}) right after {:?}; \
         restarted B refused {:?}, peer runs heard: A {}, restarted B {}",
        old[0],
        went_after.as_ref().map(|d| format!("kind {:#04x}", d[0])),
        b.counters[1].rejected,
        a.counters[1].peer_runs,
        b.counters[1].peer_runs,
    );
    assert_eq!(
        went_after.map(|d| d[0]),
        Some(HELLO | LONG),
        "the replay must follow the restarted B's hello"
    );
    assert_eq!(report.relay.injected, [0, 1]);
    for ((t, took), at) in transfers.iter().zip(AFTER_RESTART) {
        assert!(
            t.is_intact(),
            "the transfer {at:?} after the restart: {t:?}"
        );
        assert!(
            *took <= TRANSFER_BOUND,
            "{at:?} after the restart: {took:?}"
        );
    }
    // The replay echoes A, not the restarted B: stale, never its content.
    assert!(b.counters[1].rejected.stale >= 1, "{:?}", b.counters[1]);
    // The restarted B took A as its peer once; A took B's two runs, one after the other.
    assert_eq!((a.counters[1].peer_runs, b.counters[1].peer_runs), (2, 1));
    Ok(())
}

#[test]
fn a_replay_of_its_own_earlier_run_after_pairing_restarts_nothing() -> Result<(), Error> {
    if !harness::environment_or_skip("auth netns own replay after pairing") {
        return Ok(());
    }
    let (mut live, old) = pair_and_record_b(21)?;
    live.restart(1, DOWN)?;
    let (paired, paired_took) = timed_transfer(&live, 22, "the transfer after B's restart")?;
    // To B its own earlier run's frame; to A the same, a frame of its peer's earlier run.
    live.relay().inject(1, &old)?;
    live.relay().inject(0, &old)?;
    let (after, after_took) = timed_transfer(&live, 23, "the transfer after the replay")?;
    let report = live.finish()?;
    let (a, b) = (&runs(&report, 0, 1)[0], &runs(&report, 1, 2)[1]);
    println!(
        "after B's restart: transfer intact {} in {:.3} s; after the replay: intact {} in {:.3} \
         s; refused by A {:?}, by the restarted B {:?}; peer runs heard: A {}, restarted B {}",
        paired.is_intact(),
        paired_took.as_secs_f64(),
        after.is_intact(),
        after_took.as_secs_f64(),
        a.counters[1].rejected,
        b.counters[1].rejected,
        a.counters[1].peer_runs,
        b.counters[1].peer_runs,
    );
    assert!(paired.is_intact(), "after the restart: {paired:?}");
    assert!(after.is_intact(), "after the replay: {after:?}");
    assert!(paired_took.max(after_took) <= TRANSFER_BOUND);
    assert_eq!(report.relay.injected, [1, 1]);
    // B: the frame echoes A, not this run of B's (stale). A: it echoes A but counts below the
    // restarted B, which A has taken as its peer (replayed).
    assert!(b.counters[1].rejected.stale >= 1, "{:?}", b.counters[1]);
    assert!(a.counters[1].rejected.replayed >= 1, "{:?}", a.counters[1]);
    // No new peer run: A heard B's two runs, the restarted B only A; nobody's codecs restarted
    // for the replay.
    assert_eq!((a.counters[1].peer_runs, b.counters[1].peer_runs), (2, 1));
    Ok(())
}
