//! The traffic model: connections with a data sender (client) and a pure-ACK receiver (server).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IpIdMode {
    /// +1 per packet of the direction (Linux per-socket counter).
    Sequential,
    /// A shared counter: small random steps (other flows take values in between).
    Global,
    /// Always zero (some stacks with DF set).
    Zero,
    /// Random per packet (BSD, some middleboxes).
    Random,
}

pub(crate) fn ip_id_mode() -> impl Strategy<Value = IpIdMode> {
    prop_oneof![
        5 => Just(IpIdMode::Sequential),
        2 => Just(IpIdMode::Global),
        2 => Just(IpIdMode::Zero),
        1 => Just(IpIdMode::Random),
    ]
}

/// The IP-in-IP tunnel a connection's packets travel in, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tunnel {
    None,
    /// An IPv6 outer header (fixed fields).
    V6,
    /// An IPv4 outer header, DF set, its Identification counting per packet and direction.
    V4,
}

pub(crate) fn tunnel() -> impl Strategy<Value = Tunnel> {
    prop_oneof![8 => Just(Tunnel::None), 1 => Just(Tunnel::V6), 1 => Just(Tunnel::V4)]
}

/// What stays fixed for one connection.
#[derive(Debug, Clone)]
pub(crate) struct FlowSpec {
    pub(crate) v6: bool,
    pub(crate) ts: bool,
    pub(crate) sack: bool,
    pub(crate) handshake: bool,
    pub(crate) ecn_capable: bool,
    pub(crate) ip_id: [IpIdMode; 2],
    pub(crate) mss: u16,
    pub(crate) dscp: u8,
    /// Flows with the same address group share their IP addresses and differ by port.
    pub(crate) address_group: u8,
    pub(crate) tunnel: Tunnel,
}

pub(crate) fn flow_spec() -> impl Strategy<Value = FlowSpec> {
    (
        prop::bool::weighted(0.4),
        prop::bool::weighted(0.7),
        prop::bool::weighted(0.6),
        prop::bool::weighted(0.4),
        prop::bool::weighted(0.3),
        [ip_id_mode(), ip_id_mode()],
        prop_oneof![3 => Just(1448u16), 1 => Just(1428u16), 1 => 200u16..1460],
        prop_oneof![4 => Just(0u8), 1 => 0u8..64],
        (0u8..3, tunnel()),
    )
        .prop_map(
            |(v6, ts, sack, handshake, ecn_capable, ip_id, mss, dscp, (address_group, tunnel))| {
                FlowSpec {
                    v6,
                    ts,
                    sack,
                    handshake,
                    ecn_capable,
                    ip_id,
                    mss,
                    dscp,
                    address_group,
                    tunnel,
                }
            },
        )
}

/// One step of the traffic.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// The sender sends new data (`full`: one MSS; else `size` modulo the MSS, plus one).
    Data {
        flow: usize,
        full: bool,
        size: u16,
        psh: bool,
    },
    /// The receiver acknowledges `advance` more segments (0: a duplicate ACK), with up to
    /// `sack` SACK blocks if the connection uses SACK and there is a hole.
    Ack { flow: usize, advance: u8, sack: u8 },
    /// The sender retransmits its oldest unacknowledged segment.
    Retransmit { flow: usize },
    /// The sender closes (FIN, perhaps with data).
    Fin { flow: usize, data: u16 },
    /// The receiver (or, if `sender`, the sender) changes its advertised window.
    Window {
        flow: usize,
        sender: bool,
        window: u16,
    },
    /// The next data segment of an ECN-capable flow is marked Congestion Experienced.
    CongestionExperienced { flow: usize },
    /// Urgent data.
    Urgent { flow: usize, size: u16 },
    /// A UDP datagram between the hosts of a flow.
    Udp {
        flow: usize,
        forward: bool,
        size: u16,
    },
}

