//! Scenarios: the draft's Appendix B topology (fixed host —8 Mbit/s, 100 ms— router (queue 6)
//! —wireless link— mobile host, bulk TCP from the fixed host to the mobile host, data compressed
//! at the router, ACKs compressed at the mobile host) with every knob a field.

use serde::{Deserialize, Serialize};

use crate::event::MILLISECOND;
use crate::link::ErrorModel;
use crate::tcp::rto::{Backoff, RtoConfig};
use crate::tcp::variant::TcpVariant;

mod run;

pub use run::{Outcome, ACK_LINK, DATA_LINK};

/// Scheme names accepted on the wireless link: every codec variant
/// ([`taroc_core::variant::NAMES`], then the extra ones), then the simulator's `ideal`.
pub fn schemes() -> impl Iterator<Item = &'static str> {
    taroc_core::variant::NAMES
        .into_iter()
        .chain(taroc_core::variant::EXTRA_NAMES)
        .chain(["ideal"])
}

/// Whether `name` is one of [`schemes`].
fn is_scheme(name: &str) -> bool {
    schemes().any(|s| s == name)
}

/// The scheme names, comma-separated.
fn scheme_list() -> String {
    schemes().collect::<Vec<_>>().join(", ")
}

/// Checks a study's scheme list: at least one, each known ([`schemes`] or `ideal-N`), each once.
pub fn check_schemes(schemes: &[String]) -> Result<(), String> {
    for (i, s) in schemes.iter().enumerate() {
        if !is_scheme(s) && ideal_header(s).is_none() {
            return Err(format!(
                "unknown scheme {s:?} (expected: {}, or ideal-N)",
                scheme_list()
            ));
        }
        if schemes[..i].contains(s) {
            return Err(format!("scheme {s} is listed twice"));
        }
    }
    if schemes.is_empty() {
        return Err("no scheme to run".into());
    }
    Ok(())
}

/// The compressed header size of the simulator-only IDEAL schemes: `ideal` (the draft's 4
/// bytes) and `ideal-N` (N bytes, 0..=60: e.g. `ideal-7`, an IDEAL as large as the draft's
/// TAROC, to measure what header size alone costs).
pub fn ideal_header(scheme: &str) -> Option<usize> {
    if scheme == "ideal" {
        return Some(4);
    }
    let n: usize = scheme.strip_prefix("ideal-")?.parse().ok()?;
    (n <= 60).then_some(n)
}

/// TCP's largest window with window scaling (RFC 7323): 2^30 bytes.
const MAX_WINDOW_BYTES: u64 = 1 << 30;

/// The largest one-way link delay a scenario may set, ms (a day).
const MAX_DELAY_MS: u64 = 86_400_000;

/// One run of the Appendix B topology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Wireless bandwidth, bits per second.
    pub wireless_bps: u64,
    /// Wireless one-way delay, ms.
    pub wireless_delay_ms: u64,
    /// Wired (fixed host – router) bandwidth, bits per second.
    pub wired_bps: u64,
    /// Wired one-way delay, ms.
    pub wired_delay_ms: u64,
    /// The router's queue limits, packets (counting the one in service).
    pub router_queue: usize,
    /// The hosts' interface queue limits, packets.
    pub host_queue: usize,
    /// Bit errors on the wireless link, router -> mobile (data).
    #[serde(deserialize_with = "errors_table")]
    pub errors: ErrorModel,
    /// Whether the mobile -> router direction (ACKs, feedback) has the same bit errors.
    pub errors_on_ack_path: bool,
    /// IP MTU on the wireless link, bytes; the TCP segment size follows from it.
    pub mtu: usize,
    /// Header compression scheme on the wireless link (see [`schemes`]).
    pub scheme: String,
    /// The sender's TCP variant.
    pub tcp: TcpVariant,
    /// Largest window, segments (NS-2's default 20).
    pub max_window_segments: u32,
    /// Delayed ACKs at the receiver.
    pub delayed_ack: bool,
    /// TCP timestamps option.
    pub timestamps: bool,
    /// IPv6 instead of IPv4.
    pub ipv6: bool,
    /// Simulated seconds.
    pub duration_s: f64,
    /// Random seed.
    pub seed: u64,
    /// Minimum RTO, ms (RFC 6298: 1000).
    pub min_rto_ms: u64,
    /// Order of the RTO floor and backoff: `ns2-classic` (the draft's NS-2 of 2000, the
    /// default here so the Appendix B reproduction models it) or `rfc6298`.
    pub rto_backoff: Backoff,
    /// If set, both wireless decompressors are replaced by fresh ones at this simulated second
    /// (a restarted peer), and the outcome tells how long the flows stayed broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decompressor_reset_s: Option<f64>,
    /// Whether the hosts talk through an IP-in-IP tunnel of their IP version (IPv6-in-IPv6 or
    /// IPv4-in-IPv4, [`crate::tunnel`]), whose outer header the wireless codecs see.
    pub tunnel: bool,
    /// Whether `iphc` repairs with the twice algorithm as well as header requests (RFC 2507
    /// section 10 in full, Degermark et al.'s low-loss compression); false (the default) models
    /// the TAROC draft's IPHC, header requests alone.
    pub iphc_twice: bool,
}

