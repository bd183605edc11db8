//! CONTEXT_STATE (RFC 2507 section 10.2): the decompressor's TCP header requests, sent back to
//! the compressor over the reverse direction of the link.
//!
//! ```text
//! +---+---+---+---+---+---+---+---+
//! |     TCP header request = 3    |
//! |           CID count           |
//! |              CID              |  (count times)
//! +---+---+---+---+---+---+---+---+
//! ```
//!
//! Type values 1 and 2 are RFC 2508's (IP/UDP/RTP, which we do not run); a compressor ignores
//! them, and ignores a frame whose count does not match its length.

use alloc::vec::Vec;

/// The CONTEXT_STATE type of a TCP header request.
pub const TCP_HEADER_REQUEST: u8 = 3;

/// Most CIDs one CONTEXT_STATE carries (its count is one octet).
pub const MAX_CIDS: usize = 255;

/// Writes a TCP header request for `cids` (at most [`MAX_CIDS`] of them are taken) into `out`
/// (cleared first); returns how many CIDs it carries.
pub fn emit(out: &mut Vec<u8>, cids: &[u8]) -> usize {
    let n = cids.len().min(MAX_CIDS);
    out.clear();
    out.push(TCP_HEADER_REQUEST);
    out.push(n as u8);
    out.extend_from_slice(&cids[..n]);
    n
}

/// The CIDs of a TCP header request, or `None` if `frame` is not a well-formed one.
pub fn parse(frame: &[u8]) -> Option<&[u8]> {
    match frame {
        [TCP_HEADER_REQUEST, count, cids @ ..] if cids.len() == usize::from(*count) => Some(cids),
        _ => None,
    }
}
