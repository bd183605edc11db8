//! Outages: how long a flow stays broken when its decompressor loses or damages its context.
//!
//! An outage of a flow (one direction of one connection) starts at the first frame of that flow
//! the decompressor refuses for context damage ([`taroc_core::DropReason::is_context_damage`])
//! or delivers wrong (which the receiver's checksum then drops), and ends at the next frame of
//! the flow delivered correctly. A decompressor reset (a fresh decompressor, as after a restart
//! of the peer) breaks every flow seen before it from the moment of the reset, as soon as the
//! flow's next frame arriving intact is refused; a flow whose next intact frame is delivered
//! correctly had no outage. An outage's length is counted in time (its start to the delivery
//! that ends it) and in packets (the flow's frames sent meanwhile that were not delivered:
//! refused, wrong, or lost on the link). An outage still open when the run ends is measured to
//! the end and marked unended. Link losses alone are not outages.
//!
//! Within an outage, a *refused run* is the frames of the flow the link delivered in a row and
//! the decompressor still refused (or delivered wrong), from the outage's start or the flow's
//! last frame the link lost, whichever came later, to the delivery that ends the outage (or to
//! the end of the run): what a codec's own repairs must bound, since no rule without feedback
//! outlasts a link that loses every repair frame. Its length is counted in frames and in time
//! (from the run's first refused frame).
//!
//! Memory is bounded: a tracker follows at most [`MAX_FLOWS`] flows at once (an endless stream
//! of new flows would otherwise grow it for ever). Beyond that it forgets flows, working ones
//! first, the least recently seen first, and counts them ([`OutageStats::forgotten_flows`]); a
//! broken flow it forgets counts as an outage still open at that moment. Captures with fewer
//! flows than that are measured exactly.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use serde::Serialize;
use taroc_wire::checksum::transport_verifies;
use taroc_wire::ip::IpInfo;

/// What became of one frame of a flow at the decompressor's end of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFate {
    /// Delivered, and equal to the original (or passing the receiver's checksum).
    Delivered,
    /// Refused for context damage, or delivered wrong.
    Damaged,
    /// Lost on the link, or refused for another reason.
    Lost,
}

/// A flow's identity: addresses, protocol and ports of the original packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowId {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// IP protocol (0 when the header does not parse).
    pub protocol: u8,
    /// Source and destination ports (TCP and UDP; zero otherwise).
    pub ports: [u16; 2],
}

impl FlowId {
    /// The flow of `packet` (unparsable packets share one flow of unspecified addresses).
    pub fn of(packet: &[u8]) -> FlowId {
        let unspecified = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        let Ok(ip) = IpInfo::parse(packet) else {
            return FlowId {
                src: unspecified,
                dst: unspecified,
                protocol: 0,
                ports: [0; 2],
            };
        };
        let port = |at: usize| {
            packet
                .get(ip.transport_offset + at..ip.transport_offset + at + 2)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
        };
        let ports = if !ip.fragment && (ip.protocol == 6 || ip.protocol == 17) {
            [port(0), port(2)]
        } else {
            [0; 2]
        };
        FlowId {
            src: ip.src,
            dst: ip.dst,
            protocol: ip.protocol,
            ports,
        }
    }
}

/// Whether a receiving host would accept `packet`: its IP header parses and, for TCP and UDP
/// (unfragmented), the transport checksum verifies. What a decompressor that does not verify
/// its output (VJ) delivers wrong is dropped here.
pub fn receiver_accepts(packet: &[u8]) -> bool {
    let Ok(ip) = IpInfo::parse(packet) else {
        return false;
    };
    if ip.fragment || !(ip.protocol == 6 || ip.protocol == 17) {
        return true;
    }
    packet
        .get(ip.transport_offset..ip.declared_len.min(packet.len()))
        .is_some_and(|segment| transport_verifies(ip.src, ip.dst, ip.protocol, segment))
}

/// The outages of a run, summarised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct OutageStats {
    /// Outages (ended, or open at the end of the run).
    pub outages: u64,
    /// Of those, the ones still open at the end of the run.
    pub unended_outages: u64,
    /// The most packets any outage cost (the flow's frames not delivered during it).
    pub longest_outage_packets: u64,
    /// The longest outage in seconds (an unended one counts up to the end of the run).
    pub longest_outage_s: f64,
    /// Whether the longest outage in seconds was still open at the end of the run.
    pub longest_outage_unended: bool,
    /// The most intact frames of one flow refused in a row (see the module docs).
    pub longest_refused_run: u64,
    /// The longest refused run in seconds (an unended one counts up to the end of the run).
    pub longest_refused_run_s: f64,
    /// Flows the tracking forgot to stay within [`MAX_FLOWS`] (not serialized when 0). A
    /// forgotten broken flow counts as an outage that was still open when it was forgotten;
    /// a forgotten flow seen again starts afresh, so after a decompressor reset its outage may
    /// start at its next frame rather than at the reset.
    #[serde(skip_serializing_if = "is_zero")]
    pub forgotten_flows: u64,
}

