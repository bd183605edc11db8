//! Mirrors (section 3.3): what the two codecs at one end of a link tell each other of their
//! flows, so that a new flow's IR frames can name the opposite direction's flow (its *mirror*)
//! instead of sending the addresses and ports.
//!
//! The compressor of one direction and the decompressor of the other sit at the same end; they
//! are *siblings*. Each tells the other, by a sibling note that never crosses the link, which
//! flow each of its CIDs holds: the compressor as it sets a context up (the far decompressor
//! holds it once its IR frame arrives), the decompressor once a context's IR frame verified.
//! A compressor whose new flow is the reverse of a flow its sibling decompressor verified sends
//! that flow's CID; the far decompressor finds the flow under that CID in its own sibling
//! compressor, which sent it.
//!
//! ```text
//! note:  | CID | version (4 or 6) | source address | destination address | source port |
//!        | destination port |          (the CID holds that flow)
//!        | CID |                       (the CID holds no flow)
//! ```

use core::net::IpAddr;

use crate::taroc::context::ALL_CIDS;
use crate::taroc::packet::FlowKey;

/// The longest sibling note: CID, version, two IPv6 addresses, two ports.
pub const MAX_NOTE_LEN: usize = 2 + 32 + 4;

/// Writes the note that CID `cid` holds `flow` (or no flow) to `out`, cleared first.
pub fn put_note(cid: u8, flow: Option<&FlowKey>, out: &mut alloc::vec::Vec<u8>) {
    out.clear();
    out.push(cid);
    let Some(flow) = flow else {
        return;
    };
    match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            out.push(4);
            out.extend_from_slice(&s.octets());
            out.extend_from_slice(&d.octets());
        }
        (s, d) => {
            out.push(6);
            out.extend_from_slice(&v6_octets(s));
            out.extend_from_slice(&v6_octets(d));
        }
    }
    out.extend_from_slice(&flow.src_port.to_be_bytes());
    out.extend_from_slice(&flow.dst_port.to_be_bytes());
}

/// An address as IPv6 octets (an IPv4 one mapped, which a note never mixes with IPv6).
fn v6_octets(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V6(a) => a.octets(),
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
    }
}

/// Reads a note: the CID and the flow it holds; `None` if malformed.
pub fn parse_note(note: &[u8]) -> Option<(u8, Option<FlowKey>)> {
    let (&cid, rest) = note.split_first()?;
    let Some((&version, rest)) = rest.split_first() else {
        return Some((cid, None));
    };
    let n = match version {
        4 => 4,
        6 => 16,
        _ => return None,
    };
    if rest.len() != 2 * n + 4 {
        return None;
    }
    let address = |b: &[u8]| -> IpAddr {
        if n == 4 {
            IpAddr::V4(<[u8; 4]>::try_from(b).expect("4 octets").into())
        } else {
            IpAddr::V6(<[u8; 16]>::try_from(b).expect("16 octets").into())
        }
    };
    let port = |at: usize| u16::from_be_bytes([rest[at], rest[at + 1]]);
    Some((
        cid,
        Some(FlowKey {
            src: address(&rest[..n]),
            dst: address(&rest[n..2 * n]),
            src_port: port(2 * n),
            dst_port: port(2 * n + 2),
        }),
    ))
}

/// The flow of the opposite direction: addresses and ports swapped.
pub fn reversed(flow: &FlowKey) -> FlowKey {
    FlowKey {
        src: flow.dst,
        dst: flow.src,
        src_port: flow.dst_port,
        dst_port: flow.src_port,
    }
}

/// The flows a codec's sibling holds, by CID.
#[derive(Debug, Clone)]
pub struct Mirrors {
    flows: alloc::vec::Vec<Option<FlowKey>>,
}

impl Default for Mirrors {
    fn default() -> Mirrors {
        Mirrors {
            flows: alloc::vec![None; ALL_CIDS],
        }
    }
}

