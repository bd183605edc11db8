//! Tests of the link's authentication: forms, tags, forgery, replay and restarts.

use super::*;

const START: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;

fn config(tag_len: usize) -> AuthConfig {
    AuthConfig {
        key: Key::from_bytes([7; KEY_LEN]),
        tag_len,
    }
}

/// A sender (id 1) and a receiver (id 2) sharing a key, with frames of up to 1500 bytes; the
/// sender has heard the receiver (its long frames echo id 2).
fn pair(tag_len: usize) -> (Sealer, Opener) {
    let c = config(tag_len);
    let mut sealer = Sealer::new(&c, 1, START);
    sealer.set_echo(2);
    (sealer, Opener::new(&c, 2, 1500))
}

/// Seals frame `i` at `now` (a distinct frame per `i`).
fn seal(sealer: &mut Sealer, now: u64, i: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let frame = vec![i as u8; 20 + i % 50];
    sealer.seal(now, FrameKind::CompressedTcp, &frame, &mut out);
    out
}

/// The length of the frame `datagram` carries, or why it was refused.
fn opens(opener: &mut Opener, datagram: &[u8]) -> Result<usize, Rejection> {
    opener.open(datagram).map(|opened| match opened {
        Opened::Frame(_, frame) => frame.len(),
        Opened::Hello => panic!("a hello where a frame was expected"),
    })
}

#[test]
fn round_trip_every_kind_and_tag_length_and_the_forms_as_scheduled() {
    for tag_len in TAG_LENS {
        let (mut sealer, mut opener) = pair(tag_len);
        let mut longs = Vec::new();
        for (i, kind) in FrameKind::ALL.iter().cycle().take(300).enumerate() {
            // 1 ms apart, with one pause of 250 ms before frame 200.
            let now = i as u64 * MS + if i >= 200 { 250 * MS } else { 0 };
            let frame: Vec<u8> = (0..i % 40).map(|b| b as u8).collect();
            let mut out = Vec::new();
            sealer.seal(now, *kind, &frame, &mut out);
            let long = out[0] & LONG != 0;
            let header = if long { LONG_HEADER } else { SHORT_HEADER };
            assert_eq!(out.len(), header + frame.len() + tag_len);
            if long {
                longs.push(i);
            }
            assert_eq!(
                opener.open(&out),
                Ok(Opened::Frame(*kind, &frame[..])),
                "frame {i}"
            );
        }
        let expected: Vec<usize> = (0..16).chain([64, 128, 192, 200, 256]).collect();
        assert_eq!(longs, expected);
        assert_eq!(opener.peer_id(), Some(1));
    }
}

#[test]
fn a_flipped_bit_anywhere_is_refused_and_changes_nothing() {
    let (mut sealer, mut opener) = pair(8);
    let datagrams: Vec<Vec<u8>> = (0..20)
        .map(|i| seal(&mut sealer, i * MS, i as usize))
        .collect();
    assert!(opens(&mut opener, &datagrams[0]).is_ok());
    // Frame 1 is long (one of the first 16), frame 17 short.
    assert_eq!((datagrams[1][0] & LONG, datagrams[17][0] & LONG), (LONG, 0));
    for d in [&datagrams[1], &datagrams[17]] {
        for byte in 0..d.len() {
            for bit in 0..8 {
                let mut forged = d.clone();
                forged[byte] ^= 1 << bit;
                let r = opens(&mut opener, &forged);
                assert!(
                    matches!(
                        r,
                        Err(Rejection::Forged | Rejection::Unsynced | Rejection::Malformed)
                    ),
                    "byte {byte} bit {bit}: {r:?}"
                );
            }
        }
    }
    // The genuine frames still open: nothing forged moved the window.
    for d in &datagrams[1..] {
        assert!(opens(&mut opener, d).is_ok());
    }
}

#[test]
fn forged_tags_and_a_wrong_key_are_refused() {
    let (mut sealer, mut opener) = pair(8);
    let long = seal(&mut sealer, 0, 0);
    let mut other = Sealer::new(
        &AuthConfig {
            key: Key::from_bytes([8; KEY_LEN]),
            tag_len: 8,
        },
        1,
        START,
    );
    assert_eq!(
        opens(&mut opener, &seal(&mut other, 0, 0)),
        Err(Rejection::Forged)
    );
    let mut zero_tag = long.clone();
    let n = zero_tag.len();
    zero_tag[n - 8..].fill(0);
    assert_eq!(opens(&mut opener, &zero_tag), Err(Rejection::Forged));
    assert!(opens(&mut opener, &long).is_ok());
    // A tag of another length does not verify either.
    let (mut sealer16, _) = pair(16);
    let mut d = seal(&mut sealer16, 0, 3);
    d.truncate(d.len() - 8);
    assert_eq!(opens(&mut opener, &d), Err(Rejection::Forged));
}

