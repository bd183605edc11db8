//! The live Linux gateway of taroc: real IP packets from TUN devices cross our header
//! compressors, a link, and our decompressors.
//!
//! Four links:
//! - **emulated** (one process, one host): two TUN devices, usually one per network namespace,
//!   joined by an in-process link with bandwidth, propagation delay, a DropTail queue, bit errors,
//!   random or bursty loss and reordering ([`link`]), deterministic from a seed. The gateway keeps
//!   each original packet beside its frame on the link, so it judges every delivery exactly
//!   (the `incorrect_delivered` counter).
//! - **UDP** (two hosts): one TUN device, frames travel in UDP datagrams to a peer gateway
//!   ([`udp`]); the same impairments can be applied on send.
//! - **serial** (a UART, USB serial adapter or radio modem): frames in HDLC (RFC 1662) or KISS
//!   framing, paced at the line's baud rate ([`serial`]).
//! - **Ethernet**: raw frames of their own EtherType to the peer's MAC ([`ethernet`]).
//!
//! Frames are authenticated under a pre-shared key ([`auth`]): by default on UDP and Ethernet,
//! where anyone on the medium can send; optionally on a serial line.
//!
//! Modules: [`tun`] opens TUN devices; [`netns`] enters network namespaces; [`link`] is the
//! emulated link; [`gateway`] is the emulated link's data path (TUN → compress → link →
//! decompress → TUN) and its event loop; [`endpoint`] is one end of a real link (TUN ↔ link
//! end ↔ frames) and [`transport`] the interface every real link implements: [`udp`],
//! [`serial`] (HDLC or KISS framing) and [`ethernet`] (raw frames over AF_PACKET); [`auth`]
//! authenticates frames, [`keyfile`] holds their keys, [`socket`] sizes UDP buffers;
//! [`counters`] is what the data path counts; [`signal`] SIGINT/SIGTERM; [`args`] is a running
//! gateway's command line, [`config_file`] the same options from a TOML file, and [`commands`]
//! runs it.
//!
//! The lab that measures the gateway (benchmarks, two-namespace transfers, restarts and
//! forgeries, the serial line emulator) is the `taroc-lab` crate, which depends on this one.
//!
//! ## Dependencies, and why
//! - `libc`: the TUN ioctls (`TUNSETIFF`, `SIOCSIFMTU`, `SIOCSIFFLAGS`), `setns`, `ppoll`,
//!   `sigaction`, thread CPU time and a TCP socket's unsent bytes (`SIOCOUTQNSD`). A TUN crate
//!   would wrap the same two ioctls and bring an async runtime or a builder we do not need; the
//!   `unsafe` stays in six small modules ([`tun`], [`netns`], [`signal`], [`ethernet`]'s AF_PACKET socket, [`gateway`]'s
//!   `ppoll`/CPU clock, [`socket`]'s `setsockopt`/`getsockopt`),
//!   each block with a SAFETY comment.
//! - `rand_chacha`: the seeded, portable random streams of the link model (as `taroc eval`).
//! - `clap`: the command line (as `taroc eval`); `serde`/`serde_json`: the `--json` records.
//! - `blake3`: the MAC of the authenticated UDP link (keyed hash, key derivation, extendable
//!   output for the tag length); `constant_time_eq` (already one of blake3's) compares tags in
//!   constant time. No hand-written cryptography.
//!
//! The data path is one thread with `ppoll` over the file descriptors (no async runtime): at the
//! rates header compression is for, one core forwards far more than the link carries, and one
//! thread owns both directions, so feedback needs no locks. After warm-up it does not allocate:
//! buffers are preallocated, the link queue is a fixed ring of preallocated slots
//! (`tests/alloc_free.rs` counts allocations to prove it).
#![warn(missing_docs)]

use std::fmt;
use std::io;

pub mod args;
pub mod auth;
pub mod commands;
pub mod config_file;
pub mod counters;
pub mod endpoint;
pub mod ethernet;
pub mod gateway;
pub mod keyfile;
pub mod link;
pub mod netns;
pub mod serial;
pub mod signal;
pub mod socket;
pub mod transport;
pub mod tun;
pub mod udp;

/// An error of the gateway's setup or I/O, with what was being done.
#[derive(Debug)]
pub struct Error {
    message: String,
    source: Option<io::Error>,
    usage: bool,
}

impl Error {
    /// An error described by `message` alone.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            source: None,
            usage: false,
        }
    }

    /// A bad command line (options that do not go together): exit status 2, not 1.
    pub fn usage(message: impl Into<String>) -> Error {
        Error {
            usage: true,
            ..Error::new(message)
        }
    }

    /// Whether this is a bad command line ([`Error::usage`]).
    pub fn is_usage(&self) -> bool {
        self.usage
    }

    /// An error of the operating system while doing what `message` says.
    pub fn io(message: impl Into<String>, source: io::Error) -> Error {
        Error {
            message: message.into(),
            source: Some(source),
            usage: false,
        }
    }

    /// The OS error behind this one, if any.
    pub fn os_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Whether this process has the privileges the live gateway needs (effective user root; the
/// gateway needs CAP_NET_ADMIN for TUN and CAP_SYS_ADMIN for network namespaces).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
