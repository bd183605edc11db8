//! Makes the unseen captures of kinds a–h (`captures/unseen/`) with real kernel TCP: two network
//! namespaces, each with a TUN device, joined by the gateway's emulated link carrying packets
//! uncompressed (scheme `none`: bandwidth, one-way delay, DropTail queue, seeded random loss or
//! reordering), captured with `dumpcap` on both TUN devices. Needs root.
//!
//! ```sh
//! cargo run --release -p taroc-gateway --example make_captures -- [OUT_DIR] [KINDS]
//! # OUT_DIR defaults to captures/unseen, KINDS to abcdefgh
//! ```
//!
//! View: *ingress* (what each host sends, before the link: `src host` filters on each TUN
//! device, merged by time with `mergecap`) for every kind but g, which is captured at the
//! receiver (everything on B's device, after reordering), as the shared set does. The traffic:
//! bulk (a seeded random stream, 16 KiB writes), interactive echo (keystrokes and lines, one
//! session with Nagle and one with `TCP_NODELAY`), HTTP/1.1-like request/response over 40
//! connections with at most 12 at once (every fifth client closes before reading its whole
//! response, so its kernel answers with RST), and for h a mix of a TCP transfer, an echo
//! session, DNS-like UDP queries, large UDP datagrams (IPv4 fragments), ICMP echo (some
//! fragmented) and UDP to a closed port (ICMP port unreachable).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use taroc_core::Variant;
use taroc_gateway::gateway::{run_emulated, LoopOptions, Pipeline, PipelineConfig};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns::{self, Netns};
use taroc_gateway::tun::{Tun, TunConfig};
use taroc_gateway::Error;

/// One capture to make.
struct Kind {
    letter: char,
    file: &'static str,
    v6: bool,
    timestamps: bool,
    sack: bool,
    link: LinkConfig,
    seed: u64,
    /// Captured at the receiver (B) rather than at both senders.
    receiver_view: bool,
    traffic: Traffic,
}

/// What runs between the namespaces.
#[derive(Clone, Copy)]
enum Traffic {
    Bulk(Duration),
    Interactive {
        messages: u32,
        think_ms: u64,
    },
    ManyFlows {
        connections: u32,
        concurrency: u32,
        max_size: usize,
    },
    Mixed(Duration),
}

fn link(rate_kbps: u64, delay_ms: u64, loss: f64, reorder: f64) -> LinkConfig {
    LinkConfig {
        rate_bps: rate_kbps * 1000,
        delay: Duration::from_millis(delay_ms),
        loss,
        reorder,
        ..LinkConfig::default()
    }
}

fn kinds() -> Vec<Kind> {
    let bulk = Traffic::Bulk(Duration::from_secs(3));
    let kind = |letter, file, link, traffic| Kind {
        letter,
        file,
        v6: false,
        timestamps: true,
        sack: true,
        link,
        seed: 200 + u64::from(letter as u8 - b'a') + 1,
        receiver_view: false,
        traffic,
    };
    vec![
        kind(
            'a',
            "a_bulk_v4_default.pcap",
            link(1000, 40, 0.015, 0.0),
            bulk,
        ),
        Kind {
            timestamps: false,
            ..kind('b', "b_bulk_v4_nots.pcap", link(1000, 40, 0.015, 0.0), bulk)
        },
        Kind {
            sack: false,
            ..kind(
                'c',
                "c_bulk_v4_nosack.pcap",
                link(1000, 40, 0.015, 0.0),
                bulk,
            )
        },
        Kind {
            v6: true,
            ..kind(
                'd',
                "d_bulk_v6_default.pcap",
                link(1000, 40, 0.015, 0.0),
                bulk,
            )
        },
        kind(
            'e',
            "e_interactive_v4.pcap",
            link(1000, 40, 0.015, 0.0),
            Traffic::Interactive {
                messages: 70,
                think_ms: 250,
            },
        ),
        kind(
            'f',
            "f_many_flows_v4.pcap",
            link(2000, 40, 0.015, 0.0),
            Traffic::ManyFlows {
                connections: 40,
                concurrency: 12,
                max_size: 20_000,
            },
        ),
        Kind {
            receiver_view: true,
            ..kind(
                'g',
                "g_reorder_v4.pcap",
                link(1500, 40, 0.0, 0.05),
                Traffic::Bulk(Duration::from_secs(2)),
            )
        },
        kind(
            'h',
            "h_mixed_v4.pcap",
            link(2000, 40, 0.01, 0.0),
            Traffic::Mixed(Duration::from_secs(8)),
        ),
    ]
}

