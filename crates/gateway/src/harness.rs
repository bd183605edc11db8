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

use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Once};
use std::thread::JoinHandle;

use serde::Serialize;
use taroc_core::variant::Variant;

use crate::gateway::{self, Copy, LoopOptions, Pipeline, PipelineConfig, RunReport};
use crate::link::LinkConfig;
use crate::netns::{self, Netns};
use crate::transfer::{self, TransferConfig, TransferResult};
use crate::tun::{Tun, TunConfig};
use crate::udp::{self, UdpConfig};
use crate::Error;

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
}

/// Whether this environment can run the harness; the error says what is missing.
pub fn check_environment() -> Result<(), Error> {
    if !crate::is_root() {
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

/// The gateway threads; stopped and joined on drop.
struct Running {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<Result<RunReport, Error>>>,
}

impl Running {
    fn spawn(
        &mut self,
        work: impl FnOnce(&AtomicBool) -> Result<RunReport, Error> + Send + 'static,
    ) -> Result<(), Error> {
        let stop = Arc::clone(&self.stop);
        let handle = std::thread::Builder::new()
            .name("taroc-gateway".into())
            .spawn(move || work(&stop))
            .map_err(|e| Error::io("starting a gateway thread", e))?;
        self.handles.push(handle);
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<RunReport>, Error> {
        self.stop.store(true, Ordering::Relaxed);
        self.handles
            .drain(..)
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::new("a gateway thread panicked")))
            })
            .collect()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

/// The loopback UDP sockets of the two gateways of [`Mode::Udp`].
fn udp_pair() -> Result<[UdpSocket; 2], Error> {
    let bind = || {
        UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| Error::io("binding a loopback UDP socket", e))
    };
    Ok([bind()?, bind()?])
}

/// Joins the reports of two UDP gateways into the two directions a->b and b->a.
fn join_udp_reports(a: &RunReport, b: &RunReport) -> RunReport {
    let mut forward = a.counters[0].clone();
    forward.add(&b.counters[1]);
    let mut reverse = b.counters[0].clone();
    reverse.add(&a.counters[1]);
    RunReport {
        counters: [forward, reverse],
        cpu: a.cpu + b.cpu,
        wall: a.wall.max(b.wall),
    }
}

/// Runs `scenario`: namespaces, TUN devices, gateway, transfer, cleanup.
pub fn run(scenario: &Scenario) -> Result<Outcome, Error> {
    if scenario.ip_version == IpVersion::V6 && scenario.tun_mtu < 1280 {
        return Err(Error::new(format!(
            "IPv6 needs an MTU of at least 1280 (asked for {})",
            scenario.tun_mtu
        )));
    }
    let config = PipelineConfig {
        variants: scenario.variants.clone(),
        links: [scenario.link.clone(), scenario.link.clone()],
        tun_mtu: scenario.tun_mtu as usize,
        seed: scenario.seed,
        verify_checksums: true,
    };
    config.check()?;
    let (ns_a, ns_b) = create_pair()?;
    let namespaces = [ns_a.name().to_owned(), ns_b.name().to_owned()];
    let mut tuns = Vec::new();
    for (side, ns) in namespaces.iter().enumerate() {
        let tun = Tun::open(&TunConfig {
            name: "taroc0".into(),
            mtu: scenario.tun_mtu,
            netns: Some(ns.clone()),
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
    let congestion_control = read_sysctl(&namespaces[0], "ipv4/tcp_congestion_control")?;
    let tun_b = tuns.pop().ok_or_else(|| Error::new("TUN B missing"))?;
    let tun_a = tuns.pop().ok_or_else(|| Error::new("TUN A missing"))?;

    let mut running = Running {
        stop: Arc::new(AtomicBool::new(false)),
        handles: Vec::new(),
    };
    let options = LoopOptions::default();
    match scenario.mode {
        Mode::Emulated => {
            let mut pipeline = Pipeline::new(&config)?;
            running.spawn(move |stop| {
                gateway::run_emulated([&tun_a, &tun_b], &mut pipeline, stop, &options)
            })?;
        }
        Mode::PlainCopy => running.spawn(move |stop| {
            gateway::run_emulated([&tun_a, &tun_b], &mut Copy::default(), stop, &options)
        })?,
        Mode::Udp => {
            let [socket_a, socket_b] = udp_pair()?;
            let local = |s: &UdpSocket| {
                s.local_addr()
                    .map_err(|e| Error::io("reading a socket's address", e))
            };
            let (addr_a, addr_b) = (local(&socket_a)?, local(&socket_b)?);
            let [forward, reverse] = scenario.variants.clone();
            let auth = crate::auth::AuthConfig {
                key: crate::keyfile::generate()?,
                tag_len: crate::auth::DEFAULT_TAG_LEN,
            };
            let udp = |listen, peer, variants, seed| UdpConfig {
                listen,
                peer,
                variants,
                link: scenario.link.clone(),
                tun_mtu: scenario.tun_mtu as usize,
                seed,
                verify_checksums: true,
                auth: Some(auth.clone()),
                socket_buffer: udp::DEFAULT_SOCKET_BUFFER,
            };
            let config_a = udp(
                addr_a,
                addr_b,
                [forward.clone(), reverse.clone()],
                scenario.seed,
            );
            let config_b = udp(addr_b, addr_a, [reverse, forward], scenario.seed ^ 0x5555);
            let options_b = options.clone();
            running
                .spawn(move |stop| udp::run_udp_on(&tun_a, socket_a, &config_a, stop, &options))?;
            running.spawn(move |stop| {
                udp::run_udp_on(&tun_b, socket_b, &config_b, stop, &options_b)
            })?;
        }
    }
    let addr = SocketAddr::new(scenario.ip_version.address(1), 5201);
    let transfer = transfer::run(&namespaces[0], &namespaces[1], addr, &scenario.transfer);
    let reports = running.finish()?;
    let report = match &reports[..] {
        [one] => one.clone(),
        [a, b] => join_udp_reports(a, b),
        _ => return Err(Error::new("unexpected gateway reports")),
    };
    drop((ns_a, ns_b));
    Ok(Outcome {
        transfer: transfer?,
        report,
        namespaces,
        congestion_control,
    })
}
