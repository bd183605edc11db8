//! Disturbances of a live transfer through two UDP gateways, and what they cost: "robust" means
//! the transfer goes on.
//!
//! - [`Disturbance::Restart`]: a gateway's thread stops, and after a while a fresh one (new
//!   codec state) starts on the same TUN device and UDP address. This is what `kill -9` and a
//!   restart of a gateway process do, except that the TUN device survives here: a process that
//!   dies closes a non-persistent TUN device, and the kernel deletes it with its addresses and
//!   routes (a real deployment would use a persistent device, `ip tuntap add`, to keep them);
//! - [`Disturbance::Loss`]: the relay between the gateways ([`crate::relay`]) drops the next N
//!   datagrams of one direction or both. TCP stops sending when nothing is acknowledged, so a
//!   burst of N frames may not come in a transfer's lifetime: the burst also ends after a
//!   longest duration, and the report says how many frames it took;
//! - [`Disturbance::ForgeOnePerContext`]: for each CID the relay has seen in use, one forged
//!   frame that sets up a context for another flow on that CID, to each gateway, and a forged
//!   `TYPE_IP` probe ([`crate::forge`]);
//! - [`Disturbance::Flood`]: forged frames of every kind on every CID 0..=255, to each gateway.
//!
//! Forged datagrams come from the relay's face, the very address each gateway takes for its
//! peer's.
//!
//! What is measured, from the receiver's progress samples ([`crate::transfer::Sample`]):
//! - **time to resume** ([`time_to_resume`]): from the end of a disturbance (gateway started
//!   again, burst over, forgeries sent) to the first read of a byte that the sender's TCP sent
//!   for the first time after that end ([`crate::transfer::Watch::bytes_sent_on_wire`]). Bytes
//!   that were on their way (in a gateway's link queue, say) arrive after the end whatever the
//!   disturbance did, and bytes a sender still sends on acknowledgments that crossed before it
//!   too: neither says the path works again. A byte sent after the end does, once all before it
//!   (retransmitted if lost) arrived too;
//! - **longest stall** ([`longest_stall`]): the longest time the receiver read nothing.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use taroc_core::variant::Variant;

use crate::forge;
use crate::harness::UdpGateway;
use crate::relay::Relay;
use crate::transfer::{Sample, Watch};
use taroc_gateway::Error;

/// Forged datagrams sent back to back before a millisecond's pause, in a flood.
const FLOOD_BATCH: usize = 64;

/// Which way datagrams go between the gateways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directions {
    /// From gateway A (the sender's side) to B: the data.
    AToB,
    /// From B to A: the acknowledgments.
    BToA,
    /// Both.
    Both,
}

impl Directions {
    /// The relay's direction indices ([`crate::relay::DIRECTIONS`]).
    fn indices(self) -> &'static [usize] {
        match self {
            Directions::AToB => &[0],
            Directions::BToA => &[1],
            Directions::Both => &[0, 1],
        }
    }

    /// `a->b`, `b->a` or `both`.
    pub fn name(self) -> &'static str {
        match self {
            Directions::AToB => "a->b",
            Directions::BToA => "b->a",
            Directions::Both => "both",
        }
    }
}

/// Gateway A (index 0, in the sender's namespace) or B (index 1, the receiver's).
pub const SIDES: [&str; 2] = ["A", "B"];

/// Something that happens to a running transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disturbance {
    /// Nothing: the time is only marked, so that an undisturbed run measures what resuming
    /// takes without a disturbance (the bytes on their way must arrive first).
    Nothing,
    /// Stop gateway `side` (0: A, 1: B), wait `down`, start a fresh one.
    Restart {
        /// 0: A, 1: B.
        side: usize,
        /// How long the gateway stays down.
        down: Duration,
    },
    /// The relay drops the next `frames` datagrams of `directions` (each), for at most
    /// `longest`.
    Loss {
        /// Which directions lose.
        directions: Directions,
        /// Datagrams to drop per direction.
        frames: u64,
        /// The burst ends after this long, even if fewer frames came.
        longest: Duration,
    },
    /// One forged context-setting frame per CID in use, and a forged `TYPE_IP` probe, to each
    /// gateway.
    ForgeOnePerContext,
    /// `per_cid` forged frames of every kind on each CID 0..=255, to each gateway.
    Flood {
        /// Frames per CID and kind.
        per_cid: usize,
    },
}