#[test]
fn truncated_malformed_and_oversize_datagrams_are_refused() {
    let (mut sealer, mut opener) = pair(8);
    let long = seal(&mut sealer, 0, 0);
    for len in 0..LONG_HEADER + 8 {
        assert_eq!(opens(&mut opener, &long[..len]), Err(Rejection::Malformed));
    }
    // A shorter frame whose tag is cut: the tag does not verify.
    assert_eq!(
        opens(&mut opener, &long[..long.len() - 1]),
        Err(Rejection::Forged)
    );
    for kind in (7..=0x7f).filter(|&b| FrameKind::from_byte(b).is_none()) {
        assert_eq!(opens(&mut opener, &[kind; 40]), Err(Rejection::Malformed));
        assert_eq!(
            opens(&mut opener, &[kind | LONG; 40]),
            Err(Rejection::Malformed)
        );
    }
    let mut big = Vec::new();
    sealer.seal(MS, FrameKind::Ip, &[0; 1501], &mut big);
    assert_eq!(opens(&mut opener, &big), Err(Rejection::Oversize));
    sealer.seal(2 * MS, FrameKind::Ip, &[0; 1500], &mut big);
    assert_eq!(opens(&mut opener, &big), Ok(1500));
}

#[test]
fn replays_are_refused_within_and_beyond_the_window() {
    let (mut sealer, mut opener) = pair(8);
    let datagrams: Vec<Vec<u8>> = (0..3000)
        .map(|i| seal(&mut sealer, i as u64 * MS, i))
        .collect();
    // Every other frame first, then the rest out of order (within the window): all accepted.
    for d in datagrams.iter().step_by(2) {
        assert!(opens(&mut opener, d).is_ok());
    }
    for d in datagrams.iter().skip(2001).step_by(2) {
        assert!(opens(&mut opener, d).is_ok());
    }
    // Seen already, or older than the window (highest: frame 2999), short or long; the
    // unseen ones within the window are still accepted, once.
    for (i, d) in datagrams.iter().enumerate() {
        let r = opens(&mut opener, d);
        if i % 2 == 1 && i <= 2000 && 2999 - i < WINDOW as usize {
            assert!(r.is_ok(), "frame {i}: {r:?}");
            assert_eq!(opens(&mut opener, d), Err(Rejection::Replayed));
        } else {
            assert_eq!(r, Err(Rejection::Replayed), "frame {i}");
        }
    }
}

#[test]
fn reflected_frames_are_refused() {
    let c = config(8);
    let mut ours = Sealer::new(&c, 2, START + 5);
    let mut opener = Opener::new(&c, ours.id(), 1500);
    let own = seal(&mut ours, 0, 0);
    assert_eq!(opens(&mut opener, &own), Err(Rejection::Reflected));
    assert_eq!(opener.peer_id(), None);
}

#[test]
fn an_old_long_frame_after_a_sender_restart_is_refused() {
    let c = config(8);
    let mut before = Sealer::new(&c, 10, START);
    before.set_echo(2);
    let mut opener = Opener::new(&c, 2, 1500);
    let old: Vec<Vec<u8>> = (0..100)
        .map(|i| seal(&mut before, i * MS, i as usize))
        .collect();
    for d in &old {
        assert!(opens(&mut opener, d).is_ok());
    }
    // The sender restarts one second later: a new id, a counter above the old ones. Its first
    // frame cannot echo the receiver yet: stale, but it makes the new run the echo candidate.
    let mut after = Sealer::new(&c, 11, START + 1_000_000_000);
    assert_eq!(
        opens(&mut opener, &seal(&mut after, 0, 0)),
        Err(Rejection::Stale)
    );
    assert_eq!((opener.peer_id(), opener.echo()), (Some(10), 11));
    // Once it has heard the receiver, its frames are accepted.
    after.set_echo(2);
    assert!(opens(&mut opener, &seal(&mut after, MS, 1)).is_ok());
    assert_eq!(opener.peer_id(), Some(11));
    // Old long frames replayed now cannot take the state back, though they echo the receiver;
    // old short ones fail.
    for d in &old {
        let r = opens(&mut opener, d);
        if d[0] & LONG != 0 {
            assert_eq!(r, Err(Rejection::Replayed));
        } else {
            assert_eq!(r, Err(Rejection::Unsynced));
        }
    }
    assert_eq!((opener.peer_id(), opener.echo()), (Some(11), 11));
    for i in 2..200 {
        assert!(opens(&mut opener, &seal(&mut after, i * MS, i as usize)).is_ok());
    }
}

