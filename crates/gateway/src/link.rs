//! The emulated link, one direction: a DropTail queue of packets, a transmitter with a
//! bandwidth, a propagation delay, and impairments (bit errors, random or bursty loss,
//! reordering).
//!
//! As on a real serial link (PPP compresses a packet when it hands it to the line), the queue
//! holds *packets*, and a packet is compressed when the transmitter takes it: the caller offers
//! a packet ([`Link::offer`]), asks when the head of the queue may start ([`Link::ready`]),
//! compresses it ([`Link::head`]) and puts the frame on the wire ([`Link::transmit`]). So a
//! queue overflow drops a packet before the compressor has seen it, never a frame after.
//! Feedback frames (CONTEXT_STATE) queue the same way, already made.
//!
//! Time is nanoseconds from an origin the caller chooses; the link never reads a clock. A frame
//! is serialized in `bits / rate` (its kind byte counted: the byte our links spend on the frame
//! kind), and arrives `delay` after its last bit left. The DropTail limit counts packets waiting
//! for the transmitter, not the one being sent. Every frame's fate is decided when it is
//! transmitted, with a fixed number of random draws per frame from seeded ChaCha8 streams (one
//! per purpose and direction), so a seed gives the same decisions on every machine:
//! - *bit errors*: independent per bit with probability `ber`; a frame with any bit error is
//!   discarded at the far end, as a link CRC would (it still uses the link's time);
//! - *loss*: with probability `loss` per frame, or with `burst = L` a two-state Gilbert–Elliott
//!   chain of the same average loss with bursts of mean length L frames (every frame is lost in
//!   the bad state, none in the good one; the bad state is left with probability 1/L);
//! - *reordering*: with probability `reorder` an intact frame is held back at the far end and
//!   delivered right after the next 1 to 3 frames (uniformly), or after `max(delay, 10 ms)` if
//!   they do not come; one frame is held at a time.
//!
//! The wire holds at most `slots` frames in flight, in a ring of preallocated slots, each with
//! room for a frame and its original packet (the oracle of the emulated mode); the queue is a
//! ring of preallocated packet buffers, which move to the wire by swapping, not copying. Nothing
//! here allocates after [`Link::new`].

use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use taroc_core::variant::Variant;
use taroc_core::FrameKind;

/// The scheme of a direction as it runs over a link that reorders frames: `configured`
/// (`--reorder`: the emulated impairment) or possibly (`network`: a UDP path across a network).
/// Each as [`Variant::for_reordering_link`] makes it; a scheme that cannot run there is an error
/// where reordering is configured, and kept where it is only possible (the caller warns).
pub fn scheme_for_link(
    variant: &Variant,
    configured: bool,
    network: bool,
) -> Result<Variant, String> {
    if !configured && !network {
        return Ok(variant.clone());
    }
    match variant.for_reordering_link() {
        Ok(adapted) => Ok(adapted),
        Err(why) if configured => Err(format!(
            "cannot run on a link that reorders (--reorder): {why}"
        )),
        Err(_) => Ok(variant.clone()),
    }
}

/// The settings of one direction of an emulated link.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Bandwidth in bits per second; 0 for no serialization time (and no queue).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// DropTail limit: frames waiting for the transmitter (the one being sent excluded).
    pub queue: usize,
    /// Independent bit-error probability per bit of each frame (kind byte included).
    pub ber: f64,
    /// Frame loss probability (average, when `burst` is set).
    pub loss: f64,
    /// Mean loss burst length in frames (Gilbert–Elliott), if losses come in bursts.
    pub burst: Option<f64>,
    /// Probability that an intact frame is delivered after 1 to 3 later frames.
    pub reorder: f64,
    /// Largest frame the link carries, in bytes (the kind byte excluded, as PPP's MRU excludes
    /// its protocol field).
    pub mtu: usize,
    /// Frames the link holds at once (waiting and in flight); more are dropped.
    pub slots: usize,
}

impl Default for LinkConfig {
    /// A transparent link: no rate, no delay, no impairment; MTU 1500.
    fn default() -> LinkConfig {
        LinkConfig {
            rate_bps: 0,
            delay: Duration::ZERO,
            queue: 64,
            ber: 0.0,
            loss: 0.0,
            burst: None,
            reorder: 0.0,
            mtu: 1500,
            slots: 1024,
        }
    }
}

