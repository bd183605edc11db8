//! Multi-flow dumbbell scenarios, as TOML: senders S1…Sn → router C ⇄ router D → receivers
//! R1…Rn (Wang & Kung's figure 9 is n = 2: A, B → C ⇄ D → E, F), every link of one rate, the
//! RTT set by the C–D delay, bit errors and optionally header compression on C–D in both
//! directions, a queue discipline at C. Each flow is a plain TCP (Reno, SACK) or a decoupling
//! socket (one or more control TCPs of a VMSS, an optional guaranteed minimum bandwidth).
//!
//! ```toml
//! rate_bps = 10_000_000
//! rtt_ms = 10.0
//! ber = 2e-6
//! queue = 50
//! [[flows]]
//! kind = "decoupling"
//! [[flows]]
//! kind = "reno"
//! ```

use std::net::{IpAddr, Ipv4Addr};

use serde::{Deserialize, Serialize};
use taroc_core::variant::Variant;

use crate::decoupling::agent::{SocketReceiver, SocketSender};
use crate::decoupling::circuit::{Circuit, GmbSender};
use crate::decoupling::control::{coarse_rto, ControlReceiver, ControlSender};
use crate::decoupling::socket::DataSender;
use crate::decoupling::tunnel::Tunnel;
use crate::event::{Time, MILLISECOND, SECOND};
use crate::link::{ErrorModel, LinkParams};
use crate::net::{Agent, Codec, LinkId, Network, NodeId};
use crate::queue::Discipline;
use crate::tcp::receiver::{ReceiverConfig, TcpReceiver};
use crate::tcp::segment::Endpoints;
use crate::tcp::sender::{SenderConfig, TcpSender};
use crate::tcp::variant::TcpVariant;

/// What a flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowKind {
    /// A bulk TCP Reno transfer.
    Reno,
    /// A bulk TCP SACK transfer (receiver sends SACK blocks).
    Sack,
    /// A decoupling socket: the data TCP through a TCP circuit.
    Decoupling,
}

impl FlowKind {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Reno => "reno",
            FlowKind::Sack => "sack",
            FlowKind::Decoupling => "decoupling",
        }
    }
}

fn default_vmss() -> u32 {
    1500
}
fn one() -> u32 {
    1
}

/// One flow from Si to Ri.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowSpec {
    /// Reno, SACK or decoupling.
    pub kind: FlowKind,
    /// Decoupling: bytes of credit per header packet (VMSS).
    #[serde(default = "default_vmss")]
    pub vmss: u32,
    /// Decoupling: control TCPs in the circuit.
    #[serde(default = "one")]
    pub controls: u32,
    /// Decoupling: guaranteed minimum bandwidth, bytes/s (0: no GMB sender).
    #[serde(default)]
    pub gmb_bytes_per_s: u64,
}

impl FlowSpec {
    /// A flow of `kind` with the paper's defaults (VMSS 1500, one control TCP, no GMB).
    pub fn of(kind: FlowKind) -> FlowSpec {
        FlowSpec {
            kind,
            vmss: 1500,
            controls: 1,
            gmb_bytes_per_s: 0,
        }
    }
}

fn default_rate() -> u64 {
    10_000_000
}
fn default_queue() -> usize {
    50
}
fn default_packet() -> u32 {
    1500
}
fn default_tunnel() -> usize {
    10
}
fn default_window() -> u32 {
    128
}
fn default_scheme() -> String {
    "wire".into()
}

/// A dumbbell scenario.
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
    /// Data packet size, bytes (IPv4 + TCP + timestamps + payload).
    #[serde(default = "default_packet")]
    pub packet_bytes: u32,
    /// Largest window of every TCP (plain, control), packets: the receive buffer.
    #[serde(default = "default_window")]
    pub max_window: u32,
    /// Tunnel queue limit of a decoupling socket, packets.
    #[serde(default = "default_tunnel")]
    pub tunnel: usize,
    /// Header compression on C–D: `wire` (none, no framing byte) or a codec name.
    #[serde(default = "default_scheme")]
    pub scheme: String,
    /// The flows.
    pub flows: Vec<FlowSpec>,
}

/// Where a built dumbbell's pieces are.
#[derive(Debug)]
pub struct Built {
    /// The network.
    pub net: Network,
    /// The sending node of each flow.
    pub senders: Vec<NodeId>,
    /// The receiving node of each flow.
    pub receivers: Vec<NodeId>,
    /// C → D.
    pub forward: LinkId,
    /// D → C.
    pub backward: LinkId,
}

const DATA_PORT: u16 = 5001;
const CONTROL_PORT: u16 = 6001;

impl Dumbbell {
    /// Parses a TOML scenario.
    pub fn from_toml(text: &str) -> Result<Dumbbell, String> {
        let d: Dumbbell = toml::from_str(text).map_err(|e| e.message().to_string())?;
        d.validate()?;
        Ok(d)
    }

