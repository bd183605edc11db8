//! Receipts (spec section 7): how the compressor learns that the far end holds a context, so
//! that it ends the context's start, or its answer to a context request, there instead of
//! sending every IR frame and scaling note still due. A start sends several IR frames back to
//! back because any of them may be lost; once one is known to have arrived, the rest cost bytes
//! and buy nothing. The compressor keeps the TCP checksums of the IR frames it sent since the
//! context last (re)started or changed its scaling (`Issued`) and ends the start at a receipt
//! for one of those only; a receipt for an older IR frame (of a flow that had the CID before, or
//! of strides since changed) names a checksum no longer kept, and is ignored.
//!
//! *Reference receipts* cost nothing. The two directions of a TCP connection meet at each end:
//! the far end's compressor codes its first frames of the opposite flow (mirrored IR frames and
//! IR-S frames with numbers, [`super::numbers`]) against the newest packet of this end's flow
//! that its sibling decompressor delivered, named by that packet's TCP checksum field. When this
//! end's decompressor verifies such a frame, it tells its sibling compressor which of its
//! packets the far end delivered, in a sibling note. A connection's server so names the
//! client's request, which ends the client's start before its third packet.
//!
//! *IR receipts* are feedback frames: `| 0x04 | CID | checksum (2) | CID | checksum (2) | ...`,
//! at least one receipt, each CID once, naming the TCP checksum field of the packet an IR frame
//! set the context up with ([`emit`] writes them, [`ReceiptFrame`] reads them). The decompressor sends them only for a context set up again for the
//! flow it held (a restart or an answer to a request, which no reference receipt ends), as
//! every start's cost five octets each for nothing a reference receipt does not do (0.38 octets
//! per packet on the unseen many-flows capture); for restarts they are worth it on a link that
//! loses many frames (the Appendix B grid at a BER of 1e-3, +4% to +7%). A lost receipt costs
//! only the IR frames the start sends anyway.

use alloc::vec::Vec;

use super::compressor::LOSSY_MEMORY;

/// The type octet of a receipt frame (context requests are `0x01` and `0x02`, loss notes
/// `0x03`).
pub const RECEIPT: u8 = 0x04;

/// A view of a receipt frame's bytes: its type octet, then one or more receipts of three
/// octets, a CID and the TCP checksum field it names.
#[derive(Debug, Clone)]
pub struct ReceiptFrame<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ReceiptFrame<T> {
    /// A view of `buffer` if it is a receipt frame: its type octet [`RECEIPT`], then at least
    /// one whole receipt and nothing else.
    pub fn new_checked(buffer: T) -> Option<ReceiptFrame<T>> {
        match buffer.as_ref() {
            [RECEIPT, body @ ..] if !body.is_empty() && body.len() % 3 == 0 => {
                Some(ReceiptFrame { buffer })
            }
            _ => None,
        }
    }

    /// The receipts, as (CID, TCP checksum field) pairs.
    pub fn receipts(&self) -> impl Iterator<Item = (u8, u16)> + '_ {
        self.buffer.as_ref()[1..]
            .chunks_exact(3)
            .map(|r| (r[0], u16::from_be_bytes([r[1], r[2]])))
    }
}

/// Writes the receipt frame of `receipts` (at least one; (CID, TCP checksum field) pairs) into
/// `out`, replacing its contents.
pub fn emit(receipts: impl IntoIterator<Item = (u8, u16)>, out: &mut Vec<u8>) {
    out.clear();
    out.push(RECEIPT);
    for (cid, checksum) in receipts {
        out.push(cid);
        out.extend_from_slice(&checksum.to_be_bytes());
    }
}

/// The IR frames a compressor context sent since its scaling or start last changed, by the
/// TCP checksum field of their packets: what a receipt may name.
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

    /// Whether a receipt for `checksum` names one of the IR frames kept.
    pub(crate) fn names(&self, checksum: u16) -> bool {
        self.checksums[..usize::from(self.len)].contains(&checksum)
    }
}

/// The decompressor's receipts: which are due, and which contexts need none.
#[derive(Debug, Clone)]
pub(crate) struct Receipts {
    /// Whether receipts are sent (with context requests: they need the reverse channel).
    on: bool,
    /// The receipts not yet sent, one per CID.
    due: Vec<(u8, u16)>,
    /// The CIDs whose last frame was an IR frame already receipted: the repeats of a start
    /// get none (the compressor keeps every IR frame of its start, so one receipt is enough).
    quiet: [u64; 4],
    /// The context the frame being decoded set up, if any, whether it changed the context's
    /// flow or scaling, its packet's TCP checksum field, and whether it held the flow already
    /// (a restart or an answer: a receipt is wanted).
    pending: Option<(u8, bool, u16, bool)>,
    /// Frames decoded so far.
    frames: u64,
    /// `frames` when the decompressor last sent a context request or a loss note.
    lossy_at: Option<u64>,
}

impl Receipts {
    /// Receipts that are sent if `on`.
    pub(crate) fn new(on: bool) -> Receipts {
        Receipts {
            on,
            due: Vec::new(),
            quiet: [0; 4],
            pending: None,
            frames: 0,
            lossy_at: None,
        }
    }

    /// A frame starts being decoded.
    pub(crate) fn begin(&mut self) {
        self.pending = None;
        self.frames += 1;
    }

