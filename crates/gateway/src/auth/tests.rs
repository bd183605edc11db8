//! Tests of the link's authentication: forms, tags, forgery, replay and restarts.

use super::*;

mod adversary;
mod restarts;

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
        // Every kind byte a codec may send, the profiles' own (0x08..=0x7F) included.
        let kinds: Vec<FrameKind> = (0..=0x7F).filter_map(FrameKind::from_byte).collect();
        assert_eq!(kinds.len(), 0x7F);
        for (i, kind) in kinds.iter().cycle().take(300).enumerate() {
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
    assert_eq!(FrameKind::from_byte(HELLO), None);
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
    // frame cannot echo the receiver yet: stale, but it makes the new run the candidate.
    let mut after = Sealer::new(&c, 11, START + 1_000_000_000);
    assert_eq!(
        opens(&mut opener, &seal(&mut after, 0, 0)),
        Err(Rejection::Stale)
    );
    assert_eq!(
        (opener.peer_id(), opener.candidate_id()),
        (Some(10), Some(11))
    );
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
