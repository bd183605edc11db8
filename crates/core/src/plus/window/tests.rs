//! Tests of the window scan: its needs against an entry-by-entry scan, on random windows and
//! along a realistic flow, and the exactness of its divider.

use super::*;
use crate::encoding::wlsb::signed_distance;
use crate::tcp::vsw::{Entry, Progress};

/// [`needs`] computed the plain way: every entry in turn, every distance by
/// [`signed_distance`].
fn needs_entry_by_entry(
    vsw: &Vsw<DerivedColumns>,
    f: &Fields,
    strides: Strides,
    b: Behaviour,
) -> Needs {
    let add = |s: &mut Span, d: i64| {
        if d >= 0 {
            s.up = s.up.max(d.unsigned_abs() as u32);
        } else {
            s.down = s.down.max(d.unsigned_abs() as u32);
        }
    };
    let (sd, ad) = (u32::from(strides.seq.max(1)), u32::from(strides.ack.max(1)));
    let offset = |g: &Fields| {
        let qs = if strides.seq != 0 { g.seq / sd } else { 0 };
        ipid::offset(b.counter(g.ip_id), qs)
    };
    let gap = |g: &Fields| g.ts_val.wrapping_sub(g.ts_ecr);
    let mut n = Needs::default();
    let (mut sq, mut aq) = (Span::default(), Span::default());
    let (mut s_al, mut a_al) = (strides.seq != 0, strides.ack != 0);
    for e in vsw.entries() {
        let g = &e.fields;
        add(&mut n.seq, signed_distance(f.seq, g.seq, 32));
        add(&mut n.ack, signed_distance(f.ack, g.ack, 32));
        add(&mut n.ts_val, signed_distance(f.ts_val, g.ts_val, 32));
        add(&mut n.ts_ecr, signed_distance(f.ts_ecr, g.ts_ecr, 32));
        add(&mut n.ts_gap, signed_distance(gap(f), gap(g), 32));
        if b.is_counter() {
            add(
                &mut n.ip_id,
                signed_distance(offset(f).into(), offset(g).into(), 16),
            );
        }
        add(&mut n.win, signed_distance(f.win.into(), g.win.into(), 16));
        s_al &= g.seq % sd == f.seq % sd;
        add(&mut sq, i64::from(f.seq / sd) - i64::from(g.seq / sd));
        a_al &= g.ack % ad == f.ack % ad;
        add(&mut aq, i64::from(f.ack / ad) - i64::from(g.ack / ad));
    }
    n.seq_scaled = s_al.then_some(sq);
    n.ack_scaled = a_al.then_some(aq);
    n
}

#[test]
fn needs_match_the_entry_by_entry_scan() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let behaviours = [
        Behaviour::Sequential,
        Behaviour::Swapped,
        Behaviour::Zero,
        Behaviour::Random,
    ];
    for round in 0..400u32 {
        // Small spreads (aligned, near) and wild ones (wrapping, misaligned) alike.
        let spread = [1u64 << 8, 1 << 20, 1 << 32][round as usize % 3];
        let stride = [0u16, 1, 1448, 2896, 536][round as usize % 5];
        let base = next() as u32;
        let field = |r: u64| base.wrapping_add((r % spread) as u32);
        let mut fields = || Fields {
            seq: match field(next()) {
                s if round % 2 == 0 => s / u32::from(stride.max(1)) * u32::from(stride.max(1)),
                s => s,
            },
            ack: field(next()),
            win: next() as u16 % 8,
            ip_id: next() as u16,
            ts_val: field(next()),
            ts_ecr: field(next()),
        };
        let strides = Strides {
            seq: stride,
            ack: [0u16, 1, 1448][round as usize % 3],
        };
        let b = behaviours[round as usize % 4];
        let scaling = Scaling {
            strides,
            behaviour: b,
        };
        // The window's extras derived under the context's scaling, under another one (a
        // replicated context codes against another's window), or under another and then
        // derived anew (the context's strides or behaviour changed).
        let other = Scaling {
            strides: Strides { seq: 0, ack: 536 },
            behaviour: behaviours[(round as usize + 1) % 4],
        };
        let mode = (round as usize / 5) % 3;
        let pushed_by = [scaling, other, other][mode];
        let mut vsw = Vsw::with_extras(32, Progress::SincePush);
        for _ in 0..round % 33 {
            let fields = fields();
            let extra = Scaler::new(pushed_by).derive(&fields);
            vsw.push_with(
                Entry {
                    fields,
                    has_payload: true,
                    uncompressed: false,
                },
                extra,
            );
        }
        let mut derived_by = pushed_by;
        if mode == 2 {
            rescale(&mut vsw, &Scaler::new(scaling));
            derived_by = scaling;
        }
        let f = fields();
        assert_eq!(
            {
                let scaler = Scaler::new(scaling);
                needs(&vsw, derived_by, &f, &scaler.derive(&f), &scaler, true)
            },
            needs_entry_by_entry(&vsw, &f, strides, b),
            "round {round}"
        );
    }
}

