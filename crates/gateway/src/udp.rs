//! The UDP transport: one TUN device, and frames to and from a peer gateway in UDP datagrams.
//!
//! A datagram is one frame. By default every frame is authenticated ([`crate::auth`]: kind
//! byte, sender id or counter bits, the frame, a tag under the pre-shared key), and only an
//! authentic, fresh frame of the peer is accepted, whatever address it comes from (the peer is
//! pinned by its key; frames from another address are counted, `other_source`; ours still go
//! to the configured peer). With `auth: None` (`--insecure-no-auth`) a datagram is one byte of
//! [`FrameKind`] ([`FrameKind::to_byte`]) and the frame, accepted if it comes from the peer's
//! address. Either way a refused datagram reaches neither the decompressor nor the
//! compressor's feedback input, and is counted by reason ([`Counters::rejected`]), as is one
//! longer than the link MTU plus the framing.
//!
//! The "send" direction compresses packets read from the TUN device and sends their frames to
//! the peer, through an emulated link ([`crate::link`]) when impairments are configured, so a
//! real link can be made worse on purpose; the "receive" direction decompresses the peer's
//! frames and writes the packets into the TUN device (not those longer than the TUN MTU).
//! CONTEXT_STATE frames from the peer go to our compressor; our decompressor's feedback goes to
//! the peer (through the same impaired send path).
//!
//! [`Endpoint`] is this data path without I/O (tests and benchmarks drive it); [`run_udp`] and
//! [`run_udp_on`] are the event loop around it.
//!
//! There is no oracle here (the original packets are on the other host): the receive direction
//! counts delivered TCP/UDP packets whose checksum fails instead (`checksum_failed`), the check
//! the receiving host's stack will make.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd as _;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use taroc_core::codec::pass_sibling_notes;
use taroc_core::variant::Variant;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind};

use crate::auth::{AuthConfig, Opened, Session, LONG_HEADER};
use crate::counters::Counters;
use crate::gateway::{
    self, thread_cpu_time, transport_checksum_ok, wait_readable, Clock, DropLog, LoopOptions,
    RunReport, Schedule, READ_BUFFER,
};
use crate::link::{scheme_for_link, Fate, Link, LinkConfig, LinkDrop};
use crate::socket::size_buffers;
use crate::tun::Tun;
use crate::{keyfile, Error};

mod framing;

use framing::{send_frame, send_hello, Framing};

/// Labels of the two directions of a UDP gateway.
pub const DIRECTIONS: [&str; 2] = ["send", "receive"];

/// How long an authenticated gateway, at start, waits to hear the peer before it reads its TUN
/// device, ns: frames sent before then could not echo the peer and would be refused as stale;
/// meanwhile the kernel queues the packets, and the hello goes again every
/// [`crate::auth::HELLO_EVERY`].
pub const START_WAIT: u64 = 250_000_000;

/// The socket buffer size asked for unless `--socket-buffer` says otherwise, bytes.
pub const DEFAULT_SOCKET_BUFFER: usize = 4 << 20;

/// Writes a frame as an unauthenticated datagram: its kind byte, then its bytes.
pub fn encode_frame(kind: FrameKind, frame: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(kind.to_byte());
    out.extend_from_slice(frame);
}

/// Reads an unauthenticated datagram as a frame, if its first byte is a frame kind.
pub fn decode_frame(datagram: &[u8]) -> Option<(FrameKind, &[u8])> {
    let (&byte, frame) = datagram.split_first()?;
    Some((FrameKind::from_byte(byte)?, frame))
}

/// The settings of a UDP gateway.
#[derive(Debug, Clone)]
pub struct UdpConfig {
    /// Local address to bind.
    pub listen: SocketAddr,
    /// The peer gateway's address.
    pub peer: SocketAddr,
    /// The scheme we compress with (the peer must decompress with it), and the one the peer
    /// compresses with (we decompress with it).
    pub variants: [Variant; 2],
    /// Impairments applied to what we send (a transparent link sends at once).
    pub link: LinkConfig,
    /// The TUN MTU: longer packets are refused, read or rebuilt.
    pub tun_mtu: usize,
    /// Seed of the impairments' random streams.
    pub seed: u64,
    /// Whether a rebuilt TCP/UDP packet whose checksum fails is dropped (true) or delivered.
    pub verify_checksums: bool,
    /// The key and tag length every frame is authenticated with; `None` sends and accepts
    /// frames without authentication (`--insecure-no-auth`).
    pub auth: Option<AuthConfig>,
    /// SO_RCVBUF and SO_SNDBUF to ask the kernel for, bytes.
    pub socket_buffer: usize,
}