fn address(v6: bool, side: usize) -> IpAddr {
    let host = side as u8 + 1;
    if v6 {
        IpAddr::V6(Ipv6Addr::new(0xfd00, 0x77, 0, 0, 0, 0, 0, host.into()))
    } else {
        IpAddr::V4(Ipv4Addr::new(10, 77, 0, host))
    }
}

fn sysctl(ns: &str, key: &str, value: &str) -> Result<(), Error> {
    netns::run_in(Some(ns), || {
        std::fs::write(format!("/proc/sys/net/{key}"), value)
            .map_err(|e| Error::io(format!("setting {key} to {value}"), e))
    })
}

/// A `dumpcap` of `filter` on namespace `ns`'s TUN device into `file`.
fn dumpcap(ns: &str, filter: &str, file: &Path) -> Result<Child, Error> {
    let mut args = vec![
        "netns", "exec", ns, "dumpcap", "-q", "-P", "-s", "0", "-i", "taroc0",
    ];
    if !filter.is_empty() {
        args.extend(["-f", filter]);
    }
    let file = file.to_string_lossy();
    args.extend(["-w", &file]);
    let child = Command::new("ip")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io("running dumpcap", e))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !Path::new(file.as_ref()).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    Ok(child)
}

/// Stops a dumpcap this program started (SIGINT, so it writes its last records) and waits.
fn stop(mut child: Child) -> Result<(), Error> {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .map_err(|e| Error::io("running kill", e))?;
    if !status.success() {
        let _ = child.kill();
    }
    child
        .wait()
        .map_err(|e| Error::io("waiting for dumpcap", e))?;
    Ok(())
}

/// Runs `work` in a new thread inside namespace `ns`.
fn spawn_in<'s, T: Send + 's>(
    scope: &'s std::thread::Scope<'s, '_>,
    ns: &'s str,
    work: impl FnOnce() -> Result<T, Error> + Send + 's,
) -> std::thread::ScopedJoinHandle<'s, Result<T, Error>> {
    scope.spawn(move || {
        netns::enter(ns)?;
        work()
    })
}

fn join<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T, Error>>) -> Result<T, Error> {
    handle
        .join()
        .unwrap_or_else(|_| Err(Error::new("a traffic thread panicked")))
}

fn io<T>(what: &str, r: std::io::Result<T>) -> Result<T, Error> {
    r.map_err(|e| Error::io(what.to_string(), e))
}

/// A listener in the current namespace, retried while the address settles (IPv6 `nodad`).
fn listen(addr: SocketAddr) -> Result<TcpListener, Error> {
    io("listening", TcpListener::bind(addr))
}

/// Sets the connection's congestion control to cubic, as the shared captures' (the namespaces'
/// default is the host's, which may not be cubic, and a namespace may not choose another).
fn cubic(stream: &TcpStream) -> Result<(), Error> {
    use std::os::fd::AsRawFd;
    let name = b"cubic";
    // SAFETY: the option value is a valid buffer of the given length for the call's duration.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(Error::io("choosing cubic", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn connect(addr: SocketAddr) -> Result<TcpStream, Error> {
    let stream = io(
        "connecting",
        TcpStream::connect_timeout(&addr, Duration::from_secs(10)),
    )?;
    io(
        "setting a timeout",
        stream.set_read_timeout(Some(Duration::from_secs(20))),
    )?;
    cubic(&stream)?;
    Ok(stream)
}

/// The next connection on `listener`, with cubic.
fn accept(listener: &TcpListener) -> Result<TcpStream, Error> {
    let (stream, _) = io("accepting", listener.accept())?;
    cubic(&stream)?;
    Ok(stream)
}

