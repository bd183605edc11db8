//! The live Linux gateway of taroc: real IP packets from TUN devices cross our header
//! compressors, a link, and our decompressors.
//!
//! Two link modes:
//! - **emulated** (one process, one host): two TUN devices, usually one per network namespace,
//!   joined by an in-process link with bandwidth, propagation delay, a DropTail queue, bit errors,
//!   random or bursty loss and reordering ([`link`]), deterministic from a seed. The gateway keeps
//!   each original packet beside its frame on the link, so it judges every delivery exactly
//!   (the `incorrect_delivered` counter).
//! - **UDP** (two hosts): one TUN device, frames travel in UDP datagrams to a peer gateway
//!   ([`udp`]); the same impairments can be applied on send. Every frame is authenticated
//!   under a pre-shared key unless `--insecure-no-auth`.
//!
//! Modules: [`tun`] opens TUN devices; [`netns`] enters network namespaces; [`link`] is the
//! emulated link; [`gateway`] is the data path (TUN → compress → link → decompress → TUN) and
//! its event loop; [`udp`] the UDP transport, [`auth`] its authentication, [`keyfile`] its keys,
//! [`socket`] its socket's buffer sizes; [`counters`] what the data path counts; [`signal`]
//! SIGINT/SIGTERM; [`harness`] builds two namespaces around the gateway and runs real kernel TCP
//! transfers ([`transfer`]) through it; [`mod@bench`] measures goodput and forwarding speed
//! (cells run a few at a time by [`jobs`]);
//! [`relay`] stands between two UDP gateways to [`disturb`] a transfer (gateway restarts, loss
//! bursts, frames [`forge`]d), and [`resume`] measures how each scheme recovers; [`args`] is the
//! `taroc gateway` command line (the gateway, `bench`, `transfer`, `resume`, `genkey`).
//!
//! ## Dependencies, and why
//! - `libc`: the TUN ioctls (`TUNSETIFF`, `SIOCSIFMTU`, `SIOCSIFFLAGS`), `setns`, `ppoll`,
//!   `sigaction`, thread CPU time and a TCP socket's unsent bytes (`SIOCOUTQNSD`). A TUN crate
//!   would wrap the same two ioctls and bring an async runtime or a builder we do not need; the
//!   `unsafe` stays in six small modules ([`tun`], [`netns`], [`signal`], [`gateway`]'s
//!   `ppoll`/CPU clock, [`socket`]'s `setsockopt`/`getsockopt`, [`transfer`]'s `SIOCOUTQNSD`),
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
pub mod bench;
pub mod commands;
pub mod config_file;
pub mod counters;
pub mod disturb;
pub mod echo;
pub mod endpoint;
pub mod ethernet;
pub mod forge;
pub mod gateway;
pub mod harness;
pub mod jobs;
pub mod keyfile;
pub mod line_emulator;
pub mod link;
pub mod netns;
pub mod relay;
pub mod resume;
pub mod serial;
pub mod signal;
pub mod socket;
pub mod transfer;
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
