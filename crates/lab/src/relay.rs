//! A UDP relay between the two gateways of the harness's UDP mode, through which disturbances
//! are made: losses of whole bursts of frames, and forged frames.
//!
//! ```text
//!   gateway A ──► face A ─┐        ┌─ face B ◄── gateway B
//!   (peer: face A)        relay thread          (peer: face B)
//!   gateway A ◄── face A ─┘        └─ face B ──► gateway B
//! ```
//!
//! Each gateway's `peer` is the relay's face on its side: what A sends arrives at face A and
//! leaves from face B to B, and back. A gateway accepts datagrams only from its peer's address,
//! which is the face's: so a datagram the relay *injects* from a face comes from exactly the
//! address the gateway expects, a genuine spoofed frame (on loopback, without raw sockets).
//!
//! The relay also notes the context identifiers (CIDs) it sees in each direction
//! ([`crate::forge::cid_of`]), so that forgeries can aim at the contexts in use. As an
//! eavesdropper would, it can record the datagrams of a direction ([`Relay::start_recording`])
//! and replay one of them later, at once ([`Relay::inject`]) or the moment the next datagram of
//! a direction passes ([`Relay::inject_after_next`]: right after a restarted gateway's first
//! hello, say).

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use taroc_core::variant::Variant;

use crate::forge;
use taroc_gateway::endpoint::decode_frame;
use taroc_gateway::gateway::{wait_readable, READ_BUFFER};
use taroc_gateway::Error;

/// Direction of datagrams from gateway A to gateway B (index 0) or from B to A (index 1); the
/// same index names the gateway the datagrams come from.
pub const DIRECTIONS: [&str; 2] = ["a->b", "b->a"];

/// Datagrams a recording keeps per direction (the first ones): a bound on its memory, about
/// 6 MB at the largest datagrams.
pub const RECORD_LIMIT: usize = 4096;

/// An injection armed to follow the next datagram of a direction ([`Relay::inject_after_next`]).
#[derive(Debug)]
struct Armed {
    /// The direction whose next forwarded datagram sets it off.
    direction: usize,
    /// The gateway the datagram goes to.
    side: usize,
    datagram: Vec<u8>,
}

/// What the relay thread records and injects on its owner's behalf.
#[derive(Debug, Default)]
struct Eavesdropper {
    /// The datagrams recorded per direction, while [`Shared::recording`] is set.
    recorded: [Vec<Vec<u8>>; 2],
    armed: Option<Armed>,
    /// The datagram after which the armed injection went.
    went_after: Option<Vec<u8>>,
}

/// What the relay thread and its owner share.
#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    /// Datagrams still to drop, per direction.
    to_drop: [AtomicU64; 2],
    dropped: [AtomicU64; 2],
    forwarded: [AtomicU64; 2],
    injected: [AtomicU64; 2],
    /// Datagrams from neither gateway.
    foreign: AtomicU64,
    /// The CIDs seen per direction, a bit per CID.
    cids: [[AtomicU64; 4]; 2],
    /// Whether the datagrams of each direction are recorded.
    recording: [AtomicBool; 2],
    /// Whether an injection is armed (the relay thread looks at [`Shared::eavesdropper`] only
    /// then, or while recording).
    armed: AtomicBool,
    eavesdropper: Mutex<Eavesdropper>,
}

