//! FULL_HEADER: the packet with its CID (and generation) in the length fields of its chain
//! (RFC 2507 section 5.3). The link tells the decompressor the packet's length, so the length
//! fields can be restored from it.
//!
//! ```text
//! TCP:                 first length field   | pkt nr LSB (0) |      CID      |
//!                      second (if any)      | pkt nr MSB (0) |       0       |
//! non-TCP, 8-bit CID:  first length field   |0|D|generation |      CID      |
//!                      second (if any)      |       0       | data (if D)   |
//! non-TCP, 16-bit CID: first length field   |1|D|generation | data (if D)   |
//!                      second               |             CID               |
//! ```
//!
//! Whether a full header is for TCP or non-TCP is told by its chain: TCP if it ends in a TCP
//! header. The packet numbers are those of section 11.2 (reordering links), not used here: sent
//! as zero, ignored on receipt.

use super::chain::Layout;
use crate::codec::DropReason;

/// What a full header identifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullId {
    /// A TCP context.
    Tcp {
        /// Its CID.
        cid: u8,
    },
    /// A non-TCP context.
    NonTcp {
        /// Its CID (8- or 16-bit format).
        cid: u16,
        /// Its generation (6 bits).
        generation: u8,
    },
}

fn put(packet: &mut [u8], at: usize, value: u16) {
    packet[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

fn get(packet: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([packet[at], packet[at + 1]])
}

/// Writes `id` into the length fields of `packet`. Fails (changing nothing) when the chain has
/// no length field, or only one and the CID needs 16 bits.
pub fn write(packet: &mut [u8], layout: &Layout, id: FullId) -> bool {
    let first = layout.lengths.first().map(|f| f.at);
    let second = layout.lengths.get(1).map(|f| f.at);
    match (id, first, second) {
        (_, None, _) => false,
        (FullId::Tcp { cid }, Some(a), b) => {
            put(packet, a, u16::from(cid));
            if let Some(b) = b {
                put(packet, b, 0);
            }
            true
        }
        (FullId::NonTcp { cid, generation }, Some(a), b) => {
            let generation = u16::from(generation & 0x3F) << 8;
            match (u8::try_from(cid), b) {
                (Ok(cid8), b) => {
                    put(packet, a, generation | u16::from(cid8));
                    if let Some(b) = b {
                        put(packet, b, 0);
                    }
                    true
                }
                (Err(_), Some(b)) => {
                    put(packet, a, 0x8000 | generation);
                    put(packet, b, cid);
                    true
                }
                (Err(_), None) => false,
            }
        }
    }
}

/// Reads what the length fields of full header `frame` (parsed as `layout`) identify.
pub fn read(frame: &[u8], layout: &Layout) -> Result<FullId, DropReason> {
    let first = layout
        .lengths
        .first()
        .map(|f| get(frame, f.at))
        .ok_or(DropReason::Malformed)?;
    let second = layout.lengths.get(1).map(|f| get(frame, f.at));
    if layout.tcp.is_some() {
        if second.is_some_and(|s| s & 0x00FF != 0) {
            return Err(DropReason::Malformed);
        }
        return Ok(FullId::Tcp {
            cid: (first & 0xFF) as u8,
        });
    }
    if first & 0x4000 != 0 {
        // D: data for a hooked scheme (section 12), which we do not run.
        return Err(DropReason::Unsupported);
    }
    let generation = ((first >> 8) & 0x3F) as u8;
    if first & 0x8000 == 0 {
        if second.is_some_and(|s| s != 0) {
            return Err(DropReason::Malformed);
        }
        Ok(FullId::NonTcp {
            cid: first & 0xFF,
            generation,
        })
    } else {
        let cid = second.ok_or(DropReason::Malformed)?;
        if first & 0xFF != 0 {
            return Err(DropReason::Malformed);
        }
        Ok(FullId::NonTcp { cid, generation })
    }
}
