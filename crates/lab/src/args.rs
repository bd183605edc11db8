//! The command lines of the lab's subcommands of `taroc gateway`: `bench` and `transfer`
//! (`resume` has its own in [`crate::resume`]).

use std::net::SocketAddr;

use clap::Args;
use taroc_core::variant::Variant;
use taroc_gateway::args::{byte_count, milliseconds, on_off, positive, probability, seconds};

use crate::bench::ForwardingLink;
use crate::harness::IpVersion;

/// Parses 4 or 6.
pub fn ip_version(text: &str) -> Result<IpVersion, String> {
    match text {
        "4" => Ok(IpVersion::V4),
        "6" => Ok(IpVersion::V6),
        _ => Err(format!("`{text}` is not 4 or 6")),
    }
}

/// The arguments of `taroc gateway bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Schemes, comma-separated [default: every scheme]: none, vj, iphc-twice, iphc, taroc,
    /// taroc-plus; also taroc-repair, taroc-plus-u, taroc-plus-u-lossy, iphc-plain.
    #[arg(long = "schemes", value_name = "LIST", value_delimiter = ',', value_parser = Variant::parse)]
    pub schemes: Vec<Variant>,
    /// Link rates, kbit/s, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "64,384",
          value_parser = positive)]
    pub rates: Vec<f64>,
    /// Bit error rates, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "1e-7,1e-5,1e-4",
          value_parser = probability)]
    pub bers: Vec<f64>,
    /// TCP timestamps settings to run: on (Linux default), off (tcp_timestamps=0), or both.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "on,off",
          value_parser = on_off)]
    pub timestamps: Vec<bool>,
    /// IP version of the transfers (IPv6 raises every MTU to at least 1280).
    #[arg(long, value_name = "4|6", default_value = "4", value_parser = ip_version)]
    pub ip: IpVersion,
    /// MTU of every cell instead of the draft's per-BER MTU.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(68..=65535))]
    pub mtu: Option<u32>,
    /// One-way link delay, ms.
    #[arg(long, value_name = "MS", default_value_t = 100.0, value_parser = milliseconds)]
    pub delay: f64,
    /// DropTail queue limit, packets.
    #[arg(long, value_name = "PACKETS", default_value_t = 6)]
    pub queue: usize,
    /// Transfer size: what the link's rate carries in this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = seconds)]
    pub duration: f64,
    /// Stop a transfer after this many seconds [default: 4 x --duration + 30].
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub time_limit: Option<f64>,
    /// Congestion control in the namespaces (e.g. cubic, reno, bbr) [default: the kernel's].
    #[arg(long, value_name = "NAME")]
    pub cc: Option<String>,
    /// Runs at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub jobs: usize,
    /// Seed of the links and transfers.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Measure forwarding speed against a plain TUN-to-TUN copy instead of the grid.
    #[arg(long)]
    pub forwarding: bool,
    /// Forwarding: the links to carry each scheme over, comma-separated: emulated (one
    /// gateway), udp (two UDP gateways over loopback, with authenticated and with bare frames
    /// in the same round), ethernet (two gateways over a veth pair, authenticated), serial (two
    /// gateways on an emulated 4,000,000-baud line, HDLC).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "emulated",
          value_parser = ForwardingLink::parse, requires = "forwarding")]
    pub link: Vec<ForwardingLink>,
    /// Forwarding: seconds per measurement.
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = seconds)]
    pub forwarding_seconds: f64,
    /// Forwarding: rounds of measurements.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub rounds: usize,
    /// Measure two gateways on emulated serial lines instead of the grid: for every --bauds x
    /// HDLC and KISS x MTU 296 and 1500 x --schemes, a bulk transfer of about eight seconds of
    /// line time and 40 one-byte request/echo exchanges (TCP_NODELAY), each against `none`.
    #[arg(long, conflicts_with = "forwarding")]
    pub serial: bool,
    /// Compare the transports instead of the grid: per scheme, one transfer (--bytes) over UDP,
    /// raw Ethernet and an emulated 115,200-baud serial line (HDLC), two gateways each,
    /// authenticated, and the bytes each transport put on its medium per packet.
    #[arg(long, conflicts_with_all = ["forwarding", "serial"])]
    pub transports: bool,
    /// Transports: the bytes of each transfer (suffixes K, M).
    #[arg(long, value_name = "BYTES", default_value = "256K", value_parser = byte_count,
          requires = "transports")]
    pub bytes: u64,
    /// Serial: the baud rates, comma-separated.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "9600,115200",
        requires = "serial"
    )]
    pub bauds: Vec<u32>,
    /// One JSON object per run on standard output instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The arguments of `taroc gateway transfer`.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("role").required(true).args(["send", "receive"])))]
pub struct TransferArgs {
    /// Listen on ADDR:PORT for one connection and check the stream it brings.
    #[arg(long, value_name = "ADDR:PORT")]
    pub receive: Option<SocketAddr>,
    /// Connect to ADDR:PORT and send the stream.
    #[arg(long, value_name = "ADDR:PORT")]
    pub send: Option<SocketAddr>,
    /// Run inside this network namespace (from `ip netns`).
    #[arg(long, value_name = "NS")]
    pub netns: Option<String>,
    /// Length of the stream, bytes (suffixes K, M, G: powers of 1024); both ends need it.
    #[arg(long, value_name = "N", default_value = "1M", value_parser = byte_count)]
    pub bytes: u64,
    /// Seed of the stream; both ends need the same.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Give up after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = seconds)]
    pub time_limit: f64,
}
