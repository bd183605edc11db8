//! Tests of freshness across restarts: the echo, stale frames, hellos, and two ends that
//! start, restart and find each other.

use super::*;

/// What one end did with a datagram: the frame's length, a hello, or why it was refused.
type Outcome = Result<Option<usize>, Rejection>;

/// Hands `datagram` to `to` at `now`; a hello it answers with goes into `back`.
fn deliver(to: &mut Session, now: u64, datagram: &[u8], back: &mut Vec<Vec<u8>>) -> Outcome {
    let (opened, hello) = to.open(datagram);
    let mut out = Vec::new();
    if hello && to.hello(now, &mut out) {
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
    // (Datagrams sealed, from the counters: 100 frames and a hello; a hello.)
    let sealed: Vec<u64> = link
        .ends
        .iter()
        .zip([START, START + 5])
        .map(|(e, first)| e.sealer.counter - first)
        .collect();
    assert_eq!(sealed, [101, 1]);
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
    // A hello the receiver still owes the new peer (held back by the hello interval) goes.
    let _ = link.ends[1].hello(4000 * MS, &mut Vec::new());
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
    let mut hello = Vec::new();
    assert!(b.sealer.hello(0, 1, &mut hello));
    assert_eq!((hello[0], hello.len()), (HELLO | LONG, LONG_HEADER + 8));
    // At most HELLO_BURST back to back, then one per HELLO_EVERY.
    let mut again = Vec::new();
    for _ in 1..HELLO_BURST {
        assert!(b.sealer.hello(1, 1, &mut again));
    }
    again.clear();
    assert!(!b.sealer.hello(2, 1, &mut again));
    assert!(again.is_empty());
    assert_eq!(b.sealer.next_hello_at(), HELLO_EVERY);
    assert!(!b.sealer.hello(HELLO_EVERY - 1, 1, &mut again));
    assert!(b.sealer.hello(HELLO_EVERY, 1, &mut again));
    assert!(!b.sealer.hello(HELLO_EVERY + 1, 1, &mut again));
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
    assert!(a.hello(0, &mut Vec::new()), "the hello owed goes");
    let (r, wants_hello) = a.open(&hello);
    assert_eq!((r, wants_hello), (Err(Rejection::Replayed), false));
    assert_eq!((a.opener.peer_id(), a.opener.echo()), (Some(2), 2));
    // A hello that echoes no one (as at start) is taken from anyone and makes no one the peer.
    let mut asking = Vec::new();
    assert!(Sealer::new(&c, 5, START + 7).hello(0, 0, &mut asking));
    let mut d = Session::new(&c, 6, START + 8, 1500);
    assert_eq!(d.open(&asking), (Ok(Opened::Hello), true), "answered");
    assert_eq!((d.opener.peer_id(), d.opener.echo()), (None, 5));
    // Replayed to a restarted a (id 3): stale (it echoes a's earlier run). A flood of them draws
    // HELLO_BURST hellos, then one per HELLO_EVERY, sent to the configured peer, and changes the echo once.
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
    assert_eq!(
        back.len() as u64,
        HELLO_BURST + 1,
        "100 ms of replays: a burst, then one hello per 50 ms"
    );
    assert_eq!((a.opener.peer_id(), a.opener.echo()), (None, 2));
}

/// A restarted gateway's start: it owes a hello, which goes.
fn restart(link: &mut Link, end: usize, session: Session, now: u64) {
    link.ends[end] = session;
    link.ends[end].owe_hello();
    let mut out = Vec::new();
    assert!(link.ends[end].hello(now, &mut out));
    link.to[1 - end].push(out);
}

#[test]
fn a_long_frame_of_its_own_earlier_run_neither_wedges_a_restarted_end_nor_unpairs_it() {
    let c = config(8);
    // End 1's first run (id 2) starts a second after end 0 (id 1): its counters stay above
    // every counter end 0 sends. Both talk; an eavesdropper keeps one of end 1's long frames.
    let mut link = Link::new([
        Session::new(&c, 1, START, 1500),
        Session::new(&c, 2, START + 1_000_000_000, 1500),
    ]);
    let mut kept = Vec::new();
    for i in 0..200 {
        link.send(0, i as u64 * MS, i);
        link.send(1, i as u64 * MS, i);
        if i == 5 {
            kept = link.to[0].last().cloned().expect("end 1's frame");
        }
        link.settle(i as u64 * MS);
    }
    assert_ne!(kept[0] & LONG, 0, "end 1's first frames are long");
    assert_eq!((link.frames(0), link.frames(1)), (199, 199));
    // End 1 restarts (id 3); the moment its hello goes, the eavesdropper sends it the kept
    // frame of its own earlier run.
    restart(
        &mut link,
        1,
        Session::new(&c, 3, START + 2_000_000_000, 1500),
        300 * MS,
    );
    let mut back = Vec::new();
    assert_eq!(
        deliver(&mut link.ends[1], 300 * MS, &kept, &mut back),
        Err(Rejection::Stale)
    );
    link.to[0].extend(back);
    for outcomes in &mut link.outcomes {
        outcomes.clear();
    }
    // Both ends send; within two hello intervals each takes the other's, and every one after.
    let resumed = 400 + 2 * HELLO_EVERY / MS + 5;
    for i in 0..300 {
        let now = (400 + i as u64) * MS;
        link.send(0, now, i);
        link.send(1, now, i);
        link.settle(now);
        for end in 0..2 {
            let mut out = Vec::new();
            if link.ends[end].hello(now, &mut out) {
                link.to[1 - end].push(out);
            }
        }
        link.settle(now);
        if now >= resumed * MS {
            for end in 0..2 {
                let last = link.outcomes[end].iter().rev().find(|o| o != &&Ok(None));
                assert!(matches!(last, Some(Ok(Some(_)))), "{i}: {last:?}");
            }
        }
    }
    assert_eq!(link.ends[0].opener.peer_id(), Some(3));
    assert_eq!(link.ends[1].opener.peer_id(), Some(1));
    // Paired, the same replay changes no peer (a gateway restarts its codecs only when its
    // peer changes) and the frames go on.
    for end in 0..2 {
        let peer = link.ends[end].opener.peer_id();
        let _ = deliver(&mut link.ends[end], 800 * MS, &kept, &mut Vec::new());
        assert_eq!(link.ends[end].opener.peer_id(), peer);
    }
    let taken = (link.frames(0), link.frames(1));
    for i in 300..310 {
        let now = (800 + i as u64) * MS;
        link.send(0, now, i);
        link.send(1, now, i);
        link.settle(now);
    }
    assert_eq!(
        (link.frames(0), link.frames(1)),
        (taken.0 + 10, taken.1 + 10)
    );
}