pub(crate) fn event(flows: usize) -> impl Strategy<Value = Event> {
    let f = 0..flows;
    prop_oneof![
        30 => (f.clone(), prop::bool::weighted(0.7), any::<u16>(), prop::bool::weighted(0.2))
            .prop_map(|(flow, full, size, psh)| Event::Data { flow, full, size, psh }),
        18 => (f.clone(), prop_oneof![1 => Just(0u8), 6 => 1u8..3, 1 => 3u8..20], prop_oneof![3 => Just(0u8), 1 => 1u8..4])
            .prop_map(|(flow, advance, sack)| Event::Ack { flow, advance, sack }),
        2 => f.clone().prop_map(|flow| Event::Retransmit { flow }),
        1 => (f.clone(), prop_oneof![Just(0u16), 1u16..600]).prop_map(|(flow, data)| Event::Fin { flow, data }),
        2 => (f.clone(), any::<bool>(), prop_oneof![Just(65535u16), 1000u16..65535, 0u16..1000])
            .prop_map(|(flow, sender, window)| Event::Window { flow, sender, window }),
        1 => f.clone().prop_map(|flow| Event::CongestionExperienced { flow }),
        1 => (f.clone(), 1u16..300).prop_map(|(flow, size)| Event::Urgent { flow, size }),
        2 => (f, any::<bool>(), 0u16..1400).prop_map(|(flow, forward, size)| Event::Udp { flow, forward, size }),
    ]
}

/// A packet offered to a link, and which way it goes (0: client to server).
#[derive(Debug, Clone)]
pub(crate) struct Packet {
    pub(crate) bytes: Vec<u8>,
    pub(crate) dir: usize,
}

/// The live state of one connection.
pub(crate) struct Flow {
    pub(crate) spec: FlowSpec,
    pub(crate) id: usize,
    pub(crate) client: IpAddr,
    pub(crate) server: IpAddr,
    pub(crate) client_port: u16,
    pub(crate) server_port: u16,
    pub(crate) flow_label: [u32; 2],
    pub(crate) ttl: [u8; 2],
    pub(crate) started: bool,
    /// The sender's next sequence number and the receiver's (constant) sequence number.
    pub(crate) snd_nxt: u32,
    pub(crate) rcv_seq: u32,
    /// Sent and not yet cumulatively acknowledged: (seq, length in sequence space, FIN).
    pub(crate) unacked: VecDeque<(u32, u32, bool)>,
    /// The cumulative ACK the receiver last sent.
    pub(crate) acked: u32,
    pub(crate) ip_id: [u16; 2],
    pub(crate) ts_clock: [u32; 2],
    /// The last TS value each side has seen from the other (its TS echo).
    pub(crate) ts_recent: [u32; 2],
    pub(crate) window: [u16; 2],
    pub(crate) ce_pending: bool,
    pub(crate) ece_pending: bool,
    pub(crate) cwr_pending: bool,
    pub(crate) fin_sent: bool,
    /// The Identification of the last IPv4 outer header, per direction.
    pub(crate) outer_ip_id: [u16; 2],
}

/// The payload byte at absolute sequence number `seq` of flow `id` (so retransmissions repeat it).
pub(crate) fn payload_byte(id: usize, seq: u32) -> u8 {
    (seq.wrapping_mul(0x9E37_79B1) >> 13) as u8 ^ (id as u8).wrapping_mul(29)
}

