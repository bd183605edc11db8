//! A CO frame's bit field as coded, read without its context ([`CoBits`]): for tools and tests,
//! and for the decompressor's check (in debug builds) that its reader took the same bits.

use taroc_wire::tcp::SackBlocks;

use super::{layout, BitField, Extension, Number, NumberBits, Shape};
use crate::codec::DropReason;
use crate::encoding::bits::BitReader;
use crate::plus::format::{EcrCodes, FieldCodes};
use crate::plus::outer::{self, NEAR_BITS};
use crate::plus::{ack, format};

/// A coded field: its LSBs and their count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lsbs {
    /// The LSBs.
    pub value: u32,
    /// Their count.
    pub bits: u8,
}

/// The fields of a CO frame's bit field as coded (nothing decoded against a reference): what
/// tools and tests read of a frame without its context. [`CoBits::parse`] reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoBits {
    /// The sequence number's LSBs, and whether they are scaled.
    pub seq: (Lsbs, bool),
    /// The acknowledgment number's LSBs, and whether they are scaled.
    pub ack: (Lsbs, bool),
    /// The IP-ID's code (its offset's LSBs, or its 16 bits).
    pub ip_id: Option<Lsbs>,
    /// The timestamp value's LSBs.
    pub ts_val: Option<Lsbs>,
    /// The timestamp echo's LSBs, and whether they are of the gap below the value.
    pub ts_ecr: Option<(Lsbs, bool)>,
    /// The window's LSBs (of a short code: the extension's 4 and the bit field's).
    pub window: Option<Lsbs>,
    /// The SACK header.
    pub sack_header: Option<u8>,
    /// The SACK blocks' edges, as offsets from the acknowledgment number (scaled as the header
    /// says).
    pub sack: SackBlocks,
    /// The outer Identification's code: `None` for the predicted value, else whether it came
    /// whole and its bits (offset LSBs, or the 16 bits).
    pub outer: Option<(bool, Lsbs)>,
    /// The bit field's length in octets, padding included.
    pub octets: usize,
}

impl CoBits {
    /// Reads the bit field of a frame of kind byte `k` and extension `x` in a context of shape
    /// `shape` from the start of `data`.
    pub fn parse(shape: &Shape, k: u8, x: &Extension, data: &[u8]) -> Result<CoBits, DropReason> {
        let mut reader = RawReader {
            bits: BitReader::new(data),
            out: CoBits::default(),
        };
        layout(&mut reader, shape, k, x)?;
        reader.out.octets = reader.bits.bytes_consumed();
        Ok(reader.out)
    }
}

/// [`CoBits::parse`]'s reader.
struct RawReader<'a> {
    bits: BitReader<'a>,
    out: CoBits,
}

impl RawReader<'_> {
    fn get(&mut self, bits: u8) -> Result<Lsbs, DropReason> {
        let value = self.bits.get(bits).ok_or(DropReason::Malformed)?;
        Ok(Lsbs { value, bits })
    }

    fn code(&mut self, codes: &[u8; 4]) -> Result<Lsbs, DropReason> {
        let (value, bits) = format::get_code(&mut self.bits, codes).ok_or(DropReason::Malformed)?;
        Ok(Lsbs { value, bits })
    }
}

impl BitField for RawReader<'_> {
    type Error = DropReason;

    fn invalid(&self) -> DropReason {
        DropReason::Malformed
    }

    fn at_boundary(&self) -> bool {
        self.bits.at_boundary()
    }

    fn number(&mut self, which: Number, bits: NumberBits) -> Result<(), DropReason> {
        let read = (self.get(bits.bits)?, bits.scaled);
        match which {
            Number::Seq => self.out.seq = read,
            Number::Ack => self.out.ack = read,
        }
        Ok(())
    }

    fn ip_id(&mut self, codes: &FieldCodes) -> Result<(), DropReason> {
        self.out.ip_id = Some(self.code(&codes.bits)?);
        Ok(())
    }

    fn random_ip_id(&mut self) -> Result<(), DropReason> {
        self.out.ip_id = Some(self.get(16)?);
        Ok(())
    }

    fn ts_val(&mut self, codes: &FieldCodes) -> Result<(), DropReason> {
        self.out.ts_val = Some(self.code(&codes.bits)?);
        Ok(())
    }

    fn ts_ecr(&mut self, codes: &EcrCodes) -> Result<(), DropReason> {
        let c = format::get_prefix(&mut self.bits).ok_or(DropReason::Malformed)?;
        let (gap, bits) = codes.codes[c];
        self.out.ts_ecr = Some((self.get(bits)?, gap));
        Ok(())
    }

    fn sack_header(&mut self) -> Result<u8, DropReason> {
        Ok(self.get(5)?.value as u8)
    }

    fn short_window(&mut self, short: u8) -> Result<(), DropReason> {
        let (bits, more) = ack::short_window_bits(short);
        let high = self.get(more)?.value;
        let value = u32::from(short & 0x0F) | high << 4;
        self.out.window = Some(Lsbs { value, bits });
        Ok(())
    }

    fn window(&mut self) -> Result<(), DropReason> {
        let (value, bits) = format::get_window(&mut self.bits).ok_or(DropReason::Malformed)?;
        self.out.window = Some(Lsbs { value, bits });
        Ok(())
    }

    fn sack(&mut self, header: u8) -> Result<(), DropReason> {
        let (count, _, order) = ack::sack_header_fields(header);
        self.out.sack_header = Some(header);
        self.out.sack =
            ack::get_sack(&mut self.bits, 0, count, 1, order).ok_or(DropReason::Malformed)?;
        Ok(())
    }

    fn outer_marker(&mut self) -> Result<bool, DropReason> {
        Ok(self.get(1)?.value == 1)
    }

    fn outer_predicted(&mut self) -> Result<(), DropReason> {
        self.out.outer = None;
        Ok(())
    }

    fn outer_code(&mut self) -> Result<(), DropReason> {
        let (whole, value) = outer::get_code(&mut self.bits).ok_or(DropReason::Malformed)?;
        let bits = if whole { 16 } else { NEAR_BITS };
        self.out.outer = Some((
            whole,
            Lsbs {
                value: value.into(),
                bits,
            },
        ));
        Ok(())
    }
}
