//! Link directions: their queues, the frames on the wire, and what happens to a packet from the
//! moment it is queued until it reaches the far node.

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use taroc_core::variant::Variant;
use taroc_core::{Arrived, FrameKind, LinkEnd};

use super::{Event, LinkId, LinkStats, Network, NodeAgent, NodeId, Observer};
use crate::link::{ErrorProcess, LinkParams};
use crate::outage::{receiver_accepts, FlowId, FrameFate, OutageTracker};
use crate::queue::{Discipline, QueueState};

/// Header compression on a link, both directions.
#[derive(Debug, Clone)]
pub enum Codec {
    /// No codec and no framing byte: a wired link carrying IP packets.
    Wire,
    /// A real scheme: at each end of the link, a [`LinkEnd`] with the compressor of the
    /// direction it sends and the decompressor of the direction it receives.
    Real(Box<Variant>),
    /// The simulator-only IDEAL scheme: a compressed header of `header` bytes (the draft's: 4;
    /// plus the kind byte) that never loses its context.
    Ideal {
        /// Compressed header bytes per packet.
        header: usize,
    },
}

/// How one direction of a link codes its packets.
#[derive(Debug, Clone, Copy)]
enum Coding {
    /// IP packets as they are.
    Wire,
    /// The IDEAL scheme's header of `header` bytes.
    Ideal { header: usize },
    /// The compressor of the end `sending` (an index into the network's ends), the
    /// decompressor of the end `receiving`.
    Real { sending: usize, receiving: usize },
}

#[derive(Debug)]
struct Item {
    bytes: Vec<u8>,
    feedback: bool,
}

#[derive(Debug)]
struct InFlight {
    kind: FrameKind,
    bytes: Vec<u8>,
    corrupted: bool,
    feedback: bool,
    /// The flow of the packet the frame carries (none for feedback).
    flow: Option<FlowId>,
}

/// One direction of a link.
#[derive(Debug)]
pub struct LinkDir {
    /// Parameters.
    pub params: LinkParams,
    /// The node at the receiving end.
    pub to: NodeId,
    /// The opposite direction of the same link, if any (carries this direction's feedback).
    pub reverse: Option<LinkId>,
    /// Counters.
    pub stats: LinkStats,
    /// How long the flows of this direction stayed broken (see [`crate::outage`]).
    pub outages: OutageTracker<FlowId>,
    coding: Coding,
    queue: VecDeque<Item>,
    discipline: QueueState,
    pub(super) busy: bool,
    in_flight: VecDeque<InFlight>,
    errors: ErrorProcess,
    rng: ChaCha8Rng,
}

impl LinkDir {
    /// The end whose compressor sends on this direction, if it has a real scheme.
    pub(super) fn sending_end(&self) -> Option<usize> {
        match self.coding {
            Coding::Real { sending, .. } => Some(sending),
            _ => None,
        }
    }
}

impl<H: NodeAgent> Network<H> {
    /// Adds a link direction into node `to`, coded as `coding`. Each direction draws its bit
    /// errors from its own random stream (seed, link index), so adding traffic elsewhere does
    /// not shift them.
    fn push_link(&mut self, params: LinkParams, to: NodeId, coding: Coding) -> LinkId {
        let id = self.links.len();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(id as u64 + 1);
        self.links.push(LinkDir {
            params,
            to,
            reverse: None,
            stats: LinkStats::default(),
            outages: OutageTracker::new(),
            coding,
            queue: VecDeque::new(),
            discipline: QueueState::new(Discipline::DropTail, self.seed ^ (id as u64) << 32),
            busy: false,
            in_flight: VecDeque::new(),
            errors: ErrorProcess::new(params.errors),
            rng,
        });
        id
    }

    /// Adds a wired link direction into node `to`, with no codec and no reverse direction.
    pub fn add_link(&mut self, params: LinkParams, to: NodeId) -> LinkId {
        self.push_link(params, to, Coding::Wire)
    }

