//! Nodes, links with per-direction header compression, and the event loop.
//!
//! A link direction carries *frames*. Each frame costs its bytes plus one byte of frame kind on
//! the wire (the link framing; see `taroc_core::FrameKind::to_byte`); links without a codec
//! (wired links) carry IP packets as they are, with no extra byte. Packets are compressed when
//! they start transmission (so DropTail drops happen before the compressor sees a packet), a frame
//! hit by a bit error is discarded by the receiving link layer (which signals the receiving
//! decompressor with `Decompressor::link_error`; queue drops are not signalled: nothing of
//! them reaches the receiver), and intact frames go through the decompressor, whose feedback
//! (CONTEXT_STATE) crosses the reverse direction of the same link as frames of its own.
//!
//! The codecs of a link with a real scheme are its two [`LinkEnd`]s: each end holds the
//! compressor of the direction it sends and the decompressor of the direction it receives, and
//! runs every frame through them as the gateway and the evaluation of captures do.
//!
//! The network knows nothing of what is measured on it: a study watches a run through an
//! [`Observer`] ([`Network::run_observed`]), and runs hosts of its own as [`NodeAgent`]s.

use std::net::IpAddr;
use std::time::Duration;

use taroc_core::{AnyCompressor, AnyDecompressor, LinkEnd};

use crate::event::{EventQueue, Time};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::segment;
use crate::tcp::sender::TcpSender;
use crate::tcp::Outbox;

mod observer;
mod stats;
mod transmit;

pub use observer::Observer;
pub use stats::LinkStats;
pub use transmit::{Codec, LinkDir};

/// Index of a node.
pub type NodeId = usize;
/// Index of a link direction.
pub type LinkId = usize;

/// What runs on a node: nothing, one of the simulator's TCPs, or a host of type `H`.
#[derive(Debug)]
pub enum Agent<H = Box<dyn NodeAgent>> {
    /// Nothing: a router.
    None,
    /// A bulk TCP sender.
    Sender(Box<TcpSender>),
    /// A TCP receiver.
    Receiver(Box<TcpReceiver>),
    /// Any other host: one of the type the network was made for, behind [`NodeAgent`].
    Custom(H),
}

/// A host the network drives without knowing it: packets for its node, its timer, its start.
/// A study that runs its own hosts gives the network their type, and reads them back after the
/// run as that type.
pub trait NodeAgent: std::fmt::Debug {
    /// Starts the agent (see [`Network::start_agent`]).
    fn start(&mut self, now: Time, out: &mut Outbox);
    /// Handles a packet addressed to the node.
    fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox);
    /// Handles the timer set by [`NodeAgent::deadline`] (may be called early or late).
    fn on_timer(&mut self, now: Time, out: &mut Outbox);
    /// When the agent next wants [`NodeAgent::on_timer`], if at all.
    fn deadline(&self) -> Option<Time>;
    /// Bytes delivered in order to the node's application so far (a receiving host's goodput;
    /// none by default).
    fn delivered_bytes(&self) -> u64 {
        0
    }
}

impl<T: NodeAgent + ?Sized> NodeAgent for Box<T> {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        (**self).start(now, out)
    }

    fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox) {
        (**self).on_packet(now, packet, out)
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        (**self).on_timer(now, out)
    }

    fn deadline(&self) -> Option<Time> {
        (**self).deadline()
    }

    fn delivered_bytes(&self) -> u64 {
        (**self).delivered_bytes()
    }
}

impl<H: NodeAgent> Agent<H> {
    /// Bytes delivered in order to the node's application so far (0 for a router or a sender).
    pub fn delivered_bytes(&self) -> u64 {
        match self {
            Agent::Receiver(r) => r.stats().delivered_bytes,
            Agent::Custom(h) => h.delivered_bytes(),
            Agent::None | Agent::Sender(_) => 0,
        }
    }
}

