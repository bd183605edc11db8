//! What the gateway says about packets it refuses or rebuilt wrong: rate-limited log lines
//! that name the header field at fault, and the transport-checksum judgement behind them.

use std::io::Write as _;

use taroc_wire::ip::IpInfo;
use taroc_wire::protocol;

/// Logs a refused packet or frame at most once per second per kind of refusal, so a flood of
/// oversize packets cannot flood the log.
#[derive(Debug, Default)]
pub struct DropLog {
    last: [Option<u64>; 2],
}

impl DropLog {
    /// Logs that direction `label` refused a packet (`frame` false) or frame (`frame` true) of
    /// `len` bytes longer than `limit`; `count` is how many so far.
    pub fn oversize(
        &mut self,
        now: u64,
        label: &str,
        frame: bool,
        len: usize,
        limit: usize,
        count: u64,
    ) {
        let slot = &mut self.last[usize::from(frame)];
        if slot.is_some_and(|last| now < last + 1_000_000_000) {
            return;
        }
        *slot = Some(now);
        let (what, mtu) = if frame {
            ("frame", "link MTU")
        } else {
            ("packet", "TUN MTU")
        };
        eprintln!(
            "taroc gateway: {label}: dropped a {len}-byte {what} longer than the {mtu} {limit} \
             ({count} so far; logged at most once a second)"
        );
    }
}

/// The header field at byte `offset` of an IP packet (TCP or UDP inside), for logs.
pub fn field_name(packet: &[u8], offset: usize) -> &'static str {
    let Ok(ip) = IpInfo::parse(packet) else {
        return "an unparsable header";
    };
    if offset < ip.transport_offset {
        return match (ip.version, offset) {
            (4, 0) => "IPv4 version/IHL",
            (4, 1) => "IPv4 TOS",
            (4, 2 | 3) => "IPv4 total length",
            (4, 4 | 5) => "IPv4 identification",
            (4, 6 | 7) => "IPv4 flags/fragment offset",
            (4, 8) => "IPv4 TTL",
            (4, 9) => "IPv4 protocol",
            (4, 10 | 11) => "IPv4 header checksum",
            (4, 12..=19) => "IPv4 addresses",
            (4, _) => "IPv4 options",
            (_, 0..=3) => "IPv6 version/traffic class/flow label",
            (_, 4 | 5) => "IPv6 payload length",
            (_, 6) => "IPv6 next header",
            (_, 7) => "IPv6 hop limit",
            (_, 8..=39) => "IPv6 addresses",
            _ => "IPv6 extension headers",
        };
    }
    let at = offset - ip.transport_offset;
    match ip.protocol {
        protocol::TCP => {
            let data_offset = packet
                .get(ip.transport_offset + 12)
                .map_or(20, |b| usize::from(b >> 4) * 4);
            match at {
                0..=3 => "TCP ports",
                4..=7 => "TCP sequence number",
                8..=11 => "TCP acknowledgment number",
                12 | 13 => "TCP data offset/flags",
                14 | 15 => "TCP window",
                16 | 17 => "TCP checksum",
                18 | 19 => "TCP urgent pointer",
                _ if at < data_offset => "TCP options",
                _ => "payload",
            }
        }
        protocol::UDP if at < 8 => "UDP header",
        _ => "payload",
    }
}

/// Logs an incorrect delivery (at most once a second per direction, through `last`): where
/// the packet differs from the original.
pub(crate) fn log_incorrect(
    last: &mut Option<u64>,
    now: u64,
    label: &str,
    original: &[u8],
    rebuilt: &[u8],
    count: u64,
) {
    if last.is_some_and(|last| now < last + 1_000_000_000) {
        return;
    }
    *last = Some(now);
    let differing = original.iter().zip(rebuilt).filter(|(a, b)| a != b).count()
        + original.len().abs_diff(rebuilt.len());
    let first = original
        .iter()
        .zip(rebuilt)
        .position(|(a, b)| a != b)
        .unwrap_or(original.len().min(rebuilt.len()));
    // Straight to the unbuffered stderr handle rather than `eprintln!`, which a test harness
    // captures into a growing buffer: the data path must not allocate, logging included.
    let _ = writeln!(
        std::io::stderr(),
        "taroc gateway: {label}: incorrect delivery ({count} so far; logged at most once a \
         second): {} bytes delivered for {}, {differing} differ, the first at byte {first} ({})",
        rebuilt.len(),
        original.len(),
        field_name(original, first)
    );
}