/// One comment per field of the TOML form.
const FIELD_DOCS: [(&str, &str); 28] = [
    ("wireless_bps", "Wireless bandwidth, bits per second."),
    ("wireless_delay_ms", "Wireless one-way delay, ms."),
    (
        "wired_bps",
        "Wired (fixed host - router) bandwidth, bits per second.",
    ),
    ("wired_delay_ms", "Wired one-way delay, ms."),
    (
        "router_queue",
        "The router's DropTail queue limits, packets (counting the one in service).",
    ),
    ("host_queue", "The hosts' interface queue limits, packets."),
    (
        "errors_on_ack_path",
        "Whether the mobile -> router direction has the same bit errors.",
    ),
    (
        "mtu",
        "IP MTU on the wireless link, bytes; the TCP segment size follows from it.",
    ),
    // "scheme": written by `to_toml` from `schemes`, so it lists every scheme of the code.
    ("tcp", "TCP sender: tahoe, reno, newreno or sack."),
    (
        "max_window_segments",
        "Largest TCP window, segments (NS-2's default 20).",
    ),
    ("delayed_ack", "Delayed ACKs at the receiver."),
    ("timestamps", "TCP timestamps option on every segment."),
    ("ipv6", "IPv6 instead of IPv4."),
    ("duration_s", "Simulated seconds."),
    (
        "seed",
        "Random seed (one seed gives one result, bit for bit).",
    ),
    ("min_rto_ms", "Minimum RTO, ms (RFC 6298: 1000)."),
    (
        "rto_backoff",
        "ns2-classic (backoff, then the floor: the draft's NS-2) or rfc6298 (floor, then backoff).",
    ),
    (
        "decompressor_reset_s",
        "Replace both wireless decompressors by fresh ones at this second (a restarted peer).",
    ),
    (
        "tunnel",
        "IP-in-IP tunnel (of the hosts' IP version) between the hosts; the MTU includes it.",
    ),
    (
        "iphc_twice",
        "iphc with the twice algorithm too (RFC 2507 in full) instead of the draft's IPHC.",
    ),
    (
        "[errors]",
        "Bit errors on the wireless link, router -> mobile (data).",
    ),
    (
        "kind",
        "none, ber, gilbert_elliott (good_ber, bad_ber, p_good_to_bad, p_bad_to_good: per \
         frame) or gilbert_elliott_time (good_ber, bad_ber, mean_good_s, mean_bad_s).",
    ),
    ("ber", "Independent bit errors, probability per bit."),
    ("good_ber", "BER in the good state."),
    ("bad_ber", "BER in the bad state."),
    ("p_good_to_bad", "Per-frame transition probabilities."),
    ("mean_good_s", "Mean seconds in the good state."),
    ("mean_bad_s", "Mean seconds in the bad state (a burst)."),
];

impl Default for Scenario {
    fn default() -> Scenario {
        Scenario {
            wireless_bps: 384_000,
            wireless_delay_ms: 100,
            wired_bps: 8_000_000,
            wired_delay_ms: 100,
            router_queue: 6,
            host_queue: 50,
            errors: ErrorModel::Ber { ber: 1e-7 },
            errors_on_ack_path: true,
            mtu: 576,
            scheme: "taroc".into(),
            tcp: TcpVariant::Tahoe,
            max_window_segments: 20,
            delayed_ack: false,
            timestamps: false,
            ipv6: false,
            duration_s: 1000.0,
            seed: 1,
            min_rto_ms: 1000,
            rto_backoff: Backoff::Ns2Classic,
            decompressor_reset_s: None,
            tunnel: false,
            iphc_twice: false,
        }
    }
}

/// The draft's Appendix B topology with `taroc sim`'s defaults: TAROC, 384 kbit/s, BER 1e-7,
/// MTU 576, Tahoe, 1000 s. The same as [`Scenario::default`], which a scenario file's missing
/// fields take, so a file and the command line never disagree on a default.
pub fn default_sim() -> Scenario {
    Scenario::default()
}