impl LinkConfig {
    /// Whether this link does nothing at all to frames, so the gateway can hand them straight to
    /// the decompressor.
    pub fn is_transparent(&self) -> bool {
        self.rate_bps == 0
            && self.delay.is_zero()
            && self.ber == 0.0
            && self.loss == 0.0
            && self.reorder == 0.0
    }

    /// Checks the settings; the error says which one is wrong.
    pub fn check(&self) -> Result<(), crate::Error> {
        let probability = |name: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(crate::Error::new(format!(
                    "{name} {p} is not a probability in [0, 1]"
                )))
            }
        };
        probability("BER", self.ber)?;
        probability("loss", self.loss)?;
        probability("reorder", self.reorder)?;
        if let Some(burst) = self.burst {
            if !(burst >= 1.0 && burst.is_finite()) {
                return Err(crate::Error::new(format!(
                    "burst length {burst} is not at least 1 frame"
                )));
            }
            if self.loss >= 1.0 {
                return Err(crate::Error::new("bursty loss needs a loss rate below 1"));
            }
        }
        if self.mtu == 0 || self.mtu > 65535 {
            return Err(crate::Error::new(format!(
                "link MTU {} is outside 1..=65535",
                self.mtu
            )));
        }
        if self.slots == 0 || self.slots > 1 << 20 {
            return Err(crate::Error::new(format!(
                "link slots {} is outside 1..=1048576",
                self.slots
            )));
        }
        Ok(())
    }
}

/// Why the link refused a frame when it was offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDrop {
    /// Longer than the link MTU.
    Oversize,
    /// The DropTail queue was full.
    QueueFull,
    /// Every slot of the link was in use (waiting or in flight).
    SlotsFull,
}

impl std::fmt::Display for LinkDrop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LinkDrop::Oversize => "frame longer than the link MTU",
            LinkDrop::QueueFull => "link queue full",
            LinkDrop::SlotsFull => "every link slot in use",
        })
    }
}

impl std::error::Error for LinkDrop {}

/// What happened to a frame on the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Arrived intact.
    Intact,
    /// Lost (random or burst loss).
    Lost,
    /// Hit by at least one bit error: discarded by the link CRC.
    BitError,
}

/// A frame taken off the link at its far end.
#[derive(Debug)]
pub struct Arrival<'a> {
    /// The frame's kind.
    pub kind: FrameKind,
    /// The frame's bytes (meaningless unless `fate` is [`Fate::Intact`]).
    pub frame: &'a [u8],
    /// The packet the frame was made from, if the sender gave one (the oracle).
    pub original: Option<&'a [u8]>,
    /// Whether it arrived intact.
    pub fate: Fate,
}

#[derive(Debug)]
struct Slot {
    kind: FrameKind,
    frame: Vec<u8>,
    original: Vec<u8>,
    has_original: bool,
    arrival: u64,
    fate: Fate,
    hold_for: u8,
}

impl Slot {
    fn new(frame_capacity: usize, original_capacity: usize) -> Slot {
        Slot {
            kind: FrameKind::Ip,
            frame: Vec::with_capacity(frame_capacity),
            original: Vec::with_capacity(original_capacity),
            has_original: false,
            arrival: 0,
            fate: Fate::Intact,
            hold_for: 0,
        }
    }

    fn arrival(&self) -> Arrival<'_> {
        Arrival {
            kind: self.kind,
            frame: &self.frame,
            original: self.has_original.then_some(&self.original[..]),
            fate: self.fate,
        }
    }
}

/// A uniform number in [0, 1) with 53 random bits.
fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Random streams of a link, one per purpose.
#[derive(Debug)]
struct Streams {
    bits: ChaCha8Rng,
    loss: ChaCha8Rng,
    reorder: ChaCha8Rng,
}

impl Streams {
    fn new(seed: u64, direction: u64) -> Streams {
        let stream = |purpose: u64| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(direction * 16 + purpose);
            rng
        };
        Streams {
            bits: stream(0),
            loss: stream(1),
            reorder: stream(2),
        }
    }
}

/// A held-back (reordered) frame.
#[derive(Debug)]
struct Held {
    slot: Slot,
    active: bool,
    /// Frames still to deliver before this one.
    countdown: u8,
    /// Delivered at this time at the latest.
    deadline: u64,
}

/// A packet (or feedback frame) waiting for the transmitter.
#[derive(Debug)]
struct Queued {
    bytes: Vec<u8>,
    feedback: bool,
    since: u64,
}

