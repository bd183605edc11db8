//! The event loop around a data path: one thread, `ppoll` on both TUN devices with a timeout
//! until the next frame is due on a link, and the schedule of summaries and of the end of a run.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{DIRECTIONS, READ_BUFFER};
use crate::counters::{self, Counters};
use crate::tun::Tun;
use crate::Error;

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
