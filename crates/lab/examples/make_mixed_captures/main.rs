//! Makes the mixed captures (`captures/mixed/`): the traffic a link carries besides TCP (QUIC,
//! DNS, RTP-shaped voice and video with RTCP, ICMP and ICMPv6 echo and errors, IPv4 and IPv6
//! fragments) and a mix of all of it with some TCP. Real kernel traffic, as for
//! `captures/unseen/`: two network namespaces, each with a TUN device, joined by the gateway's
//! emulated link carrying packets uncompressed (scheme `none`: bandwidth, one-way delay, DropTail
//! queue, seeded random loss), captured with `dumpcap` on both TUN devices (ingress view: what
//! each host sends, merged by time). Needs root, `dumpcap` and `mergecap`, `openssl`, `ping`
//! (iputils), and Python 3.11 with `aioquic` and `dnslib` (the traffic generators in
//! `traffic.py` beside this file).
//!
//! ```sh
//! cargo run --release -p taroc-lab --example make_mixed_captures -- [OUT_DIR] [NAME...]
//! # OUT_DIR defaults to captures/mixed; NAMEs pick captures by the start of their file name
//! # (e.g. quic rtp_voice); PYTHON picks the interpreter (default python3)
//! ```
//!
//! Each traffic process is `traffic.py` run with `ip netns exec` in one namespace: the servers
//! (B's side) first, then the clients; every one binds its sockets and says `ready`, and when all
//! have, all are told `go` at once. The capture ends when every client has finished and the
//! servers' standard input is closed.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use taroc_core::Variant;
use taroc_gateway::gateway::{run_emulated, LoopOptions, Pipeline, PipelineConfig};
use taroc_gateway::link::LinkConfig;
use taroc_gateway::netns::{self, Netns};
use taroc_gateway::tun::{Tun, TunConfig};
use taroc_gateway::Error;

#[path = "../capture_kit/mod.rs"]
mod capture_kit;
use capture_kit::{address, dumpcap, interrupt};

/// The link of every capture, each way: 4000 kbit/s, 20 ms, DropTail of 64 packets, 0.5% loss.
const RATE_KBPS: u64 = 4000;
const DELAY_MS: u64 = 20;
const LOSS: f64 = 0.005;

/// One traffic process: which side runs it, whether it is a server (runs until told to stop),
/// and its `traffic.py` arguments.
struct Proc {
    side: usize,
    server: bool,
    args: Vec<String>,
}

/// What a kind's processes are built from.
struct Ctx<'a> {
    /// The two sides' addresses (of the kind's family).
    addr: [String; 2],
    cert: &'a Path,
    key: &'a Path,
    seed: u64,
}

/// One capture to make.
struct Kind {
    file: &'static str,
    v6: bool,
    seed: u64,
    procs: fn(&Ctx) -> Vec<Proc>,
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_string()).collect()
}

fn server(side: usize, args: Vec<String>) -> Proc {
    Proc {
        side,
        server: true,
        args,
    }
}

fn client(side: usize, args: Vec<String>) -> Proc {
    Proc {
        side,
        server: false,
        args,
    }
}

