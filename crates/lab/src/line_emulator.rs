//! A serial line on one host, for tests and benchmarks: two pseudo-terminals whose masters a
//! thread bridges at a baud rate (8N1: ten bits a byte), with seeded bit errors, bursts of
//! garbage and outages. Each gateway opens one pseudo-terminal's slave as its serial line
//! (`--serial /dev/pts/N`), as it would a UART.
//!
//! ```text
//!   gateway A ── /dev/pts/a ══ master a ─┐  bridge thread   ┌─ master b ══ /dev/pts/b ── gateway B
//!                                        └─ baud, BER, ... ─┘
//! ```
//!
//! The slaves stay open here too, so a gateway can close its line and open it again (a
//! restart) without the pseudo-terminal going away; both are in raw mode from the start, so
//! nothing is echoed or translated.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::termios::{self, SetArg};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use taroc_gateway::gateway::wait_readable;
use taroc_gateway::serial::BITS_PER_BYTE;
use taroc_gateway::Error;

/// The settings of an emulated line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineConfig {
    /// Bits per second, both ways.
    pub baud: u32,
    /// The probability that a bit is flipped on its way.
    pub ber: f64,
    /// The probability, per byte carried, that a burst of 1 to 32 random bytes is inserted
    /// after it (line noise).
    pub garbage: f64,
    /// The seed of the bit errors and the garbage.
    pub seed: u64,
}

impl LineConfig {
    /// A clean line at `baud`.
    pub fn clean(baud: u32) -> LineConfig {
        LineConfig {
            baud,
            ber: 0.0,
            garbage: 0.0,
            seed: 1,
        }
    }
}

/// What the line carried, per direction (0: A to B).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCounters {
    /// Bytes delivered.
    pub bytes: [u64; 2],
    /// Bits flipped.
    pub flipped: [u64; 2],
    /// Garbage bytes inserted.
    pub garbage: [u64; 2],
    /// Bytes lost in outages.
    pub lost: [u64; 2],
}

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    /// The end of the current outage, ns since the line started; 0 if none.
    outage_until: AtomicU64,
    bytes: [AtomicU64; 2],
    flipped: [AtomicU64; 2],
    garbage: [AtomicU64; 2],
    lost: [AtomicU64; 2],
}

/// A running emulated line; the bridge thread is stopped and joined on drop.
#[derive(Debug)]
pub struct EmulatedLine {
    paths: [PathBuf; 2],
    /// The slaves, kept open for the line's life.
    _slaves: [OwnedFd; 2],
    shared: Arc<Shared>,
    started: Instant,
    handle: Option<JoinHandle<()>>,
}

/// One pseudo-terminal, raw: its master and slave, and the slave's path.
fn raw_pty() -> Result<(File, OwnedFd, PathBuf), Error> {
    let pty = nix::pty::openpty(None, None)
        .map_err(|e| Error::io("opening a pseudo-terminal", std::io::Error::from(e)))?;
    let setup = |e: nix::Error| Error::io("setting up a pseudo-terminal", e.into());
    let mut t = termios::tcgetattr(&pty.slave).map_err(setup)?;
    termios::cfmakeraw(&mut t);
    termios::tcsetattr(&pty.slave, SetArg::TCSANOW, &t).map_err(setup)?;
    let path = std::fs::read_link(format!("/proc/self/fd/{}", pty.slave.as_raw_fd()))
        .map_err(|e| Error::io("naming a pseudo-terminal", e))?;
    let master = File::from(pty.master);
    set_nonblocking(&master)?;
    Ok((master, pty.slave, path))
}

fn set_nonblocking(file: &File) -> Result<(), Error> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own, with flags read from it.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(Error::io(
            "making a pseudo-terminal non-blocking",
            std::io::Error::last_os_error(),
        ))
    }
}

impl EmulatedLine {
    /// Opens the two pseudo-terminals and starts the bridge.
    pub fn start(config: LineConfig) -> Result<EmulatedLine, Error> {
        if config.baud == 0 || !(0.0..=1.0).contains(&config.ber) {
            return Err(Error::new("a line needs a baud rate and a BER in [0, 1]"));
        }
        let (master_a, slave_a, path_a) = raw_pty()?;
        let (master_b, slave_b, path_b) = raw_pty()?;
        let shared = Arc::new(Shared::default());
        let started = Instant::now();
        let thread_shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("taroc-line".into())
            .spawn(move || bridge([master_a, master_b], config, &thread_shared, started))
            .map_err(|e| Error::io("starting the line thread", e))?;
        Ok(EmulatedLine {
            paths: [path_a, path_b],
            _slaves: [slave_a, slave_b],
            shared,
            started,
            handle: Some(handle),
        })
    }

    /// The path of side `side`'s serial line (0: A, 1: B).
    pub fn path(&self, side: usize) -> &PathBuf {
        &self.paths[side]
    }

    /// Loses everything on the line, both ways, for `duration` from now.
    pub fn outage(&self, duration: Duration) {
        let until = self.started.elapsed() + duration;
        self.shared
            .outage_until
            .store(until.as_nanos() as u64, Ordering::Relaxed);
    }

    /// What the line carried so far.
    pub fn counters(&self) -> LineCounters {
        let read = |a: &[AtomicU64; 2]| a.each_ref().map(|c| c.load(Ordering::Relaxed));
        LineCounters {
            bytes: read(&self.shared.bytes),
            flipped: read(&self.shared.flipped),
            garbage: read(&self.shared.garbage),
            lost: read(&self.shared.lost),
        }
    }
}