impl Mirrors {
    /// Takes in a sibling note; a malformed one is ignored.
    pub fn hear(&mut self, note: &[u8]) {
        if let Some((cid, flow)) = parse_note(note) {
            self.flows[usize::from(cid)] = flow;
        }
    }

    /// The flow the sibling holds under `cid`, if any.
    pub fn get(&self, cid: u8) -> Option<&FlowKey> {
        self.flows[usize::from(cid)].as_ref()
    }

    /// The CID under which the sibling holds the reverse of `flow`, if any (the lowest).
    pub fn find_reverse(&self, flow: &FlowKey) -> Option<u8> {
        let reverse = reversed(flow);
        self.flows
            .iter()
            .position(|f| f.as_ref() == Some(&reverse))
            .map(|cid| cid as u8)
    }
}

/// The CIDs whose flow changed since the sibling last heard of them: one bit each, so the
/// notes stay bounded whether or not anyone takes them, and each tells the CID's flow as it is
/// when taken.
#[derive(Debug, Clone, Default)]
pub struct Changed {
    bits: [u64; ALL_CIDS / 64],
}

impl Changed {
    /// Marks `cid` as changed.
    pub fn mark(&mut self, cid: u8) {
        self.bits[usize::from(cid / 64)] |= 1 << (cid % 64);
    }

    /// Unmarks and returns the lowest changed CID, if any.
    pub fn take(&mut self) -> Option<u8> {
        let (word, bits) = self.bits.iter_mut().enumerate().find(|(_, b)| **b != 0)?;
        let bit = bits.trailing_zeros();
        *bits &= *bits - 1;
        Some((word * 64) as u8 + bit as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn v4_flow() -> FlowKey {
        FlowKey {
            src: IpAddr::V4([10, 0, 0, 1].into()),
            dst: IpAddr::V4([10, 0, 0, 2].into()),
            src_port: 40000,
            dst_port: 80,
        }
    }

    fn v6_flow() -> FlowKey {
        let mut a = [0u8; 16];
        a[0] = 0xfd;
        a[15] = 1;
        let mut b = a;
        b[15] = 2;
        FlowKey {
            src: IpAddr::V6(a.into()),
            dst: IpAddr::V6(b.into()),
            src_port: 443,
            dst_port: 51000,
        }
    }

    #[test]
    fn notes_round_trip() {
        let mut note = Vec::new();
        for flow in [v4_flow(), v6_flow()] {
            put_note(7, Some(&flow), &mut note);
            assert_eq!(parse_note(&note), Some((7, Some(flow))));
        }
        put_note(9, None, &mut note);
        assert_eq!(note, [9]);
        assert_eq!(parse_note(&note), Some((9, None)));
        assert_eq!(parse_note(&[]), None);
        assert_eq!(parse_note(&[1, 5]), None);
        assert_eq!(parse_note(&[1, 4, 0, 0]), None);
    }

    #[test]
    fn mirrors_find_the_reverse_flow_and_forget_it() {
        let mut mirrors = Mirrors::default();
        let mut note = Vec::new();
        put_note(3, Some(&v4_flow()), &mut note);
        mirrors.hear(&note);
        assert_eq!(mirrors.get(3), Some(&v4_flow()));
        assert_eq!(mirrors.find_reverse(&reversed(&v4_flow())), Some(3));
        assert_eq!(mirrors.find_reverse(&v4_flow()), None);
        put_note(3, None, &mut note);
        mirrors.hear(&note);
        assert_eq!(mirrors.find_reverse(&reversed(&v4_flow())), None);
    }

    #[test]
    fn changed_cids_come_out_once_lowest_first() {
        let mut changed = Changed::default();
        for cid in [200, 3, 64, 3] {
            changed.mark(cid);
        }
        let taken: Vec<u8> = core::iter::from_fn(|| changed.take()).collect();
        assert_eq!(taken, [3, 64, 200]);
    }
}