    /// The scenario as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Checks the values, with a message naming the bad one.
    pub fn validate(&self) -> Result<(), String> {
        if self.flows.is_empty() || self.flows.len() > 200 {
            return Err("a dumbbell needs 1 to 200 flows".into());
        }
        if !(self.rtt_ms.is_finite() && self.rtt_ms >= 0.0) {
            return Err(format!("rtt_ms must be 0 or more, got {}", self.rtt_ms));
        }
        if !(0.0..=1.0).contains(&self.ber) {
            return Err(format!("ber must be between 0 and 1, got {}", self.ber));
        }
        if self.packet_bytes < 92 || self.packet_bytes > 9000 {
            return Err(format!(
                "packet_bytes must be 92 to 9000, got {}",
                self.packet_bytes
            ));
        }
        if self.scheme != "wire" && Variant::by_name(&self.scheme).is_none() {
            return Err(format!("unknown scheme {:?}", self.scheme));
        }
        for f in &self.flows {
            if f.vmss == 0 || f.controls == 0 || f.controls > 64 {
                return Err("a flow needs a VMSS above 0 and 1 to 64 control TCPs".into());
            }
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
            Some(v) => Codec::Real {
                compressor: Box::new(v.compressor()),
                decompressor: Box::new(v.decompressor()),
            },
            None => Codec::Wire,
        }
    }

    /// Payload bytes of a full data segment.
    pub fn mss(&self) -> u32 {
        self.packet_bytes - 52
    }

