//! The reproduction of Wang & Kung's evaluation on the simulator: suite 1 (aggregate goodput of
//! two connections against BER at RTT 10 ms), suite 2 (against RTT at BER 2e-6), the four
//! fairness cases of section 4.8.2, and the decoupling socket with each header-compression
//! codec on the lossy hop (section 10). Every figure is a run of a [`Testbed`].

use serde::Serialize;

use super::mat;
use super::testbed::{FlowKind, FlowSpec, Outcome, Testbed};
use crate::studies::run_all;
use crate::topology::Dumbbell;

/// Sizes of the testbed: 1500-byte data packets, 52-byte header packets, 10 Mbit/s.
pub const PACKET: f64 = 1500.0;
/// The header packet size (the paper's HP_Sz).
pub const HEADER: f64 = 52.0;
/// Link rate of every link, bit/s.
pub const RATE_BPS: u64 = 10_000_000;

/// How much to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effort {
    /// Seeds per point.
    pub seeds: u64,
    /// Simulated seconds measured per run (after a 2 s warm-up).
    pub seconds: f64,
    /// Fewer points.
    pub quick: bool,
}

impl Effort {
    /// `--quick`: one seed, 10 s, a few points.
    pub const QUICK: Effort = Effort {
        seeds: 1,
        seconds: 10.0,
        quick: true,
    };
    /// The full study: three seeds, 60 s, every point.
    pub const FULL: Effort = Effort {
        seeds: 3,
        seconds: 60.0,
        quick: false,
    };
}

/// What the study is asked to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// How much.
    pub effort: Effort,
    /// Worker threads (0: one per core).
    pub threads: usize,
}

/// One measured point (the JSON record of `taroc reproduce decoupling --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Always "decoupling".
    pub study: &'static str,
    /// 1, 2, "fairness", "codecs" or "appendix-b" (the suites 1 and 2 as JSON numbers).
    #[serde(serialize_with = "suite_json")]
    pub suite: String,
    /// reno, sack or decoupling (fairness: the case's flows).
    pub sender: String,
    /// Bit-error rate on C–D.
    pub ber: f64,
    /// RTT, ms.
    pub rtt_ms: f64,
    /// Rate of the lossy link C–D, bit/s.
    pub rate_bps: u64,
    /// Aggregate goodput of the flows, bytes/s (mean over seeds).
    pub goodput_bytes_per_s: f64,
    /// The paper's bound for the point (suite 1: link × (1 − PER); suite 2: section 8.3's, per
    /// connection), if it has one.
    pub bound_bytes_per_s: Option<f64>,
    /// Seeds run.
    pub seeds: u64,
    /// Each flow's goodput, bytes/s (mean over seeds).
    pub flows_bytes_per_s: Vec<f64>,
    /// Share of C → D's capacity on the wire.
    pub link_use: f64,
    /// Decoupling: the control TCPs' mean window, packets (per flow, summed, mean over seeds).
    pub control_window: f64,
    /// Decoupling: header packets lost between the control TCPs (bit errors, queue drops,
    /// decompressor refusals), as a fraction of those sent. Packets unacknowledged at the end
    /// are left out, so it is about ±0.001 off (shown as 0 when below).
    pub header_loss: f64,
    /// `codecs`: the scheme on C–D.
    pub scheme: Option<String>,
}

/// Writes a suite name that is a number as a JSON number.
fn suite_json<S: serde::Serializer>(suite: &str, s: S) -> Result<S::Ok, S::Error> {
    match suite.parse::<u8>() {
        Ok(n) => s.serialize_u8(n),
        Err(_) => s.serialize_str(suite),
    }
}

/// The testbed of section 8.1 with `flows`.
pub fn testbed(ber: f64, rtt_ms: f64, flows: Vec<FlowSpec>) -> Testbed {
    Testbed {
        link: Dumbbell {
            rate_bps: RATE_BPS,
            access_bps: None,
            rtt_ms,
            ber,
            queue: 100,
            discipline: Default::default(),
            scheme: "wire".into(),
        },
        packet_bytes: PACKET as u32,
        max_window: 64,
        tunnel: 10,
        flows,
    }
}

