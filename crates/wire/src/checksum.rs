//! The Internet checksum (RFC 1071): one's-complement sum of 16-bit words.
//!
//! A segment *verifies* when the one's-complement sum over pseudo-header and segment, checksum
//! field included, is 0xFFFF. This accepts both encodings of zero (0x0000 and 0xFFFF) in the
//! checksum field, which some stacks (Linux) do send; comparing a recomputed checksum with the
//! field would wrongly reject them.

use core::net::IpAddr;

/// Inputs up to this many bytes go [`Sum::add_short`]'s way.
const SHORT: usize = 64;

/// [`Sum::add_bytes`] sums at most this many bytes (65536 words of 32 bits) before folding, so
/// that the sum of the words' low halves stays below 2^32.
const BLOCK: usize = 1 << 18;

/// Blocks of at least this many bytes go the AVX2 loop (where the CPU has it): on shorter
/// ones the baseline loop costs less than the AVX2 loop's setup and final sums.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
const AVX2_MIN: usize = 256;

/// A running one's-complement sum, folded lazily: kept as a sum of native-order 16-bit words
/// (the byte order its data is read in), swapped to big-endian once, when it is folded (RFC
/// 1071 section 2 B: the sum of byte-swapped words is the byte-swapped sum).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum(u64);

impl Sum {
    /// The empty sum.
    pub const fn new() -> Sum {
        Sum(0)
    }

    /// Adds `data` as big-endian 16-bit words (an odd last byte is padded with zero). The data
    /// must start at an even offset of the checksummed whole.
    ///
    /// The data is summed as native-order 32-bit words, 64 bytes at a time into four lanes
    /// (one vector register on baseline x86-64: a loop LLVM turns into vector adds, where
    /// sixteen lanes were split between vector and scalar registers), then the lanes and the
    /// last words together. Each sum is a pair of wrapping sums: of the words, and of their high
    /// 16-bit halves; the sum of the low halves is the first minus the second shifted up by 16,
    /// exact while it stays below 2^32 (blocks of at most 65536 words). Since `2^16 ≡ 1`
    /// modulo `0xFFFF`, a word is congruent to the sum of its halves; the sum stays in native
    /// order until [`Sum::fold`].
    #[inline]
    pub fn add_bytes(self, data: &[u8]) -> Sum {
        if data.len() <= SHORT {
            return self.add_short(data);
        }
        self.add_long(data)
    }

    /// Appends `data` to `out` and adds it as [`Sum::add_bytes`] does, in one pass over the
    /// bytes where the CPU has AVX2 (each 32-byte load both summed and stored), instead of a
    /// copy and then a sum: what a decompressor does with a payload it delivers and verifies.
    #[cfg(feature = "std")]
    pub fn add_copied(self, data: &[u8], out: &mut Vec<u8>) -> Sum {
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        if data.len() >= AVX2_MIN && std::is_x86_feature_detected!("avx2") {
            out.reserve(data.len());
            return data.chunks(BLOCK).fold(self, |sum, block| {
                // SAFETY: the CPU has AVX2, and `out` has room for `block` (reserved above).
                #[allow(unsafe_code)]
                let native = unsafe { avx2::copied_sum(block, out) };
                sum.add_native(native)
            });
        }
        out.extend_from_slice(data);
        self.add_bytes(data)
    }

    /// [`Sum::add_bytes`] for more than [`SHORT`] bytes, out of line: its vector loops' setup
    /// is not paid by a short input.
    #[inline(never)]
    fn add_long(self, data: &[u8]) -> Sum {
        data.chunks(BLOCK).fold(self, Sum::add_block)
    }

