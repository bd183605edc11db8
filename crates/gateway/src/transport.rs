//! Transports: what carries a gateway's link frames to its peer (UDP datagrams,
//! [`crate::udp`]; frames on a serial line, [`crate::serial`]), behind one interface, and the
//! one event loop that joins a TUN device, an [`Endpoint`] and a transport.
//!
//! The data path ([`Endpoint`]: codecs, authentication, MTU, counters) names no transport; a
//! transport names no scheme. A transport that cannot take frames faster than its line carries
//! them says when it can take the next ([`Transport::free_at`]): the loop reads no packet from
//! the TUN device until then, so packets wait in the kernel's queue (where TCP sees them), not
//! in ours, and each is compressed when its turn on the line comes.

use std::os::fd::RawFd;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::counters::Rejection;
use crate::endpoint::{Endpoint, EndpointConfig, DIRECTIONS, START_WAIT};
use crate::gateway::READ_BUFFER;
use crate::gateway::{thread_cpu_time, wait_readable, Clock, LoopOptions, RunReport, Schedule};
use crate::tun::Tun;
use crate::Error;

/// What a transport received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    /// A link frame, now at the start of the caller's buffer; `from_peer` is false if it came
    /// from elsewhere than the configured peer (another UDP address).
    Frame {
        /// Its length, bytes (a frame longer than the buffer arrives cut to its length).
        len: usize,
        /// Whether it came from the configured peer.
        from_peer: bool,
    },
    /// Something that is not a frame of ours, refused by the transport itself (a bad check, a
    /// runt, a foreign station); counted by reason.
    Refused(Rejection),
    /// A frame that failed its check: counted, and reported to the decompressor as a link
    /// error ([`taroc_core::Decompressor::link_error`]).
    Damaged,
    /// An error the medium reported on receiving (an ICMP error of an earlier UDP send):
    /// counted as a send error, not fatal.
    Error,
}

/// What carries link frames between two gateways.
pub trait Transport {
    /// A descriptor the loop polls for readability.
    fn fd(&self) -> RawFd;

    /// The time (ns, on the loop's clock) from which the transport takes the next packet's
    /// frame; 0 if it always can.
    fn free_at(&self) -> u64 {
        0
    }

    /// Sends one link frame at `now`; false if the transport refused it (counted as a send
    /// error).
    fn send(&mut self, now: u64, frame: &[u8]) -> bool;

    /// Receives the next thing waiting, if any, without blocking: a frame goes to the start of
    /// `buffer`. `Ok(None)` when nothing more is waiting; an error is fatal.
    fn receive(&mut self, buffer: &mut [u8]) -> Result<Option<Incoming>, Error>;

    /// Bytes the transport put on and took off the medium, framing included (a UDP
    /// datagram's IP and UDP headers, a serial frame's flags, escapes and check).
    fn medium_bytes(&self) -> [u64; 2];

    /// Work left over from sending (a partial write), to retry at `now`.
    fn flush(&mut self, now: u64) {
        let _ = now;
    }
}

/// Runs a fresh gateway of `config` (a new sender id, counters from the wall clock, when it
/// authenticates) between `tun` and `transport`, as [`run`] does.
pub fn run_fresh<T: Transport>(
    tun: &Tun,
    mut transport: T,
    config: &EndpointConfig,
    stop: &AtomicBool,
    options: &LoopOptions,
) -> Result<RunReport, Error> {
    config.check()?;
    let (sender_id, first_counter) = config.new_run()?;
    let mut endpoint = Endpoint::new(config, sender_id, first_counter)?;
    run(tun, &mut transport, &mut endpoint, stop, options)
}

/// Runs `endpoint` between `tun` and `transport` until `stop` is set, SIGINT/SIGTERM arrives
/// (once [`crate::signal::install`] has run) or `options.duration` passes. With
/// authentication, the TUN device is not read until the peer is heard or [`START_WAIT`]
/// passed.
pub fn run<T: Transport>(
    tun: &Tun,
    transport: &mut T,
    endpoint: &mut Endpoint,
    stop: &AtomicBool,
    options: &LoopOptions,
) -> Result<RunReport, Error> {
    let clock = Clock::start();
    endpoint.start(clock.now(), &mut |d: &[u8]| transport.send(clock.now(), d));
    let start_wait_ends = clock.now() + START_WAIT;
    let cpu_start = thread_cpu_time();
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut frame = vec![0u8; READ_BUFFER];
    let mut schedule = Schedule::new(options, DIRECTIONS);
    loop {
        let now = clock.now();
        transport.flush(now);
        let free_at = transport.free_at();
        let next = match (endpoint.next_event(), (free_at > now).then_some(free_at)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let counters = |d: usize| endpoint.counters()[d].clone();
        let Some(sleep) = schedule.turn(now, stop, counters, next) else {
            break;
        };
        // At start, the TUN device waits (a negative descriptor is not polled) until the peer
        // is heard or START_WAIT passes; the hello is repeated meanwhile. It waits too while
        // the transport cannot take a frame.
        let waiting = !endpoint.ready() && now < start_wait_ends;
        if waiting {
            endpoint.start(now, &mut |d: &[u8]| transport.send(now, d));
        }
        let (tun_fd, sleep) = if waiting {
            (-1, sleep.min(Duration::from_millis(10)))
        } else if free_at > now {
            (-1, sleep.min(Duration::from_nanos(free_at - now)))
        } else {
            (tun.raw_fd(), sleep)
        };
        let revents = wait_readable([tun_fd, transport.fd()], sleep)?;
        if revents[0] & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
            return Err(Error::new(format!("TUN device {} went away", tun.name())));
        }
        if revents[0] & libc::POLLIN != 0 {
            for _ in 0..64 {
                let now = clock.now();
                if transport.free_at() > now {
                    break;
                }
                match tun.read(&mut buffer) {
                    Ok(Some(n)) => {
                        let send = &mut |d: &[u8]| transport.send(now, d);
                        endpoint.packet(now, &buffer[..n], send)
                    }
                    Ok(None) => break,
                    Err(e) => return Err(Error::io(format!("reading from {}", tun.name()), e)),
                }
            }
        }
        if revents[1] & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0 {
            for _ in 0..64 {
                let Some(incoming) = transport.receive(&mut frame)? else {
                    break;
                };
                let now = clock.now();
                match incoming {
                    Incoming::Frame { len, from_peer } => {
                        let send = &mut |d: &[u8]| transport.send(now, d);
                        let write = &mut |packet: &[u8]| tun.write(packet).is_ok();
                        endpoint.datagram(now, from_peer, &frame[..len], send, write);
                    }
                    Incoming::Refused(reason) => endpoint.count_rejected(reason),
                    Incoming::Damaged => endpoint.link_error(),
                    Incoming::Error => endpoint.count_receive_error(),
                }
            }
        }
        let now = clock.now();
        endpoint.poll(now, &mut |d: &[u8]| transport.send(now, d));
    }
    let mut counters = endpoint.counters().clone();
    let [sent, received] = transport.medium_bytes();
    counters[0].medium_bytes = sent;
    counters[1].medium_bytes = received;
    Ok(RunReport {
        counters,
        cpu: thread_cpu_time().saturating_sub(cpu_start),
        wall: Duration::from_nanos(clock.now()),
    })
}
