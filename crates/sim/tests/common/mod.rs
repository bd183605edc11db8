//! The hand-worked-trace harness the TCP sender tests share: one sender whose ACKs are built by
//! hand as real packets and whose output packets are parsed back. Segment size [`MSS`] bytes;
//! offsets are stream offsets (wire sequence numbers are ISS + 1 + offset).

use std::net::Ipv4Addr;

use taroc_sim::event::MILLISECOND;
use taroc_sim::tcp::segment::{self, Endpoints, SegmentSpec};
use taroc_sim::tcp::sender::{SenderConfig, TcpSender};
use taroc_sim::tcp::timeout::ResponseKind;
use taroc_sim::tcp::variant::TcpVariant;
use taroc_sim::tcp::Outbox;
use taroc_wire::tcp::flags;

/// The segment size of every trace.
pub const MSS: u64 = 100;

/// The connection's endpoints, sender side.
pub fn ep() -> Endpoints {
    Endpoints {
        src: Ipv4Addr::new(10, 0, 0, 1).into(),
        dst: Ipv4Addr::new(10, 0, 0, 3).into(),
        src_port: 20,
        dst_port: 5001,
    }
}

/// A sender under test, its outbox and the trace's clock.
pub struct Harness {
    /// The sender.
    pub sender: TcpSender,
    /// What it sent and has not been read by [`Harness::sent`].
    pub out: Outbox,
    /// The trace's clock, ns.
    pub now: u64,
    /// TSecr of the ACKs to come (None: ACKs without timestamps).
    pub ecr: Option<u32>,
}

impl Harness {
    /// A started sender of `variant` with the timeout `response`, an initial window of
    /// `window` segments, at most `max_window` segments, with or without timestamps.
    pub fn new(
        variant: TcpVariant,
        response: ResponseKind,
        window: u32,
        max_window: Option<u32>,
        timestamps: bool,
    ) -> Harness {
        let mut config = SenderConfig {
            mss: MSS as u32,
            initial_window_segments: window,
            timestamps,
            ..SenderConfig::default()
        };
        if let Some(max) = max_window {
            config.max_window_segments = max;
        }
        Harness::with_config(config, variant, response)
    }

    /// A started sender of `variant` with the timeout `response` and `config`.
    pub fn with_config(
        config: SenderConfig,
        variant: TcpVariant,
        response: ResponseKind,
    ) -> Harness {
        let ecr = config.timestamps.then_some(0);
        let sender =
            TcpSender::new(config, variant.recovery(), ep(), 0).with_response(response.response());
        let mut h = Harness {
            sender,
            out: Outbox::default(),
            now: 0,
            ecr,
        };
        h.sender.start(0, &mut h.out);
        h
    }

    /// Offsets of the segments sent since the last call (each at most one segment long).
    pub fn sent(&mut self) -> Vec<u64> {
        self.out
            .packets
            .drain(..)
            .map(|p| {
                let s = segment::parse(&p).expect("sender packets verify");
                assert!((1..=MSS).contains(&(s.payload_len as u64)));
                u64::from(s.seq.wrapping_sub(1))
            })
            .collect()
    }

    /// Fires the retransmission timer; returns what was sent.
    #[allow(dead_code)] // not every test file fires timers through the harness
    pub fn timeout(&mut self) -> Vec<u64> {
        self.now = self.sender.deadline().expect("timer runs");
        self.sender.on_timer(self.now, &mut self.out);
        self.sent()
    }

    /// Delivers an ACK of offset `ack` with SACK blocks (offsets), 10 ms after the last event;
    /// returns what was sent.
    pub fn ack(&mut self, ack: u64, sack: &[(u64, u64)]) -> Vec<u64> {
        self.now += 10 * MILLISECOND;
        let blocks: Vec<(u32, u32)> = sack
            .iter()
            .map(|&(l, r)| (l as u32 + 1, r as u32 + 1))
            .collect();
        let spec = SegmentSpec {
            seq: 1,
            ack: ack as u32 + 1,
            flags: flags::ACK,
            window: 65535,
            timestamps: self.ecr.map(|ecr| (0, ecr)),
            sack: &blocks,
            payload_len: 0,
            payload_offset: 0,
        };
        let mut packet = Vec::new();
        segment::build(&ep().reversed(), 0, &spec, &mut packet);
        self.sender.on_packet(self.now, &packet, &mut self.out);
        self.sent()
    }

    /// The congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.sender.state.cwnd
    }

    /// The slow-start threshold, bytes.
    pub fn ssthresh(&self) -> u64 {
        self.sender.state.ssthresh
    }
}
