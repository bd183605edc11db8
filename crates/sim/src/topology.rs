//! Multi-flow dumbbells: senders S1…Sn → router C ⇄ router D → receivers R1…Rn (Wang & Kung's
//! figure 9 is n = 2: A, B → C ⇄ D → E, F), every link of one rate, the RTT set by the C–D
//! delay, bit errors and optionally header compression on C–D in both directions, a queue
//! discipline at C. What runs on each flow's two hosts is the caller's: the simulator's TCPs, or
//! hosts of its own ([`NodeAgent`]), made by a function given the flow's endpoints.

use std::net::{IpAddr, Ipv4Addr};

use serde::{Deserialize, Serialize};
use taroc_core::variant::Variant;

use crate::event::{Time, MILLISECOND, SECOND};
use crate::link::{ErrorModel, LinkParams};
use crate::net::{Agent, Codec, LinkId, Network, NodeAgent, NodeId};
use crate::queue::Discipline;
use crate::tcp::segment::Endpoints;

fn default_rate() -> u64 {
    10_000_000
}
fn default_queue() -> usize {
    50
}
fn default_scheme() -> String {
    "wire".into()
}

/// The most flows a dumbbell carries.
pub const MAX_FLOWS: usize = 200;

/// The port of every flow's data, at both ends.
pub const DATA_PORT: u16 = 5001;

/// A dumbbell's links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dumbbell {
    /// Rate of C–D, bit/s (and of the access links unless `access_bps` is set).
    #[serde(default = "default_rate")]
    pub rate_bps: u64,
    /// Rate of the access links (Si–C, D–Ri), bit/s, if not `rate_bps`.
    #[serde(default)]
    pub access_bps: Option<u64>,
    /// Round-trip time of an empty path, ms (the C–D delay is half of it).
    pub rtt_ms: f64,
    /// Bit-error rate on C–D, both directions.
    #[serde(default)]
    pub ber: f64,
    /// Queue limit at C towards D and at D towards C, packets.
    #[serde(default = "default_queue")]
    pub queue: usize,
    /// Queue discipline at C towards D.
    #[serde(default)]
    pub discipline: Discipline,
    /// Header compression on C–D: `wire` (none, no framing byte) or a codec name.
    #[serde(default = "default_scheme")]
    pub scheme: String,
}

/// Where a built dumbbell's pieces are.
#[derive(Debug)]
pub struct Built<H = Box<dyn NodeAgent>> {
    /// The network.
    pub net: Network<H>,
    /// The sending node of each flow.
    pub senders: Vec<NodeId>,
    /// The receiving node of each flow.
    pub receivers: Vec<NodeId>,
    /// C → D.
    pub forward: LinkId,
    /// D → C.
    pub backward: LinkId,
}

impl Dumbbell {
    /// Checks the values, with a message naming the bad one.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rtt_ms.is_finite() && self.rtt_ms >= 0.0) {
            return Err(format!("rtt_ms must be 0 or more, got {}", self.rtt_ms));
        }
        if !(0.0..=1.0).contains(&self.ber) {
            return Err(format!("ber must be between 0 and 1, got {}", self.ber));
        }
        if self.scheme != "wire" && Variant::by_name(&self.scheme).is_none() {
            return Err(format!("unknown scheme {:?}", self.scheme));
        }
        if self.access_bps == Some(0) {
            return Err("access_bps must be positive".into());
        }
        self.link(0, ErrorModel::None).validate()
    }

    fn link(&self, delay_ns: Time, errors: ErrorModel) -> LinkParams {
        LinkParams {
            rate_bps: self.rate_bps,
            delay_ns,
            queue_limit: self.queue,
            errors,
        }
    }

    fn codec(&self) -> Codec {
        match Variant::by_name(&self.scheme) {
            Some(v) => Codec::Real(Box::new(v)),
            None => Codec::Wire,
        }
    }

    /// Builds the network with `flows` flows, whose hosts `hosts(flow, data)` makes (the
    /// sender's agent, then the receiver's; `data`: the flow's endpoints at the sender, both
    /// ports [`DATA_PORT`]). Flows start at 0, staggered by 1 ms each.
    pub fn build<H: NodeAgent>(
        &self,
        seed: u64,
        flows: usize,
        hosts: &mut dyn FnMut(usize, Endpoints) -> (Agent<H>, Agent<H>),
    ) -> Result<Built<H>, String> {
        self.validate()?;
        if flows == 0 || flows > MAX_FLOWS {
            return Err(format!("a dumbbell needs 1 to {MAX_FLOWS} flows"));
        }
        let mut net = Network::new(seed);
        let addr = |net: u8, host: usize| IpAddr::V4(Ipv4Addr::new(10, 0, net, host as u8 + 1));
        let c = net.add_node(addr(2, 0), Agent::None);
        let d = net.add_node(addr(3, 0), Agent::None);
        let delay = (self.rtt_ms * 1e6 / 2.0) as Time;
        let errors = if self.ber > 0.0 {
            ErrorModel::Ber { ber: self.ber }
        } else {
            ErrorModel::None
        };
        let cd = self.link(delay, errors);
        let [forward, backward] = net.add_duplex(c, d, [cd, cd], self.codec());
        net.set_discipline(forward, self.discipline);
        let access = LinkParams {
            queue_limit: 1000,
            rate_bps: self.access_bps.unwrap_or(self.rate_bps),
            ..self.link(0, ErrorModel::None)
        };
        let (mut senders, mut receivers) = (Vec::new(), Vec::new());
        for i in 0..flows {
            let (src, dst) = (addr(0, i), addr(1, i));
            let data = Endpoints {
                src,
                dst,
                src_port: DATA_PORT,
                dst_port: DATA_PORT,
            };
            let (sender, receiver) = hosts(i, data);
            let s = net.add_node(src, sender);
            let r = net.add_node(dst, receiver);
            let s_up = net.add_link(access, c);
            let s_down = net.add_link(access, s);
            let r_down = net.add_link(access, r);
            let r_up = net.add_link(access, d);
            net.route(s, dst, s_up);
            net.route(c, dst, forward);
            net.route(d, dst, r_down);
            net.route(r, src, r_up);
            net.route(d, src, backward);
            net.route(c, src, s_down);
            net.start_agent(s, i as Time * MILLISECOND);
            senders.push(s);
            receivers.push(r);
        }
        Ok(Built {
            net,
            senders,
            receivers,
            forward,
            backward,
        })
    }
}

