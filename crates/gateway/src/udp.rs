//! The UDP transport: one TUN device, and frames to and from a peer gateway in UDP datagrams.
//!
//! A datagram is one frame: one byte of [`FrameKind`] ([`FrameKind::to_byte`]) and the frame.
//! The "send" direction compresses packets read from the TUN device and sends their frames to
//! the peer, through an emulated link ([`crate::link`]) when impairments are configured, so a
//! real link can be made worse on purpose; the "receive" direction decompresses the peer's
//! frames and writes the packets into the TUN device. CONTEXT_STATE frames from the peer go to
//! our compressor; our decompressor's feedback goes to the peer (through the same impaired
//! send path). Datagrams from any address but the peer's are ignored and counted.
//!
//! There is no oracle here (the original packets are on the other host): the receive direction
//! counts delivered TCP/UDP packets whose checksum fails instead (`checksum_failed`), the check
//! the receiving host's stack will make.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use taroc_core::variant::Variant;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind};

use crate::counters::Counters;
use crate::gateway::{
    self, thread_cpu_time, transport_checksum_ok, wait_readable, Clock, DropLog, LoopOptions,
    RunReport, Schedule, READ_BUFFER,
};
use crate::link::{Fate, Link, LinkConfig, LinkDrop};
use crate::tun::Tun;
use crate::Error;

/// Labels of the two directions of a UDP gateway.
pub const DIRECTIONS: [&str; 2] = ["send", "receive"];

/// Writes a frame as a datagram: its kind byte, then its bytes.
pub fn encode_frame(kind: FrameKind, frame: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(kind.to_byte());
    out.extend_from_slice(frame);
}

/// Reads a datagram as a frame, if its first byte is a frame kind.
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
    /// The TUN MTU: longer packets are refused.
    pub tun_mtu: usize,
    /// Seed of the impairments' random streams.
    pub seed: u64,
    /// Whether a rebuilt TCP/UDP packet whose checksum fails is dropped (true) or delivered.
    pub verify_checksums: bool,
}

struct UdpPath {
    compressor: AnyCompressor,
    decompressor: AnyDecompressor,
    link: Link,
    transparent: bool,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
    feedback: Vec<u8>,
    datagram: Vec<u8>,
    counters: [Counters; 2],
    log: DropLog,
    tun_mtu: usize,
    verify_checksums: bool,
}

impl UdpPath {
    /// Sends one datagram now, counting a failure.
    fn send_datagram(&mut self, socket: &UdpSocket, peer: SocketAddr, kind: FrameKind) {
        let frame = if kind == FrameKind::ContextState {
            &self.feedback
        } else {
            &self.frame
        };
        encode_frame(kind, frame, &mut self.datagram);
        if socket.send_to(&self.datagram, peer).is_err() {
            self.counters[0].send_errors += 1;
        }
    }

    /// Starts what the link's transmitter may start by `now` (compressing packets then).
    fn pump(&mut self, now: u64) {
        gateway::pump(
            &mut self.link,
            &mut self.compressor,
            &mut self.frame,
            &mut self.counters[0],
            now,
            DIRECTIONS[0],
            &mut self.log,
        );
    }

    fn on_tun_packet(&mut self, socket: &UdpSocket, peer: SocketAddr, now: u64, packet: &[u8]) {
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
        self.counters[0].count_frame(kind, packet.len(), self.frame.len());
        if self.frame.len() > self.link.config().mtu {
            self.counters[0].count_link_drop(LinkDrop::Oversize);
            let count = self.counters[0].oversize_frames;
            let mtu = self.link.config().mtu;
            self.log
                .oversize(now, DIRECTIONS[0], true, self.frame.len(), mtu, count);
            return;
        }
        self.send_datagram(socket, peer, kind);
    }

    fn on_datagram(
        &mut self,
        socket: &UdpSocket,
        peer: SocketAddr,
        tun: &Tun,
        now: u64,
        datagram: &[u8],
    ) {
        let Some((kind, frame)) = decode_frame(datagram) else {
            self.counters[1].foreign_frames += 1;
            return;
        };
        if kind == FrameKind::ContextState {
            self.compressor.handle_feedback(frame);
            self.counters[0].feedback_received += 1;
            return;
        }
        self.decompressor.set_time(Duration::from_nanos(now));
        let c = &mut self.counters[1];
        match self.decompressor.decompress(kind, frame, &mut self.rebuilt) {
            Err(reason) => c.count_refusal(reason),
            Ok(()) => {
                let checksum = transport_checksum_ok(&self.rebuilt);
                if c.count_rebuilt(self.rebuilt.len(), checksum, self.verify_checksums)
                    && tun.write(&self.rebuilt).is_err()
                {
                    c.tun_write_errors += 1;
                }
            }
        }
        for _ in 0..8 {
            if !self.decompressor.take_feedback(&mut self.feedback) {
                break;
            }
            self.counters[1].feedback_sent += 1;
            self.counters[1].feedback_bytes += self.feedback.len() as u64 + 1;
            if self.transparent {
                self.send_datagram(socket, peer, FrameKind::ContextState);
            } else if let Err(drop) = self.link.offer(now, &self.feedback, true) {
                self.counters[0].count_link_drop(drop);
            }
        }
        self.pump(now);
    }

