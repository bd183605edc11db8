//! The data path of the emulated-link gateway, and the event loop that drives it from two TUN
//! devices.
//!
//! Direction 0 ("a->b") takes packets read from TUN A, compresses them, sends the frames over
//! its link, decompresses what arrives and writes the packets into TUN B; direction 1 ("b->a")
//! is the mirror image. Each direction has its own scheme; each end's two codecs are a
//! [`LinkEnd`]. A decompressor's feedback ([`taroc_core::Decompressor::take_feedback`]) travels
//! back over the *other* direction's link as a [`FrameKind::ContextState`] frame (meeting its
//! delay and losses) and is handed to the compressor it is for
//! ([`taroc_core::Compressor::handle_feedback`]). Compressors are told the time
//! ([`taroc_core::Compressor::set_time`]) before every packet.
//!
//! [`Pipeline`] is the data path without I/O (time and packets passed in, delivered packets
//! passed out), so tests drive it without TUN devices; [`run_emulated`] (module `event_loop`)
//! is the loop around it; module `drop_log` holds what it logs about refused packets.

mod drop_log;
mod event_loop;

use taroc_core::variant::Variant;
use taroc_core::{Arrived, DropReason, FrameKind, LinkEnd};

use crate::counters::Counters;
use crate::link::{scheme_for_link, Fate, Link, LinkConfig, LinkDrop};
use crate::Error;
use drop_log::log_incorrect;
use std::collections::VecDeque;
use std::time::Duration;

pub use drop_log::{field_name, DropLog};
pub(crate) use event_loop::Schedule;
pub use event_loop::{
    final_table, run_emulated, thread_cpu_time, wait_readable, Clock, Copy, DataPath, LoopOptions,
    RunReport,
};
use taroc_wire::ip::transport_checksum_ok;

/// Room for any packet a TUN read can return (IPv4 and IPv6 lengths are 16-bit).
pub const READ_BUFFER: usize = 65536;

/// Labels of the two directions of an emulated gateway.
pub const DIRECTIONS: [&str; 2] = ["a->b", "b->a"];

/// One direction's buffers and counters (its codecs are at the two ends: [`Pipeline`]'s nodes).
#[derive(Debug)]
struct Codec {
    verify_checksums: bool,
    tun_mtu: usize,
    last_incorrect_log: Option<u64>,
    frame: Vec<u8>,
    rebuilt: Vec<u8>,
    /// A packet delivered late ([`LinkEnd::take_late`]).
    late: Vec<u8>,
    /// The originals of the last packets the decompressor refused for context damage (the
    /// oracle's, with an original at hand), if its scheme delivers packets late: a late packet
    /// must be one of them. Buffers are reused.
    held: VecDeque<Vec<u8>>,
    /// Whether the scheme delivers packets late ([`taroc_core::Scheme::delivers_late`]).
    delivers_late: bool,
    feedback: Vec<u8>,
    counters: Counters,
}

/// The most originals of held or kept packets the oracle keeps: a decompressor keeps 128
/// frames refused for context damage, and holds at most one packet per context.
const HELD_KEPT: usize = 256;

#[derive(Debug)]
struct Direction {
    codec: Codec,
    link: Link,
    transparent: bool,
}

/// The settings of an emulated-link gateway.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// The scheme (with settings) of each direction: a->b, b->a.
    pub variants: [Variant; 2],
    /// The link of each direction.
    pub links: [LinkConfig; 2],
    /// The MTU of the TUN devices: longer packets are refused.
    pub tun_mtu: usize,
    /// Seed of the links' random streams.
    pub seed: u64,
    /// Whether a rebuilt TCP/UDP packet whose checksum fails is dropped (true) or delivered.
    pub verify_checksums: bool,
}

impl PipelineConfig {
    /// Checks the settings: the links', and that every packet fits the link uncompressed.
    pub fn check(&self) -> Result<(), Error> {
        if !(68..=65535).contains(&self.tun_mtu) {
            return Err(Error::new(format!(
                "TUN MTU {} is outside 68..=65535",
                self.tun_mtu
            )));
        }
        for link in &self.links {
            link.check()?;
            if link.mtu < self.tun_mtu {
                return Err(Error::new(format!(
                    "link MTU {} is below the TUN MTU {}: a packet the compressor cannot \
                     shrink would not fit the link",
                    link.mtu, self.tun_mtu
                )));
            }
        }
        Ok(())
    }
}