    /// [`Sum::add_bytes`] for at most [`BLOCK`] bytes: with AVX2 if the CPU has it (and the
    /// `std` feature can ask), else with the baseline's vectors.
    fn add_block(self, block: &[u8]) -> Sum {
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        if block.len() >= AVX2_MIN && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, which `avx2::native_sum` needs.
            #[allow(unsafe_code)]
            return self.add_native(unsafe { avx2::native_sum(block) });
        }
        self.add_native(portable_sum(block))
    }

    /// [`Sum::add_bytes`] for at most [`SHORT`] bytes (headers): 32-bit words in a plain loop,
    /// which spares a short input the setup of the vectorized loop.
    #[inline(always)]
    fn add_short(self, data: &[u8]) -> Sum {
        // The length of an IPv4 header without options, the most common input: five loads.
        if let Ok(h) = <&[u8; 20]>::try_from(data) {
            let word =
                |at: usize| u64::from(u32::from_ne_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]));
            return self.add_native(word(0) + word(4) + word(8) + word(12) + word(16));
        }
        self.add_native(native_words(data))
    }

    /// Adds a sum of native-order 16-bit words.
    fn add_native(mut self, native: u64) -> Sum {
        self.0 += native;
        self
    }

    /// Adds a sum of data that starts at an even offset of the checksummed whole.
    pub fn add_sum(self, other: Sum) -> Sum {
        self.add_native(other.0)
    }

    /// Adds one 16-bit word.
    pub fn add_u16(mut self, word: u16) -> Sum {
        self.0 += u64::from(word.to_be());
        self
    }

    /// Adds a 32-bit value as two words (in one addition: `2^16 ≡ 1` modulo `0xFFFF`, so the
    /// value is congruent to the sum of its words, and zero only if both are).
    pub fn add_u32(mut self, value: u32) -> Sum {
        self.0 += u64::from(value.to_be());
        self
    }

    /// Adds a 128-bit value as eight words (four 32-bit additions, as [`Sum::add_u32`]).
    fn add_u128(self, value: u128) -> Sum {
        (0..4).fold(self, |sum, i| sum.add_u32((value >> (32 * i)) as u32))
    }

    /// Adds the TCP/UDP pseudo-header (RFC 793 / RFC 8200 section 8.1). Addresses of different
    /// families add nothing sensible; callers pass addresses of one IP header.
    pub fn add_pseudo_header(self, src: IpAddr, dst: IpAddr, protocol: u8, length: u32) -> Sum {
        let sum = match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => self.add_u32(s.into()).add_u32(d.into()),
            (s, d) => self.add_u128(ip_bits(s)).add_u128(ip_bits(d)),
        };
        sum.add_u32(length).add_u16(u16::from(protocol))
    }

    /// The folded 16-bit one's-complement sum (of big-endian words).
    pub fn fold(self) -> u16 {
        let mut s = self.0;
        while s > 0xFFFF {
            s = (s & 0xFFFF) + (s >> 16);
        }
        u16::from_be(s as u16)
    }

    /// The checksum to store in a header: the complement of the folded sum.
    pub fn checksum(self) -> u16 {
        !self.fold()
    }

    /// Whether a sum that included the checksum field verifies (folds to 0xFFFF).
    pub fn verifies(self) -> bool {
        self.fold() == 0xFFFF
    }
}

/// The sum of `data` as native-order 32-bit words (the last bytes as 16-bit words, an odd last
/// byte padded with zero), congruent modulo `0xFFFF` to the sum of its native-order 16-bit words.
#[inline(always)]
fn native_words(data: &[u8]) -> u64 {
    // 64-bit loads, each added as its two 32-bit halves.
    let longs = data.chunks_exact(8);
    let rest = longs.remainder();
    let sum = longs.fold(0, |sum, w| {
        let w = u64::from_ne_bytes(w.try_into().expect("chunks of 8 bytes"));
        sum + (w & 0xFFFF_FFFF) + (w >> 32)
    });
    let (word, tail) = rest.split_at(rest.len() & 4);
    let word = word
        .try_into()
        .map_or(0, |w| u64::from(u32::from_ne_bytes(w)));
    sum + word + tail_words(tail)
}

