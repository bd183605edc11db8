//! Two network namespaces with the gateway between them, and a real kernel TCP transfer across.
//!
//! ```text
//!   namespace A                      this process                      namespace B
//!   TCP sender ── taroc0 (TUN) ══ compress → link → decompress ══ taroc0 (TUN) ── TCP receiver
//!   10.201.0.1/24  fd00:7a::1/64   ◄─ decompress ← link ← compress ◄─  10.201.0.2/24  fd00:7a::2/64
//! ```
//!
//! No veth pair and no bridge: each namespace holds one end, a TUN device the gateway opened
//! inside it, so every packet between the two stacks crosses the gateway. In [`Mode::Udp`] two
//! gateways, one per TUN device, exchange frames in UDP datagrams over this host's loopback
//! instead, as two gateways on two hosts would. The namespaces get
//! unique names (`taroc-<pid>-<n>a`/`b`, skipping names in use), so runs in parallel, in one
//! process or several, do not collide. Everything is undone by Drop guards, in order, whatever
//! happens (error or panic): the gateway thread is stopped and joined, the TUN devices close,
//! the namespaces are deleted. Namespaces left by a process that was killed outright
//! (SIGKILL) are deleted by the next run (their pid no longer exists). The transfer's two ends
//! are threads of this process ([`crate::transfer`]): no child process outlives a run.
//!
//! In [`Mode::Udp`] the two gateways talk through a relay ([`crate::relay`]), and a run may be
//! *disturbed* ([`run_disturbed`], [`crate::disturb`]): a gateway restarted mid-transfer, a
//! burst of frames lost, forged frames injected. Each gateway is a thread that can be stopped
//! and started again with fresh codec state on the same TUN device and UDP address. A
//! [`LivePair`] keeps the two gateways running between steps a test takes in turn (transfers,
//! restarts, replays).

use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;
use std::time::Duration;

use serde::Serialize;
use taroc_core::variant::Variant;

use crate::disturb::{self, Applied, Planned, Victim};
use crate::forge::{PROBE_PAYLOAD, PROBE_PORT};
use crate::relay::RelayCounters;
use crate::transfer::{self, TransferConfig, TransferResult, Watch};
use taroc_gateway::gateway::{self, Copy, LoopOptions, Pipeline, PipelineConfig, RunReport};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns::{self, Netns};
use taroc_gateway::tun::{Tun, TunConfig};
use taroc_gateway::Error;

mod links;
mod live;
mod threads;

use links::{on_ethernet_link, run_serial};
pub use links::{run_serial_cell, run_serial_disturbed, SerialCell, SerialEvent, SerialPair};

pub use live::{LivePair, LiveReport, TRANSFER_PORT};
pub(crate) use threads::UdpGateway;
use threads::{UdpPair, Worker};

/// The IP version of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum IpVersion {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

impl IpVersion {
    /// 4 or 6.
    pub fn number(self) -> u8 {
        match self {
            IpVersion::V4 => 4,
            IpVersion::V6 => 6,
        }
    }

    /// The address of side A (0) or B (1).
    pub fn address(self, side: usize) -> IpAddr {
        let host = side as u8 + 1;
        match self {
            IpVersion::V4 => IpAddr::V4(Ipv4Addr::new(10, 201, 0, host)),
            IpVersion::V6 => IpAddr::V6(Ipv6Addr::new(0xfd00, 0x7a, 0, 0, 0, 0, 0, host.into())),
        }
    }

    fn prefix(self) -> u8 {
        match self {
            IpVersion::V4 => 24,
            IpVersion::V6 => 64,
        }
    }
}