/// Checks the settings of a UDP gateway; what is wrong is a usage error ([`Error::usage`]): the
/// settings come from the command line.
pub fn check(config: &UdpConfig) -> Result<(), Error> {
    config.link.check()?;
    if config.link.mtu < config.tun_mtu {
        return Err(Error::usage(format!(
            "link MTU {} is below the TUN MTU {}: a packet the compressor cannot shrink would \
             not fit the link",
            config.link.mtu, config.tun_mtu
        )));
    }
    if let Some(auth) = &config.auth {
        auth.check().map_err(Error::usage)?;
    }
    let (listen, peer) = (config.listen, config.peer);
    if listen.is_ipv4() != peer.is_ipv4() {
        let hint = match peer {
            SocketAddr::V4(v4) => format!(
                "listen on an IPv4 address (e.g. 0.0.0.0:{}), or give the peer as \
                 [::ffff:{}]:{} (how an IPv6 socket sees IPv4 hosts)",
                listen.port(),
                v4.ip(),
                v4.port()
            ),
            SocketAddr::V6(_) => format!("listen on an IPv6 address (e.g. [::]:{})", listen.port()),
        };
        return Err(Error::usage(format!(
            "--listen {listen} and --peer {peer} are of different address families, so no \
             frame could pass: {hint}"
        )));
    }
    Ok(())
}

/// The data path of one UDP gateway, without I/O: packets from the TUN device in, datagrams
/// out through `send`; datagrams in, packets out through `write`. Both return false when the
/// socket or device refused.
#[derive(Debug)]
pub struct Endpoint {
    variants: [Variant; 2],
    compressor: AnyCompressor,
    decompressor: AnyDecompressor,
    link: Link,
    transparent: bool,
    framing: Framing,
    peer: SocketAddr,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
    feedback: Vec<u8>,
    datagram: Vec<u8>,
    counters: [Counters; 2],
    log: DropLog,
    tun_mtu: usize,
    link_mtu: usize,
    verify_checksums: bool,
}

impl Endpoint {
    /// A gateway with fresh codecs. With authentication, its frames carry sender id
    /// `sender_id` (random per start) and counters from `first_counter` (the wall clock at
    /// start, ns since the UNIX epoch); without, both are unused.
    pub fn new(config: &UdpConfig, sender_id: u64, first_counter: u64) -> Result<Endpoint, Error> {
        check(config)?;
        // A UDP path may reorder datagrams, whether or not --reorder adds to it.
        let configured = config.link.reorder > 0.0;
        let variants = [
            scheme_for_link(&config.variants[0], configured, true).map_err(Error::usage)?,
            scheme_for_link(&config.variants[1], configured, true).map_err(Error::usage)?,
        ];
        let link_mtu = config.link.mtu;
        let framing = match &config.auth {
            None => Framing::Insecure,
            Some(auth) => Framing::Authenticated(Box::new(Session::new(
                auth,
                sender_id,
                first_counter,
                link_mtu,
            ))),
        };
        Ok(Endpoint {
            compressor: variants[0].compressor(),
            decompressor: variants[1].decompressor(),
            variants,
            transparent: config.link.is_transparent(),
            link: Link::new(config.link.clone(), config.seed, 0, config.tun_mtu),
            framing,
            peer: config.peer,
            frame: Vec::with_capacity(link_mtu.max(config.tun_mtu) + 64),
            rebuilt: Vec::with_capacity(READ_BUFFER),
            feedback: Vec::with_capacity(READ_BUFFER),
            datagram: Vec::with_capacity(READ_BUFFER + LONG_HEADER + 16),
            counters: [Counters::default(), Counters::default()],
            log: DropLog::default(),
            tun_mtu: config.tun_mtu,
            link_mtu,
            verify_checksums: config.verify_checksums,
        })
    }

