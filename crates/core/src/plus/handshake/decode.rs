//! The decompressor's side of IR-S (specification section 4.1): a view of a frame ([`IrS`]),
//! which base it names, the reference it names by checksum, and the packet rebuilt against the
//! base's template and verified.

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

/// A view of an IR-S frame's bytes, from the octets that name its base.
#[derive(Debug, Clone)]
pub struct IrS<T> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IrS<T> {
    /// A view of `buffer` if it holds the octets that name the frame's base: its first, and
    /// for a mirror ([`MIRROR`]) the shape, the extension if [`EXTENDED`] and the octet after.
    pub fn new_checked(buffer: T) -> Option<IrS<T>> {
        let view = IrS { buffer };
        match *view.buffer.as_ref() {
            [] => None,
            [_, shape, ..] if shape & MIRROR != 0 => {
                let low_at = if shape & EXTENDED != 0 { 3 } else { 2 };
                (view.buffer.as_ref().len() > low_at).then_some(view)
            }
            _ => Some(view),
        }
    }

    /// The frame's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The shape octet, if the frame has one.
    fn shape(&self) -> u8 {
        self.as_bytes().get(1).copied().unwrap_or(0)
    }

    /// The extension octet (0 without [`EXTENDED`]).
    fn extension(&self) -> u8 {
        match self.shape() & EXTENDED != 0 {
            true => self.as_bytes()[2],
            false => 0,
        }
    }

    /// The base the frame names.
    pub fn base(&self) -> Base {
        let (bytes, shape) = (self.as_bytes(), self.shape());
        if shape & MIRROR == 0 {
            return Base::Context(bytes[0]);
        }
        let low = bytes[if shape & EXTENDED != 0 { 3 } else { 2 }];
        let named = u16::from_be_bytes([bytes[0], low]);
        if self.extension() & NAMED != 0 {
            Base::Reference(named)
        } else {
            Base::Mirror(named)
        }
    }

    /// The TCP checksum field of the reference a frame with numbers ([`NUMBERED`]) names;
    /// `None` for a frame without numbers.
    pub fn reference_checksum(&self) -> Option<u16> {
        let (shape, extension) = (self.shape(), self.extension());
        if shape & MIRROR == 0 || extension & NUMBERED == 0 {
            return None;
        }
        match self.base() {
            Base::Reference(checksum) => Some(checksum),
            _ => {
                let &[c0, c1, ..] = self.as_bytes().get(4..)? else {
                    return None;
                };
                Some(u16::from_be_bytes([c0, c1]))
            }
        }
    }

    /// Rebuilds the frame's packet into `out` against the base context's template
    /// `base_template`; `reference` finds the numbers a frame with N names by their TCP
    /// checksum field (the mirror's, [`crate::plus::numbers`]). The packet is verified
    /// ([`parse`]) before it is returned: a wrong base, a wrong template, a wrong reference or
    /// damage gives another seal, and the TCP checksum fails.
    pub fn rebuild(
        &self,
        base_template: &[u8],
        reference: impl Fn(u16) -> Option<Numbers>,
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        let frame = self.as_bytes();
        let &[_, shape, ref rest @ ..] = frame else {
            return Err(DropReason::Malformed);
        };
        let mut take = Take(rest);
        let (extension, numbers) = read_head(frame[0], shape, &mut take, reference)?;
        let (v4, header) = match (base_template.first(), base_template.len()) {
            (Some(0x45), 24) => (true, ipv4::MIN_HEADER_LEN),
            (Some(b), 44) if b >> 4 == 6 => (false, 40),
            _ => return Err(DropReason::Malformed),
        };
        out.extend_from_slice(&base_template[..header]);
        put_ip(v4, shape, extension, &mut take, out)?;
        let base_ports: &[u8; 4] = base_template[header..]
            .try_into()
            .map_err(|_| DropReason::Malformed)?;
        let (tcp_flags, data_offset) = put_tcp(
            v4,
            shape,
            extension,
            numbers.as_ref(),
            base_ports,
            &mut take,
            out,
        )?;
        let option_len = data_offset.checked_sub(20).ok_or(DropReason::Malformed)?;
        let ack = tcp_flags & flags::ACK != 0;
        let code = shape & CODE;
        let echo = numbers.filter(|_| ack).map(|r| r.ts);
        let mss = (extension & USUAL_MSS != 0).then(|| usual_mss(v4));
        put_options(code, option_len, ack, mss, echo, &mut take, out)?;
        out.extend_from_slice(take.0);
        finish(v4, header, out)
    }
}