    /// Adds a link between nodes `a` and `b`: its direction `ab` (into `b`) then its direction
    /// `ba` (into `a`), each the other's reverse, both coded by `codec`. Returns the two
    /// directions' ids, `ab`'s first.
    pub fn add_duplex(
        &mut self,
        a: NodeId,
        b: NodeId,
        [ab, ba]: [LinkParams; 2],
        codec: Codec,
    ) -> [LinkId; 2] {
        let [to_b, to_a] = match codec {
            Codec::Wire => [Coding::Wire; 2],
            Codec::Ideal { header } => [Coding::Ideal { header }; 2],
            Codec::Real(variant) => {
                let (end_a, end_b) = (self.ends.len(), self.ends.len() + 1);
                self.ends.push(LinkEnd::of(&variant, &variant));
                self.ends.push(LinkEnd::of(&variant, &variant));
                [
                    Coding::Real {
                        sending: end_a,
                        receiving: end_b,
                    },
                    Coding::Real {
                        sending: end_b,
                        receiving: end_a,
                    },
                ]
            }
        };
        let ab = self.push_link(ab, b, to_b);
        let ba = self.push_link(ba, a, to_a);
        self.links[ab].reverse = Some(ba);
        self.links[ba].reverse = Some(ab);
        [ab, ba]
    }

    /// Sets the queue discipline of `link` (default: DropTail).
    pub fn set_discipline(&mut self, link: LinkId, discipline: Discipline) {
        let seed = self.seed ^ (link as u64) << 32;
        self.links[link].discipline = QueueState::new(discipline, seed);
    }

    /// Runs the decompressor reset of index `i` of [`Network::resets`].
    pub(super) fn reset(&mut self, i: usize) {
        let now = self.codec_time();
        let (l, fresh) = &mut self.resets[i];
        let link = &mut self.links[*l];
        if let (Coding::Real { receiving, .. }, Some(fresh)) = (link.coding, fresh.take()) {
            self.ends[receiving].replace_decompressor(*fresh);
        }
        link.outages.reset(now);
    }

    /// Queues `bytes` (a packet, or feedback if `feedback`) on link `l`, or drops it.
    pub(super) fn enqueue(
        &mut self,
        l: LinkId,
        bytes: Vec<u8>,
        feedback: bool,
        observer: &mut dyn Observer,
    ) {
        let link = &mut self.links[l];
        if !feedback {
            link.stats.offered += 1;
        }
        let queued = link.queue.len() + usize::from(link.busy);
        if !link
            .discipline
            .admit(&bytes, queued, link.params.queue_limit)
        {
            link.stats.queue_drops += 1;
            self.out.recycle(bytes);
            return;
        }
        link.queue.push_back(Item { bytes, feedback });
        if !link.busy {
            self.start_tx(l, observer);
        }
    }

    /// Starts sending the next queued packet of link `l`, if any: codes it into a frame and
    /// schedules the end of its transmission and its arrival.
    pub(super) fn start_tx(&mut self, l: LinkId, observer: &mut dyn Observer) {
        let now = self.now;
        let link = &mut self.links[l];
        let Some(item) = link.queue.pop_front() else {
            return;
        };
        link.discipline.dequeued(&item.bytes);
        // Outages are followed where a codec can break a flow.
        let real = matches!(link.coding, Coding::Real { .. });
        let flow = (!item.feedback && real).then(|| FlowId::of(&item.bytes));
        let (kind, bytes, wire_len) = if item.feedback {
            let len = item.bytes.len() + 1;
            (FrameKind::ContextState, item.bytes, len)
        } else {
            match link.coding {
                Coding::Wire => {
                    let len = item.bytes.len();
                    (FrameKind::Ip, item.bytes, len)
                }
                Coding::Ideal { header } => {
                    let headers = crate::tunnel::header_bytes(&item.bytes).unwrap_or(0);
                    link.stats.payload_bytes += (item.bytes.len() - headers) as u64;
                    let len = item.bytes.len() - headers.min(item.bytes.len())
                        + if headers > 0 { header } else { 0 }
                        + 1;
                    (FrameKind::CompressedTcp, item.bytes, len)
                }
                Coding::Real { sending, .. } => {
                    if let Some(headers) = crate::tunnel::header_bytes(&item.bytes) {
                        link.stats.payload_bytes += (item.bytes.len() - headers) as u64;
                    }
                    let mut frame = self.out.buffer();
                    let time = self.codec_time();
                    let kind = self.ends[sending].compress(time, &item.bytes, &mut frame);
                    let compressor = self.ends[sending].compressor();
                    observer.compressed(now, l, &item.bytes, compressor, self.first_sender());
                    self.out.recycle(item.bytes);
                    let len = frame.len() + 1;
                    (kind, frame, len)
                }
            }
        };
        let link = &mut self.links[l];
        let corrupted = link
            .errors
            .corrupts(wire_len as u64 * 8, now, &mut link.rng);
        link.stats.frames += 1;
        link.stats.wire_bytes += wire_len as u64;
        if item.feedback {
            link.stats.feedback_frames += 1;
            link.stats.feedback_bytes += wire_len as u64;
        }
        let tx = link.params.tx_time(wire_len);
        link.busy = true;
        link.in_flight.push_back(InFlight {
            kind,
            bytes,
            corrupted,
            feedback: item.feedback,
            flow,
        });
        let delay = link.params.delay_ns;
        self.queue.push(now + tx, Event::TxDone(l));
        self.queue.push(now + tx + delay, Event::Arrive(l));
    }

