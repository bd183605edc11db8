//! The CO frame of a TCP flow (spec section 5), its layout stated once for both ends:
//!
//! ```text
//! | kind byte (or one that names the CID [+ an octet], crate::plus::cids) |
//! | extension (1-2, if X) | CID (1, if C) | scaling note (if N) |            -> Head
//! | checksum (2) | check (2, if V) |                                        -> Checks
//! | bit field: sequence, acknowledgment, IP-ID, TS value, TS echo,
//! |            SACK header, window, SACK blocks, outer IP-ID | padding |    -> layout
//! | R-octet (1, if R) | urgent pointer (2, if U) |                          -> Tail
//! | payload |
//! ```
//!
//! [`Head`], [`Checks`] and [`Tail`] are representations of their octets, each parsed and
//! emitted here. The bit field's fields depend on the context ([`Shape`]), the kind byte and
//! the extension, and each is coded against the window or the reference, so it has no
//! representation of its own in the data path: [`layout`] states which fields the bit field
//! holds, in which order and of how many bits, and hands each to a [`BitField`]. The
//! compressor's writes each field (choosing its code as it goes), the decompressor's reads and
//! decodes it, and [`CoBits`] keeps each as coded, for tools and tests. Each field's own code is
//! paired in one module: [`format`](mod@format) (prefix codes, window), [`ack`] (short window, SACK),
//! [`crate::plus::outer`] (outer Identification).

use alloc::vec::Vec;

use super::ack::{self, Extension};
use super::format::{self, ext, kind, Codes, EcrCodes, FieldCodes};
use super::ipid::Behaviour;
use super::note;
use super::outer::Layout;
use super::scaled::Strides;
use super::window::Scaling;
use crate::codec::DropReason;

mod coded;

pub use coded::{CoBits, Lsbs};

/// What precedes a CO frame's checksum: the extension, the CID and the scaling note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Head {
    /// The extension (default: none, the kind byte's X clear).
    pub x: Extension,
    /// The CID: named by the kind byte, or in the CID octet (with [`ext::C`]), or 0.
    pub cid: u8,
    /// The scaling note (with the extension's N flag).
    pub note: Option<Scaling>,
}

impl Head {
    /// Reads the head of a CO frame of kind byte `k` whose kind byte named CID `named`, if it
    /// did ([`crate::plus::cids`]), from `frame` (what follows the kind byte and the octet after
    /// a CID prefix): the head and the octets it took. On error, the CID if it was read.
    #[inline(always)]
    pub fn parse(
        k: u8,
        named: Option<u8>,
        frame: &[u8],
    ) -> Result<(Head, usize), (Option<u8>, DropReason)> {
        let malformed = |cid| (cid, DropReason::Malformed);
        let (x, mut at) = if k & kind::X != 0 {
            ack::get_extension(frame).ok_or(malformed(None))?
        } else {
            (Extension::default(), 0)
        };
        let cid = match (named, x.flags & ext::C != 0) {
            (Some(_), true) => return Err(malformed(None)),
            (Some(cid), false) => cid,
            (None, true) => match frame.get(at) {
                Some(&c) if c != 0 => {
                    at += 1;
                    c
                }
                _ => return Err(malformed(None)),
            },
            (None, false) => 0,
        };
        let note = if x.note {
            let (scaling, n) = note::get(&frame[at..]).ok_or(malformed(Some(cid)))?;
            at += n;
            Some(scaling)
        } else {
            None
        };
        Ok((Head { x, cid, note }, at))
    }

    /// Writes the head (the extension if there is one, the CID octet if [`ext::C`], the note);
    /// the kind byte and a CID prefix's octet are the caller's.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        if self.x.present() {
            ack::put_extension(out, &self.x);
        }
        if self.x.flags & ext::C != 0 {
            out.push(self.cid);
        }
        if let Some(scaling) = self.note {
            note::put(out, scaling);
        }
    }
}

/// The octets after the head: the checksum field (the TCP checksum, plus the IP-ID on IPv4,
/// masked by the seal's high half) and, with the extension's V flag, the 16-bit check (the
/// seal's low half).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks {
    /// The checksum field as sent.
    pub checksum: u16,
    /// The 16-bit check, with V.
    pub check: Option<u16>,
}