/// One run: the gateway's settings, the namespaces' TCP settings, and the transfer.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Schemes of the data direction (A to B) and the ACK direction (B to A).
    pub variants: [Variant; 2],
    /// The link, both directions (each with its own random streams); its `mtu` is the link MTU.
    pub link: LinkConfig,
    /// MTU of both TUN devices.
    pub tun_mtu: u32,
    /// IPv4 or IPv6.
    pub ip_version: IpVersion,
    /// `net.ipv4.tcp_timestamps` in both namespaces (Linux default: on).
    pub timestamps: bool,
    /// `net.ipv4.tcp_congestion_control` in both namespaces, if not the default.
    pub congestion_control: Option<String>,
    /// The transfer from A to B.
    pub transfer: TransferConfig,
    /// Seed of the link's random streams.
    pub seed: u64,
    /// How the gateway forwards.
    pub mode: Mode,
    /// [`Mode::Udp`]: the gateways authenticate every frame with a key made for the run (what
    /// users get by default), or not (`--insecure-no-auth`: forged frames reach the codecs).
    pub authenticated: bool,
}

/// How the harness's gateway forwards between the two TUN devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One gateway, the emulated link in the middle (with its oracle).
    Emulated,
    /// Two UDP gateways, one per TUN device, talking over this host's loopback; the link's
    /// impairments are applied on send by each. No oracle: `checksum_failed` counts instead.
    Udp,
    /// A plain TUN-to-TUN copy, no codec, no link (the forwarding speed baseline).
    PlainCopy,
    /// Two gateways, one per TUN device, on the two ends of an emulated serial line
    /// ([`crate::line_emulator`]) at `baud`, HDLC-framed or (`kiss`) KISS-framed; the link's
    /// BER is the line's. No oracle: `checksum_failed` counts instead.
    Serial {
        /// KISS framing (HDLC otherwise).
        kiss: bool,
        /// The line's bits per second.
        baud: u32,
    },
    /// Two gateways, one per TUN device, sending raw Ethernet frames to each other over a veth
    /// pair ([`taroc_gateway::ethernet`]). No oracle: `checksum_failed` counts instead.
    Ethernet,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The transfer.
    pub transfer: TransferResult,
    /// The gateway's counters and CPU time.
    pub report: RunReport,
    /// The namespaces used (already deleted).
    pub namespaces: [String; 2],
    /// The congestion control in use.
    pub congestion_control: String,
    /// The disturbances applied, in order ([`run_disturbed`]).
    pub applied: Vec<Applied>,
    /// The relay's counters ([`Mode::Udp`] only).
    pub relay: Option<RelayCounters>,
    /// Forged `TYPE_IP` probes ([`crate::forge::probe`]) that reached namespace A and B
    /// ([`Mode::Udp`] only; 0 otherwise).
    pub probes_delivered: [u64; 2],
}

/// Whether this environment can run the harness; the error says what is missing.
pub fn check_environment() -> Result<(), Error> {
    if !taroc_gateway::is_root() {
        return Err(Error::new(
            "the gateway harness needs root (CAP_NET_ADMIN for TUN, CAP_SYS_ADMIN for network \
             namespaces)",
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(Error::new(
            "TUN is unavailable: /dev/net/tun does not exist",
        ));
    }
    netns::ip(&["-V"])?;
    Ok(())
}

/// For tests that need the harness: whether this environment can run it. If not, prints that
/// the `what` test was skipped and why and returns false, unless the environment variable `CI`
/// is set: then it panics (CI runs as root and must run them).
pub fn environment_or_skip(what: &str) -> bool {
    match check_environment() {
        Ok(()) => true,
        Err(e) => {
            if std::env::var_os("CI").is_some() {
                panic!("CI is set, so the gateway {what} tests must run, but: {e}");
            }
            eprintln!("SKIPPED gateway {what} test: {e} (set CI=1 to make this a failure)");
            false
        }
    }
}

/// Deletes namespaces named `taroc-<pid>-...` whose process no longer exists.
fn sweep_stale_namespaces() {
    let Ok(entries) = fs::read_dir("/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("taroc-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = netns::ip(&["netns", "del", &name]);
        }
    }
}

/// Creates two fresh namespaces with unique names.
fn create_pair() -> Result<(Netns, Netns), Error> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    static SWEEP: Once = Once::new();
    SWEEP.call_once(sweep_stale_namespaces);
    let pid = std::process::id();
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let (a, b) = (format!("taroc-{pid}-{n}a"), format!("taroc-{pid}-{n}b"));
        if netns::path(&a).exists() || netns::path(&b).exists() {
            continue;
        }
        let ns_a = Netns::create(&a)?;
        let ns_b = Netns::create(&b)?;
        return Ok((ns_a, ns_b));
    }
    Err(Error::new("no free namespace name after 100 tries"))
}

