//! The testbed of Wang & Kung's evaluation, as TOML: a [`Dumbbell`] whose flows are each a
//! plain TCP (Reno, SACK) or a decoupling socket (one or more control TCPs of a VMSS, an
//! optional guaranteed minimum bandwidth), and what each flow achieved.
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

use serde::{Deserialize, Serialize};

use super::circuit::{Circuit, GmbSender};
use super::control::{ControlReceiver, ControlSender};
use super::hosts::{Host, SocketReceiver, SocketSender};
use super::socket::DataSender;
use super::tunnel::Tunnel;
use crate::net::Agent;
use crate::tcp::receiver::{ReceiverConfig, TcpReceiver};
use crate::tcp::rto::RtoConfig;
use crate::tcp::segment::Endpoints;
use crate::tcp::sender::{SenderConfig, TcpSender};
use crate::tcp::variant::TcpVariant;
use crate::topology::{Built, Dumbbell, DumbbellOutcome, DATA_PORT, MAX_FLOWS};

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

fn default_packet() -> u32 {
    1500
}
fn default_tunnel() -> usize {
    10
}
fn default_window() -> u32 {
    128
}

/// A testbed: the dumbbell's links and its flows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Testbed {
    /// The links.
    #[serde(flatten)]
    pub link: Dumbbell,
    /// Data packet size, bytes (IPv4 + TCP + timestamps + payload).
    #[serde(default = "default_packet")]
    pub packet_bytes: u32,
    /// Largest window of every TCP (plain, control), packets: the receive buffer.
    #[serde(default = "default_window")]
    pub max_window: u32,
    /// Tunnel queue limit of a decoupling socket, packets.
    #[serde(default = "default_tunnel")]
    pub tunnel: usize,
    /// The flows.
    pub flows: Vec<FlowSpec>,
}

/// The port of a decoupling socket's first control TCP (the next ones count up from it).
const CONTROL_PORT: u16 = 6001;

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
pub struct Outcome {
    /// The dumbbell's figures.
    pub link: DumbbellOutcome,
    /// Per flow.
    pub flows: Vec<FlowResult>,
}

impl Testbed {
    /// Parses a TOML testbed.
    pub fn from_toml(text: &str) -> Result<Testbed, String> {
        let t: Testbed = toml::from_str(text).map_err(|e| e.message().to_string())?;
        t.validate()?;
        Ok(t)
    }

    /// The testbed as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Checks the values, with a message naming the bad one.
    pub fn validate(&self) -> Result<(), String> {
        if self.flows.is_empty() || self.flows.len() > MAX_FLOWS {
            return Err(format!("a dumbbell needs 1 to {MAX_FLOWS} flows"));
        }
        if self.packet_bytes < 92 || self.packet_bytes > 9000 {
            return Err(format!(
                "packet_bytes must be 92 to 9000, got {}",
                self.packet_bytes
            ));
        }
        for f in &self.flows {
            if f.vmss == 0 || f.controls == 0 || f.controls > 64 {
                return Err("a flow needs a VMSS above 0 and 1 to 64 control TCPs".into());
            }
        }
        self.link.validate()
    }

    /// Payload bytes of a full data segment.
    pub fn mss(&self) -> u32 {
        self.packet_bytes - 52
    }

    /// Builds the network; flows start at 0 (staggered by 1 ms each).
    pub fn build(&self, seed: u64) -> Result<Built<Host>, String> {
        self.validate()?;
        let mut hosts = |i: usize, data: Endpoints| self.hosts(&self.flows[i], data, i as u32);
        self.link.build(seed, self.flows.len(), &mut hosts)
    }

