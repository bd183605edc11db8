//! Rebuilding a packet from its context's template and the per-packet fields, and verifying
//! the result.

use alloc::vec::Vec;

use taroc_wire::checksum::Sum;
use taroc_wire::tcp::SackBlocks;
use taroc_wire::{ipv4, protocol};

use super::options::{canonical_options, MAX_OPTIONS};
use super::{Fields, FlowKey};

/// Rebuilds a packet from a template and the per-packet fields into `out`, and returns the sum
/// of its payload (for [`tcp_checksum_ok`]); `None` if the result would be longer than an IP
/// length field can say.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn rebuild(
    out: &mut Vec<u8>,
    template: &[u8],
    v4: bool,
    fields: &Fields,
    ts: bool,
    sack: &SackBlocks,
    tcp_flags: u8,
    r: u8,
    urgent: u16,
    checksum: u16,
    payload: &[u8],
) -> Option<Sum> {
    // The TCP header after the ports, built whole on the stack and appended at once.
    let mut header = [0u8; 16 + MAX_OPTIONS];
    let (fixed, options) = header.split_at_mut(16);
    let ts_pair = ts.then_some((fields.ts_val, fields.ts_ecr));
    let options_len = canonical_options(ts_pair, sack, options.try_into().ok()?)?;
    let tcp_offset = template.len() - 4;
    let total = tcp_offset + 20 + options_len + payload.len();
    let data_offset = ((20 + options_len) / 4) as u8;
    fixed[..4].copy_from_slice(&fields.seq.to_be_bytes());
    fixed[4..8].copy_from_slice(&fields.ack.to_be_bytes());
    fixed[8] = (data_offset << 4) | (r >> 4);
    fixed[9] = ((r >> 2) & 0x03) << 6 | (tcp_flags & 0x3F);
    fixed[10..12].copy_from_slice(&fields.win.to_be_bytes());
    fixed[12..14].copy_from_slice(&checksum.to_be_bytes());
    fixed[14..16].copy_from_slice(&urgent.to_be_bytes());
    out.clear();
    out.reserve(total);
    out.extend_from_slice(template);
    out.extend_from_slice(&header[..16 + options_len]);
    let payload_sum = copy_summed(payload, out);
    let ecn = r & 0x03;
    if v4 {
        let total = u16::try_from(total).ok()?;
        // The header checksum from the template's header (its Total Length, Identification,
        // ECN and checksum zero) and the values written into it, not read back from `out`:
        // a load of octets just stored stalls until the stores retire.
        let header_len = usize::from(template[0] & 0x0F) * 4;
        if template[0] >> 4 != 4 || !(ipv4::MIN_HEADER_LEN..=tcp_offset).contains(&header_len) {
            return None;
        }
        let header_sum = Sum::new()
            .add_bytes(&template[..header_len])
            .add_u16(ecn.into())
            .add_u16(total)
            .add_u16(fields.ip_id);
        out[1] |= ecn;
        out[2..4].copy_from_slice(&total.to_be_bytes());
        out[4..6].copy_from_slice(&fields.ip_id.to_be_bytes());
        out[ipv4::CHECKSUM_OFFSET..ipv4::CHECKSUM_OFFSET + 2]
            .copy_from_slice(&header_sum.checksum().to_be_bytes());
    } else {
        let payload_len = u16::try_from(total - taroc_wire::ipv6::HEADER_LEN).ok()?;
        out[1] |= ecn << 4;
        out[4..6].copy_from_slice(&payload_len.to_be_bytes());
    }
    Some(payload_sum)
}

/// Appends `payload` to `out` and returns its sum: in one pass over it where the CPU allows
/// ([`Sum::add_copied`]).
#[inline(always)]
fn copy_summed(payload: &[u8], out: &mut Vec<u8>) -> Sum {
    #[cfg(feature = "std")]
    return Sum::new().add_copied(payload, out);
    #[cfg(not(feature = "std"))]
    {
        out.extend_from_slice(payload);
        Sum::new().add_bytes(payload)
    }
}

/// Whether the TCP segment of a rebuilt packet verifies, the sum of its payload
/// `payload_sum` ([`rebuild`]'s): only its header is read back.
#[inline(always)]
pub fn tcp_checksum_ok(packet: &[u8], tcp_offset: usize, key: &FlowKey, payload_sum: Sum) -> bool {
    let segment = &packet[tcp_offset..];
    let header_len = usize::from(segment[12] >> 4) * 4;
    Sum::new()
        .add_pseudo_header(key.src, key.dst, protocol::TCP, segment.len() as u32)
        .add_bytes(&segment[..header_len])
        .add_sum(payload_sum)
        .verifies()
}