/// Writes a sysctl under /proc/sys/net in namespace `ns`.
fn sysctl(ns: &str, key: &str, value: &str) -> Result<(), Error> {
    netns::run_in(Some(ns), || {
        let path = format!("/proc/sys/net/{key}");
        fs::write(&path, value).map_err(|e| {
            let hint = if key.ends_with("tcp_congestion_control") {
                " (a namespace may only pick one of the host's \
                 net.ipv4.tcp_allowed_congestion_control)"
            } else {
                ""
            };
            Error::io(format!("setting {path} to {value}{hint}"), e)
        })
    })
}

/// Reads a sysctl under /proc/sys/net in namespace `ns`.
fn read_sysctl(ns: &str, key: &str) -> Result<String, Error> {
    netns::run_in(Some(ns), || {
        let path = format!("/proc/sys/net/{key}");
        fs::read_to_string(&path)
            .map(|s| s.trim().to_owned())
            .map_err(|e| Error::io(format!("reading {path}"), e))
    })
}

/// A UDP socket inside namespace `ns` on `address`'s [`PROBE_PORT`], to catch forged probes.
fn probe_socket(ns: &str, address: IpAddr) -> Result<UdpSocket, Error> {
    netns::run_in(Some(ns), || {
        let socket = UdpSocket::bind((address, PROBE_PORT)).map_err(|e| {
            Error::io(
                format!("binding the probe socket {address}:{PROBE_PORT}"),
                e,
            )
        })?;
        socket
            .set_nonblocking(true)
            .map_err(|e| Error::io("making the probe socket non-blocking", e))?;
        Ok(socket)
    })
}

/// The forged probes waiting on `socket`.
fn probes_caught(socket: &UdpSocket) -> u64 {
    let mut buffer = [0u8; 256];
    let mut caught = 0;
    while let Ok(n) = socket.recv(&mut buffer) {
        caught += u64::from(&buffer[..n] == PROBE_PAYLOAD);
    }
    caught
}

/// Every scheme a test runs over a link: the named ones and the extra variants.
pub fn every_variant() -> Vec<Variant> {
    taroc_core::variant::NAMES
        .iter()
        .chain(&taroc_core::variant::EXTRA_NAMES)
        .filter_map(|name| Variant::by_name(name))
        .collect()
}

/// Runs each labelled scenario of `cases` at once through `run` (such as [`run`]: each in its
/// own namespaces; or [`run_traffic`] with traffic of its own), and returns their outcomes in
/// order, each with its label (a run that panicked is an error).
pub fn run_each<L: Send, O: Send>(
    cases: Vec<(L, Scenario)>,
    run: impl Fn(&Scenario) -> Result<O, Error> + Sync,
) -> Vec<(L, Result<O, Error>)> {
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(label, scenario)| (label, scope.spawn(move || run(&scenario))))
            .collect();
        handles
            .into_iter()
            .map(|(label, handle)| {
                let result = handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::new("run panicked")));
                (label, result)
            })
            .collect()
    })
}

/// Runs `scenario`: namespaces, TUN devices, gateway, transfer, cleanup.
pub fn run(scenario: &Scenario) -> Result<Outcome, Error> {
    run_disturbed(scenario, &[])
}

