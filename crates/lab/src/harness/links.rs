//! The harness's gateway pairs on links other than UDP: two gateways on the ends of an
//! emulated serial line ([`Mode::Serial`]) or of a veth pair ([`Mode::Ethernet`]), and the
//! serial bench's cells.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use taroc_wire::fcs::Fcs;

use super::threads::Worker;
use super::{prepare, transfer_between, Mode, Outcome, Prepared, Scenario};
use crate::echo::EchoResult;
use crate::line_emulator::{EmulatedLine, LineConfig};
use crate::transfer::{TransferResult, Watch};
use taroc_gateway::endpoint::EndpointConfig;
use taroc_gateway::ethernet::{EthernetConfig, EthernetTransport};
use taroc_gateway::gateway::{LoopOptions, RunReport};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns;
use taroc_gateway::serial::{Framing, SerialConfig, SerialTransport};
use taroc_gateway::tun::Tun;
use taroc_gateway::Error;

/// The transfer of [`Mode::Serial`]: an emulated line at `baud` with the link's BER, and a
/// gateway on each of its ends, on `tuns`; fills in `outcome`.
pub(super) fn run_serial(
    scenario: &Scenario,
    kiss: bool,
    baud: u32,
    tuns: [Tun; 2],
    options: &LoopOptions,
    outcome: &mut Outcome,
) -> Result<(), Error> {
    let namespaces = outcome.namespaces.clone();
    let (transfer, report) = on_serial_line(scenario, kiss, baud, tuns, options, |_| {
        transfer_between(scenario, &namespaces, &Watch::default())
    })?;
    outcome.report = report;
    outcome.transfer = transfer?;
    Ok(())
}

/// Runs `work` with the [`SerialPair`] of `scenario` on `tuns`; what it returned and the
/// gateways' report.
fn on_serial_line<T>(
    scenario: &Scenario,
    kiss: bool,
    baud: u32,
    tuns: [Tun; 2],
    options: &LoopOptions,
    work: impl FnOnce(&mut SerialPair) -> T,
) -> Result<(T, RunReport), Error> {
    let mut pair = SerialPair::start(scenario, kiss, baud, tuns, options)?;
    let result = work(&mut pair);
    Ok((result, pair.finish()?))
}

/// Two gateways, one on each end of an emulated serial line, each restartable (its thread
/// stopped, its codecs and sender id gone, the line opened again), and the line, which can
/// have an outage.
pub struct SerialPair {
    line: EmulatedLine,
    tuns: [Arc<Tun>; 2],
    serial: [SerialConfig; 2],
    endpoints: [EndpointConfig; 2],
    options: LoopOptions,
    workers: [Option<Worker>; 2],
    /// The reports of each side's runs that ended.
    reports: [Vec<RunReport>; 2],
}

impl SerialPair {
    /// The line of `scenario` at `baud` (with the link's BER), HDLC or `kiss`, and a gateway
    /// on each end, on `tuns`.
    fn start(
        scenario: &Scenario,
        kiss: bool,
        baud: u32,
        tuns: [Tun; 2],
        options: &LoopOptions,
    ) -> Result<SerialPair, Error> {
        let line = EmulatedLine::start(LineConfig {
            baud,
            ber: scenario.link.ber,
            garbage: 0.0,
            seed: scenario.seed,
        })?;
        let auth = match scenario.authenticated {
            true => Some(taroc_gateway::auth::AuthConfig {
                key: taroc_gateway::keyfile::generate()?,
                tag_len: taroc_gateway::args::SERIAL_TAG_LEN,
            }),
            false => None,
        };
        let max_frame = scenario.link.mtu + auth.as_ref().map_or(0, |a| a.max_overhead());
        let framing = if kiss {
            Framing::kiss(0, Fcs::Fcs32, max_frame)
        } else {
            Framing::hdlc(Fcs::Fcs16, max_frame)
        };
        let serial = [0, 1].map(|side| SerialConfig {
            path: line.path(side).clone(),
            baud,
            framing,
        });
        let endpoints = [0, 1].map(|side| side_config(scenario, side, auth.clone()));
        let mut pair = SerialPair {
            line,
            tuns: tuns.map(Arc::new),
            serial,
            endpoints,
            options: options.clone(),
            workers: [None, None],
            reports: [Vec::new(), Vec::new()],
        };
        pair.spawn(0)?;
        pair.spawn(1)?;
        Ok(pair)
    }

    /// Starts a fresh gateway on side `side`.
    fn spawn(&mut self, side: usize) -> Result<(), Error> {
        let transport = SerialTransport::open(&self.serial[side])?;
        let tun = Arc::clone(&self.tuns[side]);
        let (endpoint, options) = (self.endpoints[side].clone(), self.options.clone());
        self.workers[side] = Some(Worker::spawn(move |stop| {
            taroc_gateway::transport::run_fresh(&tun, transport, &endpoint, stop, &options)
        })?);
        Ok(())
    }

