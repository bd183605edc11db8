//! Tests of the scenarios: their settings (TOML, defaults, refusals) and runs over every scheme.

use super::*;
use crate::outage::OutageStats;

fn quick(scheme: &str, ber: f64, tcp: TcpVariant) -> Scenario {
    Scenario {
        scheme: scheme.into(),
        errors: ErrorModel::Ber { ber },
        tcp,
        duration_s: 60.0,
        wireless_bps: 64_000,
        ..Scenario::default()
    }
}

#[test]
fn error_free_link_is_filled() {
    let s = quick("none", 0.0, TcpVariant::Reno);
    let o = s.run().unwrap();
    // 64 kbit/s = 8000 B/s of link; payload share 536/577 (one kind byte per frame).
    let max = 8000.0 * 536.0 / 577.0;
    assert!(o.goodput_bytes_per_s > 0.8 * max, "{o:?}");
    assert!(o.goodput_bytes_per_s <= max);
    assert_eq!(o.receiver.bad_checksums, 0);
}

#[test]
fn same_seed_same_result_bit_for_bit() {
    let s = quick("taroc", 1e-5, TcpVariant::Sack);
    let a = s.run().unwrap();
    let b = s.run().unwrap();
    assert_eq!(
        a.goodput_bytes_per_s.to_bits(),
        b.goodput_bytes_per_s.to_bits()
    );
    assert_eq!(a.events, b.events);
    assert_eq!(a.sender, b.sender);
    let other = Scenario { seed: 2, ..s }.run().unwrap();
    assert_ne!(a.events, other.events);
}

#[test]
fn every_scheme_runs_on_ipv4_and_ipv6_with_every_variant() {
    for scheme in ["none", "taroc", "ideal"] {
        for tcp in TcpVariant::ALL {
            for ipv6 in [false, true] {
                let s = Scenario {
                    ipv6,
                    duration_s: 20.0,
                    timestamps: ipv6,
                    delayed_ack: ipv6,
                    ..quick(scheme, 1e-5, tcp)
                };
                let o = s.run().unwrap();
                assert!(
                    o.goodput_bytes_per_s > 1000.0,
                    "{scheme} {tcp} {ipv6}: {o:?}"
                );
                assert_eq!(o.receiver.bad_checksums, 0);
            }
        }
    }
}

#[test]
fn bit_errors_make_vj_toss_until_an_uncompressed_frame() {
    // The link reports every damaged frame with `link_error`, so VJ's decompressor refuses
    // the COMPRESSED_TCP frames after it instead of rebuilding them from a stale context.
    let o = quick("vj", 1e-5, TcpVariant::Reno).run().unwrap();
    assert!(o.data_link.corrupted > 0, "{o:?}");
    assert!(
        o.data_link.decompressor_drops > o.data_link.corrupted,
        "{o:?}"
    );
    assert_eq!(o.receiver.bad_checksums, 0, "{o:?}");
    // Queue drops never reach the receiver; an error-free link never tosses.
    let clean = quick("vj", 0.0, TcpVariant::Reno).run().unwrap();
    assert_eq!(clean.data_link.decompressor_drops, 0, "{clean:?}");
}