/// The sum of at most [`BLOCK`] bytes as native-order 16-bit words, as [`native_words`]
/// gives it, in the pairs of wrapping sums [`Sum::add_bytes`] describes: 64 bytes at a time
/// into four lanes of 32 bits.
fn portable_sum(block: &[u8]) -> u64 {
    let add = |(all, high): (u32, u32), word: &[u8]| {
        let word = u32::from_ne_bytes(word.try_into().expect("chunks of 4 bytes"));
        (all.wrapping_add(word), high.wrapping_add(word >> 16))
    };
    let chunks = block.chunks_exact(64);
    let rest = chunks.remainder();
    let mut lanes = [(0u32, 0u32); 4];
    for chunk in chunks {
        for (i, word) in chunk.chunks_exact(4).enumerate() {
            lanes[i % 4] = add(lanes[i % 4], word);
        }
    }
    let words = rest.chunks_exact(4);
    let tail = words.remainder();
    let sums = lanes.iter().fold((0u32, 0u32), |(a, h), &(all, high)| {
        (a.wrapping_add(all), h.wrapping_add(high))
    });
    let (all, high) = words.fold(sums, add);
    let low = all.wrapping_sub(high << 16);
    u64::from(low) + u64::from(high) + tail_words(tail)
}

/// The sum of a block with AVX2 (x86-64 CPUs since 2013, found at run time): the baseline's
/// method on 256-bit vectors, about a third faster on a full-sized payload (`cargo bench -p
/// taroc-wire --bench checksum`).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_setzero_si256, _mm256_srli_epi32,
        _mm256_storeu_si256,
    };

    /// The sum of `block` (at most [`super::BLOCK`] bytes) as native-order 16-bit words, as
    /// [`super::native_words`] gives it, by [`super::Sum::add_bytes`]'s pairs of wrapping sums
    /// (of the 32-bit words, and of their high halves) in eight lanes of 32 bits, two vectors
    /// of each.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn native_sum(block: &[u8]) -> u64 {
        let zero = _mm256_setzero_si256();
        let (mut all, mut high) = ([zero; 2], [zero; 2]);
        let chunks = block.chunks_exact(64);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (i, half) in chunk.chunks_exact(32).enumerate() {
                // SAFETY: the load reads the 32 bytes of `half`; unaligned loads are allowed.
                let v = unsafe { _mm256_loadu_si256(half.as_ptr().cast::<__m256i>()) };
                all[i] = _mm256_add_epi32(all[i], v);
                high[i] = _mm256_add_epi32(high[i], _mm256_srli_epi32::<16>(v));
            }
        }
        lanes_sum(all, high) + super::native_words(rest)
    }

    /// [`native_sum`] of `block`, appending it to `out` as it goes: each 32-byte load summed
    /// and stored.
    ///
    /// # Safety
    /// The CPU must have AVX2, and `out` must have room for `block` past its length.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn copied_sum(block: &[u8], out: &mut Vec<u8>) -> u64 {
        debug_assert!(out.capacity() - out.len() >= block.len());
        let zero = _mm256_setzero_si256();
        let (mut all, mut high) = ([zero; 2], [zero; 2]);
        let base = out.len();
        let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        let chunks = block.chunks_exact(64);
        let rest = chunks.remainder();
        for (c, chunk) in chunks.enumerate() {
            for (i, half) in chunk.chunks_exact(32).enumerate() {
                // SAFETY: the load reads the 32 bytes of `half`; the store writes 32 bytes at
                // the same offset of `out`'s spare room, which the caller made as long as
                // `block`; unaligned loads and stores are allowed.
                let v = unsafe {
                    let v = _mm256_loadu_si256(half.as_ptr().cast::<__m256i>());
                    _mm256_storeu_si256(dst.add(64 * c + 32 * i).cast::<__m256i>(), v);
                    v
                };
                all[i] = _mm256_add_epi32(all[i], v);
                high[i] = _mm256_add_epi32(high[i], _mm256_srli_epi32::<16>(v));
            }
        }
        // SAFETY: the bytes before `rest` were written above, within the spare room.
        unsafe { out.set_len(base + block.len() - rest.len()) };
        out.extend_from_slice(rest);
        lanes_sum(all, high) + super::native_words(rest)
    }

    /// The pairs of lanes' sums (of the 32-bit words, and of their high halves) as one sum of
    /// native-order 16-bit words.
    #[target_feature(enable = "avx2")]
    fn lanes_sum(all: [__m256i; 2], high: [__m256i; 2]) -> u64 {
        let (mut a, mut h) = ([0u32; 8], [0u32; 8]);
        // SAFETY: each store writes the 32 bytes of an array of eight u32; unaligned stores
        // are allowed.
        unsafe {
            _mm256_storeu_si256(
                a.as_mut_ptr().cast::<__m256i>(),
                _mm256_add_epi32(all[0], all[1]),
            );
            _mm256_storeu_si256(
                h.as_mut_ptr().cast::<__m256i>(),
                _mm256_add_epi32(high[0], high[1]),
            );
        }
        let all = a.iter().fold(0u32, |s, &x| s.wrapping_add(x));
        let high = h.iter().fold(0u32, |s, &x| s.wrapping_add(x));
        let low = all.wrapping_sub(high << 16);
        u64::from(low) + u64::from(high)
    }
}