/// What a dumbbell's run achieved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DumbbellOutcome {
    /// Each flow's goodput: bytes delivered in order to the receiving application, per second
    /// of the measured span.
    pub goodput_bytes_per_s: Vec<f64>,
    /// Every flow's goodput summed, bytes/s.
    pub aggregate_bytes_per_s: f64,
    /// Bytes on the wire of C → D, per second (its use of the link).
    pub forward_wire_bytes_per_s: f64,
    /// Frames sent on C → D and D → C.
    pub frames: u64,
    /// Of them, frames lost to bit errors.
    pub corrupted: u64,
    /// Of them, frames the decompressors refused.
    pub decompressor_drops: u64,
}

impl<H: NodeAgent> Built<H> {
    /// Delivered bytes of each flow's receiver.
    pub fn delivered(&self) -> Vec<u64> {
        let nodes = &self.net.nodes;
        let of = |&r: &NodeId| nodes[r].agent.delivered_bytes();
        self.receivers.iter().map(of).collect()
    }

    /// Runs for `warmup_s` then measures for `measure_s` seconds of simulated time.
    pub fn measure(&mut self, warmup_s: f64, measure_s: f64) -> DumbbellOutcome {
        let warm = (warmup_s * SECOND as f64) as Time;
        let end = warm + (measure_s * SECOND as f64) as Time;
        self.net.run_until(warm);
        let before = self.delivered();
        let wire_before = self.net.links[self.forward].stats.wire_bytes;
        self.net.run_until(end);
        let after = self.delivered();
        let goodput: Vec<f64> = (after.iter().zip(&before))
            .map(|(a, b)| (a - b) as f64 / measure_s)
            .collect();
        let (fwd, bwd) = (
            &self.net.links[self.forward].stats,
            &self.net.links[self.backward].stats,
        );
        DumbbellOutcome {
            aggregate_bytes_per_s: goodput.iter().sum(),
            goodput_bytes_per_s: goodput,
            forward_wire_bytes_per_s: (fwd.wire_bytes - wire_before) as f64 / measure_s,
            frames: fwd.frames + bwd.frames,
            corrupted: fwd.corrupted + bwd.corrupted,
            decompressor_drops: fwd.decompressor_drops + bwd.decompressor_drops,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::receiver::{ReceiverConfig, TcpReceiver};
    use crate::tcp::sender::{SenderConfig, TcpSender};
    use crate::tcp::variant::TcpVariant;

    fn dumbbell() -> Dumbbell {
        Dumbbell {
            rate_bps: 10_000_000,
            access_bps: None,
            rtt_ms: 10.0,
            ber: 2e-6,
            queue: 50,
            discipline: Discipline::DropTail,
            scheme: "wire".into(),
        }
    }

    /// Bulk Reno flows on both ends.
    fn reno(_: usize, data: Endpoints) -> (Agent, Agent) {
        let config = SenderConfig {
            mss: 1448,
            ..SenderConfig::default()
        };
        let sender = TcpSender::new(config, TcpVariant::Reno.recovery(), data, 1000);
        let receiver = TcpReceiver::new(ReceiverConfig::default(), data.reversed(), 1000);
        (
            Agent::Sender(Box::new(sender)),
            Agent::Receiver(Box::new(receiver)),
        )
    }

    #[test]
    fn every_flow_is_routed_both_ways() {
        let mut b = dumbbell().build(3, 3, &mut reno).unwrap();
        b.net.run_until(2 * SECOND);
        assert_eq!(b.net.unroutable, 0);
        let got = b.delivered();
        assert!(got.iter().all(|&g| g > 0), "{got:?}");
        let o = dumbbell().build(3, 3, &mut reno).unwrap().measure(1.0, 1.0);
        assert_eq!(o.goodput_bytes_per_s.len(), 3);
        assert!(o.aggregate_bytes_per_s > 0.0 && o.frames > 0, "{o:?}");
    }

    #[test]
    fn bad_dumbbells_are_refused_with_a_reason() {
        let bad = Dumbbell {
            ber: 2.0,
            ..dumbbell()
        };
        assert!(bad.validate().unwrap_err().contains("ber"));
        let bad = Dumbbell {
            scheme: "nope".into(),
            ..dumbbell()
        };
        assert!(bad.validate().unwrap_err().contains("scheme"));
        let none = dumbbell().build(1, 0, &mut reno);
        assert!(none.unwrap_err().contains("1 to 200 flows"));
    }
}