    /// Stops side `side`'s gateway, waits `down`, and starts a fresh one on the same line.
    pub fn restart(&mut self, side: usize, down: Duration) -> Result<(), Error> {
        if let Some(worker) = self.workers[side].take() {
            self.reports[side].push(worker.finish()?);
        }
        std::thread::sleep(down);
        self.spawn(side)
    }

    /// Loses everything on the line, both ways, for `duration` from now.
    pub fn outage(&self, duration: Duration) {
        self.line.outage(duration);
    }

    /// Waits until the line has carried nothing either way for `quiet` (what an earlier
    /// transfer left, its last segments, FIN and ACKs, has drained), or `limit` passed.
    pub fn wait_quiet(&self, quiet: Duration, limit: Duration) {
        let started = std::time::Instant::now();
        let step = Duration::from_millis(20);
        let mut last = self.line.counters().bytes;
        let mut still = Duration::ZERO;
        while still < quiet && started.elapsed() < limit {
            std::thread::sleep(step);
            let now = self.line.counters().bytes;
            still = if now == last {
                still + step
            } else {
                Duration::ZERO
            };
            last = now;
        }
    }

    /// Stops both gateways; the report of the directions a->b and b->a over all their runs.
    fn finish(mut self) -> Result<RunReport, Error> {
        let mut sides = [RunReport::default(), RunReport::default()];
        for (side, total) in sides.iter_mut().enumerate() {
            if let Some(worker) = self.workers[side].take() {
                self.reports[side].push(worker.finish()?);
            }
            for report in &self.reports[side] {
                for (sum, counters) in total.counters.iter_mut().zip(&report.counters) {
                    sum.add(counters);
                }
                total.cpu += report.cpu;
                total.wall = total.wall.max(report.wall);
            }
        }
        Ok(merge_pair(&sides[0], &sides[1]))
    }
}

/// What happens to a serial pair during a disturbed run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SerialEvent {
    /// The line loses everything, both ways, for this long.
    Outage(Duration),
    /// A side's gateway restarts, down for this long.
    Restart(usize, Duration),
}

/// The transfer of `scenario` (whose mode must be [`Mode::Serial`]) with `events` applied, each
/// at its time after the transfer starts; the outcome as [`super::run`]'s.
pub fn run_serial_disturbed(
    scenario: &Scenario,
    events: &[(Duration, SerialEvent)],
) -> Result<Outcome, Error> {
    let Mode::Serial { kiss, baud } = scenario.mode else {
        return Err(Error::new("a disturbed serial run needs the serial mode"));
    };
    let Prepared {
        netns,
        tuns,
        congestion_control,
    } = prepare(scenario)?;
    let namespaces = netns.each_ref().map(|ns| ns.name().to_owned());
    let options = LoopOptions::default();
    let (result, report) = on_serial_line(scenario, kiss, baud, tuns, &options, |pair| {
        std::thread::scope(|scope| {
            let transfer =
                scope.spawn(|| transfer_between(scenario, &namespaces, &Watch::default()));
            let started = Instant::now();
            let mut applied = Ok(());
            for &(at, event) in events {
                std::thread::sleep(at.saturating_sub(started.elapsed()));
                let done = match event {
                    SerialEvent::Outage(d) => {
                        pair.outage(d);
                        Ok(())
                    }
                    SerialEvent::Restart(side, down) => pair.restart(side, down),
                };
                if done.is_err() {
                    applied = done;
                    break;
                }
            }
            let transfer = transfer
                .join()
                .unwrap_or_else(|_| Err(Error::new("the transfer panicked")));
            (transfer, applied)
        })
    })?;
    let (transfer, applied) = result;
    applied?;
    drop(netns);
    Ok(Outcome {
        transfer: transfer?,
        report,
        namespaces,
        congestion_control,
        applied: Vec::new(),
        relay: None,
        probes_delivered: [0; 2],
    })
}

/// The data path's settings of side `side` (0: A, 1: B) of `scenario`'s pair of gateways on a
/// link that keeps order: it sends with the scenario's forward scheme if A, its reverse one if B.
fn side_config(
    scenario: &Scenario,
    side: usize,
    auth: Option<taroc_gateway::auth::AuthConfig>,
) -> EndpointConfig {
    let [forward, reverse] = scenario.variants.clone();
    EndpointConfig {
        variants: if side == 0 {
            [forward, reverse]
        } else {
            [reverse, forward]
        },
        link: LinkConfig {
            mtu: scenario.link.mtu,
            ..LinkConfig::default()
        },
        tun_mtu: scenario.tun_mtu as usize,
        seed: scenario.seed,
        verify_checksums: true,
        auth,
        may_reorder: false,
    }
}

/// Stops the two gateways of a pair (A first in `workers`); their reports merged
/// ([`merge_pair`]).
fn finish_pair(mut workers: Vec<Worker>) -> Result<RunReport, Error> {
    let b = workers
        .pop()
        .ok_or_else(|| Error::new("gateway B missing"))?
        .finish()?;
    let a = workers
        .pop()
        .ok_or_else(|| Error::new("gateway A missing"))?
        .finish()?;
    Ok(merge_pair(&a, &b))
}

