//! Nodes, links with per-direction header compression, and the event loop.
//!
//! A link direction carries *frames*. Each frame costs its bytes plus one byte of frame kind on
//! the wire (the link framing; see `taroc_core::FrameKind::to_byte`); links without a codec
//! (wired links) carry IP packets as they are, with no extra byte. Packets are compressed when
//! they start transmission (so DropTail drops happen before the compressor sees a packet), a frame
//! hit by a bit error is discarded by the receiving link layer (which signals the receiving
//! decompressor with `Decompressor::link_error`; queue drops are not signalled: nothing of
//! them reaches the receiver), and intact frames go through the
//! decompressor, whose feedback (CONTEXT_STATE) crosses the reverse direction of the same link
//! as frames of its own.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use taroc_core::codec::pass_sibling_notes;
use taroc_core::taroc::packet::TcpIpPacket;
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, FrameKind};

use crate::event::{EventQueue, Time};
use crate::link::{ErrorProcess, LinkParams};
use crate::outage::{receiver_accepts, FlowId, FrameFate, OutageTracker};
use crate::queue::{Discipline, QueueState};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::segment;
use crate::tcp::sender::TcpSender;
use crate::tcp::Outbox;

mod stats;

pub use stats::{EstimateTrace, LinkStats, TrackerPoint};

/// Index of a node.
pub type NodeId = usize;
/// Index of a link direction.
pub type LinkId = usize;

/// Header compression on one link direction.
#[derive(Debug)]
pub enum Codec {
    /// No codec and no framing byte: a wired link carrying IP packets.
    Wire,
    /// A real scheme: the compressor at the sending end, the decompressor at the receiving end.
    Real {
        /// The compressor.
        compressor: Box<AnyCompressor>,
        /// The decompressor.
        decompressor: Box<AnyDecompressor>,
    },
    /// The simulator-only IDEAL scheme: a compressed header of `header` bytes (the draft's: 4;
    /// plus the kind byte) that never loses its context.
    Ideal {
        /// Compressed header bytes per packet.
        header: usize,
    },
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
    /// The codec.
    pub codec: Codec,
    /// Counters.
    pub stats: LinkStats,
    /// TAROC's estimates after every packet it compressed and their accuracy, if asked for
    /// (see [`Network::trace_estimates`]).
    pub estimates: Option<EstimateTrace>,
    /// How long the flows of this direction stayed broken (see [`crate::outage`]).
    pub outages: OutageTracker<FlowId>,
    queue: VecDeque<Item>,
    discipline: QueueState,
    busy: bool,
    in_flight: VecDeque<InFlight>,
    errors: ErrorProcess,
    rng: ChaCha8Rng,
}

/// What runs on a node.
#[derive(Debug)]
pub enum Agent {
    /// Nothing: a router.
    None,
    /// A bulk TCP sender.
    Sender(Box<TcpSender>),
    /// A TCP receiver.
    Receiver(Box<TcpReceiver>),
    /// Any other agent (e.g. [`crate::decoupling`]'s), behind [`NodeAgent`].
    Custom(Box<dyn NodeAgent>),
}

/// An agent the network drives without knowing it: packets for its node, its timer, its start.
/// Recover the concrete agent after a run by upcasting to `dyn Any` and downcasting.
pub trait NodeAgent: std::fmt::Debug + std::any::Any {
    /// Starts the agent (see [`Network::start_agent`]).
    fn start(&mut self, now: Time, out: &mut Outbox);
    /// Handles a packet addressed to the node.
    fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox);
    /// Handles the timer set by [`NodeAgent::deadline`] (may be called early or late).
    fn on_timer(&mut self, now: Time, out: &mut Outbox);
    /// When the agent next wants [`NodeAgent::on_timer`], if at all.
    fn deadline(&self) -> Option<Time>;
}