/// The fairness testbed of section 4.8.2: one 10 Mbit/s link, a 50-packet FIFO, RTT about 1 ms,
/// and windows of 11 packets (FreeBSD 2.2's 16 KB socket buffers; for a control TCP, 11 header
/// packets).
pub fn fairness_testbed(flows: Vec<FlowSpec>) -> Testbed {
    let mut t = testbed(0.0, 1.0, flows);
    t.link.queue = 50;
    t.max_window = 11;
    t
}

/// The four cases of section 4.8.2: (name, flows).
pub fn fairness_cases() -> Vec<(&'static str, Vec<FlowSpec>)> {
    let circuit = |vmss, controls| FlowSpec {
        vmss,
        controls,
        ..FlowSpec::of(FlowKind::Decoupling)
    };
    vec![
        ("case1 reno+reno", vec![FlowSpec::of(FlowKind::Reno); 2]),
        ("case2 vmss 1500/1500 ctl 1/1", vec![circuit(1500, 1); 2]),
        (
            "case3 vmss 1500/1500 ctl 2/1",
            vec![circuit(1500, 2), circuit(1500, 1)],
        ),
        (
            "case4 vmss 3000/1500 ctl 1/1",
            vec![circuit(3000, 1), circuit(1500, 1)],
        ),
    ]
}

/// Runs `d` over `effort`'s seeds and averages into a record.
pub fn measure(t: &Testbed, effort: Effort, suite: &str, sender: &str) -> Result<Record, String> {
    // The slow links of Appendix B carry few packets a second: ten times longer runs.
    let seconds = effort.seconds * if suite == "appendix-b" { 10.0 } else { 1.0 };
    let mut runs: Vec<Outcome> = Vec::new();
    for seed in 1..=effort.seeds {
        runs.push(t.run(seed, 2.0, seconds)?);
    }
    let d = &t.link;
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&Outcome) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let flows = (0..t.flows.len())
        .map(|i| mean(&|o| o.flows[i].goodput_bytes_per_s))
        .collect();
    let sent: u64 = runs
        .iter()
        .flat_map(|o| &o.flows)
        .map(|f| f.header_packets)
        .sum();
    let got: u64 = runs
        .iter()
        .flat_map(|o| &o.flows)
        .map(|f| f.header_packets_received)
        .sum();
    Ok(Record {
        study: "decoupling",
        suite: suite.into(),
        sender: sender.into(),
        ber: d.ber,
        rtt_ms: d.rtt_ms,
        rate_bps: d.rate_bps,
        goodput_bytes_per_s: mean(&|o| o.link.aggregate_bytes_per_s),
        bound_bytes_per_s: None,
        seeds: effort.seeds,
        flows_bytes_per_s: flows,
        link_use: mean(&|o| o.link.forward_wire_bytes_per_s) / (d.rate_bps as f64 / 8.0),
        control_window: mean(&|o| o.flows.iter().map(|f| f.control_window).sum::<f64>())
            / t.flows.len() as f64,
        header_loss: if sent == 0 {
            0.0
        } else {
            (1.0 - got as f64 / sent as f64).max(0.0)
        },
        scheme: (d.scheme != "wire").then(|| d.scheme.clone()),
    })
}

/// The BERs of suite 1.
pub fn suite1_bers(effort: Effort) -> Vec<f64> {
    if effort.quick {
        vec![1e-7, 2e-6, 1e-5]
    } else {
        vec![1e-7, 2e-7, 5e-7, 1e-6, 2e-6, 5e-6, 1e-5]
    }
}

