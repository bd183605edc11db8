//! Running a [`Scenario`]: the network it builds (hosts, router, links, codecs), the run
//! itself and its [`Outcome`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use serde::Serialize;
use taroc_core::taroc::issthresh_for_link;
use taroc_core::Variant;

use crate::event::{Time, MILLISECOND, SECOND};
use crate::link::{ErrorModel, LinkParams};
use crate::net::{Agent, Codec, EstimateTrace, LinkStats, Network, TrackerPoint};
use crate::outage::OutageStats;
use crate::tcp::receiver::{ReceiverConfig, ReceiverStats, TcpReceiver};
use crate::tcp::rto::RtoConfig;
use crate::tcp::segment::Endpoints;
use crate::tcp::sender::{CwndPoint, SenderConfig, SenderStats, TcpSender};
use crate::tracking::Accuracy;

use super::{ideal_header, Scenario};

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Application bytes delivered in order per simulated second.
    pub goodput_bytes_per_s: f64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
    /// The sender's counters.
    pub sender: SenderStats,
    /// The receiver's counters.
    pub receiver: ReceiverStats,
    /// The data direction of the wireless link (router -> mobile).
    pub data_link: LinkStats,
    /// The ACK direction of the wireless link (mobile -> router).
    pub ack_link: LinkStats,
    /// The sender's cwnd trace over the plotted seconds, if asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cwnd_trace: Vec<CwndPoint>,
    /// TAROC's estimates at the router's compressor (data stream: Algorithm SEQ applies), if
    /// asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub data_estimates: Vec<TrackerPoint>,
    /// How long the data flow (router -> mobile) stayed broken by its decompressor.
    pub data_outages: OutageStats,
    /// How long the ACK flow (mobile -> router) stayed broken by its decompressor.
    pub ack_outages: OutageStats,
    /// TAROC's estimates at the mobile host's compressor (ACK stream: Algorithm ACK applies),
    /// if asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ack_estimates: Vec<TrackerPoint>,
    /// How close Algorithm SEQ's estimates (data stream) were to the sender's window over the
    /// whole run, if traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_accuracy: Option<Accuracy>,
    /// How close Algorithm ACK's estimates (ACK stream) were to the sender's window over the
    /// whole run, if traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_accuracy: Option<Accuracy>,
}

