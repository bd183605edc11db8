//! The run of a scenario with TAROC's estimates traced, and the slides' case.

use super::{Accuracy, AccuracySums, EstimateTrace, EstimateTracer, TrackerPoint};
use crate::event::Time;
use crate::link::ErrorModel;
use crate::scenario::{Outcome, Scenario, ACK_LINK, DATA_LINK};
use crate::tcp::variant::TcpVariant;

/// The slides' case: 9.6 kbit/s, BER 1e-5, MTU 296, TCP SACK, TAROC, 1000 s, seed 1.
pub fn slides_case() -> Scenario {
    Scenario {
        wireless_bps: 9600,
        errors: ErrorModel::Ber { ber: 1e-5 },
        mtu: 296,
        tcp: TcpVariant::Sack,
        scheme: "taroc".into(),
        ..Scenario::default()
    }
}

/// A run of a scenario with TAROC's estimates traced on both wireless directions.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    /// The run's outcome, with the sender's cwnd trace over the plotted seconds.
    pub outcome: Outcome,
    /// TAROC's estimates at the router's compressor (data stream: Algorithm SEQ applies), over
    /// the plotted seconds.
    pub data_estimates: Vec<TrackerPoint>,
    /// TAROC's estimates at the mobile host's compressor (ACK stream: Algorithm ACK applies),
    /// over the plotted seconds.
    pub ack_estimates: Vec<TrackerPoint>,
    /// How close Algorithm SEQ's estimates (data stream) were to the sender's window over the
    /// whole run.
    pub seq_accuracy: Accuracy,
    /// How close Algorithm ACK's estimates (ACK stream) were to the sender's window over the
    /// whole run.
    pub ack_accuracy: Accuracy,
}

/// Runs `scenario`, recording the sender's cwnd trace and TAROC's estimates (both wireless
/// directions) over the first `plotted_s` seconds for a plot (in bounded memory, thinned evenly
/// on long runs), and the estimates' accuracy over the whole run. Calls `progress` with the
/// simulated seconds done, a hundred times over the run.
pub fn run(
    scenario: &Scenario,
    plotted_s: f64,
    progress: &mut dyn FnMut(f64),
) -> Result<Tracked, String> {
    let plotted = scenario.plotted(plotted_s);
    let mut tracer = EstimateTracer::new(&[DATA_LINK, ACK_LINK], plotted);
    let outcome = scenario.run_observed(Some(plotted_s), &mut tracer, progress)?;
    let points = |link| tracer.trace(link).map(|t| t.points.points().to_vec());
    let accuracy = |link, pick: fn(&EstimateTrace) -> &AccuracySums| {
        tracer.trace(link).map(|t| pick(t).accuracy())
    };
    Ok(Tracked {
        outcome,
        data_estimates: points(DATA_LINK).unwrap_or_default(),
        ack_estimates: points(ACK_LINK).unwrap_or_default(),
        seq_accuracy: accuracy(DATA_LINK, |t| &t.seq).unwrap_or_default(),
        ack_accuracy: accuracy(ACK_LINK, |t| &t.ack).unwrap_or_default(),
    })
}

/// Algorithm SEQ's estimates from the data stream.
pub fn seq_estimates(t: &Tracked) -> impl Iterator<Item = (Time, u32, u32)> + '_ {
    t.data_estimates
        .iter()
        .map(|p| (p.time_ns, p.seq_cwnd, p.seq_ssthresh))
}

/// Algorithm ACK's estimates from the ACK stream.
pub fn ack_estimates(t: &Tracked) -> impl Iterator<Item = (Time, u32, u32)> + '_ {
    t.ack_estimates
        .iter()
        .map(|p| (p.time_ns, p.ack_cwnd, p.ack_ssthresh))
}