/// The RTTs (ms) of suite 2.
pub fn suite2_rtts(effort: Effort) -> Vec<f64> {
    if effort.quick {
        vec![10.0, 100.0]
    } else {
        vec![10.0, 25.0, 50.0, 100.0, 150.0, 200.0]
    }
}

/// The senders compared in suites 1 and 2.
pub const SENDERS: [FlowKind; 3] = [FlowKind::Reno, FlowKind::Sack, FlowKind::Decoupling];

/// The codecs run with the decoupling socket on C–D (section 10); `none` frames each packet
/// with its kind byte, unlike the other runs' plain `wire`.
pub const CODECS: [&str; 5] = ["none", "vj", "iphc", "taroc", "taroc-plus"];

/// Every run of the study, in order: (suite, sender label, scenario).
pub fn plan(effort: Effort) -> Vec<(String, String, Testbed)> {
    let mut plan = Vec::new();
    for ber in suite1_bers(effort) {
        for kind in SENDERS {
            let d = testbed(ber, 10.0, vec![FlowSpec::of(kind); 2]);
            plan.push(("1".into(), kind.name().into(), d));
        }
    }
    for rtt in suite2_rtts(effort) {
        for kind in SENDERS {
            let d = testbed(2e-6, rtt, vec![FlowSpec::of(kind); 2]);
            plan.push(("2".into(), kind.name().into(), d));
        }
    }
    for (name, flows) in fairness_cases() {
        plan.push(("fairness".into(), name.into(), fairness_testbed(flows)));
    }
    for scheme in CODECS {
        let mut d = testbed(2e-6, 100.0, vec![FlowSpec::of(FlowKind::Decoupling); 2]);
        d.link.scheme = scheme.into();
        plan.push(("codecs".into(), "decoupling".into(), d));
    }
    for (rate, ber, mtu) in appendix_b_cells(effort) {
        for kind in [FlowKind::Reno, FlowKind::Decoupling] {
            for scheme in ["none", "taroc"] {
                let d = appendix_b_link(rate, ber, mtu, kind, scheme);
                plan.push(("appendix-b".into(), kind.name().into(), d));
            }
        }
    }
    plan
}