impl Shared {
    /// The eavesdropper's state (a panic elsewhere while it was held leaves it usable).
    fn eavesdropper(&self) -> MutexGuard<'_, Eavesdropper> {
        self.eavesdropper
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A datagram of direction `from` was forwarded: records it if `recording` (the direction
    /// was, when the datagram came), and sends the armed injection if this datagram sets it off.
    fn forwarded(
        &self,
        from: usize,
        recording: bool,
        datagram: &[u8],
        faces: &[Arc<UdpSocket>; 2],
        gateways: [SocketAddr; 2],
    ) {
        if !recording && !self.armed.load(Ordering::Relaxed) {
            return;
        }
        let mut eavesdropper = self.eavesdropper();
        if recording && eavesdropper.recorded[from].len() < RECORD_LIMIT {
            eavesdropper.recorded[from].push(datagram.to_vec());
        }
        if let Some(armed) = eavesdropper.armed.take_if(|armed| armed.direction == from) {
            self.armed.store(false, Ordering::Relaxed);
            let to = gateways[armed.side];
            if faces[armed.side].send_to(&armed.datagram, to).is_ok() {
                self.injected[armed.side].fetch_add(1, Ordering::Relaxed);
            }
            eavesdropper.went_after = Some(datagram.to_vec());
        }
    }
}

/// The relay's counters, per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayCounters {
    /// Datagrams forwarded.
    pub forwarded: [u64; 2],
    /// Datagrams dropped on purpose.
    pub dropped: [u64; 2],
    /// Forged datagrams sent toward the gateway of each index (0: toward A).
    pub injected: [u64; 2],
    /// Datagrams from an address that is neither gateway's.
    pub foreign: u64,
}

/// A running relay; the thread is stopped and joined on drop.
#[derive(Debug)]
pub struct Relay {
    faces: [Arc<UdpSocket>; 2],
    gateways: [SocketAddr; 2],
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts a relay between gateways listening on `gateways` (A, B), whose frames are of
    /// `variants` (what A sends, what B sends). Its faces are fresh loopback sockets.
    pub fn start(gateways: [SocketAddr; 2], variants: [Variant; 2]) -> Result<Relay, Error> {
        let bind = || {
            UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
                .map(Arc::new)
                .map_err(|e| Error::io("binding a relay socket", e))
        };
        let faces = [bind()?, bind()?];
        for face in &faces {
            face.set_nonblocking(true)
                .map_err(|e| Error::io("making a relay socket non-blocking", e))?;
            // As large as the gateways' own: a relay that is not scheduled for a moment should
            // not lose what a gateway on another host would have buffered.
            taroc_gateway::socket::size_buffers(
                face,
                taroc_gateway::socket::DEFAULT_SOCKET_BUFFER,
            )?;
        }
        let shared = Arc::new(Shared::default());
        let thread_faces = faces.clone();
        let thread_shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("taroc-relay".into())
            .spawn(move || relay(&thread_faces, gateways, &variants, &thread_shared))
            .map_err(|e| Error::io("starting the relay thread", e))?;
        Ok(Relay {
            faces,
            gateways,
            shared,
            handle: Some(handle),
        })
    }

    /// The address gateway `side` (0: A, 1: B) must take as its peer.
    pub fn face(&self, side: usize) -> Result<SocketAddr, Error> {
        self.faces[side]
            .local_addr()
            .map_err(|e| Error::io("reading a relay socket's address", e))
    }

    /// Drops the next `count` datagrams of `direction` (replacing any drop still pending there).
    pub fn start_dropping(&self, direction: usize, count: u64) {
        self.shared.to_drop[direction].store(count, Ordering::Relaxed);
    }

    /// Stops dropping in `direction`; returns how many datagrams of the last
    /// [`Relay::start_dropping`] were left undropped.
    pub fn stop_dropping(&self, direction: usize) -> u64 {
        self.shared.to_drop[direction].swap(0, Ordering::Relaxed)
    }

    /// Datagrams of `direction` still to drop.
    pub fn still_to_drop(&self, direction: usize) -> u64 {
        self.shared.to_drop[direction].load(Ordering::Relaxed)
    }

