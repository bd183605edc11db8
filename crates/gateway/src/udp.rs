//! The UDP transport: link frames to and from a peer gateway in UDP datagrams, one frame a
//! datagram ([`crate::endpoint`] is the data path, [`crate::transport::run`] the loop).
//!
//! With authentication ([`crate::auth`]) only an authentic, fresh frame of the peer is
//! accepted, whatever address it comes from (the peer is pinned by its key; frames from
//! another address are counted, `other_source`; ours still go to the configured peer). Without
//! (`--insecure-no-auth`) a datagram is accepted only from the peer's address.
//!
//! Every datagram pays the outer IP and UDP headers (28 bytes over IPv4, 48 over IPv6):
//! [`UdpTransport::medium_bytes`](crate::transport::Transport::medium_bytes) counts them, so
//! the saving reported is the real one on the network.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd as _, RawFd};
use std::sync::atomic::AtomicBool;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::endpoint::{Endpoint, EndpointConfig};
use crate::gateway::{LoopOptions, RunReport};
use crate::socket::size_buffers;
use crate::transport::{self, Incoming, Transport};
use crate::tun::Tun;
use crate::Error;

/// The settings of a UDP gateway.
#[derive(Debug, Clone)]
pub struct UdpConfig {
    /// Local address to bind.
    pub listen: SocketAddr,
    /// The peer gateway's address.
    pub peer: SocketAddr,
    /// SO_RCVBUF and SO_SNDBUF to ask the kernel for, bytes.
    pub socket_buffer: usize,
    /// The data path's settings. A UDP path may reorder datagrams: the link runs with
    /// [`EndpointConfig::may_reorder`] set, whatever this one says ([`UdpConfig::endpoint`]).
    pub endpoint: EndpointConfig,
}

impl UdpConfig {
    /// The settings of the data path: [`UdpConfig::endpoint`]'s, on a path that may reorder.
    pub fn endpoint(&self) -> EndpointConfig {
        EndpointConfig {
            may_reorder: true,
            ..self.endpoint.clone()
        }
    }
}

/// Checks the settings of a UDP gateway; what is wrong is a usage error ([`Error::usage`]): the
/// settings come from the command line.
pub fn check(config: &UdpConfig) -> Result<(), Error> {
    config.endpoint().check()?;
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
    let endpoint_config = config.endpoint();
    let (sender_id, first_counter) = endpoint_config.new_run()?;
    if options.verbose {
        eprintln!(
            "taroc gateway: UDP socket buffers granted: receive {} B, send {} B (asked for {} \
             B; the kernel reports twice the usable size){}",
            buffers.receive,
            buffers.send,
            config.socket_buffer,
            match config.endpoint.auth {
                Some(_) => format!("; sender id {sender_id:016x}"),
                None => String::new(),
            }
        );
    }
    let mut endpoint = Endpoint::new(&endpoint_config, sender_id, first_counter)?;
    let mut transport = UdpTransport::new(socket, config.peer);
    transport::run(tun, &mut transport, &mut endpoint, stop, options)
}

/// The bytes of IP and UDP header a datagram to or from `peer` pays on the network.
fn outer_header(peer: SocketAddr) -> u64 {
    if peer.is_ipv4() {
        28
    } else {
        48
    }
}

/// Datagrams on a UDP socket, to one peer address.
#[derive(Debug)]
pub struct UdpTransport {
    socket: UdpSocket,
    peer: SocketAddr,
    medium: [u64; 2],
}

impl UdpTransport {
    /// The transport over `socket` (non-blocking) to `peer`.
    pub fn new(socket: UdpSocket, peer: SocketAddr) -> UdpTransport {
        UdpTransport {
            socket,
            peer,
            medium: [0; 2],
        }
    }
}

impl Transport for UdpTransport {
    fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    fn send(&mut self, _now: u64, frame: &[u8]) -> bool {
        self.medium[0] += frame.len() as u64 + outer_header(self.peer);
        self.socket.send_to(frame, self.peer).is_ok()
    }

    fn receive(&mut self, buffer: &mut [u8]) -> Result<Option<Incoming>, Error> {
        match self.socket.recv_from(buffer) {
            // A datagram longer than the buffer arrives cut to its length: oversize.
            Ok((len, from)) => {
                self.medium[1] += len as u64 + outer_header(from);
                Ok(Some(Incoming::Frame {
                    len,
                    from_peer: from == self.peer,
                }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            // ICMP errors of earlier sends (peer not up yet) surface here: not fatal.
            Err(_) => Ok(Some(Incoming::Error)),
        }
    }

    fn medium_bytes(&self) -> [u64; 2] {
        self.medium
    }
}

#[cfg(test)]
mod tests;
