//! The tracking plot: the sender's window beside each algorithm's estimates.

use super::{ack_estimates, seq_estimates, Accuracy, Tracked};
use crate::event::{Time, SECOND};
use crate::link::ErrorModel;
use crate::plot::{self, Axis, Panel, Series};
use crate::scenario::Scenario;
use crate::thin::TRACE_POINTS;

/// Points of a plot: (seconds, segments).
type Points = Vec<(f64, f64)>;

/// What both panels share: the window plotted, the scales, the sender's traces.
struct Frame {
    /// The end of the window plotted, s.
    end_s: f64,
    /// Bytes per segment.
    mss: f64,
    /// The sender's largest window, segments.
    window: f64,
    /// The top of the y-axis, segments.
    top: f64,
    /// Whether a trace was thinned.
    thinned: bool,
    /// The sender's cwnd, held to the window's end.
    sender_cwnd: Points,
    /// The sender's ssthresh from its first loss, held to the window's end.
    sender_ss: Points,
}

/// The tracking plot of a traced run ([`super::run`]): two panels (Algorithm SEQ,
/// Algorithm ACK), each with the sender's cwnd and ssthresh and the estimates, in segments,
/// over the first `window_s` simulated seconds (all of the run if None).
pub fn svg(scenario: &Scenario, t: &Tracked, window_s: Option<f64>) -> String {
    let o = &t.outcome;
    let mss = scenario.mss().max(1) as f64;
    let end_s = window_s
        .unwrap_or(scenario.duration_s)
        .min(scenario.duration_s);
    let end = (end_s * SECOND as f64) as Time;
    let (sender_cwnd, sender_ss) = sender_traces(t, end_s, mss);
    let window = f64::from(scenario.max_window_segments);
    let in_window = |est: &[(Time, u32, u32)], pick: fn(&(Time, u32, u32)) -> u32| {
        est.iter()
            .filter(|e| e.0 <= end)
            .map(|e| (seconds(e.0), f64::from(pick(e)) / mss))
            .collect::<Points>()
    };
    let seq: Vec<_> = seq_estimates(t).collect();
    let ack: Vec<_> = ack_estimates(t).collect();
    let series = [&seq, &ack].map(|est| (in_window(est, |e| e.1), in_window(est, |e| e.2)));
    // One y-axis for both panels, fitted to every series drawn, so no estimate is cut off.
    let top = series
        .iter()
        .flat_map(|(cwnd, ss)| cwnd.iter().chain(ss))
        .chain(sender_cwnd.iter().chain(&sender_ss))
        .map(|p| p.1)
        .filter(|y| y.is_finite())
        .fold(window, f64::max)
        * 1.08;
    let [(seq_cwnd, seq_ss), (ack_cwnd, ack_ss)] = series;
    let frame = Frame {
        end_s,
        mss,
        window,
        top,
        thinned: o.cwnd_trace.len().max(seq.len()).max(ack.len()) >= TRACE_POINTS / 2,
        sender_cwnd,
        sender_ss,
    };
    let title = format!(
        "Congestion-window tracking: {} kbit/s, BER {:e}, MTU {}, TCP {}, {}, seed {}",
        scenario.wireless_bps as f64 / 1000.0,
        match scenario.errors {
            ErrorModel::Ber { ber } => ber,
            _ => f64::NAN,
        },
        scenario.mtu,
        scenario.tcp.name(),
        scenario.scheme,
        scenario.seed
    );
    plot::svg(
        &title,
        &[
            panel(
                &frame,
                ["Data stream (router)", "Algorithm SEQ"],
                [seq_cwnd, seq_ss],
                t.seq_accuracy,
            ),
            panel(
                &frame,
                ["ACK stream (mobile host)", "Algorithm ACK"],
                [ack_cwnd, ack_ss],
                t.ack_accuracy,
            ),
        ],
    )
}

/// Simulated time in seconds.
fn seconds(t: Time) -> f64 {
    t as f64 / SECOND as f64
}

/// The sender's cwnd and ssthresh over the first `end_s` seconds, in segments of `mss` bytes,
/// each held at its last value to the end.
fn sender_traces(t: &Tracked, end_s: f64, mss: f64) -> (Points, Points) {
    let trace = &t.outcome.cwnd_trace;
    let end = (end_s * SECOND as f64) as Time;
    let sender_cwnd: Points = trace
        .iter()
        .filter(|p| p.time_ns <= end)
        .map(|p| (seconds(p.time_ns), p.cwnd as f64 / mss))
        .chain(std::iter::once((end_s, f64::NAN)))
        .collect();
    // Before its first loss the sender's ssthresh is its arbitrary initial value (unbounded in
    // effect): drawn from the first loss on.
    let initial_ssthresh = trace.first().map(|p| p.ssthresh);
    let sender_ss: Points = trace
        .iter()
        .skip_while(|p| Some(p.ssthresh) == initial_ssthresh)
        .filter(|p| p.time_ns <= end)
        .map(|p| (seconds(p.time_ns), p.ssthresh as f64 / mss))
        .collect();
    // Hold the last values to the end of the window.
    let hold = |mut v: Points| {
        if let Some(&(_, y)) = v.iter().rev().find(|(_, y)| y.is_finite()) {
            v.retain(|(_, y)| y.is_finite());
            v.push((end_s, y));
        }
        v
    };
    (hold(sender_cwnd), hold(sender_ss))
}

