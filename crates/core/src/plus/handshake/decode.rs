//! The decompressor's side of IR-S (specification section 4.1): which base a frame names, the
//! reference it names by checksum, and the packet rebuilt against the base's template and
//! verified.

use alloc::vec::Vec;

use taroc_wire::ipv4;
use taroc_wire::tcp::flags;

use super::{
    layout_data_offset, parse, read, seal_of, usual_mss, usual_window, Base, BASE_IP, CODE,
    DEST_KEPT, ECHO, EXTENDED, EXTENSION_RESERVED, FLAGS, FLAGS_CODE, LAYOUTS, MIRROR, MSS, NAMED,
    NUMBERED, SOURCE_KEPT, USUAL_MSS, USUAL_WINDOW, VALUE, ZERO_ID,
};
use crate::codec::DropReason;
use crate::plus::format::IR_R_IP_BYTES;
use crate::plus::numbers::{get_signed, Numbers};
use crate::plus::ports;
use crate::tcp::packet::length_field_offset;

/// The base an IR-S frame names, if it is well-formed that far.
pub fn base(frame: &[u8]) -> Option<Base> {
    Some(match *frame {
        [high, shape, extension, low, ..] if shape & MIRROR != 0 && shape & EXTENDED != 0 => {
            let named = u16::from_be_bytes([high, low]);
            if extension & NAMED != 0 {
                Base::Reference(named)
            } else {
                Base::Mirror(named)
            }
        }
        [high, shape, low, ..] if shape & MIRROR != 0 && shape & EXTENDED == 0 => {
            Base::Mirror(u16::from_be_bytes([high, low]))
        }
        [_, shape, ..] if shape & MIRROR != 0 => return None,
        [cid, ..] => Base::Context(cid),
        [] => return None,
    })
}

/// The TCP checksum field of the reference an IR-S `frame` with numbers ([`NUMBERED`])
/// names; `None` for a frame without numbers.
pub fn reference_checksum(frame: &[u8]) -> Option<u16> {
    let &[first, shape, extension, low, ref rest @ ..] = frame else {
        return None;
    };
    if shape & MIRROR == 0 || shape & EXTENDED == 0 || extension & NUMBERED == 0 {
        return None;
    }
    if extension & NAMED != 0 {
        return Some(u16::from_be_bytes([first, low]));
    }
    let &[c0, c1, ..] = rest else {
        return None;
    };
    Some(u16::from_be_bytes([c0, c1]))
}

