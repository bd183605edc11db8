//! The RFC 1144 `COMPRESSED_TCP` header (section 3.2.2), and the PPP protocol numbers that carry
//! VJ frames (RFC 1332).
//!
//! ```text
//! +-+-+-+-+-+-+-+-+
//! |0|C|I|P|S|A|W|U|  change mask
//! +-+-+-+-+-+-+-+-+
//! |  connection   |  (if C)
//! +---------------+
//! | TCP checksum  |  2 octets, sent whole
//! +---------------+
//! |    urgent     |  (if U, and not a special case) the urgent pointer itself
//! |   Δ window    |  (if W, and not a special case)
//! |    Δ ack      |  (if A, and not a special case)
//! |  Δ sequence   |  (if S, and not a special case)
//! |    Δ IP ID    |  (if I; without I the IP ID grows by one)
//! +---------------+
//! |   TCP data    |
//! ```
//!
//! Every number after the checksum takes one octet for 1..=255, or a zero octet and two octets
//! big-endian for 0 and 256..=65535 ([`crate::encoding::delta`]). `P` is the TCP PSH flag. Two
//! bit patterns that the general encoding never sends mean special cases and carry no deltas:
//! `S W U` ([`SPECIAL_I`], echoed interactive traffic: sequence and ack numbers both grow by the
//! data length of the previous packet) and `S A W U` ([`SPECIAL_D`], unidirectional data: the
//! sequence number grows by that length). The top bit is the SLIP type bit; on PPP it is zero
//! and a decoder ignores it, as `sl_uncompress_tcp` does.

use alloc::vec::Vec;

use crate::codec::FrameKind;
use crate::encoding::delta;

/// The connection number is present (C).
pub const NEW_C: u8 = 0x40;
/// The IP ID delta is present (I).
pub const NEW_I: u8 = 0x20;
/// The TCP PSH flag (P).
pub const TCP_PUSH_BIT: u8 = 0x10;
/// The sequence number delta is present (S).
pub const NEW_S: u8 = 0x08;
/// The acknowledgment number delta is present (A).
pub const NEW_A: u8 = 0x04;
/// The window delta is present (W).
pub const NEW_W: u8 = 0x02;
/// URG is set and the urgent pointer is present (U).
pub const NEW_U: u8 = 0x01;
/// `S W U`: echoed interactive traffic.
pub const SPECIAL_I: u8 = NEW_S | NEW_W | NEW_U;
/// `S A W U`: unidirectional data.
pub const SPECIAL_D: u8 = NEW_S | NEW_A | NEW_W | NEW_U;
/// The bits that tell the special cases apart.
pub const SPECIALS_MASK: u8 = NEW_S | NEW_A | NEW_W | NEW_U;

/// The longest TCP/IP header a connection slot holds (RFC 1144 Appendix A.1, `MAX_HDR`).
pub const MAX_HEADER: usize = 128;

/// PPP protocol numbers of the frames (RFC 1332 section 3.2, RFC 1661).
pub mod ppp {
    /// Internet Protocol: `TYPE_IP`.
    pub const IP: u16 = 0x0021;
    /// Van Jacobson Compressed TCP/IP: `COMPRESSED_TCP`.
    pub const VJ_COMPRESSED_TCP: u16 = 0x002d;
    /// Van Jacobson Uncompressed TCP/IP: `UNCOMPRESSED_TCP`.
    pub const VJ_UNCOMPRESSED_TCP: u16 = 0x002f;
}

/// The PPP protocol number that carries a frame of `kind`, for the kinds VJ sends.
pub fn ppp_protocol(kind: FrameKind) -> Option<u16> {
    match kind {
        FrameKind::Ip => Some(ppp::IP),
        FrameKind::CompressedTcp => Some(ppp::VJ_COMPRESSED_TCP),
        FrameKind::UncompressedTcp => Some(ppp::VJ_UNCOMPRESSED_TCP),
        _ => None,
    }
}

/// The frame kind a PPP protocol number carries, for VJ's three.
pub fn kind_of_ppp_protocol(protocol: u16) -> Option<FrameKind> {
    match protocol {
        ppp::IP => Some(FrameKind::Ip),
        ppp::VJ_COMPRESSED_TCP => Some(FrameKind::CompressedTcp),
        ppp::VJ_UNCOMPRESSED_TCP => Some(FrameKind::UncompressedTcp),
        _ => None,
    }
}