/// The emulated-link data path of both directions, without I/O.
#[derive(Debug)]
pub struct Pipeline {
    /// End A (sends direction 0, receives direction 1) and end B.
    nodes: [LinkEnd; 2],
    dirs: [Direction; 2],
    tun_mtu: usize,
    log: DropLog,
}

/// Splits a pair into (item `d`, the other one).
fn split<T>(pair: &mut [T; 2], d: usize) -> (&mut T, &mut T) {
    let (first, second) = pair.split_at_mut(1);
    if d == 0 {
        (&mut first[0], &mut second[0])
    } else {
        (&mut second[0], &mut first[0])
    }
}

/// The two ends of a frame on link `d`: the sending one (node `d`) and the receiving one.
struct Ends<'a> {
    sender: &'a mut LinkEnd,
    receiver: &'a mut LinkEnd,
}

/// Hands an intact frame that came off link `d` to its receiving end: feedback to its
/// compressor (the other direction's), anything else to its decompressor, then the oracle,
/// then the TUN.
#[allow(clippy::too_many_arguments)]
fn deliver<S: FnMut(usize, &[u8]) -> bool>(
    d: usize,
    now: u64,
    kind: FrameKind,
    frame: &[u8],
    original: Option<&[u8]>,
    ends: Ends<'_>,
    this: &mut Codec,
    other: &mut Codec,
    other_link: &mut Link,
    other_transparent: bool,
    sink: &mut S,
) {
    let result =
        match ends
            .receiver
            .receive(Duration::from_nanos(now), kind, frame, &mut this.rebuilt)
        {
            Arrived::Feedback => {
                other.counters.feedback_received += 1;
                return;
            }
            Arrived::Packet(result) => result,
        };
    while let Some(reason) = ends.receiver.take_late(&mut this.late) {
        deliver_late(d, now, reason, original.is_some(), this, sink);
    }
    match result {
        Err(reason) => {
            this.counters.count_refusal(reason);
            let may_go_late = this.delivers_late && reason.is_context_damage();
            if let (true, Some(original)) = (may_go_late, original) {
                let mut kept = match this.held.len() {
                    HELD_KEPT => this.held.pop_front().unwrap_or_default(),
                    _ => Vec::new(),
                };
                kept.clear();
                kept.extend_from_slice(original);
                this.held.push_back(kept);
            }
        }
        Ok(()) => {
            let c = &mut this.counters;
            let checksum = transport_checksum_ok(&this.rebuilt);
            // A packet the gateway drops still lets the decompressor's feedback go below.
            let (len, mtu) = (this.rebuilt.len(), this.tun_mtu);
            if c.count_rebuilt(len, mtu, checksum, this.verify_checksums) {
                if let Some(original) = original.filter(|o| *o != &this.rebuilt[..]) {
                    let last = &mut this.last_incorrect_log;
                    count_incorrect(c, last, d, now, checksum, original, &this.rebuilt);
                }
                if !sink(d, &this.rebuilt) {
                    c.tun_write_errors += 1;
                }
            }
        }
    }
    // Bounded: a decompressor has a little feedback per frame at most.
    for _ in 0..8 {
        if !ends.receiver.take_feedback(&mut this.feedback) {
            break;
        }
        this.counters.feedback_sent += 1;
        this.counters.feedback_bytes += this.feedback.len() as u64 + 1;
        if other_transparent {
            let at = Duration::from_nanos(now);
            let (feedback, scratch) = (&this.feedback, &mut this.rebuilt);
            ends.sender
                .receive(at, FrameKind::ContextState, feedback, scratch);
            this.counters.feedback_received += 1;
        } else if let Err(drop) = other_link.offer(now, &this.feedback, true) {
            other.counters.count_link_drop(drop);
        }
    }
}

/// Delivers a packet the last frame on link `d` confirmed (in `this.late`, refused before for
/// `reason`) to the TUN, first checked, if `checked`, against the originals of the packets
/// held.
fn deliver_late<S: FnMut(usize, &[u8]) -> bool>(
    d: usize,
    now: u64,
    reason: DropReason,
    checked: bool,
    this: &mut Codec,
    sink: &mut S,
) {
    let c = &mut this.counters;
    c.count_late(reason);
    let checksum = transport_checksum_ok(&this.late);
    if !c.count_rebuilt(
        this.late.len(),
        this.tun_mtu,
        checksum,
        this.verify_checksums,
    ) {
        return;
    }
    if checked {
        // A held original delivered is emptied in place (never matched again, its buffer
        // reused once it is the oldest).
        match this.held.iter_mut().rev().find(|h| **h == this.late) {
            Some(original) => original.clear(),
            None => {
                let last = &mut this.last_incorrect_log;
                count_incorrect(c, last, d, now, checksum, &[], &this.late);
            }
        }
    }
    if !sink(d, &this.late) {
        c.tun_write_errors += 1;
    }
}