impl Flow {
    pub(crate) fn new(spec: FlowSpec, id: usize, rng: &mut Rng) -> Flow {
        let g = spec.address_group;
        let (client, server) = if spec.v6 {
            (
                IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, u16::from(g), 0, 0, 0, 1)),
                IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, u16::from(g), 0, 0, 0, 2)),
            )
        } else {
            (
                IpAddr::V4(Ipv4Addr::new(10, 0, g, 1)),
                IpAddr::V4(Ipv4Addr::new(10, 1, g, 2)),
            )
        };
        let isn = rng.next() as u32;
        let ts0 = rng.next() as u32;
        let ts1 = rng.next() as u32;
        Flow {
            id,
            client,
            server,
            client_port: 32768 + (rng.below(20000) as u16 & !7) + id as u16,
            server_port: [80, 443, 5201, 22][rng.below(4) as usize],
            flow_label: [rng.next() as u32 & 0xF_FFFF, rng.next() as u32 & 0xF_FFFF],
            ttl: [64, [64, 63, 128, 255][rng.below(4) as usize]],
            started: !spec.handshake,
            snd_nxt: isn,
            rcv_seq: rng.next() as u32,
            unacked: VecDeque::new(),
            acked: isn,
            ip_id: [rng.next() as u16, rng.next() as u16],
            ts_clock: [ts0, ts1],
            ts_recent: [ts1, ts0],
            window: [
                [64240, 502, 65535][rng.below(3) as usize],
                [501, 65535, 2048][rng.below(3) as usize],
            ],
            ce_pending: false,
            ece_pending: false,
            cwr_pending: false,
            fin_sent: false,
            outer_ip_id: [(id as u16).wrapping_mul(977), (id as u16).wrapping_mul(131)],
            spec,
        }
    }

    /// `packet` (going `dir`) in the flow's tunnel, if it has one.
    pub(crate) fn tunnelled(&mut self, dir: usize, packet: &[u8]) -> Vec<u8> {
        let ends = |a: IpAddr, b: IpAddr| if dir == 0 { (a, b) } else { (b, a) };
        let (src, dst) = match self.spec.tunnel {
            Tunnel::None => return packet.to_vec(),
            Tunnel::V6 => ends(
                IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0xff, 0, 0, 0, 0, 1)),
                IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0xff, 0, 0, 0, 0, 2)),
            ),
            Tunnel::V4 => ends(
                IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
                IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2)),
            ),
        };
        self.outer_ip_id[dir] = self.outer_ip_id[dir].wrapping_add(1);
        let outer = IpFields {
            src,
            dst,
            dscp: 0,
            ecn: 0,
            ttl: 64,
            ip_id: self.outer_ip_id[dir],
            flow_label: 0,
        };
        let protocol = if packet[0] >> 4 == 6 { 41 } else { 4 };
        ip_packet(&outer, protocol, packet)
    }

    pub(crate) fn next_ip_id(&mut self, dir: usize, rng: &mut Rng) -> u16 {
        let id = self.ip_id[dir];
        self.ip_id[dir] = match self.spec.ip_id[dir] {
            IpIdMode::Sequential => id.wrapping_add(1),
            IpIdMode::Global => id.wrapping_add(1 + rng.below(6) as u16),
            IpIdMode::Zero => 0,
            IpIdMode::Random => rng.next() as u16,
        };
        match self.spec.ip_id[dir] {
            IpIdMode::Zero => 0,
            _ => id,
        }
    }

    pub(crate) fn ip(&mut self, dir: usize, ecn: u8, rng: &mut Rng) -> IpFields {
        let (src, dst) = if dir == 0 {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        IpFields {
            src,
            dst,
            dscp: self.spec.dscp,
            ecn,
            ttl: self.ttl[dir],
            ip_id: self.next_ip_id(dir, rng),
            flow_label: self.flow_label[dir],
        }
    }

    /// The TS option for a packet of `dir`, advancing its clock (a millisecond-ish clock:
    /// most packets see no tick or one).
    pub(crate) fn ts(&mut self, dir: usize, rng: &mut Rng) -> Option<(u32, u32)> {
        if !self.spec.ts {
            return None;
        }
        self.ts_clock[dir] =
            self.ts_clock[dir].wrapping_add([0, 0, 1, 1, 2, 40][rng.below(6) as usize]);
        let val = self.ts_clock[dir];
        self.ts_recent[1 - dir] = val;
        Some((val, self.ts_recent[dir]))
    }

    pub(crate) fn ports(&self, dir: usize) -> (u16, u16) {
        if dir == 0 {
            (self.client_port, self.server_port)
        } else {
            (self.server_port, self.client_port)
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn segment(
        &mut self,
        dir: usize,
        seq: u32,
        flags: u8,
        sack: &[(u32, u32)],
        urgent: u16,
        payload_len: u32,
        rng: &mut Rng,
    ) -> Packet {
        let ecn = match (dir, self.spec.ecn_capable) {
            (0, true) if payload_len > 0 => {
                if std::mem::take(&mut self.ce_pending) {
                    self.ece_pending = true;
                    3
                } else {
                    2
                }
            }
            _ => 0,
        };
        let ip = self.ip(dir, ecn, rng);
        let ts = self.ts(dir, rng);
        let (src_port, dst_port) = self.ports(dir);
        let ack = if dir == 0 { self.rcv_seq } else { self.acked };
        let h = TcpHeader {
            src_port,
            dst_port,
            seq,
            ack,
            flags,
            window: self.window[dir],
            urgent,
            options: options(ts, sack),
        };
        let payload: Vec<u8> = (0..payload_len)
            .map(|i| payload_byte(self.id, seq.wrapping_add(i)))
            .collect();
        Packet {
            bytes: tcp_packet(&ip, &h, &payload),
            dir,
        }
    }

    pub(crate) fn handshake(&mut self, rng: &mut Rng, out: &mut Vec<Packet>) {
        let ts = self.spec.ts.then_some((self.ts_clock[0], 0));
        for (dir, seq, flags, ts) in [
            (0, self.snd_nxt, tcpf::SYN, ts),
            (
                1,
                self.rcv_seq,
                tcpf::SYN | tcpf::ACK,
                self.spec.ts.then_some((self.ts_clock[1], self.ts_clock[0])),
            ),
        ] {
            let ip = self.ip(dir, 0, rng);
            let (src_port, dst_port) = self.ports(dir);
            let h = TcpHeader {
                src_port,
                dst_port,
                seq,
                ack: if dir == 0 {
                    0
                } else {
                    self.snd_nxt.wrapping_add(1)
                },
                flags,
                window: 65535,
                urgent: 0,
                options: syn_options(self.spec.mss, self.spec.sack, ts),
            };
            out.push(Packet {
                bytes: tcp_packet(&ip, &h, &[]),
                dir,
            });
        }
        self.snd_nxt = self.snd_nxt.wrapping_add(1);
        self.rcv_seq = self.rcv_seq.wrapping_add(1);
        self.acked = self.snd_nxt;
        let p = self.segment(0, self.snd_nxt, tcpf::ACK, &[], 0, 0, rng);
        out.push(p);
    }

    pub(crate) fn send_data(
        &mut self,
        len: u32,
        extra: u8,
        urgent: u16,
        rng: &mut Rng,
        out: &mut Vec<Packet>,
    ) {
        let mut flags = tcpf::ACK | extra;
        if std::mem::take(&mut self.cwr_pending) {
            flags |= tcpf::CWR;
        }
        let fin = extra & tcpf::FIN != 0;
        let seq = self.snd_nxt;
        let p = self.segment(0, seq, flags, &[], urgent, len, rng);
        out.push(p);
        let span = len + u32::from(fin);
        self.unacked.push_back((seq, span, fin));
        self.snd_nxt = seq.wrapping_add(span);
    }

    pub(crate) fn ack(
        &mut self,
        advance: u8,
        sack_blocks: u8,
        rng: &mut Rng,
        out: &mut Vec<Packet>,
    ) {
        for _ in 0..advance {
            let Some((seq, span, _)) = self.unacked.pop_front() else {
                break;
            };
            self.acked = seq.wrapping_add(span);
        }
        let mut sack = Vec::new();
        if self.spec.sack && sack_blocks > 0 && self.unacked.len() >= 2 {
            // The first unacknowledged segment is the hole; SACK runs of later segments, most
            // recent block first as Linux does.
            let n = self.unacked.len();
            let mut starts: Vec<usize> = (1..n).collect();
            for i in (1..starts.len()).rev() {
                starts.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut starts: Vec<usize> =
                starts.into_iter().take(usize::from(sack_blocks)).collect();
            starts.sort_unstable();
            for (k, &s) in starts.iter().enumerate() {
                let end = starts.get(k + 1).copied().unwrap_or(n);
                // Leave a gap before the next block so blocks never touch.
                let end = (s + 1).max(end.saturating_sub(1)).min(n);
                let left = self.unacked[s].0;
                let last = self.unacked[end - 1];
                sack.push((left, last.0.wrapping_add(last.1)));
            }
            sack.reverse();
        } else if self.spec.sack && sack_blocks == 3 && advance == 0 && rng.chance(300) {
            // A D-SACK block below the ACK (RFC 2883): the compressor cannot code it.
            sack.push((self.acked.wrapping_sub(500), self.acked));
        }
        let mut flags = tcpf::ACK;
        if std::mem::take(&mut self.ece_pending) {
            flags |= tcpf::ECE;
            self.cwr_pending = true;
        }
        let seq = self.rcv_seq;
        let p = self.segment(1, seq, flags, &sack, 0, 0, rng);
        out.push(p);
    }

    pub(crate) fn retransmit(&mut self, rng: &mut Rng, out: &mut Vec<Packet>) {
        let Some(&(seq, span, fin)) = self.unacked.front() else {
            return;
        };
        let flags = tcpf::ACK | if fin { tcpf::FIN } else { 0 };
        let p = self.segment(0, seq, flags, &[], 0, span - u32::from(fin), rng);
        out.push(p);
    }
}

/// The packets of a whole scenario, in the order the hosts send them.
pub(crate) fn traffic(specs: &[FlowSpec], events: &[Event], seed: u64) -> Vec<Packet> {
    let mut rng = Rng(seed);
    let mut flows: Vec<Flow> = specs
        .iter()
        .enumerate()
        .map(|(id, spec)| Flow::new(spec.clone(), id, &mut rng))
        .collect();
    let mut out = Vec::new();
    for e in events {
        let id = match *e {
            Event::Data { flow, .. }
            | Event::Ack { flow, .. }
            | Event::Retransmit { flow }
            | Event::Fin { flow, .. }
            | Event::Window { flow, .. }
            | Event::CongestionExperienced { flow }
            | Event::Urgent { flow, .. }
            | Event::Udp { flow, .. } => flow % flows.len(),
        };
        let f = &mut flows[id];
        let first = out.len();
        if !f.started {
            f.started = true;
            f.handshake(&mut rng, &mut out);
        }
        match *e {
            Event::Data {
                full, size, psh, ..
            } => {
                if f.fin_sent {
                    f.ack(1, 0, &mut rng, &mut out);
                } else {
                    let mss = u32::from(f.spec.mss);
                    let len = if full { mss } else { 1 + u32::from(size) % mss };
                    f.send_data(len, if psh { tcpf::PSH } else { 0 }, 0, &mut rng, &mut out);
                }
            }
            Event::Ack { advance, sack, .. } => f.ack(advance, sack, &mut rng, &mut out),
            Event::Retransmit { .. } => f.retransmit(&mut rng, &mut out),
            Event::Fin { data, .. } => {
                if !f.fin_sent {
                    f.fin_sent = true;
                    f.send_data(
                        u32::from(data),
                        tcpf::FIN | tcpf::PSH,
                        0,
                        &mut rng,
                        &mut out,
                    );
                }
            }
            Event::Window { sender, window, .. } => f.window[usize::from(!sender)] = window,
            Event::CongestionExperienced { .. } => f.ce_pending = f.spec.ecn_capable,
            Event::Urgent { size, .. } => {
                if !f.fin_sent {
                    f.send_data(
                        u32::from(size),
                        tcpf::URG | tcpf::PSH,
                        size,
                        &mut rng,
                        &mut out,
                    );
                }
            }
            Event::Udp { forward, size, .. } => {
                let dir = usize::from(!forward);
                let ip = f.ip(dir, 0, &mut rng);
                let payload: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
                out.push(Packet {
                    bytes: udp_packet(&ip, 53 + dir as u16, 5353, &payload),
                    dir,
                });
            }
        }
        for p in &mut out[first..] {
            p.bytes = f.tunnelled(p.dir, &p.bytes);
        }
    }
    out
}