/// Rebuilds the packet of the IR-S `frame` into `out` against the base context's template
/// `base_template`; `reference` finds the numbers a frame with N names by their TCP checksum
/// field (the mirror's, [`crate::plus::numbers`]). The packet is verified ([`parse`]) before it is
/// returned: a wrong base, a wrong template, a wrong reference or damage gives another seal,
/// and the TCP checksum fails.
pub fn rebuild(
    frame: &[u8],
    base_template: &[u8],
    reference: impl Fn(u16) -> Option<Numbers>,
    out: &mut Vec<u8>,
) -> Result<(), DropReason> {
    out.clear();
    let malformed = DropReason::Malformed;
    let [_, shape, rest @ ..] = frame else {
        return Err(malformed);
    };
    if shape & (SOURCE_KEPT | DEST_KEPT) == SOURCE_KEPT | DEST_KEPT {
        return Err(malformed);
    }
    let mut take = Take(rest);
    let extension = if shape & EXTENDED != 0 {
        take.bytes(1)?[0]
    } else {
        0
    };
    // The hash's low octet, or with NAMED the reference's checksum's.
    let low = if shape & MIRROR != 0 {
        take.bytes(1)?[0]
    } else {
        0
    };
    if shape & EXTENDED != 0 && (extension == 0 || extension & EXTENSION_RESERVED != 0) {
        return Err(malformed);
    }
    if extension & USUAL_MSS != 0 && shape & CODE == 0 {
        return Err(malformed);
    }
    if extension & NAMED != 0 && extension & NUMBERED == 0 {
        return Err(malformed);
    }
    let numbers = if extension & NUMBERED != 0 {
        if shape & MIRROR == 0 {
            return Err(malformed);
        }
        let checksum = if extension & NAMED != 0 {
            u16::from_be_bytes([frame[0], low])
        } else {
            let c = take.bytes(2)?;
            u16::from_be_bytes([c[0], c[1]])
        };
        Some(reference(checksum).ok_or(DropReason::NoContext)?)
    } else {
        None
    };
    let (v4, header) = match (base_template.first(), base_template.len()) {
        (Some(0x45), 24) => (true, ipv4::MIN_HEADER_LEN),
        (Some(b), 44) if b >> 4 == 6 => (false, 40),
        _ => return Err(malformed),
    };
    out.extend_from_slice(&base_template[..header]);
    let ip_bytes = &IR_R_IP_BYTES[usize::from(!v4)];
    if shape & BASE_IP == 0 {
        for (&at, &byte) in ip_bytes.iter().zip(take.bytes(6)?) {
            out[at] = byte;
        }
    }
    if extension & ZERO_ID != 0 && !v4 {
        return Err(malformed);
    }
    if v4 {
        let id = if extension & ZERO_ID != 0 {
            &[0, 0][..]
        } else {
            take.bytes(2)?
        };
        out[ipv4::IDENT_OFFSET..ipv4::IDENT_OFFSET + 2].copy_from_slice(id);
    }
    let mode = if shape & SOURCE_KEPT != 0 {
        ports::Mode::SourceKept
    } else if shape & DEST_KEPT != 0 {
        ports::Mode::DestKept
    } else {
        ports::Mode::Whole
    };
    let base_ports: &[u8; 4] = base_template[header..].try_into().map_err(|_| malformed)?;
    let (own_ports, used) = ports::get(take.0, mode, base_ports).ok_or(malformed)?;
    take.bytes(used)?;
    out.extend_from_slice(&own_ports);
    out.extend_from_slice(take.bytes(4)?);
    let code = shape & CODE;
    let octets: [u8; 2] = match (extension & FLAGS_CODE) >> 1 {
        0 => take.bytes(2)?.try_into().map_err(|_| malformed)?,
        f => [
            layout_data_offset(code).ok_or(malformed)?,
            FLAGS[usize::from(f) - 1],
        ],
    };
    let tcp_flags = octets[1];
    let ack = tcp_flags & flags::ACK != 0;
    match numbers {
        Some(_) if !ack => return Err(malformed),
        Some(r) => {
            let d = take.signed()?;
            out.extend_from_slice(&r.next_seq.wrapping_add(d).to_be_bytes());
        }
        None if ack => {
            let a = take.bytes(4)?;
            out.extend_from_slice(a);
        }
        None => out.extend_from_slice(&[0; 4]),
    }
    let data_offset = usize::from(octets[0] >> 4) * 4;
    out.extend_from_slice(&octets);
    if extension & USUAL_WINDOW != 0 {
        out.extend_from_slice(&usual_window(v4, tcp_flags, code));
    } else {
        out.extend_from_slice(take.bytes(2)?);
    }
    let sealed = take.bytes(2)?;
    let sealed = u16::from_be_bytes([sealed[0], sealed[1]]);
    out.extend_from_slice(&[0; 2]);
    if tcp_flags & flags::URG != 0 {
        out.extend_from_slice(take.bytes(2)?);
    } else {
        out.extend_from_slice(&[0; 2]);
    }
    let option_len = data_offset.checked_sub(20).ok_or(malformed)?;
    match code {
        0 => out.extend_from_slice(take.bytes(option_len)?),
        code => {
            let layout = LAYOUTS.get(usize::from(code) - 1).ok_or(malformed)?;
            if layout.len() != option_len {
                return Err(malformed);
            }
            // With N the echo's four octets come from one difference.
            let mut echo = match numbers {
                Some(r) if ack && layout.contains(&ECHO) => {
                    let (val, _) = r.ts.ok_or(DropReason::NoContext)?;
                    Some(val.to_be_bytes())
                }
                _ => None,
            };
            let mut echo_at = 0;
            let mut mss = usual_mss(v4).into_iter();
            for &l in layout.iter() {
                let byte = match (l, echo.as_mut()) {
                    (VALUE, _) => take.bytes(1)?[0],
                    (MSS, _) if extension & USUAL_MSS != 0 => mss.next().unwrap_or(0),
                    (MSS, _) => take.bytes(1)?[0],
                    (ECHO, Some(e)) => {
                        if echo_at == 0 {
                            let d = take.signed()?;
                            let val = u32::from_be_bytes(*e).wrapping_add(d);
                            *e = val.to_be_bytes();
                        }
                        echo_at += 1;
                        e[echo_at - 1]
                    }
                    (ECHO, None) if ack => take.bytes(1)?[0],
                    (ECHO, None) => 0,
                    (fixed, _) => fixed as u8,
                };
                out.push(byte);
            }
        }
    }
    out.extend_from_slice(take.0);
    let len = if v4 { out.len() } else { out.len() - header };
    let len = u16::try_from(len).map_err(|_| malformed)?;
    let at = length_field_offset(v4);
    out[at..at + 2].copy_from_slice(&len.to_be_bytes());
    if v4 {
        let mut h = ipv4::Ipv4Packet::new_checked(&mut out[..]).map_err(|_| malformed)?;
        h.fill_header_checksum();
    }
    let seal = read(out, false).map(|p| seal_of(&p)).ok_or(malformed)?;
    let at = header + taroc_wire::tcp::CHECKSUM_OFFSET;
    out[at..at + 2].copy_from_slice(&(sealed ^ seal).to_be_bytes());
    if parse(out).is_none() {
        return Err(DropReason::ChecksumMismatch);
    }
    Ok(())
}

/// The unread rest of a frame.
struct Take<'a>(&'a [u8]);

impl<'a> Take<'a> {
    /// The next `n` octets.
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], DropReason> {
        let (head, rest) = self.0.split_at_checked(n).ok_or(DropReason::Malformed)?;
        self.0 = rest;
        Ok(head)
    }

    /// The next signed variable-length number ([`get_signed`]).
    fn signed(&mut self) -> Result<u32, DropReason> {
        let (d, used) = get_signed(self.0).ok_or(DropReason::Malformed)?;
        self.0 = &self.0[used..];
        Ok(d)
    }
}