/// Whether `n` is 0 (serde's `skip_serializing_if` for counters that are usually 0).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl OutageStats {
    /// The longest outage of `self` and `other`, outages counted together.
    pub fn merge(self, other: OutageStats) -> OutageStats {
        let (longest_outage_s, longest_outage_unended) =
            if other.longest_outage_s > self.longest_outage_s {
                (other.longest_outage_s, other.longest_outage_unended)
            } else {
                (self.longest_outage_s, self.longest_outage_unended)
            };
        OutageStats {
            outages: self.outages + other.outages,
            unended_outages: self.unended_outages + other.unended_outages,
            longest_outage_packets: self
                .longest_outage_packets
                .max(other.longest_outage_packets),
            longest_outage_s,
            longest_outage_unended,
            longest_refused_run: self.longest_refused_run.max(other.longest_refused_run),
            longest_refused_run_s: self.longest_refused_run_s.max(other.longest_refused_run_s),
            forgotten_flows: self.forgotten_flows + other.forgotten_flows,
        }
    }

    /// Records an outage that began at `down.since` and ended (or was still open) at `at`.
    fn record(&mut self, down: Down, at: Duration, unended: bool) {
        let seconds = at.saturating_sub(down.since).as_secs_f64();
        let packets = down.packets;
        let (run, run_s) = down.longest_run(at);
        self.longest_refused_run = self.longest_refused_run.max(run);
        self.longest_refused_run_s = self.longest_refused_run_s.max(run_s);
        self.outages += 1;
        self.unended_outages += u64::from(unended);
        self.longest_outage_packets = self.longest_outage_packets.max(packets);
        if seconds > self.longest_outage_s || self.outages == 1 {
            self.longest_outage_s = seconds;
            self.longest_outage_unended = unended;
        }
    }
}

/// The state of one flow.
#[derive(Debug, Clone, Copy)]
enum State {
    /// Working.
    Up,
    /// The decompressor was reset at this time; the flow's next intact frame tells whether
    /// that broke it.
    ResetAt(Duration),
    /// Broken.
    Down(Down),
}

/// A broken flow.
#[derive(Debug, Clone, Copy)]
struct Down {
    /// When its outage began.
    since: Duration,
    /// Its frames not delivered so far.
    packets: u64,
    /// Its current refused run, in frames (0 after a frame the link lost).
    run: u64,
    /// When the current refused run began.
    run_since: Duration,
    /// The longest refused run that a lost frame ended: frames and seconds.
    ended_run: (u64, f64),
}

impl Down {
    /// An outage that began at `since` with a refused frame arriving at `at`.
    fn new(since: Duration, at: Duration) -> Down {
        Down {
            since,
            packets: 1,
            run: 1,
            run_since: at,
            ended_run: (0, 0.0),
        }
    }

    /// The longest refused run of this outage, frames and seconds, if it ends at `at`.
    fn longest_run(&self, at: Duration) -> (u64, f64) {
        let (frames, seconds) = self.ended_run;
        let now = if self.run > 0 {
            at.saturating_sub(self.run_since).as_secs_f64()
        } else {
            0.0
        };
        (frames.max(self.run), seconds.max(now))
    }

    /// The same outage after one more frame of the flow, arriving at `at` with `fate` (not
    /// delivered).
    fn then(self, at: Duration, fate: FrameFate) -> Down {
        let (run, run_since, ended_run) = match fate {
            FrameFate::Lost => (0, self.run_since, self.longest_run(at)),
            _ if self.run == 0 => (1, at, self.ended_run),
            _ => (self.run + 1, self.run_since, self.ended_run),
        };
        Down {
            packets: self.packets + 1,
            run,
            run_since,
            ended_run,
            ..self
        }
    }
}

impl State {
    /// The order in which flows are forgotten: working flows first (forgetting one changes
    /// nothing unless the decompressor is reset later), then those waiting on a reset, then
    /// broken ones.
    fn keep_rank(self) -> u8 {
        match self {
            State::Up => 0,
            State::ResetAt(_) => 1,
            State::Down(..) => 2,
        }
    }
}

