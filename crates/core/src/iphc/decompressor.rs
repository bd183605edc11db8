//! The IPHC decompressor: one per link direction. It rebuilds each packet from its context and
//! delivers it only if its checksums verify (TCP always, UDP when not zero, IPv4 headers of full
//! headers); a TCP context that fails is repaired with the twice algorithm or marked damaged and
//! requested again (see the module documentation of [`super`] for the readings).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::time::Duration;

use super::chain::{self, Layout};
use super::full_header::{self, FullId};
use super::tcp::{self};
use super::tcp_context::TcpContext;
use super::{feedback, non_tcp, IphcConfig};
use super::{REQUEST_REPEAT_FIRST, REQUEST_REPEAT_MAX, REQUEST_REPEAT_TIME};
use crate::codec::{deliver_unchanged, Decompressor, DropReason, FrameKind};

/// A non-TCP context of the decompressor.
#[derive(Debug, Clone)]
struct NonTcpContext {
    header: Vec<u8>,
    layout: Layout,
    generation: u8,
}

/// The header-request state of one TCP CID.
#[derive(Debug, Clone, Copy, Default)]
struct Request {
    /// A request was queued since the context was last repaired.
    requested: bool,
    /// Packets of the CID dropped since the last request.
    drops: u32,
    /// Drops after which the request is repeated.
    interval: u32,
    /// When the last request was queued.
    at: Duration,
}

/// The IPHC decompressor for one direction of a link.
#[derive(Debug, Clone)]
pub struct IphcDecompressor {
    config: IphcConfig,
    /// TCP contexts by CID (0..=TCP_SPACE).
    tcp: Vec<Option<TcpContext>>,
    /// Header-request state by TCP CID.
    requests: Vec<Request>,
    /// Non-TCP contexts by CID.
    non_tcp: BTreeMap<u16, NonTcpContext>,
    /// TCP CIDs to request, in order.
    pending: Vec<u8>,
    /// Scratch: the layout of the full header or NODELTA packet being rebuilt.
    layout: Layout,
    /// The time, as last told ([`Decompressor::set_time`]).
    now: Duration,
}

impl IphcDecompressor {
    /// A decompressor with no connection state.
    pub fn new(config: IphcConfig) -> IphcDecompressor {
        let cids = usize::from(config.tcp_space) + 1;
        IphcDecompressor {
            tcp: (0..cids).map(|_| None).collect(),
            requests: alloc::vec![Request::default(); cids],
            non_tcp: BTreeMap::new(),
            pending: Vec::new(),
            layout: Layout::default(),
            now: Duration::ZERO,
            config,
        }
    }

    /// Notes a dropped compressed packet of TCP CID `cid`; `newly_damaged` if its context has
    /// just become damaged. Queues a header request when the rate limit allows.
    fn note_drop(&mut self, cid: u8, newly_damaged: bool) {
        if !self.config.header_requests {
            return;
        }
        let now = self.now;
        let state = &mut self.requests[usize::from(cid)];
        let request = if newly_damaged || !state.requested {
            *state = Request {
                requested: true,
                drops: 0,
                interval: REQUEST_REPEAT_FIRST,
                at: now,
            };
            true
        } else {
            state.drops += 1;
            let by_count = state.drops >= state.interval;
            if by_count {
                state.interval = (state.interval * 2).min(REQUEST_REPEAT_MAX);
            }
            if by_count || now >= state.at + REQUEST_REPEAT_TIME {
                (state.drops, state.at) = (0, now);
                true
            } else {
                false
            }
        };
        if request && !self.pending.contains(&cid) {
            self.pending.push(cid);
        }
    }

    /// Notes that TCP CID `cid` has a sound context again.
    fn repaired(&mut self, cid: u8) {
        self.requests[usize::from(cid)] = Request::default();
        self.pending.retain(|&c| c != cid);
    }

