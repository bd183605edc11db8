//! Puts every IP packet of a capture in an IP-in-IP tunnel and writes the result as a raw-IP
//! pcap, so that `taroc eval` can tell what a tunnel costs each scheme on that traffic.
//!
//! Each direction of the capture (forward: source address below destination address, as
//! `taroc eval` splits them) gets its own tunnel end: 2001:db8:7::1 and ::2 under an IPv6 outer
//! header, 192.0.2.1 and .2 under an IPv4 one, whose Identification is
//!
//! - `zero`: 0, with DF set;
//! - `count`: a counter per direction, one step per packet (a tunnel that carries one flow
//!   each way steps with that flow's own IP-ID);
//! - `linux`: as Linux's ipip and sit tunnels draw it (`iptunnel_xmit` calls
//!   `__ip_select_ident`): a per-destination counter that steps by one per packet and also
//!   jumps by a random amount below the clock ticks (1 ms, HZ 1000) since its last packet,
//!   drawn with a seeded generator from the capture's own times.
//!
//! ```sh
//! cargo run --release -p taroc-cli --example tunnel -- --outer ipv4 --id linux \
//!     ../shared/captures/linux/a_bulk_v4_default.pcap /tmp/a_ipip.pcap
//! ./target/release/taroc eval --scheme taroc-plus --scheme iphc /tmp/a_ipip.pcap
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::process::ExitCode;

use pcap_file::pcap::{PcapPacket, PcapWriter};
use pcap_file::DataLink;
use taroc_cli::capture;
use taroc_wire::ip::IpInfo;

const USAGE: &str = "usage: tunnel [--outer ipv6|ipv4] [--id zero|count|linux] [--seed N] IN OUT
  --outer  the outer header (default ipv4)
  --id     the IPv4 outer Identification: zero (DF set), count (per direction), or linux
           (a counter that also jumps at clock ticks; default)
  --seed   the generator of linux's jumps (default 1)";

/// How the IPv4 outer Identification goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ids {
    Zero,
    Count,
    Linux,
}

/// What the command line asked for.
struct Options {
    ipv6: bool,
    ids: Ids,
    seed: u64,
    input: String,
    output: String,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        ipv6: false,
        ids: Ids::Linux,
        seed: 1,
        input: String::new(),
        output: String::new(),
    };
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--outer" => {
                options.ipv6 = match value()?.as_str() {
                    "ipv6" => true,
                    "ipv4" => false,
                    other => return Err(format!("--outer: ipv6 or ipv4, not {other}")),
                }
            }
            "--id" => {
                options.ids = match value()?.as_str() {
                    "zero" => Ids::Zero,
                    "count" => Ids::Count,
                    "linux" => Ids::Linux,
                    other => return Err(format!("--id: zero, count or linux, not {other}")),
                }
            }
            "--seed" => {
                let v = value()?;
                options.seed = v
                    .parse()
                    .map_err(|_| format!("--seed: a number, not {v}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            file => files.push(file.to_string()),
        }
    }
    let [input, output] = <[String; 2]>::try_from(files)
        .map_err(|files| format!("two files, IN and OUT (got {})", files.len()))?;
    (options.input, options.output) = (input, output);
    Ok(options)
}

/// A small seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    /// A number below `n` (0 if `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        if n == 0 {
            0
        } else {
            x % n
        }
    }
}

/// One direction's tunnel end: its IPv4 Identification counter and the clock tick of its last
/// packet.
#[derive(Debug, Clone, Copy)]
struct End {
    id: u16,
    tick: Option<u64>,
}

/// The IPv4 outer header of a packet of `inner_len` octets and next protocol `next`, from
/// `src` to `dst`.
fn ipv4_header(next: u8, inner_len: usize, id: u16, src: u8, dst: u8) -> Option<Vec<u8>> {
    let total = u16::try_from(20 + inner_len).ok()?;
    let df = if id == 0 { 0x40 } else { 0 };
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&id.to_be_bytes());
    h.extend_from_slice(&[df, 0, 64, next, 0, 0, 192, 0, 2, src, 192, 0, 2, dst]);
    let sum = taroc_wire::checksum::checksum(&h);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    Some(h)
}

