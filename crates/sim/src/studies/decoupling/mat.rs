//! The analysis of Wang & Kung, sections 3, 4.8.3, 7 and 8.3: how a bit-error rate caps an
//! idealized TCP connection's window (W) and throughput (MAT), the goodput bound they quote for
//! the decoupling socket, and the control packets' overhead.
//!
//! Equations as the paper writes them (its own numbers do not all follow from them; see
//! `docs/decoupling-interpretations.md`):
//!
//! 1. `PER = BER · PS · 8` (the first-order approximation of `1 − (1 − BER)^(8·PS)`),
//! 2. `1/PER = (3/8)·W² + 3W/4`, solved for the positive root W,
//! 3. `MAT = (3/4)·W·PS/RTT + (3/2)·PS/RTT` (per second, in the unit of PS: bytes here; the
//!    paper multiplies by 8 for bit/s in section 3 and does not in section 8.3).

/// Packet error rate of equation (1): `BER · bytes · 8`, capped at 1.
pub fn per(ber: f64, packet_bytes: f64) -> f64 {
    (ber * packet_bytes * 8.0).min(1.0)
}

/// The maximum allowable window of equation (2), in packets: the positive root of
/// `(3/8)·W² + (3/4)·W − 1/PER = 0`. Infinite when `per` is 0.
pub fn window(per: f64) -> f64 {
    if per <= 0.0 {
        return f64::INFINITY;
    }
    let (a, b, c) = (3.0 / 8.0, 3.0 / 4.0, -1.0 / per);
    (-b + (b * b - 4.0 * a * c).sqrt()) / (2.0 * a)
}

/// The maximum allowable throughput of equation (3) in bytes per second, for a window of `w`
/// packets of `packet_bytes` bytes and a round-trip time of `rtt_s` seconds.
pub fn mat_bytes_per_s(w: f64, packet_bytes: f64, rtt_s: f64) -> f64 {
    0.75 * w * packet_bytes / rtt_s + 1.5 * packet_bytes / rtt_s
}

/// Section 8.3's goodput bound of the decoupling socket: equation (3) with the header packets'
/// W (rounded to whole packets, as the paper does) and data packets of `data_bytes`, less the
/// data packets' own loss (`1 − PER(data)`) and the header packets' share of the bytes
/// (`1 − header/data`, the overhead of section 4.8.3).
pub fn decoupling_bound(ber: f64, header_bytes: f64, data_bytes: f64, rtt_s: f64) -> f64 {
    let w = window(per(ber, header_bytes)).round();
    let mat = mat_bytes_per_s(w, data_bytes, rtt_s);
    mat * (1.0 - per(ber, data_bytes)) * (1.0 - header_bytes / data_bytes)
}

/// Section 8.2's bound for any TCP scheme on a link of `rate_bps`: its goodput (payload bytes of
/// `packet_bytes`-byte packets with `header_bytes` of headers) times `1 − PER(packet)`, with the
/// exact PER `1 − (1 − BER)^bits` so that it stays positive at high BERs.
pub fn link_bound(rate_bps: f64, ber: f64, packet_bytes: f64, header_bytes: f64) -> f64 {
    let per = crate::link::frame_error_probability(ber, packet_bytes as u64 * 8);
    rate_bps / 8.0 * (packet_bytes - header_bytes) / packet_bytes * (1.0 - per)
}

/// Section 4.8.3: the header packets' overhead (`HP_Sz / VMSS`) and the ACKs' (half of it: one
/// ACK per two header packets), as fractions.
pub fn overhead(header_bytes: f64, vmss: f64) -> (f64, f64) {
    let headers = header_bytes / vmss;
    (headers, headers / 2.0)
}

/// One analysed case: what `taroc mat` prints for a BER, packet size and RTT.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Analysis {
    /// Bit-error rate.
    pub ber: f64,
    /// Packet size, bytes.
    pub packet_bytes: f64,
    /// Round-trip time, seconds.
    pub rtt_s: f64,
    /// Equation (1).
    pub per: f64,
    /// Equation (2), unrounded.
    pub window: f64,
    /// Equation (3) with the unrounded window, bytes/s.
    pub mat_bytes_per_s: f64,
    /// Equation (3) with the window rounded to whole packets (as the paper does), bytes/s.
    pub mat_rounded_bytes_per_s: f64,
}

impl Analysis {
    /// Solves equations 1–3 for one case.
    pub fn of(ber: f64, packet_bytes: f64, rtt_s: f64) -> Analysis {
        let per = per(ber, packet_bytes);
        let window = window(per);
        Analysis {
            ber,
            packet_bytes,
            rtt_s,
            per,
            window,
            mat_bytes_per_s: mat_bytes_per_s(window, packet_bytes, rtt_s),
            mat_rounded_bytes_per_s: mat_bytes_per_s(window.round(), packet_bytes, rtt_s),
        }
    }
}