/// A flow's window as the compressor keeps it (mostly rising numbers, some going back, full
/// windows evicting, pruning from the front and the middle): at every packet, the needs
/// with the window's kept column order are those of the entry-by-entry scan.
#[test]
fn kept_column_order_gives_the_needs_of_the_scan() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..60u32 {
        let stride = [0u16, 1448, 536][round as usize % 3];
        let b = [Behaviour::Sequential, Behaviour::Zero][round as usize % 2];
        let scaling = Scaling {
            strides: Strides {
                seq: stride,
                ack: 0,
            },
            behaviour: b,
        };
        let scaler = Scaler::new(scaling);
        let mut vsw = Vsw::with_extras(16, Progress::SincePush).with_protected(4);
        // Near a wrap of every number now and then.
        let mut f = Fields {
            seq: (next() as u32) | if round % 4 == 0 { 0xFFFF_0000 } else { 0 },
            ack: next() as u32,
            win: next() as u16,
            ip_id: next() as u16,
            ts_val: (next() as u32) | if round % 4 == 1 { 0xFFFF_FF00 } else { 0 },
            ts_ecr: next() as u32,
        };
        for step in 0..300 {
            let r = next();
            let mut g = f;
            // Mostly forward by a stride's multiple, sometimes back (a retransmission),
            // sometimes far.
            let seq_step = u32::from(stride.max(1)) * (r % 3) as u32;
            g.seq = match r % 23 {
                0 => f.seq.wrapping_sub(seq_step * 5),
                1 => f.seq.wrapping_add(next() as u32),
                _ => f.seq.wrapping_add(seq_step),
            };
            g.ack = f.ack.wrapping_add(if r % 17 == 0 {
                0u32.wrapping_sub(3)
            } else {
                (r >> 8) as u32 % 3
            });
            g.win = if r % 11 == 0 { next() as u16 } else { f.win };
            g.ip_id = f.ip_id.wrapping_add(if r % 13 == 0 { 7 } else { 1 });
            g.ts_val = f.ts_val.wrapping_add((r >> 16) as u32 % 2);
            g.ts_ecr = if r % 19 == 0 {
                f.ts_ecr.wrapping_sub(1)
            } else {
                f.ts_ecr.wrapping_add((r >> 20) as u32 % 2)
            };
            assert_eq!(
                needs(&vsw, scaling, &g, &scaler.derive(&g), &scaler, true),
                needs_entry_by_entry(&vsw, &g, scaling.strides, b),
                "round {round} step {step}"
            );
            vsw.push_with(
                Entry {
                    fields: g,
                    has_payload: true,
                    uncompressed: r % 29 == 0,
                },
                scaler.derive(&g),
            );
            if r % 5 == 0 {
                vsw.prune((next() % 40_000) as u32);
            }
            if r % 97 == 0 {
                vsw.clear();
            }
            f = g;
        }
    }
}

#[test]
fn the_divider_is_exact() {
    for d in [1u16, 2, 3, 256, 1448, 2896, 1460, 65535] {
        let div = Divider::new(d);
        for n in [0u32, 1, 1447, 1448, 123_456_789, u32::MAX - 1, u32::MAX] {
            let d = u32::from(d);
            assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
        }
    }
}

#[test]
fn outer_offsets_survive_a_refresh_of_the_extras() {
    // A tunnelled context's window keeps each entry's `outer - inner` offset; a new stride
    // (another scaling) derives every other extra anew but must keep these, which no scaling
    // derives.
    let mut vsw: Vsw<DerivedColumns> = Vsw::with_extras(16, Progress::SincePush);
    let scaler = Scaler::new(Scaling::default());
    for i in 0..6u32 {
        let fields = Fields {
            seq: 1 + 1000 * i,
            ack: 1,
            win: 500,
            ip_id: 10 + i as u16,
            ts_val: 100 + i,
            ts_ecr: 50,
        };
        let entry = Entry {
            fields,
            has_payload: true,
            uncompressed: false,
        };
        vsw.push_with(entry, scaler.derive(&fields).with_outer(700 + 3 * i as u16));
    }
    let before = outer_span(&vsw, 720);
    assert_eq!((before.up, before.down), (20, 0));
    let strided = Scaler::new(Scaling {
        strides: Strides { seq: 1000, ack: 0 },
        behaviour: Behaviour::Sequential,
    });
    rescale(&mut vsw, &strided);
    assert_eq!(outer_span(&vsw, 720), before);
    assert_eq!(outer_span(&vsw, 690), Span { up: 0, down: 25 });
}

#[test]
fn distances_past_16_bits_come_from_the_32_bit_scan() {
    let scan = |column: &[u32], v: u32| {
        column.iter().fold((0i32, 0i32), |(lo, hi), &g| {
            let d = v.wrapping_sub(g) as i32;
            (lo.min(d), hi.max(d))
        })
    };
    let v = 1_000_000u32;
    for d in [
        0i32,
        1,
        -1,
        32_766,
        32_767,
        32_768,
        -32_767,
        -32_768,
        -32_769,
        1 << 20,
        -(1 << 30),
    ] {
        let column = [v, v.wrapping_sub(d as u32), v.wrapping_add(3)];
        assert_eq!(distances_32(&column, v), scan(&column, v), "distance {d}");
    }
}