/// A node: an address, routes, and perhaps a TCP agent.
#[derive(Debug)]
pub struct Node {
    /// The node's address.
    pub addr: IpAddr,
    /// Routes: destination address -> outgoing link.
    pub routes: Vec<(IpAddr, LinkId)>,
    /// The agent.
    pub agent: Agent,
    timer_pending: Option<Time>,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    TxDone(LinkId),
    Arrive(LinkId),
    Timer(NodeId),
    Start(NodeId),
    /// The decompressor reset of this index in [`Network::resets`].
    Reset(usize),
}

/// A network and its event loop.
#[derive(Debug)]
pub struct Network {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Link directions.
    pub links: Vec<LinkDir>,
    queue: EventQueue<Event>,
    now: Time,
    seed: u64,
    out: Outbox,
    packet: Vec<u8>,
    feedback: Vec<u8>,
    /// Packets dropped for lack of a route.
    pub unroutable: u64,
    /// Whether the hosts' agents talk through an IP-in-IP tunnel ([`crate::tunnel`]).
    pub tunnel: bool,
    /// Scheduled decompressor resets: the link and its fresh decompressor (taken when used).
    resets: Vec<(LinkId, Option<Box<AnyDecompressor>>)>,
}

impl Network {
    /// An empty network whose random streams derive from `seed`.
    pub fn new(seed: u64) -> Network {
        Network {
            nodes: Vec::new(),
            links: Vec::new(),
            queue: EventQueue::new(),
            now: 0,
            seed,
            out: Outbox::default(),
            packet: Vec::with_capacity(2048),
            feedback: Vec::with_capacity(256),
            unroutable: 0,
            tunnel: false,
            resets: Vec::new(),
        }
    }

    /// Adds a node.
    pub fn add_node(&mut self, addr: IpAddr, agent: Agent) -> NodeId {
        self.nodes.push(Node {
            addr,
            routes: Vec::new(),
            agent,
            timer_pending: None,
        });
        self.nodes.len() - 1
    }

    /// Adds a link direction into node `to`. Each direction draws its bit errors from its own
    /// random stream (seed, link index), so adding traffic elsewhere does not shift them.
    pub fn add_link(&mut self, params: LinkParams, to: NodeId, codec: Codec) -> LinkId {
        let id = self.links.len();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(id as u64 + 1);
        self.links.push(LinkDir {
            params,
            to,
            reverse: None,
            codec,
            stats: LinkStats::default(),
            estimates: None,
            outages: OutageTracker::new(),
            queue: VecDeque::new(),
            discipline: QueueState::new(Discipline::DropTail, self.seed ^ (id as u64) << 32),
            busy: false,
            in_flight: VecDeque::new(),
            errors: ErrorProcess::new(params.errors),
            rng,
        });
        id
    }

    /// Declares `a` and `b` the two directions of one link (feedback of each crosses the other).
    pub fn pair(&mut self, a: LinkId, b: LinkId) {
        self.links[a].reverse = Some(b);
        self.links[b].reverse = Some(a);
    }

    /// Records TAROC's congestion-window estimates after every packet the compressor of `link`
    /// takes (nothing is recorded for other schemes): their accuracy against the network's
    /// sender over the whole run, and the points themselves until `until` (see
    /// [`EstimateTrace`]).
    pub fn trace_estimates(&mut self, link: LinkId, until: Time) {
        self.links[link].estimates = Some(EstimateTrace::new(until));
    }

    /// Sets the queue discipline of `link` (default: DropTail).
    pub fn set_discipline(&mut self, link: LinkId, discipline: Discipline) {
        let seed = self.seed ^ (link as u64) << 32;
        self.links[link].discipline = QueueState::new(discipline, seed);
    }

    /// Routes packets for `dst` leaving `node` over `link`.
    pub fn route(&mut self, node: NodeId, dst: IpAddr, link: LinkId) {
        self.nodes[node].routes.push((dst, link));
    }