/// One direction of an emulated link.
#[derive(Debug)]
pub struct Link {
    config: LinkConfig,
    queue: Box<[Queued]>,
    queue_head: usize,
    queue_len: usize,
    wire: Box<[Slot]>,
    head: usize,
    len: usize,
    tx_free_at: u64,
    streams: Streams,
    bad_state: bool,
    held: Held,
    hold_max: u64,
    packet_capacity: usize,
}

impl Link {
    /// A link with `config` (checked by [`LinkConfig::check`]), its random streams derived from
    /// `seed` and `direction` (so the two directions of a link differ), for packets of up to
    /// `max_packet` bytes.
    pub fn new(config: LinkConfig, seed: u64, direction: u64, max_packet: usize) -> Link {
        let packet_capacity = max_packet.max(config.mtu);
        let wire = (0..config.slots)
            .map(|_| Slot::new(config.mtu, packet_capacity))
            .collect();
        let queue = (0..config.queue.max(1))
            .map(|_| Queued {
                bytes: Vec::with_capacity(packet_capacity),
                feedback: false,
                since: 0,
            })
            .collect();
        let hold_max = config.delay.max(Duration::from_millis(10)).as_nanos() as u64;
        Link {
            held: Held {
                slot: Slot::new(config.mtu, packet_capacity),
                active: false,
                countdown: 0,
                deadline: 0,
            },
            config,
            queue,
            queue_head: 0,
            queue_len: 0,
            wire,
            head: 0,
            len: 0,
            tx_free_at: 0,
            streams: Streams::new(seed, direction),
            bad_state: false,
            hold_max,
            packet_capacity,
        }
    }

    /// The settings.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// Packets and frames on the link (queued, in flight, or held back).
    pub fn len(&self) -> usize {
        self.queue_len + self.len + usize::from(self.held.active)
    }

    /// Whether the link carries nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues a packet (or, with `feedback`, a CONTEXT_STATE frame) offered at `now`. Refused
    /// if the queue already holds `queue` packets waiting (DropTail; with an idle transmitter
    /// and an empty queue a packet is always taken), or if it is longer than the link's buffers.
    /// Call [`Link::ready`] right after: an idle transmitter takes it at once.
    pub fn offer(&mut self, now: u64, bytes: &[u8], feedback: bool) -> Result<(), LinkDrop> {
        if bytes.len() > self.packet_capacity {
            return Err(LinkDrop::Oversize);
        }
        let idle = self.queue_len == 0 && self.tx_free_at <= now;
        if self.queue_len >= self.config.queue && !idle {
            return Err(LinkDrop::QueueFull);
        }
        if self.queue_len == self.queue.len() {
            return Err(LinkDrop::QueueFull);
        }
        let index = (self.queue_head + self.queue_len) % self.queue.len();
        let entry = &mut self.queue[index];
        entry.bytes.clear();
        entry.bytes.extend_from_slice(bytes);
        entry.feedback = feedback;
        entry.since = now;
        self.queue_len += 1;
        Ok(())
    }

    /// When the packet at the head of the queue starts being transmitted, if that is no later
    /// than `now`.
    pub fn ready(&self, now: u64) -> Option<u64> {
        if self.queue_len == 0 {
            return None;
        }
        let start = self.tx_free_at.max(self.queue[self.queue_head].since);
        (start <= now).then_some(start)
    }

    /// The head of the queue: its bytes, and whether it is a feedback frame (else a packet).
    pub fn head(&self) -> Option<(&[u8], bool)> {
        (self.queue_len > 0).then(|| {
            let entry = &self.queue[self.queue_head];
            (&entry.bytes[..], entry.feedback)
        })
    }