/// What the change mask says about the TCP sequence, ack, window and urgent fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    /// [`SPECIAL_I`]: sequence and ack numbers both grow by the previous packet's data length.
    EchoedInteractive,
    /// [`SPECIAL_D`]: the sequence number grows by the previous packet's data length.
    UnidirectionalData,
    /// The general case: each field present if its bit is set.
    Fields {
        /// The urgent pointer (U: URG set); `None` clears URG.
        urgent: Option<u16>,
        /// The window change, two's complement (W).
        window: Option<u16>,
        /// The acknowledgment number change (A).
        ack: Option<u16>,
        /// The sequence number change (S).
        seq: Option<u16>,
    },
}

impl Changes {
    /// No field changed.
    pub const NONE: Changes = Changes::Fields {
        urgent: None,
        window: None,
        ack: None,
        seq: None,
    };

    /// The S, A, W and U bits of the change mask.
    pub fn bits(&self) -> u8 {
        match *self {
            Changes::EchoedInteractive => SPECIAL_I,
            Changes::UnidirectionalData => SPECIAL_D,
            Changes::Fields {
                urgent,
                window,
                ack,
                seq,
            } => {
                let bit = |present: bool, bit: u8| if present { bit } else { 0 };
                bit(urgent.is_some(), NEW_U)
                    | bit(window.is_some(), NEW_W)
                    | bit(ack.is_some(), NEW_A)
                    | bit(seq.is_some(), NEW_S)
            }
        }
    }
}

/// A `COMPRESSED_TCP` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedHeader {
    /// The connection number, if sent (C).
    pub connection: Option<u8>,
    /// The TCP PSH flag (P).
    pub push: bool,
    /// The TCP checksum.
    pub checksum: u16,
    /// The sequence, ack, window and urgent fields.
    pub changes: Changes,
    /// The IP ID change (I); `None` means one.
    pub ip_id: Option<u16>,
}

impl CompressedHeader {
    /// The change mask octet.
    pub fn mask(&self) -> u8 {
        let bit = |present: bool, bit: u8| if present { bit } else { 0 };
        self.changes.bits()
            | bit(self.connection.is_some(), NEW_C)
            | bit(self.ip_id.is_some(), NEW_I)
            | bit(self.push, TCP_PUSH_BIT)
    }

    /// Appends the header to `out`. Returns false, appending nothing, if the general-case fields
    /// would read as a special case (`S W U` or `S A W U` present), which the format cannot say.
    pub fn encode(&self, out: &mut Vec<u8>) -> bool {
        if let Changes::Fields { .. } = self.changes {
            let bits = self.changes.bits();
            if bits == SPECIAL_I || bits == SPECIAL_D {
                return false;
            }
        }
        out.push(self.mask());
        if let Some(connection) = self.connection {
            out.push(connection);
        }
        out.extend_from_slice(&self.checksum.to_be_bytes());
        if let Changes::Fields {
            urgent,
            window,
            ack,
            seq,
        } = self.changes
        {
            // The order of RFC 1144: urgent, window, ack, sequence, then IP ID.
            for value in [urgent, window, ack, seq].into_iter().flatten() {
                delta::put(out, u32::from(value));
            }
        }
        if let Some(ip_id) = self.ip_id {
            delta::put(out, u32::from(ip_id));
        }
        true
    }

    /// Reads a header from the start of `frame`: the header and its length in octets (the TCP
    /// data follows), or `None` if the frame ends inside the header.
    pub fn decode(frame: &[u8]) -> Option<(CompressedHeader, usize)> {
        let mask = *frame.first()?;
        let mut at = 1;
        let connection = if mask & NEW_C != 0 {
            at += 1;
            Some(*frame.get(1)?)
        } else {
            None
        };
        let checksum = u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]);
        at += 2;
        let mut field = |present: bool| -> Option<Option<u16>> {
            if !present {
                return Some(None);
            }
            let (value, used) = delta::get(frame.get(at..)?)?;
            at += used;
            // A one-octet value is at most 255, a three-octet one at most 65535.
            Some(Some(value as u16))
        };
        let changes = match mask & SPECIALS_MASK {
            SPECIAL_I => Changes::EchoedInteractive,
            SPECIAL_D => Changes::UnidirectionalData,
            bits => Changes::Fields {
                urgent: field(bits & NEW_U != 0)?,
                window: field(bits & NEW_W != 0)?,
                ack: field(bits & NEW_A != 0)?,
                seq: field(bits & NEW_S != 0)?,
            },
        };
        let ip_id = field(mask & NEW_I != 0)?;
        let header = CompressedHeader {
            connection,
            push: mask & TCP_PUSH_BIT != 0,
            checksum,
            changes,
            ip_id,
        };
        Some((header, at))
    }
}
