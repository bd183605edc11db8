//! Running a [`Scenario`]: the network it builds (hosts, router, links, codecs), the run
//! itself and its [`Outcome`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

use serde::Serialize;
use taroc_core::taroc::issthresh_for_link;
use taroc_core::Variant;

use crate::event::{Time, MILLISECOND, SECOND};
use crate::link::{ErrorModel, LinkParams};
use crate::net::{Agent, Codec, LinkId, LinkStats, Network, Observer};
use crate::outage::OutageStats;
use crate::tcp::receiver::{ReceiverConfig, ReceiverStats, TcpReceiver};
use crate::tcp::rto::RtoConfig;
use crate::tcp::segment::Endpoints;
use crate::tcp::sender::{CwndPoint, SenderConfig, SenderStats, TcpSender};

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
    /// How long the data flow (router -> mobile) stayed broken by its decompressor.
    pub data_outages: OutageStats,
    /// How long the ACK flow (mobile -> router) stayed broken by its decompressor.
    pub ack_outages: OutageStats,
}

/// The link direction from the router to the mobile host: the data, compressed at the router.
pub const DATA_LINK: LinkId = 2;
/// The link direction from the mobile host to the router: the ACKs, compressed at the mobile
/// host.
pub const ACK_LINK: LinkId = 3;

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
        // Both TAROC profiles track the wireless link's segments and window.
        let (mss, issthresh) = (
            self.mss() as u32,
            issthresh_for_link(self.wireless_bps, self.wireless_delay_ms * 1000),
        );
        (variant.config.taroc.mss, variant.config.taroc.issthresh) = (mss, issthresh);
        (variant.config.plus.mss, variant.config.plus.issthresh) = (mss, issthresh);
        Some(variant)
    }

    fn codec(&self) -> Codec {
        if let Some(header) = ideal_header(&self.scheme) {
            return Codec::Ideal { header };
        }
        match self.variant() {
            Some(variant) => Codec::Real(Box::new(variant)),
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

    /// Builds the network (fixed host = node 0, router = 1, mobile host = 2; the wired link's
    /// directions 0 and 1, the wireless link's [`DATA_LINK`] and [`ACK_LINK`]).
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
        let [fr, rf] = net.add_duplex(f, r, [fr, rf], Codec::Wire);
        let [rm, mr] = net.add_duplex(r, m, [rm, mr], self.codec());
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

    /// Runs the scenario. With `trace: Some(seconds)`, records the sender's cwnd trace over the
    /// first `seconds` for a plot (in bounded memory, thinned evenly on long runs). Calls
    /// `progress` with the simulated seconds done, a hundred times over the run.
    pub fn run_with(
        &self,
        trace: Option<f64>,
        progress: &mut dyn FnMut(f64),
    ) -> Result<Outcome, String> {
        self.run_observed(trace, &mut (), progress)
    }

    /// The simulated time of the first `seconds` of the run (all of it at most).
    pub fn plotted(&self, seconds: f64) -> Time {
        let until = (self.duration_s * SECOND as f64) as Time;
        ((seconds.max(0.0) * SECOND as f64) as Time).min(until)
    }

    /// Runs the scenario as [`Scenario::run_with`] does, showing `observer` what it watches.
    pub fn run_observed(
        &self,
        trace: Option<f64>,
        observer: &mut dyn Observer,
        progress: &mut dyn FnMut(f64),
    ) -> Result<Outcome, String> {
        let start = Instant::now();
        let mut net = self.build()?;
        let until = (self.duration_s * SECOND as f64) as Time;
        if let Some(seconds) = trace {
            if let Agent::Sender(s) = &mut net.nodes[0].agent {
                s.enable_trace(self.plotted(seconds));
            }
        }
        // In steps, to report progress; the events run are the same as in one step.
        const STEPS: u64 = 100;
        for step in 1..=STEPS {
            let to = (u128::from(until) * u128::from(step) / u128::from(STEPS)) as Time;
            net.run_observed(to, observer);
            progress(self.duration_s * step as f64 / STEPS as f64);
        }
        Ok(outcome(
            &net,
            self.duration_s,
            start.elapsed().as_secs_f64(),
        ))
    }
}

fn outcome(net: &Network, duration_s: f64, wall_s: f64) -> Outcome {
    let now = Duration::from_nanos(net.now());
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
        data_link: net.links[DATA_LINK].stats,
        ack_link: net.links[ACK_LINK].stats,
        cwnd_trace,
        data_outages: net.links[DATA_LINK].outages.stats(now),
        ack_outages: net.links[ACK_LINK].outages.stats(now),
    }
}