    fn full_header(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let layout = &mut self.layout;
        if !chain::parse(frame, self.config.max_header_len(), layout) {
            return Err(DropReason::Malformed);
        }
        let id = full_header::read(frame, layout)?;
        out.extend_from_slice(frame);
        if !chain::fill_lengths(out, layout)
            || !chain::verifies(out, layout)
            || !chain::well_formed(out, layout)
        {
            return Err(DropReason::Malformed);
        }
        match id {
            FullId::Tcp { cid } => {
                match self
                    .tcp
                    .get_mut(usize::from(cid))
                    .ok_or(DropReason::Malformed)?
                {
                    Some(ctx) => ctx.set_full(out, layout, true),
                    slot @ None => *slot = Some(TcpContext::from_full(out, layout)),
                }
                self.repaired(cid);
            }
            FullId::NonTcp { cid, generation } => {
                if cid > self.config.non_tcp_space {
                    return Err(DropReason::Malformed);
                }
                let header = &out[..layout.len];
                match self.non_tcp.get_mut(&cid) {
                    Some(ctx) => {
                        ctx.header.clear();
                        ctx.header.extend_from_slice(header);
                        ctx.layout.clone_from(layout);
                        ctx.generation = generation;
                    }
                    None => {
                        self.non_tcp.insert(
                            cid,
                            NonTcpContext {
                                header: header.to_vec(),
                                layout: layout.clone(),
                                generation,
                            },
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The CID of a COMPRESSED_TCP or NODELTA frame and the rest of the frame, if the CID has a
    /// sound context; else the refusal, counted towards a header request. A damaged context
    /// refuses NODELTA too: NODELTA takes the IP-level fields (TTL, traffic class, …) from the
    /// context, which no checksum covers, and a damaged context may be wrong in them (another
    /// stream's packets may have failed against an old context of this one). Only a full header
    /// repairs it.
    fn sound_tcp_context<'f>(&mut self, frame: &'f [u8]) -> Result<(u8, &'f [u8]), DropReason> {
        let (&cid, rest) = frame.split_first().ok_or(DropReason::Malformed)?;
        let refusal = match self.tcp.get(usize::from(cid)) {
            None => return Err(DropReason::Malformed),
            Some(None) => DropReason::NoContext,
            Some(Some(ctx)) if ctx.damaged => DropReason::ChecksumMismatch,
            Some(Some(_)) => return Ok((cid, rest)),
        };
        self.note_drop(cid, false);
        Err(refusal)
    }

    fn compressed_tcp(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (cid, rest) = self.sound_tcp_context(frame)?;
        let Some(ctx) = self.tcp[usize::from(cid)].as_mut() else {
            return Err(DropReason::NoContext);
        };
        match ctx.rebuild(&self.config, rest, out) {
            Ok(r) => {
                ctx.commit(&r, out);
                Ok(())
            }
            Err(DropReason::ChecksumMismatch) => {
                ctx.damaged = true;
                self.note_drop(cid, true);
                Err(DropReason::ChecksumMismatch)
            }
            Err(e) => Err(e),
        }
    }

    fn nodelta(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let (cid, rest) = self.sound_tcp_context(frame)?;
        let Some(ctx) = self.tcp[usize::from(cid)].as_mut() else {
            return Err(DropReason::NoContext);
        };
        let layout = &mut self.layout;
        match ctx.rebuild_nodelta(self.config.max_header_len(), rest, out, layout) {
            Ok(()) => {
                ctx.commit_nodelta(layout, out);
                self.repaired(cid);
                Ok(())
            }
            Err(DropReason::ChecksumMismatch) => {
                ctx.damaged = true;
                self.note_drop(cid, true);
                Err(DropReason::ChecksumMismatch)
            }
            Err(e) => Err(e),
        }
    }

    fn compressed_non_tcp(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), DropReason> {
        let h = non_tcp::parse_header(frame)?;
        if h.cid > self.config.non_tcp_space {
            return Err(DropReason::Malformed);
        }
        let ctx = self.non_tcp.get(&h.cid).ok_or(DropReason::NoContext)?;
        if ctx.generation != h.generation {
            return Err(DropReason::NoContext);
        }
        let rest = &frame[h.len..];
        let random_len = ctx.layout.random_len();
        if rest.len() < random_len {
            return Err(DropReason::Malformed);
        }
        out.extend_from_slice(&ctx.header);
        tcp::write_random(out, &ctx.layout, &rest[..random_len]);
        out.extend_from_slice(&rest[random_len..]);
        if !chain::fill_lengths(out, &ctx.layout) {
            return Err(DropReason::Malformed);
        }
        chain::fill_ipv4_checksums(out, &ctx.layout);
        if !chain::transport_verifies(out, &ctx.layout) {
            return Err(DropReason::ChecksumMismatch);
        }
        // The payload holds what follows the chain: the compressor sent only well-formed
        // packets.
        if !chain::well_formed(out, &ctx.layout) {
            return Err(DropReason::Malformed);
        }
        Ok(())
    }
}

impl Decompressor for IphcDecompressor {
    fn decompress(
        &mut self,
        kind: FrameKind,
        frame: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        out.clear();
        let result = match kind {
            FrameKind::Ip => return deliver_unchanged(frame, out),
            FrameKind::FullHeader => self.full_header(frame, out),
            FrameKind::CompressedTcp => self.compressed_tcp(frame, out),
            FrameKind::CompressedTcpNoDelta => self.nodelta(frame, out),
            FrameKind::CompressedNonTcp => self.compressed_non_tcp(frame, out),
            FrameKind::UncompressedTcp | FrameKind::ContextState | FrameKind::Profile(_) => {
                Err(DropReason::UnknownKind)
            }
        };
        if result.is_err() {
            out.clear();
        }
        result
    }

    fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    fn take_feedback(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.pending.is_empty() {
            return false;
        }
        let n = feedback::emit(out, &self.pending);
        self.pending.drain(..n);
        true
    }
}