/// Runs `scenario` with the disturbances of `plan`, applied in order, each once the receiver
/// has read its [`Planned::at_bytes`] ([`Mode::Udp`] only).
pub fn run_disturbed(scenario: &Scenario, plan: &[Planned]) -> Result<Outcome, Error> {
    if !plan.is_empty() && scenario.mode != Mode::Udp {
        return Err(Error::new(
            "disturbances need the UDP mode (a relay between two gateways)",
        ));
    }
    let config = pipeline_config(scenario);
    let Prepared {
        netns,
        tuns,
        congestion_control,
    } = prepare(scenario)?;
    let mut outcome = Outcome {
        transfer: TransferResult::default(),
        report: RunReport::default(),
        namespaces: netns.each_ref().map(|ns| ns.name().to_owned()),
        congestion_control,
        applied: Vec::new(),
        relay: None,
        probes_delivered: [0; 2],
    };
    let options = LoopOptions::default();
    match scenario.mode {
        Mode::Udp => run_udp(scenario, plan, tuns, &options, &mut outcome)?,
        Mode::Emulated => {
            let mut pipeline = Pipeline::new(&config)?;
            let worker = Worker::spawn(move |stop| {
                gateway::run_emulated([&tuns[0], &tuns[1]], &mut pipeline, stop, &options)
            })?;
            outcome.transfer = transfer_between(scenario, &outcome.namespaces, &Watch::default())?;
            outcome.report = worker.finish()?;
        }
        Mode::Serial { kiss, baud } => {
            run_serial(scenario, kiss, baud, tuns, &options, &mut outcome)?
        }
        Mode::Ethernet => {
            let namespaces = outcome.namespaces.clone();
            let (transfer, report) = on_ethernet_link(scenario, tuns, &options, || {
                transfer_between(scenario, &namespaces, &Watch::default())
            })?;
            outcome.report = report;
            outcome.transfer = transfer?;
        }
        Mode::PlainCopy => {
            let worker = Worker::spawn(move |stop| {
                gateway::run_emulated([&tuns[0], &tuns[1]], &mut Copy::default(), stop, &options)
            })?;
            outcome.transfer = transfer_between(scenario, &outcome.namespaces, &Watch::default())?;
            outcome.report = worker.finish()?;
        }
    }
    drop(netns);
    Ok(outcome)
}

/// Runs `traffic` instead of the TCP transfer: the namespaces and TUN devices of `scenario`
/// (which must be of [`Mode::Emulated`]) with one gateway on the emulated link between them, as
/// [`run`] makes them; `traffic` gets the names of namespaces A and B and makes whatever
/// traffic it likes there (UDP, ICMP, its own processes). Returns what `traffic` returned and
/// the gateway's report (with the oracle's counts); everything is undone as for [`run`].
pub fn run_traffic<T>(
    scenario: &Scenario,
    traffic: impl FnOnce(&[String; 2]) -> Result<T, Error>,
) -> Result<(T, RunReport), Error> {
    if scenario.mode != Mode::Emulated {
        return Err(Error::new(
            "traffic of its own runs on the emulated link: the scenario must be of the \
             emulated mode",
        ));
    }
    let config = pipeline_config(scenario);
    let Prepared { netns, tuns, .. } = prepare(scenario)?;
    let namespaces = netns.each_ref().map(|ns| ns.name().to_owned());
    let mut pipeline = Pipeline::new(&config)?;
    let options = LoopOptions::default();
    let worker = Worker::spawn(move |stop| {
        gateway::run_emulated([&tuns[0], &tuns[1]], &mut pipeline, stop, &options)
    })?;
    let result = traffic(&namespaces);
    let report = worker.finish();
    drop(netns);
    Ok((result?, report?))
}

/// The settings of the emulated gateway of `scenario` (also those its UDP gateways are
/// checked against).
fn pipeline_config(scenario: &Scenario) -> PipelineConfig {
    PipelineConfig {
        variants: scenario.variants.clone(),
        links: [scenario.link.clone(), scenario.link.clone()],
        tun_mtu: scenario.tun_mtu as usize,
        seed: scenario.seed,
        verify_checksums: true,
    }
}

/// Two fresh namespaces, each with a TUN device `taroc0` addressed and its TCP set up as a
/// scenario says. Drop the TUN devices (and whatever uses them) before the namespaces.
struct Prepared {
    /// A and B.
    netns: [Netns; 2],
    /// The TUN device in A and in B.
    tuns: [Tun; 2],
    /// The congestion control in use in A.
    congestion_control: String,
}

