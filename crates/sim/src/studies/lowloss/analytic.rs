//! The paper's analytic results, computed: Figure 4 (average header size with a full header
//! every x-th packet), Figure 5 (bandwidth efficiency), Figure 6 and section 3.5 (packet loss
//! rate against the bit-error rate, and how much compression lowers it) and Figure 13 (the WLAN
//! topology's segments between losses and loss rate with a constant 50 KB window).

/// Section 3.3's full header of UDP/IPv6, bytes (`H`).
pub const FULL_HEADER: f64 = 48.0;
/// Section 3.3's compressed header, bytes (`C`).
pub const COMPRESSED_HEADER: f64 = 4.0;
/// Figure 5's payload, bytes (`D`: 20 ms of GSM audio).
pub const GSM_PAYLOAD: f64 = 36.0;
/// The tunnelling IPv6 header section 3.5 adds, bytes.
pub const TUNNEL_HEADER: f64 = 40.0;

/// Figure 4: the average header size, bytes, when every `x`-th header is a full one of `h`
/// bytes and the others are compressed ones of `c` bytes (`x` ≥ 1).
pub fn average_header(h: f64, c: f64, x: f64) -> f64 {
    (h + (x - 1.0) * c) / x
}

/// Section 3.3's example: how many *bits* the average header exceeds the compressed one by when
/// 256 compressed headers follow every full header (a full header every 257th packet).
pub fn refresh_cost_bits() -> f64 {
    (average_header(FULL_HEADER, COMPRESSED_HEADER, 257.0) - COMPRESSED_HEADER) * 8.0
}

/// Figure 5: the bandwidth efficiency (the share of the bytes sent that is data) with `d` bytes
/// of data per packet and a full header every `x`-th packet.
pub fn efficiency(h: f64, c: f64, d: f64, x: f64) -> f64 {
    d / (d + average_header(h, c, x))
}

/// Figure 6: the probability that a packet of `bytes` bytes is hit by at least one bit error
/// when bits are damaged independently with probability `ber`.
pub fn packet_loss(ber: f64, bytes: f64) -> f64 {
    1.0 - (1.0 - ber).powf(8.0 * bytes)
}

/// Section 3.5: how much compressing a header of `h` bytes to `c` lowers the packet loss rate
/// of `d`-byte payloads, as a fraction (for small bit-error rates the loss rate is in direct
/// proportion to the packet size, as the paper says).
pub fn loss_reduction(h: f64, c: f64, d: f64) -> f64 {
    1.0 - (c + d) / (h + d)
}

/// Section 3.5's four reductions, in percent rounded as the paper gives them: payloads of 36
/// and 100 bytes, then the same with a tunnelling IPv6 header (the paper: 52, 30, 68, 45).
pub fn section_3_5_reductions() -> [(&'static str, f64, u32); 4] {
    let case = |label, tunnel: f64, d: f64| {
        let r = loss_reduction(FULL_HEADER + tunnel, COMPRESSED_HEADER, d);
        (label, d, (r * 100.0).round() as u32)
    };
    [
        case("D = 36", 0.0, 36.0),
        case("D = 100", 0.0, 100.0),
        case("D = 36, tunnelled", TUNNEL_HEADER, 36.0),
        case("D = 100, tunnelled", TUNNEL_HEADER, 100.0),
    ]
}

/// Figure 13's setting: 512-byte segments.
pub const SEGMENT: f64 = 512.0;
/// Figure 13's setting: 100 bytes of TCP/IPv6 headers with tunnelling, uncompressed.
pub const TCP_HEADERS: f64 = 100.0;
/// Figure 13's setting: headers compressed to 5 bytes.
pub const TCP_COMPRESSED: f64 = 5.0;
/// Figure 13's constant window: 50 kbytes (50 000 bytes) of 512-byte segments, 98 segments.
pub fn window_segments() -> f64 {
    (50_000.0 / SEGMENT).round()
}

/// One column of Figure 13 (one bit-error rate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure13Column {
    /// The bit-error rate.
    pub ber: f64,
    /// Segments between losses without compression (to 3 significant digits, as the paper).
    pub segments_between_losses: f64,
    /// The loss rate without compression (fast retransmit repairs each loss alone).
    pub loss_rate: f64,
    /// Segments between losses with headers compressed to 5 bytes.
    pub compressed_segments_between_losses: f64,
    /// The loss rate with compression, each loss costing a whole window (a timeout of one RTT).
    pub compressed_loss_rate: f64,
}

