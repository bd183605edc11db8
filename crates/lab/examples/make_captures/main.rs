//! Makes the unseen captures of kinds a–h (`captures/unseen/`: short, on other links than the
//! shared set's; `captures/twins/` with `--twins`: the shared set's parameters, other seeds) with
//! real kernel TCP: two network namespaces, each with a TUN device, joined by the gateway's
//! emulated link carrying packets uncompressed (scheme `none`: bandwidth, one-way delay, DropTail
//! queue, seeded random loss or reordering), captured with `dumpcap` on both TUN devices. Needs
//! root.
//!
//! ```sh
//! cargo run --release -p taroc-lab --example make_captures -- [--twins] [OUT_DIR] [KINDS]
//! # OUT_DIR defaults to captures/unseen (captures/twins with --twins), KINDS to abcdefgh
//! ```
//!
//! View: *ingress* (what each host sends, before the link: `src host` filters on each TUN
//! device, merged by time with `mergecap`) for every kind but g, which is captured at the
//! receiver (everything on B's device, after reordering), as the shared set does. The traffic:
//! bulk (a seeded random stream, 16 KiB writes), interactive echo (keystrokes and lines, one
//! session with Nagle and one with `TCP_NODELAY`), HTTP/1.1-like request/response over 40
//! connections with at most 12 at once (every fifth client closes before reading its whole
//! response, so its kernel answers with RST), and for h a mix of a TCP transfer, an echo
//! session, DNS-like UDP queries, large UDP datagrams (IPv4 fragments), ICMP echo (some
//! fragmented) and UDP to a closed port (ICMP port unreachable).

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use taroc_core::Variant;
use taroc_gateway::gateway::{run_emulated, LoopOptions, Pipeline, PipelineConfig};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns::{self, Netns};
use taroc_gateway::tun::{Tun, TunConfig};
use taroc_gateway::Error;

#[path = "../capture_kit/mod.rs"]
mod capture_kit;
use capture_kit::{address, dumpcap, interrupt};

mod traffic;

use traffic::{bulk, interactive, io, many_flows, mixed};

/// One capture to make.
struct Kind {
    letter: char,
    file: &'static str,
    v6: bool,
    timestamps: bool,
    sack: bool,
    link: LinkConfig,
    seed: u64,
    /// Captured at the receiver (B) rather than at both senders.
    receiver_view: bool,
    traffic: Traffic,
}

/// What runs between the namespaces.
#[derive(Clone, Copy)]
enum Traffic {
    Bulk(Duration),
    Interactive {
        messages: u32,
        think_ms: u64,
    },
    ManyFlows {
        connections: u32,
        concurrency: u32,
        max_size: usize,
    },
    Mixed(Duration),
}

fn link(rate_kbps: u64, delay_ms: u64, loss: f64, reorder: f64) -> LinkConfig {
    LinkConfig {
        rate_bps: rate_kbps * 1000,
        delay: Duration::from_millis(delay_ms),
        loss,
        reorder,
        ..LinkConfig::default()
    }
}

/// The parameters of one set of captures.
#[derive(Clone, Copy)]
struct Params {
    /// Seed of kind a (b is one more, and so on).
    first_seed: u64,
    /// The bulk kinds' link (a–d) and transfer length.
    bulk: (u64, u64, f64, Duration),
    /// The interactive kind's link (e), messages per session and mean think time (ms).
    interactive: (u64, u64, f64, u32, u64),
    /// The many-flows kind's link (f) and largest response.
    many_flows: (u64, u64, f64, usize),
    /// The reordering kind's link (g): rate, delay, share reordered, and transfer length.
    reorder: (u64, u64, f64, Duration),
    /// The mixed kind's link (h) and length.
    mixed: (u64, u64, f64, Duration),
}

/// `captures/unseen/`: short captures, other links than the shared set's.
const UNSEEN: Params = Params {
    first_seed: 201,
    bulk: (1000, 40, 0.015, Duration::from_secs(3)),
    interactive: (1000, 40, 0.015, 70, 250),
    many_flows: (2000, 40, 0.015, 20_000),
    reorder: (1500, 40, 0.05, Duration::from_secs(2)),
    mixed: (2000, 40, 0.01, Duration::from_secs(8)),
};