/// One flow followed: its state, and when it was last seen (the tracker's frame count then).
#[derive(Debug, Clone, Copy)]
struct Flow {
    state: State,
    seen: u64,
}

/// The most flows an [`OutageTracker`] follows at once (about 3 MB of memory): beyond, it
/// forgets some (see the module docs).
pub const MAX_FLOWS: usize = 1 << 14;

/// Follows the flows of one decompressor (or several: the key may include the direction) and
/// measures their outages, following at most a fixed number of flows at once ([`MAX_FLOWS`]
/// unless [`OutageTracker::with_limit`]).
#[derive(Debug, Clone)]
pub struct OutageTracker<K> {
    flows: HashMap<K, Flow>,
    stats: OutageStats,
    /// The most flows followed at once.
    limit: usize,
    /// Frames recorded so far: the clock of `Flow::seen`.
    frames: u64,
}

impl<K: Hash + Eq> Default for OutageTracker<K> {
    fn default() -> Self {
        Self::with_limit(MAX_FLOWS)
    }
}

impl<K: Hash + Eq> OutageTracker<K> {
    /// A tracker with no flows yet, following at most [`MAX_FLOWS`] at once.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tracker with no flows yet, following at most `limit` flows at once (at least 1).
    pub fn with_limit(limit: usize) -> Self {
        OutageTracker {
            flows: HashMap::new(),
            stats: OutageStats::default(),
            limit: limit.max(1),
            frames: 0,
        }
    }

    /// The flows followed now (at most the limit).
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Whether no flow is followed yet.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Forgets flows, at least one, until at most half the limit remain: working flows first,
    /// each kind the least recently seen first (see [`State::keep_rank`]). A broken flow
    /// forgotten counts as an outage open until `at`.
    fn forget(&mut self, at: Duration) {
        let keep = self.limit / 2;
        let mut order: Vec<(u8, u64)> = self
            .flows
            .values()
            .map(|f| (f.state.keep_rank(), f.seen))
            .collect();
        if order.len() <= keep {
            return;
        }
        // `seen` differs between flows (one frame, one flow), so this cut is exact.
        let cut = order.len() - keep - 1;
        let (_, &mut last, _) = order.select_nth_unstable(cut);
        let stats = &mut self.stats;
        self.flows.retain(|_, flow| {
            if (flow.state.keep_rank(), flow.seen) > last {
                return true;
            }
            if let State::Down(down) = flow.state {
                stats.record(down, at, true);
            }
            stats.forgotten_flows += 1;
            false
        });
    }

    /// Records what became of a frame of `flow` at time `at`.
    pub fn frame(&mut self, flow: K, at: Duration, fate: FrameFate) {
        if self.flows.len() >= self.limit && !self.flows.contains_key(&flow) {
            self.forget(at);
        }
        self.frames += 1;
        let entry = self.flows.entry(flow).or_insert(Flow {
            state: State::Up,
            seen: 0,
        });
        entry.seen = self.frames;
        let state = &mut entry.state;
        *state = match (*state, fate) {
            (State::Down(down), FrameFate::Delivered) => {
                self.stats.record(down, at, false);
                State::Up
            }
            (State::Down(down), fate) => State::Down(down.then(at, fate)),
            (_, FrameFate::Delivered) => State::Up,
            (State::Up, FrameFate::Damaged) => State::Down(Down::new(at, at)),
            (State::ResetAt(reset), FrameFate::Damaged) => State::Down(Down::new(reset, at)),
            (state, FrameFate::Lost) => state,
        };
    }

    /// The last frame of `flow` recorded as damaged was delivered after all (late, with the
    /// next frame of its context): one packet fewer in its outage, and no outage if it was
    /// the only one.
    pub fn delivered_late(&mut self, flow: K) {
        if let Some(entry) = self.flows.get_mut(&flow) {
            if let State::Down(down) = entry.state {
                entry.state = match down.packets {
                    0 | 1 => State::Up,
                    n => State::Down(Down {
                        packets: n - 1,
                        run: down.run.saturating_sub(1),
                        ..down
                    }),
                };
            }
        }
    }

    /// The decompressor was replaced by a fresh one at `at`.
    pub fn reset(&mut self, at: Duration) {
        for flow in self.flows.values_mut() {
            if let State::Up = flow.state {
                flow.state = State::ResetAt(at);
            }
        }
    }

