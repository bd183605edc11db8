//! One gateway's end of the authenticated link: its [`Sealer`] and [`Opener`], and when it owes
//! the peer a hello (the rules are in [`crate::auth`]'s module doc).

use super::{AuthConfig, Opened, Opener, Sealer};
use crate::counters::Rejection;

/// One gateway's end of the link: its [`Sealer`] and [`Opener`], and the hello it owes the
/// peer.
#[derive(Debug, Clone)]
pub struct Session {
    /// The sending end.
    pub sealer: Sealer,
    /// The receiving end.
    pub opener: Opener,
    /// The hello owed, if one is.
    owed: Option<Owed>,
    /// Which of the peer and the candidate the next owed hello echoes when it could be either.
    alternate: bool,
}

impl Session {
    /// The end of a gateway with sender id `id` (random per start) whose first frame gets
    /// counter `first_counter`, refusing frames longer than `max_frame`.
    pub fn new(config: &AuthConfig, id: u64, first_counter: u64, max_frame: usize) -> Session {
        Session {
            sealer: Sealer::new(config, id, first_counter),
            opener: Opener::new(config, id, max_frame),
            owed: None,
            alternate: false,
        }
    }

    /// Opens `datagram` ([`Opener::open`]), passes the echo on to the sealer, and says whether
    /// a hello is owed ([`Session::hello`] sends it). One is owed when the peer changed to one
    /// we did not echo yet (the hello echoes it: it takes our frames once it hears us), when
    /// the echo or the
    /// candidate changed (a later run of the peer must hear us before it takes our frames);
    /// when the
    /// datagram was refused as stale (its sender has not heard this run of ours); when a
    /// short frame came while we have no peer (we restarted, and the peer's next long frame
    /// may be far); or when a hello came while we have no peer or have a candidate.
    pub fn open<'a>(&mut self, datagram: &'a [u8]) -> (Result<Opened<'a>, Rejection>, bool) {
        let (peer, candidate) = (self.opener.peer_id(), self.opener.candidate_id());
        let echo = self.opener.echo();
        let opened = self.opener.open(datagram);
        let echo_changed = self.sealer.set_echo(self.opener.echo());
        let (now_peer, now_candidate) = (self.opener.peer_id(), self.opener.candidate_id());
        let owed = if let Some(new) = now_peer.filter(|&p| Some(p) != peer && p != echo) {
            Some(Owed::Echo(new))
        } else if echo_changed {
            Some(Owed::Echo(self.opener.echo()))
        } else if let Some(new) = now_candidate.filter(|&c| Some(c) != candidate) {
            Some(Owed::Echo(new))
        } else if opened == Err(Rejection::Stale)
            || (opened == Err(Rejection::Unsynced) && now_peer.is_none())
            || (opened == Ok(Opened::Hello) && (now_peer.is_none() || now_candidate.is_some()))
        {
            Some(Owed::Either)
        } else {
            None
        };
        // A hello owed for news keeps its echo until it goes.
        if owed.is_some() && !matches!(self.owed, Some(Owed::Echo(_))) {
            self.owed = owed;
        }
        (opened, self.owed.is_some())
    }

    /// The echo of a hello that could carry either: the peer and the candidate in turn, hello
    /// by hello, when there are both (the candidate may be a later run of the peer, or a
    /// replayed frame of an earlier run of ours, which no frame can tell apart), else whichever
    /// there is.
    fn either(&mut self) -> u64 {
        match (self.opener.peer_id(), self.opener.candidate_id()) {
            (Some(peer), Some(candidate)) => {
                self.alternate = !self.alternate;
                if self.alternate {
                    candidate
                } else {
                    peer
                }
            }
            (peer, candidate) => peer.or(candidate).unwrap_or(0),
        }
    }

    /// When the owed hello may go (ns), if one is owed.
    pub fn hello_due(&self) -> Option<u64> {
        self.owed.map(|_| self.sealer.next_hello_at())
    }

    /// Writes the owed hello into `out` if one is owed and the hello bucket has a token
    /// ([`Sealer::next_hello_at`]); whether it did.
    pub fn hello(&mut self, now: u64, out: &mut Vec<u8>) -> bool {
        let echo = match self.owed {
            None => return false,
            Some(_) if now < self.sealer.next_hello_at() => return false,
            Some(Owed::Echo(echo)) => echo,
            Some(Owed::Either) => self.either(),
        };
        self.owed = None;
        self.sealer.hello(now, echo, out)
    }

    /// Owes a hello that echoes what our data frames echo (as at start, when the peer has not
    /// been heard yet).
    pub fn owe_hello(&mut self) {
        self.owed = Some(Owed::Echo(self.opener.echo()));
    }
}

/// A hello owed to the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owed {
    /// One that echoes this sender id (news: the echo or the candidate changed).
    Echo(u64),
    /// One that echoes the peer or the candidate ([`Session::either`]).
    Either,
}
