//! What `taroc gateway` does with its parsed command line ([`crate::args`]): run a gateway,
//! `bench`, `transfer`, `genkey` or `resume`, and report the result with the exit status every
//! taroc command uses.

use std::io::Write as _;
use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;
use taroc_core::variant::Variant;

use crate::args::{
    clamped_duration, BenchArgs, GatewayArgs, GatewayCommand, RunArgs, TransferArgs,
};
use crate::auth::AuthConfig;
use crate::bench::{self, ForwardingConfig, GridConfig};
use crate::counters::Counters;
use crate::endpoint::{EndpointConfig, DIRECTIONS};
use crate::ethernet::{self, EthernetConfig, EthernetTransport};
use crate::gateway::{self, Pipeline, PipelineConfig, RunReport};
use crate::harness;
use crate::serial::{self, SerialConfig, SerialTransport};
use crate::transfer::{self, TransferConfig};
use crate::transport::{self, Transport};
use crate::tun::{Tun, TunConfig};
use crate::udp::{self, UdpConfig};
use crate::{keyfile, signal, Error};

/// Runs `taroc gateway`: a gateway, `bench` or `transfer`.
pub fn run(args: GatewayArgs) -> ExitCode {
    let result = match args.command {
        Some(GatewayCommand::Bench(bench)) => run_bench(&bench),
        Some(GatewayCommand::Transfer(transfer)) => run_transfer(&transfer),
        Some(GatewayCommand::Genkey) => {
            keyfile::generate().and_then(|key| print_out(&keyfile::format(&key)))
        }
        Some(GatewayCommand::Resume(resume)) => crate::resume::run(&resume),
        None => run_gateway(&args.run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader has gone (`| head`): quietly, as other tools do.
        Err(e) if is_broken_stdout(&e) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("taroc gateway: {e}");
            // One rule for every taroc command: 2 for a bad command line, 1 for a failure.
            ExitCode::from(if e.is_usage() { 2 } else { 1 })
        }
    }
}

/// What an error writing to standard output says.
const STDOUT: &str = "cannot write to standard output";

/// Writes `text` to standard output and flushes it: results that cannot be written are an
/// error (the program's exit status then says so), not a panic as `print!` would make them.
pub fn print_out(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::io(STDOUT, e))
}

