//! The data path of the emulated-link gateway, and the event loop that drives it from two TUN
//! devices.
//!
//! Direction 0 ("a->b") takes packets read from TUN A, compresses them, sends the frames over
//! its link, decompresses what arrives and writes the packets into TUN B; direction 1 ("b->a")
//! is the mirror image. Each direction has its own scheme. A decompressor's feedback
//! ([`Decompressor::take_feedback`]) travels back over the *other* direction's link as a
//! [`FrameKind::ContextState`] frame (meeting its delay and losses) and is handed to the
//! compressor it is for ([`Compressor::handle_feedback`]). Compressors are told the time
//! ([`Compressor::set_time`]) before every packet.
//!
//! [`Pipeline`] is the data path without I/O (time and packets passed in, delivered packets
//! passed out), so tests drive it without TUN devices; [`run_emulated`] is the loop around it:
//! one thread, `ppoll` on both devices with a timeout until the next frame is due on a link.

use std::io::Write as _;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use taroc_core::variant::Variant;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind};
use taroc_wire::checksum::transport_verifies;
use taroc_wire::ip::IpInfo;
use taroc_wire::protocol;

use crate::counters::{self, Counters};
use crate::link::{Fate, Link, LinkConfig, LinkDrop};
use crate::tun::Tun;
use crate::Error;

/// Room for any packet a TUN read can return (IPv4 and IPv6 lengths are 16-bit).
pub const READ_BUFFER: usize = 65536;

/// Labels of the two directions of an emulated gateway.
pub const DIRECTIONS: [&str; 2] = ["a->b", "b->a"];

/// Whether the TCP or UDP checksum of `packet` verifies; `None` when there is nothing to check
/// (another protocol, a fragment, an IPv4 UDP datagram without checksum, unparsable headers).
pub fn transport_checksum_ok(packet: &[u8]) -> Option<bool> {
    let ip = IpInfo::parse(packet).ok()?;
    if ip.fragment || (ip.protocol != protocol::TCP && ip.protocol != protocol::UDP) {
        return None;
    }
    let end = ip.declared_len.min(packet.len());
    let segment = packet.get(ip.transport_offset..end)?;
    if ip.protocol == protocol::UDP && ip.version == 4 && segment.get(6..8) == Some(&[0, 0]) {
        return None;
    }
    Some(transport_verifies(ip.src, ip.dst, ip.protocol, segment))
}

/// Logs a refused packet or frame at most once per second per kind of refusal, so a flood of
/// oversize packets cannot flood the log.
#[derive(Debug, Default)]
pub struct DropLog {
    last: [Option<u64>; 2],
}

impl DropLog {
    /// Logs that direction `label` refused a packet (`frame` false) or frame (`frame` true) of
    /// `len` bytes longer than `limit`; `count` is how many so far.
    pub fn oversize(
        &mut self,
        now: u64,
        label: &str,
        frame: bool,
        len: usize,
        limit: usize,
        count: u64,
    ) {
        let slot = &mut self.last[usize::from(frame)];
        if slot.is_some_and(|last| now < last + 1_000_000_000) {
            return;
        }
        *slot = Some(now);
        let (what, mtu) = if frame {
            ("frame", "link MTU")
        } else {
            ("packet", "TUN MTU")
        };
        eprintln!(
            "taroc gateway: {label}: dropped a {len}-byte {what} longer than the {mtu} {limit} \
             ({count} so far; logged at most once a second)"
        );
    }
}

