//! A running gateway's command line ([`RunArgs`], the options of `taroc gateway`) and the value
//! parsers every `taroc gateway` subcommand shares.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use taroc_core::variant::Variant;

use crate::auth::{self, AuthConfig};
use crate::gateway::LoopOptions;
use crate::link::{scheme_for_link, LinkConfig};
use crate::serial::Framing;
use crate::{keyfile, Error};

mod about;

pub use about::{GATEWAY_ABOUT, GENKEY_ABOUT};
use taroc_wire::fcs::Fcs;

/// The tag length on a serial line unless --tag-len says otherwise, bytes: each byte costs
/// airtime on a slow line, and a forger needs the wire (2^-32 odds per forged frame, at most a
/// few hundred tries a second at 115,200 baud).
pub const SERIAL_TAG_LEN: usize = 4;

/// Parses a byte count with an optional K, M or G suffix (powers of 1024).
pub fn byte_count(text: &str) -> Result<u64, String> {
    let (digits, scale) = match text.char_indices().last() {
        Some((i, 'K' | 'k')) => (&text[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&text[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&text[..i], 1 << 30),
        _ => (text, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("`{text}` is not a byte count (e.g. 1048576, 512K, 4M)"))
}

/// Parses a probability in [0, 1] (for `taroc eval` too).
pub fn probability(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not a probability in [0, 1]"))
    }
}

/// Parses a mean burst length (at least 1 frame) (for `taroc eval` too).
pub fn burst_length(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if value >= 1.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{value} is not a mean burst length of at least 1"))
    }
}

/// Parses a non-negative, finite number.
pub fn non_negative(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if value >= 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{value} is not a non-negative number"))
    }
}

/// Parses a positive, finite number.
pub fn positive(text: &str) -> Result<f64, String> {
    let value = non_negative(text)?;
    if value > 0.0 {
        Ok(value)
    } else {
        Err("must be above 0".into())
    }
}

/// The longest time any option takes, seconds (about 31.7 years): beyond any run, and small
/// enough that every deadline and clock reading computed from it (`4 x --duration + 30`, a
/// delay in nanoseconds in a `u64`, a point in time) fits.
pub const MAX_SECONDS: f64 = 1e9;

/// `seconds` as a [`Duration`], or why not: NaN, negative, infinite and values above
/// [`MAX_SECONDS`] are refused (a plain conversion would panic above about 1.8e19).
pub fn duration_from_secs(seconds: f64) -> Result<Duration, String> {
    if seconds.is_nan() || seconds < 0.0 {
        return Err(format!(
            "{seconds} is not a number of seconds of at least 0"
        ));
    }
    if seconds > MAX_SECONDS {
        return Err(format!(
            "{seconds} s is above the limit of {MAX_SECONDS} s (about 31 years)"
        ));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{seconds} s: {e}"))
}

/// [`duration_from_secs`] for a value the command line has already checked: clamped into 0
/// ..= [`MAX_SECONDS`] (NaN: 0) rather than refused, so it never panics.
pub fn clamped_duration(seconds: f64) -> Duration {
    duration_from_secs(seconds.clamp(0.0, MAX_SECONDS)).unwrap_or(Duration::ZERO)
}

/// Parses a time in seconds: above 0, at most [`MAX_SECONDS`].
pub fn seconds(text: &str) -> Result<f64, String> {
    let value = positive(text)?;
    duration_from_secs(value)?;
    Ok(value)
}

/// Parses a time in milliseconds: at least 0, at most [`MAX_SECONDS`] in milliseconds.
pub fn milliseconds(text: &str) -> Result<f64, String> {
    let value = non_negative(text)?;
    if value > MAX_SECONDS * 1e3 {
        return Err(format!(
            "{value} ms is above the limit of {} ms (about 31 years)",
            MAX_SECONDS * 1e3
        ));
    }
    Ok(value)
}

/// Parses a summary interval: 0 (none) or at least 0.1 s, at most [`MAX_SECONDS`].
fn stats_interval(text: &str) -> Result<f64, String> {
    let value = non_negative(text)?;
    duration_from_secs(value)?;
    if value == 0.0 || value >= 0.1 {
        Ok(value)
    } else {
        Err(format!(
            "{value} s is below the 0.1 s minimum (0: print only at exit)"
        ))
    }
}

/// Parses a socket buffer size: a byte count from 4K to 1G.
fn socket_buffer(text: &str) -> Result<u64, String> {
    let value = byte_count(text)?;
    if (4 << 10..=1 << 30).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} bytes is outside 4K..=1G"))
    }
}