impl Checks {
    /// Reads the checks of a frame whose extension is `x` from the start of `data`: them and
    /// what follows them.
    #[inline(always)]
    pub fn parse<'a>(x: &Extension, data: &'a [u8]) -> Result<(Checks, &'a [u8]), DropReason> {
        let [c0, c1, rest @ ..] = data else {
            return Err(DropReason::Malformed);
        };
        let checksum = u16::from_be_bytes([*c0, *c1]);
        match (x.check, rest) {
            (false, rest) => Ok((
                Checks {
                    checksum,
                    check: None,
                },
                rest,
            )),
            (true, [v0, v1, rest @ ..]) => {
                let check = Some(u16::from_be_bytes([*v0, *v1]));
                Ok((Checks { checksum, check }, rest))
            }
            (true, _) => Err(DropReason::Malformed),
        }
    }

    /// Writes the checks.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.checksum.to_be_bytes());
        if let Some(check) = self.check {
            out.extend_from_slice(&check.to_be_bytes());
        }
    }
}

/// The octets after the bit field: the R-octet (with [`ext::R`]) and the urgent pointer (with
/// [`ext::U`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tail {
    /// The R-octet, with R.
    pub r_octet: Option<u8>,
    /// The urgent pointer, with U.
    pub urgent: Option<u16>,
}

impl Tail {
    /// Reads the tail of a frame of extension flags `e` from the start of `data`: it and what
    /// follows it (the payload).
    #[inline(always)]
    pub fn parse(e: u8, data: &[u8]) -> Result<(Tail, &[u8]), DropReason> {
        let (r_octet, data) = match (e & ext::R != 0, data) {
            (false, data) => (None, data),
            (true, [r, data @ ..]) => (Some(*r), data),
            (true, []) => return Err(DropReason::Malformed),
        };
        let (urgent, data) = match (e & ext::U != 0, data) {
            (false, data) => (None, data),
            (true, [u0, u1, data @ ..]) => (Some(u16::from_be_bytes([*u0, *u1])), data),
            (true, _) => return Err(DropReason::Malformed),
        };
        Ok((Tail { r_octet, urgent }, data))
    }

    /// Writes the tail.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend(self.r_octet);
        if let Some(urgent) = self.urgent {
            out.extend_from_slice(&urgent.to_be_bytes());
        }
    }
}

/// What a CO frame's bit field takes from its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The context's strides (scaled numbers, the code tables).
    pub strides: Strides,
    /// The IP-ID behaviour.
    pub behaviour: Behaviour,
    /// Whether the context has timestamps.
    pub ts: bool,
    /// The layout of a tunnelled context's outer IPv4 Identification, if it has one.
    pub outer: Option<Layout>,
}

/// The sequence or the acknowledgment number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    /// The sequence number.
    Seq,
    /// The acknowledgment number.
    Ack,
}

/// How a number's LSBs are coded in a frame: their count, and whether they are of the number
/// divided by its stride.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberBits {
    /// The LSB count.
    pub bits: u8,
    /// Of the number divided by its stride.
    pub scaled: bool,
}

/// The LSBs of a number of size class `class` (the kind byte's S or A) in a context with a
/// stride (`stride`) for it, unless the extension's Q or Z flag (`unscaled`) says it goes
/// unscaled: scaled in classes 0 to 2 ([`format::SCALED_BITS`]), the strided unscaled class
/// ([`format::STRIDED_UNSCALED_CLASS`]) unscaled, and [`format::UNSCALED_BITS`] without a
/// stride or with the flag.
#[inline(always)]
pub fn number_bits(class: u8, stride: bool, unscaled: bool) -> NumberBits {
    NUMBER_BITS[usize::from(class & 0x03) | usize::from(stride) << 2 | usize::from(unscaled) << 3]
}

/// [`number_bits`] for every class, stride and flag (index `class | stride << 2 | flag << 3`).
const NUMBER_BITS: [NumberBits; 16] = {
    let mut table = [NumberBits {
        bits: 0,
        scaled: false,
    }; 16];
    let mut i = 0;
    while i < 16 {
        let (class, stride, unscaled) = (i & 0x03, i & 0x04 != 0, i & 0x08 != 0);
        table[i] = if stride && !unscaled {
            NumberBits {
                bits: format::SCALED_BITS[class],
                scaled: class != format::STRIDED_UNSCALED_CLASS as usize,
            }
        } else {
            NumberBits {
                bits: format::UNSCALED_BITS[class],
                scaled: false,
            }
        };
        i += 1;
    }
    table
};