    /// The outages so far, counting those still open as ending at `end`.
    pub fn stats(&self, end: Duration) -> OutageStats {
        let mut stats = self.stats;
        for flow in self.flows.values() {
            if let State::Down(down) = flow.state {
                stats.record(down, end, true);
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FrameFate::{Damaged, Delivered, Lost};

    fn s(seconds: f64) -> Duration {
        Duration::from_secs_f64(seconds)
    }

    #[test]
    fn a_damaged_frame_delivered_late_is_no_outage_or_one_packet_less() {
        let mut t = OutageTracker::new();
        t.frame(1, s(0.0), Delivered);
        t.frame(1, s(1.0), Damaged); // held
        t.delivered_late(1); // the next frame confirmed it
        t.frame(1, s(2.0), Delivered);
        t.frame(2, s(0.0), Damaged);
        t.frame(2, s(1.0), Damaged);
        t.delivered_late(2);
        t.frame(2, s(3.0), Delivered);
        t.delivered_late(3); // a flow never seen: nothing
        let stats = t.stats(s(4.0));
        assert_eq!((stats.outages, stats.longest_outage_packets), (1, 1));
        assert_eq!(stats.longest_outage_s, 3.0);
    }

    #[test]
    fn an_outage_runs_from_the_first_damaged_frame_to_the_next_delivery() {
        let mut t = OutageTracker::new();
        t.frame(1, s(0.0), Delivered);
        t.frame(1, s(1.0), Lost); // a link loss alone is no outage
        t.frame(1, s(2.0), Damaged);
        t.frame(2, s(2.5), Damaged); // another flow, still broken at the end
        t.frame(1, s(3.0), Lost);
        t.frame(1, s(4.0), Damaged);
        t.frame(1, s(6.0), Delivered);
        t.frame(1, s(7.0), Delivered);
        let stats = t.stats(s(10.0));
        assert_eq!(stats.outages, 2);
        assert_eq!(stats.unended_outages, 1);
        assert_eq!(stats.longest_outage_packets, 3);
        assert!((stats.longest_outage_s - 7.5).abs() < 1e-9, "{stats:?}");
        assert!(stats.longest_outage_unended);
        // Without the open one, the closed outage is the longest: 2 s to 6 s.
        let mut closed = t.clone();
        closed.frame(2, s(2.6), Delivered);
        let stats = closed.stats(s(10.0));
        assert!((stats.longest_outage_s - 4.0).abs() < 1e-9, "{stats:?}");
        assert!(!stats.longest_outage_unended);
        assert_eq!(stats.unended_outages, 0);
    }

    #[test]
    fn a_refused_run_restarts_after_each_frame_the_link_lost() {
        let mut t = OutageTracker::new();
        t.frame(1, s(0.0), Damaged);
        t.frame(1, s(1.0), Damaged);
        t.frame(1, s(2.0), Damaged);
        t.frame(1, s(3.0), Lost); // a repair frame the link took, say
        t.frame(1, s(4.0), Damaged);
        t.frame(1, s(6.0), Damaged);
        t.frame(1, s(7.0), Delivered);
        let stats = t.stats(s(7.0));
        assert_eq!(
            (stats.longest_outage_packets, stats.longest_outage_s),
            (6, 7.0)
        );
        assert_eq!(stats.longest_refused_run, 3);
        // The run after the loss: 4 s to the delivery at 7 s.
        assert_eq!(stats.longest_refused_run_s, 3.0);
        // A run still open at the end counts up to it, and a late delivery takes a frame off.
        t.frame(2, s(10.0), Damaged);
        t.frame(2, s(11.0), Damaged);
        t.frame(2, s(12.0), Damaged);
        t.frame(2, s(13.0), Damaged);
        t.delivered_late(2);
        let stats = t.stats(s(20.0));
        assert_eq!(
            (stats.longest_refused_run, stats.longest_refused_run_s),
            (3, 10.0)
        );
    }

    #[test]
    fn a_reset_breaks_a_flow_from_the_reset_only_if_its_next_frame_is_refused() {
        let mut t = OutageTracker::new();
        for flow in [1, 2, 3] {
            t.frame(flow, s(0.0), Delivered);
        }
        t.reset(s(10.0));
        t.frame(1, s(11.0), Lost);
        t.frame(1, s(12.0), Damaged);
        t.frame(1, s(15.0), Delivered); // broken from the reset: 5 s, 2 packets
        t.frame(2, s(11.0), Delivered); // survived the reset
        t.frame(2, s(12.0), Delivered);
        // Flow 3 never sends again: no outage.
        let stats = t.stats(s(100.0));
        assert_eq!(stats.outages, 1);
        assert_eq!(stats.longest_outage_packets, 1);
        assert!((stats.longest_outage_s - 5.0).abs() < 1e-9, "{stats:?}");
        // The reset's lost frame is not counted: a link loss says nothing about the context.
        // A flow already broken stays broken from its first damaged frame.
        let mut t = OutageTracker::new();
        t.frame(1, s(1.0), Damaged);
        t.reset(s(2.0));
        t.frame(1, s(4.0), Delivered);
        assert!((t.stats(s(4.0)).longest_outage_s - 3.0).abs() < 1e-9);
    }

    /// An endless stream of new flows keeps the tracker within its limit; what it forgets is
    /// counted, and a broken flow it forgets is an unended outage.
    #[test]
    fn many_distinct_flows_stay_within_the_limit() {
        let mut t = OutageTracker::with_limit(100);
        // A broken flow, then 10,000 working ones, each seen once.
        t.frame(0u64, s(0.0), Damaged);
        for flow in 1..=10_000u64 {
            t.frame(flow, s(flow as f64), Delivered);
            assert!(t.len() <= 100, "{} flows after {flow}", t.len());
        }
        let stats = t.stats(s(20_000.0));
        assert!(stats.forgotten_flows >= 10_001 - 100, "{stats:?}");
        assert_eq!(stats.outages, 1, "{stats:?}");
        assert_eq!(stats.unended_outages, 1);
        assert!(stats.longest_outage_unended);
        // Working flows went first: the broken flow stayed while there were others to forget.
        assert!(stats.longest_outage_s > 9_000.0, "{stats:?}");
        // The default limit holds too, and a recent flow is still followed.
        let mut t = OutageTracker::new();
        for flow in 0..3 * MAX_FLOWS as u64 {
            t.frame(flow, s(0.0), Delivered);
        }
        assert!(t.len() <= MAX_FLOWS && !t.is_empty());
        let last = 3 * MAX_FLOWS as u64 - 1;
        t.frame(last, s(1.0), Damaged);
        t.frame(last, s(3.0), Delivered);
        let stats = t.stats(s(3.0));
        assert_eq!((stats.outages, stats.longest_outage_s), (1, 2.0));
        assert!(stats.forgotten_flows >= 2 * MAX_FLOWS as u64, "{stats:?}");
    }

    /// Below the limit nothing is forgotten: the figures are those of a tracker without one.
    #[test]
    fn below_the_limit_nothing_is_forgotten() {
        let run = |limit: usize| {
            let mut t = OutageTracker::with_limit(limit);
            for i in 0..1000u64 {
                let fate = match i % 7 {
                    0 => Damaged,
                    3 => Lost,
                    _ => Delivered,
                };
                t.frame(i % 50, s(i as f64), fate);
                if i == 500 {
                    t.reset(s(i as f64));
                }
            }
            t.stats(s(1000.0))
        };
        let stats = run(50);
        assert_eq!(stats, run(usize::MAX));
        assert_eq!(stats.forgotten_flows, 0);
        assert!(stats.outages > 0);
        let json = serde_json::to_value(stats).unwrap();
        assert!(json.get("forgotten_flows").is_none(), "{json}");
    }

    #[test]
    fn merging_keeps_the_longest() {
        let a = OutageStats {
            outages: 2,
            unended_outages: 0,
            longest_outage_packets: 9,
            longest_outage_s: 1.0,
            longest_outage_unended: false,
            longest_refused_run: 7,
            longest_refused_run_s: 0.5,
            forgotten_flows: 0,
        };
        let b = OutageStats {
            outages: 1,
            unended_outages: 1,
            longest_outage_packets: 3,
            longest_outage_s: 8.0,
            longest_outage_unended: true,
            longest_refused_run: 3,
            longest_refused_run_s: 6.0,
            forgotten_flows: 4,
        };
        let m = a.merge(b);
        assert_eq!(
            (m.outages, m.unended_outages, m.longest_outage_packets),
            (3, 1, 9)
        );
        assert_eq!((m.longest_outage_s, m.longest_outage_unended), (8.0, true));
        assert_eq!(m.forgotten_flows, 4);
        assert_eq!((m.longest_refused_run, m.longest_refused_run_s), (7, 6.0));
        assert_eq!(OutageStats::default().merge(a), a);
    }

    #[test]
    fn flows_are_told_apart_by_addresses_protocol_and_ports() {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&40u16.to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[20..24].copy_from_slice(&[0, 80, 1, 0]);
        let a = FlowId::of(&p);
        assert_eq!(a.ports, [80, 256]);
        p[21] = 81;
        assert_ne!(FlowId::of(&p), a);
        assert_eq!(FlowId::of(&[1, 2, 3]).protocol, 0);
    }
}