impl Disturbance {
    /// A short name for tables.
    pub fn label(&self) -> String {
        match self {
            Disturbance::Nothing => "none".into(),
            Disturbance::Restart { side, down } => {
                format!("restart {} ({} s down)", SIDES[*side], down.as_secs_f64())
            }
            Disturbance::Loss {
                directions,
                frames,
                longest,
            } => format!(
                "lose {frames} frames {} (at most {} s)",
                directions.name(),
                longest.as_secs_f64()
            ),
            Disturbance::ForgeOnePerContext => "forge one frame per context".into(),
            Disturbance::Flood { per_cid } => {
                let kinds = taroc_core::FrameKind::ALL.len();
                format!("flood: {per_cid} x {kinds} kinds x 256 CIDs")
            }
        }
    }
}

/// A disturbance and when to apply it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Apply it once the receiver has read this many bytes.
    pub at_bytes: u64,
    /// What to do.
    pub disturbance: Disturbance,
}

/// A disturbance as it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// What was done.
    pub disturbance: Disturbance,
    /// When it began, ns after the connection was accepted.
    pub start_ns: u64,
    /// When it ended.
    pub end_ns: u64,
    /// Bytes of the stream the sender's TCP had sent when it ended (or, if the sender's socket
    /// could not tell, those the receiver had read).
    pub sent_by_end: u64,
    /// What it did, in words (frames dropped, CIDs forged, ...).
    pub detail: String,
}

/// A gateway as a target of forgeries: the scheme it decompresses, the address it serves.
#[derive(Debug, Clone)]
pub struct Victim {
    /// The scheme of the frames it receives.
    pub variant: Variant,
    /// The address of its namespace.
    pub address: IpAddr,
}

/// Time from the end of `applied` to the first read of a byte sent after it, in ns; `None` if
/// no such read came.
pub fn time_to_resume(progress: &[Sample], applied: &Applied) -> Option<u64> {
    progress
        .iter()
        .find(|s| s.at_ns > applied.end_ns && s.bytes > applied.sent_by_end)
        .map(|s| s.at_ns - applied.end_ns)
}

/// The longest time without a read, from the accept to `elapsed_ns` (the end of the stream or
/// the time limit), in ns.
pub fn longest_stall(progress: &[Sample], elapsed_ns: u64) -> u64 {
    let mut last = 0;
    let mut longest = 0;
    for at in progress.iter().map(|s| s.at_ns).chain([elapsed_ns]) {
        longest = longest.max(at.saturating_sub(last));
        last = last.max(at);
    }
    longest
}

