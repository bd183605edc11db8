//! One-byte request/echo exchanges over TCP with TCP_NODELAY, the way a user of a remote shell
//! feels a link: each keystroke goes one way and its echo comes back before the next.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use taroc_gateway::{netns, Error};

/// What a run of exchanges measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EchoResult {
    /// Exchanges asked for.
    pub exchanges: u32,
    /// Exchanges whose echo came back right, in order.
    pub completed: u32,
    /// From the first request to the last echo, ns.
    pub elapsed_ns: u64,
    /// The slowest exchange, ns.
    pub slowest_ns: u64,
}

impl EchoResult {
    /// Whether every exchange completed.
    pub fn is_complete(&self) -> bool {
        self.completed == self.exchanges
    }
}

/// Runs `exchanges` one-byte request/echo exchanges from namespace `client_ns` to a server in
/// `server_ns` listening on `addr`, each within `time_limit` of the start.
pub fn run(
    client_ns: &str,
    server_ns: &str,
    addr: SocketAddr,
    exchanges: u32,
    time_limit: Duration,
) -> Result<EchoResult, Error> {
    let deadline = Instant::now() + time_limit;
    std::thread::scope(|scope| {
        let (ready_tx, ready_rx) = mpsc::channel();
        let server = scope.spawn(move || -> Result<(), Error> {
            netns::enter(server_ns)?;
            let listener =
                TcpListener::bind(addr).map_err(|e| Error::io(format!("listening on {addr}"), e));
            let listener = match listener {
                Ok(l) => {
                    let _ = ready_tx.send(true);
                    l
                }
                Err(e) => {
                    let _ = ready_tx.send(false);
                    return Err(e);
                }
            };
            listener
                .set_nonblocking(true)
                .map_err(|e| Error::io("echo listener", e))?;
            let mut conn = loop {
                match listener.accept() {
                    Ok((conn, _)) => break conn,
                    Err(_) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(e) => return Err(Error::io("accepting the echo connection", e)),
                }
            };
            conn.set_nonblocking(false)
                .map_err(|e| Error::io("echo connection", e))?;
            let _ = conn.set_nodelay(true);
            let _ = conn.set_read_timeout(Some(time_limit));
            let mut byte = [0u8; 1];
            while conn.read_exact(&mut byte).is_ok() {
                if conn.write_all(&byte).is_err() {
                    break;
                }
            }
            Ok(())
        });
        if ready_rx.recv_timeout(Duration::from_secs(10)) != Ok(true) {
            return server
                .join()
                .unwrap_or_else(|_| Err(Error::new("the echo server panicked")))
                .and(Err(Error::new("the echo server did not start")));
        }
        let client = scope.spawn(move || -> Result<EchoResult, Error> {
            netns::enter(client_ns)?;
            let mut conn = loop {
                match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
                    Ok(c) => break c,
                    Err(_) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    Err(e) => return Err(Error::io(format!("connecting to {addr}"), e)),
                }
            };
            let _ = conn.set_nodelay(true);
            let mut result = EchoResult {
                exchanges,
                ..EchoResult::default()
            };
            let started = Instant::now();
            let mut byte = [0u8; 1];
            for i in 0..exchanges {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
                    break;
                }
                let sent = Instant::now();
                let request = [b'a' + (i % 26) as u8];
                if conn.write_all(&request).is_err() || conn.read_exact(&mut byte).is_err() {
                    break;
                }
                if byte != request {
                    break;
                }
                result.completed += 1;
                result.slowest_ns = result.slowest_ns.max(sent.elapsed().as_nanos() as u64);
            }
            result.elapsed_ns = started.elapsed().as_nanos() as u64;
            Ok(result)
        });
        let result = client
            .join()
            .unwrap_or_else(|_| Err(Error::new("the echo client panicked")));
        let _ = server.join();
        result
    })
}
