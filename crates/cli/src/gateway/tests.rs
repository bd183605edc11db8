//! Tests of `taroc gateway`'s command line: a running gateway's options and the lab's
//! subcommands, parsed together.

use super::*;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use taroc_lab::bench::ForwardingLink;

#[derive(Debug, Parser)]
struct Top {
    #[command(subcommand)]
    command: Top2,
}

#[derive(Debug, Subcommand)]
enum Top2 {
    Gateway(GatewayArgs),
}

fn parse(args: &[&str]) -> Result<GatewayArgs, clap::Error> {
    let mut all = vec!["taroc", "gateway"];
    all.extend_from_slice(args);
    Top::try_parse_from(all).map(|t| match t.command {
        Top2::Gateway(g) => g,
    })
}

#[test]
fn command_line_is_consistent() {
    Top::command().debug_assert();
}

#[test]
fn gateway_arguments_parse() {
    let g = parse(&[
        "--tun-a",
        "a0",
        "--tun-b",
        "b0",
        "--scheme",
        "vj",
        "--reverse-scheme",
        "none",
        "--rate",
        "384",
        "--delay",
        "100",
        "--ber",
        "1e-5",
        "--mtu",
        "576",
    ])
    .unwrap();
    assert!(g.command.is_none());
    let link = g.run.link();
    assert_eq!((link.rate_bps, link.mtu, link.ber), (384_000, 576, 1e-5));
    assert_eq!(link.delay, Duration::from_millis(100));
    let [f, r] = g.run.variants();
    assert_eq!((f.name, r.name), ("vj", "none"));
    for bad in [
        &["--scheme", "nope"][..],
        &["--ber", "2"],
        &["--mtu", "20"],
        &["--burst", "0.5"],
        &["--rate", "-1"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn bench_arguments_parse() {
    let g = parse(&["bench", "--rates", "64", "--timestamps", "off", "--json"]).unwrap();
    let Some(GatewayCommand::Bench(b)) = g.command else {
        panic!("not bench")
    };
    assert_eq!(b.rates, vec![64.0]);
    assert_eq!(b.bers, vec![1e-7, 1e-5, 1e-4]);
    assert_eq!(b.timestamps, vec![false]);
    assert!(b.json && !b.forwarding);
    assert_eq!(b.link, vec![ForwardingLink::Emulated]);
    let g = parse(&["bench", "--forwarding", "--link", "udp,emulated"]).unwrap();
    let Some(GatewayCommand::Bench(b)) = g.command else {
        panic!("not bench")
    };
    assert_eq!(b.link, vec![ForwardingLink::Udp, ForwardingLink::Emulated]);
    assert!(parse(&["bench", "--forwarding", "--link", "tcp"]).is_err());
    assert!(parse(&["bench", "--link", "udp"]).is_err());
    assert!(parse(&["bench", "--ip", "5"]).is_err());
}

#[test]
fn transfer_arguments_parse() {
    let g = parse(&["transfer", "--receive", "10.0.0.2:5201", "--bytes", "4M"]).unwrap();
    let Some(GatewayCommand::Transfer(t)) = g.command else {
        panic!("not transfer")
    };
    assert_eq!((t.bytes, t.send), (4 << 20, None));
    assert!(parse(&["transfer", "--bytes", "1K"]).is_err());
    assert!(parse(&["transfer", "--send", "1.2.3.4:1", "--bytes", "x"]).is_err());
}

#[test]
fn udp_mode_needs_a_key_or_the_insecure_flag() {
    let udp = [
        "--tun",
        "t0",
        "--listen",
        "127.0.0.1:7000",
        "--peer",
        "127.0.0.1:7001",
    ];
    let g = parse(&udp).unwrap();
    let e = run_gateway(&g.run).unwrap_err().to_string();
    assert!(e.contains("--key FILE") && e.contains("genkey"), "{e}");
    let with = |extra: &[&str]| {
        let mut all = udp.to_vec();
        all.extend_from_slice(extra);
        parse(&all)
    };
    assert!(with(&["--key", "k", "--insecure-no-auth"]).is_err());
    assert!(with(&["--tag-len", "3"]).is_err() && with(&["--tag-len", "17"]).is_err());
    assert_eq!(with(&["--tag-len", "16"]).unwrap().run.tag_len, Some(16));
    assert_eq!(parse(&[]).unwrap().run.socket_buffer, 4 << 20);
    assert!(with(&["--socket-buffer", "1K"]).is_err());
    assert!(with(&["--stats-interval", "0.05"]).is_err());
    assert!(with(&["--stats-interval", "0"]).is_ok() && with(&["--stats-interval", "0.1"]).is_ok());
    let e = run_gateway(&with(&["--key", "/nonexistent/taroc.key"]).unwrap().run)
        .unwrap_err()
        .to_string();
    assert!(e.contains("reading key file /nonexistent/taroc.key"), "{e}");
    let g = parse(&["--tun-a", "a", "--tun-b", "b", "--insecure-no-auth"]).unwrap();
    let e = run_gateway(&g.run).unwrap_err().to_string();
    assert!(e.contains("belong to the UDP mode"), "{e}");
    let g = parse(&["genkey"]).unwrap();
    assert!(matches!(g.command, Some(GatewayCommand::Genkey)));
}

#[test]
fn missing_mode_is_explained() {
    let g = parse(&[]).unwrap();
    let e = run_gateway(&g.run).unwrap_err().to_string();
    assert!(e.contains("--tun-a"), "{e}");
}

/// Every option that takes a time refuses NaN, negative, infinite and too-large values with
/// a message naming the limit (a plain conversion to a `Duration` panicked above about
/// 1.8e19 s), and accepts the limit itself.
#[test]
fn times_beyond_the_limit_are_refused_by_name() {
    let options: [(&[&str], &str); 11] = [
        (&[], "--duration"),
        (&[], "--stats-interval"),
        (&[], "--delay"),
        (&["transfer", "--send", "127.0.0.1:9"], "--time-limit"),
        (&["resume"], "--time-limit"),
        (&["resume"], "--down"),
        (&["resume"], "--longest"),
        (&["bench"], "--duration"),
        (&["bench"], "--delay"),
        (&["bench"], "--time-limit"),
        (&["bench", "--forwarding"], "--forwarding-seconds"),
    ];
    for (before, option) in options {
        let with = |value: &str| {
            let arg = format!("{option}={value}");
            let mut args = before.to_vec();
            args.push(&arg);
            parse(&args)
        };
        for bad in ["1e20", "2e19", "1.8e19", "NaN", "inf", "-1"] {
            let e = with(bad).unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{option} {bad}"
            );
        }
        let e = with("1e20").unwrap_err().to_string();
        assert!(
            e.contains(option) && e.contains("limit of 1000000000"),
            "{e}"
        );
        // The limit itself (in ms for --delay) is accepted.
        let limit = if option == "--delay" { "1e12" } else { "1e9" };
        assert!(with(limit).is_ok(), "{option} {limit}");
    }
    let e = parse(&["resume", "--delay", "1000000000001"]).unwrap_err();
    assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
    let g = parse(&[
        "--tun-a",
        "a",
        "--tun-b",
        "b",
        "--delay",
        "1e12",
        "--duration",
        "1e9",
    ])
    .unwrap();
    assert_eq!(g.run.link().delay, Duration::from_secs(1_000_000_000));
    assert_eq!(
        g.run.options().duration,
        Some(Duration::from_secs(1_000_000_000))
    );
}
