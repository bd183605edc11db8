//! A bulk TCP transfer with the kernel's sockets, checked byte for byte: the sender writes a
//! seeded pseudo-random stream (ChaCha8), the receiver regenerates it and compares everything
//! it reads. Each end runs in a thread of its own inside its network namespace.
//!
//! Every step is bounded in time: connecting, each read and write (socket timeouts), and the
//! whole transfer (`time_limit`); past the limit both ends stop and report how far they got.
//!
//! The receiver records its progress: after every read, the time and the bytes read so far
//! ([`Sample`], a few thousand per megabytes at most), from which stalls and the time to resume
//! after a disturbance are measured ([`crate::disturb`]); while it runs, a [`Watch`] shows others
//! how far the receiver got and how far the sender's TCP has sent.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::Serialize;

use taroc_gateway::{netns, Error};

/// What to transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferConfig {
    /// Bytes the sender writes.
    pub bytes: u64,
    /// Seed of the byte stream.
    pub seed: u64,
    /// The whole transfer stops after this long, finished or not.
    pub time_limit: Duration,
}

/// How a transfer went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TransferResult {
    /// Bytes the sender's application wrote into its socket.
    pub bytes_sent: u64,
    /// Bytes the receiver's application read.
    pub bytes_received: u64,
    /// Offset of the first received byte that differs from the stream sent, if any.
    pub first_mismatch: Option<u64>,
    /// From the connection being accepted to the end of the stream (or the time limit), in ns.
    pub elapsed_ns: u64,
    /// Whether the receiver read the whole stream and its end before the time limit.
    pub completed: bool,
    /// The receiver's progress: one sample per read, in time order.
    #[serde(skip)]
    pub progress: Vec<Sample>,
}

/// The receiver's progress at one read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// When the read returned, ns after the connection was accepted.
    pub at_ns: u64,
    /// Bytes read so far, this read included.
    pub bytes: u64,
}

/// How far a running transfer got, for other threads to see.
#[derive(Debug, Default)]
pub struct Watch {
    accepted: OnceLock<Instant>,
    bytes: AtomicU64,
    finished: AtomicBool,
    /// Bytes the sender's application has written.
    written: AtomicU64,
    /// The sender's socket (a duplicate descriptor) while it sends.
    sender: Mutex<Option<TcpStream>>,
}

/// `SIOCOUTQNSD` of `linux/sockios.h`: the bytes of a TCP socket's send queue not sent yet.
const SIOCOUTQNSD: libc::Ioctl = 0x894B;

impl Watch {
    /// Bytes the receiver has read so far.
    pub fn bytes_received(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the stream the sender's TCP has sent at least once (its first unsent byte),
    /// if the sender is connected and still sending. Never below the truth: it may count as
    /// sent the bytes of one write that happens while it is asked.
    pub fn bytes_sent_on_wire(&self) -> Option<u64> {
        let sender = self.sender.lock().ok()?;
        let stream = sender.as_ref()?;
        let mut unsent: libc::c_int = 0;
        // SAFETY: the descriptor belongs to `stream`, alive while the lock is held; the ioctl
        // writes one int through a pointer to `unsent`.
        let rc = unsafe { libc::ioctl(stream.as_raw_fd(), SIOCOUTQNSD, &mut unsent) };
        // Read after the queue: a write in between makes the result larger, not smaller.
        let written = self.written.load(Ordering::Relaxed);
        (rc == 0).then(|| written.saturating_sub(unsent.max(0) as u64))
    }

    /// Whether the receiver has stopped (end of stream, time limit, abort or error).
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }

    /// `at` in ns after the connection was accepted (0 before it, or if it was not yet).
    pub fn since_accept(&self, at: Instant) -> u64 {
        self.accepted.get().map_or(0, |&accepted| {
            at.saturating_duration_since(accepted).as_nanos() as u64
        })
    }
}

/// Sets [`Watch::finished`] when dropped, however the receiver ends.
struct Finish<'a>(&'a Watch);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.finished.store(true, Ordering::Relaxed);
    }
}

impl TransferResult {
    /// Whether every byte sent arrived, unchanged.
    pub fn is_intact(&self) -> bool {
        self.completed && self.first_mismatch.is_none() && self.bytes_received == self.bytes_sent
    }

