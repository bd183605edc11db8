//! Held packets delivered late (spec section 5.8): a decompressor keeps each context's held
//! packet as it would be delivered, with how far its frame's codes reached (`W`), and the
//! frame that confirms it delivers it too, if its own codes reach no further
//! ([`crate::codec::Decompressor::take_late`]).

use alloc::vec::Vec;

/// One held packet per CID (256), and the one the last frame confirmed. Each CID's buffer is
/// reused from one held packet to the next.
#[derive(Debug, Clone)]
pub struct LatePackets<W> {
    held: Vec<(Vec<u8>, W)>,
    due: Option<u8>,
}

impl<W: Copy + Default> Default for LatePackets<W> {
    fn default() -> LatePackets<W> {
        LatePackets {
            held: (0..256).map(|_| (Vec::new(), W::default())).collect(),
            due: None,
        }
    }
}

impl<W: Copy> LatePackets<W> {
    /// Context `cid` holds a packet whose frame reached `width`: the buffer to write it into,
    /// emptied (left empty, the packet may never go late).
    pub fn hold(&mut self, cid: u8, width: W) -> &mut Vec<u8> {
        let (packet, w) = &mut self.held[usize::from(cid)];
        packet.clear();
        *w = width;
        packet
    }

    /// A frame of context `cid` confirmed its held packet: it goes late if one was kept and
    /// `proves` the packet, given with the width its frame reached.
    pub fn confirm(&mut self, cid: u8, proves: impl FnOnce(&[u8], W) -> bool) {
        let (packet, width) = &self.held[usize::from(cid)];
        if !packet.is_empty() && proves(packet, *width) {
            self.due = Some(cid);
        }
    }

    /// Forgets a late packet not taken: a new frame arrives.
    pub fn forget(&mut self) {
        self.due = None;
    }

    /// Moves the packet the last frame confirmed into `out` and returns true, or returns false
    /// if there is none.
    pub fn take(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(cid) = self.due.take() else {
            return false;
        };
        out.clone_from(&self.held[usize::from(cid)].0);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirmed_packet_goes_late_once_if_its_width_is_proved() {
        let mut late = LatePackets::<u8>::default();
        let mut out = Vec::new();
        late.hold(3, 2).extend_from_slice(&[1, 2, 3]);
        late.confirm(3, |_, w| w >= 4);
        assert!(!late.take(&mut out));
        late.confirm(3, |p, w| p == [1, 2, 3] && w >= 2);
        assert!(late.take(&mut out) && out == [1, 2, 3]);
        assert!(!late.take(&mut out));
        // Nothing kept (left empty), or forgotten before it was taken: nothing goes.
        late.hold(4, 2);
        late.confirm(4, |_, _| true);
        assert!(!late.take(&mut out));
        late.confirm(3, |_, _| true);
        late.forget();
        assert!(!late.take(&mut out));
    }
}