    /// The next frame of link `l` reaches its far end: lost to a bit error, feedback for the
    /// far end's compressor, or a packet (decompressed if the link has a codec) for the node.
    pub(super) fn arrive(&mut self, l: LinkId, observer: &mut dyn Observer) {
        let Some(frame) = self.links[l].in_flight.pop_front() else {
            return;
        };
        let now = self.codec_time();
        let receiving = match self.links[l].coding {
            Coding::Real { receiving, .. } => Some(receiving),
            _ => None,
        };
        if frame.corrupted {
            // The receiving framer sees a bad CRC (it cannot tell which kind of frame it was)
            // and tells the decompressor, as RFC 1144's framer does; VJ then tosses
            // COMPRESSED_TCP frames until an UNCOMPRESSED_TCP one, the other schemes ignore it.
            let link = &mut self.links[l];
            link.stats.corrupted += 1;
            if let Some(flow) = frame.flow {
                link.outages.frame(flow, now, FrameFate::Lost);
            }
            if let Some(end) = receiving {
                self.ends[end].link_error();
            }
            self.out.recycle(frame.bytes);
            return;
        }
        let to = self.links[l].to;
        let Some(end) = receiving else {
            if frame.feedback {
                self.out.recycle(frame.bytes);
            } else {
                self.deliver(to, frame.bytes, observer);
            }
            return;
        };
        let mut packet = std::mem::take(&mut self.packet);
        let arrived = self.ends[end].receive(now, frame.kind, &frame.bytes, &mut packet);
        self.out.recycle(frame.bytes);
        let Arrived::Packet(result) = arrived else {
            self.packet = packet;
            return;
        };
        let mut replies = Vec::new();
        while self.ends[end].take_feedback(&mut self.feedback) {
            let mut b = self.out.buffer();
            b.extend_from_slice(&self.feedback);
            replies.push(b);
        }
        if let Some(rev) = self.links[l].reverse {
            for bytes in replies {
                self.enqueue(rev, bytes, true, observer);
            }
        }
        let fate = match result {
            Ok(()) if receiver_accepts(crate::tunnel::innermost(&packet)) => FrameFate::Delivered,
            Ok(()) => FrameFate::Damaged,
            Err(reason) if reason.is_context_damage() => FrameFate::Damaged,
            Err(_) => FrameFate::Lost,
        };
        let flow = frame.flow.unwrap_or_else(|| FlowId::of(&[]));
        // The packets this frame confirmed go first, late: their refusals are undone.
        loop {
            let mut late = self.out.buffer();
            if self.ends[end].take_late(&mut late).is_none() {
                self.out.recycle(late);
                break;
            }
            if receiver_accepts(crate::tunnel::innermost(&late)) {
                let link = &mut self.links[l];
                link.stats.decompressor_drops = link.stats.decompressor_drops.saturating_sub(1);
                link.outages.delivered_late(flow);
                self.deliver(to, late, observer);
            } else {
                self.out.recycle(late);
            }
        }
        self.links[l].outages.frame(flow, now, fate);
        if result.is_err() {
            self.links[l].stats.decompressor_drops += 1;
            self.packet = packet;
            return;
        }
        let mut out = self.out.buffer();
        std::mem::swap(&mut out, &mut packet);
        self.packet = packet;
        self.deliver(to, out, observer);
    }
}