    /// Takes the head of the queue and puts its frame on the wire, starting at `start` (from
    /// [`Link::ready`]): `frame` is what the compressor made of the head packet (kept beside
    /// it as the oracle), or `None` for a feedback frame, sent as it is. The head leaves the
    /// queue even when the frame is refused (longer than the MTU, or no free wire slot).
    pub fn transmit(
        &mut self,
        start: u64,
        kind: FrameKind,
        frame: Option<&[u8]>,
    ) -> Result<(), LinkDrop> {
        if self.queue_len == 0 {
            return Ok(());
        }
        let queued = self.queue_head;
        self.queue_head = (self.queue_head + 1) % self.queue.len();
        self.queue_len -= 1;
        let frame_len = frame.map_or(self.queue[queued].bytes.len(), <[u8]>::len);
        if frame_len > self.config.mtu {
            return Err(LinkDrop::Oversize);
        }
        if self.len == self.wire.len() {
            return Err(LinkDrop::SlotsFull);
        }
        let bits = (frame_len as u64 + 1) * 8;
        let (fate, hold_for) = self.draw(bits);
        let tx_start = start.max(self.tx_free_at);
        let tx_end = tx_start + self.serialization(bits);
        self.tx_free_at = tx_end;

        let index = (self.head + self.len) % self.wire.len();
        let slot = &mut self.wire[index];
        let entry = &mut self.queue[queued];
        slot.kind = kind;
        slot.frame.clear();
        match frame {
            Some(frame) => {
                slot.frame.extend_from_slice(frame);
                // The packet moves to the wire as the oracle; the slot's old buffer (same
                // capacity) goes back to the queue.
                std::mem::swap(&mut slot.original, &mut entry.bytes);
                slot.has_original = true;
            }
            None => {
                slot.frame.extend_from_slice(&entry.bytes);
                slot.has_original = false;
            }
        }
        slot.arrival = tx_end + self.config.delay.as_nanos() as u64;
        slot.fate = fate;
        slot.hold_for = hold_for;
        self.len += 1;
        Ok(())
    }

    /// The fate of a frame of `bits` bits, and how many frames to hold it back for (0: none).
    /// Always the same number of draws.
    fn draw(&mut self, bits: u64) -> (Fate, u8) {
        let u_bits = uniform(&mut self.streams.bits);
        let u_loss = uniform(&mut self.streams.loss);
        let u_reorder = uniform(&mut self.streams.reorder);
        let u_hold = uniform(&mut self.streams.reorder);
        let lost = match self.config.burst {
            None => u_loss < self.config.loss,
            Some(length) => {
                let leave_bad = 1.0 / length;
                let enter_bad = self.config.loss * leave_bad / (1.0 - self.config.loss);
                self.bad_state = if self.bad_state {
                    u_loss >= leave_bad
                } else {
                    u_loss < enter_bad
                };
                self.bad_state
            }
        };
        let p_bit_error = if self.config.ber > 0.0 {
            -((bits as f64) * (-self.config.ber).ln_1p()).exp_m1()
        } else {
            0.0
        };
        let fate = if lost {
            Fate::Lost
        } else if u_bits < p_bit_error {
            Fate::BitError
        } else {
            Fate::Intact
        };
        let hold_for = if u_reorder < self.config.reorder {
            1 + ((u_hold * 3.0) as u8).min(2)
        } else {
            0
        };
        (fate, hold_for)
    }

    /// The time, in ns, `bits` take on the wire.
    fn serialization(&self, bits: u64) -> u64 {
        if self.config.rate_bps == 0 {
            0
        } else {
            (u128::from(bits) * 1_000_000_000 / u128::from(self.config.rate_bps)) as u64
        }
    }

    /// When something next happens on the link (a queued packet can start, a frame arrives, a
    /// held frame is due), in ns, if anything is on it.
    pub fn next_event(&self) -> Option<u64> {
        let start =
            (self.queue_len > 0).then(|| self.tx_free_at.max(self.queue[self.queue_head].since));
        let arrival = (self.len > 0).then(|| self.wire[self.head].arrival);
        let due = if self.held.countdown == 0 {
            0
        } else {
            self.held.deadline
        };
        let held = self.held.active.then_some(due);
        [start, arrival, held].into_iter().flatten().min()
    }

    /// Takes the next frame due at `now` off the far end of the link, if any.
    pub fn receive(&mut self, now: u64) -> Option<Arrival<'_>> {
        if self.held.active && (self.held.countdown == 0 || self.held.deadline <= now) {
            self.held.active = false;
            return Some(self.held.slot.arrival());
        }
        loop {
            if self.len == 0 || self.wire[self.head].arrival > now {
                return None;
            }
            let index = self.head;
            self.head = (self.head + 1) % self.wire.len();
            self.len -= 1;
            let slot = &mut self.wire[index];
            if slot.hold_for > 0 && slot.fate == Fate::Intact && !self.held.active {
                std::mem::swap(slot, &mut self.held.slot);
                self.held.active = true;
                self.held.countdown = self.held.slot.hold_for;
                self.held.deadline = self.held.slot.arrival + self.hold_max;
                continue;
            }
            if self.held.active {
                self.held.countdown = self.held.countdown.saturating_sub(1);
            }
            return Some(self.wire[index].arrival());
        }
    }
}

#[cfg(test)]
mod tests;