impl Ctx<'_> {
    fn seed(&self) -> String {
        self.seed.to_string()
    }

    fn quic_server(&self) -> Proc {
        let (cert, key) = (self.cert.to_string_lossy(), self.key.to_string_lossy());
        let mut args = strings(&["quic-server", "--local", &self.addr[1], "--port", "443"]);
        args.extend(strings(&[
            "--cert",
            &cert,
            "--key",
            &key,
            "--seed",
            &self.seed(),
        ]));
        server(1, args)
    }

    fn quic_client(&self, connections: &[&str], gap: &str) -> Proc {
        let cert = self.cert.to_string_lossy();
        let mut args = strings(&["quic-client", "--peer", &self.addr[1], "--port", "443"]);
        args.extend(strings(&[
            "--ca",
            &cert,
            "--gap",
            gap,
            "--seed",
            &self.seed(),
        ]));
        for c in connections {
            args.extend(strings(&["--connection", c]));
        }
        client(0, args)
    }

    fn dns(&self, duration: &str, rate: &str) -> [Proc; 2] {
        let seed = self.seed();
        [
            server(
                1,
                strings(&["dns-server", "--local", &self.addr[1], "--seed", &seed]),
            ),
            client(
                0,
                strings(&[
                    "dns-client",
                    "--peer",
                    &self.addr[1],
                    "--duration",
                    duration,
                    "--rate",
                    rate,
                    "--seed",
                    &seed,
                ]),
            ),
        ]
    }

    /// Both sides of the RTP-shaped calls (and video); B's side is bound before A sends.
    fn rtp(&self, duration: &str, calls: &str, video: bool) -> [Proc; 2] {
        [0, 1].map(|side| {
            let mut args = strings(&[
                "rtp",
                "--local",
                &self.addr[side],
                "--peer",
                &self.addr[1 - side],
                "--side",
                ["a", "b"][side],
                "--duration",
                duration,
                "--calls",
                calls,
                "--seed",
                &self.seed(),
            ]);
            if video {
                args.push("--video".into());
            }
            client(side, args)
        })
    }

    fn udp_sink(&self) -> Proc {
        server(1, strings(&["udp-sink", "--local", &self.addr[1]]))
    }

    /// ICMP from `side`: pings of `sizes` every `intervals` seconds, large UDP datagrams to B's
    /// sink every `large` seconds and UDP to a closed port every `closed` seconds (0: none).
    fn icmp(
        &self,
        side: usize,
        duration: &str,
        sizes: &str,
        intervals: &str,
        large: &str,
        closed: &str,
    ) -> Proc {
        client(
            side,
            strings(&[
                "icmp",
                "--local",
                &self.addr[side],
                "--peer",
                &self.addr[1 - side],
                "--duration",
                duration,
                "--ping-sizes",
                sizes,
                "--ping-intervals",
                intervals,
                "--large-every",
                large,
                "--closed-every",
                closed,
                "--seed",
                &self.seed(),
            ]),
        )
    }

    fn tcp(&self, duration: &str) -> [Proc; 2] {
        let seed = self.seed();
        [
            server(
                1,
                strings(&["tcp-server", "--local", &self.addr[1], "--seed", &seed]),
            ),
            client(
                0,
                strings(&[
                    "tcp-client",
                    "--peer",
                    &self.addr[1],
                    "--duration",
                    duration,
                    "--seed",
                    &seed,
                ]),
            ),
        ]
    }
}

fn quic(c: &Ctx) -> Vec<Proc> {
    vec![
        c.quic_server(),
        c.quic_client(&["1000,10000,100000", "300000,5000"], "1.0"),
    ]
}

fn dns(c: &Ctx) -> Vec<Proc> {
    c.dns("30", "16").into()
}

fn voice(c: &Ctx) -> Vec<Proc> {
    c.rtp("20", "3", false).into()
}

fn video(c: &Ctx) -> Vec<Proc> {
    c.rtp("12", "1", true).into()
}

fn icmp(c: &Ctx) -> Vec<Proc> {
    vec![
        c.udp_sink(),
        c.icmp(
            0,
            "12",
            "56,120,1000,3000",
            "0.1,0.25,0.5,1.0",
            "1.0",
            "1.5",
        ),
        c.icmp(1, "12", "56", "0.2", "0", "0"),
    ]
}

fn mix(c: &Ctx) -> Vec<Proc> {
    let mut procs = vec![
        c.quic_server(),
        c.quic_client(&["20000,50000", "100000,3000"], "5.0"),
        c.udp_sink(),
        c.icmp(0, "15", "56,1400,3000", "0.5,1.0,2.0", "2.0", "3.0"),
    ];
    procs.extend(c.dns("15", "3"));
    procs.extend(c.rtp("15", "1", false));
    procs.extend(c.tcp("15"));
    procs
}

fn kinds() -> Vec<Kind> {
    let kind = |file, v6, seed, procs| Kind {
        file,
        v6,
        seed,
        procs,
    };
    vec![
        kind("quic_v4.pcap", false, 401, quic),
        kind("quic_v6.pcap", true, 402, quic),
        kind("dns_v4.pcap", false, 403, dns),
        kind("dns_v6.pcap", true, 404, dns),
        kind("rtp_voice_v4.pcap", false, 405, voice),
        kind("rtp_voice_v6.pcap", true, 406, voice),
        kind("rtp_video_v4.pcap", false, 407, video),
        kind("icmp_v4.pcap", false, 408, icmp),
        kind("icmp_v6.pcap", true, 409, icmp),
        kind("mix_v4.pcap", false, 410, mix),
    ]
}

/// A traffic process started and ready.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    server: bool,
    what: String,
}

/// Starts `traffic.py` with `args` in namespace `ns` and waits for its `ready`.
fn start(ns: &str, proc: &Proc) -> Result<Running, Error> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/make_mixed_captures/traffic.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let what = format!("{} (side {})", proc.args[0], ["A", "B"][proc.side]);
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, &python])
        .arg(&script)
        .args(&proc.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::io(format!("starting {what}"), e))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(line) if line.trim() == "ready" => Ok(Running {
            stdin: child.stdin.take(),
            child,
            server: proc.server,
            what,
        }),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            Err(Error::new(format!("{what} did not get ready")))
        }
    }
}