    /// Announces this gateway to the peer (authenticated link only): a hello, so that the
    /// peer tells us its sender id before our first frame needs it. Call at start, and again
    /// while waiting to hear the peer (at most one hello per [`crate::auth::HELLO_EVERY`]).
    pub fn start<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, send: &mut S) {
        if let Framing::Authenticated(session) = &mut self.framing {
            session.owe_hello();
        }
        self.send_hello(now, send);
    }

    /// Sends the hello owed to the peer, if one is and may go by `now`.
    fn send_hello<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, send: &mut S) {
        send_hello(
            &mut self.framing,
            &mut self.datagram,
            &mut self.counters[0],
            now,
            send,
        );
    }

    /// Whether this gateway has heard the peer: with authentication, an authentic long frame
    /// of it came, so our frames echo it ([`crate::auth`]); always without.
    pub fn ready(&self) -> bool {
        match &self.framing {
            Framing::Insecure => true,
            Framing::Authenticated(session) => session.opener.echo() != 0,
        }
    }

    /// The counters of the send and receive directions.
    pub fn counters(&self) -> &[Counters; 2] {
        &self.counters
    }

    /// When the emulated link next has something to do, or an owed hello may go (ns), if
    /// ever.
    pub fn next_event(&self) -> Option<u64> {
        match (self.link.next_event(), self.framing.hello_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Counts an error the socket reported on receiving: an ICMP error of an earlier send
    /// (the peer not up yet), so counted as a send error.
    pub fn count_receive_error(&mut self) {
        self.counters[0].send_errors += 1;
    }

    /// Starts what the link's transmitter may start by `now` (compressing packets then).
    fn pump(&mut self, now: u64) {
        gateway::pump(
            &mut self.link,
            &mut self.compressor,
            &mut self.decompressor,
            &mut self.feedback,
            &mut self.frame,
            &mut self.counters[0],
            now,
            DIRECTIONS[0],
            &mut self.log,
        );
    }

    /// A packet read from the TUN device at `now` (ns).
    pub fn packet<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, packet: &[u8], send: &mut S) {
        let c = &mut self.counters[0];
        c.packets_in += 1;
        c.bytes_in += packet.len() as u64;
        if packet.len() > self.tun_mtu {
            c.oversize_packets += 1;
            let count = c.oversize_packets;
            self.log
                .oversize(now, DIRECTIONS[0], false, packet.len(), self.tun_mtu, count);
            return;
        }
        if !self.transparent {
            self.pump(now);
            if let Err(drop) = self.link.offer(now, packet, false) {
                self.counters[0].count_link_drop(drop);
            }
            self.pump(now);
            return;
        }
        self.compressor.set_time(Duration::from_nanos(now));
        let kind = self.compressor.compress(packet, &mut self.frame);
        pass_sibling_notes(
            &mut self.compressor,
            &mut self.decompressor,
            &mut self.feedback,
        );
        let c = &mut self.counters[0];
        c.count_frame(kind, packet.len(), self.frame.len());
        if self.frame.len() > self.link_mtu {
            c.count_link_drop(LinkDrop::Oversize);
            let count = c.oversize_frames;
            self.log.oversize(
                now,
                DIRECTIONS[0],
                true,
                self.frame.len(),
                self.link_mtu,
                count,
            );
            return;
        }
        send_frame(
            &mut self.framing,
            &mut self.datagram,
            c,
            now,
            kind,
            &self.frame,
            send,
        );
    }

    /// A run of the peer became the peer: an authentic long frame of it that echoes this run of
    /// ours and, if we had a peer, is fresher than any frame of the run we knew. A forger cannot
    /// cause this, and neither can a replayer: no frame made before this run of ours echoes it,
    /// and a frame of an earlier run of the peer is not fresher than the run we know.
    ///
    /// If it replaces a run we knew (the peer restarted and lost its codecs' state), both codecs
    /// start afresh. Our compressor's contexts are unknown to the new run's decompressor, so
    /// every flow's next packet would be refused and lost (and TCP, which backs off while the
    /// peer is down, may send that packet only after a doubled retransmission timeout); a fresh
    /// compressor sends it as a context set-up instead. Our decompressor's contexts are of the
    /// old run's compressor, and it has taken no frame of the new run yet. The first peer of
    /// this run of ours leaves the codecs alone: our packets may have gone to it already (it
    /// takes them once they echo it), and its answers may be coded against what our codecs
    /// learnt from them (a SYN-ACK against our SYN's mirror).
    fn take_up_peer_run(&mut self, replaces: bool) {
        if replaces {
            self.compressor = self.variants[0].compressor();
            self.decompressor = self.variants[1].decompressor();
        }
        self.counters[1].peer_runs += 1;
    }

    /// A datagram received at `now` (ns) from `from`.
    pub fn datagram<S: FnMut(&[u8]) -> bool, W: FnMut(&[u8]) -> bool>(
        &mut self,
        now: u64,
        from: SocketAddr,
        datagram: &[u8],
        send: &mut S,
        write: &mut W,
    ) {
        let heard = self.framing.peer_run();
        let (opened, hello) = self.framing.open(from, self.peer, self.link_mtu, datagram);
        if hello {
            self.send_hello(now, send);
        }
        if self.framing.peer_run() != heard {
            self.take_up_peer_run(heard != 0);
        }
        let (kind, frame) = match opened {
            Ok(Opened::Frame(kind, frame)) => (kind, frame),
            Ok(Opened::Hello) => {
                self.counters[1].hellos_received += 1;
                return;
            }
            Err(reason) => {
                self.counters[1].rejected.count(reason);
                return;
            }
        };
        if from != self.peer {
            self.counters[1].other_source += 1;
        }
        if kind == FrameKind::ContextState {
            self.compressor.handle_feedback(frame);
            self.counters[0].feedback_received += 1;
            return;
        }
        self.decompressor.set_time(Duration::from_nanos(now));
        let c = &mut self.counters[1];
        let result = self.decompressor.decompress(kind, frame, &mut self.rebuilt);
        pass_sibling_notes(
            &mut self.compressor,
            &mut self.decompressor,
            &mut self.feedback,
        );
        match result {
            Err(reason) => c.count_refusal(reason),
            Ok(()) => {
                let checksum = transport_checksum_ok(&self.rebuilt);
                let len = self.rebuilt.len();
                if c.count_rebuilt(len, self.tun_mtu, checksum, self.verify_checksums)
                    && !write(&self.rebuilt)
                {
                    c.tun_write_errors += 1;
                }
            }
        }
        // Bounded: a decompressor has a little feedback per frame at most.
        for _ in 0..8 {
            if !self.decompressor.take_feedback(&mut self.feedback) {
                break;
            }
            self.counters[1].feedback_sent += 1;
            self.counters[1].feedback_bytes += self.feedback.len() as u64 + 1;
            if self.transparent {
                send_frame(
                    &mut self.framing,
                    &mut self.datagram,
                    &mut self.counters[0],
                    now,
                    FrameKind::ContextState,
                    &self.feedback,
                    send,
                );
            } else if let Err(drop) = self.link.offer(now, &self.feedback, true) {
                self.counters[0].count_link_drop(drop);
            }
        }
        self.pump(now);
    }

    /// Sends what the emulated link has let through by `now`, and the hello owed to the peer
    /// if it may go.
    pub fn poll<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, send: &mut S) {
        self.send_hello(now, send);
        self.pump(now);
        for _ in 0..4096 {
            let Some(arrival) = self.link.receive(now) else {
                break;
            };
            if arrival.fate != Fate::Intact {
                self.counters[0].count_link_fate(arrival.fate);
                continue;
            }
            send_frame(
                &mut self.framing,
                &mut self.datagram,
                &mut self.counters[0],
                now,
                arrival.kind,
                arrival.frame,
                send,
            );
        }
    }
}

