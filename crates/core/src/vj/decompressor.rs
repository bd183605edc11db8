//! The RFC 1144 decompressor: section 3.2.4 and `sl_uncompress_tcp` of Appendix A.3.

use alloc::vec;
use alloc::vec::Vec;

use taroc_wire::checksum;
use taroc_wire::ipv4::Ipv4Packet;
use taroc_wire::protocol;
use taroc_wire::tcp::{flags, TcpSegment};

use super::format::{Changes, CompressedHeader, MAX_HEADER};
use super::header::{
    self, get16, get32, put16, put32, tcp, IP_CHECKSUM, IP_ID, IP_PROTOCOL, IP_TOTAL_LEN,
};
use super::VjConfig;
use crate::codec::{deliver_unchanged, Decompressor, DropReason, FrameKind};

/// The saved header of one connection slot.
#[derive(Debug, Clone)]
struct Slot {
    header: [u8; MAX_HEADER],
    /// IP and TCP header length; 0 while the slot has never been filled.
    len: usize,
}

/// The VJ decompressor for one direction of a link.
///
/// Like RFC 1144's, it trusts the frames: it does not verify the TCP checksum of what it
/// rebuilds (the receiving TCP does). Every frame it refuses sets the `toss` flag, as
/// `sl_uncompress_tcp` does on every error: from then on `COMPRESSED_TCP` frames without a
/// connection number are refused ([`DropReason::NoContext`]) until a `COMPRESSED_TCP` frame with
/// one (C bit set) or an `UNCOMPRESSED_TCP` frame arrives. A link that loses or discards frames
/// must report it with [`Decompressor::link_error`], the RFC's `TYPE_ERROR`.
#[derive(Debug, Clone)]
pub struct VjDecompressor {
    slots: Vec<Slot>,
    /// The connection number of the last frame that named one.
    last_received: Option<u8>,
    /// Discard `COMPRESSED_TCP` frames with an implicit connection number.
    toss: bool,
}

impl VjDecompressor {
    /// A decompressor with no connection state.
    pub fn new(config: VjConfig) -> VjDecompressor {
        VjDecompressor {
            slots: vec![
                Slot {
                    header: [0; MAX_HEADER],
                    len: 0,
                };
                config.slot_count()
            ],
            last_received: None,
            toss: false,
        }
    }

    /// Whether the decompressor is discarding `COMPRESSED_TCP` frames without a connection
    /// number (the `toss` flag).
    pub fn is_tossing(&self) -> bool {
        self.toss
    }

    /// An `UNCOMPRESSED_TCP` frame: the packet, with TCP restored in its protocol field; its
    /// header becomes the slot's. Refused if its IP header checksum (with TCP in the protocol
    /// field) does not verify.
    fn uncompressed(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        // Appendix A.3 trusts the frame's header lengths; we check that the headers are there.
        let ip = Ipv4Packet::new_checked(frame).map_err(|_| DropReason::Malformed)?;
        let ip_len = ip.header_len();
        let tcp = TcpSegment::new_checked(&frame[ip_len..]).map_err(|_| DropReason::Malformed)?;
        let len = ip_len + tcp.header_len();
        let cid = ip.protocol();
        let slot = self
            .slots
            .get_mut(usize::from(cid))
            .ok_or(DropReason::Malformed)?;
        out.extend_from_slice(frame);
        out[IP_PROTOCOL] = protocol::TCP;
        // Section 3.1: "the receiver can check the header checksum when the header is actually
        // sent (i.e., in an uncompressed datagram)". Appendix A.3 does not; Linux slhc does.
        if !checksum::Sum::new().add_bytes(&out[..ip_len]).verifies() {
            return Err(DropReason::Malformed);
        }
        self.toss = false;
        self.last_received = Some(cid);
        slot.header[..len].copy_from_slice(&out[..len]);
        slot.len = len;
        Ok(())
    }

