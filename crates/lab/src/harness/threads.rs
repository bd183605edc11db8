//! The gateway threads of a run: a [`Worker`] thread stopped and joined on drop, a restartable
//! UDP gateway ([`UdpGateway`], what [`crate::disturb`] restarts), and the two UDP gateways of
//! [`super::Mode::Udp`] with the relay between them ([`UdpPair`]).

use std::net::{Ipv4Addr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::Scenario;
use crate::relay::{Relay, RelayCounters};
use taroc_gateway::endpoint::EndpointConfig;
use taroc_gateway::gateway::{LoopOptions, RunReport};
use taroc_gateway::tun::Tun;
use taroc_gateway::udp::{self, UdpConfig};
use taroc_gateway::Error;

/// A gateway thread; stopped and joined on drop.
pub(super) struct Worker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<RunReport, Error>>>,
}

impl Worker {
    pub(super) fn spawn(
        work: impl FnOnce(&AtomicBool) -> Result<RunReport, Error> + Send + 'static,
    ) -> Result<Worker, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("taroc-gateway".into())
            .spawn(move || work(&thread_stop))
            .map_err(|e| Error::io("starting a gateway thread", e))?;
        Ok(Worker {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the thread and returns its report.
    pub(super) fn finish(mut self) -> Result<RunReport, Error> {
        self.stop.store(true, Ordering::Relaxed);
        match self.handle.take() {
            Some(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(Error::new("a gateway thread panicked"))),
            None => Err(Error::new("the gateway thread was already joined")),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// A UDP gateway of [`Mode::Udp`](super::Mode::Udp) in a thread of its own, which can be restarted:
/// stopped (its thread ends, its codec state is gone, what arrives meanwhile is lost) and started
/// anew on the same TUN device and UDP address. The thread is stopped and joined on drop.
pub(crate) struct UdpGateway {
    tun: Arc<Tun>,
    config: UdpConfig,
    options: LoopOptions,
    /// A handle on the gateway's socket kept while it is down, so that no other socket of the
    /// host can take its port (a test's other sockets bind ports of the kernel's choice); what
    /// it queues while the gateway is down is dropped on restart, as a stopped process loses it.
    held: UdpSocket,
    worker: Option<Worker>,
    /// The reports of the threads that ended.
    reports: Vec<RunReport>,
}

impl UdpGateway {
    fn start(
        tun: Tun,
        socket: UdpSocket,
        config: UdpConfig,
        options: LoopOptions,
    ) -> Result<UdpGateway, Error> {
        let held = socket
            .try_clone()
            .map_err(|e| Error::io("holding the gateway's UDP socket", e))?;
        let mut gateway = UdpGateway {
            tun: Arc::new(tun),
            config,
            options,
            held,
            worker: None,
            reports: Vec::new(),
        };
        gateway.spawn(socket)?;
        Ok(gateway)
    }

    fn spawn(&mut self, socket: UdpSocket) -> Result<(), Error> {
        let tun = Arc::clone(&self.tun);
        let (config, options) = (self.config.clone(), self.options.clone());
        self.worker = Some(Worker::spawn(move |stop| {
            udp::run_udp_on(&tun, socket, &config, stop, &options)
        })?);
        Ok(())
    }

    /// Stops the thread (if running) and keeps its report.
    pub(super) fn stop(&mut self) -> Result<(), Error> {
        if let Some(worker) = self.worker.take() {
            self.reports.push(worker.finish()?);
        }
        Ok(())
    }

    /// Whether the gateway's thread runs (it was not stopped, or was started again).
    pub(super) fn is_running(&self) -> bool {
        self.worker.is_some()
    }

    /// Stops the gateway, waits `down`, and starts a fresh one (new compressor and
    /// decompressor) on the same TUN device and UDP address. As `kill -9` and a restart of a
    /// gateway process would, except that the TUN device stays: a process that dies closes a
    /// non-persistent TUN device, and the kernel deletes it with its addresses and routes.
    pub(crate) fn restart(&mut self, down: Duration) -> Result<(), Error> {
        self.stop()?;
        std::thread::sleep(down);
        self.start_again()
    }

    /// Starts a fresh gateway (new codec state, a new sender id on an authenticated link) on
    /// the TUN device and UDP address of the one stopped ([`UdpGateway::stop`]).
    pub(super) fn start_again(&mut self) -> Result<(), Error> {
        if self.is_running() {
            return Err(Error::new("the gateway runs already"));
        }
        drop_queued(&self.held)
            .map_err(|e| Error::io(format!("emptying UDP {}", self.config.listen), e))?;
        let socket = self
            .held
            .try_clone()
            .map_err(|e| Error::io(format!("reopening UDP {}", self.config.listen), e))?;
        self.spawn(socket)
    }

    /// Stops the gateway; the report of each of its runs, in order.
    pub(super) fn finish_runs(mut self) -> Result<Vec<RunReport>, Error> {
        self.stop()?;
        Ok(self.reports)
    }

    /// Stops the gateway; its reports, added up over its restarts.
    fn finish(self) -> Result<RunReport, Error> {
        let mut total = RunReport::default();
        for report in &self.finish_runs()? {
            for (sum, counters) in total.counters.iter_mut().zip(&report.counters) {
                sum.add(counters);
            }
            total.cpu += report.cpu;
            total.wall += report.wall;
        }
        Ok(total)
    }
}

/// Drops the datagrams queued on `socket` (what reached a stopped gateway).
fn drop_queued(socket: &UdpSocket) -> std::io::Result<()> {
    socket.set_nonblocking(true)?;
    let mut buffer = [0u8; 2048];
    loop {
        match socket.recv(&mut buffer) {
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            // A peer's earlier datagram refused (ICMP) is reported once; go on.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Binds a loopback UDP socket on a port of the kernel's choice.
fn bind_loopback() -> Result<UdpSocket, Error> {
    UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| Error::io("binding a loopback UDP socket", e))
}

/// The two UDP gateways of [`Mode::Udp`](super::Mode::Udp) and the relay between them.
pub(super) struct UdpPair {
    pub(super) gateways: [UdpGateway; 2],
    pub(super) relay: Relay,
}

impl UdpPair {
    /// Starts the relay and both gateways of `scenario` on `tuns`, B `stagger` after A.
    pub(super) fn start(
        scenario: &Scenario,
        tuns: [Tun; 2],
        options: &LoopOptions,
        stagger: Duration,
    ) -> Result<UdpPair, Error> {
        let sockets = [bind_loopback()?, bind_loopback()?];
        let local = |s: &UdpSocket| {
            s.local_addr()
                .map_err(|e| Error::io("reading a socket's address", e))
        };
        let addresses = [local(&sockets[0])?, local(&sockets[1])?];
        let relay = Relay::start(addresses, scenario.variants.clone())?;
        let [forward, reverse] = scenario.variants.clone();
        let variants = [[forward.clone(), reverse.clone()], [reverse, forward]];
        let seeds = [scenario.seed, scenario.seed ^ 0x5555];
        // One key for both gateways, made for this run (the default users get: authenticated).
        let auth = match scenario.authenticated {
            true => Some(taroc_gateway::auth::AuthConfig {
                key: taroc_gateway::keyfile::generate()?,
                tag_len: taroc_gateway::auth::DEFAULT_TAG_LEN,
            }),
            false => None,
        };
        let mut gateways = Vec::with_capacity(2);
        for (side, (tun, socket)) in tuns.into_iter().zip(sockets).enumerate() {
            if side == 1 && !stagger.is_zero() {
                std::thread::sleep(stagger);
            }
            let config = UdpConfig {
                listen: addresses[side],
                peer: relay.face(side)?,
                socket_buffer: taroc_gateway::socket::DEFAULT_SOCKET_BUFFER,
                endpoint: EndpointConfig {
                    variants: variants[side].clone(),
                    link: scenario.link.clone(),
                    tun_mtu: scenario.tun_mtu as usize,
                    seed: seeds[side],
                    verify_checksums: true,
                    auth: auth.clone(),
                    may_reorder: true,
                },
            };
            gateways.push(UdpGateway::start(tun, socket, config, options.clone())?);
        }
        let gateways = gateways
            .try_into()
            .map_err(|_| Error::new("two gateways expected"))?;
        Ok(UdpPair { gateways, relay })
    }

    /// Stops the relay and both gateways; the reports of each gateway's runs, in order.
    pub(super) fn finish_runs(self) -> Result<([Vec<RunReport>; 2], RelayCounters), Error> {
        let relay = self.relay.counters();
        drop(self.relay);
        let [a, b] = self.gateways;
        Ok(([a.finish_runs()?, b.finish_runs()?], relay))
    }

    /// Stops both gateways and the relay; the report of the directions a->b and b->a.
    pub(super) fn finish(self) -> Result<(RunReport, RelayCounters), Error> {
        let relay = self.relay.counters();
        drop(self.relay);
        let [a, b] = self.gateways;
        let (a, b) = (a.finish()?, b.finish()?);
        let mut forward = a.counters[0].clone();
        forward.add(&b.counters[1]);
        let mut reverse = b.counters[0].clone();
        reverse.add(&a.counters[1]);
        // The network's bytes once, as their sender put them on it.
        forward.medium_bytes = a.counters[0].medium_bytes;
        reverse.medium_bytes = b.counters[0].medium_bytes;
        let report = RunReport {
            counters: [forward, reverse],
            cpu: a.cpu + b.cpu,
            wall: a.wall.max(b.wall),
        };
        Ok((report, relay))
    }
}
