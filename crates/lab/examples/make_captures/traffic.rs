//! The traffic of each kind, between the two namespaces, with the kernel's sockets.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use taroc_gateway::netns;
use taroc_gateway::Error;

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

/// `r`, its error saying what failed.
pub(super) fn io<T>(what: &str, r: std::io::Result<T>) -> Result<T, Error> {
    r.map_err(|e| Error::io(what.to_string(), e))
}

/// A listener in the current namespace.
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
pub(super) fn bulk(
    ns: [&str; 2],
    server: SocketAddr,
    time: Duration,
    seed: u64,
) -> Result<(), Error> {
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

pub(super) fn interactive(
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
pub(super) fn many_flows(
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
/// echo (every eighth fragmented) and UDP to a closed port, for `time`.
pub(super) fn mixed(
    ns: [&str; 2],
    v4: [Ipv4Addr; 2],
    time: Duration,
    seed: u64,
) -> Result<(), Error> {
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
