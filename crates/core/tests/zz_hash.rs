//! THROWAWAY (not committed): hashes every frame and rebuilt packet of taroc and taroc-plus.
#[path = "common.rs"]
mod common;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use taroc_core::{AnyCompressor, AnyDecompressor, Compressor, Decompressor, Scheme, SchemeConfig};

#[test]
fn hash_all() {
    let mut dirs = vec![std::path::PathBuf::from("/work/shared/captures/linux")];
    for s in ["twins", "unseen"] {
        dirs.push(
            std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures"))
                .join(s),
        );
    }
    let mut total = DefaultHasher::new();
    for scheme in [Scheme::Taroc, Scheme::Plus] {
        for dir in &dirs {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
                .collect();
            files.sort();
            for f in files {
                let packets = common::read_raw_ip_pcap(&f);
                for lossy in [false, true] {
                    let config = SchemeConfig::default();
                    let mut c = [
                        AnyCompressor::new(scheme, &config),
                        AnyCompressor::new(scheme, &config),
                    ];
                    let mut d = [
                        AnyDecompressor::new(scheme, &config),
                        AnyDecompressor::new(scheme, &config),
                    ];
                    let mut h = DefaultHasher::new();
                    let mut frame = Vec::new();
                    let mut out = Vec::new();
                    let mut rng = 12345u64;
                    let (mut ok, mut bad) = (0usize, 0usize);
                    for p in &packets {
                        let dir = usize::from(!common::forward(p));
                        let kind = c[dir].compress(p, &mut frame);
                        kind.to_byte().hash(&mut h);
                        frame.hash(&mut h);
                        rng = rng
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        if lossy && (rng >> 33) % 100 < 20 {
                            continue;
                        }
                        match d[dir].decompress(kind, &frame, &mut out) {
                            Ok(()) => {
                                assert_eq!(&out, p);
                                ok += 1;
                                out.hash(&mut h);
                            }
                            Err(e) => {
                                bad += 1;
                                e.name().hash(&mut h);
                            }
                        }
                    }
                    let v = h.finish();
                    v.hash(&mut total);
                    println!(
                        "{:?} {} lossy={} {:016x} ok={} drop={}",
                        scheme,
                        f.display(),
                        lossy,
                        v,
                        ok,
                        bad
                    );
                }
            }
        }
    }
    println!("TOTAL {:016x}", total.finish());
}

#[test]
fn prof() {
    let name = std::env::var("PROF_CAPTURE").unwrap_or("a_bulk_v4_default".into());
    let packets = common::read_raw_ip_pcap(&std::path::PathBuf::from(format!(
        "/work/shared/captures/linux/{name}.pcap"
    )));
    for scheme in [Scheme::Vj, Scheme::Plus] {
        let config = SchemeConfig::default();
        let mut c = [
            AnyCompressor::new(scheme, &config),
            AnyCompressor::new(scheme, &config),
        ];
        let mut d = [
            AnyDecompressor::new(scheme, &config),
            AnyDecompressor::new(scheme, &config),
        ];
        let mut frame = Vec::with_capacity(2048);
        let mut out = Vec::with_capacity(2048);
        for p in &packets {
            let dir = usize::from(!common::forward(p));
            let kind = c[dir].compress(p, &mut frame);
            let _ = std::hint::black_box(d[dir].decompress(kind, &frame, &mut out));
        }
    }
}