/// Checks `scenario` and makes its namespaces and TUN devices.
fn prepare(scenario: &Scenario) -> Result<Prepared, Error> {
    if scenario.ip_version == IpVersion::V6 && scenario.tun_mtu < 1280 {
        return Err(Error::new(format!(
            "IPv6 needs an MTU of at least 1280 (asked for {})",
            scenario.tun_mtu
        )));
    }
    pipeline_config(scenario).check()?;
    let (ns_a, ns_b) = create_pair()?;
    let mut tuns = Vec::new();
    for (side, ns) in [ns_a.name(), ns_b.name()].into_iter().enumerate() {
        let tun = Tun::open(&TunConfig {
            name: "taroc0".into(),
            mtu: scenario.tun_mtu,
            netns: Some(ns.to_owned()),
        })?;
        let ip = scenario.ip_version;
        let address = format!("{}/{}", ip.address(side), ip.prefix());
        let mut args = vec!["-n", ns, "address", "add", &address, "dev", "taroc0"];
        if ip == IpVersion::V6 {
            args.push("nodad");
        }
        netns::ip(&args)?;
        sysctl(
            ns,
            "ipv4/tcp_timestamps",
            if scenario.timestamps { "1" } else { "0" },
        )?;
        if let Some(cc) = &scenario.congestion_control {
            sysctl(ns, "ipv4/tcp_congestion_control", cc)?;
        }
        tuns.push(tun);
    }
    let congestion_control = read_sysctl(ns_a.name(), "ipv4/tcp_congestion_control")?;
    let tun_b = tuns.pop().ok_or_else(|| Error::new("TUN B missing"))?;
    let tun_a = tuns.pop().ok_or_else(|| Error::new("TUN A missing"))?;
    Ok(Prepared {
        netns: [ns_a, ns_b],
        tuns: [tun_a, tun_b],
        congestion_control,
    })
}

/// The transfer of `scenario` from namespace A to a listener in B, shown in `watch`.
fn transfer_between(
    scenario: &Scenario,
    namespaces: &[String; 2],
    watch: &Watch,
) -> Result<TransferResult, Error> {
    let addr = SocketAddr::new(scenario.ip_version.address(1), 5201);
    transfer::run_watched(
        &namespaces[0],
        &namespaces[1],
        addr,
        &scenario.transfer,
        watch,
    )
}

/// The transfer of [`Mode::Udp`]: two gateways on `tuns`, the relay between them, and the
/// disturbances of `plan`; fills in `outcome`.
fn run_udp(
    scenario: &Scenario,
    plan: &[Planned],
    tuns: [Tun; 2],
    options: &LoopOptions,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    let namespaces = &outcome.namespaces;
    let probes = [
        probe_socket(&namespaces[0], scenario.ip_version.address(0))?,
        probe_socket(&namespaces[1], scenario.ip_version.address(1))?,
    ];
    let mut pair = UdpPair::start(scenario, tuns, options, Duration::ZERO)?;
    let [forward, reverse] = scenario.variants.clone();
    // Gateway A decompresses what B sends (the reverse scheme), B what A sends.
    let victims = [
        Victim {
            variant: reverse,
            address: scenario.ip_version.address(0),
        },
        Victim {
            variant: forward,
            address: scenario.ip_version.address(1),
        },
    ];
    let watch = Watch::default();
    let (transfer, applied) = std::thread::scope(|scope| {
        let transfer = scope.spawn(|| transfer_between(scenario, namespaces, &watch));
        let applied = disturb::apply_plan(
            plan,
            &mut pair.gateways,
            &pair.relay,
            &victims,
            &watch,
            scenario.seed,
        );
        let transfer = transfer
            .join()
            .unwrap_or_else(|_| Err(Error::new("the transfer panicked")));
        (transfer, applied)
    });
    let (report, relay) = pair.finish()?;
    outcome.transfer = transfer?;
    outcome.applied = applied?;
    outcome.report = report;
    outcome.relay = Some(relay);
    outcome.probes_delivered = probes.each_ref().map(probes_caught);
    Ok(())
}