/// One end's part in a CO frame's bit field: [`layout`] calls these in the field's order, each
/// when its field is present. A writer puts each field's code (choosing it), a reader gets it.
pub trait BitField {
    /// Why the bit field cannot be written or read.
    type Error;

    /// The error for a frame whose flags ask for a field its context cannot have.
    fn invalid(&self) -> Self::Error;

    /// Whether the bits so far end on an octet boundary.
    fn at_boundary(&self) -> bool;

    /// The sequence or acknowledgment number's LSBs.
    fn number(&mut self, which: Number, bits: NumberBits) -> Result<(), Self::Error>;

    /// The IP-ID's offset from the counter the scaled sequence number predicts, as a prefix code
    /// of `codes` (sequential or byte-swapped behaviour).
    fn ip_id(&mut self, codes: &FieldCodes) -> Result<(), Self::Error>;

    /// The IP-ID's 16 bits (random behaviour).
    fn random_ip_id(&mut self) -> Result<(), Self::Error>;

    /// The timestamp value, as a prefix code of `codes`.
    fn ts_val(&mut self, codes: &FieldCodes) -> Result<(), Self::Error>;

    /// The timestamp echo (or its gap below the value), as a prefix code of `codes`.
    fn ts_ecr(&mut self, codes: &EcrCodes) -> Result<(), Self::Error>;

    /// The SACK header's 5 bits ([`ack::sack_header`]): written, or read.
    fn sack_header(&mut self) -> Result<u8, Self::Error>;

    /// The bits of the window's short code beyond the 4 in a short extension whose five low bits
    /// are `short` ([`ack::short_window_bits`]).
    fn short_window(&mut self, short: u8) -> Result<(), Self::Error>;

    /// The window's long code: a selector bit and the [`format::WINDOW_BITS`] LSBs it selects.
    fn window(&mut self) -> Result<(), Self::Error>;

    /// The SACK blocks under the SACK header `header`.
    fn sack(&mut self, header: u8) -> Result<(), Self::Error>;

    /// A marker bit: whether the outer Identification's code follows (else it is the predicted
    /// value).
    fn outer_marker(&mut self) -> Result<bool, Self::Error>;

    /// The outer Identification is the predicted value (no code, no marker; a writer whose
    /// value is not the predicted one fails).
    fn outer_predicted(&mut self) -> Result<(), Self::Error>;

    /// The outer Identification's code: `0` and [`NEAR_BITS`](super::outer::NEAR_BITS) LSBs of its offset from the
    /// inner IP-ID, or `1` and its 16 bits.
    fn outer_code(&mut self) -> Result<(), Self::Error>;
}

