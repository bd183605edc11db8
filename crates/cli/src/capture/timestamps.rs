//! pcapng time stamps: an Enhanced (or obsolete) Packet Block counts time in ticks of its
//! interface's resolution, the Interface Description Block's `if_tsresol` option (a power of 10,
//! or of 2 if the top bit is set; 10^-6 s when absent), from an origin shifted by `if_tsoffset`
//! seconds. The pcap-file crate hands the tick count over as if it were nanoseconds, so it is
//! converted here.

use std::time::Duration;

use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};

/// The resolution pcapng assumes when an interface declares none: microseconds.
const DEFAULT_TSRESOL: u8 = 6;

const NANOS_PER_SECOND: u128 = 1_000_000_000;

/// How an interface's tick counts become times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterfaceClock {
    /// The `if_tsresol` byte: bit 7 clear, 10^-n s per tick; set, 2^-n s (n: the low 7 bits).
    pub tsresol: u8,
    /// The `if_tsoffset` seconds added to every time stamp.
    pub offset_s: i64,
}

impl InterfaceClock {
    /// The clock an Interface Description Block declares.
    pub fn of(interface: &InterfaceDescriptionBlock) -> InterfaceClock {
        let mut clock = InterfaceClock {
            tsresol: DEFAULT_TSRESOL,
            offset_s: 0,
        };
        for option in &interface.options {
            match *option {
                InterfaceDescriptionOption::IfTsResol(r) => clock.tsresol = r,
                // The field is a signed 64-bit count of seconds.
                InterfaceDescriptionOption::IfTsOffset(s) => clock.offset_s = s as i64,
                _ => {}
            }
        }
        clock
    }

    /// The time of a packet stamped `ticks` (saturating at zero and at `Duration::MAX`).
    pub fn time(&self, ticks: u64) -> Duration {
        let exponent = u32::from(self.tsresol & 0x7F);
        let ticks = u128::from(ticks);
        let nanos = if self.tsresol & 0x80 == 0 {
            if exponent <= 9 {
                ticks * 10u128.pow(9 - exponent)
            } else {
                10u128
                    .checked_pow(exponent - 9)
                    .map_or(0, |divisor| ticks / divisor)
            }
        } else {
            // ticks < 2^64 and 10^9 < 2^30: the product fits.
            (ticks * NANOS_PER_SECOND) >> exponent
        };
        let nanos = nanos as i128 + i128::from(self.offset_s) * NANOS_PER_SECOND as i128;
        let nanos = nanos.max(0) as u128;
        let seconds = u64::try_from(nanos / NANOS_PER_SECOND).unwrap_or(u64::MAX);
        Duration::new(seconds, (nanos % NANOS_PER_SECOND) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::parse;

    fn clock(tsresol: u8) -> InterfaceClock {
        InterfaceClock {
            tsresol,
            offset_s: 0,
        }
    }

    #[test]
    fn powers_of_ten_and_of_two() {
        assert_eq!(clock(6).time(1_500_000), Duration::from_millis(1500));
        assert_eq!(clock(9).time(1_500_000), Duration::from_micros(1500));
        assert_eq!(clock(3).time(7), Duration::from_millis(7));
        assert_eq!(clock(0).time(2), Duration::from_secs(2));
        assert_eq!(clock(12).time(5_000), Duration::from_nanos(5));
        assert_eq!(clock(127).time(u64::MAX), Duration::ZERO);
        // 2^-10 s per tick: 1024 ticks are one second, 1 tick 976562.5 ns (rounded down).
        assert_eq!(clock(0x80 | 10).time(1024), Duration::from_secs(1));
        assert_eq!(clock(0x80 | 10).time(1), Duration::from_nanos(976_562));
        assert_eq!(clock(0x80 | 20).time(3 << 20), Duration::from_secs(3));
        assert_eq!(clock(0x80).time(4), Duration::from_secs(4));
        assert_eq!(clock(0xFF).time(u64::MAX), Duration::ZERO);
        assert_eq!(clock(0).time(u64::MAX), Duration::from_secs(u64::MAX));
        let shifted = InterfaceClock {
            tsresol: 6,
            offset_s: -1,
        };
        assert_eq!(shifted.time(1_250_000), Duration::from_millis(250));
        assert_eq!(shifted.time(0), Duration::ZERO);
    }

    /// A pcapng file of one raw-IP interface with the given IDB options and one Enhanced Packet
    /// Block per time stamp (in ticks), each holding the same small IPv4 packet.
    fn pcapng(options: &[(u16, &[u8])], stamps: &[u64]) -> Vec<u8> {
        use crate::capture::tests::{pcapng_block as block, pcapng_start};
        let mut file = pcapng_start();
        let mut idb = vec![101, 0, 0, 0, 0, 0, 0, 0]; // LINKTYPE_RAW, reserved, snaplen 0
        for (code, value) in options {
            idb.extend_from_slice(&code.to_le_bytes());
            idb.extend_from_slice(&(value.len() as u16).to_le_bytes());
            idb.extend_from_slice(value);
            idb.resize(idb.len().div_ceil(4) * 4, 0);
        }
        if !options.is_empty() {
            idb.extend_from_slice(&[0; 4]); // opt_endofopt
        }
        block(&mut file, 1, &idb);
        let mut packet = vec![0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0];
        packet.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        for &ticks in stamps {
            let mut epb = 0u32.to_le_bytes().to_vec();
            epb.extend_from_slice(&((ticks >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(ticks as u32).to_le_bytes());
            epb.extend_from_slice(&20u32.to_le_bytes());
            epb.extend_from_slice(&20u32.to_le_bytes());
            epb.extend_from_slice(&packet);
            block(&mut file, 6, &epb);
        }
        file
    }

    fn times(file: &[u8]) -> Vec<Duration> {
        parse("t.pcapng", file).unwrap().times
    }

    #[test]
    fn pcapng_times_follow_the_interface_resolution() {
        // Microseconds, as tshark and older dumpcap write them: declared, or by default.
        let stamps = [1_700_000_000_000_000, 1_700_000_000_250_000];
        let micro = [Duration::ZERO, Duration::from_millis(250)];
        assert_eq!(times(&pcapng(&[(9, &[6])], &stamps)), micro);
        assert_eq!(times(&pcapng(&[], &stamps)), micro);
        // Nanoseconds.
        let nanos = [1_700_000_000_000_000_000, 1_700_000_000_250_000_000];
        assert_eq!(times(&pcapng(&[(9, &[9])], &nanos)), micro[..].to_vec());
        // 2^-20 s.
        let binary = [5 << 20, (5 << 20) + (1 << 18)];
        assert_eq!(
            times(&pcapng(&[(9, &[0x80 | 20])], &binary)),
            micro[..].to_vec()
        );
        // An offset moves every time stamp alike; times stay relative to the first record.
        let offset = 1_000i64.to_le_bytes();
        assert_eq!(
            times(&pcapng(&[(9, &[6]), (14, &offset)], &stamps)),
            micro[..].to_vec()
        );
    }
}