/// Runs every point of the plan, with its bound; `progress(done)` after each (from worker
/// threads). The first failing run's error, if any.
pub fn run(options: &Options, progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Record>, String> {
    let plan = plan(options.effort);
    let records = run_all(&plan, options.threads, progress, |(suite, sender, t)| {
        let mut r = measure(t, options.effort, suite, sender)?;
        r.bound_bytes_per_s = bound(suite, t.link.ber, t.link.rtt_ms);
        Ok(r)
    });
    records.into_iter().collect()
}

/// The TAROC draft's Appendix B cells asked about (link bit/s, BER, the draft's MTU for it).
pub fn appendix_b_cells(effort: Effort) -> Vec<(u64, f64, u32)> {
    let bers: &[(f64, u32)] = if effort.quick {
        &[(1e-6, 576), (1e-4, 168)]
    } else {
        &[
            (1e-7, 576),
            (1e-6, 576),
            (1e-5, 296),
            (1e-4, 168),
            (1e-3, 96),
        ]
    };
    let rates: &[u64] = if effort.quick {
        &[64_000]
    } else {
        &[384_000, 114_000, 64_000, 9_600]
    };
    rates
        .iter()
        .flat_map(|&r| bers.iter().map(move |&(b, m)| (r, b, m)))
        .collect()
}

/// One flow over an Appendix B link: 8 Mbit/s access links, 200 ms RTT (the draft's 100 ms
/// wired hop each way), a 6-packet router queue, 20-packet windows (NS-2's default), the
/// draft's MTU, `scheme` on the lossy link; for decoupling, VMSS = the MTU.
pub fn appendix_b_link(rate: u64, ber: f64, mtu: u32, kind: FlowKind, scheme: &str) -> Testbed {
    Testbed {
        link: Dumbbell {
            rate_bps: rate,
            access_bps: Some(8_000_000),
            rtt_ms: 200.0,
            ber,
            queue: 6,
            discipline: Default::default(),
            scheme: scheme.into(),
        },
        packet_bytes: mtu,
        max_window: 20,
        tunnel: 10,
        flows: vec![FlowSpec {
            vmss: mtu,
            ..FlowSpec::of(kind)
        }],
    }
}

/// The bound of a suite's point, as the paper draws it.
pub fn bound(suite: &str, ber: f64, rtt_ms: f64) -> Option<f64> {
    let link = mat::link_bound(RATE_BPS as f64, ber, PACKET, HEADER);
    match suite {
        "1" => Some(link),
        "2" => Some(mat::decoupling_bound(ber, HEADER, PACKET, rtt_ms / 1e3).min(link)),
        _ => None,
    }
}

/// The header packets of one control TCP, `n` of them from `iss + 1` advancing by `vmss`
/// (zero payload, timestamps, the CONTROL bit), as the compressor on C–D sees them.
pub fn header_packets(n: usize, vmss: u32) -> Vec<Vec<u8>> {
    use crate::tcp::segment::{self, Endpoints, SegmentSpec};
    use std::net::{IpAddr, Ipv4Addr};
    let ep = Endpoints {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
        src_port: 6001,
        dst_port: 6001,
    };
    (0..n)
        .map(|i| {
            let spec = SegmentSpec {
                seq: 1001u32.wrapping_add(i as u32 * vmss),
                ack: 1,
                flags: taroc_wire::tcp::flags::ACK,
                window: u16::MAX,
                timestamps: Some((i as u32 / 4, 7)),
                sack: &[],
                payload_len: 0,
                payload_offset: 0,
            };
            let mut p = Vec::new();
            segment::build(&ep, i as u16, &spec, &mut p);
            super::control::mark_control(&mut p);
            p
        })
        .collect()
}

/// Mean bytes on the wire of a header packet's frame under `scheme` (the frame kind byte
/// included), over a steady stream of 200 header packets after the first 10.
pub fn header_frame_bytes(scheme: &str) -> Option<f64> {
    use taroc_core::Compressor;
    let variant = taroc_core::variant::Variant::by_name(scheme)?;
    let mut c = variant.compressor();
    let mut frame = Vec::new();
    let mut total = 0usize;
    let packets = header_packets(210, 1500);
    for (i, p) in packets.iter().enumerate() {
        frame.clear();
        c.compress(p, &mut frame);
        if i >= 10 {
            total += frame.len() + 1;
        }
    }
    Some(total as f64 / 200.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_their_json_fields() {
        let d = fairness_testbed(vec![FlowSpec::of(FlowKind::Reno); 2]);
        let effort = Effort {
            seeds: 1,
            seconds: 0.5,
            quick: true,
        };
        let mut r = measure(&d, effort, "2", "reno").unwrap();
        r.bound_bytes_per_s = bound("2", 2e-6, 100.0);
        let json: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(json["study"], "decoupling");
        assert_eq!(json["suite"], 2);
        assert_eq!(json["sender"], "reno");
        for field in [
            "ber",
            "rtt_ms",
            "goodput_bytes_per_s",
            "bound_bytes_per_s",
            "seeds",
        ] {
            assert!(json[field].is_number(), "{field}: {json}");
        }
        r.suite = "fairness".into();
        assert_eq!(serde_json::to_value(&r).unwrap()["suite"], "fairness");
    }

    #[test]
    fn header_frames_shrink_under_every_compressing_codec() {
        let none = header_frame_bytes("none").unwrap();
        assert_eq!(none, 53.0);
        for scheme in ["vj", "iphc", "taroc", "taroc-plus"] {
            assert!(header_frame_bytes(scheme).unwrap() < 20.0, "{scheme}");
        }
        assert_eq!(header_frame_bytes("nope"), None);
    }
}