impl Scenario {
    pub(super) fn links(&self) -> [(&'static str, LinkParams); 4] {
        let wired = |queue| LinkParams {
            rate_bps: self.wired_bps,
            delay_ns: self.wired_delay_ms * MILLISECOND,
            queue_limit: queue,
            errors: ErrorModel::None,
        };
        let wireless = |queue, errors| LinkParams {
            rate_bps: self.wireless_bps,
            delay_ns: self.wireless_delay_ms * MILLISECOND,
            queue_limit: queue,
            errors,
        };
        let ack_errors = if self.errors_on_ack_path {
            self.errors
        } else {
            ErrorModel::None
        };
        [
            ("fixed->router", wired(self.host_queue)),
            ("router->fixed", wired(self.router_queue)),
            ("router->mobile", wireless(self.router_queue, self.errors)),
            ("mobile->router", wireless(self.host_queue, ack_errors)),
        ]
    }

    /// The codec variant of the wireless link with this scenario's settings (none for IDEAL).
    fn variant(&self) -> Option<Variant> {
        if ideal_header(&self.scheme).is_some() {
            return None;
        }
        let mut variant = Variant::by_name(&self.scheme)?;
        if self.scheme == "iphc" && !self.iphc_twice {
            // The draft's IPHC: RFC 2507 with header requests, without the twice algorithm.
            variant.config.iphc.twice = false;
        }
        variant.config.taroc.mss = self.mss() as u32;
        variant.config.taroc.issthresh =
            issthresh_for_link(self.wireless_bps, self.wireless_delay_ms * 1000);
        Some(variant)
    }

    fn codec(&self) -> Codec {
        if let Some(header) = ideal_header(&self.scheme) {
            return Codec::Ideal { header };
        }
        match self.variant() {
            Some(variant) => Codec::Real {
                compressor: Box::new(variant.compressor()),
                decompressor: Box::new(variant.decompressor()),
            },
            None => Codec::Wire,
        }
    }

    /// The addresses of the fixed host, the router and the mobile host.
    pub fn addresses(&self) -> [IpAddr; 3] {
        if self.ipv6 {
            [1u16, 2, 3].map(|i| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, i)))
        } else {
            [1u8, 2, 3].map(|i| IpAddr::V4(Ipv4Addr::new(10, 0, 0, i)))
        }
    }

    /// Builds the network (fixed host = node 0, router = 1, mobile host = 2).
    pub fn build(&self) -> Result<Network, String> {
        self.validate()?;
        let [fixed, router, mobile] = self.addresses();
        let ep = Endpoints {
            src: fixed,
            dst: mobile,
            src_port: 20,
            dst_port: 5001,
        };
        let iss = (self.seed as u32).wrapping_mul(2_654_435_761);
        let sender = TcpSender::new(
            SenderConfig {
                mss: self.mss() as u32,
                max_window_segments: self.max_window_segments,
                timestamps: self.timestamps,
                rto: RtoConfig {
                    min_ns: self.min_rto_ms * MILLISECOND,
                    backoff: self.rto_backoff,
                    ..RtoConfig::default()
                },
                ..SenderConfig::default()
            },
            self.tcp.recovery(),
            ep,
            iss,
        );
        let receiver = TcpReceiver::new(
            ReceiverConfig {
                delayed_ack: self.delayed_ack,
                sack: self.tcp.uses_sack(),
                timestamps: self.timestamps,
                ..ReceiverConfig::default()
            },
            ep.reversed(),
            iss,
        );
        let mut net = Network::new(self.seed);
        net.tunnel = self.tunnel;
        let f = net.add_node(fixed, Agent::Sender(Box::new(sender)));
        let r = net.add_node(router, Agent::None);
        let m = net.add_node(mobile, Agent::Receiver(Box::new(receiver)));
        let [fr, rf, rm, mr] = self.links().map(|(_, p)| p);
        let fr = net.add_link(fr, r, Codec::Wire);
        let rf = net.add_link(rf, f, Codec::Wire);
        let rm = net.add_link(rm, m, self.codec());
        let mr = net.add_link(mr, r, self.codec());
        net.pair(fr, rf);
        net.pair(rm, mr);
        net.route(f, mobile, fr);
        net.route(r, mobile, rm);
        net.route(r, fixed, rf);
        net.route(m, fixed, mr);
        net.start_agent(f, 0);
        if let (Some(at), Some(variant)) = (self.decompressor_reset_s, self.variant()) {
            let at = (at * SECOND as f64) as Time;
            net.schedule_decompressor_reset(rm, at, variant.decompressor());
            net.schedule_decompressor_reset(mr, at, variant.decompressor());
        }
        Ok(net)
    }

    /// Runs the scenario.
    pub fn run(&self) -> Result<Outcome, String> {
        self.run_with(None, &mut |_| {})
    }

    /// Runs the scenario. With `trace: Some(seconds)`, records the sender's cwnd trace and
    /// TAROC's estimates (both wireless directions) over the first `seconds` for a plot (in
    /// bounded memory, thinned evenly on long runs), and the estimates' accuracy over the whole
    /// run. Calls `progress` with the simulated seconds done, a hundred times over the run.
    pub fn run_with(
        &self,
        trace: Option<f64>,
        progress: &mut dyn FnMut(f64),
    ) -> Result<Outcome, String> {
        let start = Instant::now();
        let mut net = self.build()?;
        let until = (self.duration_s * SECOND as f64) as Time;
        if let Some(seconds) = trace {
            let plotted = ((seconds.max(0.0) * SECOND as f64) as Time).min(until);
            if let Agent::Sender(s) = &mut net.nodes[0].agent {
                s.enable_trace(plotted);
            }
            net.trace_estimates(2, plotted);
            net.trace_estimates(3, plotted);
        }
        // In steps, to report progress; the events run are the same as in one step.
        const STEPS: u64 = 100;
        for step in 1..=STEPS {
            let to = (u128::from(until) * u128::from(step) / u128::from(STEPS)) as Time;
            net.run_until(to);
            progress(self.duration_s * step as f64 / STEPS as f64);
        }
        Ok(outcome(
            &net,
            self.duration_s,
            start.elapsed().as_secs_f64(),
        ))
    }
}

/// The plotted points of an estimate trace.
fn points(trace: &Option<EstimateTrace>) -> Vec<TrackerPoint> {
    trace
        .as_ref()
        .map_or_else(Vec::new, |t| t.points.points().to_vec())
}

fn outcome(net: &Network, duration_s: f64, wall_s: f64) -> Outcome {
    let (sender, cwnd_trace) = match &net.nodes[0].agent {
        Agent::Sender(s) => (s.stats(), s.trace().to_vec()),
        _ => (SenderStats::default(), Vec::new()),
    };
    let receiver = match &net.nodes[2].agent {
        Agent::Receiver(r) => r.stats(),
        _ => ReceiverStats::default(),
    };
    Outcome {
        goodput_bytes_per_s: receiver.delivered_bytes as f64 / duration_s,
        events: net.events(),
        wall_s,
        sender,
        receiver,
        data_link: net.links[2].stats,
        ack_link: net.links[3].stats,
        cwnd_trace,
        data_outages: net.links[2].outages.stats(Duration::from_nanos(net.now())),
        ack_outages: net.links[3].outages.stats(Duration::from_nanos(net.now())),
        data_estimates: points(&net.links[2].estimates),
        ack_estimates: points(&net.links[3].estimates),
        seq_accuracy: net.links[2].estimates.as_ref().map(|e| e.seq.accuracy()),
        ack_accuracy: net.links[3].estimates.as_ref().map(|e| e.ack.accuracy()),
    }
}
