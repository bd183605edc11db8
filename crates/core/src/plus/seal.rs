//! The seal folded into a CO frame's checksum field (specification section 5.8).
//!
//! The TCP checksum is a one's-complement sum: the errors of a field decoded against a stale
//! reference are multiples of powers of two, and two of them can cancel (a sequence number one
//! LSB interval too high and a timestamp one interval too low), so that a wrongly rebuilt packet
//! verifies; the sum also cannot tell a context's source and destination apart. A CO frame
//! therefore carries the checksum XOR a 16-bit *seal*: a multiplicative hash of the context's
//! identity and of every field decoded against a reference. A decompressor that rebuilds
//! another header than the compressor's (another field value, another template) gets another
//! seal, hence a checksum field off by a pseudo-random 16-bit value: the packet fails
//! verification except by a 2^-16 chance that no structure of the errors raises.

use super::outer::Outer;
use crate::tcp::context::Identity;
use crate::tcp::packet::{Fields, TcpIpPacket};

/// FNV-1a's 32-bit offset basis and prime.
const FNV_BASIS: u32 = 0x811C_9DC5;
const FNV_PRIME: u32 = 0x0100_0193;

/// The multipliers of the field hash (odd 64-bit constants).
const K1: u64 = 0x9E37_79B9_7F4A_7C15;
const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const K3: u64 = 0x1656_67B1_9E37_79F9;

/// A context's identity hash: FNV-1a (32 bits) over its template (the IP header with the
/// per-packet fields zeroed, then the TCP ports), then one octet `ts << 2 | usual ECN bits`,
/// then the outer header of a tunnelled context ([`Outer`], per-packet fields zeroed). Computed
/// once per context on both sides.
pub fn identity_hash(identity: &Identity, outer: Option<&Outer>) -> u32 {
    let h = fnv(
        identity.template.iter().copied(),
        identity.ts,
        identity.usual_ecn,
    );
    outer.map_or(h, |o| fnv_on(h, o.bytes().iter().copied()))
}

/// [`identity_hash`] of the identity a context made for `p` would have, read from the packet
/// in place (no template is built).
pub fn packet_identity_hash(p: &TcpIpPacket<'_>) -> u32 {
    let template = (0..p.tcp_offset + 4).map(|at| p.template_byte(at));
    fnv(template, p.ts, p.r_octet)
}

/// FNV-1a over `template`, then the octet `ts << 2 | usual ECN bits`.
fn fnv(template: impl Iterator<Item = u8>, ts: bool, usual_ecn: u8) -> u32 {
    let tail = u8::from(ts) << 2 | usual_ecn & 0x03;
    fnv_on(FNV_BASIS, template.chain(core::iter::once(tail)))
}

/// FNV-1a from the state `h` on over `bytes`.
fn fnv_on(h: u32, bytes: impl Iterator<Item = u8>) -> u32 {
    bytes.fold(h, |h, b| (h ^ u32::from(b)).wrapping_mul(FNV_PRIME))
}

/// The seal of a packet with `fields` in a context of identity hash `identity`, `outer_id`
/// the IPv4 Identification of a tunnelled context's outer header (section 8.1) when the frame
/// carries it, else 0.
pub fn seal(identity: u32, f: &Fields, outer_id: u16) -> u16 {
    (long_seal(identity, f, outer_id) >> 16) as u16
}

/// The seal of a mirrored IR whose numbers are coded against a reference (specification
/// section 3.4): [`seal`] of its sequence number `seq`, acknowledgment number `ack`, window
/// `win` and timestamps `ts` (0 without the option), with identity hash 0 and no IP-ID.
/// Numbers rebuilt against another reference whose checksum field is the same have
/// one's-complement sums that cancel, so the TCP checksum alone would pass them; their seal
/// differs but for a 2^-16 chance.
pub fn numbers_seal(seq: u32, ack: u32, win: u16, ts: Option<(u32, u32)>) -> u16 {
    let (ts_val, ts_ecr) = ts.unwrap_or_default();
    let fields = Fields {
        seq,
        ack,
        win,
        ip_id: 0,
        ts_val,
        ts_ecr,
    };
    seal(0, &fields, 0)
}

