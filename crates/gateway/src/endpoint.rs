//! The data path of one gateway, whatever its transport: one TUN device, and link frames to
//! and from a peer gateway.
//!
//! Every frame is authenticated by default ([`crate::auth`]: kind byte, sender id or counter
//! bits, the frame, a tag under the pre-shared key), and only an authentic, fresh frame of the
//! peer is accepted. Without authentication (`--insecure-no-auth`) a link frame is one byte of
//! [`FrameKind`] ([`FrameKind::to_byte`]) and the frame, accepted if the transport says it came
//! from the peer. Either way a refused frame reaches neither the decompressor nor the
//! compressor's feedback input, and is counted by reason ([`Counters::rejected`]), as is one
//! longer than the link MTU plus the framing.
//!
//! The "send" direction compresses packets read from the TUN device and sends their frames to
//! the peer, through an emulated link ([`crate::link`]) when impairments are configured, so a
//! real link can be made worse on purpose; the "receive" direction decompresses the peer's
//! frames and writes the packets into the TUN device (not those longer than the TUN MTU).
//! CONTEXT_STATE frames from the peer go to our compressor; our decompressor's feedback goes to
//! the peer (through the same impaired send path). The codecs are one [`LinkEnd`].
//!
//! [`Endpoint`] is this data path without I/O (tests and benchmarks drive it); the transports
//! ([`crate::transport`]) move its link frames: UDP datagrams, frames on a serial line.
//!
//! There is no oracle here (the original packets are on the other host): the receive direction
//! counts delivered TCP/UDP packets whose checksum fails instead (`checksum_failed`), the check
//! the receiving host's stack will make.

use std::time::Duration;

use taroc_core::variant::Variant;
use taroc_core::{Arrived, FrameKind, LinkEnd};

use crate::auth::{AuthConfig, Opened, Session, LONG_HEADER};
use crate::counters::{Counters, Rejection};
use crate::gateway::{self, DropLog, READ_BUFFER};
use crate::link::{scheme_for_link, Fate, Link, LinkConfig, LinkDrop};
use crate::Error;
use taroc_wire::ip::transport_checksum_ok;

mod framing;

use framing::{send_frame, send_hello, Framing};

/// Labels of the two directions of a gateway with a peer.
pub const DIRECTIONS: [&str; 2] = ["send", "receive"];

/// How long an authenticated gateway, at start, waits to hear the peer before it reads its TUN
/// device, ns: frames sent before then could not echo the peer and would be refused as stale;
/// meanwhile the kernel queues the packets, and the hello goes again every
/// [`crate::auth::HELLO_EVERY`].
pub const START_WAIT: u64 = 250_000_000;

/// Writes a frame as an unauthenticated datagram: its kind byte, then its bytes.
pub fn encode_frame(kind: FrameKind, frame: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(kind.to_byte());
    out.extend_from_slice(frame);
}

/// Reads an unauthenticated datagram as a frame, if its first byte is a frame kind.
pub fn decode_frame(datagram: &[u8]) -> Option<(FrameKind, &[u8])> {
    let (&byte, frame) = datagram.split_first()?;
    Some((FrameKind::from_byte(byte)?, frame))
}

/// The settings of one gateway's data path, whatever its transport.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// The scheme we compress with (the peer must decompress with it), and the one the peer
    /// compresses with (we decompress with it).
    pub variants: [Variant; 2],
    /// Impairments applied to what we send (a transparent link sends at once).
    pub link: LinkConfig,
    /// The TUN MTU: longer packets are refused, read or rebuilt.
    pub tun_mtu: usize,
    /// Seed of the impairments' random streams.
    pub seed: u64,
    /// Whether a rebuilt TCP/UDP packet whose checksum fails is dropped (true) or delivered.
    pub verify_checksums: bool,
    /// The key and tag length every frame is authenticated with; `None` sends and accepts
    /// frames without authentication (`--insecure-no-auth`).
    pub auth: Option<AuthConfig>,
    /// Whether the transport may reorder frames (a path across a network does, a serial line
    /// does not): the schemes then run as [`crate::link::scheme_for_link`] makes them.
    pub may_reorder: bool,
}