/// The IPv6 outer header of a packet of `inner_len` octets and next header `next`.
fn ipv6_header(next: u8, inner_len: usize, src: u8, dst: u8) -> Option<Vec<u8>> {
    let len = u16::try_from(inner_len).ok()?;
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&[next, 64]);
    for end in [src, dst] {
        h.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 7]);
        h.extend_from_slice(&[0; 9]);
        h.push(end);
    }
    Some(h)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("tunnel: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let capture = match taroc_cli::capture::read_file(Path::new(&options.input)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tunnel: {e}");
            return ExitCode::FAILURE;
        }
    };
    let file = match File::create(&options.output) {
        Ok(f) => BufWriter::new(f),
        Err(e) => {
            eprintln!("tunnel: cannot create {}: {e}", options.output);
            return ExitCode::FAILURE;
        }
    };
    let mut pcap = match PcapWriter::with_header(file, capture::pcap_header(DataLink::RAW)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("tunnel: cannot write {}: {e}", options.output);
            return ExitCode::FAILURE;
        }
    };
    let mut rng = Rng(options.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut ends = [
        End {
            id: 7000,
            tick: None,
        },
        End {
            id: 20_000,
            tick: None,
        },
    ];
    let mut skipped = 0u64;
    for (packet, &time) in capture.packets.iter().zip(&capture.times) {
        let reverse = IpInfo::parse(packet).is_ok_and(|ip| ip.src > ip.dst);
        let (src, dst) = if reverse { (2, 1) } else { (1, 2) };
        let next = if packet[0] >> 4 == 6 { 41 } else { 4 };
        let outer = if options.ipv6 {
            ipv6_header(next, packet.len(), src, dst)
        } else {
            let end = &mut ends[usize::from(reverse)];
            let tick = time.as_millis() as u64;
            let jump = match (options.ids, end.tick) {
                (Ids::Linux, Some(last)) => rng.below(tick.saturating_sub(last)) as u16,
                _ => 0,
            };
            end.tick = Some(tick);
            end.id = end.id.wrapping_add(1).wrapping_add(jump);
            let id = if options.ids == Ids::Zero { 0 } else { end.id };
            ipv4_header(next, packet.len(), id, src, dst)
        };
        let Some(mut record) = outer else {
            skipped += 1;
            continue;
        };
        record.extend_from_slice(packet);
        let written = pcap.write_packet(&PcapPacket::new(time, record.len() as u32, &record));
        if let Err(e) = written {
            eprintln!("tunnel: cannot write {}: {e}", options.output);
            return ExitCode::FAILURE;
        }
    }
    let n = capture.packets.len() as u64 - skipped;
    eprintln!(
        "tunnel: {n} packets written to {}{}",
        options.output,
        if skipped > 0 {
            format!(" ({skipped} too long for an outer header, left out)")
        } else {
            String::new()
        }
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_parse_and_bad_ones_say_why() {
        let o = parse(&args("--outer ipv6 --id count --seed 9 in.pcap out.pcap")).unwrap();
        assert!(o.ipv6 && o.ids == Ids::Count && o.seed == 9);
        assert_eq!(
            (o.input.as_str(), o.output.as_str()),
            ("in.pcap", "out.pcap")
        );
        let o = parse(&args("a b")).unwrap();
        assert!(!o.ipv6 && o.ids == Ids::Linux);
        for (bad, why) in [
            ("--outer ipv5 a b", "ipv6 or ipv4"),
            ("--id random a b", "zero, count or linux"),
            ("--seed x a b", "a number"),
            ("--frobnicate a b", "unknown option"),
            ("a", "two files"),
            ("a b --id", "needs a value"),
        ] {
            let e = parse(&args(bad)).err().expect(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn outer_headers_are_valid_and_say_what_follows() {
        let v4 = ipv4_header(4, 60, 0x1234, 1, 2).unwrap();
        assert_eq!(
            taroc_wire::checksum::checksum(&v4),
            0,
            "a valid header checksum"
        );
        assert_eq!((v4[2], v4[3], v4[9], v4[6]), (0, 80, 4, 0));
        assert_eq!(
            ipv4_header(41, 60, 0, 2, 1).unwrap()[6],
            0x40,
            "DF with a zero ID"
        );
        let v6 = ipv6_header(41, 60, 1, 2).unwrap();
        assert_eq!((v6.len(), v6[5], v6[6], v6[39]), (40, 60, 41, 2));
        assert!(ipv4_header(4, 65_516, 1, 1, 2).is_none());
    }

    #[test]
    fn linux_jumps_stay_below_the_ticks_since_the_last_packet() {
        let mut rng = Rng(7);
        assert!((0..1000).all(|_| rng.below(3) < 3));
        assert_eq!(rng.below(0), 0);
    }
}