    /// Replaces the decompressor of `link` by `fresh` at `at`, as when the receiving peer
    /// restarts, and counts from then how long its flows stay broken ([`crate::outage`]). Links
    /// without a real codec only mark the reset (nothing can break).
    pub fn schedule_decompressor_reset(&mut self, link: LinkId, at: Time, fresh: AnyDecompressor) {
        self.resets.push((link, Some(Box::new(fresh))));
        self.queue.push(at, Event::Reset(self.resets.len() - 1));
    }

    /// Schedules the agent of `node` to start at `at`.
    pub fn start_agent(&mut self, node: NodeId, at: Time) {
        self.queue.push(at, Event::Start(node));
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.queue.processed()
    }

    /// Runs until simulated time `until` (events at exactly `until` are not run).
    pub fn run_until(&mut self, until: Time) {
        while let Some(t) = self.queue.peek_time() {
            if t >= until {
                break;
            }
            let Some((t, event)) = self.queue.pop() else {
                break;
            };
            self.now = t;
            match event {
                Event::TxDone(l) => {
                    self.links[l].busy = false;
                    self.start_tx(l);
                }
                Event::Arrive(l) => self.arrive(l),
                Event::Timer(n) => self.timer(n),
                Event::Reset(i) => {
                    let (l, fresh) = &mut self.resets[i];
                    let link = &mut self.links[*l];
                    if let (Codec::Real { decompressor, .. }, Some(fresh)) =
                        (&mut link.codec, fresh.take())
                    {
                        *decompressor = fresh;
                    }
                    link.outages.reset(Duration::from_nanos(t));
                }
                Event::Start(n) => {
                    match &mut self.nodes[n].agent {
                        Agent::Sender(s) => s.start(t, &mut self.out),
                        Agent::Custom(a) => a.start(t, &mut self.out),
                        _ => {}
                    }
                    self.after_agent(n);
                }
            }
        }
        self.now = self.now.max(until);
    }

    fn timer(&mut self, n: NodeId) {
        let now = self.now;
        let node = &mut self.nodes[n];
        if node.timer_pending == Some(now) {
            node.timer_pending = None;
        }
        match &mut node.agent {
            Agent::Sender(s) => s.on_timer(now, &mut self.out),
            Agent::Receiver(r) => r.on_timer(now, &mut self.out),
            Agent::Custom(a) => a.on_timer(now, &mut self.out),
            Agent::None => {}
        }
        self.after_agent(n);
    }

    /// Sends what the agent of `n` produced and (re)schedules its timer.
    fn after_agent(&mut self, n: NodeId) {
        while !self.out.packets.is_empty() {
            let mut packet = self.out.packets.remove(0);
            if self.tunnel {
                let mut outer = self.out.buffer();
                if crate::tunnel::encapsulate(self.nodes[n].addr, &packet, &mut outer) {
                    std::mem::swap(&mut packet, &mut outer);
                }
                self.out.recycle(outer);
            }
            self.forward(n, packet);
        }
        let deadline = match &self.nodes[n].agent {
            Agent::Sender(s) => s.deadline(),
            Agent::Receiver(r) => r.deadline(),
            Agent::Custom(a) => a.deadline(),
            Agent::None => None,
        };
        if let Some(d) = deadline {
            let node = &mut self.nodes[n];
            if node.timer_pending.is_none_or(|p| d < p) {
                node.timer_pending = Some(d);
                self.queue.push(d.max(self.now), Event::Timer(n));
            }
        }
    }

    fn forward(&mut self, n: NodeId, packet: Vec<u8>) {
        let link = segment::destination(&packet).and_then(|dst| {
            self.nodes[n]
                .routes
                .iter()
                .find(|(a, _)| *a == dst)
                .map(|&(_, l)| l)
        });
        match link {
            Some(l) => self.enqueue(
                l,
                Item {
                    bytes: packet,
                    feedback: false,
                },
            ),
            None => {
                self.unroutable += 1;
                self.out.recycle(packet);
            }
        }
    }