    /// Sends what the link has let through by `now`.
    fn drain_link(&mut self, socket: &UdpSocket, peer: SocketAddr, now: u64) {
        self.pump(now);
        for _ in 0..4096 {
            let Some(arrival) = self.link.receive(now) else {
                break;
            };
            if arrival.fate != Fate::Intact {
                self.counters[0].count_link_fate(arrival.fate);
                continue;
            }
            encode_frame(arrival.kind, arrival.frame, &mut self.datagram);
            if socket.send_to(&self.datagram, peer).is_err() {
                self.counters[0].send_errors += 1;
            }
        }
    }
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

/// Checks the settings of a UDP gateway.
pub fn check(config: &UdpConfig) -> Result<(), Error> {
    config.link.check()?;
    if config.link.mtu < config.tun_mtu {
        return Err(Error::new(format!(
            "link MTU {} is below the TUN MTU {}: a packet the compressor cannot shrink would \
             not fit the link",
            config.link.mtu, config.tun_mtu
        )));
    }
    Ok(())
}

/// [`run_udp`] on a socket already bound (`config.listen` is not used).
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
    let peer = config.peer;
    let mut path = UdpPath {
        compressor: config.variants[0].compressor(),
        decompressor: config.variants[1].decompressor(),
        transparent: config.link.is_transparent(),
        link: Link::new(config.link.clone(), config.seed, 0, config.tun_mtu),
        frame: Vec::with_capacity(config.link.mtu.max(config.tun_mtu) + 64),
        rebuilt: Vec::with_capacity(READ_BUFFER),
        feedback: Vec::with_capacity(READ_BUFFER),
        datagram: Vec::with_capacity(READ_BUFFER + 1),
        counters: [Counters::default(), Counters::default()],
        log: DropLog::default(),
        tun_mtu: config.tun_mtu,
        verify_checksums: config.verify_checksums,
    };
    let clock = Clock::start();
    let cpu_start = thread_cpu_time();
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut schedule = Schedule::new(options, DIRECTIONS);
    use std::os::fd::AsRawFd;
    loop {
        let now = clock.now();
        let counters = |d: usize| path.counters[d].clone();
        let Some(sleep) = schedule.turn(now, stop, counters, path.link.next_event()) else {
            break;
        };
        let revents = wait_readable([tun.raw_fd(), socket.as_raw_fd()], sleep)?;
        if revents[0] & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
            return Err(Error::new(format!("TUN device {} went away", tun.name())));
        }
        if revents[0] & libc::POLLIN != 0 {
            for _ in 0..64 {
                match tun.read(&mut buffer) {
                    Ok(Some(n)) => path.on_tun_packet(&socket, peer, clock.now(), &buffer[..n]),
                    Ok(None) => break,
                    Err(e) => return Err(Error::io(format!("reading from {}", tun.name()), e)),
                }
            }
        }
        if revents[1] & (libc::POLLIN | libc::POLLERR) != 0 {
            for _ in 0..64 {
                match socket.recv_from(&mut buffer) {
                    Ok((n, from)) if from == peer => {
                        path.on_datagram(&socket, peer, tun, clock.now(), &buffer[..n])
                    }
                    Ok(_) => path.counters[1].foreign_frames += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // ICMP errors of earlier sends (peer not up yet) surface here: not fatal.
                    Err(_) => path.counters[0].send_errors += 1,
                }
            }
        }
        path.drain_link(&socket, peer, clock.now());
    }
    Ok(RunReport {
        counters: path.counters.clone(),
        cpu: thread_cpu_time().saturating_sub(cpu_start),
        wall: Duration::from_nanos(clock.now()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_their_kind_byte() {
        let mut out = Vec::new();
        for kind in FrameKind::ALL {
            encode_frame(kind, &[1, 2, 3], &mut out);
            assert_eq!(decode_frame(&out), Some((kind, &[1u8, 2, 3][..])));
        }
        assert_eq!(decode_frame(&[]), None);
        assert_eq!(decode_frame(&[200, 1]), None);
    }
}