/// What one end did with a datagram: the frame's length, a hello, or why it was refused.
type Outcome = Result<Option<usize>, Rejection>;

/// Hands `datagram` to `to` at `now`; a hello it answers with goes into `back`.
fn deliver(to: &mut Session, now: u64, datagram: &[u8], back: &mut Vec<Vec<u8>>) -> Outcome {
    let (opened, hello) = to.open(datagram);
    let mut out = Vec::new();
    if hello && to.sealer.hello(now, &mut out) {
        back.push(out);
    }
    opened.map(|opened| match opened {
        Opened::Frame(_, frame) => Some(frame.len()),
        Opened::Hello => None,
    })
}

/// Two gateways' ends and the datagrams on their way between them (`to[i]`: to end `i`).
struct Link {
    ends: [Session; 2],
    to: [Vec<Vec<u8>>; 2],
    /// What each end did with what it received, in order.
    outcomes: [Vec<Outcome>; 2],
}

impl Link {
    fn new(ends: [Session; 2]) -> Link {
        Link {
            ends,
            to: [Vec::new(), Vec::new()],
            outcomes: [Vec::new(), Vec::new()],
        }
    }

    /// End `from` sends frame `i` at `now`.
    fn send(&mut self, from: usize, now: u64, i: usize) {
        let d = seal(&mut self.ends[from].sealer, now, i);
        self.to[1 - from].push(d);
    }

    /// Delivers everything on its way, and what that draws, at `now`.
    fn settle(&mut self, now: u64) {
        while !self.to[0].is_empty() || !self.to[1].is_empty() {
            for i in 0..2 {
                for d in std::mem::take(&mut self.to[i]) {
                    let (end, back) = (&mut self.ends[i], &mut self.to[1 - i]);
                    let outcome = deliver(end, now, &d, back);
                    self.outcomes[i].push(outcome);
                }
            }
        }
    }

    /// The frames end `i` accepted (hellos left out).
    fn frames(&self, i: usize) -> usize {
        self.outcomes[i]
            .iter()
            .filter(|o| matches!(o, Ok(Some(_))))
            .count()
    }
}

#[test]
fn a_fresh_receiver_refuses_a_replayed_long_frame_of_an_earlier_run_and_its_later_frames() {
    // The gap of the first version: a receiver that restarted accepted the first long frame
    // of any run of the peer, and that run's later frames. An earlier run of the peer (id 10)
    // talks to the receiver's earlier run (id 2); an attacker records everything.
    let c = config(8);
    let mut earlier = Sealer::new(&c, 10, START);
    earlier.set_echo(2);
    let mut receiver = Opener::new(&c, 2, 1500);
    let recorded: Vec<Vec<u8>> = (0..300)
        .map(|i| seal(&mut earlier, i * MS, i as usize))
        .collect();
    for d in &recorded {
        assert!(opens(&mut receiver, d).is_ok());
    }
    // Both restart; the attacker replays the recording to the new receiver (id 3) before
    // the peer's new run (id 11) says anything: every long frame is stale (it echoes the
    // receiver's earlier run), every short one unsynced; nothing is accepted.
    let mut receiver = Opener::new(&c, 3, 1500);
    for d in &recorded {
        let r = opens(&mut receiver, d);
        let expected = if d[0] & LONG != 0 {
            Rejection::Stale
        } else {
            Rejection::Unsynced
        };
        assert_eq!(r, Err(expected));
    }
    assert_eq!((receiver.peer_id(), receiver.echo()), (None, 10));
    // The peer's new run takes over the echo; the recording replayed again still gets
    // nowhere and cannot take the echo back.
    let mut current = Sealer::new(&c, 11, START + 1_000_000_000);
    assert_eq!(
        opens(&mut receiver, &seal(&mut current, 0, 0)),
        Err(Rejection::Stale)
    );
    assert_eq!(receiver.echo(), 11);
    current.set_echo(3);
    assert!(opens(&mut receiver, &seal(&mut current, MS, 1)).is_ok());
    for d in &recorded {
        assert!(opens(&mut receiver, d).is_err());
    }
    assert_eq!((receiver.peer_id(), receiver.echo()), (Some(11), 11));
}

