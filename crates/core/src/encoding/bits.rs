//! MSB-first bit packing.

use alloc::vec::Vec;

/// Appends bit fields to a byte vector, most significant bit first. The bits gather in a
/// 64-bit word and go to the vector a word's whole bytes at a time (and the rest when the
/// writer finishes or is dropped, a partly filled byte only by [`BitWriter::finish`]).
#[derive(Debug)]
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    /// The pending bits, in the low `used` bits.
    acc: u64,
    used: u8,
}

impl<'a> BitWriter<'a> {
    /// Starts writing at the end of `out`.
    pub fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter {
            out,
            acc: 0,
            used: 0,
        }
    }

    /// Writes the `bits` low bits of `value` (`bits` up to 32).
    #[inline]
    pub fn put(&mut self, value: u32, bits: u8) {
        debug_assert!(bits <= 32);
        if bits == 0 {
            return;
        }
        if self.used + bits > 64 {
            self.flush();
        }
        self.acc = (self.acc << bits) | u64::from(value & crate::encoding::wlsb::mask(bits));
        self.used += bits;
    }

    /// Writes the `bits` low bits of `value` (`bits` up to [`LONG_BITS`]): what two
    /// [`BitWriter::put`]s of its high and low parts write, in one.
    #[inline]
    pub fn put_long(&mut self, value: u64, bits: u8) {
        debug_assert!(bits <= LONG_BITS);
        if bits == 0 {
            return;
        }
        if self.used + bits > 64 {
            self.flush();
        }
        self.acc = (self.acc << bits) | (value & (u64::MAX >> (64 - bits)));
        self.used += bits;
    }

    /// Moves the whole bytes of the pending bits to the vector.
    fn flush(&mut self) {
        let whole = self.used / 8;
        if whole == 0 {
            return;
        }
        let bytes = (self.acc << (64 - self.used)).to_be_bytes();
        // All eight bytes appended (a copy of fixed size, not a call), the partial ones
        // dropped again.
        let keep = self.out.len() + usize::from(whole);
        self.out.extend_from_slice(&bytes);
        self.out.truncate(keep);
        self.used -= 8 * whole;
        self.acc &= (1u64 << self.used) - 1;
    }

    /// Whether the bits written so far end on a byte boundary.
    pub fn at_boundary(&self) -> bool {
        self.used.is_multiple_of(8)
    }

    /// The bits left to the next byte boundary (0 to 7).
    pub fn spare(&self) -> u8 {
        (8 - self.used % 8) % 8
    }

    /// Pads with zero bits to the next byte boundary.
    pub fn finish(self) {
        self.finish_with(0);
    }

    /// Pads to the next byte boundary with the [`BitWriter::spare`] low bits of `padding`.
    pub fn finish_with(mut self, padding: u8) {
        let pad = self.spare();
        self.acc = self.acc << pad | u64::from(padding) & ((1 << pad) - 1);
        self.used += pad;
    }
}

impl Drop for BitWriter<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The most bits [`BitWriter::put_long`] writes at once: what stays free of the accumulator's
/// 64 after a flush leaves at most 7.
pub const LONG_BITS: u8 = 57;

/// The bits [`BitReader::window`] shows at least: a word from the current byte, less the bits
/// of it already read.
pub const WINDOW_BITS: u8 = 57;

/// Reads bit fields from a byte slice, most significant bit first.
#[derive(Debug)]
pub struct BitReader<'a> {
    data: &'a [u8],
    bit: usize,
}

