//! Figure 9's two topologies as scenarios: **Modem** (a low-delay 14.4 kbit/s last hop) and
//! **WLAN** (a long-distance path whose last hop is 2 Mbit/s wireless). Both carry 512-byte
//! segments in IPv6 with a tunnelling IPv6 header (100 bytes of headers, MTU 612), a Reno sender
//! (fast retransmit) without delayed ACKs and bit errors on the wireless hop, both directions.
//! The wired hop, the delays, the queues, the window and the RTO floor are not in the paper: the
//! values chosen, and why, are in `docs/lowloss-interpretations.md`.

use crate::link::ErrorModel;
use crate::scenario::Scenario;
use crate::tcp::rto::Backoff;
use crate::tcp::variant::TcpVariant;

/// The paper's segment payload, bytes.
pub const SEGMENT_BYTES: usize = 512;
/// IPv6 + TCP + the tunnelling IPv6 header: 100 bytes, so a 612-byte MTU.
pub const MTU: usize = SEGMENT_BYTES + 100;

/// A topology of Figure 9.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// The 14.4 kbit/s, low-delay last hop (GSM, CDPD).
    Modem,
    /// The long-distance path to a 2 Mbit/s wireless LAN.
    Wlan,
}

impl Topology {
    /// Both, in the paper's order.
    pub const ALL: [Topology; 2] = [Topology::Modem, Topology::Wlan];

    /// The name in reports and JSON (`modem`, `wlan`).
    pub fn name(self) -> &'static str {
        match self {
            Topology::Modem => "modem",
            Topology::Wlan => "wlan",
        }
    }

    /// The scenario of this topology: `scheme` on the wireless hop, independent bit errors of
    /// `ber`, `duration_s` simulated seconds, seed `seed`. `iphc` is RFC 2507 in full (twice
    /// and header requests: the paper's low-loss compression).
    pub fn scenario(self, scheme: &str, ber: f64, duration_s: f64, seed: u64) -> Scenario {
        let common = Scenario {
            errors: ErrorModel::Ber { ber },
            errors_on_ack_path: true,
            mtu: MTU,
            scheme: scheme.into(),
            tcp: TcpVariant::Reno,
            delayed_ack: false,
            timestamps: false,
            ipv6: true,
            tunnel: true,
            iphc_twice: true,
            duration_s,
            seed,
            rto_backoff: Backoff::Rfc6298,
            ..Scenario::default()
        };
        match self {
            Topology::Modem => Scenario {
                wireless_bps: 14_400,
                wireless_delay_ms: 10,
                wired_bps: 10_000_000,
                wired_delay_ms: 20,
                router_queue: 10,
                host_queue: 50,
                max_window_segments: 20,
                min_rto_ms: 1000,
                ..common
            },
            Topology::Wlan => Scenario {
                wireless_bps: 2_000_000,
                wireless_delay_ms: 1,
                wired_bps: 10_000_000,
                wired_delay_ms: 107,
                router_queue: 50,
                host_queue: 200,
                max_window_segments: 128,
                min_rto_ms: 1000,
                ..common
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_carry_512_byte_segments_in_100_bytes_of_headers() {
        for t in Topology::ALL {
            let s = t.scenario("iphc-plain", 2e-7, 10.0, 1);
            assert_eq!(s.mss(), SEGMENT_BYTES);
            assert!(s.validate().is_ok());
        }
    }
}