#[test]
fn two_fresh_ends_converge_within_one_frame_each_way() {
    let c = config(8);
    // Traffic one way only: the receiver answers only with hellos.
    let mut link = Link::new([
        Session::new(&c, 1, START, 1500),
        Session::new(&c, 2, START + 5, 1500),
    ]);
    for i in 0..100 {
        link.send(0, i as u64 * MS, i);
        link.settle(i as u64 * MS);
    }
    let received = &link.outcomes[1];
    assert_eq!(received[0], Err(Rejection::Stale), "{received:?}");
    assert_eq!(link.frames(1), 99, "{received:?}");
    assert_eq!(link.ends[1].opener.peer_id(), Some(1));
    assert_eq!(link.ends[0].opener.peer_id(), Some(2));
    // Hellos: the receiver's answer to the stale frame, the sender's answer to that.
    let hellos: Vec<u64> = link.ends.iter().map(|e| e.sealer.sent).collect();
    assert_eq!(hellos, [101, 1]);
    // Both ways at once: each refuses the other's first frame, no more.
    let mut link = Link::new([
        Session::new(&c, 1, START, 1500),
        Session::new(&c, 2, START + 5, 1500),
    ]);
    for i in 0..100 {
        link.send(0, i as u64 * MS, i);
        link.send(1, i as u64 * MS, i);
        link.settle(i as u64 * MS);
    }
    assert_eq!((link.frames(0), link.frames(1)), (99, 99));
    for outcomes in &link.outcomes {
        let refused = outcomes.iter().filter(|o| o.is_err()).count();
        assert!(refused <= 2, "{outcomes:?}");
    }
}

/// Two ends that have talked: end 0 (id 1) has sent end 1 (id 2) 1000 frames.
fn talking(c: &AuthConfig) -> Link {
    let mut link = Link::new([
        Session::new(c, 1, START, 1500),
        Session::new(c, 2, START + 5, 1500),
    ]);
    for i in 0..1000 {
        link.send(0, i as u64 * MS, i);
        link.settle(i as u64 * MS);
    }
    assert_eq!(link.frames(1), 999);
    link
}

#[test]
fn a_restarted_receiver_resyncs_at_the_first_frame_after_its_hello_is_answered() {
    let c = config(8);
    let mut link = talking(&c);
    // The receiver restarts (id 3); the sender's next frames are short.
    link.ends[1] = Session::new(&c, 3, START + 2_000_000_000, 1500);
    link.outcomes[1].clear();
    for i in 1000..1100 {
        let now = i as u64 * MS;
        link.send(0, now, i);
        link.settle(now);
    }
    // The first short frame is unsynced and draws a hello, which the sender answers: the
    // next frame (long, its echo changed) is accepted, and every one after it.
    assert_eq!(link.outcomes[1][0], Err(Rejection::Unsynced));
    assert_eq!(link.frames(1), 99, "{:?}", link.outcomes[1]);
    assert_eq!(link.ends[1].opener.peer_id(), Some(1));
    // The sender has heard the new run (its echo); it takes it as its peer once that run's
    // frames come (its answer to the sender's hello waited for the hello interval).
    assert_eq!(link.ends[0].opener.echo(), 3);
    // After a pause the next frame is long, whatever its number: a receiver restarted
    // meanwhile hears the sender's first frame as stale, and the second.
    link.ends[1] = Session::new(&c, 4, START + 3_000_000_000, 1500);
    link.outcomes[1].clear();
    for i in 0..3 {
        let now = 5000 * MS + i as u64 * MS;
        link.send(0, now, i);
        link.settle(now);
    }
    assert_eq!(link.outcomes[1][0], Err(Rejection::Stale));
    assert_eq!(link.frames(1), 2, "{:?}", link.outcomes[1]);
}

