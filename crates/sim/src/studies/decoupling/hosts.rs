//! The decoupling socket's two ends as network agents: the sending host (data TCP into a TCP
//! circuit) and the receiving host (the data TCP's receiver and the control TCP receivers), and
//! [`Host`], either of them, as the testbed's network runs them.

use super::circuit::Circuit;
use super::control::ControlReceiver;
use super::socket::DataSender;
use crate::event::Time;
use crate::net::NodeAgent;
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::segment;
use crate::tcp::Outbox;

/// The sending host of a decoupling socket.
#[derive(Debug, Clone)]
pub struct SocketSender {
    /// The TCP circuit the data goes through.
    pub circuit: Circuit,
    /// The data TCP.
    pub data: DataSender,
    data_port: u16,
    /// ACKs that were for neither the data TCP nor a control TCP, or failed their checksums.
    pub stray: u64,
}

impl SocketSender {
    /// A sending host whose data TCP sends from `data_port` into `circuit`.
    pub fn new(circuit: Circuit, data: DataSender, data_port: u16) -> SocketSender {
        SocketSender {
            circuit,
            data,
            data_port,
            stray: 0,
        }
    }

    fn pump(&mut self, now: Time, out: &mut Outbox) {
        loop {
            self.data.fill(now, &mut self.circuit.tunnel, out);
            if !self.circuit.pump(now, out) {
                break;
            }
        }
    }
}

impl NodeAgent for SocketSender {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.pump(now, out);
    }

    fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox) {
        match segment::parse(packet) {
            Ok(p) if p.dst_port == self.data_port => {
                let x = self.circuit.window_packets();
                self.data.on_ack(now, &p, x, &mut self.circuit.tunnel, out);
            }
            Ok(p) if self.circuit.on_ack(now, &p, out) => {}
            _ => self.stray += 1,
        }
        self.pump(now, out);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        self.circuit.on_timer(now, out);
        self.data.on_timer(now, &mut self.circuit.tunnel, out);
        self.pump(now, out);
    }

    fn deadline(&self) -> Option<Time> {
        [self.circuit.deadline(), self.data.deadline()]
            .into_iter()
            .flatten()
            .min()
    }
}

/// The receiving host of a decoupling socket.
#[derive(Debug)]
pub struct SocketReceiver {
    /// The data TCP's receiver (SACK, timestamps).
    pub data: TcpReceiver,
    data_port: u16,
    /// The control TCP receivers, by the port they receive on.
    pub controls: Vec<(u16, ControlReceiver)>,
    /// Packets for no known port, or failing their checksums.
    pub stray: u64,
}

impl SocketReceiver {
    /// A receiving host: the data TCP on `data_port`, the control TCPs on theirs.
    pub fn new(
        data: TcpReceiver,
        data_port: u16,
        controls: Vec<(u16, ControlReceiver)>,
    ) -> SocketReceiver {
        SocketReceiver {
            data,
            data_port,
            controls,
            stray: 0,
        }
    }
}

impl NodeAgent for SocketReceiver {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox) {
        let Ok(p) = segment::parse(packet) else {
            self.stray += 1;
            return;
        };
        if p.dst_port == self.data_port {
            return self.data.on_segment(now, &p, out);
        }
        match self
            .controls
            .iter_mut()
            .find(|(port, _)| *port == p.dst_port)
        {
            Some((_, c)) => c.on_header(now, &p, out),
            None => self.stray += 1,
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        self.data.on_timer(now, out);
        for (_, c) in &mut self.controls {
            c.on_timer(now, out);
        }
    }

    fn deadline(&self) -> Option<Time> {
        let controls = self.controls.iter().filter_map(|(_, c)| c.deadline());
        controls.chain(self.data.deadline()).min()
    }

    fn delivered_bytes(&self) -> u64 {
        self.data.stats().delivered_bytes
    }
}

/// A host of a decoupling socket: its sending or its receiving end.
#[derive(Debug)]
pub enum Host {
    /// The sending host: the data TCP into its TCP circuit.
    Sender(Box<SocketSender>),
    /// The receiving host: the data TCP's receiver and the control TCP receivers.
    Receiver(Box<SocketReceiver>),
}

impl NodeAgent for Host {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        match self {
            Host::Sender(s) => s.start(now, out),
            Host::Receiver(r) => r.start(now, out),
        }
    }

    fn on_packet(&mut self, now: Time, packet: &[u8], out: &mut Outbox) {
        match self {
            Host::Sender(s) => s.on_packet(now, packet, out),
            Host::Receiver(r) => r.on_packet(now, packet, out),
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        match self {
            Host::Sender(s) => s.on_timer(now, out),
            Host::Receiver(r) => r.on_timer(now, out),
        }
    }

    fn deadline(&self) -> Option<Time> {
        match self {
            Host::Sender(s) => s.deadline(),
            Host::Receiver(r) => r.deadline(),
        }
    }

    fn delivered_bytes(&self) -> u64 {
        match self {
            Host::Sender(_) => 0,
            Host::Receiver(r) => r.delivered_bytes(),
        }
    }
}
