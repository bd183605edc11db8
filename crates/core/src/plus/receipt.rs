//! Reference receipts (spec section 7): a frame from the far end whose numbers are coded
//! against a packet of this end's flow tells the compressor that the far end delivered that
//! packet, so that the compressor ends the context's start, or its answer to a context
//! request, there instead of sending every IR frame and scaling note still due.
//!
//! A start sends several IR frames back to back because any of them may be lost; once one is
//! known to have arrived, the rest cost bytes and buy nothing. The two directions of a TCP
//! connection meet at each end: the far end's compressor codes its first frames of the
//! opposite flow (mirrored IR frames and IR-S frames with numbers, [`super::numbers`]) against
//! the newest packet of this end's flow that its sibling decompressor delivered, named by that
//! packet's TCP checksum field. When this end's decompressor verifies such a frame, it tells its
//! sibling compressor which of its packets the far end delivered (a sibling note); if that is one
//! of the IR frames of the context's current start, the far end holds the context as the start
//! set it up. The compressor keeps the checksums of the IR frames it sent since the context last
//! (re)started or changed its scaling ([`Issued`]) and takes a reference for one of those only.
//! It costs no feedback frame. (The tenth session's explicit receipts, feedback frames naming the
//! IR frame, did the same for five octets each; the DCLOR study's reverse link carried 85,000 to
//! 120,000 of them.)

/// The IR frames a compressor context sent since its scaling or start last changed, by the
/// TCP checksum field of their packets: what a reference receipt may name.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Issued {
    checksums: [u16; Issued::KEPT],
    len: u8,
    next: u8,
}

impl Issued {
    /// IR frames kept: more than a start's or a request's answer sends.
    const KEPT: usize = 8;

    /// Forgets every IR frame sent: the context restarts or changes what its IR frames set up.
    pub(crate) fn clear(&mut self) {
        (self.len, self.next) = (0, 0);
    }

    /// An IR frame of a packet with TCP checksum field `checksum` was sent.
    pub(crate) fn sent(&mut self, checksum: u16) {
        self.checksums[usize::from(self.next)] = checksum;
        self.next = (self.next + 1) % Issued::KEPT as u8;
        self.len = (self.len + 1).min(Issued::KEPT as u8);
    }

    /// Whether a reference for `checksum` names one of the IR frames kept.
    pub(crate) fn names(&self, checksum: u16) -> bool {
        self.checksums[..usize::from(self.len)].contains(&checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_keeps_the_last_eight_until_cleared() {
        let mut issued = Issued::default();
        for c in 0..10 {
            issued.sent(c);
        }
        assert!(!issued.names(1) && issued.names(2) && issued.names(9));
        issued.clear();
        assert!(!issued.names(9));
    }
}
