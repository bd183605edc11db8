//! Non-TCP packet streams: the COMPRESSED_NON_TCP format (RFC 2507 section 6 c, d), generations
//! (section 3.3) and compression slow-start with periodic refreshes (sections 3.3.1 to 3.3.3).
//!
//! ```text
//! 8-bit CID:  |      CID      |0|D| generation|  RANDOM fields …  payload
//! 16-bit CID: |  msb of CID   |1|D| generation|  lsb of CID   |  RANDOM fields …  payload
//! ```
//!
//! A compressed non-TCP header does not change the context; only a full header does, and a full
//! header that changes it carries a new generation. The decompressor drops a compressed header
//! whose generation is not its context's (section 9, option i).

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::time::Duration;

use super::MIN_WRAP;
use crate::codec::DropReason;

/// The first octets of a COMPRESSED_NON_TCP frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The CID.
    pub cid: u16,
    /// The generation.
    pub generation: u8,
    /// Octets the CID and generation took (2 or 3).
    pub len: usize,
}

/// Appends the CID and generation octets: the 8-bit format for CIDs below 256, the 16-bit one
/// otherwise.
pub fn emit_header(out: &mut Vec<u8>, cid: u16, generation: u8) {
    let generation = generation & 0x3F;
    match u8::try_from(cid) {
        Ok(cid) => out.extend_from_slice(&[cid, generation]),
        Err(_) => {
            let [msb, lsb] = cid.to_be_bytes();
            out.extend_from_slice(&[msb, 0x80 | generation, lsb]);
        }
    }
}

/// Reads the CID and generation octets of a COMPRESSED_NON_TCP frame.
pub fn parse_header(frame: &[u8]) -> Result<Header, DropReason> {
    let (&first, &second) = match frame {
        [a, b, ..] => (a, b),
        _ => return Err(DropReason::Malformed),
    };
    if second & 0x40 != 0 {
        return Err(DropReason::Unsupported);
    }
    let generation = second & 0x3F;
    if second & 0x80 == 0 {
        return Ok(Header {
            cid: u16::from(first),
            generation,
            len: 2,
        });
    }
    let &lsb = frame.get(2).ok_or(DropReason::Malformed)?;
    Ok(Header {
        cid: u16::from_be_bytes([first, lsb]),
        generation,
        len: 3,
    })
}

/// What the compressor sends for the next packet of a stream whose context did not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Send {
    /// A full header (a refresh).
    Full,
    /// A compressed header.
    Compressed,
}

/// The refresh state of one non-TCP stream at the compressor: section 3.3.3's C_NUM, F_PERIOD
/// and F_LAST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refresh {
    /// Compressed headers sent since the last full header.
    pub c_num: u32,
    /// Compressed headers allowed before the next full header.
    pub f_period: u32,
    /// When the last full header was sent.
    pub f_last: Duration,
}

impl Refresh {
    /// The state after a full header that changed the context, sent at `now`.
    pub fn after_change(now: Duration) -> Refresh {
        Refresh {
            c_num: 0,
            f_period: 1,
            f_last: now,
        }
    }

    /// Decides the header of the next packet at `now` and updates the state, per section
    /// 3.3.3. `f_max_period` and `f_max_time` of zero mean no limit.
    pub fn next(&mut self, now: Duration, f_max_period: u16, f_max_time: Duration) -> Send {
        let cap = if f_max_period == 0 {
            u32::MAX
        } else {
            u32::from(f_max_period)
        };
        if self.c_num >= self.f_period {
            self.c_num = 0;
            self.f_last = now;
            self.f_period = self.f_period.saturating_mul(2).min(cap);
            Send::Full
        } else if !f_max_time.is_zero() && now > self.f_last + f_max_time {
            self.c_num = 0;
            self.f_last = now;
            Send::Full
        } else {
            self.c_num += 1;
            Send::Compressed
        }
    }
}

/// The generation of one non-TCP CID at the compressor, and when it last changed, so that no
/// value is reused within [`MIN_WRAP`] of its last use (sections 3.3 and 8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    /// The current value (6 bits).
    pub value: u8,
    /// When each of the last 63 changes happened, oldest first.
    changes: VecDeque<Duration>,
    /// Whether every value has been used once (the 64th change is not a reuse: the value
    /// before the first change was never sent).
    wrapped: bool,
}

impl Default for Generation {
    /// A CID never used: its first generation will be 0.
    fn default() -> Generation {
        Generation {
            value: 63,
            changes: VecDeque::new(),
            wrapped: false,
        }
    }
}

impl Generation {
    /// Moves to the next value at `now`, or returns false if that value was last used less than
    /// [`MIN_WRAP`] ago.
    pub fn advance(&mut self, now: Duration) -> bool {
        if self.changes.len() == 63 {
            // The next value was in use until the change 63 changes ago.
            if self.wrapped && now.saturating_sub(self.changes[0]) < MIN_WRAP {
                return false;
            }
            self.changes.pop_front();
            self.wrapped = true;
        }
        self.changes.push_back(now);
        self.value = (self.value + 1) & 0x3F;
        true
    }
}