    /// Bytes received per second.
    pub fn goodput(&self) -> f64 {
        if self.elapsed_ns == 0 {
            0.0
        } else {
            self.bytes_received as f64 * 1e9 / self.elapsed_ns as f64
        }
    }
}

/// Whether to give up: `abort` is set, or SIGINT/SIGTERM arrived (once
/// [`taroc_gateway::signal::install`] has run).
fn stopped(abort: &AtomicBool) -> bool {
    abort.load(Ordering::Relaxed) || taroc_gateway::signal::STOP.load(Ordering::Relaxed)
}

/// An abort flag that is never set.
static NEVER: AtomicBool = AtomicBool::new(false);

const CHUNK: usize = 16 * 1024;
const IO_TIMEOUT: Duration = Duration::from_millis(200);

fn stream(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(0x7472_616e); // "tran"
    rng
}

/// Accepts one connection on `listener` and reads the stream of `config.seed` until its end,
/// the `deadline`, or `abort`, checking every byte. `bytes_sent` is left 0 (the sender knows it).
pub fn receive(
    listener: TcpListener,
    config: &TransferConfig,
    deadline: Instant,
    abort: &AtomicBool,
) -> Result<TransferResult, Error> {
    receive_watched(listener, config, deadline, abort, &Watch::default())
}

/// [`receive`], showing its progress in `watch` as it goes.
pub fn receive_watched(
    listener: TcpListener,
    config: &TransferConfig,
    deadline: Instant,
    abort: &AtomicBool,
    watch: &Watch,
) -> Result<TransferResult, Error> {
    let _finish = Finish(watch);
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io("listener", e))?;
    let mut conn = loop {
        match listener.accept() {
            Ok((conn, _)) => break conn,
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                if stopped(abort) {
                    return Ok(TransferResult::default());
                }
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return Err(Error::io("accepting the transfer connection", e)),
        }
    };
    let started = *watch.accepted.get_or_init(Instant::now);
    conn.set_nonblocking(false)
        .and_then(|()| conn.set_read_timeout(Some(IO_TIMEOUT)))
        .map_err(|e| Error::io("receiver socket", e))?;
    let mut expected = stream(config.seed);
    let mut want = vec![0u8; CHUNK];
    let mut got = vec![0u8; CHUNK];
    let mut result = TransferResult::default();
    while Instant::now() < deadline && !stopped(abort) {
        match conn.read(&mut got) {
            Ok(0) => {
                result.completed = true;
                break;
            }
            Ok(n) => {
                if result.first_mismatch.is_none() {
                    expected.fill_bytes(&mut want[..n]);
                    if let Some(i) = want[..n].iter().zip(&got[..n]).position(|(a, b)| a != b) {
                        result.first_mismatch = Some(result.bytes_received + i as u64);
                    }
                }
                result.bytes_received += n as u64;
                watch.bytes.store(result.bytes_received, Ordering::Relaxed);
                result.progress.push(Sample {
                    at_ns: started.elapsed().as_nanos() as u64,
                    bytes: result.bytes_received,
                });
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("receiving the transfer", e)),
        }
    }
    result.elapsed_ns = started.elapsed().as_nanos() as u64;
    Ok(result)
}

/// Connects to `addr` and writes `config.bytes` of the stream of `config.seed`, then waits for
/// the receiver to close; stops early at the `deadline` or on `abort`. Returns the bytes written
/// and whether the receiver closed its end.
pub fn send(
    addr: SocketAddr,
    config: &TransferConfig,
    deadline: Instant,
    abort: &AtomicBool,
) -> Result<(u64, bool), Error> {
    send_watched(addr, config, deadline, abort, &Watch::default())
}

/// Stops showing the sender's socket in a [`Watch`] when dropped, however the sender ends.
struct Unwatch<'a>(&'a Watch);

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        if let Ok(mut sender) = self.0.sender.lock() {
            *sender = None;
        }
    }
}