    fn enqueue(&mut self, l: LinkId, item: Item) {
        let link = &mut self.links[l];
        if !item.feedback {
            link.stats.offered += 1;
        }
        let queued = link.queue.len() + usize::from(link.busy);
        if !link
            .discipline
            .admit(&item.bytes, queued, link.params.queue_limit)
        {
            link.stats.queue_drops += 1;
            self.out.recycle(item.bytes);
            return;
        }
        link.queue.push_back(item);
        if !link.busy {
            self.start_tx(l);
        }
    }

    fn start_tx(&mut self, l: LinkId) {
        let now = self.now;
        let link = &mut self.links[l];
        let Some(item) = link.queue.pop_front() else {
            return;
        };
        link.discipline.dequeued(&item.bytes);
        // Outages are followed where a codec can break a flow.
        let tracked = !item.feedback && matches!(link.codec, Codec::Real { .. });
        let flow = tracked.then(|| FlowId::of(&item.bytes));
        let (kind, bytes, wire_len) = if item.feedback {
            let len = item.bytes.len() + 1;
            (FrameKind::ContextState, item.bytes, len)
        } else {
            match &mut link.codec {
                Codec::Wire => {
                    let len = item.bytes.len();
                    (FrameKind::Ip, item.bytes, len)
                }
                Codec::Ideal { header } => {
                    let headers = crate::tunnel::header_bytes(&item.bytes).unwrap_or(0);
                    link.stats.payload_bytes += (item.bytes.len() - headers) as u64;
                    let len = item.bytes.len() - headers.min(item.bytes.len())
                        + if headers > 0 { *header } else { 0 }
                        + 1;
                    (FrameKind::CompressedTcp, item.bytes, len)
                }
                Codec::Real { compressor, .. } => {
                    if let Some(headers) = crate::tunnel::header_bytes(&item.bytes) {
                        link.stats.payload_bytes += (item.bytes.len() - headers) as u64;
                    }
                    compressor.set_time(Duration::from_nanos(now));
                    let mut frame = self.out.buffer();
                    let key = link
                        .estimates
                        .as_ref()
                        .and_then(|_| TcpIpPacket::parse(&item.bytes))
                        .map(|p| p.key);
                    let kind = compressor.compress(&item.bytes, &mut frame);
                    if let (Some(key), Some(trace), AnyCompressor::Taroc(c)) =
                        (key, &mut link.estimates, &**compressor)
                    {
                        if let Some((seq, ack)) = c.estimates_of(&key) {
                            let sender = self.nodes.iter().find_map(|n| match &n.agent {
                                Agent::Sender(s) => Some((s.state.cwnd, s.state.ssthresh)),
                                _ => None,
                            });
                            let point = TrackerPoint {
                                time_ns: now,
                                seq_cwnd: seq.cwnd,
                                seq_ssthresh: seq.ssthresh,
                                ack_cwnd: ack.cwnd,
                                ack_ssthresh: ack.ssthresh,
                            };
                            trace.record(point, sender);
                        }
                    }
                    self.out.recycle(item.bytes);
                    let len = frame.len() + 1;
                    (kind, frame, len)
                }
            }
        };
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
        if tracked {
            self.pass_notes(l);
        }
        self.queue.push(now + tx, Event::TxDone(l));
        self.queue.push(now + tx + delay, Event::Arrive(l));
    }

    /// Passes the notes between the codecs at the sending end of link `sending`: its compressor
    /// and the decompressor of its reverse link ([`pass_sibling_notes`]).
    fn pass_notes(&mut self, sending: LinkId) {
        let Some(receiving) = self.links[sending].reverse else {
            return;
        };
        let Ok([s, r]) = self.links.get_disjoint_mut([sending, receiving]) else {
            return;
        };
        if let (Codec::Real { compressor, .. }, Codec::Real { decompressor, .. }) =
            (&mut s.codec, &mut r.codec)
        {
            pass_sibling_notes(&mut **compressor, &mut **decompressor, &mut self.feedback);
        }
    }