#[test]
fn a_restarted_sender_is_accepted_once_its_frames_echo_the_receiver() {
    let c = config(8);
    let mut link = talking(&c);
    // What the sender's first run sent, recorded.
    let mut recorded = Vec::new();
    for i in 1000..1100 {
        let now = i as u64 * MS;
        link.send(0, now, i);
        recorded.push(link.to[1][0].clone());
        link.settle(now);
    }
    // The sender restarts (id 11): its first frame is stale, draws a hello, and the sender's
    // answer makes it the peer; its second frame is accepted.
    link.ends[0] = Session::new(&c, 11, START + 2_000_000_000, 1500);
    link.outcomes[1].clear();
    for i in 0..50 {
        let now = (3000 + i as u64) * MS;
        link.send(0, now, i);
        link.settle(now);
    }
    assert_eq!(link.outcomes[1][0], Err(Rejection::Stale));
    assert_eq!(link.frames(1), 49, "{:?}", link.outcomes[1]);
    assert_eq!(link.ends[1].opener.peer_id(), Some(11));
    // The first run's frames replayed: refused, the peer and echo unchanged.
    let mut back = Vec::new();
    for d in &recorded {
        let r = deliver(&mut link.ends[1], 4000 * MS, d, &mut back);
        assert!(
            matches!(r, Err(Rejection::Replayed | Rejection::Unsynced)),
            "{r:?}"
        );
    }
    assert!(back.is_empty(), "replays drew hellos");
    assert_eq!(link.ends[1].opener.peer_id(), Some(11));
    assert_eq!(link.ends[1].opener.echo(), 11);
}

