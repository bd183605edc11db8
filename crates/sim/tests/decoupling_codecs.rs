//! Every codec carries a control TCP's header packets (no payload, the sequence number advancing
//! by VMSS, the CONTROL bit in the TOS) and their ACKs byte-exact over a clean link.

use std::net::Ipv4Addr;

use proptest::prelude::*;
use taroc_core::variant::{Variant, EXTRA_NAMES, NAMES};
use taroc_core::{Compressor, Decompressor};
use taroc_sim::studies::decoupling::control::mark_control;
use taroc_sim::tcp::segment::{self, Endpoints, SegmentSpec};
use taroc_wire::tcp::flags;

fn ep() -> Endpoints {
    Endpoints {
        src: Ipv4Addr::new(10, 0, 0, 1).into(),
        dst: Ipv4Addr::new(10, 0, 1, 1).into(),
        src_port: 6001,
        dst_port: 6001,
    }
}

/// Header packets from `iss + 1` by `vmss`, and the ACKs (one per two) coming back.
fn streams(iss: u32, vmss: u32, n: usize, ts_step: u32) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut headers, mut acks) = (Vec::new(), Vec::new());
    for i in 0..n as u32 {
        let ts = i.wrapping_mul(ts_step);
        let spec = SegmentSpec {
            seq: iss.wrapping_add(1).wrapping_add(i.wrapping_mul(vmss)),
            ack: 1,
            flags: flags::ACK,
            window: u16::MAX,
            timestamps: Some((ts, 77)),
            sack: &[],
            payload_len: 0,
            payload_offset: 0,
        };
        let mut p = Vec::new();
        segment::build(&ep(), i as u16, &spec, &mut p);
        mark_control(&mut p);
        headers.push(p);
        if i % 2 == 1 {
            let spec = SegmentSpec {
                seq: 1,
                ack: iss.wrapping_add(1).wrapping_add((i + 1).wrapping_mul(vmss)),
                timestamps: Some((ts + 1, ts)),
                ..spec
            };
            let mut a = Vec::new();
            segment::build(&ep().reversed(), (i / 2) as u16, &spec, &mut a);
            acks.push(a);
        }
    }
    (headers, acks)
}

fn round_trip(variant: &Variant, packets: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let (mut c, mut d) = (variant.compressor(), variant.decompressor());
    let (mut frame, mut back) = (Vec::new(), Vec::new());
    for (i, p) in packets.iter().enumerate() {
        let kind = c.compress(p, &mut frame);
        let result = d.decompress(kind, &frame, &mut back);
        prop_assert!(result.is_ok(), "packet {i}: {result:?}");
        prop_assert_eq!(&back, p, "packet {}", i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn header_packets_and_their_acks_round_trip_byte_exact(
        iss in any::<u32>(),
        vmss in 1u32..=65_535,
        n in 2usize..80,
        ts_step in 0u32..20,
    ) {
        let (headers, acks) = streams(iss, vmss, n, ts_step);
        for name in NAMES.iter().chain(EXTRA_NAMES.iter()) {
            let variant = Variant::by_name(name).expect("a listed codec");
            round_trip(&variant, &headers)?;
            round_trip(&variant, &acks)?;
        }
    }
}
