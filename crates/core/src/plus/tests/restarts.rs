//! After the far end's decompressor restarted: a SYN between hosts that have a context goes
//! IR-S against it, which the restarted decompressor lacks; its retransmission goes without a
//! base and sets the connection up, with or without context requests. And a flow carried on
//! across the restart: the far end's first ACK, coded against the full header that set its
//! fresh context up, resolves here.

use alloc::vec::Vec;

use super::mirrors::{send, End};
use super::{config, linux_syn, segment};
use crate::codec::{Decompressor, DropReason};
use crate::plus::format;
use crate::plus::PlusConfig;
use crate::plus::PlusDecompressor;
use crate::tcp::repair::Repair;

/// The test configuration, with context requests or without.
fn with_requests(requests: bool) -> PlusConfig {
    PlusConfig {
        repair: Repair {
            context_requests: requests,
            ..config().repair
        },
        ..config()
    }
}

/// Two fresh ends whose codecs run `config`.
fn ends(config: &PlusConfig) -> (End, End) {
    let end = || End {
        c: crate::plus::PlusCompressor::new(config.clone()),
        d: PlusDecompressor::new(config.clone()),
    };
    (end(), end())
}

#[test]
fn a_retransmitted_syn_reaches_a_restarted_decompressor_with_or_without_requests() {
    for requests in [true, false] {
        let config = with_requests(requests);
        let (mut a, mut b) = ends(&config);
        // A flow between the two hosts, carried.
        for i in 0..6 {
            let (_, _, result) = send(
                &mut a,
                &mut b,
                &segment(1000 + 100 * i, 77, i as u16, 500 + i, 100),
            );
            assert_eq!(result, Ok(()));
        }
        // B restarts; A opens a new connection between the same hosts.
        b.d = PlusDecompressor::new(config.clone());
        let syn = linux_syn(
            9,
            [198, 18, 0, 1],
            [198, 18, 0, 2],
            [0x13, 0x8a, 0, 80],
            5000,
            900,
        );
        let (kind, _, result) = send(&mut a, &mut b, &syn);
        assert_eq!((kind, result), (format::IR_S, Err(DropReason::NoContext)));
        // With requests, the refusal asks for the base context.
        let mut request = Vec::new();
        assert_eq!(
            b.d.take_feedback(&mut request),
            requests,
            "requests {requests}"
        );
        // The SYN's retransmission goes without a base and is delivered.
        let (kind, _, result) = send(&mut a, &mut b, &syn);
        assert_eq!(
            (kind, result),
            (format::COMPACT_SYN, Ok(())),
            "requests {requests}"
        );
        // A new SYN of another connection goes IR-S again.
        let syn = linux_syn(
            10,
            [198, 18, 0, 1],
            [198, 18, 0, 2],
            [0x13, 0x8b, 0, 80],
            9000,
            950,
        );
        let (kind, _, _) = send(&mut a, &mut b, &syn);
        assert_eq!(kind, format::IR_S);
    }
}

#[test]
fn a_rst_sent_again_keeps_its_base() {
    let (mut a, mut b) = (End::new(), End::new());
    for i in 0..6 {
        let (_, _, result) = send(
            &mut a,
            &mut b,
            &segment(1000 + 100 * i, 77, i as u16, 500 + i, 100),
        );
        assert_eq!(result, Ok(()));
    }
    // A host answers each stray segment with a RST of the same sequence number: not a
    // retransmission, so each goes against the flow's context.
    let mut rst = linux_syn(
        11,
        [198, 18, 0, 1],
        [198, 18, 0, 2],
        [0x13, 0x8c, 0, 80],
        7000,
        990,
    );
    rst[33] = 0x04;
    super::fix_tcp_checksum(&mut rst);
    for _ in 0..3 {
        let (kind, _, result) = send(&mut a, &mut b, &rst);
        assert_eq!((kind, result), (format::IR_S, Ok(())));
    }
}

#[test]
fn after_the_far_end_restarts_mid_flow_its_first_ack_resolves_against_the_full_header() {
    // A long flow from A (past the packets a compressor notes at a context's start), then B
    // restarts (both codecs): A's repair sends the flow a full header, and B's first ACK, a
    // mirrored IR coded against that packet's numbers, must resolve at A with or without
    // requests.
    for requests in [true, false] {
        let config = with_requests(requests);
        let (mut a, mut b) = ends(&config);
        let data = |i: u32| segment(1000 + 100 * i, 77, i as u16, 500 + i, 100);
        for i in 0..100 {
            assert_eq!(send(&mut a, &mut b, &data(i)).2, Ok(()));
        }
        b = ends(&config).1;
        // The last segment sent again until a repair sends it whole.
        let delivered = (0..6).any(|_| send(&mut a, &mut b, &data(99)).2.is_ok());
        assert!(delivered, "requests {requests}");
        let ack = super::pure_ack(1000 + 100 * 100, 7, 700, 501, &[]);
        let (kind, _, result) = send(&mut b, &mut a, &ack);
        assert_eq!(result, Ok(()), "requests {requests}, kind {kind:#04x}");
    }
}