/// `captures/twins/`: the shared set's parameters (its README) with other seeds.
const TWINS: Params = Params {
    first_seed: 301,
    bulk: (1500, 50, 0.01, Duration::from_secs(20)),
    interactive: (1500, 50, 0.01, 100, 600),
    many_flows: (2000, 50, 0.01, 150_000),
    reorder: (2000, 50, 0.06, Duration::from_secs(20)),
    mixed: (2000, 50, 0.005, Duration::from_secs(20)),
};

fn kinds(params: &Params) -> Vec<Kind> {
    let (rate, delay, loss, length) = params.bulk;
    let bulk_link = || link(rate, delay, loss, 0.0);
    let bulk = Traffic::Bulk(length);
    let kind = |letter, file, link, traffic| Kind {
        letter,
        file,
        v6: false,
        timestamps: true,
        sack: true,
        link,
        seed: params.first_seed + u64::from(letter as u8 - b'a'),
        receiver_view: false,
        traffic,
    };
    let (e_rate, e_delay, e_loss, messages, think_ms) = params.interactive;
    let (f_rate, f_delay, f_loss, max_size) = params.many_flows;
    let (g_rate, g_delay, g_reorder, g_length) = params.reorder;
    let (h_rate, h_delay, h_loss, h_length) = params.mixed;
    vec![
        kind('a', "a_bulk_v4_default.pcap", bulk_link(), bulk),
        Kind {
            timestamps: false,
            ..kind('b', "b_bulk_v4_nots.pcap", bulk_link(), bulk)
        },
        Kind {
            sack: false,
            ..kind('c', "c_bulk_v4_nosack.pcap", bulk_link(), bulk)
        },
        Kind {
            v6: true,
            ..kind('d', "d_bulk_v6_default.pcap", bulk_link(), bulk)
        },
        kind(
            'e',
            "e_interactive_v4.pcap",
            link(e_rate, e_delay, e_loss, 0.0),
            Traffic::Interactive { messages, think_ms },
        ),
        kind(
            'f',
            "f_many_flows_v4.pcap",
            link(f_rate, f_delay, f_loss, 0.0),
            Traffic::ManyFlows {
                connections: 40,
                concurrency: 12,
                max_size,
            },
        ),
        Kind {
            receiver_view: true,
            ..kind(
                'g',
                "g_reorder_v4.pcap",
                link(g_rate, g_delay, 0.0, g_reorder),
                Traffic::Bulk(g_length),
            )
        },
        kind(
            'h',
            "h_mixed_v4.pcap",
            link(h_rate, h_delay, h_loss, 0.0),
            Traffic::Mixed(h_length),
        ),
    ]
}

fn sysctl(ns: &str, key: &str, value: &str) -> Result<(), Error> {
    netns::run_in(Some(ns), || {
        std::fs::write(format!("/proc/sys/net/{key}"), value)
            .map_err(|e| Error::io(format!("setting {key} to {value}"), e))
    })
}