/// Introduces two endpoints to each other without I/O, as their hellos at start do over a
/// link (for tests and benchmarks that carry datagrams between endpoints themselves):
/// `addrs[i]` is endpoint `i`'s address. Each answers the other's first hello with one that
/// echoes it.
pub fn introduce(mut ends: [&mut Endpoint; 2], now: u64, addrs: [SocketAddr; 2]) {
    let mut to: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    for (i, end) in ends.iter_mut().enumerate() {
        end.start(now, &mut |d: &[u8]| {
            to[1 - i].push(d.to_vec());
            true
        });
    }
    for _ in 0..4 {
        for (i, end) in ends.iter_mut().enumerate() {
            for datagram in std::mem::take(&mut to[i]) {
                let mut send = |d: &[u8]| {
                    to[1 - i].push(d.to_vec());
                    true
                };
                end.datagram(
                    now,
                    addrs[1 - i],
                    &datagram,
                    &mut send,
                    &mut |_: &[u8]| true,
                );
            }
        }
    }
}

/// Nanoseconds since the UNIX epoch, by the wall clock: the first counter of an
/// authenticated sender.
pub fn wall_clock_ns() -> Result<u64, Error> {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).map_err(|_| {
        Error::new("the system clock is before 1970; the authenticated link counts from it")
    })?;
    Ok(since.as_nanos() as u64)
}