impl EndpointConfig {
    /// The sender id and first counter of a new run: with authentication, 64 random bits and
    /// the wall clock in ns since the UNIX epoch ([`crate::auth`]); without, both unused (0).
    pub fn new_run(&self) -> Result<(u64, u64), Error> {
        match self.auth {
            Some(_) => Ok((crate::keyfile::random_u64()?, crate::udp::wall_clock_ns()?)),
            None => Ok((0, 0)),
        }
    }

    /// Checks the settings; what is wrong is a usage error ([`Error::usage`]): the settings
    /// come from the command line.
    pub fn check(&self) -> Result<(), Error> {
        self.link.check()?;
        if self.link.mtu < self.tun_mtu {
            return Err(Error::usage(format!(
                "link MTU {} is below the TUN MTU {}: a packet the compressor cannot shrink \
                 would not fit the link",
                self.link.mtu, self.tun_mtu
            )));
        }
        if let Some(auth) = &self.auth {
            auth.check().map_err(Error::usage)?;
        }
        Ok(())
    }
}

/// The data path of one gateway, without I/O: packets from the TUN device in, link frames
/// out through `send`; link frames in, packets out through `write`. Both return false when the
/// transport or device refused.
#[derive(Debug)]
pub struct Endpoint {
    variants: [Variant; 2],
    /// This end's codecs: the compressor of what we send, the decompressor of what we receive.
    codecs: LinkEnd,
    link: Link,
    transparent: bool,
    framing: Framing,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
    /// A packet delivered late ([`LinkEnd::take_late`]).
    late: Vec<u8>,
    feedback: Vec<u8>,
    datagram: Vec<u8>,
    counters: [Counters; 2],
    log: DropLog,
    tun_mtu: usize,
    link_mtu: usize,
    verify_checksums: bool,
}

impl Endpoint {
    /// A gateway with fresh codecs. With authentication, its frames carry sender id
    /// `sender_id` (random per start) and counters from `first_counter` (the wall clock at
    /// start, ns since the UNIX epoch); without, both are unused.
    pub fn new(
        config: &EndpointConfig,
        sender_id: u64,
        first_counter: u64,
    ) -> Result<Endpoint, Error> {
        config.check()?;
        // Reordering configured (--reorder), or possible on the transport (a network path).
        let configured = config.link.reorder > 0.0;
        let network = config.may_reorder;
        let variants = [
            scheme_for_link(&config.variants[0], configured, network).map_err(Error::usage)?,
            scheme_for_link(&config.variants[1], configured, network).map_err(Error::usage)?,
        ];
        let link_mtu = config.link.mtu;
        let framing = match &config.auth {
            None => Framing::Insecure,
            Some(auth) => Framing::Authenticated(Box::new(Session::new(
                auth,
                sender_id,
                first_counter,
                link_mtu,
            ))),
        };
        Ok(Endpoint {
            codecs: LinkEnd::of(&variants[0], &variants[1]),
            variants,
            transparent: config.link.is_transparent(),
            link: Link::new(config.link.clone(), config.seed, 0, config.tun_mtu),
            framing,
            frame: Vec::with_capacity(link_mtu.max(config.tun_mtu) + 64),
            rebuilt: Vec::with_capacity(READ_BUFFER),
            late: Vec::with_capacity(READ_BUFFER),
            feedback: Vec::with_capacity(READ_BUFFER),
            datagram: Vec::with_capacity(READ_BUFFER + LONG_HEADER + 16),
            counters: [Counters::default(), Counters::default()],
            log: DropLog::default(),
            tun_mtu: config.tun_mtu,
            link_mtu,
            verify_checksums: config.verify_checksums,
        })
    }

