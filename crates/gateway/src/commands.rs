//! What `taroc gateway` does with a running gateway's parsed command line ([`crate::args`]):
//! run it, or print a new key (`genkey`); and the exit status every `taroc gateway` command
//! reports its result with ([`exit_status`]).

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use taroc_core::variant::Variant;

use crate::args::RunArgs;
use crate::auth::AuthConfig;
use crate::counters::Counters;
use crate::endpoint::{EndpointConfig, DIRECTIONS};
use crate::ethernet::{self, EthernetConfig, EthernetTransport};
use crate::gateway::{self, Pipeline, PipelineConfig, RunReport};
use crate::serial::{SerialConfig, SerialTransport};
use crate::transport::{self, Transport};
use crate::tun::{Tun, TunConfig};
use crate::udp::{self, UdpConfig};
use crate::{keyfile, signal, Error};

/// `taroc gateway genkey`: prints a new key for the authenticated link (`--key FILE`).
pub fn genkey() -> Result<(), Error> {
    keyfile::generate().and_then(|key| print_out(&keyfile::format(&key)))
}

/// The exit status of a `taroc gateway` command that ended with `result`, its error printed:
/// 0 done, 2 a bad command line, 1 a failure (quietly for a reader that has gone).
pub fn exit_status(result: Result<(), Error>) -> ExitCode {
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

/// Runs the gateway `args` describe until SIGINT or SIGTERM (or `--time-limit`).
pub fn run_gateway(args: &RunArgs) -> Result<(), Error> {
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
                socket_buffer: args.socket_buffer as usize,
                endpoint: endpoint_config(args, &variants, auth)?,
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

/// The data path's settings of a gateway with a peer (on a link that keeps order: the UDP
/// link says otherwise itself).
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
        socket_buffer: args.socket_buffer as usize,
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
