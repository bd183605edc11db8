//! The interface of a loss-recovery variant: what a TCP sender does about new ACKs, duplicate
//! ACKs and timeouts. The sender ([`super::sender`]) keeps the common machinery and knows no
//! variant by name; each variant is a module behind this trait ([`super::variant`] lists them).

use std::fmt;

use super::state::SenderState;

/// What a loss-recovery variant decides. The core calls these after its own bookkeeping.
pub trait Recovery: fmt::Debug + Send {
    /// The variant's name.
    fn name(&self) -> &'static str;

    /// An ACK advanced `snd_una` by `acked` bytes (already applied, `dupacks` reset).
    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64);

    /// A duplicate ACK arrived (`s.dupacks` already counts it).
    fn on_dup_ack(&mut self, s: &mut SenderState);

    /// The retransmission timer expired. The core has already set ssthresh, cwnd = 1 segment,
    /// `snd_nxt = snd_una` (go-back-N), cleared the SACK marks and backed off the timer.
    fn on_timeout(&mut self, s: &mut SenderState) {
        let _ = s;
    }

    /// The next segment to send now, if any (default: new data as the window allows).
    fn next_segment(&mut self, s: &mut SenderState) -> Option<u64> {
        s.next_in_window()
    }

    /// Whether the variant is in a loss-recovery phase (for traces).
    fn in_recovery(&self) -> bool {
        false
    }

    /// Whether the variant needs SACK information (the sender then keeps a scoreboard).
    fn uses_sack(&self) -> bool {
        false
    }
}