/// The header field at byte `offset` of an IP packet (TCP or UDP inside), for logs.
pub fn field_name(packet: &[u8], offset: usize) -> &'static str {
    let Ok(ip) = IpInfo::parse(packet) else {
        return "an unparsable header";
    };
    if offset < ip.transport_offset {
        return match (ip.version, offset) {
            (4, 0) => "IPv4 version/IHL",
            (4, 1) => "IPv4 TOS",
            (4, 2 | 3) => "IPv4 total length",
            (4, 4 | 5) => "IPv4 identification",
            (4, 6 | 7) => "IPv4 flags/fragment offset",
            (4, 8) => "IPv4 TTL",
            (4, 9) => "IPv4 protocol",
            (4, 10 | 11) => "IPv4 header checksum",
            (4, 12..=19) => "IPv4 addresses",
            (4, _) => "IPv4 options",
            (_, 0..=3) => "IPv6 version/traffic class/flow label",
            (_, 4 | 5) => "IPv6 payload length",
            (_, 6) => "IPv6 next header",
            (_, 7) => "IPv6 hop limit",
            (_, 8..=39) => "IPv6 addresses",
            _ => "IPv6 extension headers",
        };
    }
    let at = offset - ip.transport_offset;
    match ip.protocol {
        protocol::TCP => {
            let data_offset = packet
                .get(ip.transport_offset + 12)
                .map_or(20, |b| usize::from(b >> 4) * 4);
            match at {
                0..=3 => "TCP ports",
                4..=7 => "TCP sequence number",
                8..=11 => "TCP acknowledgment number",
                12 | 13 => "TCP data offset/flags",
                14 | 15 => "TCP window",
                16 | 17 => "TCP checksum",
                18 | 19 => "TCP urgent pointer",
                _ if at < data_offset => "TCP options",
                _ => "payload",
            }
        }
        protocol::UDP if at < 8 => "UDP header",
        _ => "payload",
    }
}

/// Logs an incorrect delivery (at most once a second per direction, through `last`): where
/// the packet differs from the original.
fn log_incorrect(
    last: &mut Option<u64>,
    now: u64,
    label: &str,
    original: &[u8],
    rebuilt: &[u8],
    count: u64,
) {
    if last.is_some_and(|last| now < last + 1_000_000_000) {
        return;
    }
    *last = Some(now);
    let differing = original.iter().zip(rebuilt).filter(|(a, b)| a != b).count()
        + original.len().abs_diff(rebuilt.len());
    let first = original
        .iter()
        .zip(rebuilt)
        .position(|(a, b)| a != b)
        .unwrap_or(original.len().min(rebuilt.len()));
    // Straight to the unbuffered stderr handle rather than `eprintln!`, which a test harness
    // captures into a growing buffer: the data path must not allocate, logging included.
    let _ = writeln!(
        std::io::stderr(),
        "taroc gateway: {label}: incorrect delivery ({count} so far; logged at most once a \
         second): {} bytes delivered for {}, {differing} differ, the first at byte {first} ({})",
        rebuilt.len(),
        original.len(),
        field_name(original, first)
    );
}

/// One direction's codecs, buffers and counters.
#[derive(Debug)]
struct Codec {
    verify_checksums: bool,
    tun_mtu: usize,
    last_incorrect_log: Option<u64>,
    compressor: AnyCompressor,
    decompressor: AnyDecompressor,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
    feedback: Vec<u8>,
    counters: Counters,
}

#[derive(Debug)]
struct Direction {
    codec: Codec,
    link: Link,
    transparent: bool,
}

/// The settings of an emulated-link gateway.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// The scheme (with settings) of each direction: a->b, b->a.
    pub variants: [Variant; 2],
    /// The link of each direction.
    pub links: [LinkConfig; 2],
    /// The MTU of the TUN devices: longer packets are refused.
    pub tun_mtu: usize,
    /// Seed of the links' random streams.
    pub seed: u64,
    /// Whether a rebuilt TCP/UDP packet whose checksum fails is dropped (true) or delivered.
    pub verify_checksums: bool,
}

impl PipelineConfig {
    /// Checks the settings: the links', and that every packet fits the link uncompressed.
    pub fn check(&self) -> Result<(), Error> {
        if !(68..=65535).contains(&self.tun_mtu) {
            return Err(Error::new(format!(
                "TUN MTU {} is outside 68..=65535",
                self.tun_mtu
            )));
        }
        for link in &self.links {
            link.check()?;
            if link.mtu < self.tun_mtu {
                return Err(Error::new(format!(
                    "link MTU {} is below the TUN MTU {}: a packet the compressor cannot \
                     shrink would not fit the link",
                    link.mtu, self.tun_mtu
                )));
            }
        }
        Ok(())
    }
}

