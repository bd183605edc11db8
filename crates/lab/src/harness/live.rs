//! Two UDP gateways kept running between the steps a test takes in turn: transfers, stops and
//! starts of either gateway, and the relay's recordings and injections ([`crate::relay`]).
//! [`super::run_disturbed`] strikes once, during one transfer; a [`LivePair`] lets a test
//! compose what happens before, between and after transfers (new connections after a restart,
//! a frame recorded in one run of a gateway and replayed to the next).
//!
//! Set up as [`super::Mode::Udp`]: namespaces A and B, a TUN device in each, a gateway per TUN
//! device, the relay between them. Everything is undone on drop, whatever happens: the gateway
//! threads and the relay are stopped and joined, then the namespaces deleted.

use std::net::SocketAddr;
use std::time::Duration;

use super::threads::{UdpGateway, UdpPair};
use super::{prepare, Mode, Prepared, Scenario};
use crate::relay::{Relay, RelayCounters};
use crate::transfer::{self, TransferConfig, TransferResult};
use taroc_gateway::gateway::{LoopOptions, RunReport};
use taroc_gateway::netns::Netns;
use taroc_gateway::Error;

/// The TCP port the receiver of [`LivePair::transfer`] listens on, in namespace B.
pub const TRANSFER_PORT: u16 = 5201;

/// Two running UDP gateways, the relay between them, and their namespaces.
pub struct LivePair {
    // Dropped in this order: the gateways and the relay, then the namespaces.
    pair: UdpPair,
    namespaces: [String; 2],
    /// The address the receivers of transfers listen on.
    receiver: SocketAddr,
    netns: [Netns; 2],
}

/// What the gateways of a [`LivePair`] counted.
#[derive(Debug, Clone)]
pub struct LiveReport {
    /// Per gateway (A, B), the report of each of its runs in order (one more per restart);
    /// `counters[0]` of a report is the gateway's sending direction, `counters[1]` its
    /// receiving one.
    pub runs: [Vec<RunReport>; 2],
    /// The relay's counters.
    pub relay: RelayCounters,
}

impl LivePair {
    /// Makes the namespaces and TUN devices of `scenario` (which must be of [`Mode::Udp`]) and
    /// starts the relay and the gateways, B `stagger` after A (an authenticated gateway's
    /// counters start at the wall clock: B's then count above A's).
    pub fn start(scenario: &Scenario, stagger: Duration) -> Result<LivePair, Error> {
        if scenario.mode != Mode::Udp {
            return Err(Error::new(
                "a live pair is two UDP gateways: the scenario must be of the UDP mode",
            ));
        }
        let Prepared { netns, tuns, .. } = prepare(scenario)?;
        let pair = UdpPair::start(scenario, tuns, &LoopOptions::default(), stagger)?;
        Ok(LivePair {
            pair,
            namespaces: netns.each_ref().map(|ns| ns.name().to_owned()),
            receiver: SocketAddr::new(scenario.ip_version.address(1), TRANSFER_PORT),
            netns,
        })
    }

    /// The names of namespaces A and B.
    pub fn namespaces(&self) -> &[String; 2] {
        &self.namespaces
    }

    /// A new TCP connection from namespace A to B through the gateways, carrying `config`'s
    /// bytes, checked byte for byte ([`transfer::run`]; it ends by `config.time_limit`).
    pub fn transfer(&self, config: &TransferConfig) -> Result<TransferResult, Error> {
        transfer::run(
            &self.namespaces[0],
            &self.namespaces[1],
            self.receiver,
            config,
        )
    }

    /// The relay between the gateways.
    pub fn relay(&self) -> &Relay {
        &self.pair.relay
    }

    /// Gateway `side` (0: A, 1: B).
    fn gateway(&mut self, side: usize) -> Result<&mut UdpGateway, Error> {
        self.pair
            .gateways
            .get_mut(side)
            .ok_or_else(|| Error::new(format!("no gateway {side}: 0 is A, 1 is B")))
    }

    /// Stops gateway `side` (its thread ends and its socket closes; what comes meanwhile is
    /// lost), keeping its report.
    pub fn stop(&mut self, side: usize) -> Result<(), Error> {
        self.gateway(side)?.stop()
    }

    /// Starts a fresh gateway `side` (new codec state; on an authenticated link a new sender id
    /// and counters from the wall clock) on the TUN device and UDP address of the one stopped.
    pub fn start_again(&mut self, side: usize) -> Result<(), Error> {
        self.gateway(side)?.start_again()
    }

    /// Stops gateway `side`, waits `down`, and starts a fresh one.
    pub fn restart(&mut self, side: usize, down: Duration) -> Result<(), Error> {
        self.gateway(side)?.restart(down)
    }

    /// Stops the relay and the gateways, deletes the namespaces; what the gateways counted.
    pub fn finish(self) -> Result<LiveReport, Error> {
        let LivePair { pair, netns, .. } = self;
        let finished = pair.finish_runs();
        drop(netns);
        let (runs, relay) = finished?;
        Ok(LiveReport { runs, relay })
    }
}