    /// The two hosts of flow `i`, of `flow`'s kind.
    fn hosts(&self, flow: &FlowSpec, data: Endpoints, i: u32) -> (Agent<Host>, Agent<Host>) {
        let iss = 1000 + 7919 * i;
        let receiver_config = ReceiverConfig {
            delayed_ack: true,
            sack: flow.kind != FlowKind::Reno,
            timestamps: true,
            ..ReceiverConfig::default()
        };
        let receiver = TcpReceiver::new(receiver_config, data.reversed(), iss);
        let variant = match flow.kind {
            FlowKind::Reno => TcpVariant::Reno,
            FlowKind::Sack => TcpVariant::Sack,
            FlowKind::Decoupling => return self.socket(flow, data, iss, receiver),
        };
        let config = SenderConfig {
            mss: self.mss(),
            max_window_segments: self.max_window,
            initial_window_segments: 1,
            initial_ssthresh_segments: 1 << 20,
            timestamps: true,
            rto: RtoConfig::coarse(),
            file_bytes: None,
        };
        let sender = TcpSender::new(config, variant.recovery(), data, iss);
        (
            Agent::Sender(Box::new(sender)),
            Agent::Receiver(Box::new(receiver)),
        )
    }

    /// The two hosts of a decoupling socket whose data TCP's receiver is `receiver`.
    fn socket(
        &self,
        flow: &FlowSpec,
        data: Endpoints,
        iss: u32,
        receiver: TcpReceiver,
    ) -> (Agent<Host>, Agent<Host>) {
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
        let sender = SocketSender::new(circuit, DataSender::new(data, iss, self.mss()), DATA_PORT);
        let receiver = SocketReceiver::new(receiver, DATA_PORT, control_receivers);
        (
            Agent::Custom(Host::Sender(Box::new(sender))),
            Agent::Custom(Host::Receiver(Box::new(receiver))),
        )
    }

    /// Runs for `warmup_s` then measures for `measure_s` seconds of simulated time.
    pub fn run(&self, seed: u64, warmup_s: f64, measure_s: f64) -> Result<Outcome, String> {
        let mut b = self.build(seed)?;
        let link = b.measure(warmup_s, measure_s);
        let end = b.net.now();
        let flows = (b.senders.iter().zip(&b.receivers).enumerate())
            .map(|(i, (&s, &r))| {
                let mut f = FlowResult {
                    goodput_bytes_per_s: link.goodput_bytes_per_s[i],
                    ..FlowResult::default()
                };
                if let Agent::Custom(Host::Sender(sender)) = &b.net.nodes[s].agent {
                    for c in &sender.circuit.controls {
                        f.control_window += c.mean_window(end);
                        f.header_packets += c.stats().header_packets - c.outstanding();
                    }
                }
                if let Agent::Custom(Host::Receiver(receiver)) = &b.net.nodes[r].agent {
                    let controls = receiver.controls.iter();
                    f.header_packets_received = controls.map(|(_, c)| c.header_packets).sum();
                }
                f
            })
            .collect();
        Ok(Outcome { link, flows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SECOND;

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
    fn a_toml_testbed_takes_the_paper_defaults() {
        let t = Testbed::from_toml(TESTBED).unwrap();
        assert_eq!(t.link.rate_bps, 10_000_000);
        assert_eq!((t.link.queue, t.packet_bytes, t.mss()), (50, 1500, 1448));
        assert_eq!(t.flows[0].vmss, 3000);
        assert_eq!(t.flows[1], FlowSpec::of(FlowKind::Reno));
        assert_eq!(Testbed::from_toml(&t.to_toml()).unwrap(), t);
    }

    #[test]
    fn bad_testbeds_are_refused_with_a_reason() {
        let bad = TESTBED.replace("ber = 2e-6", "ber = 2.0");
        assert!(Testbed::from_toml(&bad).unwrap_err().contains("ber"));
        let bad = TESTBED.replace("kind = \"reno\"", "kind = \"cubic\"");
        assert!(Testbed::from_toml(&bad).is_err());
        let bad = format!("scheme = \"nope\"\n{TESTBED}");
        assert!(Testbed::from_toml(&bad).unwrap_err().contains("scheme"));
    }

    #[test]
    fn every_flow_is_routed_both_ways() {
        let t = Testbed::from_toml(TESTBED).unwrap();
        let mut b = t.build(3).unwrap();
        b.net.run_until(2 * SECOND);
        assert_eq!(b.net.unroutable, 0);
        let got = b.delivered();
        assert!(got.iter().all(|&g| g > 0), "{got:?}");
    }
}