impl Drop for EmulatedLine {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// One direction of the bridge: bytes read from one master, waiting to be written to the
/// other at the line's pace.
struct Direction {
    queue: std::collections::VecDeque<u8>,
    /// When the byte on the line now has been sent (ns since start).
    free_at: u64,
}

/// Bytes a direction holds at most; more are lost (a UART's FIFO overruns).
const QUEUE_LIMIT: usize = 1 << 16;

fn bridge(masters: [File; 2], config: LineConfig, shared: &Shared, started: Instant) {
    let mut masters = masters;
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let byte_ns = BITS_PER_BYTE * 1_000_000_000 / u64::from(config.baud);
    let mut dirs = [0, 1].map(|_| Direction {
        queue: std::collections::VecDeque::new(),
        free_at: 0,
    });
    let mut buffer = [0u8; 4096];
    let mut out = Vec::with_capacity(4096);
    let chance = |rng: &mut ChaCha8Rng, p: f64| {
        p > 0.0 && (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    };
    while !shared.stop.load(Ordering::Relaxed) {
        let now = started.elapsed().as_nanos() as u64;
        // Sleep until a byte is due, or something can be read (at most 5 ms).
        let due = dirs
            .iter()
            .filter(|d| !d.queue.is_empty())
            .map(|d| d.free_at.saturating_sub(now))
            .min()
            .unwrap_or(5_000_000)
            .clamp(100_000, 5_000_000);
        let fds = [masters[0].as_raw_fd(), masters[1].as_raw_fd()];
        let Ok(revents) = wait_readable(fds, Duration::from_nanos(due)) else {
            return;
        };
        let now = started.elapsed().as_nanos() as u64;
        let outage = now < shared.outage_until.load(Ordering::Relaxed);
        for from in 0..2 {
            if revents[from] & libc::POLLIN == 0 {
                continue;
            }
            match masters[from].read(&mut buffer) {
                Ok(n) if n > 0 => {
                    let dir = &mut dirs[from];
                    if outage || dir.queue.len() + n > QUEUE_LIMIT {
                        shared.lost[from].fetch_add(n as u64, Ordering::Relaxed);
                        continue;
                    }
                    if dir.queue.is_empty() {
                        dir.free_at = dir.free_at.max(now);
                    }
                    dir.queue.extend(&buffer[..n]);
                }
                // EIO: no one holds the slave open (a gateway restarting); nothing to read.
                _ => {}
            }
        }
        for (from, dir) in dirs.iter_mut().enumerate() {
            out.clear();
            while dir.free_at + byte_ns <= now {
                let Some(mut byte) = dir.queue.pop_front() else {
                    break;
                };
                dir.free_at += byte_ns;
                if outage {
                    shared.lost[from].fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if config.ber > 0.0 {
                    for bit in 0..8 {
                        if chance(&mut rng, config.ber) {
                            byte ^= 1 << bit;
                            shared.flipped[from].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                out.push(byte);
                if chance(&mut rng, config.garbage) {
                    let n = 1 + rng.next_u64() % 32;
                    for _ in 0..n {
                        out.push(rng.next_u64() as u8);
                    }
                    shared.garbage[from].fetch_add(n, Ordering::Relaxed);
                }
            }
            if out.is_empty() {
                continue;
            }
            let to = &mut masters[1 - from];
            match to.write(&out) {
                Ok(n) => {
                    shared.bytes[from].fetch_add(n as u64, Ordering::Relaxed);
                    if n < out.len() {
                        shared.lost[from].fetch_add((out.len() - n) as u64, Ordering::Relaxed);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    shared.lost[from].fetch_add(out.len() as u64, Ordering::Relaxed);
                }
                Err(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taroc_gateway::serial::open_line;

    #[test]
    fn bytes_cross_at_the_baud_rate_and_are_damaged_as_configured() {
        let line = EmulatedLine::start(LineConfig::clean(115_200)).unwrap();
        let mut a = open_line(line.path(0), 115_200).unwrap();
        let mut b = open_line(line.path(1), 115_200).unwrap();
        let data: Vec<u8> = (0..2880u32).map(|i| (i * 7) as u8).collect();
        let started = Instant::now();
        a.write_all(&data).unwrap();
        let mut got = Vec::new();
        let mut buffer = [0u8; 4096];
        while got.len() < data.len() && started.elapsed() < Duration::from_secs(5) {
            match b.read(&mut buffer) {
                Ok(n) => got.extend_from_slice(&buffer[..n]),
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        let took = started.elapsed();
        assert_eq!(got, data);
        // 2,880 bytes at 11,520 bytes a second: 250 ms.
        assert!(took >= Duration::from_millis(240), "{took:?}");
        assert!(took < Duration::from_millis(1000), "{took:?}");
        assert_eq!(line.counters().bytes, [2880, 0]);

        let noisy = EmulatedLine::start(LineConfig {
            ber: 1e-2,
            garbage: 0.01,
            ..LineConfig::clean(1_000_000)
        })
        .unwrap();
        let mut a = open_line(noisy.path(0), 1_000_000).unwrap();
        let _b = open_line(noisy.path(1), 1_000_000).unwrap();
        a.write_all(&data).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let c = noisy.counters();
        assert!(c.flipped[0] > 50 && c.garbage[0] > 0, "{c:?}");
    }
}