    fn arrive(&mut self, l: LinkId) {
        let Some(frame) = self.links[l].in_flight.pop_front() else {
            return;
        };
        if frame.corrupted {
            // The receiving framer sees a bad CRC (it cannot tell which kind of frame it was)
            // and tells the decompressor, as RFC 1144's framer does; VJ then tosses
            // COMPRESSED_TCP frames until an UNCOMPRESSED_TCP one, the other schemes ignore it.
            let link = &mut self.links[l];
            link.stats.corrupted += 1;
            if let Some(flow) = frame.flow {
                let now = Duration::from_nanos(self.now);
                link.outages.frame(flow, now, FrameFate::Lost);
            }
            if let Codec::Real { decompressor, .. } = &mut link.codec {
                decompressor.link_error();
            }
            self.out.recycle(frame.bytes);
            return;
        }
        if frame.feedback {
            if let Some(rev) = self.links[l].reverse {
                if let Codec::Real { compressor, .. } = &mut self.links[rev].codec {
                    compressor.handle_feedback(&frame.bytes);
                }
            }
            self.out.recycle(frame.bytes);
            return;
        }
        let to = self.links[l].to;
        let now = Duration::from_nanos(self.now);
        let flow = frame.flow.unwrap_or_else(|| FlowId::of(&[]));
        let packet = match &mut self.links[l].codec {
            Codec::Wire | Codec::Ideal { .. } => frame.bytes,
            Codec::Real { decompressor, .. } => {
                let mut packet = std::mem::take(&mut self.packet);
                decompressor.set_time(Duration::from_nanos(self.now));
                let result = decompressor.decompress(frame.kind, &frame.bytes, &mut packet);
                let mut feedback = Vec::new();
                std::mem::swap(&mut feedback, &mut self.feedback);
                let mut replies = Vec::new();
                while decompressor.take_feedback(&mut feedback) {
                    let mut b = self.out.buffer();
                    b.extend_from_slice(&feedback);
                    replies.push(b);
                }
                self.feedback = feedback;
                if let Some(rev) = self.links[l].reverse {
                    self.pass_notes(rev);
                }
                self.out.recycle(frame.bytes);
                if let Some(rev) = self.links[l].reverse {
                    for bytes in replies {
                        self.enqueue(
                            rev,
                            Item {
                                bytes,
                                feedback: true,
                            },
                        );
                    }
                }
                let fate = match result {
                    Ok(()) if receiver_accepts(crate::tunnel::innermost(&packet)) => {
                        FrameFate::Delivered
                    }
                    Ok(()) => FrameFate::Damaged,
                    Err(reason) if reason.is_context_damage() => FrameFate::Damaged,
                    Err(_) => FrameFate::Lost,
                };
                self.links[l].outages.frame(flow, now, fate);
                match result {
                    Ok(()) => {
                        let mut out = self.out.buffer();
                        std::mem::swap(&mut out, &mut packet);
                        self.packet = packet;
                        out
                    }
                    Err(_) => {
                        self.links[l].stats.decompressor_drops += 1;
                        self.packet = packet;
                        return;
                    }
                }
            }
        };
        self.deliver(to, packet);
    }

    fn deliver(&mut self, n: NodeId, mut packet: Vec<u8>) {
        let now = self.now;
        let node = &mut self.nodes[n];
        if self.tunnel && !matches!(node.agent, Agent::None) {
            if let Some(inner) = crate::tunnel::decapsulate(&packet, node.addr) {
                let mut bytes = self.out.buffer();
                bytes.extend_from_slice(inner);
                std::mem::swap(&mut packet, &mut bytes);
                self.out.recycle(bytes);
            }
        }
        let for_me = segment::destination(&packet) == Some(node.addr);
        match (&mut node.agent, for_me) {
            (Agent::Sender(s), true) => s.on_packet(now, &packet, &mut self.out),
            (Agent::Receiver(r), true) => r.on_packet(now, &packet, &mut self.out),
            (Agent::Custom(a), true) => a.on_packet(now, &packet, &mut self.out),
            _ => {
                self.forward(n, packet);
                return;
            }
        }
        self.out.recycle(packet);
        self.after_agent(n);
    }
}