/// Bulk: A writes a seeded random stream to B for `time`; B reads it all, answers one line.
fn bulk(ns: [&str; 2], server: SocketAddr, time: Duration, seed: u64) -> Result<(), Error> {
    let listener = netns::run_in(Some(ns[1]), || listen(server))?;
    std::thread::scope(|s| {
        let rx = spawn_in(s, ns[1], || {
            let mut conn = accept(&listener)?;
            io(
                "timeout",
                conn.set_read_timeout(Some(Duration::from_secs(30))),
            )?;
            let mut total = 0u64;
            let mut buf = vec![0u8; 65536];
            loop {
                let n = io("reading", conn.read(&mut buf))?;
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            io(
                "answering",
                conn.write_all(format!("received {total} bytes\n").as_bytes()),
            )?;
            Ok(total)
        });
        let tx = spawn_in(s, ns[0], || {
            let mut conn = connect(server)?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut chunk = vec![0u8; 16384];
            let end = Instant::now() + time;
            while Instant::now() < end {
                rng.fill_bytes(&mut chunk);
                io("writing", conn.write_all(&chunk))?;
            }
            io("half-closing", conn.shutdown(std::net::Shutdown::Write))?;
            let mut answer = String::new();
            io("reading the answer", conn.read_to_string(&mut answer))?;
            Ok(())
        });
        join(tx)?;
        join(rx).map(|_| ())
    })
}

/// An echo server in B answering `sessions` connections.
fn echo_server<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    ns: &'s str,
    listener: &'s TcpListener,
    sessions: u32,
) -> Vec<std::thread::ScopedJoinHandle<'s, Result<(), Error>>> {
    (0..sessions)
        .map(|_| {
            let conn = match accept(listener) {
                Ok(c) => c,
                Err(e) => return s.spawn(move || Err(e)),
            };
            spawn_in(s, ns, move || {
                let mut conn = conn;
                let mut buf = [0u8; 4096];
                loop {
                    let n = io("echo read", conn.read(&mut buf))?;
                    if n == 0 {
                        return Ok(());
                    }
                    io("echo write", conn.write_all(&buf[..n]))?;
                }
            })
        })
        .collect()
}

/// One interactive session: keystrokes (1 byte) and lines (2–100 bytes) at random intervals.
fn echo_client(
    server: SocketAddr,
    nodelay: bool,
    messages: u32,
    think_ms: u64,
    seed: u64,
) -> Result<(), Error> {
    let mut conn = connect(server)?;
    io("nodelay", conn.set_nodelay(nodelay))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = [0u8; 128];
    for _ in 0..messages {
        let len = if rng.next_u32().is_multiple_of(3) {
            2 + rng.next_u32() as usize % 99
        } else {
            1
        };
        let text: Vec<u8> = (0..len)
            .map(|_| b'a' + (rng.next_u32() % 26) as u8)
            .collect();
        io("echo send", conn.write_all(&text))?;
        io("echo receive", conn.read_exact(&mut buf[..len]))?;
        std::thread::sleep(Duration::from_millis(
            think_ms / 4 + u64::from(rng.next_u32()) % (think_ms * 3 / 2),
        ));
    }
    Ok(())
}

fn interactive(
    ns: [&str; 2],
    server: SocketAddr,
    messages: u32,
    think_ms: u64,
    seed: u64,
) -> Result<(), Error> {
    let listener = netns::run_in(Some(ns[1]), || listen(server))?;
    std::thread::scope(|s| {
        let clients: Vec<_> = [false, true]
            .into_iter()
            .map(|nodelay| {
                spawn_in(s, ns[0], move || {
                    echo_client(
                        server,
                        nodelay,
                        messages,
                        think_ms,
                        seed + u64::from(nodelay),
                    )
                })
            })
            .collect();
        let servers = echo_server(s, ns[1], &listener, 2);
        for h in clients.into_iter().chain(servers) {
            join(h)?;
        }
        Ok(())
    })
}