impl<'a> BitReader<'a> {
    /// Reads from the start of `data`.
    pub fn new(data: &'a [u8]) -> BitReader<'a> {
        BitReader { data, bit: 0 }
    }

    /// Reads `bits` bits (up to 32), or `None` past the end of the data.
    #[inline(always)]
    pub fn get(&mut self, bits: u8) -> Option<u32> {
        debug_assert!(bits <= 32);
        let end = self.bit + usize::from(bits);
        if end > 8 * self.data.len() {
            self.bit = 8 * self.data.len();
            return None;
        }
        if bits == 0 {
            return Some(0);
        }
        let value = self.peek(bits);
        self.bit = end;
        Some(value)
    }

    /// The next `bits` bits (1 to 32) without reading them, zeros past the end of the data.
    #[inline]
    pub fn peek(&self, bits: u8) -> u32 {
        debug_assert!((1..=32).contains(&bits));
        (self.window() >> (64 - u32::from(bits))) as u32
    }

    /// The next [`WINDOW_BITS`] bits without reading them, from the word's top bit down
    /// (zeros past the end of the data; the word's low bits are unspecified): several fields
    /// read from one load ([`BitReader::skip`] then reads them).
    #[inline(always)]
    pub fn window(&self) -> u64 {
        // The bytes from the current one, big-endian in one word, zeros past the end.
        let rest = self.data.get(self.bit / 8..).unwrap_or(&[]);
        let word = match rest.first_chunk::<8>() {
            Some(eight) => u64::from_be_bytes(*eight),
            // The last bytes of the data (a pure ACK's bit field ends its frame): the data's
            // last eight bytes shifted up, or, for shorter data, gathered byte by byte (a copy
            // into a zeroed word would stall the word's load on the copy's smaller stores).
            None => {
                let word = match self.data.last_chunk::<8>() {
                    Some(last) => u64::from_be_bytes(*last),
                    None => rest.iter().fold(0, |word, &b| word << 8 | u64::from(b)),
                };
                word.checked_shl(64 - 8 * rest.len() as u32).unwrap_or(0)
            }
        };
        word << (self.bit % 8)
    }

    /// Reads `bits` bits without looking at them (the caller took them from
    /// [`BitReader::window`]), or `None` past the end of the data, as [`BitReader::get`].
    #[inline]
    pub fn skip(&mut self, bits: u8) -> Option<()> {
        let end = self.bit + usize::from(bits);
        if end > 8 * self.data.len() {
            self.bit = 8 * self.data.len();
            return None;
        }
        self.bit = end;
        Some(())
    }

    /// Whether the bits read so far end on a byte boundary.
    pub fn at_boundary(&self) -> bool {
        self.bit.is_multiple_of(8)
    }

    /// The bits left in a partly read byte (0 to 7): its padding, once the fields are read.
    pub fn spare(&self) -> u8 {
        ((8 - self.bit % 8) % 8) as u8
    }

    /// Whole bytes consumed, counting a partly read byte (its padding) as consumed.
    pub fn bytes_consumed(&self) -> usize {
        self.bit.div_ceil(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_padding() {
        let mut out = alloc::vec![0xEE];
        let mut w = BitWriter::new(&mut out);
        assert!(w.at_boundary());
        w.put(0b10, 2);
        assert!(!w.at_boundary());
        w.put(0x3FF, 10);
        w.put(0x5A5A5A, 23);
        w.put(5, 3);
        assert!(!w.at_boundary());
        w.put(0x3, 2);
        assert!(w.at_boundary());
        w.put(1, 1);
        w.finish();
        assert_eq!(out.len(), 1 + 6); // 41 bits -> 6 bytes
        let mut r = BitReader::new(&out[1..]);
        assert!(r.at_boundary());
        assert_eq!(r.get(2), Some(0b10));
        assert!(!r.at_boundary());
        assert_eq!(r.get(10), Some(0x3FF));
        assert_eq!(r.get(23), Some(0x5A5A5A));
        assert_eq!(r.get(3), Some(5));
        assert_eq!(r.get(2), Some(3));
        assert!(r.at_boundary());
        assert_eq!(r.get(1), Some(1));
        assert_eq!(r.bytes_consumed(), 6);
        assert_eq!(r.get(7), Some(0)); // padding
        assert_eq!(r.get(1), None);
    }

    #[test]
    fn reads_as_bit_by_bit() {
        let data: Vec<u8> = (0..9u32).map(|i| (i * 0x9D + 0x3B) as u8).collect();
        let bit = |i: usize| u32::from((data[i / 8] >> (7 - i % 8)) & 1);
        for widths in [
            [3u8, 13, 32, 7],
            [1, 8, 9, 31],
            [0, 32, 17, 16],
            [5, 5, 30, 32],
        ] {
            let mut r = BitReader::new(&data);
            let mut at = 0;
            for n in widths {
                let n_bits = usize::from(n);
                let want = (at + n_bits <= 8 * data.len())
                    .then(|| (at..at + n_bits).fold(0, |v, i| (v << 1) | bit(i)));
                assert_eq!(r.get(n), want, "{n} bits at {at}");
                at = (at + n_bits).min(8 * data.len());
                assert_eq!(r.bytes_consumed(), at.div_ceil(8));
            }
        }
    }

    #[test]
    fn the_window_is_zero_past_the_end_of_data_of_any_length() {
        let all: Vec<u8> = (0..12u32).map(|i| (i * 0xB5 + 0x2F) as u8).collect();
        for len in 0..=all.len() {
            let data = &all[..len];
            let bit = |i: usize| {
                data.get(i / 8)
                    .map_or(0, |b| u64::from((b >> (7 - i % 8)) & 1))
            };
            for at in 0..=8 * len {
                let mut r = BitReader::new(data);
                r.bit = at;
                let want = (0..64).fold(0u64, |w, i| (w << 1) | bit(at + i));
                let unspecified = 64 - u32::from(WINDOW_BITS);
                assert_eq!(
                    r.window() >> unspecified,
                    want >> unspecified,
                    "{len} bytes, bit {at}"
                );
            }
        }
    }

    #[test]
    fn the_window_shows_what_get_reads_and_skip_reads_it() {
        let data: Vec<u8> = (0..11u32).map(|i| (i * 0x6B + 0x11) as u8).collect();
        for at in 0..8 * data.len() {
            for n in [1u8, 5, 20, 32] {
                let mut by_get = BitReader::new(&data);
                let mut by_window = BitReader::new(&data);
                by_get.skip(at as u8).unwrap();
                by_window.bit = at;
                let shown = (by_window.window() >> (64 - u32::from(n))) as u32;
                let got = by_get.get(n);
                let skipped = by_window.skip(n);
                assert_eq!(got.is_some(), skipped.is_some(), "{n} bits at {at}");
                if let Some(v) = got {
                    assert_eq!(v, shown, "{n} bits at {at}");
                }
                assert_eq!(by_get.bytes_consumed(), by_window.bytes_consumed());
            }
        }
    }

    #[test]
    fn long_runs_read_back_field_by_field() {
        // Past 64 pending bits the writer moves whole bytes out mid-way.
        let widths: Vec<u8> = (0..60u32).map(|i| ((i * 7 + 3) % 33) as u8).collect();
        let value = |i: usize| (i as u32).wrapping_mul(0x9E37_79B9);
        let mut out = alloc::vec![0xAB];
        let mut w = BitWriter::new(&mut out);
        for (i, &n) in widths.iter().enumerate() {
            w.put(value(i), n);
        }
        w.finish();
        let total: usize = widths.iter().map(|&n| usize::from(n)).sum();
        assert_eq!(out.len(), 1 + total.div_ceil(8));
        assert_eq!(out[0], 0xAB);
        let mut r = BitReader::new(&out[1..]);
        for (i, &n) in widths.iter().enumerate() {
            let want = if n == 0 {
                0
            } else {
                value(i) & (u32::MAX >> (32 - n))
            };
            assert_eq!(r.get(n), Some(want), "field {i}");
        }
    }

    #[test]
    fn a_dropped_writer_keeps_its_whole_bytes() {
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        w.put(0xABC, 12);
        drop(w);
        assert_eq!(out, [0xAB]);
    }

    #[test]
    fn full_width_fields() {
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        w.put(u32::MAX, 32);
        w.put(0, 1);
        w.finish();
        assert_eq!(out, [0xFF, 0xFF, 0xFF, 0xFF, 0x00]);
        assert_eq!(BitReader::new(&out).get(32), Some(u32::MAX));
    }
}