/// [`send`], showing how far it got in `watch` as it goes.
pub fn send_watched(
    addr: SocketAddr,
    config: &TransferConfig,
    deadline: Instant,
    abort: &AtomicBool,
    watch: &Watch,
) -> Result<(u64, bool), Error> {
    let mut conn = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match TcpStream::connect_timeout(&addr, left.min(Duration::from_secs(3))) {
            Ok(conn) => break conn,
            Err(_) if Instant::now() + Duration::from_millis(100) < deadline && !stopped(abort) => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(Error::io(format!("connecting to {addr}"), e)),
        }
    };
    conn.set_write_timeout(Some(IO_TIMEOUT))
        .and_then(|()| conn.set_read_timeout(Some(IO_TIMEOUT)))
        .map_err(|e| Error::io("sender socket", e))?;
    let _unwatch = Unwatch(watch);
    if let (Ok(clone), Ok(mut sender)) = (conn.try_clone(), watch.sender.lock()) {
        *sender = Some(clone);
    }
    let mut source = stream(config.seed);
    let mut chunk = vec![0u8; CHUNK];
    let mut sent = 0u64;
    let mut pending = 0..0;
    while sent < config.bytes && Instant::now() < deadline && !stopped(abort) {
        if pending.is_empty() {
            let n = (config.bytes - sent).min(CHUNK as u64) as usize;
            source.fill_bytes(&mut chunk[..n]);
            pending = 0..n;
        }
        match conn.write(&chunk[pending.clone()]) {
            Ok(n) => {
                pending.start += n;
                sent += n as u64;
                watch.written.store(sent, Ordering::Relaxed);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Past the deadline the receiver stops and closes with data unread, which resets
            // the connection under a write still blocked: the time limit, not a failure.
            Err(_) if Instant::now() >= deadline => break,
            Err(e) => return Err(Error::io("sending the transfer", e)),
        }
    }
    let _ = conn.shutdown(Shutdown::Write);
    // Wait for the receiver to close its end (it has read everything), within the deadline.
    let mut byte = [0u8; 1];
    let mut closed = false;
    while Instant::now() < deadline && !stopped(abort) {
        match conn.read(&mut byte) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    Ok((sent, closed))
}

/// Transfers `config.bytes` from a socket in namespace `sender_ns` to one listening on `addr`
/// in namespace `receiver_ns`, and checks what arrives.
pub fn run(
    sender_ns: &str,
    receiver_ns: &str,
    addr: SocketAddr,
    config: &TransferConfig,
) -> Result<TransferResult, Error> {
    run_watched(sender_ns, receiver_ns, addr, config, &Watch::default())
}

/// [`run`], the receiver showing its progress in `watch` as it goes.
pub fn run_watched(
    sender_ns: &str,
    receiver_ns: &str,
    addr: SocketAddr,
    config: &TransferConfig,
    watch: &Watch,
) -> Result<TransferResult, Error> {
    let deadline = Instant::now() + config.time_limit;
    let abort = AtomicBool::new(false);
    let abort = &abort;
    std::thread::scope(|scope| {
        let (ready_tx, ready_rx) = mpsc::channel();
        let receiver = scope.spawn(move || {
            let listener = netns::enter(receiver_ns).and_then(|()| {
                bind_retrying(addr).map_err(|e| Error::io(format!("listening on {addr}"), e))
            });
            match listener {
                Ok(listener) => {
                    let _ = ready_tx.send(Ok(()));
                    receive_watched(listener, config, deadline, abort, watch)
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(()));
                    watch.finished.store(true, Ordering::Relaxed);
                    Err(e)
                }
            }
        });
        let ready = ready_rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| ())
            .and_then(|r| r);
        let sent = match ready {
            Ok(()) => {
                let sender = scope.spawn(move || {
                    netns::enter(sender_ns)?;
                    send_watched(addr, config, deadline, &NEVER, watch)
                });
                sender
                    .join()
                    .unwrap_or_else(|_| Err(Error::new("the sender thread panicked")))
                    .inspect_err(|_| abort.store(true, Ordering::Relaxed))
            }
            Err(()) => Err(Error::new("the receiver did not start")),
        };
        let received = receiver
            .join()
            .unwrap_or_else(|_| Err(Error::new("the receiver thread panicked")))?;
        let (bytes_sent, _closed) = sent?;
        Ok(TransferResult {
            bytes_sent,
            ..received
        })
    })
}

/// Binds a listener to `addr`, trying again for up to two seconds while the address is in use
/// (the listener of the connection before, in the same namespace, may not be closed yet).
fn bind_retrying(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match TcpListener::bind(addr) {
            Err(e) if e.kind() == ErrorKind::AddrInUse && Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}