/// Runs a kind's processes: servers, then clients, all ready; go; clients finish; servers stop.
fn run_traffic(ns: [&str; 2], procs: &[Proc]) -> Result<(), Error> {
    let mut running = Vec::new();
    let mut result = Ok(());
    for proc in procs
        .iter()
        .filter(|p| p.server)
        .chain(procs.iter().filter(|p| !p.server))
    {
        match start(ns[proc.side], proc) {
            Ok(r) => running.push(r),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    if result.is_ok() {
        for r in &mut running {
            if let Some(stdin) = r.stdin.as_mut() {
                let _ = stdin.write_all(b"go\n").and_then(|()| stdin.flush());
            }
        }
        let deadline = Instant::now() + Duration::from_secs(180);
        for r in running.iter_mut().filter(|r| !r.server) {
            loop {
                match r.child.try_wait() {
                    Ok(Some(status)) if status.success() => break,
                    Ok(Some(status)) => {
                        result = Err(Error::new(format!("{} ended with {status}", r.what)));
                        break;
                    }
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    _ => {
                        result = Err(Error::new(format!("{} did not finish", r.what)));
                        break;
                    }
                }
            }
        }
    }
    // Stop what still runs: servers see their standard input close; anything left after 10 s
    // is killed.
    for r in &mut running {
        r.stdin = None;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    for r in &mut running {
        while matches!(r.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if matches!(r.child.try_wait(), Ok(None)) {
            eprintln!("make_mixed_captures: {} still running: killed", r.what);
            let _ = r.child.kill();
        }
        let _ = r.child.wait();
    }
    result
}

/// Makes a self-signed certificate for the QUIC server (ECDSA P-256, `mixed.test`).
fn certificate(dir: &Path) -> Result<(PathBuf, PathBuf), Error> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "30",
            "-subj",
            "/CN=mixed.test",
            "-addext",
            "subjectAltName=DNS:mixed.test",
            "-keyout",
        ])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| Error::io("running openssl", e))?;
    if !status.success() {
        return Err(Error::new("openssl could not make a certificate"));
    }
    Ok((cert, key))
}

/// Makes one capture into `out`.
fn make(kind: &Kind, out: &Path, cert: &Path, key: &Path) -> Result<(), Error> {
    let pid = std::process::id();
    let stem = kind.file.trim_end_matches(".pcap");
    let names = [
        format!("tarocm-{pid}-{}a", &stem[..stem.len().min(4)]),
        format!("tarocm-{pid}-{}b", &stem[..stem.len().min(4)]),
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
    }
    let link = LinkConfig {
        rate_bps: RATE_KBPS * 1000,
        delay: Duration::from_millis(DELAY_MS),
        loss: LOSS,
        ..LinkConfig::default()
    };
    let none = Variant::parse("none").map_err(Error::new)?;
    let mut pipeline = Pipeline::new(&PipelineConfig {
        variants: [none.clone(), none],
        links: [link.clone(), link],
        tun_mtu: 1500,
        seed: kind.seed,
        verify_checksums: false,
    })?;
    let ctx = Ctx {
        addr: [0, 1].map(|side| address(kind.v6, side).to_string()),
        cert,
        key,
        seed: kind.seed,
    };
    let procs = (kind.procs)(&ctx);
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
            let mut captures = Vec::new();
            for side in 0..2 {
                let filter = format!("src host {}", ctx.addr[side]);
                captures.push(dumpcap(ns[side], &filter, &parts[side])?);
            }
            let traffic = run_traffic(ns, &procs);
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
    let mut merge = Command::new("mergecap");
    merge.args(["-F", "pcap", "-w"]).arg(out).args(&parts);
    let status = merge
        .status()
        .map_err(|e| Error::io("running mergecap", e))?;
    for p in &parts {
        let _ = std::fs::remove_file(p);
    }
    if !status.success() {
        return Err(Error::new(format!("mergecap failed for {}", out.display())));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("captures/mixed", String::as_str));
    let only = &args[args.len().min(1)..];
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("make_mixed_captures: {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let tmp = std::env::temp_dir().join(format!("taroc-mixed-{}", std::process::id()));
    let made = std::fs::create_dir_all(&tmp)
        .map_err(|e| Error::io("making a temporary folder", e))
        .and_then(|()| certificate(&tmp));
    let (cert, key) = match made {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("make_mixed_captures: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut code = ExitCode::SUCCESS;
    for kind in kinds()
        .iter()
        .filter(|k| only.is_empty() || only.iter().any(|o| k.file.starts_with(o.as_str())))
    {
        eprintln!(
            "{}: seed {}, {RATE_KBPS} kbit/s, {DELAY_MS} ms, loss {LOSS} each way",
            kind.file, kind.seed
        );
        if let Err(e) = make(kind, &out.join(kind.file), &cert, &key) {
            eprintln!("make_mixed_captures: {}: {e}", kind.file);
            code = ExitCode::FAILURE;
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    code
}