    /// Sends `datagram` to gateway `side` from the address it takes for its peer's.
    pub fn inject(&self, side: usize, datagram: &[u8]) -> Result<(), Error> {
        self.faces[side]
            .send_to(datagram, self.gateways[side])
            .map_err(|e| Error::io("injecting a forged datagram", e))?;
        self.shared.injected[side].fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Starts recording the datagrams of `direction` that the relay forwards (the first
    /// [`RECORD_LIMIT`]), forgetting any recorded before.
    pub fn start_recording(&self, direction: usize) {
        self.shared.eavesdropper().recorded[direction].clear();
        self.shared.recording[direction].store(true, Ordering::Relaxed);
    }

    /// Stops recording `direction`; the datagrams recorded, in the order they were forwarded.
    pub fn take_recorded(&self, direction: usize) -> Vec<Vec<u8>> {
        self.shared.recording[direction].store(false, Ordering::Relaxed);
        std::mem::take(&mut self.shared.eavesdropper().recorded[direction])
    }

    /// Arms an injection: the moment the relay has forwarded the next datagram of `direction`,
    /// it sends `datagram` to gateway `side` as [`Relay::inject`] does (replacing any injection
    /// still armed). [`Relay::injected_after`] tells when it went.
    pub fn inject_after_next(&self, direction: usize, side: usize, datagram: Vec<u8>) {
        let mut eavesdropper = self.shared.eavesdropper();
        eavesdropper.armed = Some(Armed {
            direction,
            side,
            datagram,
        });
        eavesdropper.went_after = None;
        self.shared.armed.store(true, Ordering::Relaxed);
    }

    /// The datagram after which the injection of [`Relay::inject_after_next`] went, once it
    /// went.
    pub fn injected_after(&self) -> Option<Vec<u8>> {
        self.shared.eavesdropper().went_after.clone()
    }

    /// The CIDs seen so far in the datagrams of `direction`.
    pub fn cids_seen(&self, direction: usize) -> Vec<u8> {
        let words = self.shared.cids[direction]
            .each_ref()
            .map(|w| w.load(Ordering::Relaxed));
        (0..=255u8)
            .filter(|&cid| words[usize::from(cid / 64)] & (1 << (cid % 64)) != 0)
            .collect()
    }

    /// The counters so far.
    pub fn counters(&self) -> RelayCounters {
        let load = |a: &[AtomicU64; 2]| a.each_ref().map(|c| c.load(Ordering::Relaxed));
        RelayCounters {
            forwarded: load(&self.shared.forwarded),
            dropped: load(&self.shared.dropped),
            injected: load(&self.shared.injected),
            foreign: self.shared.foreign.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// Takes one datagram off `to_drop` if any is left to drop.
fn take_drop(to_drop: &AtomicU64) -> bool {
    to_drop
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
}

/// The relay thread: forwards until `shared.stop`.
fn relay(
    faces: &[Arc<UdpSocket>; 2],
    gateways: [SocketAddr; 2],
    variants: &[Variant; 2],
    shared: &Shared,
) {
    let mut buffer = vec![0u8; READ_BUFFER + 1];
    while !shared.stop.load(Ordering::Relaxed) {
        let fds = [faces[0].as_raw_fd(), faces[1].as_raw_fd()];
        let Ok(revents) = wait_readable(fds, Duration::from_millis(20)) else {
            break;
        };
        for from in 0..2 {
            if revents[from] == 0 {
                continue;
            }
            let to = 1 - from;
            for _ in 0..64 {
                let (n, source) = match faces[from].recv_from(&mut buffer) {
                    Ok(received) => received,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // ICMP errors of earlier sends to a gateway that is down: not fatal.
                    Err(_) => continue,
                };
                if source != gateways[from] {
                    shared.foreign.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if take_drop(&shared.to_drop[from]) {
                    shared.dropped[from].fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let datagram = &buffer[..n];
                if let Some(cid) = decode_frame(datagram)
                    .and_then(|(kind, frame)| forge::cid_of(variants[from].scheme, kind, frame))
                {
                    shared.cids[from][usize::from(cid / 64)]
                        .fetch_or(1 << (cid % 64), Ordering::Relaxed);
                }
                shared.forwarded[from].fetch_add(1, Ordering::Relaxed);
                // Whether to record it is decided before it goes: its receiver may start a
                // recording the moment it has it.
                let recording = shared.recording[from].load(Ordering::Relaxed);
                // A gateway that is down (restarting) loses what is sent to it meanwhile.
                let _ = faces[to].send_to(datagram, gateways[to]);
                shared.forwarded(from, recording, datagram, faces, gateways);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taroc_core::FrameKind;

    use taroc_gateway::endpoint::encode_frame;

    fn socket() -> UdpSocket {
        let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        s
    }

    fn receive(s: &UdpSocket) -> (Vec<u8>, SocketAddr) {
        let mut buf = [0u8; 2048];
        let (n, from) = s.recv_from(&mut buf).unwrap();
        (buf[..n].to_vec(), from)
    }

    #[test]
    fn forwards_drops_injects_and_notes_cids() {
        let (a, b) = (socket(), socket());
        let taroc = Variant::by_name("taroc").unwrap();
        let relay = Relay::start(
            [a.local_addr().unwrap(), b.local_addr().unwrap()],
            [taroc.clone(), taroc],
        )
        .unwrap();
        let (face_a, face_b) = (relay.face(0).unwrap(), relay.face(1).unwrap());
        let mut datagram = Vec::new();
        encode_frame(FrameKind::CompressedTcp, &[7, 0x10, 1, 2], &mut datagram);
        a.send_to(&datagram, face_a).unwrap();
        assert_eq!(receive(&b), (datagram.clone(), face_b));
        b.send_to(b"back", face_b).unwrap();
        assert_eq!(receive(&a), (b"back".to_vec(), face_a));
        assert_eq!(relay.cids_seen(0), vec![7]);
        assert!(relay.cids_seen(1).is_empty());

        relay.start_dropping(0, 2);
        for i in 0..3u8 {
            a.send_to(&[i], face_a).unwrap();
        }
        assert_eq!(receive(&b).0, vec![2]);
        assert_eq!(relay.still_to_drop(0), 0);

        relay.inject(1, b"forged").unwrap();
        assert_eq!(receive(&b), (b"forged".to_vec(), face_b));
        // A stranger's datagram is not forwarded.
        socket().send_to(b"stranger", face_a).unwrap();
        relay.start_dropping(1, 5);
        assert_eq!(relay.stop_dropping(1), 5);
        b.send_to(b"after", face_b).unwrap();
        assert_eq!(receive(&a).0, b"after".to_vec());
        let c = relay.counters();
        assert_eq!(c.forwarded, [2, 2]);
        assert_eq!(c.dropped, [2, 0]);
        assert_eq!(c.injected, [0, 1]);
        assert_eq!(c.foreign, 1);
    }

    #[test]
    fn records_a_direction_and_injects_after_its_next_datagram() {
        let (a, b) = (socket(), socket());
        let taroc = Variant::by_name("taroc").unwrap();
        let relay = Relay::start(
            [a.local_addr().unwrap(), b.local_addr().unwrap()],
            [taroc.clone(), taroc],
        )
        .unwrap();
        let (face_a, face_b) = (relay.face(0).unwrap(), relay.face(1).unwrap());
        b.send_to(b"before", face_b).unwrap();
        assert_eq!(receive(&a).0, b"before".to_vec());
        relay.start_recording(1);
        for datagram in [&b"one"[..], b"two"] {
            b.send_to(datagram, face_b).unwrap();
            assert_eq!(receive(&a).0, datagram.to_vec());
        }
        a.send_to(b"not recorded", face_a).unwrap();
        assert_eq!(receive(&b).0, b"not recorded".to_vec());
        assert_eq!(
            relay.take_recorded(1),
            vec![b"one".to_vec(), b"two".to_vec()]
        );
        assert!(relay.take_recorded(1).is_empty());

        relay.inject_after_next(1, 1, b"one".to_vec());
        assert_eq!(relay.injected_after(), None);
        // A datagram of the other direction does not set it off.
        a.send_to(b"a again", face_a).unwrap();
        assert_eq!(receive(&b).0, b"a again".to_vec());
        assert_eq!(relay.counters().injected, [0, 0]);
        b.send_to(b"hello", face_b).unwrap();
        assert_eq!(receive(&a).0, b"hello".to_vec());
        // The replay comes back to B from the address B takes for its peer's.
        assert_eq!(receive(&b), (b"one".to_vec(), face_b));
        assert_eq!(relay.injected_after(), Some(b"hello".to_vec()));
        // Once only.
        b.send_to(b"later", face_b).unwrap();
        assert_eq!(receive(&a).0, b"later".to_vec());
        assert_eq!(relay.counters().injected, [0, 1]);
        assert!(relay.take_recorded(1).is_empty());
    }
}