/// Sends `datagrams` to gateway `side` through the relay, pausing a millisecond after every
/// [`FLOOD_BATCH`] so that the gateway's socket buffer does not overflow (a flood of forgeries,
/// not a loss).
fn inject(relay: &Relay, side: usize, datagrams: &[Vec<u8>]) -> Result<(), Error> {
    for batch in datagrams.chunks(FLOOD_BATCH) {
        for datagram in batch {
            relay.inject(side, datagram)?;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Applies one disturbance; returns what it did.
fn apply(
    disturbance: &Disturbance,
    gateways: &mut [UdpGateway; 2],
    relay: &Relay,
    victims: &[Victim; 2],
    watch: &Watch,
    seed: u64,
) -> Result<String, Error> {
    Ok(match disturbance {
        Disturbance::Nothing => "nothing".into(),
        Disturbance::Restart { side, down } => {
            let started = Instant::now();
            gateways[*side].restart(*down)?;
            format!(
                "gateway {} down {:.3} s",
                SIDES[*side],
                started.elapsed().as_secs_f64()
            )
        }
        Disturbance::Loss {
            directions,
            frames,
            longest,
        } => {
            let started = Instant::now();
            for &d in directions.indices() {
                relay.start_dropping(d, *frames);
            }
            let pending = || {
                directions
                    .indices()
                    .iter()
                    .any(|&d| relay.still_to_drop(d) > 0)
            };
            while pending() && started.elapsed() < *longest && !watch.finished() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let dropped: Vec<String> = directions
                .indices()
                .iter()
                .map(|&d| {
                    let left = relay.stop_dropping(d);
                    format!("{} {}", crate::relay::DIRECTIONS[d], frames - left)
                })
                .collect();
            format!(
                "dropped {} frames in {:.3} s",
                dropped.join(", "),
                started.elapsed().as_secs_f64()
            )
        }
        Disturbance::ForgeOnePerContext => {
            let mut detail = Vec::new();
            for (side, victim) in victims.iter().enumerate() {
                // Gateway `side` decompresses what the other one sends.
                let cids = relay.cids_seen(1 - side);
                let forged = forge::one_per_context(&victim.variant, victim.address, &cids);
                inject(relay, side, &forged)?;
                detail.push(format!(
                    "to {}: {} frames (CIDs {cids:?} and TYPE_IP)",
                    SIDES[side],
                    forged.len()
                ));
            }
            detail.join("; ")
        }
        Disturbance::Flood { per_cid } => {
            let mut detail = Vec::new();
            for (side, victim) in victims.iter().enumerate() {
                let forged = forge::flood(&victim.variant, victim.address, *per_cid, seed);
                inject(relay, side, &forged)?;
                detail.push(format!("to {}: {} frames", SIDES[side], forged.len()));
            }
            detail.join("; ")
        }
    })
}

/// Applies `plan` in order to a running transfer, each disturbance once the receiver has read
/// its bytes; stops early if the receiver finishes first (the rest are not applied).
pub(crate) fn apply_plan(
    plan: &[Planned],
    gateways: &mut [UdpGateway; 2],
    relay: &Relay,
    victims: &[Victim; 2],
    watch: &Watch,
    seed: u64,
) -> Result<Vec<Applied>, Error> {
    let mut applied = Vec::with_capacity(plan.len());
    for planned in plan {
        while watch.bytes_received() < planned.at_bytes && !watch.finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        if watch.finished() {
            break;
        }
        let start = Instant::now();
        let detail = apply(&planned.disturbance, gateways, relay, victims, watch, seed)?;
        let end = Instant::now();
        let sent_by_end = watch
            .bytes_sent_on_wire()
            .unwrap_or_else(|| watch.bytes_received());
        applied.push(Applied {
            disturbance: planned.disturbance.clone(),
            start_ns: watch.since_accept(start),
            end_ns: watch.since_accept(end),
            sent_by_end,
            detail,
        });
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(points: &[(u64, u64)]) -> Vec<Sample> {
        points
            .iter()
            .map(|&(at_ns, bytes)| Sample { at_ns, bytes })
            .collect()
    }

    #[test]
    fn resume_is_the_first_read_of_a_byte_sent_after_the_end() {
        let progress = samples(&[(10, 100), (20, 200), (25, 250), (900, 300), (910, 400)]);
        let applied = |end_ns, sent_by_end| Applied {
            disturbance: Disturbance::ForgeOnePerContext,
            start_ns: end_ns,
            end_ns,
            sent_by_end,
            detail: String::new(),
        };
        // Bytes that were on their way at the end (read at 25 ns) do not count as resuming.
        assert_eq!(time_to_resume(&progress, &applied(22, 250)), Some(878));
        assert_eq!(time_to_resume(&progress, &applied(5, 100)), Some(15));
        assert_eq!(time_to_resume(&progress, &applied(905, 400)), None);
    }

    #[test]
    fn longest_stall_counts_the_start_and_the_end() {
        assert_eq!(longest_stall(&samples(&[(10, 1), (20, 2)]), 25), 10);
        assert_eq!(longest_stall(&samples(&[(50, 1), (60, 2)]), 70), 50);
        assert_eq!(longest_stall(&samples(&[(10, 1), (20, 2)]), 500), 480);
        assert_eq!(longest_stall(&[], 7), 7);
    }

    #[test]
    fn labels_name_the_disturbance() {
        let loss = Disturbance::Loss {
            directions: Directions::Both,
            frames: 5000,
            longest: Duration::from_secs(3),
        };
        assert_eq!(loss.label(), "lose 5000 frames both (at most 3 s)");
        let restart = Disturbance::Restart {
            side: 1,
            down: Duration::from_secs(1),
        };
        assert_eq!(restart.label(), "restart B (1 s down)");
        assert_eq!(Directions::BToA.indices(), &[1]);
    }
}