    /// Builds the network; flows start at 0 (staggered by 1 ms each).
    pub fn build(&self, seed: u64) -> Result<Built, String> {
        self.validate()?;
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
        let forward = net.add_link(self.link(delay, errors), d, self.codec());
        let backward = net.add_link(self.link(delay, errors), c, self.codec());
        net.pair(forward, backward);
        net.set_discipline(forward, self.discipline);
        let access = LinkParams {
            queue_limit: 1000,
            rate_bps: self.access_bps.unwrap_or(self.rate_bps),
            ..self.link(0, ErrorModel::None)
        };
        let (mut senders, mut receivers) = (Vec::new(), Vec::new());
        for (i, flow) in self.flows.iter().enumerate() {
            let (src, dst) = (addr(0, i), addr(1, i));
            let (sender, receiver) = self.agents(flow, src, dst, i as u32);
            let s = net.add_node(src, sender);
            let r = net.add_node(dst, receiver);
            let s_up = net.add_link(access, c, Codec::Wire);
            let s_down = net.add_link(access, s, Codec::Wire);
            let r_down = net.add_link(access, r, Codec::Wire);
            let r_up = net.add_link(access, d, Codec::Wire);
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

    fn agents(&self, flow: &FlowSpec, src: IpAddr, dst: IpAddr, i: u32) -> (Agent, Agent) {
        let iss = 1000 + 7919 * i;
        let data = Endpoints {
            src,
            dst,
            src_port: DATA_PORT,
            dst_port: DATA_PORT,
        };
        let receiver_config = ReceiverConfig {
            delayed_ack: true,
            sack: flow.kind != FlowKind::Reno,
            timestamps: true,
            ..ReceiverConfig::default()
        };
        let receiver = TcpReceiver::new(receiver_config, data.reversed(), iss);
        match flow.kind {
            FlowKind::Reno | FlowKind::Sack => {
                let variant = match flow.kind {
                    FlowKind::Reno => TcpVariant::Reno,
                    _ => TcpVariant::Sack,
                };
                let config = SenderConfig {
                    mss: self.mss(),
                    max_window_segments: self.max_window,
                    initial_window_segments: 1,
                    initial_ssthresh_segments: 1 << 20,
                    timestamps: true,
                    rto: coarse_rto(),
                    file_bytes: None,
                };
                let sender = TcpSender::new(config, variant.recovery(), data, iss);
                (
                    Agent::Sender(Box::new(sender)),
                    Agent::Receiver(Box::new(receiver)),
                )
            }
            FlowKind::Decoupling => {
                let mut controls = Vec::new();
                let mut control_receivers = Vec::new();
                for k in 0..flow.controls {
                    let port = CONTROL_PORT + k as u16;
                    let ep = Endpoints {
                        src_port: port,
                        dst_port: port,
                        ..data
                    };
                    let c_iss = iss.wrapping_mul(31).wrapping_add(k);
                    controls.push(ControlSender::new(ep, c_iss, flow.vmss, self.max_window));
                    let rx = ControlReceiver::new(ep.reversed(), c_iss, flow.vmss);
                    control_receivers.push((port, rx));
                }
                let circuit = Circuit {
                    tunnel: Tunnel::new(self.tunnel),
                    controls,
                    gmb: (flow.gmb_bytes_per_s > 0).then(|| GmbSender::new(flow.gmb_bytes_per_s)),
                };
                let sender =
                    SocketSender::new(circuit, DataSender::new(data, iss, self.mss()), DATA_PORT);
                let receiver = SocketReceiver::new(receiver, DATA_PORT, control_receivers);
                (
                    Agent::Custom(Box::new(sender)),
                    Agent::Custom(Box::new(receiver)),
                )
            }
        }
    }
}

/// What one flow achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FlowResult {
    /// Bytes delivered in order to the receiving application, per second of the measured span.
    pub goodput_bytes_per_s: f64,
    /// Decoupling: the control TCPs' time-averaged window, packets (summed over them).
    pub control_window: f64,
    /// Decoupling: header packets sent, less those still unacknowledged at the end.
    pub header_packets: u64,
    /// Decoupling: header packets the control receivers got intact.
    pub header_packets_received: u64,
}

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DumbbellOutcome {
    /// Per flow.
    pub flows: Vec<FlowResult>,
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

/// Delivered bytes of each flow's receiver.
fn delivered(net: &Network, receivers: &[NodeId]) -> Vec<u64> {
    receivers
        .iter()
        .map(|&r| match &net.nodes[r].agent {
            Agent::Receiver(rx) => rx.stats().delivered_bytes,
            Agent::Custom(a) => {
                let any: &dyn std::any::Any = &**a;
                any.downcast_ref::<SocketReceiver>()
                    .map_or(0, |s| s.data.stats().delivered_bytes)
            }
            _ => 0,
        })
        .collect()
}

impl Dumbbell {
    /// Runs for `warmup_s` then measures for `measure_s` seconds of simulated time.
    pub fn run(&self, seed: u64, warmup_s: f64, measure_s: f64) -> Result<DumbbellOutcome, String> {
        let mut b = self.build(seed)?;
        let warm = (warmup_s * SECOND as f64) as Time;
        let end = warm + (measure_s * SECOND as f64) as Time;
        b.net.run_until(warm);
        let before = delivered(&b.net, &b.receivers);
        let wire_before = b.net.links[b.forward].stats.wire_bytes;
        b.net.run_until(end);
        let after = delivered(&b.net, &b.receivers);
        let mut flows = Vec::new();
        for (i, &s) in b.senders.iter().enumerate() {
            let mut f = FlowResult {
                goodput_bytes_per_s: (after[i] - before[i]) as f64 / measure_s,
                ..FlowResult::default()
            };
            let agent: Option<&dyn std::any::Any> = match &b.net.nodes[s].agent {
                Agent::Custom(a) => Some(&**a),
                _ => None,
            };
            if let Some(sender) = agent.and_then(|a| a.downcast_ref::<SocketSender>()) {
                for c in &sender.circuit.controls {
                    f.control_window += c.mean_window(end);
                    f.header_packets += c.stats().header_packets - c.outstanding();
                }
            }
            let rx: Option<&dyn std::any::Any> = match &b.net.nodes[b.receivers[i]].agent {
                Agent::Custom(a) => Some(&**a),
                _ => None,
            };
            if let Some(r) = rx.and_then(|a| a.downcast_ref::<SocketReceiver>()) {
                f.header_packets_received = r.controls.iter().map(|(_, c)| c.header_packets).sum();
            }
            flows.push(f);
        }
        let (fwd, bwd) = (
            &b.net.links[b.forward].stats,
            &b.net.links[b.backward].stats,
        );
        Ok(DumbbellOutcome {
            aggregate_bytes_per_s: flows.iter().map(|f| f.goodput_bytes_per_s).sum(),
            flows,
            forward_wire_bytes_per_s: (fwd.wire_bytes - wire_before) as f64 / measure_s,
            frames: fwd.frames + bwd.frames,
            corrupted: fwd.corrupted + bwd.corrupted,
            decompressor_drops: fwd.decompressor_drops + bwd.decompressor_drops,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TESTBED: &str = r#"
rtt_ms = 10.0
ber = 2e-6
[[flows]]
kind = "decoupling"
vmss = 3000
controls = 2
[[flows]]
kind = "reno"
"#;

    #[test]
    fn a_toml_scenario_takes_the_paper_defaults() {
        let d = Dumbbell::from_toml(TESTBED).unwrap();
        assert_eq!(d.rate_bps, 10_000_000);
        assert_eq!((d.queue, d.packet_bytes, d.mss()), (50, 1500, 1448));
        assert_eq!(d.flows[0].vmss, 3000);
        assert_eq!(d.flows[1], FlowSpec::of(FlowKind::Reno));
        assert_eq!(Dumbbell::from_toml(&d.to_toml()).unwrap(), d);
    }

    #[test]
    fn bad_scenarios_are_refused_with_a_reason() {
        let bad = TESTBED.replace("ber = 2e-6", "ber = 2.0");
        assert!(Dumbbell::from_toml(&bad).unwrap_err().contains("ber"));
        let bad = TESTBED.replace("kind = \"reno\"", "kind = \"cubic\"");
        assert!(Dumbbell::from_toml(&bad).is_err());
        let bad = format!("scheme = \"nope\"\n{TESTBED}");
        assert!(Dumbbell::from_toml(&bad).unwrap_err().contains("scheme"));
    }

    #[test]
    fn every_flow_is_routed_both_ways() {
        let d = Dumbbell::from_toml(TESTBED).unwrap();
        let mut b = d.build(3).unwrap();
        b.net.run_until(2 * SECOND);
        assert_eq!(b.net.unroutable, 0);
        let got = delivered(&b.net, &b.receivers);
        assert!(got.iter().all(|&g| g > 0), "{got:?}");
    }
}