#[test]
fn timing() {
    use std::time::Instant;
    let passes: usize = std::env::var("PASSES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let mut line = String::new();
    for name in ["a_bulk_v4_default", "d_bulk_v6_default", "f_many_flows_v4"] {
        let packets: Vec<(usize, Vec<u8>)> = common::read_raw_ip_pcap(&std::path::PathBuf::from(
            format!("/work/shared/captures/linux/{name}.pcap"),
        ))
        .into_iter()
        .map(|p| (usize::from(!common::forward(&p)), p))
        .collect();
        let n = packets.len() as f64;
        let mut res = Vec::new();
        for scheme in [Scheme::Vj, Scheme::Plus] {
            let config = SchemeConfig::default();
            let mut frames = Vec::new();
            let (mut cmin, mut dmin) = (f64::MAX, f64::MAX);
            for pass in 0..passes {
                let mut c = [
                    AnyCompressor::new(scheme, &config),
                    AnyCompressor::new(scheme, &config),
                ];
                let mut frame = Vec::with_capacity(2048);
                let t = Instant::now();
                for (dir, p) in &packets {
                    std::hint::black_box(c[*dir].compress(p, &mut frame));
                    std::hint::black_box(&frame);
                }
                cmin = cmin.min(t.elapsed().as_nanos() as f64 / n);
                if pass == 0 {
                    let mut c = [
                        AnyCompressor::new(scheme, &config),
                        AnyCompressor::new(scheme, &config),
                    ];
                    frames = packets
                        .iter()
                        .map(|(dir, p)| {
                            let mut f = Vec::new();
                            let k = c[*dir].compress(p, &mut f);
                            (*dir, k, f)
                        })
                        .collect();
                }
                let mut d = [
                    AnyDecompressor::new(scheme, &config),
                    AnyDecompressor::new(scheme, &config),
                ];
                let mut out = Vec::with_capacity(2048);
                let t = Instant::now();
                for (dir, k, f) in &frames {
                    std::hint::black_box(d[*dir].decompress(*k, f, &mut out).is_ok());
                    std::hint::black_box(&out);
                }
                dmin = dmin.min(t.elapsed().as_nanos() as f64 / n);
            }
            res.push((cmin, dmin));
        }
        let (v, p) = (res[0], res[1]);
        line += &format!(
            "{} {:.2}x (plus c {:.0} d {:.0} vj c {:.0} d {:.0} ns) | ",
            &name[..1],
            (p.0 + p.1) / (v.0 + v.1),
            p.0,
            p.1,
            v.0,
            v.1
        );
    }
    println!("TIMING {line}");
}

#[test]
fn parts() {
    use std::time::Instant;
    use taroc_core::taroc::packet::TcpIpPacket;
    let passes = 200;
    for name in ["a_bulk_v4_default", "d_bulk_v6_default", "f_many_flows_v4"] {
        let packets = common::read_raw_ip_pcap(&std::path::PathBuf::from(format!(
            "/work/shared/captures/linux/{name}.pcap"
        )));
        let n = packets.len() as f64;
        let mut best = [f64::MAX; 3];
        for _ in 0..passes {
            let t = Instant::now();
            for p in &packets {
                std::hint::black_box(TcpIpPacket::parse(std::hint::black_box(p)).is_some());
            }
            best[0] = best[0].min(t.elapsed().as_nanos() as f64 / n);
            let t = Instant::now();
            for p in &packets {
                std::hint::black_box(
                    taroc_wire::checksum::Sum::new()
                        .add_bytes(std::hint::black_box(&p[20..]))
                        .fold(),
                );
            }
            best[1] = best[1].min(t.elapsed().as_nanos() as f64 / n);
            let mut v = Vec::with_capacity(2048);
            let t = Instant::now();
            for p in &packets {
                v.clear();
                v.extend_from_slice(std::hint::black_box(&p[40..]));
                std::hint::black_box(&v);
            }
            best[2] = best[2].min(t.elapsed().as_nanos() as f64 / n);
        }
        println!(
            "PARTS {name}: parse {:.1} ns, checksum {:.1} ns, copy {:.1} ns",
            best[0], best[1], best[2]
        );
    }
}

#[test]
fn cloop() {
    let name = std::env::var("PROF_CAPTURE").unwrap_or("a_bulk_v4_default".into());
    let side = std::env::var("SIDE").unwrap_or("c".into());
    let packets: Vec<(usize, Vec<u8>)> = common::read_raw_ip_pcap(&std::path::PathBuf::from(
        format!("/work/shared/captures/linux/{name}.pcap"),
    ))
    .into_iter()
    .map(|p| (usize::from(!common::forward(&p)), p))
    .collect();
    let config = SchemeConfig::default();
    let mut c = [
        AnyCompressor::new(Scheme::Plus, &config),
        AnyCompressor::new(Scheme::Plus, &config),
    ];
    let frames: Vec<_> = packets
        .iter()
        .map(|(dir, p)| {
            let mut f = Vec::new();
            let k = c[*dir].compress(p, &mut f);
            (*dir, k, f)
        })
        .collect();
    for _ in 0..300 {
        if side == "c" {
            let mut c = [
                AnyCompressor::new(Scheme::Plus, &config),
                AnyCompressor::new(Scheme::Plus, &config),
            ];
            let mut frame = Vec::with_capacity(2048);
            for (dir, p) in &packets {
                std::hint::black_box(c[*dir].compress(p, &mut frame));
            }
        } else {
            let mut d = [
                AnyDecompressor::new(Scheme::Plus, &config),
                AnyDecompressor::new(Scheme::Plus, &config),
            ];
            let mut out = Vec::with_capacity(2048);
            for (dir, k, f) in &frames {
                std::hint::black_box(d[*dir].decompress(*k, f, &mut out).is_ok());
            }
        }
    }
}

#[test]
fn kinds() {
    let f = std::env::var("CAP").unwrap();
    let packets = common::read_raw_ip_pcap(&std::path::PathBuf::from(f));
    let config = SchemeConfig::default();
    let mut c = [
        AnyCompressor::new(Scheme::Plus, &config),
        AnyCompressor::new(Scheme::Plus, &config),
    ];
    let mut m: std::collections::BTreeMap<String, (usize, usize, usize)> = Default::default();
    let mut frame = Vec::new();
    for p in &packets {
        let dir = usize::from(!common::forward(p));
        let k = c[dir].compress(p, &mut frame);
        let s = taroc_wire::summary::summarize(p).unwrap();
        let hdr = frame.len() + 1 - (p.len() - s.header_len.min(p.len()));
        let name = if k.to_byte() >= 0x80 {
            "CO".to_string()
        } else {
            format!("{:#04x}", k.to_byte())
        };
        let e = m.entry(name).or_default();
        e.0 += 1;
        e.1 += hdr;
        e.2 += s.header_len;
    }
    for (k, (n, b, o)) in m {
        println!(
            "KIND {k} n={n} hdr={b} avg={:.1} orig_avg={:.1}",
            b as f64 / n as f64,
            o as f64 / n as f64
        );
    }
}

#[test]
fn trace() {
    let f = std::env::var("CAP").unwrap();
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let packets = common::read_raw_ip_pcap(&std::path::PathBuf::from(f));
    let config = SchemeConfig::default();
    let mut c = [
        AnyCompressor::new(Scheme::Plus, &config),
        AnyCompressor::new(Scheme::Plus, &config),
    ];
    let mut frame = Vec::new();
    for (i, p) in packets.iter().enumerate().take(n) {
        let dir = usize::from(!common::forward(p));
        let k = c[dir].compress(p, &mut frame);
        let s = taroc_wire::summary::summarize(p).unwrap();
        println!(
            "TRACE {i} dir={dir} kind={:#04x} hdr={} payload={} ",
            k.to_byte(),
            frame.len() + 1 - s.payload_len.min(frame.len() + 1),
            s.payload_len
        );
    }
}

#[test]
fn replay() {
    let text = std::fs::read_to_string("/tmp/propdump.txt").unwrap();
    let packets: Vec<Vec<u8>> = text
        .lines()
        .skip(1)
        .map(|l| {
            (0..l.len() / 2)
                .map(|i| u8::from_str_radix(&l[2 * i..2 * i + 2], 16).unwrap())
                .collect()
        })
        .collect();
    let mut taroc = taroc_core::taroc::TarocConfig::default();
    taroc.max_vsw_entries = 2;
    let mut c = taroc_core::plus::PlusCompressor::new(taroc.clone());
    let mut d = taroc_core::plus::PlusDecompressor::new(taroc);
    let (mut frame, mut out) = (Vec::new(), Vec::new());
    for (i, p) in packets.iter().enumerate() {
        let k = c.compress(p, &mut frame);
        let r = d.decompress(k, &frame, &mut out);
        let hx: String = frame.iter().take(24).map(|b| format!("{b:02x}")).collect();
        let ph: String = p.iter().take(60).map(|b| format!("{b:02x}")).collect();
        println!(
            "REPLAY {i} kind={:#04x} {:?} frame={hx}\n   packet={ph} len={}",
            k.to_byte(),
            r,
            p.len()
        );
    }
}