/// Parses `on` / `off`.
pub fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" | "1" | "true" => Ok(true),
        "off" | "0" | "false" => Ok(false),
        _ => Err(format!("`{text}` is not on or off")),
    }
}

/// The settings of a running gateway.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Read options from this TOML file (for running as a service): each key a long option's
    /// name, each value its argument (`tun = "tc0"`, `baud = 9600`, `deliver_bad_checksums =
    /// true`, lists as arrays); options given on the command line too are taken from there.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Emulated link: the TUN device of side A (created, or attached if it exists).
    #[arg(long, value_name = "NAME", help_heading = "Emulated link (one host)")]
    pub tun_a: Option<String>,
    /// Emulated link: the TUN device of side B.
    #[arg(long, value_name = "NAME", help_heading = "Emulated link (one host)")]
    pub tun_b: Option<String>,
    /// Open TUN A inside this network namespace (from `ip netns`).
    #[arg(long, value_name = "NS", help_heading = "Emulated link (one host)")]
    pub netns_a: Option<String>,
    /// Open TUN B inside this network namespace.
    #[arg(long, value_name = "NS", help_heading = "Emulated link (one host)")]
    pub netns_b: Option<String>,

    /// UDP link: the local TUN device.
    #[arg(long, value_name = "NAME", help_heading = "UDP link (two hosts)")]
    pub tun: Option<String>,
    /// UDP link: open the TUN device inside this network namespace (the UDP socket stays in
    /// the gateway's own namespace).
    #[arg(long, value_name = "NS", help_heading = "UDP link (two hosts)")]
    pub netns: Option<String>,
    /// UDP link: the local address and port to receive frames on.
    #[arg(long, value_name = "ADDR:PORT", help_heading = "UDP link (two hosts)")]
    pub listen: Option<SocketAddr>,
    /// UDP link: the peer gateway's address and port (where frames go; frames are accepted
    /// from any address if they authenticate).
    #[arg(long, value_name = "ADDR:PORT", help_heading = "UDP link (two hosts)")]
    pub peer: Option<SocketAddr>,
    /// UDP link: the pre-shared key file (64 hex digits, from `taroc gateway genkey`), the
    /// same on both gateways; every frame is authenticated with it. A regular file only; a
    /// warning if group or others may read or write it (keep it mode 600).
    #[arg(long, value_name = "FILE", help_heading = "UDP link (two hosts)")]
    pub key: Option<PathBuf>,
    /// UDP link: no authentication: bare frames, accepted from the --peer address (anyone who
    /// can spoof it can inject packets into the TUN device and poison contexts).
    #[arg(long, conflicts_with = "key", help_heading = "UDP link (two hosts)")]
    pub insecure_no_auth: bool,
    /// UDP link: bytes of authentication tag per frame (both gateways must agree); forging a
    /// frame succeeds with odds 2^-(8 x BYTES) per try.
    /// [default: 8 on UDP, where anyone on the network can try; 4 on a serial line, where each
    /// byte costs airtime and a forger needs the wire]
    #[arg(long, value_name = "BYTES",
          value_parser = clap::value_parser!(u8).range(4..=16),
          help_heading = "UDP link (two hosts)")]
    pub tag_len: Option<u8>,
    /// Serial line: the tty the link frames go on (/dev/ttyUSB0, /dev/ttyS0, a radio modem's
    /// port), with --tun. Raw mode, 8N1, no flow control. Frames are authenticated if --key is
    /// given, and not otherwise (the line is point to point).
    #[arg(long, value_name = "PATH", help_heading = "Serial line (two hosts)")]
    pub serial: Option<PathBuf>,
    /// Serial line: bits per second (a standard rate: 9600, 115200, ...).
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 115_200,
        help_heading = "Serial line (two hosts)"
    )]
    pub baud: u32,
    /// Serial line: hdlc (RFC 1662 framing, as PPP uses) or kiss (to a packet-radio TNC).
    #[arg(long, value_name = "NAME", default_value = "hdlc", value_parser = ["hdlc", "kiss"],
          help_heading = "Serial line (two hosts)")]
    pub framing: String,
    /// Serial line: the frame check, 16 or 32 bits [default: 16 for hdlc, as RFC 1662; 32 for
    /// kiss, whose radio links are noisier and which has no check of its own].
    #[arg(long, value_name = "BITS", value_parser = ["16", "32"],
          help_heading = "Serial line (two hosts)")]
    pub fcs: Option<String>,
    /// Serial line, hdlc: escape every control character (0x00-0x1F) as RFC 1662 does before
    /// LCP negotiates otherwise, for a line that is not 8-bit clean (XON/XOFF flow control on
    /// the way); both ends must agree. By default only 0x7E and 0x7D are escaped.
    #[arg(long, help_heading = "Serial line (two hosts)")]
    pub escape_control: bool,
    /// Serial line, kiss: the TNC port (0-15).
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=15),
          help_heading = "Serial line (two hosts)")]
    pub kiss_port: u8,

    /// Ethernet: the interface link frames go on in raw Ethernet frames (to an
    /// Ethernet-facing modem, or a peer on the same segment), with --tun and --peer-mac. Every
    /// frame is authenticated with --key, as on UDP (anyone on the segment can send).
    #[arg(long, value_name = "IFACE", help_heading = "Ethernet (two hosts)")]
    pub ethernet: Option<String>,
    /// Ethernet: the peer gateway's MAC address (frames from any other are refused).
    #[arg(long, value_name = "MAC", value_parser = crate::ethernet::Mac::parse,
          help_heading = "Ethernet (two hosts)")]
    pub peer_mac: Option<crate::ethernet::Mac>,
    /// Ethernet: the EtherType of our frames, hexadecimal (88b5: IEEE 802 local experimental).
    #[arg(long, value_name = "HEX", default_value = "88b5",
          value_parser = crate::ethernet::ethertype, help_heading = "Ethernet (two hosts)")]
    pub ethertype: u16,

    /// UDP and Ethernet links: receive and send buffer to ask the kernel for (suffixes K, M);
    /// on UDP, the sizes granted are printed at start.
    #[arg(long, value_name = "BYTES", default_value = "4M", value_parser = socket_buffer,
          help_heading = "UDP link (two hosts)")]
    pub socket_buffer: u64,

    /// Scheme of both directions: none, vj, iphc-twice, iphc, taroc (the draft as written: it
    /// cannot repair a context, so a restarted peer or one lost burst can stall a connection for
    /// good), taroc-plus (TAROC with bounded repair, the default), or taroc-repair, taroc-plus-u,
    /// taroc-plus-u-lossy (taroc-plus-u on a link declared to lose bursts: one used one way
    /// only), iphc-plain.
    #[arg(long, value_name = "NAME", default_value = "taroc-plus", value_parser = Variant::parse)]
    pub scheme: Variant,
    /// Scheme of the forward direction (A to B; UDP: what this side sends), instead of --scheme.
    #[arg(long, value_name = "NAME", value_parser = Variant::parse)]
    pub forward_scheme: Option<Variant>,
    /// Scheme of the reverse direction (B to A; UDP: what the peer sends), instead of --scheme.
    #[arg(long, value_name = "NAME", value_parser = Variant::parse)]
    pub reverse_scheme: Option<Variant>,

    /// MTU of the TUN devices, bytes; longer packets are refused.
    #[arg(long, value_name = "BYTES", default_value_t = 1500,
          value_parser = clap::value_parser!(u32).range(68..=65535))]
    pub mtu: u32,
    /// Largest frame on the link, bytes (its kind byte excluded) [default: --mtu].
    #[arg(long, value_name = "BYTES",
          value_parser = clap::value_parser!(u32).range(68..=65535))]
    pub link_mtu: Option<u32>,

    /// Link bandwidth, kbit/s (0: no limit, no queue).
    #[arg(long, value_name = "KBIT", default_value_t = 0.0, value_parser = non_negative,
          help_heading = "Link impairments")]
    pub rate: f64,
    /// One-way propagation delay, ms.
    #[arg(long, value_name = "MS", default_value_t = 0.0, value_parser = milliseconds,
          help_heading = "Link impairments")]
    pub delay: f64,
    /// DropTail queue limit, packets waiting for the transmitter.
    #[arg(
        long,
        value_name = "PACKETS",
        default_value_t = 64,
        help_heading = "Link impairments"
    )]
    pub queue: usize,
    /// Bit error rate; a frame with any bit error is dropped (as by a link CRC).
    #[arg(long, value_name = "BER", default_value_t = 0.0, value_parser = probability,
          help_heading = "Link impairments")]
    pub ber: f64,
    /// Random frame loss rate (independent, or the average rate of --burst).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability,
          help_heading = "Link impairments")]
    pub loss: f64,
    /// Make --loss come in bursts of this mean length in frames (Gilbert-Elliott).
    #[arg(long, value_name = "L", value_parser = burst_length, help_heading = "Link impairments")]
    pub burst: Option<f64>,
    /// Hold a frame back with probability P, delivering it after the next 1 to 3 frames. On such
    /// a link (and on any UDP path, which may reorder) IPHC runs with EXPECT_REORDERING (RFC
    /// 2507 section 11.2: no deltas), and VJ is refused (RFC 1144 assumes order).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability,
          help_heading = "Link impairments")]
    pub reorder: f64,
    /// Seed of every random stream of the link (ChaCha8).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Link impairments"
    )]
    pub seed: u64,
    /// Frames a link direction holds at once (waiting and in flight); more are dropped.
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=1048576),
          help_heading = "Link impairments")]
    pub slots: u32,

    /// Print a summary line per direction every this many seconds (0: only at exit; at least
    /// 0.1 otherwise).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = stats_interval)]
    pub stats_interval: f64,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub duration: Option<f64>,
    /// On exit, also print the counters as one JSON object on standard output.
    #[arg(long)]
    pub json: bool,
    /// Write rebuilt TCP/UDP packets whose checksum fails to the TUN device anyway (as a plain
    /// RFC 1144 decompressor would; the receiving host drops them). By default the gateway drops
    /// them itself and counts them (`checksum dropped`), so no wrongly rebuilt packet leaves it
    /// unless no checksum can tell.
    #[arg(long)]
    pub deliver_bad_checksums: bool,
}

