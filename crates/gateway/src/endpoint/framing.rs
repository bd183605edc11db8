//! How link frames carry codec frames: bare (`--insecure-no-auth`) or authenticated
//! ([`crate::auth`]), and the sending of frames and hellos with their counts.

use taroc_core::FrameKind;

use super::{decode_frame, encode_frame};
use crate::auth::{Opened, Session};
use crate::counters::{Counters, Rejection};

/// How datagrams carry frames.
#[derive(Debug)]
pub(super) enum Framing {
    /// A kind byte and the frame; only the source address is checked.
    Insecure,
    /// [`crate::auth`]'s framing.
    Authenticated(Box<Session>),
}

impl Framing {
    pub(super) fn seal(&mut self, now: u64, kind: FrameKind, frame: &[u8], out: &mut Vec<u8>) {
        match self {
            Framing::Insecure => encode_frame(kind, frame, out),
            Framing::Authenticated(session) => session.sealer.seal(now, kind, frame, out),
        }
    }

    /// The sender id of the peer's run whose frames are taken (authenticated link; 0 before
    /// any, and always without authentication).
    pub(super) fn peer_run(&self) -> u64 {
        match self {
            Framing::Insecure => 0,
            Framing::Authenticated(session) => session.opener.peer_id().unwrap_or(0),
        }
    }

    /// When a hello owed to the peer may go (ns), if one is (authenticated link only).
    pub(super) fn hello_due(&self) -> Option<u64> {
        match self {
            Framing::Insecure => None,
            Framing::Authenticated(session) => session.hello_due(),
        }
    }

    /// What `datagram` carries, and whether to send the peer a hello ([`Session::open`]).
    pub(super) fn open<'a>(
        &mut self,
        from_peer: bool,
        max_frame: usize,
        datagram: &'a [u8],
    ) -> (Result<Opened<'a>, Rejection>, bool) {
        match self {
            Framing::Authenticated(session) => session.open(datagram),
            Framing::Insecure => {
                if !from_peer {
                    return (Err(Rejection::Foreign), false);
                }
                let Some((kind, frame)) = decode_frame(datagram) else {
                    return (Err(Rejection::Malformed), false);
                };
                if frame.len() > max_frame {
                    return (Err(Rejection::Oversize), false);
                }
                (Ok(Opened::Frame(kind, frame)), false)
            }
        }
    }
}

/// Sends the hello owed to the peer, if one is (authenticated link only, at most one per
/// [`crate::auth::HELLO_EVERY`]), counting in `counters` (the send direction's).
pub(super) fn send_hello<S: FnMut(&[u8]) -> bool>(
    framing: &mut Framing,
    datagram: &mut Vec<u8>,
    counters: &mut Counters,
    now: u64,
    send: &mut S,
) {
    let Framing::Authenticated(session) = framing else {
        return;
    };
    if !session.hello(now, datagram) {
        return;
    }
    counters.hellos_sent += 1;
    counters.datagrams_sent += 1;
    counters.auth_bytes += (datagram.len() - 1) as u64;
    if !send(datagram) {
        counters.send_errors += 1;
    }
}

/// Seals `frame` into `datagram` and sends it, counting in `counters` (the send direction's).
#[allow(clippy::too_many_arguments)]
pub(super) fn send_frame<S: FnMut(&[u8]) -> bool>(
    framing: &mut Framing,
    datagram: &mut Vec<u8>,
    counters: &mut Counters,
    now: u64,
    kind: FrameKind,
    frame: &[u8],
    send: &mut S,
) {
    framing.seal(now, kind, frame, datagram);
    counters.datagrams_sent += 1;
    counters.auth_bytes += (datagram.len() - frame.len() - 1) as u64;
    if !send(datagram) {
        counters.send_errors += 1;
    }
}