/// The emulated-link data path of both directions, without I/O.
#[derive(Debug)]
pub struct Pipeline {
    dirs: [Direction; 2],
    tun_mtu: usize,
    log: DropLog,
}

/// Splits the two directions into (direction `d`, the other one).
fn split(dirs: &mut [Direction; 2], d: usize) -> (&mut Direction, &mut Direction) {
    let (first, second) = dirs.split_at_mut(1);
    if d == 0 {
        (&mut first[0], &mut second[0])
    } else {
        (&mut second[0], &mut first[0])
    }
}

/// Hands an intact frame that came off link `d` to its end: feedback to the other direction's
/// compressor, anything else to this direction's decompressor, then the oracle, then the TUN.
#[allow(clippy::too_many_arguments)]
fn deliver<S: FnMut(usize, &[u8]) -> bool>(
    d: usize,
    now: u64,
    kind: FrameKind,
    frame: &[u8],
    original: Option<&[u8]>,
    this: &mut Codec,
    other: &mut Codec,
    other_link: &mut Link,
    other_transparent: bool,
    sink: &mut S,
) {
    if kind == FrameKind::ContextState {
        other.compressor.handle_feedback(frame);
        other.counters.feedback_received += 1;
        return;
    }
    this.decompressor.set_time(Duration::from_nanos(now));
    match this.decompressor.decompress(kind, frame, &mut this.rebuilt) {
        Err(reason) => this.counters.count_refusal(reason),
        Ok(()) => {
            let c = &mut this.counters;
            let checksum = transport_checksum_ok(&this.rebuilt);
            // A packet the gateway drops still lets the decompressor's feedback go below.
            let (len, mtu) = (this.rebuilt.len(), this.tun_mtu);
            if c.count_rebuilt(len, mtu, checksum, this.verify_checksums) {
                if let Some(original) = original.filter(|o| *o != &this.rebuilt[..]) {
                    c.incorrect_delivered += 1;
                    if checksum != Some(false) {
                        c.incorrect_undetected += 1;
                    }
                    log_incorrect(
                        &mut this.last_incorrect_log,
                        now,
                        DIRECTIONS[d],
                        original,
                        &this.rebuilt,
                        c.incorrect_delivered,
                    );
                }
                if !sink(d, &this.rebuilt) {
                    c.tun_write_errors += 1;
                }
            }
        }
    }
    // Bounded: a decompressor has a little feedback per frame at most.
    for _ in 0..8 {
        if !this.decompressor.take_feedback(&mut this.feedback) {
            break;
        }
        this.counters.feedback_sent += 1;
        this.counters.feedback_bytes += this.feedback.len() as u64 + 1;
        if other_transparent {
            this.compressor.handle_feedback(&this.feedback);
            this.counters.feedback_received += 1;
        } else if let Err(drop) = other_link.offer(now, &this.feedback, true) {
            other.counters.count_link_drop(drop);
        }
    }
}

/// Starts the transmission of every queued packet whose turn has come by `now`, compressing it
/// at that moment with `compressor` into `frame` (feedback frames go as they are); counts in
/// `counters`, logs oversize frames as direction `label`.
pub(crate) fn pump(
    link: &mut Link,
    compressor: &mut AnyCompressor,
    frame: &mut Vec<u8>,
    counters: &mut Counters,
    now: u64,
    label: &str,
    log: &mut DropLog,
) {
    while let Some(start) = link.ready(now) {
        let Some((bytes, feedback)) = link.head() else {
            break;
        };
        let result = if feedback {
            link.transmit(start, FrameKind::ContextState, None)
        } else {
            let len = bytes.len();
            compressor.set_time(Duration::from_nanos(start));
            let kind = compressor.compress(bytes, frame);
            counters.count_frame(kind, len, frame.len());
            link.transmit(start, kind, Some(frame))
        };
        if let Err(drop) = result {
            counters.count_link_drop(drop);
            if drop == LinkDrop::Oversize {
                let count = counters.oversize_frames;
                log.oversize(now, label, true, frame.len(), link.config().mtu, count);
            }
        }
    }
}