#[test]
fn hellos_are_authenticated_replay_checked_and_never_frames() {
    let c = config(8);
    let mut a = Session::new(&c, 1, START, 1500);
    let mut b = Session::new(&c, 2, START + 5, 1500);
    b.sealer.set_echo(1);
    let mut hello = Vec::new();
    assert!(b.sealer.hello(0, &mut hello));
    assert_eq!((hello[0], hello.len()), (HELLO | LONG, LONG_HEADER + 8));
    // At most one per HELLO_EVERY.
    let mut again = Vec::new();
    assert!(!b.sealer.hello(HELLO_EVERY - 1, &mut again));
    assert!(again.is_empty());
    // Forged, short, or with content: refused before the tag or by it.
    let mut forged = hello.clone();
    forged[20] ^= 1;
    assert_eq!(a.opener.open(&forged), Err(Rejection::Forged));
    assert_eq!(
        a.opener.open(&[HELLO, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        Err(Rejection::Malformed)
    );
    let mut padded = hello.clone();
    padded.insert(LONG_HEADER, 0);
    assert_eq!(a.opener.open(&padded), Err(Rejection::Malformed));
    // Genuine: a hello, nothing for a codec; it makes b the peer (it echoes a).
    assert_eq!(
        a.open(&hello),
        (Ok(Opened::Hello), true),
        "the echo changed"
    );
    assert_eq!(a.opener.peer_id(), Some(2));
    // Replayed: refused, nothing changes, and it draws no hello from an end that has its peer.
    let (r, wants_hello) = a.open(&hello);
    assert_eq!((r, wants_hello), (Err(Rejection::Replayed), false));
    assert_eq!((a.opener.peer_id(), a.opener.echo()), (Some(2), 2));
    // A hello that echoes no one (as at start) is taken from anyone and makes no one the peer.
    let mut asking = Vec::new();
    assert!(Sealer::new(&c, 5, START + 7).hello(0, &mut asking));
    let mut d = Session::new(&c, 6, START + 8, 1500);
    assert_eq!(d.open(&asking), (Ok(Opened::Hello), true), "answered");
    assert_eq!((d.opener.peer_id(), d.opener.echo()), (None, 5));
    // Replayed to a restarted a (id 3): stale (it echoes a's earlier run). A flood of them draws one hello per
    // HELLO_EVERY, sent to the configured peer, and changes the echo once.
    let mut a = Session::new(&c, 3, START + 9, 1500);
    let mut back = Vec::new();
    for k in 0..100 {
        let r = deliver(&mut a, k * MS, &hello, &mut back);
        let expected = if k == 0 {
            Rejection::Stale
        } else {
            Rejection::Replayed
        };
        assert!(
            r == Err(expected) || r == Err(Rejection::Stale),
            "{k}: {r:?}"
        );
    }
    assert_eq!(back.len(), 2, "100 ms of replays, one hello per 50 ms");
    assert_eq!((a.opener.peer_id(), a.opener.echo()), (None, 2));
}

#[test]
fn short_counters_are_rebuilt_across_the_16_bit_wrap() {
    // A sealer whose counter starts just below a multiple of 2^16, losing frames.
    let c = config(8);
    let mut sealer = Sealer::new(&c, 1, 0xabcd_0000_ffc0);
    sealer.set_echo(2);
    let mut opener = Opener::new(&c, 2, 1500);
    for i in 0..500u64 {
        let d = seal(&mut sealer, i * MS, i as usize);
        if i % 7 != 3 {
            assert!(opens(&mut opener, &d).is_ok(), "frame {i}");
        }
    }
}

/// The tag by the module doc's formula, with BLAKE3's streaming XOF interface.
fn documented_tag(
    tag_len: usize,
    id: u64,
    counter: u64,
    kind: u8,
    echo: Option<u64>,
    frame: &[u8],
) -> Vec<u8> {
    let mac_key = blake3::derive_key(KEY_CONTEXT, &[7; KEY_LEN]);
    let mut hasher = blake3::Hasher::new_keyed(&mac_key);
    hasher.update(&[tag_len as u8]);
    hasher.update(&id.to_be_bytes());
    hasher.update(&counter.to_be_bytes());
    hasher.update(&[kind]);
    if let Some(echo) = echo {
        hasher.update(&echo.to_be_bytes());
    }
    hasher.update(frame);
    let mut tag = vec![0; tag_len];
    hasher.finalize_xof().fill(&mut tag);
    tag
}

#[test]
fn tags_follow_the_documented_formula_in_both_forms_at_every_length() {
    // Frame lengths around BLAKE3's 64-byte blocks and 1024-byte chunks (with the 18 or 26
    // bytes hashed before the frame).
    for len in [
        0, 1, 45, 46, 47, 110, 1005, 1006, 1007, 1500, 2030, 2031, 4000,
    ] {
        let frame: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
        for tag_len in [4, 8, 13, 16] {
            let mut sealer = Sealer::new(&config(tag_len), 0x0102_0304_0506_0708, START);
            sealer.set_echo(2);
            let mut opener = Opener::new(&config(tag_len), 2, 4000);
            let mut out = Vec::new();
            for i in 0..=LONG_AT_START {
                sealer.seal(i * MS, FrameKind::Ip, &frame, &mut out);
                let form = (out[0] & LONG, out.len() - len - tag_len);
                let expected = if i < LONG_AT_START {
                    (LONG, LONG_HEADER)
                } else {
                    (0, SHORT_HEADER)
                };
                assert_eq!(form, expected, "frame {i}");
                let echo = (out[0] & LONG != 0).then_some(2);
                let tag = documented_tag(
                    tag_len,
                    0x0102_0304_0506_0708,
                    START + i,
                    out[0],
                    echo,
                    &frame,
                );
                assert_eq!(
                    &out[out.len() - tag_len..],
                    &tag[..],
                    "len {len} tag {tag_len}"
                );
                assert_eq!(opens(&mut opener, &out), Ok(len));
            }
        }
    }
}

#[test]
fn a_datagram_is_byte_for_byte_what_version_2_sent() {
    // Sealed by the implementation this format (v2, with the echo) shipped with: a change
    // here is a change of the wire format, which must change KEY_CONTEXT.
    let mut sealer = Sealer::new(&config(8), 0x0102_0304_0506_0708, START);
    sealer.set_echo(0x1112_1314_1516_1718);
    let mut out = Vec::new();
    sealer.seal(0, FrameKind::CompressedTcp, b"taroc", &mut out);
    let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "82010203040506070817979cfe362a000011121314151617187461726f63669295a1344c3749"
    );
}

#[test]
fn keys_parse_from_hex_and_errors_do_not_show_the_key() {
    let key = Key::from_bytes(core::array::from_fn(|i| i as u8 * 7));
    let text = format!("{}\n", key.to_hex());
    assert_eq!(text.len(), 65);
    assert_eq!(Key::parse(&text), Ok(key.clone()));
    assert_eq!(Key::parse(&text.to_uppercase()), Ok(key.clone()));
    assert_eq!(format!("{key:?}"), "Key(..)");
    let e = Key::parse("abc").unwrap_err();
    assert!(e.contains("found 3 characters"), "{e}");
    let mut bad = key.to_hex();
    bad.replace_range(10..11, "g");
    let e = Key::parse(&bad).unwrap_err();
    assert!(e.contains("position 11") && !e.contains(&bad), "{e}");
    assert!(Key::parse(&format!("{}0", key.to_hex())).is_err());
    assert!(config(3).check().is_err() && config(17).check().is_err());
    assert!(config(4).check().is_ok() && config(16).check().is_ok());
    assert_eq!(config(8).max_overhead(), 33);
}