/// The sum of the last bytes (fewer than 4) of data summed as 32-bit words, as native-order
/// 16-bit words (an odd last byte padded with zero).
fn tail_words(tail: &[u8]) -> u64 {
    let word = |a: u8, b: u8| u64::from(u16::from_ne_bytes([a, b]));
    match *tail {
        [a, b, c, ..] => word(a, b) + word(c, 0),
        [a, b] => word(a, b),
        [a] => word(a, 0),
        [] => 0,
    }
}

/// An address as 128 bits (IPv4 as its IPv4-mapped IPv6 address).
fn ip_bits(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => a.to_ipv6_mapped().into(),
        IpAddr::V6(a) => a.into(),
    }
}

/// The checksum of `data` alone (e.g. an IPv4 header with its checksum field zeroed).
pub fn checksum(data: &[u8]) -> u16 {
    Sum::new().add_bytes(data).checksum()
}

/// Whether a transport segment (TCP or UDP, checksum field included) verifies under the
/// pseudo-header of `src`, `dst` and `protocol`.
pub fn transport_verifies(src: IpAddr, dst: IpAddr, protocol: u8, segment: &[u8]) -> bool {
    Sum::new()
        .add_pseudo_header(src, dst, protocol, segment.len() as u32)
        .add_bytes(segment)
        .verifies()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3: the sum of 0001 f203 f4f5 f6f7 is ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(Sum::new().add_bytes(&data).fold(), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(
            Sum::new().add_bytes(&[0x12, 0x34, 0x56]).fold(),
            0x1234 + 0x5600
        );
    }

    #[test]
    fn long_and_short_paths_agree() {
        let data: [u8; 37] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        let mut slow = Sum::new();
        for pair in data.chunks(2) {
            slow = slow.add_u16(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
        }
        assert_eq!(Sum::new().add_bytes(&data).fold(), slow.fold());
    }

    /// The sum word by word, as RFC 1071 defines it.
    fn slow_sum(data: &[u8]) -> Sum {
        data.chunks(2).fold(Sum::new(), |sum, pair| {
            sum.add_u16(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
        })
    }

    /// A xorshift stream of bytes from `seed` (nonzero).
    fn bytes(mut x: u64) -> impl FnMut() -> u8 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        }
    }

    #[test]
    fn the_wide_sum_folds_as_the_word_sum() {
        let mut next = bytes(0x9E37_79B9_7F4A_7C15);
        // Short data, long data, and data past one block of 2^22 bytes.
        for len in (0..300usize).chain([65_535, 65_536, 65_537, 200_001, BLOCK + 67]) {
            let random: Vec<u8> = (0..len).map(|_| next()).collect();
            let ones = vec![0xFFu8; len];
            let zeros = vec![0u8; len];
            for data in [&random, &ones, &zeros] {
                let start = Sum::new().add_u16(0x1234);
                assert_eq!(
                    start.add_bytes(data).fold(),
                    slow_sum(data).add_u16(0x1234).fold(),
                    "{len} bytes"
                );
                assert_eq!(Sum::new().add_bytes(data).fold(), slow_sum(data).fold());
            }
        }
    }

    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[test]
    fn the_avx2_sum_is_the_portable_sum() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut next = bytes(0x2545_F491_4F6C_DD1D);
        for len in (0..260usize).chain([1447, 1448, 65_537, BLOCK]) {
            let random: Vec<u8> = (0..len).map(|_| next()).collect();
            let ones = vec![0xFFu8; len];
            for data in [&random, &ones] {
                // SAFETY: the CPU has AVX2 (checked above).
                #[allow(unsafe_code)]
                let wide = unsafe { avx2::native_sum(data) };
                assert_eq!(
                    Sum(wide).fold(),
                    Sum(portable_sum(data)).fold(),
                    "{len} bytes"
                );
            }
        }
    }

    #[test]
    fn every_alignment_and_odd_length_sums_as_the_word_sum() {
        let data: Vec<u8> = (0..1600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for start in 0..8 {
            for len in (0..200).chain([1447, 1448, 1449, 1500, 1591]) {
                let slice = &data[start..start + len];
                assert_eq!(
                    Sum::new().add_bytes(slice).fold(),
                    slow_sum(slice).fold(),
                    "{len} bytes from {start}"
                );
            }
        }
    }

    #[cfg(feature = "std")]
    #[test]
    fn a_copy_summed_is_the_copy_and_the_sum() {
        let data: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let ones = vec![0xFFu8; 70_000];
        for source in [&data, &ones] {
            for start in 0..4 {
                for len in (0..300).chain([1447, 1448, 1449, 65_537, 69_000]) {
                    let slice = &source[start..start + len];
                    // After a header already in the buffer, as a payload goes.
                    let mut out = vec![7u8; 40];
                    let sum = Sum::new().add_u16(9).add_copied(slice, &mut out);
                    assert_eq!(&out[..40], &[7u8; 40][..], "{len} bytes from {start}");
                    assert_eq!(&out[40..], slice, "{len} bytes from {start}");
                    assert_eq!(
                        sum.fold(),
                        slow_sum(slice).add_u16(9).fold(),
                        "{len} bytes from {start}"
                    );
                }
            }
        }
    }

    proptest::proptest! {
        #[cfg(feature = "std")]
        #[test]
        fn any_bytes_copied_sum_as_the_word_sum(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
            prefix in 0usize..64,
        ) {
            let mut out = vec![1u8; prefix];
            let sum = Sum::new().add_copied(&data, &mut out);
            proptest::prop_assert_eq!(&out[prefix..], &data[..]);
            proptest::prop_assert_eq!(sum.fold(), slow_sum(&data).fold());
        }

        #[test]
        fn any_bytes_sum_as_the_word_sum(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
            start in 0u16..=0xFFFF,
        ) {
            let sum = Sum::new().add_u16(start).add_bytes(&data);
            proptest::prop_assert_eq!(sum.fold(), slow_sum(&data).add_u16(start).fold());
        }
    }

    #[test]
    fn the_pseudo_header_sums_the_address_octets() {
        use core::net::{Ipv4Addr, Ipv6Addr};
        let v4 = Ipv4Addr::new(192, 0, 2, 0xFF);
        let v6 = Ipv6Addr::new(0x2001, 0xdb8, 0, 0xFFFF, 1, 2, 0xABCD, 0xFF01);
        let octets = |a: IpAddr| match a {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        let mapped = IpAddr::V6(v4.to_ipv6_mapped());
        for (src, dst, as_src, as_dst) in [
            (v4.into(), Ipv4Addr::new(10, 1, 2, 3).into(), None, None),
            (v6.into(), Ipv6Addr::LOCALHOST.into(), None, None),
            (v4.into(), v6.into(), Some(mapped), None),
        ] {
            let expected = slow_sum(&octets(as_src.unwrap_or(src)))
                .add_bytes(&octets(as_dst.unwrap_or(dst)))
                .add_u32(1234)
                .add_u16(6);
            assert_eq!(
                Sum::new().add_pseudo_header(src, dst, 6, 1234).fold(),
                expected.fold(),
                "{src} {dst}"
            );
        }
    }

    #[test]
    fn both_zero_encodings_verify() {
        // A header whose data sums to 0xFFFF needs checksum 0x0000; 0xFFFF is the same value.
        let body = [0xFF, 0xFE, 0x00, 0x01];
        for field in [0x0000u16, 0xFFFF] {
            assert!(Sum::new().add_bytes(&body).add_u16(field).verifies());
        }
    }
}