impl RunArgs {
    /// The link settings these arguments ask for.
    pub fn link(&self) -> LinkConfig {
        LinkConfig {
            rate_bps: (self.rate * 1000.0) as u64,
            delay: clamped_duration(self.delay / 1000.0),
            queue: self.queue,
            ber: self.ber,
            loss: self.loss,
            burst: self.burst,
            reorder: self.reorder,
            mtu: self.link_mtu.unwrap_or(self.mtu) as usize,
            slots: self.slots as usize,
        }
    }

    /// The schemes of the forward and reverse directions.
    pub fn variants(&self) -> [Variant; 2] {
        [
            self.forward_scheme
                .clone()
                .unwrap_or_else(|| self.scheme.clone()),
            self.reverse_scheme
                .clone()
                .unwrap_or_else(|| self.scheme.clone()),
        ]
    }

    /// The schemes of both directions as they run on the link ([`scheme_for_link`]): an error
    /// for one that cannot run with `--reorder`, and a warning for one that cannot where a UDP
    /// path (`udp`) may reorder.
    pub fn variants_on_link(&self, udp: bool) -> Result<[Variant; 2], Error> {
        let mut variants = self.variants();
        for variant in &mut variants {
            if udp {
                if let Err(why) = variant.for_reordering_link() {
                    eprintln!(
                        "taroc gateway: warning: a UDP path may reorder datagrams, and {why}"
                    );
                }
            }
            *variant = scheme_for_link(variant, self.reorder > 0.0, udp).map_err(Error::usage)?;
        }
        Ok(variants)
    }

