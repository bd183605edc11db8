//! Tunnelled TCP contexts: the outer header of an IP-in-IP flow kept in the inner flow's
//! context, so that its CO frames go as plain CO frames (spec section 8.1). The frames that set
//! such a context up (IR, compact IR, IR-R) travel in tunnel frames, whose CO-N outer header the
//! decompressor verifies with its CRC before it keeps the outer header; the context's identity
//! hash covers the outer header, so a CO frame rebuilt under another one fails its checksum.
//! An IPv4 outer header's Identification changes per packet: it is predicted from the inner
//! packet's and goes in a CO frame only when it is not the predicted one ([`Predictors`]);
//! the seal covers it.

use alloc::vec::Vec;

use taroc_wire::protocol;

use crate::encoding::bits::{BitReader, BitWriter};

/// Octets of an IPv6 outer header (no extension headers).
pub const LEN: usize = 40;

/// Octets of an IPv4 outer header (no options).
pub const LEN_V4: usize = 20;

/// Where the IPv6 payload length sits.
const PAYLOAD_LENGTH: core::ops::Range<usize> = 4..6;

/// IPv4: where the Total Length, Identification, flags and fragment offset, and header
/// checksum sit.
const TOTAL_LENGTH: core::ops::Range<usize> = 2..4;
const IDENTIFICATION: core::ops::Range<usize> = 4..6;
const FRAGMENT: core::ops::Range<usize> = 6..8;
const HEADER_CHECKSUM: core::ops::Range<usize> = 10..12;

/// The outer header of a tunnelled flow: an IPv6 header, its payload length zeroed, or an IPv4
/// header without options or fragmentation, its Total Length, Identification and header
/// checksum zeroed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outer {
    header: [u8; LEN],
    len: u8,
}

/// Whether `header` (of an IP packet) is an outer header: IPv6 without extension headers, or
/// IPv4 with a 20-octet header, not a fragment (DF may be set), whose next protocol is IPv4 or
/// IPv6.
fn is_outer(header: &[u8]) -> bool {
    match header.first().map(|b| b >> 4) {
        Some(6) => {
            header.len() >= LEN && (header[6] == protocol::IPV4 || header[6] == protocol::IPV6)
        }
        Some(4) => {
            header.len() >= LEN_V4
                && header[0] == 0x45
                && header[FRAGMENT.start] & 0x3F == 0
                && header[FRAGMENT.end - 1] == 0
                && (header[9] == protocol::IPV4 || header[9] == protocol::IPV6)
        }
        _ => false,
    }
}

impl Outer {
    /// The outer header of `packet` if it is an IP-in-IP packet whose outer header is IPv6
    /// without extension headers or IPv4 without options and not a fragment; `None` otherwise.
    /// (The IPv4 header checksum is not checked here: packets whose checksum is wrong are not
    /// tunnelled TCP, section 8.)
    pub fn of(packet: &[u8]) -> Option<Outer> {
        if !is_outer(packet) {
            return None;
        }
        let len = if packet[0] >> 4 == 6 { LEN } else { LEN_V4 };
        let mut header = [0; LEN];
        header[..len].copy_from_slice(&packet[..len]);
        if len == LEN {
            header[PAYLOAD_LENGTH].fill(0);
        } else {
            for field in [TOTAL_LENGTH, IDENTIFICATION, HEADER_CHECKSUM] {
                header[field].fill(0);
            }
        }
        Some(Outer {
            header,
            len: len as u8,
        })
    }

    /// The outer header a CO-N context's template stands for, if it is one (see [`Outer::of`]),
    /// with `fragment` as an IPv4 header's flags and fragment offset (the template has them
    /// zeroed; ignored for IPv6).
    pub fn from_template(template: &[u8], fragment: u16) -> Option<Outer> {
        let mut header = [0; LEN];
        let len = match template.first().map(|b| b >> 4) {
            Some(6) if template.len() == LEN => LEN,
            Some(4) if template.len() == LEN_V4 => LEN_V4,
            _ => return None,
        };
        header[..len].copy_from_slice(template);
        if len == LEN_V4 {
            header[FRAGMENT].copy_from_slice(&fragment.to_be_bytes());
        }
        Outer::of(&header[..len])
    }

    /// The IPv4 Identification of the outer header of `packet` (0 for IPv6).
    pub fn ip_id_of(packet: &[u8]) -> u16 {
        match packet {
            [0x45, _, _, _, a, b, ..] => u16::from_be_bytes([*a, *b]),
            _ => 0,
        }
    }

    /// Whether it is an IPv4 header (whose Identification each CO frame carries).
    pub fn is_v4(&self) -> bool {
        usize::from(self.len) == LEN_V4
    }