impl Scenario {
    /// The TCP payload bytes per segment for this MTU and these options.
    pub fn mss(&self) -> usize {
        let ip = if self.ipv6 { 40 } else { 20 };
        let ts = if self.timestamps { 12 } else { 0 };
        let tunnel = if self.tunnel {
            crate::tunnel::header_len(self.ipv6)
        } else {
            0
        };
        self.mtu.saturating_sub(ip + 20 + ts + tunnel)
    }

    /// Reads a scenario from TOML (the fields of [`Scenario`]; missing ones take the defaults of
    /// `taroc sim`'s command line, [`Scenario::default`]) and checks it. Errors name the line and the field.
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        s.validate()?;
        Ok(s)
    }

    /// The scenario as TOML, with a comment on every field: a starting point to edit.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        let mut out = String::from(
            "# A taroc-sim scenario: the TAROC draft's Appendix B topology, fixed host -wired- router\n\
             # -wireless- mobile host, one bulk TCP transfer to the mobile host. Missing fields take\n\
             # the defaults. Run with: taroc sim --scenario FILE.toml\n",
        );
        for line in body.lines() {
            let key = line.split('=').next().unwrap_or("").trim();
            if key == "scheme" {
                out.push_str(&format!(
                    "# Header compression: {}, or ideal-N (an N-byte IDEAL header).\n",
                    scheme_list()
                ));
            } else if let Some(doc) = FIELD_DOCS.iter().find(|(k, _)| *k == key).map(|(_, d)| d) {
                out.push_str(&format!("# {doc}\n"));
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// Checks the settings, naming the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        if !is_scheme(&self.scheme) && ideal_header(&self.scheme).is_none() {
            return Err(format!(
                "unknown scheme {:?} (expected one of: {}, or ideal-N for an IDEAL with an \
                 N-byte header, N up to 60)",
                self.scheme,
                scheme_list()
            ));
        }
        if self.mss() < 8 {
            return Err(format!("MTU {} leaves no room for TCP payload", self.mtu));
        }
        if self.mtu > 65535 {
            return Err("MTU must be at most 65535".into());
        }
        if !(self.duration_s > 0.0 && self.duration_s <= 1e7) {
            return Err("duration must be positive (and at most 1e7 s)".into());
        }
        if self.max_window_segments == 0 {
            return Err("max window must be at least 1 segment".into());
        }
        let window_bytes = u64::from(self.max_window_segments) * self.mss() as u64;
        if window_bytes > MAX_WINDOW_BYTES {
            return Err(format!(
                "max window {} segments of {} bytes exceeds TCP's largest window (2^30 bytes)",
                self.max_window_segments,
                self.mss()
            ));
        }
        let max_rto_ms = RtoConfig::default().max_ns / MILLISECOND;
        if self.min_rto_ms > max_rto_ms {
            return Err(format!(
                "min_rto_ms {} is above the maximum RTO ({max_rto_ms} ms)",
                self.min_rto_ms
            ));
        }
        for (name, ms) in [
            ("wireless_delay_ms", self.wireless_delay_ms),
            ("wired_delay_ms", self.wired_delay_ms),
        ] {
            if ms > MAX_DELAY_MS {
                return Err(format!("{name} {ms} is above {MAX_DELAY_MS} (a day)"));
            }
        }
        for (name, p) in self.links() {
            p.validate().map_err(|e| format!("{name}: {e}"))?;
        }
        if let Some(at) = self.decompressor_reset_s {
            if !(0.0..=1e7).contains(&at) {
                return Err(format!(
                    "decompressor_reset_s {at} is not a time in [0, 1e7] seconds"
                ));
            }
        }
        Ok(())
    }
}

/// Reads the `[errors]` table, naming it in any error (an unknown key, a missing `kind`).
fn errors_table<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<ErrorModel, D::Error> {
    ErrorModel::deserialize(deserializer)
        .map_err(|e| serde::de::Error::custom(format!("table [errors]: {e}")))
}

/// A TOML error on one line: where (line and column) and what.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let mut message = error.message().trim().replace('\n', "; ");
    // A nested table names itself ([`errors_table`]); an unknown key left unnamed is the top
    // level's.
    if message.starts_with("unknown field") {
        message = format!("top-level table: {message}");
    }
    let Some(span) = error.span() else {
        return message;
    };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("line {line}, column {column}: {message}")
}

#[cfg(test)]
mod tests;