/// Makes one capture into `out`.
fn make(kind: &Kind, out: &Path) -> Result<(), Error> {
    let pid = std::process::id();
    let names = [
        format!("tarocu-{pid}-{}a", kind.letter),
        format!("tarocu-{pid}-{}b", kind.letter),
    ];
    let namespaces = [Netns::create(&names[0])?, Netns::create(&names[1])?];
    let ns = [namespaces[0].name(), namespaces[1].name()];
    let mut tuns = Vec::new();
    for (side, name) in ns.iter().enumerate() {
        tuns.push(Tun::open(&TunConfig {
            name: "taroc0".into(),
            mtu: 1500,
            netns: Some((*name).into()),
        })?);
        let prefix = if kind.v6 { 64 } else { 24 };
        let addr = format!("{}/{prefix}", address(kind.v6, side));
        let mut args = vec!["-n", name, "address", "add", &addr, "dev", "taroc0"];
        if kind.v6 {
            args.push("nodad");
        }
        netns::ip(&args)?;
        sysctl(
            name,
            "ipv4/tcp_timestamps",
            if kind.timestamps { "1" } else { "0" },
        )?;
        sysctl(name, "ipv4/tcp_sack", if kind.sack { "1" } else { "0" })?;
    }
    let cc = netns::run_in(Some(ns[0]), || {
        io(
            "reading the congestion control",
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control"),
        )
    })?;
    eprintln!(
        "{}: namespace congestion control {} (connections: cubic)",
        kind.file,
        cc.trim()
    );
    let none = Variant::parse("none").map_err(Error::new)?;
    let mut pipeline = Pipeline::new(&PipelineConfig {
        variants: [none.clone(), none],
        links: [kind.link.clone(), kind.link.clone()],
        tun_mtu: 1500,
        seed: kind.seed,
        verify_checksums: false,
    })?;
    let stop_flag = AtomicBool::new(false);
    let parts = [out.with_extension("a.part"), out.with_extension("b.part")];
    std::thread::scope(|s| {
        let gateway = s.spawn(|| {
            run_emulated(
                [&tuns[0], &tuns[1]],
                &mut pipeline,
                &stop_flag,
                &LoopOptions::default(),
            )
        });
        let result = (|| {
            let filters = if kind.receiver_view {
                [None, Some(String::new())]
            } else {
                [0, 1].map(|side| Some(format!("src host {}", address(kind.v6, side))))
            };
            let mut captures = Vec::new();
            for (side, filter) in filters.iter().enumerate() {
                if let Some(filter) = filter {
                    captures.push(dumpcap(ns[side], filter, &parts[side])?);
                }
            }
            let server = SocketAddr::new(address(kind.v6, 1), 5201);
            let traffic = match kind.traffic {
                Traffic::Bulk(time) => bulk(ns, server, time, kind.seed),
                Traffic::Interactive { messages, think_ms } => {
                    interactive(ns, server, messages, think_ms, kind.seed)
                }
                Traffic::ManyFlows {
                    connections,
                    concurrency,
                    max_size,
                } => many_flows(ns, server, connections, concurrency, max_size, kind.seed),
                Traffic::Mixed(time) => match (address(false, 0), address(false, 1)) {
                    (IpAddr::V4(a), IpAddr::V4(b)) => mixed(ns, [a, b], time, kind.seed),
                    _ => Err(Error::new("mixed traffic is IPv4")),
                },
            };
            std::thread::sleep(Duration::from_millis(1500));
            for c in captures {
                interrupt(c)?;
            }
            traffic
        })();
        stop_flag.store(true, Ordering::Relaxed);
        let report = gateway
            .join()
            .unwrap_or_else(|_| Err(Error::new("the gateway panicked")))?;
        let lost: u64 = report.counters.iter().map(|c| c.link_lost).sum();
        let queue: u64 = report.counters.iter().map(|c| c.queue_drops).sum();
        eprintln!(
            "{}: {} packets through the link, {lost} lost on it, {queue} dropped by its queue",
            kind.file,
            report.packets()
        );
        result
    })?;
    let inputs: Vec<&PathBuf> = parts.iter().filter(|p| p.exists()).collect();
    let mut merge = Command::new("mergecap");
    merge.args(["-F", "pcap", "-w"]).arg(out).args(&inputs);
    let status = merge
        .status()
        .map_err(|e| Error::io("running mergecap", e))?;
    for p in inputs {
        let _ = std::fs::remove_file(p);
    }
    if !status.success() {
        return Err(Error::new(format!("mergecap failed for {}", out.display())));
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let twins = args.first().is_some_and(|a| a == "--twins");
    if twins {
        args.remove(0);
    }
    let (params, default_out) = match twins {
        true => (&TWINS, "captures/twins"),
        false => (&UNSEEN, "captures/unseen"),
    };
    let out = PathBuf::from(args.first().map_or(default_out, String::as_str));
    let only = args.get(1).map_or("abcdefgh", String::as_str);
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("make_captures: {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    for kind in kinds(params).iter().filter(|k| only.contains(k.letter)) {
        let file = out.join(kind.file);
        eprintln!(
            "{}: seed {}, rate {} kbit/s, delay {:?}, loss {}, reorder {}, timestamps {}, SACK {}",
            kind.file,
            kind.seed,
            kind.link.rate_bps / 1000,
            kind.link.delay,
            kind.link.loss,
            kind.link.reorder,
            kind.timestamps,
            kind.sack
        );
        if let Err(e) = make(kind, &file) {
            eprintln!("make_captures: {}: {e}", kind.file);
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