#[test]
fn toml_round_trip_and_clear_errors() {
    let s = default_sim();
    let text = s.to_toml();
    assert!(text.contains("# Wireless bandwidth"), "{text}");
    assert_eq!(Scenario::from_toml(&text).unwrap(), s, "{text}");
    let ge = Scenario::from_toml(
        "scheme = \"vj\"\n[errors]\nkind = \"gilbert_elliott\"\ngood_ber = 1e-7\n\
         bad_ber = 1e-3\np_good_to_bad = 0.01\np_bad_to_good = 0.1\n",
    )
    .unwrap();
    assert_eq!(ge.scheme, "vj");
    assert_eq!(ge.mtu, 576);
    assert!(matches!(ge.errors, ErrorModel::GilbertElliott { .. }));
    let err = |t: &str| Scenario::from_toml(t).unwrap_err();
    assert!(err("mtuu = 3").contains("mtuu"), "{}", err("mtuu = 3"));
    assert!(
        err("mtu = \"big\"").contains("line 1"),
        "{}",
        err("mtu = \"big\"")
    );
    assert!(err("scheme = \"zip\"").contains("unknown scheme"));
    assert!(err("[errors]\nkind = \"ber\"\nber = 3.0").contains("ber"));
    assert!(err("duration_s = -1.0").contains("duration"));
    assert!(err("mtu = [").contains("line 1"));
    let e = err("mtu = 576\nscheme = 5");
    assert!(e.starts_with("line 2, column 10: "), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

/// A key no table knows is refused, wherever it is: at the top level and in `[errors]`
/// (whatever its `kind`, `none` included, in a table or inline), naming the key and the table.
#[test]
fn unknown_keys_are_refused_in_every_table() {
    let err = |t: &str| Scenario::from_toml(t).unwrap_err();
    let e = err("mtu = 296\nmtuu = 3\n");
    assert!(
        e.contains("`mtuu`") && e.contains("top-level table") && e.starts_with("line 2"),
        "{e}"
    );
    for text in [
        "[errors]\nkind = \"ber\"\nber = 1e-5\nduration_s = 50.0\n",
        "[errors]\nkind = \"none\"\nduration_s = 50.0\n",
        "[errors]\nkind = \"gilbert_elliott_time\"\ngood_ber = 0.0\nbad_ber = 1.0\n\
         mean_good_s = 1.0\nmean_bad_s = 1.0\nduration_s = 50.0\n",
        "errors = { kind = \"ber\", ber = 1e-5, duration_s = 50.0 }\n",
        "errors.kind = \"ber\"\nerrors.ber = 1e-5\nerrors.duration_s = 50.0\n",
    ] {
        let e = err(text);
        assert!(
            e.contains("`duration_s`") && e.contains("table [errors]") && !e.contains('\n'),
            "{text}: {e}"
        );
    }
    // The known keys still read.
    let s = Scenario::from_toml("[errors]\nkind = \"none\"\n").unwrap();
    assert_eq!(s.errors, ErrorModel::None);
    let s = Scenario::from_toml("[errors]\nkind = \"ber\"\nber = 1e-5\n").unwrap();
    assert_eq!(s.errors, ErrorModel::Ber { ber: 1e-5 });
}

/// A file's missing fields take the command line's defaults: a file with only `mtu = 296`
/// runs TAROC (it once ran `none`), and every other field is `taroc sim`'s default.
#[test]
fn a_files_missing_fields_take_the_command_lines_defaults() {
    let file = Scenario::from_toml("mtu = 296\n").unwrap();
    assert_eq!(file.scheme, "taroc");
    assert_eq!(
        file,
        Scenario {
            mtu: 296,
            ..default_sim()
        }
    );
    assert_eq!(Scenario::from_toml("").unwrap(), default_sim());
    assert!(
        default_sim()
            .to_toml()
            .contains("# Header compression: none, vj, iphc-twice, iphc, taroc, taroc-plus, taroc-repair, taroc-plus-u, taroc-plus-u-lossy, iphc-plain, ideal,"),
        "{}",
        default_sim().to_toml()
    );
}

#[test]
fn ideal_n_charges_n_header_bytes() {
    assert_eq!(ideal_header("ideal"), Some(4));
    assert_eq!(ideal_header("ideal-7"), Some(7));
    assert_eq!(ideal_header("ideal-61"), None);
    assert_eq!(ideal_header("ideal-x"), None);
    let o = quick("ideal-7", 1e-6, TcpVariant::Sack).run().unwrap();
    assert_eq!(o.data_link.overhead_per_frame(), 8.0);
    assert_eq!(o.ack_link.overhead_per_frame(), 8.0);
    let four = quick("ideal", 1e-6, TcpVariant::Sack).run().unwrap();
    assert_eq!(four.data_link.overhead_per_frame(), 5.0);
    assert!(quick("ideal-61", 0.0, TcpVariant::Sack).run().is_err());
}

#[test]
fn bad_settings_are_errors() {
    assert!(Scenario {
        scheme: "zip".into(),
        ..Scenario::default()
    }
    .run()
    .is_err());
    assert!(Scenario {
        mtu: 40,
        ..Scenario::default()
    }
    .run()
    .is_err());
    assert!(Scenario {
        errors: ErrorModel::Ber { ber: 2.0 },
        ..Scenario::default()
    }
    .run()
    .is_err());
}

/// Settings that used to panic deep in the run (the RTO clamp with a floor above its
/// ceiling, overflowing nanosecond delays) or are out of range are refused up front, naming
/// the setting.
#[test]
fn settings_that_would_panic_are_refused_with_their_name() {
    let err = |t: &str| Scenario::from_toml(t).unwrap_err();
    for (toml, name) in [
        ("min_rto_ms = 60001", "min_rto_ms"),
        ("min_rto_ms = 18446744073709551615", "min_rto_ms"),
        (
            "wireless_delay_ms = 18446744073709551615",
            "wireless_delay_ms",
        ),
        ("wired_delay_ms = 86400001", "wired_delay_ms"),
        ("max_window_segments = 4294967295", "max window"),
        ("duration_s = nan", "duration"),
        ("duration_s = 0.0", "duration"),
        ("wireless_bps = 0", "rate"),
        ("router_queue = 0", "queue"),
        ("[errors]\nkind = \"ber\"\nber = nan", "ber"),
        ("[errors]\nkind = \"ber\"\nber = -1e-5", "ber"),
        (
            "[errors]\nkind = \"gilbert_elliott\"\ngood_ber = 0.0\nbad_ber = 1.0\n\
             p_good_to_bad = nan\np_bad_to_good = 0.1",
            "p_good_to_bad",
        ),
    ] {
        let e = err(toml);
        assert!(e.contains(name), "{toml}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    // The limits themselves are allowed, and run.
    let edge = Scenario::from_toml("min_rto_ms = 60000\nduration_s = 5.0").unwrap();
    assert!(edge.run().is_ok());
}

/// A decompressor reset mid-flow: no codec, no outage; VJ's fresh decompressor refuses
/// COMPRESSED_TCP until an UNCOMPRESSED_TCP (a retransmission) re-establishes the context,
/// so its flows break for a bounded time; on a clean link without a reset, nothing breaks.
#[test]
fn a_decompressor_reset_is_measured_as_an_outage() {
    let run = |scheme: &str, reset: Option<f64>| {
        Scenario {
            decompressor_reset_s: reset,
            ..quick(scheme, 0.0, TcpVariant::Reno)
        }
        .run()
        .unwrap()
    };
    let none = run("none", Some(10.0));
    assert_eq!(none.data_outages.outages + none.ack_outages.outages, 0);
    let clean = run("vj", None);
    assert_eq!(clean.data_outages, OutageStats::default());
    let vj = run("vj", Some(10.0));
    let both = vj.data_outages.merge(vj.ack_outages);
    assert!(both.outages >= 1, "{both:?}");
    assert_eq!(both.unended_outages, 0, "{both:?}");
    assert!(
        both.longest_outage_s > 0.0 && both.longest_outage_s < 10.0,
        "{both:?}"
    );
    assert!(both.longest_outage_packets >= 1, "{both:?}");
    assert!(vj.receiver.delivered_bytes > clean.receiver.delivered_bytes / 2);
    assert!(Scenario::from_toml("decompressor_reset_s = -1.0")
        .unwrap_err()
        .contains("decompressor_reset_s"));
    let toml = Scenario {
        decompressor_reset_s: Some(30.0),
        ..Scenario::default()
    }
    .to_toml();
    assert!(toml.contains("decompressor_reset_s = 30.0"), "{toml}");
    assert!(
        toml.contains("# Replace both wireless decompressors"),
        "{toml}"
    );
}

/// Time-based Gilbert–Elliott bursts lose frames on both directions; the scenario reads
/// them from TOML.
#[test]
fn bursts_in_time_lose_frames() {
    let s = Scenario::from_toml(
        "scheme = \"taroc\"\nduration_s = 60.0\n[errors]\nkind = \"gilbert_elliott_time\"\n\
         good_ber = 0.0\nbad_ber = 1.0\nmean_good_s = 5.0\nmean_bad_s = 0.5\n",
    )
    .unwrap();
    let o = s.run().unwrap();
    assert!(o.data_link.corrupted > 10, "{o:?}");
    assert!(o.ack_link.corrupted > 10, "{o:?}");
    assert!(o.goodput_bytes_per_s > 1000.0, "{o:?}");
}

/// The simulator passes the sibling notes at each end of the wireless link: `taroc-plus`'s
/// ACK flow (mobile host to router) starts from the data flow its end's decompressor verified,
/// its three start IRs mirrored ([`taroc_core::plus::mirror`]); the data flow's first IR has
/// nothing to mirror, but its second (Reno sends one segment, then waits for its ACK) the ACK
/// flow; and the ACK flow's first IR frame, coded against the data flow's first segment, ends
/// the data flow's start: a reference receipt ([`taroc_core::plus::receipt`]).
#[test]
fn taroc_plus_acks_start_from_the_data_flows_mirror() {
    let s = quick("taroc-plus", 0.0, TcpVariant::Reno);
    let mut net = s.build().unwrap();
    net.run_until(5 * crate::event::SECOND);
    // Links: fixed to router, router to fixed, router to mobile (data), mobile to router (ACKs).
    let stats = |link: usize| match net.compressor(link) {
        Some(taroc_core::AnyCompressor::Plus(c)) => c.stats().clone(),
        Some(_) => panic!("taroc-plus"),
        None => panic!("a codec on the wireless link"),
    };
    assert_eq!(stats(3).mirrored_irs, 3, "the ACK flow's start IRs");
    assert_eq!(stats(2).mirrored_irs, 1, "the data flow's second start IR");
    assert!(
        stats(2).reference_receipts >= 1,
        "the data flow's start ended by a reference receipt"
    );
    let slow_start = stats(2).frames(taroc_core::taroc::Why::SlowStart);
    assert_eq!(slow_start, 1, "the data flow's IR frames after its first");
}