/// The bit field of a CO frame of kind byte `k` and extension `x` in a context of shape
/// `shape`, field by field, through `field` (spec sections 5.4 to 5.7 and 8.1).
#[inline(always)]
pub fn layout<F: BitField>(
    field: &mut F,
    shape: &Shape,
    k: u8,
    x: &Extension,
) -> Result<(), F::Error> {
    let e = x.flags;
    let codes = Codes::of(shape.strides);
    let seq = number_bits(k >> kind::S_SHIFT, shape.strides.seq != 0, e & ext::Q != 0);
    let ack = number_bits(k >> kind::A_SHIFT, shape.strides.ack != 0, e & ext::Z != 0);
    field.number(Number::Seq, seq)?;
    field.number(Number::Ack, ack)?;
    match shape.behaviour {
        Behaviour::Sequential | Behaviour::Swapped => field.ip_id(&codes.ip_id)?,
        Behaviour::Zero => {}
        Behaviour::Random => field.random_ip_id()?,
    }
    if shape.ts {
        field.ts_val(&codes.ts)?;
        field.ts_ecr(&codes.ecr)?;
    }
    // A short extension carries the window's code (with W) or else the SACK header; the bit
    // field the SACK header otherwise, before the window.
    let (win, sack) = (e & ext::W != 0, e & ext::K != 0);
    let sack_header = match x.short {
        Some(v) if !win => sack.then_some(v),
        _ if sack => Some(field.sack_header()?),
        _ => None,
    };
    if win {
        match x.short {
            Some(v) => field.short_window(v)?,
            None => field.window()?,
        }
    }
    if let Some(header) = sack_header {
        field.sack(header)?;
    }
    // Last (section 8.1): with O, the outer code; else, with a marker bit if the layout has one
    // or the bits so far leave a spare one before the padding, the code if the marker says so.
    match shape.outer {
        Some(outer) => {
            let coded = x.outer
                || ((outer == Layout::Marked || !field.at_boundary()) && field.outer_marker()?);
            if coded {
                field.outer_code()
            } else {
                field.outer_predicted()
            }
        }
        None if x.outer => Err(field.invalid()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_round_trip() {
        let scaling = Scaling {
            strides: Strides { seq: 1448, ack: 0 },
            behaviour: Behaviour::Sequential,
        };
        let heads = [
            (kind::X, None, Head::default()),
            (
                kind::X,
                None,
                Head {
                    x: Extension {
                        flags: ext::C | ext::W,
                        ..Extension::default()
                    },
                    cid: 7,
                    note: None,
                },
            ),
            (
                kind::X,
                Some(3),
                Head {
                    x: Extension {
                        flags: ext::W,
                        short: Some(0x05),
                        ..Extension::default()
                    },
                    cid: 3,
                    note: None,
                },
            ),
            (
                kind::X,
                None,
                Head {
                    x: Extension {
                        note: true,
                        check: true,
                        ..Extension::default()
                    },
                    cid: 0,
                    note: Some(scaling),
                },
            ),
        ];
        for (k, named, head) in heads {
            let k = if head.x == Extension::default() { 0 } else { k };
            let mut out = Vec::new();
            head.emit(&mut out);
            out.push(0xAB);
            assert_eq!(Head::parse(k, named, &out), Ok((head, out.len() - 1)));
        }
        // A CID octet of 0, or one beside a CID the kind byte named, is malformed.
        let c = [0xC0, 0];
        assert_eq!(
            Head::parse(kind::X, None, &c).map(|_| ()),
            Err((None, DropReason::Malformed))
        );
        let c = [0xC0, 5];
        assert!(Head::parse(kind::X, Some(5), &c).is_err());
    }

    #[test]
    fn checks_and_tails_round_trip() {
        for (x, checks) in [
            (
                Extension::default(),
                Checks {
                    checksum: 0x1234,
                    check: None,
                },
            ),
            (
                Extension {
                    check: true,
                    ..Extension::default()
                },
                Checks {
                    checksum: 0xFFFE,
                    check: Some(0x0102),
                },
            ),
        ] {
            let mut out = Vec::new();
            checks.emit(&mut out);
            assert_eq!(Checks::parse(&x, &out), Ok((checks, &[][..])));
            assert!(Checks::parse(&x, &out[..out.len() - 1]).is_err());
        }
        for (e, tail) in [
            (0, Tail::default()),
            (
                ext::R,
                Tail {
                    r_octet: Some(0x40),
                    urgent: None,
                },
            ),
            (
                ext::R | ext::U,
                Tail {
                    r_octet: Some(2),
                    urgent: Some(0x8001),
                },
            ),
        ] {
            let mut out = Vec::new();
            tail.emit(&mut out);
            out.push(0x99);
            assert_eq!(Tail::parse(e, &out), Ok((tail, &[0x99][..])));
        }
    }

    #[test]
    fn numbers_take_the_class_tables() {
        let strided = usize::from(format::STRIDED_UNSCALED_CLASS);
        for class in 0..4u8 {
            let c = usize::from(class);
            let scaled = number_bits(class, true, false);
            assert_eq!(scaled.bits, format::SCALED_BITS[c]);
            assert_eq!(scaled.scaled, c != strided);
            for (stride, flag) in [(false, false), (true, true)] {
                let plain = number_bits(class, stride, flag);
                assert_eq!(
                    (plain.bits, plain.scaled),
                    (format::UNSCALED_BITS[c], false)
                );
            }
        }
    }
}