/// HTTP/1.1-like request/response: `connections` connections, at most `concurrency` at once.
fn many_flows(
    ns: [&str; 2],
    server: SocketAddr,
    connections: u32,
    concurrency: u32,
    max_size: usize,
    seed: u64,
) -> Result<(), Error> {
    let listener = netns::run_in(Some(ns[1]), || listen(server))?;
    let next = AtomicU32::new(0);
    std::thread::scope(|s| {
        let serve = spawn_in(s, ns[1], || {
            std::thread::scope(|inner| {
                for i in 0..connections {
                    let mut conn = accept(&listener)?;
                    inner.spawn(move || {
                        let mut request = [0u8; 1024];
                        let _ = conn.read(&mut request);
                        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (u64::from(i) << 8));
                        let size = 200 + rng.next_u32() as usize % max_size;
                        let mut body = vec![0u8; size];
                        rng.fill_bytes(&mut body);
                        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n");
                        let _ = conn.write_all(head.as_bytes()).and_then(|()| conn.write_all(&body));
                    });
                }
                Ok(())
            })
        });
        let clients: Vec<_> = (0..concurrency)
            .map(|_| {
                spawn_in(s, ns[0], || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= connections {
                        return Ok(());
                    }
                    let mut conn = connect(server)?;
                    let request = format!("GET /object/{i} HTTP/1.1\r\nHost: unseen.test\r\nUser-Agent: make_captures\r\n\r\n");
                    io("request", conn.write_all(request.as_bytes()))?;
                    let mut buf = vec![0u8; 8192];
                    if i % 5 == 4 {
                        // Close with unread data: the kernel resets the connection.
                        std::thread::sleep(Duration::from_millis(300));
                        let _ = conn.read(&mut buf);
                    } else {
                        while io("response", conn.read(&mut buf))? > 0 {}
                    }
                })
            })
            .collect();
        for h in clients {
            join(h)?;
        }
        join(serve)
    })
}