    /// The octets the identity hash goes on over (the per-packet fields zeroed).
    pub fn bytes(&self) -> &[u8] {
        &self.header[..usize::from(self.len)]
    }

    /// The template of the outer header's CO-N context (section 8): [`Outer::bytes`], with an
    /// IPv4 header's flags and fragment offset zeroed too.
    pub fn template(&self) -> ([u8; LEN], usize) {
        let mut t = self.header;
        if self.is_v4() {
            t[FRAGMENT].fill(0);
        }
        (t, usize::from(self.len))
    }

    /// Puts the outer header in front of the `inner` packet that `out` holds, with its length
    /// field set (and, IPv4, its Identification `ip_id` and header checksum); `false` (and
    /// `out` unchanged) if the inner packet is too long for it.
    pub fn wrap(&self, out: &mut Vec<u8>, ip_id: u16) -> bool {
        let len = usize::from(self.len);
        let inner = out.len();
        let field = if self.is_v4() { inner + LEN_V4 } else { inner };
        let Ok(field) = u16::try_from(field) else {
            return false;
        };
        out.resize(inner + len, 0);
        out.copy_within(..inner, len);
        out[..len].copy_from_slice(self.bytes());
        if self.is_v4() {
            out[TOTAL_LENGTH].copy_from_slice(&field.to_be_bytes());
            out[IDENTIFICATION].copy_from_slice(&ip_id.to_be_bytes());
            let sum = taroc_wire::checksum::checksum(&out[..LEN_V4]);
            out[HEADER_CHECKSUM].copy_from_slice(&sum.to_be_bytes());
        } else {
            out[PAYLOAD_LENGTH].copy_from_slice(&field.to_be_bytes());
        }
        true
    }
}

/// How many predictors of a context's IR frames the compressor keeps ([`Predictors`]): the
/// decompressor holds the predictor of the last IR frame it got.
pub const PREDICTORS: usize = 4;

/// How a tunnelled context predicts its IPv4 outer header's Identification, set by the packet
/// of the frame that set the context up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Predictor {
    /// The outer Identification is 0 (that packet's was).
    #[default]
    Zero,
    /// The inner packet's IP-ID (0 for IPv6) plus this offset (mod 2^16): a tunnel whose
    /// counter steps with the one flow it carries.
    Joined(u16),
}

impl Predictor {
    /// The predictor a packet of outer IP-ID `outer` and inner IP-ID `inner` sets.
    pub fn of(outer: u16, inner: u16) -> Predictor {
        match outer {
            0 => Predictor::Zero,
            _ => Predictor::Joined(outer.wrapping_sub(inner)),
        }
    }

    /// The predicted outer IP-ID of an inner packet of IP-ID `inner`.
    pub fn predict(self, inner: u16) -> u16 {
        match self {
            Predictor::Zero => 0,
            Predictor::Joined(offset) => inner.wrapping_add(offset),
        }
    }

    /// Where a CO frame without the O flag gives the outer IP-ID.
    pub fn layout(self) -> Layout {
        match self {
            Predictor::Zero => Layout::Spare,
            Predictor::Joined(_) => Layout::Marked,
        }
    }
}

/// Where a CO frame gives the outer IP-ID, last in its bit field (section 8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// (Zero predictor, without O.) In a spare bit before the padding, `0` for the predicted
    /// value or `1` and the outer code; with no spare bit, the predicted value (else the frame
    /// takes O). An Identification that stays 0 costs no octet.
    Spare,
    /// (Joined predictor, without O.) A marker bit, `0` for the predicted value or `1` and the
    /// outer code: a counter that seldom steps with the inner IP-ID (Linux's tunnels draw theirs
    /// from a per-destination counter that jumps at clock ticks) costs no extension octet.
    Marked,
    /// (The compressor, when the predictors the decompressor may hold are of both kinds.) The
    /// O flag and the outer code in every frame.
    Flagged,
}

/// LSBs of the offset `outer IP-ID - inner IP-ID` in an outer code (section 8.1).
pub const NEAR_BITS: u8 = 8;

/// Writes the outer code of `code` for the Identification `id`: `0` and the [`NEAR_BITS`] LSBs
/// of a near code, else `1` and the 16 bits (a predicted value asked for a code goes whole);
/// the bits written.
pub fn put_code(w: &mut BitWriter<'_>, code: Code, id: u16) -> u8 {
    let (whole, lsbs, k) = match code {
        Code::Near(lsbs) => (0, lsbs, NEAR_BITS),
        Code::Whole | Code::Predicted => (1, id, 16),
    };
    w.put(whole, 1);
    w.put(lsbs.into(), k);
    1 + k
}