/// Counts `packet`, delivered on link `d` at `now` though it is not `original` (empty when
/// the oracle has none), as incorrect, and undetected unless its `checksum` failed, and logs
/// it (at most once a second).
fn count_incorrect(
    c: &mut Counters,
    last_log: &mut Option<u64>,
    d: usize,
    now: u64,
    checksum: Option<bool>,
    original: &[u8],
    packet: &[u8],
) {
    c.incorrect_delivered += 1;
    if checksum != Some(false) {
        c.incorrect_undetected += 1;
    }
    log_incorrect(
        last_log,
        now,
        DIRECTIONS[d],
        original,
        packet,
        c.incorrect_delivered,
    );
}

/// Starts the transmission of every queued packet whose turn has come by `now`, compressing it
/// at that moment with `compress` (given the time, the packet and the frame to write; it passes
/// the compressor's sibling notes) into `frame` (feedback frames go as they are); counts in
/// `counters`, logs oversize frames as direction `label`.
pub(crate) fn pump<F>(
    link: &mut Link,
    mut compress: F,
    frame: &mut Vec<u8>,
    counters: &mut Counters,
    now: u64,
    label: &str,
    log: &mut DropLog,
) where
    F: FnMut(u64, &[u8], &mut Vec<u8>) -> FrameKind,
{
    while let Some(start) = link.ready(now) {
        let Some((bytes, feedback)) = link.head() else {
            break;
        };
        let result = if feedback {
            link.transmit(start, FrameKind::ContextState, None)
        } else {
            let len = bytes.len();
            let kind = compress(start, bytes, frame);
            counters.count_frame(kind, len, frame.len());
            link.transmit(start, kind, Some(frame))
        };
        if let Err(drop) = result {
            counters.count_link_drop(drop);
            if drop == LinkDrop::Oversize {
                let count = counters.oversize_frames;
                log.oversize(now, label, true, frame.len(), link.config().mtu, count);
            }
        }
    }
}

/// [`pump`] for direction `d` of the pipeline, whose compressor is `sender`'s.
fn pump_direction(
    direction: &mut Direction,
    sender: &mut LinkEnd,
    d: usize,
    now: u64,
    log: &mut DropLog,
) {
    let c = &mut direction.codec;
    let compress = |start: u64, packet: &[u8], frame: &mut Vec<u8>| {
        sender.compress(Duration::from_nanos(start), packet, frame)
    };
    pump(
        &mut direction.link,
        compress,
        &mut c.frame,
        &mut c.counters,
        now,
        DIRECTIONS[d],
        log,
    );
}

impl Pipeline {
    /// A gateway with fresh codecs and empty links. The settings must pass
    /// [`PipelineConfig::check`].
    pub fn new(config: &PipelineConfig) -> Result<Pipeline, Error> {
        config.check()?;
        let variants = [0, 1].map(|d| {
            scheme_for_link(&config.variants[d], config.links[d].reorder > 0.0, false)
                .map_err(Error::usage)
        });
        let variants = match variants {
            [Ok(forward), Ok(reverse)] => [forward, reverse],
            [Err(e), _] | [_, Err(e)] => return Err(e),
        };
        let direction = |d: usize| {
            let link = config.links[d].clone();
            let frame_capacity = link.mtu.max(config.tun_mtu) + 64;
            Direction {
                codec: Codec {
                    verify_checksums: config.verify_checksums,
                    tun_mtu: config.tun_mtu,
                    last_incorrect_log: None,
                    // Room for anything a scheme makes of a packet (its frames are never much
                    // longer than the packet), and for any packet it rebuilds.
                    frame: Vec::with_capacity(frame_capacity),
                    rebuilt: Vec::with_capacity(READ_BUFFER),
                    late: Vec::with_capacity(READ_BUFFER),
                    held: VecDeque::new(),
                    delivers_late: config.variants[d].scheme.delivers_late(),
                    feedback: Vec::with_capacity(READ_BUFFER),
                    counters: Counters::default(),
                },
                transparent: link.is_transparent(),
                link: Link::new(link, config.seed, d as u64, config.tun_mtu),
            }
        };
        Ok(Pipeline {
            nodes: [
                LinkEnd::of(&variants[0], &variants[1]),
                LinkEnd::of(&variants[1], &variants[0]),
            ],
            dirs: [direction(0), direction(1)],
            tun_mtu: config.tun_mtu,
            log: DropLog::default(),
        })
    }