/// [`pump`] for one direction of the pipeline.
fn pump_direction(direction: &mut Direction, d: usize, now: u64, log: &mut DropLog) {
    let c = &mut direction.codec;
    pump(
        &mut direction.link,
        &mut c.compressor,
        &mut c.frame,
        &mut c.counters,
        now,
        DIRECTIONS[d],
        log,
    );
}

impl Pipeline {
    /// A gateway with fresh codecs and empty links. The settings must pass
    /// [`PipelineConfig::check`].
    pub fn new(config: &PipelineConfig) -> Result<Pipeline, Error> {
        config.check()?;
        let direction = |d: usize| {
            let link = config.links[d].clone();
            let frame_capacity = link.mtu.max(config.tun_mtu) + 64;
            Direction {
                codec: Codec {
                    verify_checksums: config.verify_checksums,
                    tun_mtu: config.tun_mtu,
                    last_incorrect_log: None,
                    compressor: config.variants[d].compressor(),
                    decompressor: config.variants[d].decompressor(),
                    // Room for anything a scheme makes of a packet (its frames are never much
                    // longer than the packet), and for any packet it rebuilds.
                    frame: Vec::with_capacity(frame_capacity),
                    rebuilt: Vec::with_capacity(READ_BUFFER),
                    feedback: Vec::with_capacity(READ_BUFFER),
                    counters: Counters::default(),
                },
                transparent: link.is_transparent(),
                link: Link::new(link, config.seed, d as u64, config.tun_mtu),
            }
        };
        Ok(Pipeline {
            dirs: [direction(0), direction(1)],
            tun_mtu: config.tun_mtu,
            log: DropLog::default(),
        })
    }

    /// A packet read at time `now` (ns) from the TUN device at the start of direction `d`
    /// (0: A, 1: B). `sink(d, packet)` writes a delivered packet of direction `d` into the TUN
    /// device at its end, returning false if the device refused it.
    pub fn input<S: FnMut(usize, &[u8]) -> bool>(
        &mut self,
        d: usize,
        now: u64,
        packet: &[u8],
        sink: &mut S,
    ) {
        let (this, other) = split(&mut self.dirs, d);
        let c = &mut this.codec;
        c.counters.packets_in += 1;
        c.counters.bytes_in += packet.len() as u64;
        if packet.len() > self.tun_mtu {
            c.counters.oversize_packets += 1;
            let count = c.counters.oversize_packets;
            self.log
                .oversize(now, DIRECTIONS[d], false, packet.len(), self.tun_mtu, count);
            return;
        }
        if !this.transparent {
            // A packet waits for the transmitter and is compressed when its turn comes.
            pump_direction(this, d, now, &mut self.log);
            if let Err(drop) = this.link.offer(now, packet, false) {
                this.codec.counters.count_link_drop(drop);
            }
            pump_direction(this, d, now, &mut self.log);
            return;
        }
        c.compressor.set_time(Duration::from_nanos(now));
        let kind = c.compressor.compress(packet, &mut c.frame);
        c.counters.count_frame(kind, packet.len(), c.frame.len());
        if c.frame.len() > this.link.config().mtu {
            c.counters.count_link_drop(LinkDrop::Oversize);
            let count = c.counters.oversize_frames;
            let mtu = this.link.config().mtu;
            self.log
                .oversize(now, DIRECTIONS[d], true, c.frame.len(), mtu, count);
            return;
        }
        let frame = std::mem::take(&mut c.frame);
        deliver(
            d,
            now,
            kind,
            &frame,
            Some(packet),
            c,
            &mut other.codec,
            &mut other.link,
            other.transparent,
            sink,
        );
        c.frame = frame;
    }

