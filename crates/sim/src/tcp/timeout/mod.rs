//! Timeout responses: what a sender does when its retransmission timer expires and about the
//! ACKs that follow, orthogonal to the loss-recovery variant ([`super::recovery`]). Each response
//! is a module behind [`TimeoutResponse`]; [`ResponseKind`] names them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::recovery::Recovery;
use super::rto::RtoEstimator;
use super::state::SenderState;

pub mod dclor;
pub mod eifel;
pub mod eifel4015;
pub mod frto;
pub mod standard;

pub use standard::Standard;

/// What the sender knows of an arriving ACK when it asks the response about it (before it
/// applies the ACK to `snd_una`; SACK marks are already applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckInfo {
    /// The cumulative ACK (stream offset).
    pub ack: u64,
    /// `snd_una` before this ACK.
    pub prior_una: u64,
    /// The ACK advances `snd_una`.
    pub new: bool,
    /// A duplicate ACK (RFC 5681: same ACK, data outstanding, no payload).
    pub duplicate: bool,
    /// The timestamp echo reply (TSecr), if the ACK has timestamps.
    pub ts_ecr: Option<u32>,
    /// The sender's timestamp clock now.
    pub now_ts: u32,
    /// The ACK carries a D-SACK block (RFC 2883).
    pub dsack: bool,
    /// Segments this ACK SACKed for the first time.
    pub newly_sacked: u32,
    /// The highest right edge of a SACK block above the cumulative ACK, if any.
    pub highest_sack: Option<u64>,
}

/// What the sender's common ACK processing does after the response has seen an ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckVerdict {
    /// Take an RTT sample from the ACK (if it acknowledges new data).
    pub sample_rtt: bool,
    /// Hand the ACK to the loss-recovery variant (window growth, duplicate-ACK counting, fast
    /// retransmit).
    pub to_recovery: bool,
}

impl AckVerdict {
    /// Ordinary processing.
    pub const CONTINUE: AckVerdict = AckVerdict {
        sample_rtt: true,
        to_recovery: true,
    };
    /// A stale ACK (DCLOR step 7): `snd_una` advances, nothing else happens.
    pub const STALE: AckVerdict = AckVerdict {
        sample_rtt: false,
        to_recovery: false,
    };
    /// The response set the window itself: RTT sample, but no variant processing.
    pub const HANDLED: AckVerdict = AckVerdict {
        sample_rtt: true,
        to_recovery: false,
    };
}

/// The sender's state a response may change when the timer expires.
#[derive(Debug)]
pub struct TimeoutEvent<'a> {
    /// Window and sequence state.
    pub state: &'a mut SenderState,
    /// The loss-recovery variant (told of the timeout by [`conventional`]).
    pub recovery: &'a mut dyn Recovery,
    /// The RTT estimator (already backed off for this expiry).
    pub rto: &'a mut RtoEstimator,
    /// The timestamp clock now (the TSval of anything sent now).
    pub now_ts: u32,
    /// Whether this is the first expiry since the last RTT sample (not a repeated one).
    pub first: bool,
}

/// A timeout response. The sender calls [`TimeoutResponse::on_timeout`] at every expiry (after
/// counting it, forgetting the timed segment and backing the timer off),
/// [`TimeoutResponse::on_ack`] for every ACK, and [`TimeoutResponse::next_segment`] before the
/// variant's choice of what to send.
pub trait TimeoutResponse: fmt::Debug + Send {
    /// The response's name (as [`ResponseKind::name`]).
    fn name(&self) -> &'static str;

    /// The retransmission timer expired.
    fn on_timeout(&mut self, t: TimeoutEvent<'_>);

    /// An ACK arrived; returns how the common processing continues.
    fn on_ack(&mut self, s: &mut SenderState, rto: &mut RtoEstimator, ack: &AckInfo) -> AckVerdict {
        let _ = (s, rto, ack);
        AckVerdict::CONTINUE
    }

    /// `Some(choice)` to decide what to send next instead of the variant (`Some(None)`: send
    /// nothing); `None` to leave it to the variant.
    fn next_segment(&mut self, s: &mut SenderState) -> Option<Option<u64>> {
        let _ = s;
        None
    }
}

/// The conventional response (RFC 5681 section 3.1, RFC 6298 (5.4)–(5.7), RFC 6675 section
/// 5.1): ssthresh = max(FlightSize / 2, 2 SMSS) (held on repeated expiries), cwnd = 1 segment,
/// go-back-N from `snd_una`, SACK marks forgotten, the variant told.
pub fn conventional(t: &mut TimeoutEvent<'_>) {
    let s = &mut *t.state;
    if t.first {
        s.ssthresh = s.halved_flight();
    }
    s.cwnd = s.mss;
    s.snd_nxt = s.snd_una;
    s.dupacks = 0;
    s.retransmit_now = None;
    s.scoreboard.clear_marks();
    t.recovery.on_timeout(s);
}

/// The timeout responses available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ResponseKind {
    /// RFC 5681/6675 conventional recovery: slow start, go-back-N.
    #[default]
    Standard,
    /// The DCLOR draft's section 4: probe with one new segment, cwnd 0 through stale ACKs,
    /// decide from SACK.
    Dclor,
    /// RFC 3522 detection; on a spurious timeout the window is restored (the DCLOR draft's
    /// Eifel).
    Eifel,
    /// RFC 3522 detection with RFC 4015's response.
    #[serde(rename = "eifel-4015")]
    Eifel4015,
    /// F-RTO (RFC 5682, SACK-enhanced when the variant uses SACK); on a spurious timeout the
    /// window is halved (the DCLOR draft's F-RTO).
    Frto,
}

impl ResponseKind {
    /// Every response.
    pub const ALL: [ResponseKind; 5] = [
        ResponseKind::Standard,
        ResponseKind::Dclor,
        ResponseKind::Eifel,
        ResponseKind::Eifel4015,
        ResponseKind::Frto,
    ];

    /// The name used on the command line, in scenarios and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ResponseKind::Standard => "standard",
            ResponseKind::Dclor => "dclor",
            ResponseKind::Eifel => "eifel",
            ResponseKind::Eifel4015 => "eifel-4015",
            ResponseKind::Frto => "frto",
        }
    }

    /// A fresh response of this kind.
    pub fn response(self) -> Box<dyn TimeoutResponse> {
        match self {
            ResponseKind::Standard => Box::new(Standard),
            ResponseKind::Dclor => Box::new(dclor::Dclor::default()),
            ResponseKind::Eifel => Box::new(eifel::Eifel::default()),
            ResponseKind::Eifel4015 => Box::new(eifel4015::Eifel4015::default()),
            ResponseKind::Frto => Box::new(frto::Frto::default()),
        }
    }

    /// Whether the response needs the timestamps option (Eifel detection does).
    pub fn uses_timestamps(self) -> bool {
        matches!(self, ResponseKind::Eifel | ResponseKind::Eifel4015)
    }
}

impl fmt::Display for ResponseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ResponseKind {
    type Err = String;
    fn from_str(s: &str) -> Result<ResponseKind, String> {
        let lower = s.to_ascii_lowercase();
        ResponseKind::ALL
            .into_iter()
            .find(|r| r.name() == lower)
            .ok_or_else(|| {
                format!(
                    "unknown timeout response {s:?} (expected standard, dclor, eifel, eifel-4015 or frto)"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back() {
        for r in ResponseKind::ALL {
            assert_eq!(r.name().parse::<ResponseKind>(), Ok(r));
            assert_eq!(r.response().name(), r.name());
        }
        assert!("reno".parse::<ResponseKind>().is_err());
    }
}