/// A worked case of the paper: where, its inputs, and the figure it states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkedCase {
    /// Where in the paper.
    pub section: &'static str,
    /// Bit-error rate.
    pub ber: f64,
    /// Packet size for PER and W, bytes.
    pub packet_bytes: f64,
    /// Round-trip time, seconds.
    pub rtt_s: f64,
    /// The window the paper states.
    pub stated_window: f64,
    /// What the paper states as the result, in its words.
    pub stated: &'static str,
}

/// The paper's worked cases (sections 3, 7 and 8.3).
pub const WORKED_CASES: [WorkedCase; 3] = [
    WorkedCase {
        section: "3, eq. 4",
        ber: 3e-5,
        packet_bytes: 576.0,
        rtt_s: 0.540,
        stated_window: 4.0,
        stated: "PER 0.14, W about 4, MAT 26 kbit/s",
    },
    WorkedCase {
        section: "7",
        ber: 3e-5,
        packet_bytes: 52.0,
        rtt_s: 0.540,
        stated_window: 14.0,
        stated: "W 14; MAT 119 kbit/s with 576-byte packets",
    },
    WorkedCase {
        section: "8.3",
        ber: 2e-6,
        packet_bytes: 52.0,
        rtt_s: 0.100,
        stated_window: 56.0,
        stated: "PER 0.0008, W 56; MAT 652,500 B/s with 1500-byte packets, bound ~615 KB/s",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// `x` rounded to three significant digits.
    fn sig3(x: f64) -> f64 {
        let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
        (x * scale).round() / scale
    }

    #[test]
    fn equation_one_is_linear_in_size() {
        assert_eq!(sig3(per(3e-5, 576.0)), 0.138);
        assert_eq!(sig3(per(2e-6, 52.0)), 0.000832);
        assert_eq!(sig3(per(2e-6, 1500.0)), 0.024);
        assert_eq!(per(1e-2, 1500.0), 1.0);
    }

    #[test]
    fn equation_two_solves_the_window() {
        let w = window(per(3e-5, 576.0));
        assert!((1.0 / per(3e-5, 576.0) - (0.375 * w * w + 0.75 * w)).abs() < 1e-9);
        assert_eq!(sig3(w), 3.5);
        assert_eq!(window(per(3e-5, 52.0)).round(), 14.0);
        assert_eq!(window(per(2e-6, 52.0)).round(), 56.0);
        assert!(window(0.0).is_infinite());
    }

    #[test]
    fn equation_three_gives_the_section_8_mat() {
        assert_eq!(mat_bytes_per_s(56.0, 1500.0, 0.1), 652_500.0);
        // Section 3's W = 4: 38.4 kbit/s, of which the first term is the stated 26 (25.6).
        assert_eq!(sig3(mat_bytes_per_s(4.0, 576.0, 0.54) * 8.0), 38_400.0);
        assert_eq!(sig3(0.75 * 4.0 * 576.0 * 8.0 / 0.54), 25_600.0);
        // Section 7's W = 14: 102 kbit/s; the stated 119 is W·PS·8/RTT.
        assert_eq!(sig3(mat_bytes_per_s(14.0, 576.0, 0.54) * 8.0), 102_000.0);
        assert_eq!(sig3(14.0 * 576.0 * 8.0 / 0.54), 119_000.0);
    }

    #[test]
    fn section_eight_bound_is_615_kb_per_s() {
        assert_eq!(sig3(decoupling_bound(2e-6, 52.0, 1500.0, 0.1)), 615_000.0);
    }

    #[test]
    fn overheads_of_section_4_8_3() {
        let (h, a) = overhead(52.0, 1500.0);
        assert_eq!(sig3(h * 100.0), 3.47);
        assert_eq!(sig3(a * 100.0), 1.73);
    }

    #[test]
    fn link_bound_falls_with_ber() {
        let clean = link_bound(10e6, 0.0, 1500.0, 52.0);
        assert_eq!(sig3(clean), 1_210_000.0);
        assert!(link_bound(10e6, 2e-6, 1500.0, 52.0) < clean);
    }

    #[test]
    fn worked_cases_match_their_stated_windows() {
        for case in WORKED_CASES {
            let a = Analysis::of(case.ber, case.packet_bytes, case.rtt_s);
            assert!((a.window - case.stated_window).abs() <= 0.5, "{case:?}");
        }
    }
}