    /// Takes every frame due at `now` off both links and delivers it.
    pub fn poll<S: FnMut(usize, &[u8]) -> bool>(&mut self, now: u64, sink: &mut S) {
        // Feedback delivered on one link may put frames on the other: go round until both are
        // quiet (bounded: each round takes at least one frame off a link, and links are finite).
        for _ in 0..4 {
            let mut moved = false;
            for d in 0..2 {
                let (this, other) = split(&mut self.dirs, d);
                pump_direction(this, d, now, &mut self.log);
                let mut taken = 0;
                while let Some(arrival) = this.link.receive(now) {
                    moved = true;
                    taken += 1;
                    if arrival.fate != Fate::Intact {
                        this.codec.counters.count_link_fate(arrival.fate);
                    } else {
                        deliver(
                            d,
                            now,
                            arrival.kind,
                            arrival.frame,
                            arrival.original,
                            &mut this.codec,
                            &mut other.codec,
                            &mut other.link,
                            other.transparent,
                            sink,
                        );
                    }
                    if taken >= 4096 {
                        break;
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }

    /// When the next frame is due on either link (ns), if any.
    pub fn next_event(&self) -> Option<u64> {
        match (
            self.dirs[0].link.next_event(),
            self.dirs[1].link.next_event(),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The counters of direction `d` (0: a->b, 1: b->a).
    pub fn counters(&self, d: usize) -> &Counters {
        &self.dirs[d].codec.counters
    }
}

/// A monotonic clock in nanoseconds from its creation.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    /// A clock starting now.
    pub fn start() -> Clock {
        Clock(Instant::now())
    }

    /// Nanoseconds since the start.
    pub fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

/// The CPU time this thread has used.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; CLOCK_THREAD_CPUTIME_ID always exists on
    // Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Waits up to `timeout` for one of `fds` to become readable; returns each one's `revents`
/// (0 on timeout or interruption by a signal).
pub fn wait_readable<const N: usize>(
    fds: [RawFd; N],
    timeout: Duration,
) -> Result<[i16; N], Error> {
    let mut pollfds = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `pollfds` is an array of N valid pollfd structs that ppoll may write; `ts` is a
    // valid timespec; a null signal mask keeps the thread's mask.
    let rc = unsafe {
        libc::ppoll(
            pollfds.as_mut_ptr(),
            N as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok([0; N]);
        }
        return Err(Error::io("waiting for packets (ppoll)", e));
    }
    Ok(pollfds.map(|p| p.revents))
}

/// How long the event loop runs and what it prints.
#[derive(Debug, Clone, Default)]
pub struct LoopOptions {
    /// Print a summary line per direction this often (to standard error).
    pub stats_interval: Option<Duration>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Print what the loop learns at start to standard error (UDP: the socket buffer sizes
    /// the kernel granted, the sender id).
    pub verbose: bool,
}

/// The bookkeeping every event loop makes each turn: when to stop (the stop flag, SIGINT or
/// SIGTERM, `--duration`), when to print the counters, and how long it may sleep.
pub(crate) struct Schedule {
    labels: [&'static str; 2],
    interval: Option<u64>,
    next_stats: Option<u64>,
    end: Option<u64>,
}

impl Schedule {
    /// The schedule of a loop whose two directions are called `labels` in its summaries.
    pub(crate) fn new(options: &LoopOptions, labels: [&'static str; 2]) -> Schedule {
        let interval = options.stats_interval.map(|i| (i.as_nanos() as u64).max(1));
        Schedule {
            labels,
            interval,
            next_stats: interval,
            end: options.duration.map(|d| d.as_nanos() as u64),
        }
    }

    /// At `now`: `None` if the loop must end; else prints each direction's `counters` if due,
    /// and returns the longest the loop may sleep (100 ms at most, less if the link's
    /// `next_event` or a summary is due sooner).
    pub(crate) fn turn(
        &mut self,
        now: u64,
        stop: &AtomicBool,
        counters: impl Fn(usize) -> Counters,
        next_event: Option<u64>,
    ) -> Option<Duration> {
        if stop.load(Ordering::Relaxed)
            || crate::signal::STOP.load(Ordering::Relaxed)
            || self.end.is_some_and(|end| now >= end)
        {
            return None;
        }
        if let (Some(at), Some(interval)) = (self.next_stats, self.interval) {
            if now >= at {
                for (d, label) in self.labels.iter().enumerate() {
                    eprintln!(
                        "taroc gateway [{:.1} s] {label}: {}",
                        now as f64 / 1e9,
                        counters(d).summary()
                    );
                }
                self.next_stats = Some(at + interval);
            }
        }
        let mut wake = now + 100_000_000;
        for t in [next_event, self.next_stats, self.end]
            .into_iter()
            .flatten()
        {
            wake = wake.min(t);
        }
        Some(Duration::from_nanos(wake.saturating_sub(now)))
    }
}

/// What a run of the event loop did.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// The counters of each direction.
    pub counters: [Counters; 2],
    /// CPU time of the data-path thread.
    pub cpu: Duration,
    /// Wall-clock time of the run.
    pub wall: Duration,
}

impl RunReport {
    /// Packets read from the TUN devices, both directions.
    pub fn packets(&self) -> u64 {
        self.counters[0].packets_in + self.counters[1].packets_in
    }

    /// CPU time of the data path per packet read, in ns (0 if none was read).
    pub fn cpu_ns_per_packet(&self) -> f64 {
        match self.packets() {
            0 => 0.0,
            n => self.cpu.as_nanos() as f64 / n as f64,
        }
    }
}

/// What the event loop forwards with: the codec pipeline, or a plain copy (the baseline of the
/// forwarding benchmark).
pub trait DataPath {
    /// A packet read from TUN `d` (0: A, 1: B) at `now`.
    fn input<S: FnMut(usize, &[u8]) -> bool>(
        &mut self,
        d: usize,
        now: u64,
        packet: &[u8],
        sink: &mut S,
    );
    /// Delivers what is due at `now`.
    fn poll<S: FnMut(usize, &[u8]) -> bool>(&mut self, now: u64, sink: &mut S);
    /// When something is next due.
    fn next_event(&self) -> Option<u64>;
    /// The counters of direction `d`.
    fn counters(&self, d: usize) -> Counters;
}

impl DataPath for Pipeline {
    fn input<S: FnMut(usize, &[u8]) -> bool>(
        &mut self,
        d: usize,
        now: u64,
        packet: &[u8],
        sink: &mut S,
    ) {
        Pipeline::input(self, d, now, packet, sink)
    }
    fn poll<S: FnMut(usize, &[u8]) -> bool>(&mut self, now: u64, sink: &mut S) {
        Pipeline::poll(self, now, sink)
    }
    fn next_event(&self) -> Option<u64> {
        Pipeline::next_event(self)
    }
    fn counters(&self, d: usize) -> Counters {
        Pipeline::counters(self, d).clone()
    }
}

/// A plain TUN-to-TUN copy: each packet read from one device is written to the other.
#[derive(Debug, Default)]
pub struct Copy {
    counters: [Counters; 2],
}

impl DataPath for Copy {
    fn input<S: FnMut(usize, &[u8]) -> bool>(
        &mut self,
        d: usize,
        _now: u64,
        packet: &[u8],
        sink: &mut S,
    ) {
        let c = &mut self.counters[d];
        c.packets_in += 1;
        c.bytes_in += packet.len() as u64;
        if sink(d, packet) {
            c.delivered += 1;
            c.delivered_bytes += packet.len() as u64;
        } else {
            c.tun_write_errors += 1;
        }
    }
    fn poll<S: FnMut(usize, &[u8]) -> bool>(&mut self, _now: u64, _sink: &mut S) {}
    fn next_event(&self) -> Option<u64> {
        None
    }
    fn counters(&self, d: usize) -> Counters {
        self.counters[d].clone()
    }
}

/// Packets read from one device before looking at the other and at the links.
const READ_BATCH: usize = 64;

/// Runs the data path between TUN devices `tuns[0]` (A) and `tuns[1]` (B) until `stop` is set,
/// SIGINT/SIGTERM arrives (once [`crate::signal::install`] has run) or `options.duration`
/// passes; prints summaries every `options.stats_interval`.
pub fn run_emulated<P: DataPath>(
    tuns: [&Tun; 2],
    path: &mut P,
    stop: &AtomicBool,
    options: &LoopOptions,
) -> Result<RunReport, Error> {
    let clock = Clock::start();
    let cpu_start = thread_cpu_time();
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut schedule = Schedule::new(options, DIRECTIONS);
    let mut sink = |d: usize, packet: &[u8]| tuns[1 - d].write(packet).is_ok();
    loop {
        let now = clock.now();
        let Some(sleep) = schedule.turn(now, stop, |d| path.counters(d), path.next_event()) else {
            break;
        };
        let revents = wait_readable([tuns[0].raw_fd(), tuns[1].raw_fd()], sleep)?;
        for (d, &events) in revents.iter().enumerate() {
            if events & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                return Err(Error::new(format!(
                    "TUN device {} went away (poll events {events:#x})",
                    tuns[d].name()
                )));
            }
            if events & libc::POLLIN == 0 {
                continue;
            }
            for _ in 0..READ_BATCH {
                match tuns[d].read(&mut buffer) {
                    Ok(Some(n)) => {
                        let now = clock.now();
                        path.input(d, now, &buffer[..n], &mut sink);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(Error::io(format!("reading from {}", tuns[d].name()), e)),
                }
            }
        }
        path.poll(clock.now(), &mut sink);
    }
    Ok(RunReport {
        counters: [path.counters(0), path.counters(1)],
        cpu: thread_cpu_time().saturating_sub(cpu_start),
        wall: Duration::from_nanos(clock.now()),
    })
}

/// Prints the final counters of a run as a table (to `out`).
pub fn final_table(labels: &[&str; 2], report: &RunReport) -> String {
    let mut text = counters::table(labels, &[&report.counters[0], &report.counters[1]]);
    text.push_str(&format!(
        "data path: {:.3} s CPU over {:.3} s, {} packets read, {:.0} ns CPU per packet\n",
        report.cpu.as_secs_f64(),
        report.wall.as_secs_f64(),
        report.packets(),
        report.cpu_ns_per_packet()
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use taroc_core::Scheme;

    /// An IPv4 TCP packet with valid checksums.
    fn tcp_packet(seq: u32, payload: usize) -> Vec<u8> {
        let total = 40 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let c = taroc_wire::checksum::checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p[20..22].copy_from_slice(&1234u16.to_be_bytes());
        p[22..24].copy_from_slice(&80u16.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 0x50;
        p[33] = 0x10;
        p[34..36].copy_from_slice(&1000u16.to_be_bytes());
        let sum = taroc_wire::checksum::Sum::new()
            .add_pseudo_header(
                [10, 0, 0, 1].into(),
                [10, 0, 0, 2].into(),
                6,
                (total - 20) as u32,
            )
            .add_bytes(&p[20..])
            .checksum();
        p[36..38].copy_from_slice(&sum.to_be_bytes());
        p
    }

    fn config(link: LinkConfig) -> PipelineConfig {
        PipelineConfig {
            variants: [Variant::of(Scheme::None), Variant::of(Scheme::None)],
            links: [link.clone(), link],
            tun_mtu: 1500,
            seed: 1,
            verify_checksums: true,
        }
    }

    #[test]
    fn fields_are_named() {
        let p = tcp_packet(1, 10);
        assert_eq!(field_name(&p, 4), "IPv4 identification");
        assert_eq!(field_name(&p, 25), "TCP sequence number");
        assert_eq!(field_name(&p, 45), "payload");
        assert_eq!(field_name(&[0x60], 0), "an unparsable header");
    }

    #[test]
    fn checksums_are_judged() {
        let mut p = tcp_packet(1, 10);
        assert_eq!(transport_checksum_ok(&p), Some(true));
        p[45] ^= 1;
        assert_eq!(transport_checksum_ok(&p), Some(false));
        assert_eq!(transport_checksum_ok(&[0x45, 0]), None);
    }

    #[test]
    fn packets_rebuilt_wrong_are_dropped_unless_asked_for() {
        // VJ rebuilds wrong packets after a loss (RFC 1144 does not verify); the gateway checks
        // each one's TCP checksum before writing it.
        for verify in [true, false] {
            let link = LinkConfig {
                loss: 0.2,
                ..LinkConfig::default()
            };
            let mut pipeline = Pipeline::new(&PipelineConfig {
                variants: [Variant::of(Scheme::Vj), Variant::of(Scheme::Vj)],
                verify_checksums: verify,
                ..config(link)
            })
            .unwrap();
            let mut wrong = 0;
            let mut sink = |_: usize, p: &[u8]| {
                wrong += usize::from(transport_checksum_ok(p) == Some(false));
                true
            };
            for i in 0..300u32 {
                let now = u64::from(i) * 1_000_000;
                pipeline.input(0, now, &tcp_packet(i * 100, 100), &mut sink);
                pipeline.poll(now, &mut sink);
            }
            pipeline.poll(1_000_000_000_000, &mut sink);
            let c = pipeline.counters(0);
            if verify {
                assert_eq!((wrong, c.incorrect_delivered, c.checksum_failed), (0, 0, 0));
                assert!(c.checksum_dropped > 0, "{c:?}");
            } else {
                assert!(
                    wrong > 0 && c.incorrect_delivered as usize == wrong,
                    "{c:?}"
                );
                assert_eq!((c.checksum_failed as usize, c.checksum_dropped), (wrong, 0));
            }
        }
    }

    #[test]
    fn transparent_link_delivers_at_once_and_oversize_is_refused() {
        let mut pipeline = Pipeline::new(&config(LinkConfig::default())).unwrap();
        let mut out = Vec::new();
        let mut sink = |d: usize, p: &[u8]| {
            out.push((d, p.to_vec()));
            true
        };
        let packet = tcp_packet(1, 100);
        pipeline.input(0, 0, &packet, &mut sink);
        pipeline.input(1, 0, &tcp_packet(7, 1500), &mut sink);
        assert_eq!(out, vec![(0, packet)]);
        assert_eq!(pipeline.counters(1).oversize_packets, 1);
        assert_eq!(pipeline.counters(0).incorrect_delivered, 0);
    }

    #[test]
    fn delayed_link_delivers_when_due() {
        let link = LinkConfig {
            rate_bps: 1_000_000,
            delay: Duration::from_millis(10),
            ..LinkConfig::default()
        };
        let mut pipeline = Pipeline::new(&config(link)).unwrap();
        let mut out = 0;
        let mut sink = |_: usize, _: &[u8]| {
            out += 1;
            true
        };
        for i in 0..5 {
            pipeline.input(0, 0, &tcp_packet(i * 100, 100), &mut sink);
        }
        // The next packet may start when the first has left (141 bytes at 1 Mbit/s).
        assert_eq!(pipeline.next_event(), Some(1_128_000));
        pipeline.poll(10_000_000, &mut sink);
        pipeline.poll(100_000_000, &mut sink);
        assert_eq!(out, 5);
        assert_eq!(pipeline.counters(0).delivered, 5);
    }

    #[test]
    fn link_mtu_below_tun_mtu_is_a_configuration_error() {
        let mut c = config(LinkConfig::default());
        c.links[1].mtu = 1000;
        assert!(Pipeline::new(&c)
            .unwrap_err()
            .to_string()
            .contains("below the TUN MTU"));
    }
}