/// Reads what follows the shape up to the IP bytes (the extension, the mirror hash's low octet
/// or the reference's checksum) of a frame whose first octet is `first`, and checks the shape
/// and extension; returns the extension (0 if none) and the numbers of the reference a frame
/// with N names ([`DropReason::NoContext`] if `reference` finds none).
fn read_head(
    first: u8,
    shape: u8,
    take: &mut Take<'_>,
    reference: impl Fn(u16) -> Option<Numbers>,
) -> Result<(u8, Option<Numbers>), DropReason> {
    let malformed = DropReason::Malformed;
    if shape & (SOURCE_KEPT | DEST_KEPT) == SOURCE_KEPT | DEST_KEPT {
        return Err(malformed);
    }
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
    if extension & NUMBERED == 0 {
        return Ok((extension, None));
    }
    if shape & MIRROR == 0 {
        return Err(malformed);
    }
    let checksum = if extension & NAMED != 0 {
        u16::from_be_bytes([first, low])
    } else {
        let c = take.bytes(2)?;
        u16::from_be_bytes([c[0], c[1]])
    };
    let numbers = reference(checksum).ok_or(DropReason::NoContext)?;
    Ok((extension, Some(numbers)))
}

/// Puts the six IP bytes (unless the base's, [`BASE_IP`]) and the IPv4 Identification into
/// `out`, the base's IP header.
fn put_ip(
    v4: bool,
    shape: u8,
    extension: u8,
    take: &mut Take<'_>,
    out: &mut [u8],
) -> Result<(), DropReason> {
    let ip_bytes = &IR_R_IP_BYTES[usize::from(!v4)];
    if shape & BASE_IP == 0 {
        for (&at, &byte) in ip_bytes.iter().zip(take.bytes(6)?) {
            out[at] = byte;
        }
    }
    if extension & ZERO_ID != 0 && !v4 {
        return Err(DropReason::Malformed);
    }
    if v4 {
        let id = if extension & ZERO_ID != 0 {
            &[0, 0][..]
        } else {
            take.bytes(2)?
        };
        out[ipv4::IDENT_OFFSET..ipv4::IDENT_OFFSET + 2].copy_from_slice(id);
    }
    Ok(())
}

/// Appends the TCP header without options, its checksum field 0: the ports (against
/// `base_ports`), the sequence number, the acknowledgment number (against the reference's
/// `numbers` with N), data offset and flags (from the extension's flags code), the window (the
/// usual one with [`USUAL_WINDOW`]) and the urgent pointer (with URG). Returns the TCP flags and
/// the header's length.
fn put_tcp(
    v4: bool,
    shape: u8,
    extension: u8,
    numbers: Option<&Numbers>,
    base_ports: &[u8; 4],
    take: &mut Take<'_>,
    out: &mut Vec<u8>,
) -> Result<(u8, usize), DropReason> {
    let malformed = DropReason::Malformed;
    let mode = if shape & SOURCE_KEPT != 0 {
        ports::Mode::SourceKept
    } else if shape & DEST_KEPT != 0 {
        ports::Mode::DestKept
    } else {
        ports::Mode::Whole
    };
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
    // The checksum field, sealed; unsealed once the packet is whole.
    out.extend_from_slice(take.bytes(2)?);
    if tcp_flags & flags::URG != 0 {
        out.extend_from_slice(take.bytes(2)?);
    } else {
        out.extend_from_slice(&[0; 2]);
    }
    Ok((tcp_flags, data_offset))
}

/// Appends `option_len` octets of TCP options of layout `code` (0: raw): the MSS `mss` unless
/// sent, the TS echo only with `ack`; with a reference (`echo`: its timestamps, with N and ACK)
/// the TS echo's four octets come from one difference against its TS value.
fn put_options(
    code: u8,
    option_len: usize,
    ack: bool,
    mss: Option<[u8; 2]>,
    echo: Option<Option<(u32, u32)>>,
    take: &mut Take<'_>,
    out: &mut Vec<u8>,
) -> Result<(), DropReason> {
    if code == 0 {
        out.extend_from_slice(take.bytes(option_len)?);
        return Ok(());
    }
    let layout = LAYOUTS
        .get(usize::from(code) - 1)
        .ok_or(DropReason::Malformed)?;
    if layout.len() != option_len {
        return Err(DropReason::Malformed);
    }
    // With N the echo's four octets come from one difference.
    let mut echo = match echo {
        Some(ts) if layout.contains(&ECHO) => {
            let (val, _) = ts.ok_or(DropReason::NoContext)?;
            Some(val.to_be_bytes())
        }
        _ => None,
    };
    let mut echo_at = 0;
    let mut usual = mss.into_iter().flatten();
    for &l in layout.iter() {
        let byte = match (l, echo.as_mut()) {
            (VALUE, _) => take.bytes(1)?[0],
            (MSS, _) if mss.is_some() => usual.next().unwrap_or(0),
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
    Ok(())
}

/// Fills in the rebuilt packet's length field and IPv4 header checksum, unseals its TCP
/// checksum field and verifies it ([`parse`]).
fn finish(v4: bool, header: usize, out: &mut [u8]) -> Result<(), DropReason> {
    let malformed = DropReason::Malformed;
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
    let sealed = u16::from_be_bytes([out[at], out[at + 1]]);
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