    /// Announces this gateway to the peer (authenticated link only): a hello, so that the
    /// peer tells us its sender id before our first frame needs it. Call at start, and again
    /// while waiting to hear the peer (at most one hello per [`crate::auth::HELLO_EVERY`]).
    pub fn start<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, send: &mut S) {
        if let Framing::Authenticated(session) = &mut self.framing {
            session.owe_hello();
        }
        self.send_hello(now, send);
    }

    /// Sends the hello owed to the peer, if one is and may go by `now`.
    fn send_hello<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, send: &mut S) {
        send_hello(
            &mut self.framing,
            &mut self.datagram,
            &mut self.counters[0],
            now,
            send,
        );
    }

    /// Whether this gateway has heard the peer: with authentication, an authentic long frame
    /// of it came, so our frames echo it ([`crate::auth`]); always without.
    pub fn ready(&self) -> bool {
        match &self.framing {
            Framing::Insecure => true,
            Framing::Authenticated(session) => session.opener.echo() != 0,
        }
    }

    /// The counters of the send and receive directions.
    pub fn counters(&self) -> &[Counters; 2] {
        &self.counters
    }

    /// When the emulated link next has something to do, or an owed hello may go (ns), if
    /// ever.
    pub fn next_event(&self) -> Option<u64> {
        match (self.link.next_event(), self.framing.hello_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Counts an error the socket reported on receiving: an ICMP error of an earlier send
    /// (the peer not up yet), so counted as a send error.
    pub fn count_receive_error(&mut self) {
        self.counters[0].send_errors += 1;
    }

    /// Counts something the transport refused before it became a link frame.
    pub fn count_rejected(&mut self, reason: Rejection) {
        self.counters[1].rejected.count(reason);
    }

    /// The transport received a damaged frame (its check failed) in place of the next one:
    /// counted, and the decompressor is told ([`LinkEnd::link_error`]).
    pub fn link_error(&mut self) {
        self.counters[1].rejected.count(Rejection::BadCheck);
        self.codecs.link_error();
    }

    /// Starts what the link's transmitter may start by `now` (compressing packets then).
    fn pump(&mut self, now: u64) {
        let codecs = &mut self.codecs;
        let compress = |start: u64, packet: &[u8], frame: &mut Vec<u8>| {
            codecs.compress(Duration::from_nanos(start), packet, frame)
        };
        gateway::pump(
            &mut self.link,
            compress,
            &mut self.frame,
            &mut self.counters[0],
            now,
            DIRECTIONS[0],
            &mut self.log,
        );
    }

    /// A packet read from the TUN device at `now` (ns).
    pub fn packet<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, packet: &[u8], send: &mut S) {
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
        let kind = self
            .codecs
            .compress(Duration::from_nanos(now), packet, &mut self.frame);
        let c = &mut self.counters[0];
        c.count_frame(kind, packet.len(), self.frame.len());
        if self.frame.len() > self.link_mtu {
            c.count_link_drop(LinkDrop::Oversize);
            let count = c.oversize_frames;
            self.log.oversize(
                now,
                DIRECTIONS[0],
                true,
                self.frame.len(),
                self.link_mtu,
                count,
            );
            return;
        }
        send_frame(
            &mut self.framing,
            &mut self.datagram,
            c,
            now,
            kind,
            &self.frame,
            send,
        );
    }

    /// A run of the peer became the peer: an authentic long frame of it that echoes this run of
    /// ours and, if we had a peer, is fresher than any frame of the run we knew. A forger cannot
    /// cause this, and neither can a replayer: no frame made before this run of ours echoes it,
    /// and a frame of an earlier run of the peer is not fresher than the run we know.
    ///
    /// If it replaces a run we knew (the peer restarted and lost its codecs' state), both codecs
    /// start afresh. Our compressor's contexts are unknown to the new run's decompressor, so
    /// every flow's next packet would be refused and lost (and TCP, which backs off while the
    /// peer is down, may send that packet only after a doubled retransmission timeout); a fresh
    /// compressor sends it as a context set-up instead. Our decompressor's contexts are of the
    /// old run's compressor, and it has taken no frame of the new run yet. The first peer of
    /// this run of ours leaves the codecs alone: our packets may have gone to it already (it
    /// takes them once they echo it), and its answers may be coded against what our codecs
    /// learnt from them (a SYN-ACK against our SYN's mirror).
    fn take_up_peer_run(&mut self, replaces: bool) {
        if replaces {
            self.codecs = LinkEnd::of(&self.variants[0], &self.variants[1]);
        }
        self.counters[1].peer_runs += 1;
    }

    /// A link frame received at `now` (ns); `from_peer` is false if the transport saw it come
    /// from elsewhere than the peer (another UDP address): without authentication it is then
    /// refused, with it counted (`other_source`).
    pub fn datagram<S: FnMut(&[u8]) -> bool, W: FnMut(&[u8]) -> bool>(
        &mut self,
        now: u64,
        from_peer: bool,
        datagram: &[u8],
        send: &mut S,
        write: &mut W,
    ) {
        let heard = self.framing.peer_run();
        let (opened, hello) = self.framing.open(from_peer, self.link_mtu, datagram);
        if hello {
            self.send_hello(now, send);
        }
        if self.framing.peer_run() != heard {
            self.take_up_peer_run(heard != 0);
        }
        let (kind, frame) = match opened {
            Ok(Opened::Frame(kind, frame)) => (kind, frame),
            Ok(Opened::Hello) => {
                self.counters[1].hellos_received += 1;
                return;
            }
            Err(reason) => {
                self.counters[1].rejected.count(reason);
                return;
            }
        };
        if !from_peer {
            self.counters[1].other_source += 1;
        }
        let now_d = Duration::from_nanos(now);
        let result = match self.codecs.receive(now_d, kind, frame, &mut self.rebuilt) {
            Arrived::Feedback => {
                self.counters[0].feedback_received += 1;
                return;
            }
            Arrived::Packet(result) => result,
        };
        let c = &mut self.counters[1];
        // The packets this frame confirmed go first, late.
        while let Some(reason) = self.codecs.take_late(&mut self.late) {
            c.count_late(reason);
            let checksum = transport_checksum_ok(&self.late);
            if c.count_rebuilt(
                self.late.len(),
                self.tun_mtu,
                checksum,
                self.verify_checksums,
            ) && !write(&self.late)
            {
                c.tun_write_errors += 1;
            }
        }
        match result {
            Err(reason) => c.count_refusal(reason),
            Ok(()) => {
                let checksum = transport_checksum_ok(&self.rebuilt);
                let len = self.rebuilt.len();
                if c.count_rebuilt(len, self.tun_mtu, checksum, self.verify_checksums)
                    && !write(&self.rebuilt)
                {
                    c.tun_write_errors += 1;
                }
            }
        }
        // Bounded: a decompressor has a little feedback per frame at most.
        for _ in 0..8 {
            if !self.codecs.take_feedback(&mut self.feedback) {
                break;
            }
            self.counters[1].feedback_sent += 1;
            self.counters[1].feedback_bytes += self.feedback.len() as u64 + 1;
            if self.transparent {
                send_frame(
                    &mut self.framing,
                    &mut self.datagram,
                    &mut self.counters[0],
                    now,
                    FrameKind::ContextState,
                    &self.feedback,
                    send,
                );
            } else if let Err(drop) = self.link.offer(now, &self.feedback, true) {
                self.counters[0].count_link_drop(drop);
            }
        }
        self.pump(now);
    }

    /// Sends what the emulated link has let through by `now`, and the hello owed to the peer
    /// if it may go.
    pub fn poll<S: FnMut(&[u8]) -> bool>(&mut self, now: u64, send: &mut S) {
        self.send_hello(now, send);
        self.pump(now);
        for _ in 0..4096 {
            let Some(arrival) = self.link.receive(now) else {
                break;
            };
            if arrival.fate != Fate::Intact {
                self.counters[0].count_link_fate(arrival.fate);
                continue;
            }
            send_frame(
                &mut self.framing,
                &mut self.datagram,
                &mut self.counters[0],
                now,
                arrival.kind,
                arrival.frame,
                send,
            );
        }
    }
}

/// Introduces two endpoints to each other without I/O, as their hellos at start do over a
/// link (for tests and benchmarks that carry datagrams between endpoints themselves). Each
/// answers the other's first hello with one that echoes it.
pub fn introduce(mut ends: [&mut Endpoint; 2], now: u64) {
    let mut to: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    for (i, end) in ends.iter_mut().enumerate() {
        end.start(now, &mut |d: &[u8]| {
            to[1 - i].push(d.to_vec());
            true
        });
    }
    for _ in 0..4 {
        for (i, end) in ends.iter_mut().enumerate() {
            for datagram in std::mem::take(&mut to[i]) {
                let mut send = |d: &[u8]| {
                    to[1 - i].push(d.to_vec());
                    true
                };
                end.datagram(now, true, &datagram, &mut send, &mut |_: &[u8]| true);
            }
        }
    }
}

#[cfg(test)]
mod tests;