    /// The event loop's options: summaries every `--stats-interval`, stop after `--duration`.
    pub fn options(&self) -> LoopOptions {
        LoopOptions {
            stats_interval: (self.stats_interval > 0.0)
                .then(|| clamped_duration(self.stats_interval)),
            duration: self.duration.map(clamped_duration),
            verbose: true,
        }
    }

    /// The authentication of the UDP link these arguments ask for (`None`: none, with a
    /// warning printed); an error if they ask for none.
    /// The authentication of a serial line: with --key, as on UDP but with tags of
    /// [`SERIAL_TAG_LEN`] bytes unless --tag-len says otherwise; without, none, said at start.
    pub(crate) fn serial_auth(&self) -> Result<Option<AuthConfig>, Error> {
        if self.insecure_no_auth {
            return Err(Error::usage(
                "--insecure-no-auth belongs to the UDP link: a serial line runs without \
                 authentication unless --key is given",
            ));
        }
        let Some(path) = &self.key else {
            return Ok(None);
        };
        let (key, warning) = keyfile::read(path)?;
        if let Some(warning) = warning {
            eprintln!("taroc gateway: warning: {warning}");
        }
        Ok(Some(AuthConfig {
            key,
            tag_len: self.tag_len.map_or(SERIAL_TAG_LEN, usize::from),
        }))
    }