/// Rounds to `digits` significant digits.
pub fn significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let exponent = digits - 1 - x.abs().log10().floor() as i32;
    if exponent >= 0 {
        let scale = 10f64.powi(exponent);
        (x * scale).round() / scale
    } else {
        let scale = 10f64.powi(-exponent);
        (x / scale).round() * scale
    }
}

/// Figure 13: segments between losses are the bits between bit errors (1/BER) over the bits of
/// a segment, rounded to 3 significant digits; the loss rates follow from the rounded counts
/// (one segment per loss without compression, a window of [`window_segments`] with it), as the
/// paper's table does.
pub fn figure_13(ber: f64) -> Figure13Column {
    let between = |headers: f64| significant(1.0 / (ber * 8.0 * (SEGMENT + headers)), 3);
    let plain = between(TCP_HEADERS);
    let compressed = between(TCP_COMPRESSED);
    Figure13Column {
        ber,
        segments_between_losses: plain,
        loss_rate: 1.0 / plain,
        compressed_segments_between_losses: compressed,
        compressed_loss_rate: window_segments() / compressed,
    }
}

/// Figure 13's bit-error rates.
pub const FIGURE_13_BERS: [f64; 3] = [1e-8, 1e-7, 1e-6];

/// A percentage to 2 significant digits, as Figure 13 prints it ("0.0049%", "4.0%", "40%").
pub fn percent_2(rate: f64) -> String {
    let p = rate * 100.0;
    let decimals = (1 - p.log10().floor() as i32).max(0) as usize;
    format!("{:.*}%", decimals, significant(p, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_4_refresh_costs_1_4_bits_at_256() {
        assert_eq!(format!("{:.1}", refresh_cost_bits()), "1.4");
        assert_eq!(average_header(48.0, 4.0, 1.0), 48.0);
        // Past the knee the average tends to C.
        assert!(average_header(48.0, 4.0, 1e6) - 4.0 < 1e-4);
        assert!(efficiency(48.0, 4.0, 36.0, 1e9) - 0.9 < 1e-6);
        assert!(efficiency(48.0, 4.0, 36.0, 1.0) < 0.43);
    }

    #[test]
    fn section_3_5_reductions_are_the_papers() {
        let got: Vec<u32> = section_3_5_reductions().iter().map(|r| r.2).collect();
        assert_eq!(got, [52, 30, 68, 45]);
        // In direct proportion to the size, for small BERs, with the exact loss formula too.
        let exact = 1.0 - packet_loss(1e-7, 40.0) / packet_loss(1e-7, 84.0);
        assert!((exact - loss_reduction(48.0, 4.0, 36.0)).abs() < 1e-4);
    }

    #[test]
    fn figure_13_is_the_papers_table() {
        let rows: Vec<[String; 4]> = FIGURE_13_BERS
            .iter()
            .map(|&ber| {
                let c = figure_13(ber);
                [
                    format!("{}", c.segments_between_losses),
                    percent_2(c.loss_rate),
                    format!("{}", c.compressed_segments_between_losses),
                    percent_2(c.compressed_loss_rate),
                ]
            })
            .collect();
        assert_eq!(window_segments(), 98.0);
        assert_eq!(rows[0], ["20400", "0.0049%", "24200", "0.40%"]);
        assert_eq!(rows[1], ["2040", "0.049%", "2420", "4.0%"]);
        assert_eq!(rows[2], ["204", "0.49%", "242", "40%"]);
    }
}
