//! Tests of the serial transport over a socket pair standing in for the line.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

use super::*;

/// Two ends of a line, non-blocking, each a transport of `framing` at 115,200 baud; also the
/// raw far end of the first, to write noise into.
fn line(framing: Framing) -> (SerialTransport, SerialTransport) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    let file = |s: UnixStream| File::from(OwnedFd::from(s));
    (
        SerialTransport::new(file(a), 115_200, framing),
        SerialTransport::new(file(b), 115_200, framing),
    )
}

/// Everything `to` has received, in order: frames as their bytes, the rest as they are.
fn drain(to: &mut SerialTransport) -> Vec<Result<Vec<u8>, Incoming>> {
    let mut buffer = vec![0u8; 4096];
    let mut out = Vec::new();
    while let Some(incoming) = to.receive(&mut buffer).unwrap() {
        out.push(match incoming {
            Incoming::Frame { len, from_peer } => {
                assert!(from_peer);
                Ok(buffer[..len].to_vec())
            }
            other => Err(other),
        });
    }
    out
}

fn framings() -> [Framing; 4] {
    [
        Framing::hdlc(Fcs::Fcs16, 2048),
        Framing::hdlc(Fcs::Fcs32, 2048),
        Framing::kiss(0, Fcs::Fcs32, 2048),
        Framing::kiss(3, Fcs::Fcs16, 2048),
    ]
}

#[test]
fn link_frames_cross_the_line_exactly_whatever_their_bytes() {
    for framing in framings() {
        let (mut a, mut b) = line(framing);
        let frames: Vec<Vec<u8>> = (0..40u16)
            .map(|i| {
                (0..(1 + i as usize * 37))
                    .map(|j| (j as u16 * 31 + i) as u8 ^ [0x7E, 0x7D, 0xC0, 0xDB][j % 4])
                    .collect()
            })
            .collect();
        for f in &frames {
            assert!(a.send(0, f));
        }
        let got = drain(&mut b);
        let want: Vec<Result<Vec<u8>, Incoming>> = frames.iter().cloned().map(Ok).collect();
        assert_eq!(got, want, "{framing:?}");
        let [sent, _] = a.medium_bytes();
        let [_, received] = b.medium_bytes();
        assert_eq!(sent, received);
        let payload: usize = frames.iter().map(Vec::len).sum();
        assert!(
            sent as usize > payload + frames.len() * 3,
            "framing counted"
        );
    }
}

#[test]
fn noise_damage_and_frames_not_ours_are_refused_by_reason() {
    for framing in framings() {
        let (mut a, mut b) = line(framing);
        // Garbage before the first frame, then a good frame.
        a.line.write_all(&[1, 2, 3, 4, 5]).unwrap();
        assert!(a.send(0, &[0x41, 1, 2, 3]));
        // A frame damaged on the line: one bit of its content flipped.
        a.encoded.clear();
        match &framing {
            Framing::Hdlc(c) => hdlc::encode(0x41, &[9, 9, 9, 9], c, &mut a.encoded),
            Framing::Kiss(c) => kiss::encode(0x41, &[9, 9, 9, 9], c, &mut a.encoded),
        }
        let mut damaged = a.encoded.clone();
        damaged[3] ^= 0x10;
        a.line.write_all(&damaged).unwrap();
        // A runt: a delimited frame of one byte.
        let runt: &[u8] = match framing {
            Framing::Hdlc(_) => &[0x7E, 0x41, 0x7E],
            Framing::Kiss(c) => &[0xC0, c.command(), 0x41, 0xC0],
        };
        a.line.write_all(runt).unwrap();
        // And a good one after all that.
        assert!(a.send(0, &[0x42, 7, 7]));
        let got = drain(&mut b);
        assert_eq!(
            got.first(),
            Some(&Err(Incoming::Refused(Rejection::Garbage))),
            "{framing:?}"
        );
        assert!(
            got.contains(&Ok(vec![0x41, 1, 2, 3])),
            "{framing:?} {got:?}"
        );
        assert!(got.contains(&Err(Incoming::Damaged)), "{framing:?} {got:?}");
        assert!(
            got.contains(&Err(Incoming::Refused(Rejection::Runt))),
            "{framing:?} {got:?}"
        );
        assert_eq!(got.last(), Some(&Ok(vec![0x42, 7, 7])), "{framing:?}");
        assert!(!got.contains(&Ok(vec![0x41, 9, 9, 9, 9])));
    }
    // KISS: a frame for another TNC port is not ours.
    let (mut a, mut b) = line(Framing::kiss(1, Fcs::Fcs32, 2048));
    let mut other = Vec::new();
    kiss::encode(
        0x41,
        &[5],
        &kiss::Config {
            port: 2,
            ..kiss::Config::default()
        },
        &mut other,
    );
    a.line.write_all(&other).unwrap();
    assert_eq!(
        drain(&mut b),
        vec![Err(Incoming::Refused(Rejection::NotOurs))]
    );
}

#[test]
fn the_line_is_busy_for_as_long_as_its_baud_rate_says() {
    let (mut a, _b) = line(Framing::hdlc(Fcs::Fcs16, 2048));
    assert_eq!(a.free_at(), 0);
    assert!(a.send(1_000, &[0x41; 100]));
    let [sent, _] = a.medium_bytes();
    // 115,200 baud, ten bits a byte: 86,805 ns a byte (rounded down).
    assert_eq!(a.free_at(), 1_000 + sent * 86_805);
    // A frame sent while the line is busy queues behind the first.
    let busy = a.free_at();
    assert!(a.send(2_000, &[0x41; 10]));
    let [after, _] = a.medium_bytes();
    assert_eq!(a.free_at(), busy + (after - sent) * 86_805);
}

#[test]
fn only_ttys_are_opened_and_unknown_rates_are_refused() {
    let e = open_line(Path::new("/dev/null"), 9600).unwrap_err();
    assert!(e.to_string().contains("setting up"), "{e}");
    let e = open_line(Path::new("/"), 9600).unwrap_err();
    assert!(e.to_string().contains("not a character device"), "{e}");
    let e = open_line(Path::new("/dev/null"), 9601).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("115200"), "{e}");
    let e = open_line(Path::new("/nonexistent/tty"), 9600).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/tty"), "{e}");
}