/// Reads an outer code ([`put_code`]): whether it came whole, and its bits (the 16 of the
/// Identification, or the [`NEAR_BITS`] LSBs of its offset).
pub fn get_code(r: &mut BitReader<'_>) -> Option<(bool, u16)> {
    let whole = r.get(1)? == 1;
    let lsbs = r.get(if whole { 16 } else { NEAR_BITS })?;
    Some((whole, lsbs as u16))
}

/// How a CO frame gives an IPv4 outer header's Identification (section 8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The predicted value: nothing in the frame (or a marker `0`).
    Predicted,
    /// The outer code `0` and these [`NEAR_BITS`] one-sided LSBs of the offset `outer IP-ID -
    /// inner IP-ID`, decoded against the reference's offset.
    Near(u16),
    /// The outer code `1` and the 16 bits of the outer IP-ID.
    Whole,
}

/// The compressor's view of a tunnelled context's [`Predictor`]: those of its last
/// [`PREDICTORS`] IR frames of distinct predictors (each sets the decompressor's, and any may
/// be the last the decompressor got).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Predictors {
    /// Oldest first; the first `len` are held.
    values: [Predictor; PREDICTORS],
    len: u8,
}

impl Predictors {
    /// An IR frame went for a packet of outer IP-ID `outer` and inner IP-ID `inner`.
    pub fn sent_ir(&mut self, outer: u16, inner: u16) {
        let new = Predictor::of(outer, inner);
        let len = usize::from(self.len);
        if let Some(i) = self.values[..len].iter().position(|&v| v == new) {
            self.values[i..len].rotate_left(1);
        } else if len == PREDICTORS {
            self.values.rotate_left(1);
        } else {
            self.len += 1;
        }
        self.values[usize::from(self.len) - 1] = new;
    }

    /// Whether every predictor the decompressor may hold predicts the outer IP-ID `outer` for
    /// an inner IP-ID `inner` (none does before an IR frame).
    pub fn predict(&self, outer: u16, inner: u16) -> bool {
        let held = &self.values[..usize::from(self.len)];
        !held.is_empty() && held.iter().all(|p| p.predict(inner) == outer)
    }