/// One algorithm's panel: `[name, algo]` its stream and algorithm, `[cwnd, ss]` its
/// estimates, `acc` their accuracy over the whole run.
fn panel(frame: &Frame, [name, algo]: [&str; 2], [cwnd, ss]: [Points; 2], acc: Accuracy) -> Panel {
    let step = |s: Series| Series { step: true, ..s };
    let mut notes = vec![format!("Over the whole run: {}.", acc.summary())];
    if frame.thinned {
        notes.push(format!(
            "Long run: the plotted traces are thinned evenly to at most {TRACE_POINTS} points each \
             (the figures above count every estimate)."
        ));
    }
    let (end_s, window) = (frame.end_s, frame.window);
    Panel {
        title: format!("{name}: the sender's window beside {algo}'s estimate"),
        x: Axis::linear("time (s)", 0.0, end_s),
        y: Axis::linear(
            &format!("segments (MSS {} bytes)", frame.mss),
            0.0,
            frame.top,
        ),
        series: vec![
            Series {
                dashed: true,
                width: 1.0,
                ..Series::line(
                    "max window",
                    "#999999",
                    vec![(0.0, window), (end_s, window)],
                )
            },
            step(Series::line(
                "sender cwnd",
                "#000000",
                frame.sender_cwnd.clone(),
            )),
            step(Series {
                dashed: true,
                ..Series::line("sender ssthresh", "#000000", frame.sender_ss.clone())
            }),
            step(Series {
                width: 1.3,
                ..Series::line(&format!("{algo} cwnd"), "#d62728", cwnd)
            }),
            step(Series {
                dashed: true,
                width: 1.3,
                ..Series::line(&format!("{algo} ssthresh"), "#1f77b4", ss)
            }),
        ],
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::tracking::{run, slides_case};

    #[test]
    fn estimates_follow_the_sender() {
        let s = Scenario {
            duration_s: 120.0,
            ..slides_case()
        };
        let t = run(&s, 120.0, &mut |_| {}).unwrap();
        assert!(!t.outcome.cwnd_trace.is_empty());
        assert!(t.data_estimates.len() as u64 >= t.outcome.data_link.frames / 2);
        assert!(!t.ack_estimates.is_empty());
        let (seq, ack) = (t.seq_accuracy, t.ack_accuracy);
        assert!(seq.samples > 100 && ack.samples > 100);
        assert_eq!(seq.samples, t.data_estimates.len());
        assert!(seq.cwnd_mean_rel_error < 1.0, "{seq:?}");
        assert!(ack.cwnd_mean_rel_error < 1.0, "{ack:?}");
        let svg = svg(&s, &t, Some(60.0));
        assert!(svg.contains("Algorithm SEQ cwnd") && svg.contains("Algorithm ACK ssthresh"));
        assert!(!svg.contains("NaN"));
        // Other schemes record no estimates, and the plot still renders.
        let none = Scenario {
            scheme: "none".into(),
            ..s.clone()
        };
        let t = run(&none, 120.0, &mut |_| {}).unwrap();
        assert!(t.data_estimates.is_empty());
        assert!(svg_ok(&super::svg(&none, &t, None)));
    }

    fn svg_ok(s: &str) -> bool {
        s.starts_with("<svg") && s.ends_with("</svg>\n") && !s.contains("NaN")
    }

    /// The y-axis is fitted to every series drawn: the largest estimate (or sender value) in the
    /// window is inside the plot, near its top.
    #[test]
    fn the_y_axis_fits_every_series() {
        let s = Scenario {
            duration_s: 200.0,
            ..slides_case()
        };
        let mut t = run(&s, 200.0, &mut |_| {}).unwrap();
        // An estimate far above the sender's window (as after a misread) must still be drawn.
        let mss = s.mss() as u32;
        t.data_estimates[10].seq_cwnd = 300 * mss;
        let text = svg(&s, &t, None);
        let labels: Vec<f64> = text
            .lines()
            .filter(|l| l.contains("text-anchor=\"end\""))
            .filter_map(|l| l.split('>').nth(1)?.split('<').next()?.parse().ok())
            .collect();
        let highest = labels.iter().copied().fold(0.0, f64::max);
        assert!(
            (300.0..=400.0).contains(&highest),
            "y ticks {labels:?} do not reach the 300-segment estimate"
        );
    }

    /// A long traced run keeps at most TRACE_POINTS points per series, while its accuracy
    /// counts every estimate.
    #[test]
    fn a_long_traced_run_stays_bounded() {
        let s = Scenario {
            duration_s: 3_000.0,
            ..slides_case()
        };
        let t = run(&s, 3_000.0, &mut |_| {}).unwrap();
        let seq = t.seq_accuracy;
        assert!(seq.samples > TRACE_POINTS, "{seq:?}");
        for len in [
            t.outcome.cwnd_trace.len(),
            t.data_estimates.len(),
            t.ack_estimates.len(),
        ] {
            assert!(len > TRACE_POINTS / 4 && len <= TRACE_POINTS, "{len}");
        }
        assert!(svg(&s, &t, None).contains("thinned evenly"));
    }
}
