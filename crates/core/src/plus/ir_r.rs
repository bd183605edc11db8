//! The IR-R frame (spec section 4): a new context set up from another context of the same hosts
//! (its *base*, RFC 4164's context replication), read and written in one place.
//!
//! ```text
//! | context flags | CID | base CID | strides (4, with T) | six IP header bytes (without B) |
//! | ports, coded against the base's in the kind byte's mode (crate::plus::ports) |
//! | a CO kind byte | a CO body without CID (crate::plus::co), its numbers whole |
//! ```
//!
//! The context flags are an IR's ([`format::ir`]) plus the timestamps flag, B (the six IP
//! bytes, [`format::IR_R_IP_BYTES`], are the base's) and S (the strides are the base's).
//! [`IrR`] is the frame's head as sent, up to the CO kind byte, with the body beside it: its
//! fields need the base context to mean anything (the ports are coded against the base's, the
//! body against the base's reference), which the decompressor supplies.

use alloc::vec::Vec;

use super::format::{self, ir};
use super::ports::{self, Mode};
use super::scaled::Strides;
use crate::codec::DropReason;

/// An IR-R frame's fields, as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IrR<'a> {
    /// How the ports are coded (the kind byte).
    pub mode: Mode,
    /// The context flags.
    pub flags: u8,
    /// The CID of the context set up.
    pub cid: u8,
    /// The CID of the base context.
    pub base_cid: u8,
    /// The strides, when sent (flag [`ir::STRIDES`]).
    pub strides: Option<Strides>,
    /// The six IP header bytes, when sent (without [`ir::BASE_IP`]).
    pub ip: Option<[u8; 6]>,
    /// The ports as coded ([`ports::put`]).
    pub ports: &'a [u8],
    /// The CO kind byte of the body.
    pub co_kind: u8,
    /// The CO body (from its extension on).
    pub body: &'a [u8],
}

/// The kind byte of an IR-R frame whose ports go in `mode`.
pub fn kind(mode: Mode) -> u8 {
    match mode {
        Mode::Whole => format::IR_R,
        Mode::SourceKept => format::IR_R_SOURCE_KEPT,
        Mode::DestKept => format::IR_R_DEST_KEPT,
    }
}

/// The ports' mode of an IR-R kind byte, if `kind` is one.
pub fn mode(kind: u8) -> Option<Mode> {
    match kind {
        format::IR_R => Some(Mode::Whole),
        format::IR_R_SOURCE_KEPT => Some(Mode::SourceKept),
        format::IR_R_DEST_KEPT => Some(Mode::DestKept),
        _ => None,
    }
}

impl<'a> IrR<'a> {
    /// Reads an IR-R frame whose ports go in `mode` (what follows its kind byte). On error,
    /// the CID if it was read.
    pub fn parse(mode: Mode, frame: &'a [u8]) -> Result<IrR<'a>, (Option<u8>, DropReason)> {
        let [flags, cid, base_cid, rest @ ..] = frame else {
            return Err((None, DropReason::Malformed));
        };
        let (flags, cid, base_cid) = (*flags, *cid, *base_cid);
        let malformed = (Some(cid), DropReason::Malformed);
        if cid == base_cid || (flags & ir::BASE_STRIDES != 0 && flags & ir::STRIDES != 0) {
            return Err(malformed);
        }
        let (strides, rest) = match (flags & ir::STRIDES != 0, rest) {
            (false, rest) => (None, rest),
            (true, [s0, s1, a0, a1, rest @ ..]) => {
                let strides = Strides {
                    seq: u16::from_be_bytes([*s0, *s1]),
                    ack: u16::from_be_bytes([*a0, *a1]),
                };
                (Some(strides), rest)
            }
            (true, _) => return Err(malformed),
        };
        let (ip, rest) = if flags & ir::BASE_IP != 0 {
            (None, rest)
        } else {
            let (sent, rest) = rest.split_first_chunk::<6>().ok_or(malformed)?;
            (Some(*sent), rest)
        };
        let used = ports::coded_len(rest, mode).ok_or(malformed)?;
        let (ports, rest) = rest.split_at(used);
        let (&co_kind, body) = rest.split_first().ok_or(malformed)?;
        Ok(IrR {
            mode,
            flags,
            cid,
            base_cid,
            strides,
            ip,
            ports,
            co_kind,
            body,
        })
    }

    /// Writes the frame (after its kind byte, [`kind`]); returns where its CO kind byte is,
    /// for a compressor that writes the body after it and the kind byte then.
    pub fn emit(&self, out: &mut Vec<u8>) -> usize {
        out.extend_from_slice(&[self.flags, self.cid, self.base_cid]);
        if let Some(strides) = self.strides {
            out.extend_from_slice(&strides.seq.to_be_bytes());
            out.extend_from_slice(&strides.ack.to_be_bytes());
        }
        if let Some(ip) = self.ip {
            out.extend_from_slice(&ip);
        }
        out.extend_from_slice(self.ports);
        let at = out.len();
        out.push(self.co_kind);
        out.extend_from_slice(self.body);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let frames = [
            IrR {
                mode: Mode::DestKept,
                flags: ir::BASE_IP | ir::BASE_STRIDES | ir::TS,
                cid: 5,
                base_cid: 1,
                strides: None,
                ip: None,
                ports: &[0x3E],
                co_kind: 0x6F,
                body: &[0x81, 0x80, 1, 2, 3],
            },
            IrR {
                mode: Mode::Whole,
                flags: ir::STRIDES,
                cid: 0,
                base_cid: 9,
                strides: Some(Strides { seq: 1448, ack: 0 }),
                ip: Some([0x45, 0, 64, 6, 0, 0]),
                ports: &[0x1F, 0x90, 0xA6, 0x0B],
                co_kind: 0x40,
                body: &[],
            },
        ];
        for frame in frames {
            let mut out = Vec::new();
            let at = frame.emit(&mut out);
            assert_eq!(out[at], frame.co_kind);
            assert_eq!(IrR::parse(frame.mode, &out), Ok(frame));
            assert_eq!(mode(kind(frame.mode)), Some(frame.mode));
            // Cut anywhere before the CO kind byte: malformed.
            for end in 0..=at {
                assert!(IrR::parse(frame.mode, &out[..end]).is_err());
            }
        }
    }

    #[test]
    fn a_frame_on_its_own_base_or_with_both_stride_flags_is_malformed() {
        let own = [0, 3, 3, 0x40];
        assert_eq!(
            IrR::parse(Mode::DestKept, &own),
            Err((Some(3), DropReason::Malformed))
        );
        let both = [ir::STRIDES | ir::BASE_STRIDES, 3, 4, 0, 0, 0, 0];
        assert!(IrR::parse(Mode::Whole, &both).is_err());
    }
}