    /// The decompressor sent a context request or a loss note: for the next
    /// [`LOSSY_MEMORY`] frames it sends no receipt, as the compressor, which takes the link as
    /// one that loses frames as long, takes none.
    pub(crate) fn lossy(&mut self) {
        self.lossy_at = Some(self.frames);
    }

    /// The frame being decoded set context `cid` up with a packet of TCP checksum field
    /// `checksum`, changing its flow or scaling if `fresh`; `again` if the context held the
    /// flow already (a restart or an answer to a request): only such a frame gets a receipt,
    /// a new flow's start ending at a reference receipt instead (but its repeats count as
    /// receipted, so that they get none either).
    pub(crate) fn installed(&mut self, cid: u8, fresh: bool, checksum: u16, again: bool) {
        self.pending = Some((cid, fresh, checksum, again));
    }

    /// The frame was decoded, its packet delivered if `delivered` (a tunnel frame's only once
    /// its outer header was too): a receipt is due for the context it set up, unless that
    /// context's last frame was an IR frame already receipted and this one changed nothing.
    pub(crate) fn end(&mut self, delivered: bool) {
        let Some((cid, fresh, checksum, again)) = self.pending.take() else {
            return;
        };
        let (word, bit) = (usize::from(cid / 64), 1u64 << (cid % 64));
        let lossy = self
            .lossy_at
            .is_some_and(|t| self.frames - t < LOSSY_MEMORY);
        if !self.on || !delivered || lossy || (self.quiet[word] & bit != 0 && !fresh) {
            return;
        }
        self.quiet[word] |= bit;
        if !again {
            return;
        }
        match self.due.iter_mut().find(|(c, _)| *c == cid) {
            Some(r) => r.1 = checksum,
            None => self.due.push((cid, checksum)),
        }
    }

    /// A CO frame of context `cid` came (delivered or not): its next IR frame gets a receipt.
    pub(crate) fn co(&mut self, cid: u8) {
        self.quiet[usize::from(cid / 64)] &= !(1u64 << (cid % 64));
    }

    /// Writes the receipts due as one feedback frame into `out`; whether there were any.
    pub(crate) fn take(&mut self, out: &mut Vec<u8>) -> bool {
        if self.due.is_empty() {
            return false;
        }
        emit(self.due.drain(..), out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipt_frames_parse_and_garbage_does_not() {
        let frame = [RECEIPT, 3, 0xAB, 0xCD, 9, 0, 1];
        let view = ReceiptFrame::new_checked(&frame[..]).unwrap();
        let got: Vec<_> = view.receipts().collect();
        assert_eq!(got, [(3, 0xABCD), (9, 1)]);
        let mut out = vec![0xEE];
        emit(got, &mut out);
        assert_eq!(out, frame);
        for garbage in [&[RECEIPT][..], &[RECEIPT, 1, 2], &[0x01, 1, 2, 3], &[]] {
            assert!(ReceiptFrame::new_checked(garbage).is_none(), "{garbage:?}");
        }
    }

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

    #[test]
    fn one_receipt_per_start_another_after_a_co_frame_or_a_change() {
        let mut r = Receipts::new(true);
        let mut out = Vec::new();
        let ir = |r: &mut Receipts, cid, fresh, checksum| {
            r.begin();
            r.installed(cid, fresh, checksum, true);
            r.end(true);
        };
        // A new flow's start (not held before) gets none, nor do its repeats.
        r.begin();
        r.installed(9, true, 0x0909, false);
        r.end(true);
        ir(&mut r, 9, false, 0x0A0A);
        assert!(!r.take(&mut out), "a new flow's start gets no IR receipt");
        ir(&mut r, 5, true, 0x1111);
        ir(&mut r, 5, false, 0x2222);
        assert!(r.take(&mut out));
        assert_eq!(out, [RECEIPT, 5, 0x11, 0x11]);
        ir(&mut r, 5, false, 0x3333);
        assert!(!r.take(&mut out), "a start's repeats get no receipt");
        ir(&mut r, 5, true, 0x4444);
        r.co(7);
        r.co(5);
        ir(&mut r, 5, false, 0x5555);
        ir(&mut r, 7, false, 0x6666);
        assert!(r.take(&mut out));
        assert_eq!(out, [RECEIPT, 5, 0x55, 0x55, 7, 0x66, 0x66]);
    }

    #[test]
    fn nothing_is_receipted_for_a_while_after_a_request_or_a_loss_note() {
        let mut r = Receipts::new(true);
        r.lossy();
        // The frames after it: the LOSSY_MEMORY-th gets one again.
        for i in 1..=LOSSY_MEMORY {
            r.begin();
            r.installed(1, true, 1, true);
            r.end(true);
            assert_eq!(r.take(&mut Vec::new()), i == LOSSY_MEMORY, "frame {i}");
        }
    }

    #[test]
    fn nothing_is_receipted_when_off_or_refused() {
        let mut r = Receipts::new(false);
        r.begin();
        r.installed(1, true, 1, true);
        r.end(true);
        assert!(!r.take(&mut Vec::new()));
        let mut r = Receipts::new(true);
        r.begin();
        r.installed(1, true, 1, true);
        r.end(false);
        assert!(!r.take(&mut Vec::new()));
    }
}