    /// The layout every predictor the decompressor may hold agrees on, else
    /// [`Layout::Flagged`].
    pub fn layout(&self) -> Layout {
        let mut held = self.values[..usize::from(self.len)].iter();
        let first = held.next().map_or(Layout::Flagged, |p| p.layout());
        if held.all(|p| p.layout() == first) {
            first
        } else {
            Layout::Flagged
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn v6_in_v6(next: u8, payload_len: u16) -> Vec<u8> {
        let mut h = vec![0u8; LEN];
        h[0] = 0x60;
        h[4..6].copy_from_slice(&payload_len.to_be_bytes());
        h[6] = next;
        h[7] = 64;
        h[8] = 0x20;
        h[24] = 0x20;
        h[39] = 2;
        h
    }

    /// An IPv4 header of protocol `next` in front of `inner` octets, with its checksum.
    fn v4_in(next: u8, id: u16, fragment: u16, inner: usize) -> Vec<u8> {
        let mut h = vec![
            0x45, 0, 0, 0, 0, 0, 0, 0, 64, next, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        h[2..4].copy_from_slice(&((LEN_V4 + inner) as u16).to_be_bytes());
        h[4..6].copy_from_slice(&id.to_be_bytes());
        h[6..8].copy_from_slice(&fragment.to_be_bytes());
        let sum = taroc_wire::checksum::checksum(&h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        h.resize(LEN_V4 + inner, 0xAB);
        h
    }

    #[test]
    fn only_an_ip_header_right_before_ip_is_an_outer_header() {
        let tunnel = v6_in_v6(protocol::IPV6, 60);
        let outer = Outer::of(&tunnel).expect("IPv6 in IPv6");
        assert_eq!(outer.bytes()[4..6], [0, 0]);
        assert!(!outer.is_v4());
        assert!(Outer::of(&v6_in_v6(protocol::IPV4, 60)).is_some());
        assert_eq!(Outer::of(&v6_in_v6(protocol::TCP, 60)), None);
        assert_eq!(Outer::of(&tunnel[..39]), None);
        let mut v4 = tunnel.clone();
        v4[0] = 0x45;
        assert_eq!(Outer::of(&v4), None, "protocol 0");
        assert!(Outer::of(&v4_in(protocol::IPV4, 7, 0x4000, 40)).is_some_and(|o| o.is_v4()));
        assert!(Outer::of(&v4_in(protocol::IPV6, 7, 0, 40)).is_some());
        assert_eq!(Outer::of(&v4_in(protocol::TCP, 7, 0, 40)), None);
        // Fragments, and headers with options, are not outer headers.
        assert_eq!(Outer::of(&v4_in(protocol::IPV4, 7, 0x2000, 40)), None);
        assert_eq!(Outer::of(&v4_in(protocol::IPV4, 7, 0x0001, 40)), None);
        let mut options = v4_in(protocol::IPV4, 7, 0, 40);
        options[0] = 0x46;
        assert_eq!(Outer::of(&options), None);
    }

    #[test]
    fn wrapping_puts_the_header_in_front_with_the_inner_length() {
        let outer = Outer::of(&v6_in_v6(protocol::IPV6, 999)).expect("outer");
        let mut out = vec![0xAB; 60];
        assert!(outer.wrap(&mut out, 0));
        assert_eq!(out.len(), 100);
        assert_eq!(out[..LEN], v6_in_v6(protocol::IPV6, 60)[..]);
        assert!(out[LEN..].iter().all(|&b| b == 0xAB));
    }

    #[test]
    fn an_ipv4_outer_header_is_rebuilt_exactly_with_its_identification() {
        for (id, fragment) in [(0x1234, 0x4000), (0, 0x4000), (0xFFFF, 0)] {
            let packet = v4_in(protocol::IPV4, id, fragment, 52);
            let outer = Outer::of(&packet).expect("outer");
            assert_eq!(Outer::ip_id_of(&packet), id);
            // The per-packet fields are out of the identity: another Identification, length
            // or checksum is the same outer header.
            assert_eq!(
                Outer::of(&v4_in(protocol::IPV4, id ^ 0x55, fragment, 9)),
                Some(outer)
            );
            assert_ne!(
                Outer::of(&v4_in(protocol::IPV4, id, fragment ^ 0x4000, 52)),
                Some(outer)
            );
            let mut out = packet[LEN_V4..].to_vec();
            assert!(outer.wrap(&mut out, id));
            assert_eq!(out, packet);
            // The CO-N template zeroes the fragment field, which the context gives back.
            let (t, len) = outer.template();
            assert_eq!(t[6..8], [0, 0]);
            assert_eq!(Outer::from_template(&t[..len], fragment), Some(outer));
        }
        let outer = Outer::of(&v6_in_v6(protocol::IPV4, 60)).expect("outer");
        let (t, len) = outer.template();
        assert_eq!(Outer::from_template(&t[..len], 0x4000), Some(outer));
        assert_eq!(Outer::from_template(&t[..len - 1], 0), None);
    }

    #[test]
    fn an_outer_id_is_predicted_only_by_every_predictor_the_decompressor_may_hold() {
        let mut held = Predictors::default();
        // No IR frame yet: nothing to predict from.
        assert!(!held.predict(5, 3) && !held.predict(0, 3));
        held.sent_ir(1000, 10);
        assert!(held.predict(1001, 11));
        assert!(!held.predict(1002, 11) && !held.predict(0, 11));
        // A second predictor: only a value both give.
        held.sent_ir(1105, 100);
        assert!(!held.predict(1001, 11) && !held.predict(1016, 11));
        // A packet whose outer IP-ID is 0 sets the zero predictor.
        let mut zero = Predictors::default();
        zero.sent_ir(0, 77);
        assert!(zero.predict(0, 78) && !zero.predict(1, 78));
        assert_eq!(zero.layout(), Layout::Spare);
        zero.sent_ir(500, 80);
        assert!(!zero.predict(0, 81) && !zero.predict(501, 81));
        // Both kinds held: the O flag in every frame.
        assert_eq!(zero.layout(), Layout::Flagged);
        assert_eq!(held.layout(), Layout::Marked);
        assert_eq!(Predictors::default().layout(), Layout::Flagged);
        // The oldest of more than PREDICTORS distinct predictors goes; a repeated one stays.
        for o in [990, 991, 992] {
            held.sent_ir(o, 0);
        }
        let joined = |o: [u16; 4]| o.map(Predictor::Joined);
        assert_eq!(held.values, joined([1005, 990, 991, 992]));
        held.sent_ir(1005, 0);
        assert_eq!(held.values, joined([990, 991, 992, 1005]));
        held.sent_ir(7, 0);
        assert_eq!(held.values, joined([991, 992, 1005, 7]));
        for o in [991, 992, 1005] {
            held.sent_ir(o, 0);
        }
        assert!(!held.predict(7, 0));
        for _ in 0..4 {
            held.sent_ir(7, 0);
        }
        assert!(!held.predict(7, 0), "the other three are still held");
    }
}