/// The seal of [`seal`] and the 16 bits below it in the hash (specification section 5.8): a
/// frame with the extension's V flag carries the low 16 as its *check*, so that a header
/// rebuilt wrong passes with odds of about 2^-32 instead of 2^-16.
pub fn long_seal(identity: u32, f: &Fields, outer_id: u16) -> u32 {
    (field_hash(identity, f, outer_id) >> 32) as u32
}

/// The 64-bit field hash whose top 32 bits are [`long_seal`]: the seal, the check, and (by
/// [`padding`]) the bits that fill a CO frame's bit field to its octet boundary.
pub fn field_hash(identity: u32, f: &Fields, outer_id: u16) -> u64 {
    let mut h = (u64::from(f.seq) << 32 | u64::from(f.ack)) ^ u64::from(identity);
    h = h.wrapping_mul(K1);
    h ^= h >> 32;
    h ^= u64::from(f.ts_val) << 32 | u64::from(f.ts_ecr);
    h = h.wrapping_mul(K2);
    h ^= h >> 32;
    h ^= u64::from(outer_id) << 32 | u64::from(f.ip_id) << 16 | u64::from(f.win);
    h.wrapping_mul(K3)
}

/// The `bits` (0 to 7) that pad a CO frame's bit field to its octet boundary, from the field
/// hash `h` (specification section 5.8): its low half, which the seal and the check leave
/// out, mixed again so that every input bit reaches them. A header rebuilt wrong whose seal
/// (and check) still match gives other padding bits but for a 2^-bits chance.
pub fn padding(h: u64, bits: u8) -> u8 {
    debug_assert!(bits < 8);
    if bits == 0 {
        return 0;
    }
    let g = (h ^ h >> 31).wrapping_mul(K1);
    (g >> (64 - u32::from(bits))) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn fields() -> Fields {
        Fields {
            seq: 0x0001_0000,
            ack: 77,
            win: 502,
            ip_id: 9,
            ts_val: 0x0400_0000,
            ts_ecr: 5,
        }
    }

    /// Of the sequence numbers whose seal matches the right one's (about one in 2^16), the
    /// padding of `bits` bits still tells about all but one in 2^bits apart: the padding is
    /// independent of the seal.
    #[test]
    fn a_header_whose_seal_matches_fails_on_its_padding() {
        let f = fields();
        let h = field_hash(3, &f, 0);
        let (mut matched, mut passed) = (0u32, [0u32; 8]);
        for i in 1..1u32 << 22 {
            let mut wrong = f;
            wrong.seq = f.seq.wrapping_add(i.wrapping_mul(0x9E37));
            let g = field_hash(3, &wrong, 0);
            if g >> 48 != h >> 48 {
                continue;
            }
            matched += 1;
            for bits in 0..8u8 {
                passed[usize::from(bits)] += u32::from(padding(g, bits) == padding(h, bits));
            }
        }
        assert!((32..=96).contains(&matched), "{matched}");
        assert_eq!(passed[0], matched);
        // Expected matched / 2^bits: about 32, 16, 8, 4 for 1 to 4 bits.
        assert!(
            passed[1] > matched / 4 && passed[1] < matched * 3 / 4,
            "{passed:?}"
        );
        assert!(passed[3] < matched / 3, "{passed:?}");
        assert!(passed[7] <= 3, "{passed:?}");
    }

    #[test]
    fn cancelling_errors_change_the_seal() {
        // A sequence number one 2^16 step too high and a timestamp one step too low leave the
        // one's-complement sum unchanged; the seal does not.
        let f = fields();
        let mut wrong = f;
        wrong.seq = f.seq.wrapping_add(0x0001_0000);
        wrong.ts_val = f.ts_val.wrapping_sub(0x0001_0000);
        assert_ne!(seal(1, &f, 0), seal(1, &wrong, 0));
    }

    #[test]
    fn every_field_and_the_identity_move_the_seal() {
        let f = fields();
        let base = seal(7, &f, 0);
        assert_ne!(seal(7, &f, 1), base);
        assert_ne!(seal(7, &f, 0x8000), base);
        assert_ne!(seal(8, &f, 0), base);
        let changes: [fn(&mut Fields); 6] = [
            |f| f.seq ^= 1,
            |f| f.ack ^= 1 << 31,
            |f| f.win ^= 1,
            |f| f.ip_id ^= 1 << 15,
            |f| f.ts_val ^= 1,
            |f| f.ts_ecr ^= 1 << 31,
        ];
        for change in changes {
            let mut g = f;
            change(&mut g);
            assert_ne!(seal(7, &g, 0), base);
        }
    }

    #[test]
    fn swapped_addresses_change_the_identity_hash() {
        let mut template = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0];
        template.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x13, 0x89, 0, 80]);
        let a = Identity {
            template: template.clone(),
            ts: true,
            random_ip_id: false,
            usual_ecn: 0,
        };
        let mut swapped = template;
        swapped[12..16].copy_from_slice(&[10, 0, 0, 2]);
        swapped[16..20].copy_from_slice(&[10, 0, 0, 1]);
        let b = Identity {
            template: swapped,
            ..a.clone()
        };
        assert_ne!(identity_hash(&a, None), identity_hash(&b, None));
        let c = Identity {
            ts: false,
            ..a.clone()
        };
        assert_ne!(identity_hash(&a, None), identity_hash(&c, None));
        // An outer header, and another outer header, each give another hash.
        let mut header = [0u8; 40];
        (header[0], header[6], header[39]) = (0x60, taroc_wire::protocol::IPV4, 1);
        let one = Outer::from_template(&header, 0).expect("an outer header");
        header[39] = 2;
        let two = Outer::from_template(&header, 0).expect("an outer header");
        let hashes = [None, Some(&one), Some(&two)].map(|o| identity_hash(&a, o));
        assert!(hashes[0] != hashes[1] && hashes[1] != hashes[2] && hashes[0] != hashes[2]);
    }

    #[test]
    fn a_packet_hashes_in_place_as_its_identity_does() {
        use crate::tcp::spec::Spec;
        for (v4, ts, ecn) in [
            (true, Some((7, 9)), 0),
            (true, None, 2),
            (false, Some((1, 0)), 1),
        ] {
            // The ECN bits are in the TOS / traffic class: the template zeroes them, the
            // identity keeps them as its usual value.
            let bytes = Spec {
                v4,
                ts,
                tos: 0xB8 | ecn,
                ..Spec::default()
            }
            .build();
            let p = TcpIpPacket::parse(&bytes).expect("a valid packet");
            assert_eq!(
                packet_identity_hash(&p),
                identity_hash(&Identity::of(&p, false), None)
            );
        }
    }

    #[test]
    fn wrong_fields_collide_about_once_in_65536() {
        // Fields one LSB interval off in every combination the decoder can produce: the seal
        // should collide about as often as a random 16-bit value.
        let f = fields();
        let s = seal(3, &f, 0);
        let mut collisions = 0u32;
        let mut tries = 0u32;
        for seq_k in 4..20 {
            for ts_k in 4..20 {
                for ack_k in 0..8 {
                    let mut g = f;
                    g.seq = g.seq.wrapping_add(1 << seq_k);
                    g.ts_val = g.ts_val.wrapping_sub(1 << ts_k);
                    g.ack = g.ack.wrapping_add((1 << (ack_k + 4)) - 1);
                    tries += 1;
                    collisions += u32::from(seal(3, &g, 0) == s);
                }
            }
        }
        assert!(collisions <= 1, "{collisions} collisions in {tries}");
    }
}