/// Runs a UDP gateway on `tun` until `stop` is set, SIGINT/SIGTERM arrives (once
/// [`crate::signal::install`] has run) or `options.duration` passes.
pub fn run_udp(
    tun: &Tun,
    config: &UdpConfig,
    stop: &AtomicBool,
    options: &LoopOptions,
) -> Result<RunReport, Error> {
    check(config)?;
    let socket = UdpSocket::bind(config.listen)
        .map_err(|e| Error::io(format!("binding UDP {}", config.listen), e))?;
    run_udp_on(tun, socket, config, stop, options)
}

/// [`run_udp`] on a socket already bound (`config.listen` is not used). Sizes the socket's
/// buffers (`config.socket_buffer`); with `options.verbose`, prints what the kernel granted.
pub fn run_udp_on(
    tun: &Tun,
    socket: UdpSocket,
    config: &UdpConfig,
    stop: &AtomicBool,
    options: &LoopOptions,
) -> Result<RunReport, Error> {
    check(config)?;
    socket
        .set_nonblocking(true)
        .map_err(|e| Error::io("making the UDP socket non-blocking", e))?;
    let buffers = size_buffers(&socket, config.socket_buffer)?;
    let (sender_id, first_counter) = match config.auth {
        Some(_) => (keyfile::random_u64()?, wall_clock_ns()?),
        None => (0, 0),
    };
    if options.verbose {
        eprintln!(
            "taroc gateway: UDP socket buffers granted: receive {} B, send {} B (asked for {} \
             B; the kernel reports twice the usable size){}",
            buffers.receive,
            buffers.send,
            config.socket_buffer,
            match config.auth {
                Some(_) => format!("; sender id {sender_id:016x}"),
                None => String::new(),
            }
        );
    }
    let mut endpoint = Endpoint::new(config, sender_id, first_counter)?;
    let peer = config.peer;
    let mut send = |datagram: &[u8]| socket.send_to(datagram, peer).is_ok();
    let mut write = |packet: &[u8]| tun.write(packet).is_ok();
    let clock = Clock::start();
    endpoint.start(clock.now(), &mut send);
    let start_wait_ends = clock.now() + START_WAIT;
    let cpu_start = thread_cpu_time();
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut schedule = Schedule::new(options, DIRECTIONS);
    loop {
        let now = clock.now();
        let counters = |d: usize| endpoint.counters()[d].clone();
        let Some(sleep) = schedule.turn(now, stop, counters, endpoint.next_event()) else {
            break;
        };
        // At start, the TUN device waits (a negative descriptor is not polled) until the peer
        // is heard or START_WAIT passes; the hello is repeated meanwhile.
        let waiting = !endpoint.ready() && now < start_wait_ends;
        let (tun_fd, sleep) = if waiting {
            endpoint.start(now, &mut send);
            (-1, sleep.min(Duration::from_millis(10)))
        } else {
            (tun.raw_fd(), sleep)
        };
        let revents = wait_readable([tun_fd, socket.as_raw_fd()], sleep)?;
        if revents[0] & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
            return Err(Error::new(format!("TUN device {} went away", tun.name())));
        }
        if revents[0] & libc::POLLIN != 0 {
            for _ in 0..64 {
                match tun.read(&mut buffer) {
                    Ok(Some(n)) => endpoint.packet(clock.now(), &buffer[..n], &mut send),
                    Ok(None) => break,
                    Err(e) => return Err(Error::io(format!("reading from {}", tun.name()), e)),
                }
            }
        }
        if revents[1] & (libc::POLLIN | libc::POLLERR) != 0 {
            for _ in 0..64 {
                match socket.recv_from(&mut buffer) {
                    // A datagram longer than the buffer arrives cut to its length: oversize.
                    Ok((n, from)) => {
                        endpoint.datagram(clock.now(), from, &buffer[..n], &mut send, &mut write)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // ICMP errors of earlier sends (peer not up yet) surface here: not fatal.
                    Err(_) => endpoint.count_receive_error(),
                }
            }
        }
        endpoint.poll(clock.now(), &mut send);
    }
    Ok(RunReport {
        counters: endpoint.counters().clone(),
        cpu: thread_cpu_time().saturating_sub(cpu_start),
        wall: Duration::from_nanos(clock.now()),
    })
}

#[cfg(test)]
mod tests;