/// The report of the directions a->b and b->a from gateway A's and B's, the medium's bytes
/// counted once per direction, as their sender put them on it.
fn merge_pair(a: &RunReport, b: &RunReport) -> RunReport {
    let mut forward = a.counters[0].clone();
    forward.add(&b.counters[1]);
    let mut reverse = b.counters[0].clone();
    reverse.add(&a.counters[1]);
    forward.medium_bytes = a.counters[0].medium_bytes;
    reverse.medium_bytes = b.counters[0].medium_bytes;
    RunReport {
        counters: [forward, reverse],
        cpu: a.cpu + b.cpu,
        wall: a.wall.max(b.wall),
    }
}

/// A veth pair in this namespace, deleted on drop.
struct VethPair {
    names: [String; 2],
}

impl VethPair {
    /// A fresh pair with a large MTU (a link frame is the TUN MTU and some framing), up.
    fn create() -> Result<VethPair, Error> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let base = format!("tre{}x{n}", std::process::id() % 100_000);
        let names = [format!("{base}a"), format!("{base}b")];
        netns::ip(&[
            "link", "add", &names[0], "type", "veth", "peer", "name", &names[1],
        ])?;
        let pair = VethPair { names };
        for name in &pair.names {
            netns::ip(&["link", "set", name, "mtu", "9000", "up"])?;
        }
        Ok(pair)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        let _ = netns::ip(&["link", "del", &self.names[0]]);
    }
}

/// Runs `work` while a gateway on each of `tuns` sends raw Ethernet frames to the other over a
/// veth pair; what it returned and the gateways' report.
pub(super) fn on_ethernet_link<T>(
    scenario: &Scenario,
    tuns: [Tun; 2],
    options: &LoopOptions,
    work: impl FnOnce() -> T,
) -> Result<(T, RunReport), Error> {
    let veth = VethPair::create()?;
    let macs = [
        taroc_gateway::ethernet::interface_mac(&veth.names[0])?,
        taroc_gateway::ethernet::interface_mac(&veth.names[1])?,
    ];
    let auth = match scenario.authenticated {
        true => Some(taroc_gateway::auth::AuthConfig {
            key: taroc_gateway::keyfile::generate()?,
            tag_len: taroc_gateway::auth::DEFAULT_TAG_LEN,
        }),
        false => None,
    };
    let mut workers = Vec::new();
    for (side, tun) in tuns.into_iter().enumerate() {
        let transport = EthernetTransport::open(&EthernetConfig {
            interface: veth.names[side].clone(),
            peer: macs[1 - side],
            ethertype: taroc_gateway::ethernet::DEFAULT_ETHERTYPE,
            socket_buffer: taroc_gateway::socket::DEFAULT_SOCKET_BUFFER,
        })?;
        let endpoint = side_config(scenario, side, auth.clone());
        let options = options.clone();
        workers.push(Worker::spawn(move |stop| {
            taroc_gateway::transport::run_fresh(&tun, transport, &endpoint, stop, &options)
        })?);
    }
    let result = work();
    let report = finish_pair(workers)?;
    drop(veth);
    Ok((result, report))
}

/// What a cell of the serial bench measured: a bulk transfer, then one-byte echoes.
#[derive(Debug, Clone)]
pub struct SerialCell {
    /// The bulk transfer of the scenario.
    pub bulk: TransferResult,
    /// The request/echo exchanges after it.
    pub echo: EchoResult,
    /// The gateways' counters and CPU time over both.
    pub report: RunReport,
}

/// A cell of the serial bench: the bulk transfer of `scenario` (whose mode must be
/// [`Mode::Serial`]), then, once the line is idle, `exchanges` one-byte request/echo exchanges
/// ([`crate::echo`]), over one emulated line and its two gateways.
pub fn run_serial_cell(scenario: &Scenario, exchanges: u32) -> Result<SerialCell, Error> {
    let Mode::Serial { kiss, baud } = scenario.mode else {
        return Err(Error::new("a serial bench cell needs the serial mode"));
    };
    let Prepared {
        netns,
        tuns,
        congestion_control: _,
    } = prepare(scenario)?;
    let namespaces = netns.each_ref().map(|ns| ns.name().to_owned());
    let options = LoopOptions::default();
    let ((bulk, echo), report) = on_serial_line(scenario, kiss, baud, tuns, &options, |pair| {
        let bulk = transfer_between(scenario, &namespaces, &Watch::default());
        // The exchanges start on an idle line, as a user's keystrokes would: not behind the
        // bulk transfer's last frames (a 1500-byte frame holds a 9,600-baud line 1.6 s).
        pair.wait_quiet(Duration::from_millis(500), Duration::from_secs(30));
        let addr = SocketAddr::new(scenario.ip_version.address(1), 5202);
        let echo = crate::echo::run(
            &namespaces[0],
            &namespaces[1],
            addr,
            exchanges,
            scenario.transfer.time_limit,
        );
        (bulk, echo)
    })?;
    drop(netns);
    Ok(SerialCell {
        bulk: bulk?,
        echo: echo?,
        report,
    })
}