    /// A `COMPRESSED_TCP` frame: the saved header of its connection, updated by the frame, then
    /// the data.
    fn compressed(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (compressed, used) = CompressedHeader::decode(frame).ok_or(DropReason::Malformed)?;
        let cid = match compressed.connection {
            Some(cid) => {
                let slot = self
                    .slots
                    .get(usize::from(cid))
                    .ok_or(DropReason::Malformed)?;
                // Appendix A.3 would use the zeroed slot; Linux's slhc refuses it, as we do.
                if slot.len == 0 {
                    return Err(DropReason::NoContext);
                }
                self.toss = false;
                self.last_received = Some(cid);
                cid
            }
            None if self.toss => return Err(DropReason::NoContext),
            None => self.last_received.ok_or(DropReason::NoContext)?,
        };
        let data = &frame[used..];
        let slot = &mut self.slots[usize::from(cid)];
        let len = slot.len;
        let total = u16::try_from(len + data.len()).map_err(|_| DropReason::Malformed)?;
        // The new header is built on a copy, so a refused frame leaves the slot as it was.
        let mut h = slot.header;
        let th = header::ip_header_len(&h);
        put16(&mut h, th + tcp::CHECKSUM, compressed.checksum);
        if compressed.push {
            h[th + tcp::FLAGS] |= flags::PSH;
        } else {
            h[th + tcp::FLAGS] &= !flags::PSH;
        }
        // The data length of the previous packet, in the 32-bit arithmetic of Appendix A.3.
        let previous_data = u32::from(get16(&h, IP_TOTAL_LEN)).wrapping_sub(len as u32);
        let add32 = |h: &mut [u8; MAX_HEADER], at: usize, value: u32| {
            let sum = get32(h, at).wrapping_add(value);
            put32(h, at, sum);
        };
        match compressed.changes {
            Changes::EchoedInteractive => {
                add32(&mut h, th + tcp::ACK, previous_data);
                add32(&mut h, th + tcp::SEQ, previous_data);
            }
            Changes::UnidirectionalData => add32(&mut h, th + tcp::SEQ, previous_data),
            Changes::Fields {
                urgent,
                window,
                ack,
                seq,
            } => {
                match urgent {
                    Some(pointer) => {
                        h[th + tcp::FLAGS] |= flags::URG;
                        put16(&mut h, th + tcp::URGENT, pointer);
                    }
                    None => h[th + tcp::FLAGS] &= !flags::URG,
                }
                if let Some(change) = window {
                    let sum = get16(&h, th + tcp::WINDOW).wrapping_add(change);
                    put16(&mut h, th + tcp::WINDOW, sum);
                }
                if let Some(change) = ack {
                    add32(&mut h, th + tcp::ACK, u32::from(change));
                }
                if let Some(change) = seq {
                    add32(&mut h, th + tcp::SEQ, u32::from(change));
                }
            }
        }
        let id = get16(&h, IP_ID).wrapping_add(compressed.ip_id.unwrap_or(1));
        put16(&mut h, IP_ID, id);
        put16(&mut h, IP_TOTAL_LEN, total);
        put16(&mut h, IP_CHECKSUM, 0);
        let sum = checksum::checksum(&h[..th]);
        put16(&mut h, IP_CHECKSUM, sum);
        slot.header = h;
        out.extend_from_slice(&h[..len]);
        out.extend_from_slice(data);
        Ok(())
    }
}

impl Decompressor for VjDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        let result = match kind {
            // Passed through; the state is not touched.
            FrameKind::Ip => return deliver_unchanged(frame, out),
            FrameKind::UncompressedTcp => self.uncompressed(frame, out),
            FrameKind::CompressedTcp => self.compressed(frame, out),
            // An unrecognized type is an error, like TYPE_ERROR (section 3.2.4).
            _ => Err(DropReason::UnknownKind),
        };
        if result.is_err() {
            self.toss = true;
            out.clear();
        }
        result
    }

    /// The link lost or discarded a frame (RFC 1144's `TYPE_ERROR`, which the framer signals on
    /// a CRC error: sections 3.2.4 and 4.1). Sets the `toss` flag: the following
    /// `COMPRESSED_TCP` frames without a connection number are refused until one with a
    /// connection number or an `UNCOMPRESSED_TCP` frame arrives. Without this, a frame that
    /// omits its connection number after a lost one could be applied to the wrong connection.
    fn link_error(&mut self) {
        self.toss = true;
    }
}