    /// The framing of a serial line these arguments ask for, for link frames of up to
    /// `max_frame` bytes.
    pub fn serial_framing(&self, max_frame: usize) -> Framing {
        let fcs = |default: Fcs| match self.fcs.as_deref() {
            Some("16") => Fcs::Fcs16,
            Some("32") => Fcs::Fcs32,
            _ => default,
        };
        if self.framing == "kiss" {
            Framing::kiss(self.kiss_port, fcs(Fcs::Fcs32), max_frame)
        } else if self.escape_control {
            Framing::hdlc_escaping_controls(fcs(Fcs::Fcs16), max_frame)
        } else {
            Framing::hdlc(fcs(Fcs::Fcs16), max_frame)
        }
    }

    pub(crate) fn auth(&self) -> Result<Option<AuthConfig>, Error> {
        match (&self.key, self.insecure_no_auth) {
            (Some(path), _) => {
                let (key, warning) = keyfile::read(path)?;
                if let Some(warning) = warning {
                    eprintln!("taroc gateway: warning: {warning}");
                }
                Ok(Some(AuthConfig {
                    key,
                    tag_len: self.tag_len.map_or(auth::DEFAULT_TAG_LEN, usize::from),
                }))
            }
            (None, true) => {
                eprintln!(
                    "taroc gateway: WARNING: --insecure-no-auth: frames are not authenticated; \
                     anyone who can send from the peer's address (UDP) or MAC (Ethernet) can \
                     inject packets into the TUN device and corrupt the decompressor's contexts"
                );
                Ok(None)
            }
            (None, false) => Err(Error::usage(
                "the UDP link authenticates every frame: give --key FILE, the same file on both \
                 gateways (make one with `(umask 077; taroc gateway genkey > FILE)`), or \
                 --insecure-no-auth to run without",
            )),
        }
    }
}

#[cfg(test)]
mod tests;