    /// A packet read at time `now` (ns) from the TUN device at the start of direction `d`
    /// (0: A, 1: B). `sink(d, packet)` writes a delivered packet of direction `d` into the TUN
    /// device at its end, returning false if the device refused it.
    pub fn input<S: FnMut(usize, &[u8]) -> bool>(
        &mut self,
        d: usize,
        now: u64,
        packet: &[u8],
        sink: &mut S,
    ) {
        let (this, other) = split(&mut self.dirs, d);
        let (sender, receiver) = split(&mut self.nodes, d);
        let c = &mut this.codec;
        c.counters.packets_in += 1;
        c.counters.bytes_in += packet.len() as u64;
        if packet.len() > self.tun_mtu {
            c.counters.oversize_packets += 1;
            let count = c.counters.oversize_packets;
            self.log
                .oversize(now, DIRECTIONS[d], false, packet.len(), self.tun_mtu, count);
            return;
        }
        if !this.transparent {
            // A packet waits for the transmitter and is compressed when its turn comes.
            pump_direction(this, sender, d, now, &mut self.log);
            if let Err(drop) = this.link.offer(now, packet, false) {
                this.codec.counters.count_link_drop(drop);
            }
            pump_direction(this, sender, d, now, &mut self.log);
            return;
        }
        let kind = sender.compress(Duration::from_nanos(now), packet, &mut c.frame);
        c.counters.count_frame(kind, packet.len(), c.frame.len());
        if c.frame.len() > this.link.config().mtu {
            c.counters.count_link_drop(LinkDrop::Oversize);
            let count = c.counters.oversize_frames;
            let mtu = this.link.config().mtu;
            self.log
                .oversize(now, DIRECTIONS[d], true, c.frame.len(), mtu, count);
            return;
        }
        let frame = std::mem::take(&mut c.frame);
        deliver(
            d,
            now,
            kind,
            &frame,
            Some(packet),
            Ends { sender, receiver },
            c,
            &mut other.codec,
            &mut other.link,
            other.transparent,
            sink,
        );
        c.frame = frame;
    }

    /// Takes every frame due at `now` off both links and delivers it.
    pub fn poll<S: FnMut(usize, &[u8]) -> bool>(&mut self, now: u64, sink: &mut S) {
        // Feedback delivered on one link may put frames on the other: go round until both are
        // quiet (bounded: each round takes at least one frame off a link, and links are finite).
        for _ in 0..4 {
            let mut moved = false;
            for d in 0..2 {
                let (this, other) = split(&mut self.dirs, d);
                let (sender, receiver) = split(&mut self.nodes, d);
                pump_direction(this, sender, d, now, &mut self.log);
                let mut taken = 0;
                while let Some(arrival) = this.link.receive(now) {
                    moved = true;
                    taken += 1;
                    if arrival.fate != Fate::Intact {
                        this.codec.counters.count_link_fate(arrival.fate);
                    } else {
                        deliver(
                            d,
                            now,
                            arrival.kind,
                            arrival.frame,
                            arrival.original,
                            Ends {
                                sender: &mut *sender,
                                receiver: &mut *receiver,
                            },
                            &mut this.codec,
                            &mut other.codec,
                            &mut other.link,
                            other.transparent,
                            sink,
                        );
                    }
                    if taken >= 4096 {
                        break;
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }

    /// When the next frame is due on either link (ns), if any.
    pub fn next_event(&self) -> Option<u64> {
        match (
            self.dirs[0].link.next_event(),
            self.dirs[1].link.next_event(),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The counters of direction `d` (0: a->b, 1: b->a).
    pub fn counters(&self, d: usize) -> &Counters {
        &self.dirs[d].codec.counters
    }
}

impl DataPath for Pipeline {
    fn input<S: FnMut(usize, &[u8]) -> bool>(
        &mut self,
        d: usize,
        now: u64,
        packet: &[u8],
        sink: &mut S,
    ) {
        Pipeline::input(self, d, now, packet, sink)
    }
    fn poll<S: FnMut(usize, &[u8]) -> bool>(&mut self, now: u64, sink: &mut S) {
        Pipeline::poll(self, now, sink)
    }
    fn next_event(&self) -> Option<u64> {
        Pipeline::next_event(self)
    }
    fn counters(&self, d: usize) -> Counters {
        Pipeline::counters(self, d).clone()
    }
}

#[cfg(test)]
mod tests;