/// An ICMP echo request of `size` bytes of payload from a raw socket (the kernel adds the IP
/// header and fragments it if needed).
fn ping(
    socket: &std::os::fd::OwnedFd,
    to: Ipv4Addr,
    id: u16,
    seq: u16,
    size: usize,
) -> Result<(), Error> {
    use std::os::fd::AsRawFd;
    let mut packet = vec![8u8, 0, 0, 0];
    packet.extend_from_slice(&id.to_be_bytes());
    packet.extend_from_slice(&seq.to_be_bytes());
    packet.extend((0..size).map(|i| (i % 251) as u8));
    let sum = taroc_wire::checksum::Sum::new()
        .add_bytes(&packet)
        .checksum();
    packet[2..4].copy_from_slice(&sum.to_be_bytes());
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(to.octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: the buffer and the address are valid for the call's duration, with their sizes.
    let sent = unsafe {
        libc::sendto(
            socket.as_raw_fd(),
            packet.as_ptr().cast(),
            packet.len(),
            0,
            std::ptr::from_ref(&addr).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(Error::io(
            "sending an ICMP echo",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

fn raw_icmp_socket() -> Result<std::os::fd::OwnedFd, Error> {
    use std::os::fd::FromRawFd;
    // SAFETY: socket() has no memory preconditions; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::IPPROTO_ICMP,
        )
    };
    if fd < 0 {
        return Err(Error::io(
            "opening a raw ICMP socket",
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: `fd` is a fresh descriptor nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Mixed: a paced TCP transfer and an echo session, DNS-like UDP, large UDP datagrams, ICMP
/// echo (every fourth fragmented) and UDP to a closed port, for `time`.
fn mixed(ns: [&str; 2], v4: [Ipv4Addr; 2], time: Duration, seed: u64) -> Result<(), Error> {
    let tcp = SocketAddr::new(IpAddr::V4(v4[1]), 5201);
    let echo = SocketAddr::new(IpAddr::V4(v4[1]), 7);
    let dns = SocketAddr::new(IpAddr::V4(v4[1]), 53);
    let closed = SocketAddr::new(IpAddr::V4(v4[1]), 9);
    let (tcp_listener, echo_listener, dns_socket) = netns::run_in(Some(ns[1]), || {
        Ok((
            listen(tcp)?,
            listen(echo)?,
            io("binding DNS", UdpSocket::bind(dns))?,
        ))
    })?;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let dns_server = spawn_in(s, ns[1], || {
            io(
                "timeout",
                dns_socket.set_read_timeout(Some(Duration::from_millis(100))),
            )?;
            let mut buf = [0u8; 4096];
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 53);
            while !done.load(Ordering::Relaxed) {
                if let Ok((n, from)) = dns_socket.recv_from(&mut buf) {
                    if n < 200 {
                        let len = 60 + rng.next_u32() as usize % 240;
                        let mut answer = buf[..n].to_vec();
                        answer.resize(len, 0xc0);
                        let _ = dns_socket.send_to(&answer, from);
                    }
                }
            }
            Ok(())
        });
        let bulk_rx = spawn_in(s, ns[1], || {
            let mut conn = accept(&tcp_listener)?;
            let mut buf = vec![0u8; 65536];
            while io("reading", conn.read(&mut buf))? > 0 {}
            Ok(())
        });
        let bulk_tx = spawn_in(s, ns[0], || {
            let mut conn = connect(tcp)?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut chunk = vec![0u8; 4000];
            let end = Instant::now() + time;
            while Instant::now() < end {
                rng.fill_bytes(&mut chunk);
                io("writing", conn.write_all(&chunk))?;
                std::thread::sleep(Duration::from_millis(80));
            }
            Ok(())
        });
        let echo_clients = spawn_in(s, ns[0], || echo_client(echo, true, 25, 200, seed + 7));
        let echo_servers = echo_server(s, ns[1], &echo_listener, 1);
        let udp_icmp = spawn_in(s, ns[0], || {
            let udp = io("binding UDP", UdpSocket::bind((v4[0], 0)))?;
            let icmp = raw_icmp_socket()?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 17);
            let mut buf = [0u8; 4096];
            io(
                "timeout",
                udp.set_read_timeout(Some(Duration::from_millis(200))),
            )?;
            let end = Instant::now() + time;
            let mut tick = 0u16;
            while Instant::now() < end {
                let query: Vec<u8> = (0..30 + rng.next_u32() as usize % 30)
                    .map(|_| rng.next_u32() as u8)
                    .collect();
                io("DNS query", udp.send_to(&query, dns))?;
                let _ = udp.recv_from(&mut buf);
                let size = if tick.is_multiple_of(8) { 1800 } else { 56 };
                ping(&icmp, v4[1], 0x7a00 | (seed as u16 & 0xff), tick, size)?;
                if tick % 10 == 3 {
                    io("large UDP", udp.send_to(&vec![0x55u8; 2600], dns))?;
                }
                if tick % 10 == 7 {
                    io(
                        "UDP to a closed port",
                        udp.send_to(b"anyone there?", closed),
                    )?;
                }
                tick += 1;
                std::thread::sleep(Duration::from_millis(20 + u64::from(rng.next_u32() % 40)));
            }
            Ok(())
        });
        join(bulk_tx)?;
        join(udp_icmp)?;
        join(echo_clients)?;
        for h in echo_servers {
            join(h)?;
        }
        join(bulk_rx)?;
        done.store(true, Ordering::Relaxed);
        join(dns_server)
    })
}

/// Makes one capture into `out`.
fn make(kind: &Kind, out: &Path) -> Result<(), Error> {
    let pid = std::process::id();
    let names = [
        format!("tarocu-{pid}-{}a", kind.letter),
        format!("tarocu-{pid}-{}b", kind.letter),
    ];
    let namespaces = [Netns::create(&names[0])?, Netns::create(&names[1])?];
    let ns = [namespaces[0].name(), namespaces[1].name()];
    let mut tuns = Vec::new();
    for (side, name) in ns.iter().enumerate() {
        tuns.push(Tun::open(&TunConfig {
            name: "taroc0".into(),
            mtu: 1500,
            netns: Some((*name).into()),
        })?);
        let prefix = if kind.v6 { 64 } else { 24 };
        let addr = format!("{}/{prefix}", address(kind.v6, side));
        let mut args = vec!["-n", name, "address", "add", &addr, "dev", "taroc0"];
        if kind.v6 {
            args.push("nodad");
        }
        netns::ip(&args)?;
        sysctl(
            name,
            "ipv4/tcp_timestamps",
            if kind.timestamps { "1" } else { "0" },
        )?;
        sysctl(name, "ipv4/tcp_sack", if kind.sack { "1" } else { "0" })?;
    }
    let cc = netns::run_in(Some(ns[0]), || {
        io(
            "reading the congestion control",
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control"),
        )
    })?;
    eprintln!(
        "{}: namespace congestion control {} (connections: cubic)",
        kind.file,
        cc.trim()
    );
    let none = Variant::parse("none").map_err(Error::new)?;
    let mut pipeline = Pipeline::new(&PipelineConfig {
        variants: [none.clone(), none],
        links: [kind.link.clone(), kind.link.clone()],
        tun_mtu: 1500,
        seed: kind.seed,
        verify_checksums: false,
    })?;
    let stop_flag = AtomicBool::new(false);
    let parts = [out.with_extension("a.part"), out.with_extension("b.part")];
    std::thread::scope(|s| {
        let gateway = s.spawn(|| {
            run_emulated(
                [&tuns[0], &tuns[1]],
                &mut pipeline,
                &stop_flag,
                &LoopOptions::default(),
            )
        });
        let result = (|| {
            let filters = if kind.receiver_view {
                [None, Some(String::new())]
            } else {
                [0, 1].map(|side| Some(format!("src host {}", address(kind.v6, side))))
            };
            let mut captures = Vec::new();
            for (side, filter) in filters.iter().enumerate() {
                if let Some(filter) = filter {
                    captures.push(dumpcap(ns[side], filter, &parts[side])?);
                }
            }
            let server = SocketAddr::new(address(kind.v6, 1), 5201);
            let traffic = match kind.traffic {
                Traffic::Bulk(time) => bulk(ns, server, time, kind.seed),
                Traffic::Interactive { messages, think_ms } => {
                    interactive(ns, server, messages, think_ms, kind.seed)
                }
                Traffic::ManyFlows {
                    connections,
                    concurrency,
                    max_size,
                } => many_flows(ns, server, connections, concurrency, max_size, kind.seed),
                Traffic::Mixed(time) => match (address(false, 0), address(false, 1)) {
                    (IpAddr::V4(a), IpAddr::V4(b)) => mixed(ns, [a, b], time, kind.seed),
                    _ => Err(Error::new("mixed traffic is IPv4")),
                },
            };
            std::thread::sleep(Duration::from_millis(1500));
            for c in captures {
                stop(c)?;
            }
            traffic
        })();
        stop_flag.store(true, Ordering::Relaxed);
        let report = gateway
            .join()
            .unwrap_or_else(|_| Err(Error::new("the gateway panicked")))?;
        let lost: u64 = report.counters.iter().map(|c| c.link_lost).sum();
        let queue: u64 = report.counters.iter().map(|c| c.queue_drops).sum();
        eprintln!(
            "{}: {} packets through the link, {lost} lost on it, {queue} dropped by its queue",
            kind.file,
            report.packets()
        );
        result
    })?;
    let inputs: Vec<&PathBuf> = parts.iter().filter(|p| p.exists()).collect();
    let mut merge = Command::new("mergecap");
    merge.args(["-F", "pcap", "-w"]).arg(out).args(&inputs);
    let status = merge
        .status()
        .map_err(|e| Error::io("running mergecap", e))?;
    for p in inputs {
        let _ = std::fs::remove_file(p);
    }
    if !status.success() {
        return Err(Error::new(format!("mergecap failed for {}", out.display())));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("captures/unseen", String::as_str));
    let only = args.get(1).map_or("abcdefgh", String::as_str);
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("make_captures: {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    for kind in kinds().iter().filter(|k| only.contains(k.letter)) {
        let file = out.join(kind.file);
        eprintln!(
            "{}: seed {}, rate {} kbit/s, delay {:?}, loss {}, reorder {}, timestamps {}, SACK {}",
            kind.file,
            kind.seed,
            kind.link.rate_bps / 1000,
            kind.link.delay,
            kind.link.loss,
            kind.link.reorder,
            kind.timestamps,
            kind.sack
        );
        if let Err(e) = make(kind, &file) {
            eprintln!("make_captures: {}: {e}", kind.file);
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