/// Whether `error` is [`print_out`]'s, for a reader that has gone (a broken pipe).
fn is_broken_stdout(error: &Error) -> bool {
    error.to_string().starts_with(STDOUT)
        && error
            .os_error()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Prints the final counters (the table on standard error; with `json`, the JSON record on
/// standard output).
fn print_report(labels: &[&str; 2], report: &RunReport, json: bool) -> Result<(), Error> {
    eprint!("{}", gateway::final_table(labels, report));
    if json {
        #[derive(serde::Serialize)]
        struct Final<'a> {
            directions: [&'a str; 2],
            counters: &'a [Counters; 2],
            cpu_s: f64,
            wall_s: f64,
            cpu_ns_per_packet: f64,
        }
        let record = Final {
            directions: *labels,
            counters: &report.counters,
            cpu_s: report.cpu.as_secs_f64(),
            wall_s: report.wall.as_secs_f64(),
            cpu_ns_per_packet: report.cpu_ns_per_packet(),
        };
        match serde_json::to_string(&record) {
            Ok(line) => print_out(&format!("{line}\n"))?,
            Err(e) => eprintln!("taroc gateway: JSON: {e}"),
        }
    }
    Ok(())
}

pub(crate) fn run_gateway(args: &RunArgs) -> Result<(), Error> {
    let link = args.link();
    let variants = args.variants_on_link(args.peer.is_some())?;
    let stop = AtomicBool::new(false);
    let options = args.options();
    match (&args.tun_a, &args.tun_b, &args.tun, &args.peer) {
        (Some(a), Some(b), None, None) => {
            if args.listen.is_some() || args.key.is_some() || args.insecure_no_auth {
                return Err(Error::usage(
                    "--listen, --key and --insecure-no-auth belong to the UDP mode (--tun, \
                     --peer); the emulated link has no UDP link to authenticate",
                ));
            }
            let config = PipelineConfig {
                variants: variants.clone(),
                links: [link.clone(), link],
                tun_mtu: args.mtu as usize,
                seed: args.seed,
                verify_checksums: !args.deliver_bad_checksums,
            };
            let mut pipeline = Pipeline::new(&config)?;
            let open = |name: &String, netns: &Option<String>| {
                Tun::open(&TunConfig {
                    name: name.clone(),
                    mtu: args.mtu,
                    netns: netns.clone(),
                })
            };
            let tun_a = open(a, &args.netns_a)?;
            let tun_b = open(b, &args.netns_b)?;
            signal::install()?;
            eprintln!(
                "taroc gateway: emulated link {a} <-> {b}, schemes a->b {} b->a {}, MTU {} (link \
                 {}); SIGINT/SIGTERM to stop",
                variants[0], variants[1], args.mtu, config.links[0].mtu
            );
            let report = gateway::run_emulated([&tun_a, &tun_b], &mut pipeline, &stop, &options)?;
            print_report(&gateway::DIRECTIONS, &report, args.json)
        }
        (None, None, Some(name), None) if args.serial.is_some() => run_serial(args, name, variants),
        (None, None, Some(name), None) if args.ethernet.is_some() => {
            run_ethernet(args, name, variants)
        }
        (None, None, Some(name), Some(peer)) => {
            if args.serial.is_some() {
                return Err(Error::usage(
                    "--serial and --peer are two links: give one (a serial line, or UDP)",
                ));
            }
            if args.netns_a.is_some() || args.netns_b.is_some() {
                return Err(Error::usage(
                    "--netns-a/--netns-b belong to the emulated mode",
                ));
            }
            let listen = args
                .listen
                .ok_or_else(|| Error::usage("the UDP mode needs --listen ADDR:PORT"))?;
            let auth = args.auth()?;
            let tag = auth.as_ref().map_or_else(
                || "NOT authenticated".to_owned(),
                |a| format!("authenticated ({}-byte tags)", a.tag_len),
            );
            let config = UdpConfig {
                listen,
                peer: *peer,
                variants: variants.clone(),
                link,
                tun_mtu: args.mtu as usize,
                seed: args.seed,
                verify_checksums: !args.deliver_bad_checksums,
                auth,
                socket_buffer: args.socket_buffer as usize,
            };
            udp::check(&config)?;
            let tun = Tun::open(&TunConfig {
                name: name.clone(),
                mtu: args.mtu,
                netns: args.netns.clone(),
            })?;
            signal::install()?;
            eprintln!(
                "taroc gateway: {name} <-> UDP {listen} <-> peer {peer}, {tag}, send {} receive \
                 {}, MTU {}; SIGINT/SIGTERM to stop",
                variants[0], variants[1], args.mtu
            );
            let report = udp::run_udp(&tun, &config, &stop, &options)?;
            print_report(&DIRECTIONS, &report, args.json)
        }
        _ => Err(Error::usage(
            "give --tun-a and --tun-b (emulated link), --tun, --listen and --peer (UDP link), \
             --tun and --serial (serial line), or --tun, --ethernet and --peer-mac (Ethernet); \
             see --help",
        )),
    }
}

/// The data path's settings of a gateway with a peer on a link that keeps order.
fn endpoint_config(
    args: &RunArgs,
    variants: &[Variant; 2],
    auth: Option<AuthConfig>,
) -> Result<EndpointConfig, Error> {
    let config = EndpointConfig {
        variants: variants.clone(),
        link: args.link(),
        tun_mtu: args.mtu as usize,
        seed: args.seed,
        verify_checksums: !args.deliver_bad_checksums,
        auth,
        may_reorder: false,
    };
    config.check()?;
    Ok(config)
}

/// Runs a gateway of `config` on TUN device `name` and `transport` (opened already, so that a
/// transport that cannot open leaves no TUN device behind), after saying `what` it runs on.
fn run_on<T: Transport>(
    args: &RunArgs,
    name: &str,
    transport: T,
    config: &EndpointConfig,
    what: &str,
) -> Result<(), Error> {
    let tun = Tun::open(&TunConfig {
        name: name.to_owned(),
        mtu: args.mtu,
        netns: args.netns.clone(),
    })?;
    signal::install()?;
    let tag = config.auth.as_ref().map_or_else(
        || "NOT authenticated".to_owned(),
        |a| format!("authenticated ({}-byte tags)", a.tag_len),
    );
    let [send, receive] = &config.variants;
    eprintln!(
        "taroc gateway: {name} <-> {what}, {tag}, send {send} receive {receive}, MTU {} (link \
         {}); SIGINT/SIGTERM to stop",
        args.mtu, config.link.mtu
    );
    let stop = AtomicBool::new(false);
    let report = transport::run_fresh(&tun, transport, config, &stop, &args.options())?;
    print_report(&DIRECTIONS, &report, args.json)
}

/// Runs a gateway whose link is raw Ethernet on `args.ethernet`, on TUN device `name`.
fn run_ethernet(args: &RunArgs, name: &str, variants: [Variant; 2]) -> Result<(), Error> {
    if args.serial.is_some() || args.listen.is_some() || args.netns_a.is_some() {
        return Err(Error::usage(
            "--ethernet is a link of its own: not with --serial, --listen or --netns-a/-b",
        ));
    }
    let interface = args.ethernet.clone().unwrap_or_default();
    let peer = args
        .peer_mac
        .ok_or_else(|| Error::usage("--ethernet needs --peer-mac MAC, the peer gateway's"))?;
    let config = endpoint_config(args, &variants, args.auth()?)?;
    let overhead = 1 + config.auth.as_ref().map_or(0, |a| a.max_overhead());
    ethernet::check_interface_mtu(&interface, config.link.mtu, overhead)?;
    let link = EthernetConfig {
        interface,
        peer,
        ethertype: args.ethertype,
    };
    let transport = EthernetTransport::open(&link)?;
    let what = format!(
        "Ethernet {} EtherType {:04x} <-> peer {peer}",
        link.interface, link.ethertype
    );
    run_on(args, name, transport, &config, &what)
}

/// Runs a gateway whose link is the serial line of `args.serial`, on TUN device `name`.
fn run_serial(args: &RunArgs, name: &str, variants: [Variant; 2]) -> Result<(), Error> {
    if args.netns_a.is_some() || args.netns_b.is_some() || args.listen.is_some() {
        return Err(Error::usage(
            "--netns-a/--netns-b belong to the emulated mode, --listen to the UDP link",
        ));
    }
    let config = endpoint_config(args, &variants, args.serial_auth()?)?;
    // The longest link frame: the link MTU, its kind byte, and the authentication's framing.
    let max_frame = config.link.mtu + config.auth.as_ref().map_or(0, |a| a.max_overhead());
    let line = SerialConfig {
        path: args.serial.clone().unwrap_or_default(),
        baud: args.baud,
        framing: args.serial_framing(max_frame),
    };
    let transport = SerialTransport::open(&line)?;
    if config.auth.is_none() {
        eprintln!(
            "taroc gateway: frames on the serial line are not authenticated (give --key FILE)"
        );
    }
    let what = format!(
        "serial {} at {} baud, {}",
        line.path.display(),
        line.baud,
        line.framing.describe()
    );
    run_on(args, name, transport, &config, &what)
}

fn run_transfer(args: &TransferArgs) -> Result<(), Error> {
    if let Some(ns) = &args.netns {
        crate::netns::enter(ns)?;
    }
    signal::install()?;
    let config = TransferConfig {
        bytes: args.bytes,
        seed: args.seed,
        time_limit: clamped_duration(args.time_limit),
    };
    let deadline = Instant::now() + config.time_limit;
    #[derive(serde::Serialize)]
    struct Report {
        role: &'static str,
        bytes: u64,
        bytes_sent: Option<u64>,
        bytes_received: Option<u64>,
        first_mismatch: Option<u64>,
        elapsed_s: Option<f64>,
        goodput_bytes_per_s: Option<f64>,
        completed: bool,
        intact: bool,
    }
    let report = match (args.receive, args.send) {
        (Some(addr), _) => {
            let listener = TcpListener::bind(addr)
                .map_err(|e| Error::io(format!("listening on {addr}"), e))?;
            eprintln!("taroc gateway transfer: listening on {addr}");
            let r = transfer::receive(listener, &config, deadline, &signal::STOP)?;
            Report {
                role: "receive",
                bytes: args.bytes,
                bytes_sent: None,
                bytes_received: Some(r.bytes_received),
                first_mismatch: r.first_mismatch,
                elapsed_s: Some(r.elapsed_ns as f64 / 1e9),
                goodput_bytes_per_s: Some(r.goodput()),
                completed: r.completed,
                intact: r.completed && r.first_mismatch.is_none() && r.bytes_received == args.bytes,
            }
        }
        (None, Some(addr)) => {
            let started = Instant::now();
            let (sent, closed) = transfer::send(addr, &config, deadline, &signal::STOP)?;
            Report {
                role: "send",
                bytes: args.bytes,
                bytes_sent: Some(sent),
                bytes_received: None,
                first_mismatch: None,
                elapsed_s: Some(started.elapsed().as_secs_f64()),
                goodput_bytes_per_s: None,
                completed: closed,
                intact: closed && sent == args.bytes,
            }
        }
        (None, None) => return Err(Error::new("give --send or --receive")),
    };
    match serde_json::to_string(&report) {
        Ok(line) => print_out(&format!("{line}\n"))?,
        Err(e) => return Err(Error::new(format!("JSON: {e}"))),
    }
    if report.intact {
        Ok(())
    } else {
        Err(Error::new(format!(
            "the stream did not arrive whole and unchanged ({} of {} bytes{})",
            report.bytes_received.or(report.bytes_sent).unwrap_or(0),
            args.bytes,
            match report.first_mismatch {
                Some(at) => format!(", first wrong byte at {at}"),
                None => String::new(),
            }
        )))
    }
}

/// What a bench prints as its records come: each as a JSON line on standard output with
/// `--json`, else a progress line on standard error; and at the end its table, unless JSON. The
/// first write to standard output that failed is kept, and returned by [`Records::finish`].
struct Records {
    json: bool,
    failed: Option<Error>,
}

impl Records {
    fn new(json: bool) -> Records {
        Records { json, failed: None }
    }

    /// Prints `record`: as a JSON line with `--json`, else `progress()` on standard error.
    fn record<R: Serialize>(&mut self, record: &R, progress: impl FnOnce() -> String) {
        if self.json {
            self.json_line(record, print_out);
        } else {
            eprintln!("{}", progress());
        }
    }

    /// Writes `record` as a JSON line through `write` (unless a write failed already).
    fn json_line<R: Serialize>(
        &mut self,
        record: &R,
        write: impl FnOnce(&str) -> Result<(), Error>,
    ) {
        if self.failed.is_none() {
            if let Ok(line) = serde_json::to_string(record) {
                self.failed = write(&format!("{line}\n")).err();
            }
        }
    }

    /// The first failed write, or `table()` printed unless JSON.
    fn finish(self, table: impl FnOnce() -> String) -> Result<(), Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if !self.json {
            print_out(&table())?;
        }
        Ok(())
    }
}

/// `taroc gateway bench --transports`.
fn run_transport_bench(args: &BenchArgs, variants: &[Variant]) -> Result<(), Error> {
    let total = variants.len() * bench::TRANSPORTS.len();
    let mut done = 0;
    let mut out = Records::new(args.json);
    let (bytes, jobs) = (args.bytes, args.jobs.max(1));
    let records = bench::run_transport_bench(variants, bytes, jobs, args.seed, |r| {
        done += 1;
        out.record(r, || {
            format!(
                "[{done}/{total}] {} {}: {:.1} medium bytes per packet",
                r.transport,
                r.scheme,
                r.medium_bytes as f64 / r.packets.max(1) as f64
            )
        });
    })?;
    out.finish(|| bench::transport_table(&records))
}

/// `taroc gateway bench --serial`.
fn run_serial_bench(args: &BenchArgs, variants: Vec<Variant>) -> Result<(), Error> {
    for &baud in &args.bauds {
        if serial::baud_rate(baud).is_none() {
            return Err(Error::usage(format!(
                "--bauds {baud}: not a rate a serial line can be set to (one of: {})",
                serial::BAUD_RATES
            )));
        }
    }
    let mut lines = Vec::new();
    for &baud in &args.bauds {
        for kiss in [false, true] {
            for mtu in [296, 1500] {
                lines.push(bench::Line { baud, kiss, mtu });
            }
        }
    }
    let config = bench::SerialBenchConfig {
        variants,
        lines,
        seconds: 8.0,
        exchanges: 40,
        authenticated: false,
        jobs: args.jobs.max(1),
        seed: args.seed,
    };
    let total = config.lines.len() * config.variants.len();
    let mut done = 0;
    let mut out = Records::new(args.json);
    let records = bench::run_serial_bench(&config, |r| {
        done += 1;
        out.record(r, || {
            format!(
                "[{done}/{total}] {} baud {} MTU {} {}: {:.0} B/s, echo {:.2} s",
                r.line.baud,
                if r.line.kiss { "kiss" } else { "hdlc" },
                r.line.mtu,
                r.scheme,
                r.goodput,
                r.echo_s
            )
        });
    })?;
    out.finish(|| bench::serial_table(&records))
}

fn run_bench(args: &BenchArgs) -> Result<(), Error> {
    harness::check_environment()?;
    // SIGINT/SIGTERM stop the running transfers and gateways; every namespace is cleaned up.
    signal::install()?;
    let variants = if args.schemes.is_empty() {
        Variant::all()
    } else {
        args.schemes.clone()
    };
    if args.forwarding {
        let config = ForwardingConfig {
            variants,
            links: args.link.clone(),
            seconds: args.forwarding_seconds,
            rounds: args.rounds.max(1),
            mtu: args.mtu.unwrap_or(1500),
            ip_version: args.ip,
        };
        let mut out = Records::new(args.json);
        let records = bench::run_forwarding(&config, |r| {
            out.record(r, || {
                format!(
                    "round {} {} ({}): {:.1} Mbit/s, {:.0} ns CPU/packet",
                    r.round,
                    r.path,
                    r.link.name(),
                    r.mbit_per_s,
                    r.cpu_ns_per_packet
                )
            });
        })?;
        return out.finish(|| bench::forwarding_table(&records));
    }
    if args.serial {
        return run_serial_bench(args, variants);
    }
    if args.transports {
        return run_transport_bench(args, &variants);
    }
    let config = GridConfig {
        variants,
        rates_kbps: args.rates.clone(),
        bers: args.bers.clone(),
        timestamps: args.timestamps.clone(),
        ip_version: args.ip,
        mtu: args.mtu,
        delay: clamped_duration(args.delay / 1000.0),
        queue: args.queue,
        duration: clamped_duration(args.duration),
        time_limit: clamped_duration(args.time_limit.unwrap_or(4.0 * args.duration + 30.0)),
        congestion_control: args.cc.clone(),
        jobs: args.jobs.max(1),
        seed: args.seed,
    };
    let total = config.rates_kbps.len()
        * config.bers.len()
        * config.timestamps.len()
        * config.variants.len();
    let mut done = 0;
    let bar = bench::progress_bar(total as u64);
    let mut out = Records::new(args.json);
    let records = bench::run_grid(&config, |r| {
        done += 1;
        bar.inc(1);
        if args.json {
            out.json_line(r, |line| bar.suspend(|| print_out(line)));
        }
        bar.suspend(|| {
            eprintln!(
                "[{done}/{total}] {} {} kbit/s BER {:e} MTU {} TS {}: {:.0} B/s{}, incorrect {}",
                r.scheme,
                r.rate_kbps,
                r.ber,
                r.mtu,
                if r.timestamps { "on" } else { "off" },
                r.goodput_bytes_per_s,
                if r.completed { "" } else { " (time limit)" },
                r.incorrect_delivered
            )
        });
    });
    bar.finish_and_clear();
    let records = records?;
    out.finish(|| bench::grid_table(&records))
}