/// A node: an address, routes, and perhaps a TCP agent.
#[derive(Debug)]
pub struct Node<H = Box<dyn NodeAgent>> {
    /// The node's address.
    pub addr: IpAddr,
    /// Routes: destination address -> outgoing link.
    pub routes: Vec<(IpAddr, LinkId)>,
    /// The agent.
    pub agent: Agent<H>,
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

/// A network and its event loop; its hosts other than the simulator's TCPs are of type `H`.
#[derive(Debug)]
pub struct Network<H = Box<dyn NodeAgent>> {
    /// Nodes.
    pub nodes: Vec<Node<H>>,
    /// Link directions.
    pub links: Vec<LinkDir>,
    /// The codecs of the links with a real scheme, two ends per link.
    ends: Vec<LinkEnd>,
    queue: EventQueue<Event>,
    now: Time,
    seed: u64,
    out: Outbox,
    packet: Vec<u8>,
    feedback: Vec<u8>,
    /// The first node whose agent is a bulk TCP sender (what an [`Observer`] is shown).
    first_sender: Option<NodeId>,
    /// Packets dropped for lack of a route.
    pub unroutable: u64,
    /// Whether the hosts' agents talk through an IP-in-IP tunnel ([`crate::tunnel`]).
    pub tunnel: bool,
    /// Scheduled decompressor resets: the link and its fresh decompressor (taken when used).
    resets: Vec<(LinkId, Option<Box<AnyDecompressor>>)>,
}

impl<H: NodeAgent> Network<H> {
    /// An empty network whose random streams derive from `seed`.
    pub fn new(seed: u64) -> Network<H> {
        Network {
            nodes: Vec::new(),
            links: Vec::new(),
            ends: Vec::new(),
            queue: EventQueue::new(),
            now: 0,
            seed,
            out: Outbox::default(),
            packet: Vec::with_capacity(2048),
            feedback: Vec::with_capacity(256),
            first_sender: None,
            unroutable: 0,
            tunnel: false,
            resets: Vec::new(),
        }
    }

    /// Adds a node.
    pub fn add_node(&mut self, addr: IpAddr, agent: Agent<H>) -> NodeId {
        let id = self.nodes.len();
        if matches!(agent, Agent::Sender(_)) && self.first_sender.is_none() {
            self.first_sender = Some(id);
        }
        self.nodes.push(Node {
            addr,
            routes: Vec::new(),
            agent,
            timer_pending: None,
        });
        id
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
        self.run_observed(until, &mut ());
    }

    /// Runs until simulated time `until` (events at exactly `until` are not run), showing
    /// `observer` what it watches.
    pub fn run_observed(&mut self, until: Time, observer: &mut dyn Observer) {
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
                    self.start_tx(l, observer);
                }
                Event::Arrive(l) => self.arrive(l, observer),
                Event::Timer(n) => self.timer(n, observer),
                Event::Reset(i) => self.reset(i),
                Event::Start(n) => {
                    match &mut self.nodes[n].agent {
                        Agent::Sender(s) => s.start(t, &mut self.out),
                        Agent::Custom(a) => a.start(t, &mut self.out),
                        _ => {}
                    }
                    self.after_agent(n, observer);
                }
            }
        }
        self.now = self.now.max(until);
    }

    fn timer(&mut self, n: NodeId, observer: &mut dyn Observer) {
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
        self.after_agent(n, observer);
    }

    /// Sends what the agent of `n` produced and (re)schedules its timer.
    fn after_agent(&mut self, n: NodeId, observer: &mut dyn Observer) {
        while !self.out.packets.is_empty() {
            let mut packet = self.out.packets.remove(0);
            if self.tunnel {
                let mut outer = self.out.buffer();
                if crate::tunnel::encapsulate(self.nodes[n].addr, &packet, &mut outer) {
                    std::mem::swap(&mut packet, &mut outer);
                }
                self.out.recycle(outer);
            }
            self.forward(n, packet, observer);
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

    /// Sends `packet` from node `n` over the link its route names (or drops it).
    fn forward(&mut self, n: NodeId, packet: Vec<u8>, observer: &mut dyn Observer) {
        let link = segment::destination(&packet).and_then(|dst| {
            self.nodes[n]
                .routes
                .iter()
                .find(|(a, _)| *a == dst)
                .map(|&(_, l)| l)
        });
        match link {
            Some(l) => self.enqueue(l, packet, false, observer),
            None => {
                self.unroutable += 1;
                self.out.recycle(packet);
            }
        }
    }

    /// Hands a packet that crossed a link to node `n`: its agent's if addressed to it, else on.
    fn deliver(&mut self, n: NodeId, mut packet: Vec<u8>, observer: &mut dyn Observer) {
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
                self.forward(n, packet, observer);
                return;
            }
        }
        self.out.recycle(packet);
        self.after_agent(n, observer);
    }

    /// The network's first bulk TCP sender, if any.
    fn first_sender(&self) -> Option<&TcpSender> {
        match &self.nodes[self.first_sender?].agent {
            Agent::Sender(s) => Some(s),
            _ => None,
        }
    }

    /// The compressor sending on `link`, if the link has a real scheme.
    pub fn compressor(&self, link: LinkId) -> Option<&AnyCompressor> {
        let end = self.links[link].sending_end()?;
        Some(self.ends[end].compressor())
    }

    /// Time of the network as the codecs take it.
    fn codec_time(&self) -> Duration {
        Duration::from_nanos(self.now)
    }
}
