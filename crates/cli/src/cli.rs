//! The command line: `taroc eval [OPTIONS] [PCAP]...`.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use taroc_core::variant::{self, Variant};
use taroc_gateway::args::{burst_length, probability};

use crate::capture::{self, Capture, CaptureError, CaptureReader};
use crate::eval::output::{OutputPaths, Outputs};
use crate::eval::{self, Observer, Options, Way};
use crate::{report, timing, twice};

mod progress;
use progress::Progress;
use taroc_sim::cli::output_failed;
pub use taroc_sim::cli::Exit;

/// Robust TCP/IP header compression (TAROC) and the tools to measure it.
#[derive(Debug, Parser)]
#[command(
    name = "taroc",
    version,
    about = "Robust TCP/IP header compression (TAROC) and the tools to measure it",
    long_about = "Robust TCP/IP header compression (TAROC: W-LSB encoding with TCP \
                  congestion-window tracking, robust without feedback) and baselines.\n\n\
                  Run `taroc eval` to measure every scheme on packet captures."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate header-compression schemes on packet captures over a simulated link.
    #[command(long_about = EVAL_ABOUT)]
    Eval(EvalArgs),
    /// Would the decompressor repair its context if a segment were lost? (The twice analysis of
    /// Degermark et al., Figure 16.)
    #[command(long_about = TWICE_ABOUT)]
    Twice(TwiceArgs),
    /// Run header compression on a live Linux link (TUN devices, emulated or UDP link), or
    /// measure it (`taroc gateway bench`).
    #[command(long_about = taroc_gateway::args::GATEWAY_ABOUT)]
    Gateway(Box<crate::gateway::GatewayArgs>),
    /// Simulate one TCP transfer over the draft's Appendix B topology with real codecs.
    Sim(taroc_sim::cli::SimArgs),
    /// Reproduce a published evaluation with the simulator (default: the TAROC draft's
    /// Appendix B tables).
    Reproduce(taroc_sim::cli::ReproduceCommand),
    /// Wang & Kung's TCP-decoupling analysis: PER, window and throughput for a BER.
    #[command(long_about = taroc_sim::cli::MAT_ABOUT)]
    Mat(taroc_sim::cli::MatArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(crate::completions::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command into a directory.
    Man(crate::completions::ManArgs),
}

const TWICE_ABOUT: &str = "\
Would the decompressor repair its context if a segment were lost? The twice analysis of \
Degermark et al. (Low-loss TCP/IP header compression for wireless networks, Figure 16).

For every TCP segment of each capture, the real codecs are run as if that one segment were lost \
on the link: the loss counts as repaired if the decompressor then delivers the next segment of \
the same flow exactly as captured. Reported per method, for data streams (flows where most \
segments carry payload) and ACK streams, as the percentage of losses repaired (rep%), beside the \
paper's numbers for its four FTP traces, and the percentage of losses whose next segment went \
compressed (comp%: the others are repaired by a full or uncompressed header, whatever the method):
  twice        IPHC (RFC 2507): apply the delta twice, accept if the TCP checksum verifies
  twice+k*mss  twice, then the paper's suggested extension: try multiples of the segment size
  vj           RFC 1144, for contrast: no repair (a loss leaves a wrong context)
  taroc        TAROC's W-LSB, for contrast

Header requests are off: this measures what the decompressor repairs on its own. Captures and \
link types as for `taroc eval`; with no PCAP, the built-in capture is used.";

/// The arguments of `taroc twice`.
#[derive(Debug, Clone, Args)]
pub struct TwiceArgs {
    /// Capture files (pcap or pcapng; `-` is standard input). Without any, the built-in capture
    /// is used.
    #[arg(value_name = "PCAP")]
    pub pcaps: Vec<PathBuf>,

    /// Print one JSON object per line per capture, method and stream kind instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Opens the capture at `path` (`-`: standard input), or the built-in one.
fn open_capture(path: Option<&PathBuf>) -> Result<CaptureReader<Box<dyn Read>>, CaptureError> {
    match path {
        Some(path) => capture::open(path),
        None => CaptureReader::new(
            crate::BUILTIN_CAPTURE_NAME,
            Box::new(crate::BUILTIN_CAPTURE) as Box<dyn Read>,
        ),
    }
}

/// The captures named, or the built-in one.
fn sources(pcaps: &[PathBuf]) -> Vec<Option<&PathBuf>> {
    if pcaps.is_empty() {
        vec![None]
    } else {
        pcaps.iter().map(Some).collect()
    }
}

/// Reports a capture that was cut short on `err` (one line).
fn warn_if_cut(command: &str, name: &str, warning: Option<&str>, err: &mut dyn Write) {
    if let Some(warning) = warning {
        let _ = writeln!(err, "taroc {command}: warning: {name}: {warning}");
    }
}

/// Reads the captures named (or the built-in one) whole, reporting each unreadable one on
/// `err`.
fn load_captures<'a>(
    command: &'a str,
    pcaps: &'a [PathBuf],
    err: &'a mut dyn Write,
    ok: &'a mut bool,
) -> impl Iterator<Item = Capture> + 'a {
    sources(pcaps).into_iter().filter_map(move |source| {
        match open_capture(source).and_then(Capture::read) {
            Ok(capture) => {
                warn_if_cut(command, &capture.name, capture.warning.as_deref(), err);
                Some(capture)
            }
            Err(error) => {
                let _ = writeln!(err, "taroc {command}: {error}");
                *ok = false;
                None
            }
        }
    })
}

/// Runs `taroc twice`: reports go to `out`, errors to `err`. Fails unless every capture was
/// analysed.
pub fn run_twice(args: &TwiceArgs, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let mut ok = true;
    let methods = twice::default_methods();
    let mut first_table = true;
    let mut reports = Vec::new();
    for capture in load_captures("twice", &args.pcaps, err, &mut ok) {
        reports.push(twice::analyse(&capture, &methods));
    }
    for results in reports {
        if args.json {
            for result in &results {
                let line = serde_json::to_string(result).expect("a Repair always serializes");
                if let Err(e) = writeln!(out, "{line}") {
                    return output_failed("taroc twice", &e, err);
                }
            }
        } else {
            let gap = if first_table { "" } else { "\n" };
            first_table = false;
            if let Err(e) = write!(out, "{gap}{}", twice::table(&results)) {
                return output_failed("taroc twice", &e, err);
            }
        }
    }
    match out.flush() {
        Ok(()) => Exit::of(ok),
        Err(e) => output_failed("taroc twice", &e, err),
    }
}

const EVAL_ABOUT: &str = "\
Evaluate header-compression schemes on packet captures over a simulated link.

Each capture's IP packets are split into two link directions (forward: source address below \
destination address; reverse: the rest). Each direction gets its own compressor -> link -> \
decompressor pair, fresh for every scheme, and every delivered packet is compared byte for byte \
with the original it came from. Both directions run interleaved in capture order, so feedback \
(IPHC's header requests) crosses the reverse direction of the link just before that direction's \
next packet, meets the link's losses, and costs its bytes.

Schemes: none; vj (RFC 1144, which does not verify what it rebuilds); iphc-twice (RFC 2507, \
repairing TCP contexts with the twice algorithm, and a full header on a retransmission or a \
duplicate ACK); iphc (twice plus header requests); taroc (the \
draft); taroc-plus (TAROC with our improvements and bounded repairs); and, on request only, \
taroc-repair (the draft's TAROC with taroc-plus's bounded repairs), taroc-plus-u (taroc-plus \
without context requests, for links with no reverse channel) and taroc-plus-u-lossy \
(taroc-plus-u on a link declared to lose frames in bursts: for a link used one way only, \
which hears nothing of its losses).

Reported per capture and scheme:
  packets        packets offered to the compressors
  orig hdr B     their header bytes (packet bytes minus payload bytes)
  link hdr B     link bytes minus original payload bytes (with each frame's kind byte and the
                 feedback frames)
  hdr B/pkt      link hdr B / packets
  ratio          orig hdr B / link hdr B
  delivered      packets the decompressors delivered
  link lost      frames lost on the link (random loss or bit errors)
  ctx damage     intact frames the decompressor refused for a missing or damaged context
  other drop     intact frames refused for another reason (malformed, unsupported, ...)
  incorrect      delivered packets that differ from the original (0 for every scheme that
                 verifies what it rebuilds)
  undetected     of those, the ones whose TCP/UDP checksum still verifies (the receiver would
                 accept them)
  outage pkts    the most packets any outage cost: an outage of a flow (one direction of one \
                 connection) starts at its first frame refused for context damage or delivered \
                 wrong (or, after --reset-at, at the reset if the flow's next intact frame is \
                 refused) and ends at its next correct delivery; its packets are the flow's \
                 frames not delivered meanwhile (refused, wrong or lost on the link)
  outage s       the longest outage in capture-timestamp seconds; \"+\" marks one still open \
                 at the end of the capture (measured to its last packet)
  comp ns/pkt    with --timing only: compression time per packet offered, the median of the
                 runs (lowest-highest after it)
  decomp ns/pkt  with --timing only: decompression time per frame handed to the decompressor,
                 likewise

With --json, the same numbers and more (frames by kind, refusals by reason, feedback frames, \
truncated records, the options used) come as one JSON object per line.

Times (--timing) are wall-clock (std::time::Instant) around each codec call, minus the cost of \
one clock read measured at the start of each run; each scheme is run alone over the capture \
--timing=N more times (5 by default; a file, not standard input) and the median and the range of \
the runs are reported, since a single run swings with the machine's load. Build with --release \
for meaningful times.

Exit status: 0 done, 1 a capture could not be read or evaluated, or the results not written \
(quietly for a broken pipe), 2 a bad command line (e.g. --burst without --loss, a scheme listed \
twice).

Captures: pcap or pcapng, from a file or standard input (`-`), read as a stream (one record \
at a time: memory does not grow with the capture; every scheme runs in one pass; outages are \
followed for at most 16384 flows at once, beyond which the least recently seen are forgotten and \
counted). Link types raw \
IP (101, 12, 14), IPv4 (228), IPv6 (229), Ethernet (1, with 802.1Q/802.1ad VLAN tags), Linux \
cooked SLL (113) and SLL2 (276), BSD/macOS loopback NULL (0) and LOOP (108), PPP (9) and \
PPP_HDLC (50). Non-IP frames (ARP, ...) are skipped and counted; IP packets are trimmed to their \
IP length (link padding). Records cut short by the snaplen are kept and sent as they are (they \
cannot pass a TCP checksum), and counted. A file cut in the middle of a record is evaluated up \
to its last complete record, with a one-line warning, as tshark does. A file that cannot be \
read is reported on one line and skipped; the exit status is then non-zero. With no PCAP, a \
built-in capture is used (250 packets of a real IPv4 bulk transfer). A progress bar shows on \
stderr when a capture takes more than a second (not when stderr is not a terminal).

All randomness comes from --seed: each direction and impairment has its own random stream, and \
every scheme meets the same losses at the same positions, so the same seed gives the same \
results bit for bit.";

/// The arguments of `taroc eval`.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Capture files (pcap or pcapng; `-` is standard input). Without any, the built-in capture
    /// is used.
    #[arg(value_name = "PCAP")]
    pub pcaps: Vec<PathBuf>,

    /// Schemes to run, comma-separated, each once (see `--help` for the list).
    #[arg(long = "scheme", value_name = "LIST", value_delimiter = ',', value_parser = Variant::parse,
          help = scheme_help())]
    pub schemes: Vec<Variant>,

    /// Independent bit errors on the link, per bit of each frame (its packet-kind byte
    /// included). A frame with any bit error is discarded by the link's CRC, i.e. lost with
    /// probability 1-(1-BER)^bits.
    #[arg(long, value_name = "BER", default_value_t = 0.0, value_parser = probability)]
    pub ber: f64,

    /// Random frame loss rate on the link (independent per frame unless --burst is given).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub loss: f64,

    /// Make link losses come in bursts of this mean length in frames, with the same average loss
    /// rate --loss: a two-state Gilbert-Elliott chain (every frame lost in the bad state, none in
    /// the good state; it leaves the bad state with probability 1/L per frame).
    #[arg(long, value_name = "L", value_parser = burst_length)]
    pub burst: Option<f64>,

    /// Reorder packets before the compressor: with probability P a packet is held back and
    /// released right after the next 1 to 3 packets (uniformly) of its direction, so the
    /// compressor sees it late. Applied after --loss-before.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub reorder_before: f64,

    /// Reorder frames on the link, between compressor and decompressor, as a multi-path radio
    /// link or a tunnel across the Internet does: with probability P a frame that crossed the
    /// link is held back and arrives right after the next 1 to 3 frames of its direction.
    /// Feedback frames are not reordered.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub reorder: f64,

    /// Remove packets before the compressor with probability P (as if lost upstream). Removed
    /// packets never reach the codecs and are not counted as offered; reports say how many.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub loss_before: f64,

    /// Seed of every random stream (ChaCha8).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Replace both decompressors (both link directions) by fresh ones after the first N
    /// packets of the capture, both directions counted, as when the peer restarts; the
    /// compressors keep their contexts. The outage columns then tell how long flows stayed
    /// broken.
    #[arg(long, value_name = "N")]
    pub reset_at: Option<u64>,

    /// Only this direction crosses the link (forward: from the lower address to the higher;
    /// reverse: the other way), as on a satellite or broadcast downlink whose return path is
    /// another network: the other direction's packets are neither compressed nor counted.
    #[arg(long, value_name = "WAY", value_enum)]
    pub one_way: Option<Way>,

    /// Print one JSON object per line per capture and scheme instead of tables.
    #[arg(long)]
    pub json: bool,

    /// Measure compression and decompression times: run each scheme alone RUNS times and report
    /// the median with the lowest and highest run (`--timing` alone: 5 runs), reading the
    /// capture again for each run (a file or the built-in capture, not standard input). Without it no
    /// time is reported.
    #[arg(long, value_name = "RUNS", num_args = 0..=1, require_equals = true,
          default_missing_value = "5", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub timing: Option<u32>,

    /// Write every frame the link carried (lost ones too), both directions, to a pcap:
    /// LINKTYPE_PPP_WITH_DIR with the PPP protocol numbers of RFC 1332 / RFC 2509 for none, vj
    /// and iphc (Wireshark decodes them); our LINKTYPE_USER0 encapsulation (a direction
    /// octet, the kind octet, the frame) for taroc (decoded by wireshark/taroc.lua). With
    /// several schemes, one file each: FILE with the scheme's name before the extension
    /// (frames.vj.pcap). One capture only. A FILE that is not a regular file gets no name
    /// derived from it: /dev/null takes every scheme's frames (and keeps none); a FIFO or
    /// another device takes one scheme's only.
    #[arg(long, value_name = "FILE")]
    pub write_frames: Option<PathBuf>,

    /// Write the packets the decompressors delivered (wrong ones too) to a raw-IP pcap
    /// (LINKTYPE_RAW), and beside it a CSV (FILE's extension replaced by drops.csv) with one
    /// line per packet not delivered as captured: its fate and reason. Files per scheme as for
    /// --write-frames. FILE must be a regular file, or /dev/null (which takes the pcaps and the
    /// CSVs, and keeps nothing).
    #[arg(long, value_name = "FILE")]
    pub write_delivered: Option<PathBuf>,

    /// Write one CSV line per packet and feedback frame, every scheme in one file: scheme,
    /// index, time, direction, kind, original_header_bytes, link_header_bytes, fate
    /// (delivered, incorrect, link_lost, context_damage, refused) and reason.
    #[arg(long, value_name = "FILE.csv")]
    pub per_packet: Option<PathBuf>,
}

/// The help of `taroc eval --scheme`, listing every scheme from the code.
fn scheme_help() -> String {
    format!(
        "Schemes to run, comma-separated, each once, in this order [default: {}]; also {}",
        variant::NAMES.join(","),
        variant::EXTRA_NAMES.join(", ")
    )
}

impl EvalArgs {
    /// Checks the combination of options: a usage error names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.burst.is_some() && self.loss == 0.0 {
            return Err("--burst needs --loss: the bursts make up the loss rate --loss".into());
        }
        for (i, v) in self.schemes.iter().enumerate() {
            if self.schemes[..i].contains(v) {
                return Err(format!("--scheme lists {} twice", v.name));
            }
        }
        if self.timing.is_some() && self.pcaps.iter().any(|p| p.as_os_str() == "-") {
            return Err(
                "--timing reads the capture again for every run: give a file, not standard input"
                    .into(),
            );
        }
        self.options().loss_model().map(|_| ())
    }

    /// The output files these arguments ask for.
    pub fn outputs(&self) -> OutputPaths {
        OutputPaths {
            frames: self.write_frames.clone(),
            delivered: self.write_delivered.clone(),
            per_packet: self.per_packet.clone(),
        }
    }

    /// The evaluation options these arguments ask for.
    pub fn options(&self) -> Options {
        Options {
            ber: self.ber,
            loss: self.loss,
            burst: self.burst,
            reorder_before: self.reorder_before,
            reorder: self.reorder,
            loss_before: self.loss_before,
            seed: self.seed,
            reset_at: self.reset_at,
            one_way: self.one_way,
        }
    }

    /// The schemes to run: those asked for, or every scheme.
    pub fn schemes(&self) -> Vec<Variant> {
        if self.schemes.is_empty() {
            Variant::all()
        } else {
            self.schemes.clone()
        }
    }

    /// The schemes to run on the link configured: with `--reorder`, each as it runs on a link
    /// that reorders ([`Variant::for_reordering_link`]). A scheme that cannot is an error if it
    /// was asked for, and is left out of the default list with a note in `notes`.
    pub fn schemes_on_link(&self, notes: &mut Vec<String>) -> Result<Vec<Variant>, String> {
        let schemes = self.schemes();
        if self.reorder == 0.0 {
            return Ok(schemes);
        }
        let mut kept = Vec::new();
        for variant in schemes {
            match variant.for_reordering_link() {
                Ok(variant) => kept.push(variant),
                Err(why) if self.schemes.is_empty() => notes.push(format!(
                    "left out on a link that reorders (--reorder): {why}"
                )),
                Err(why) => return Err(format!("cannot run on a link that reorders: {why}")),
            }
        }
        Ok(kept)
    }
}

/// Timing run `run` of `runs` (from 0) of `taroc eval --timing`: the capture of `source` read
/// again for each scheme in turn, so that each codec is timed alone rather than in lockstep
/// with the others (which would evict its caches between calls). Returns the results in the
/// order of `schemes`.
fn time_each_scheme(
    source: Option<&PathBuf>,
    schemes: &[Variant],
    options: &Options,
    run: u32,
    runs: u32,
    progress: bool,
) -> Result<Vec<eval::SchemeResult>, String> {
    let mut results = Vec::with_capacity(schemes.len());
    for variant in schemes {
        let mut reader = open_capture(source).map_err(|error| error.to_string())?;
        let name = format!(
            "{} ({variant} timing run {}/{runs})",
            reader.name(),
            run + 1
        );
        let mut bar = Progress::new(source, &name, progress);
        let one = std::slice::from_ref(variant);
        let timed = eval::evaluate(&mut reader, one, options, |reader| {
            bar.update(reader.bytes_read())
        })?;
        results.extend(timed);
    }
    Ok(results)
}

/// Runs `taroc eval`: reports go to `out`, errors and warnings to `err`, and a progress bar to
/// stderr if `progress` (when stderr is a terminal).
pub fn run_eval(args: &EvalArgs, out: &mut dyn Write, err: &mut dyn Write, progress: bool) -> Exit {
    if let Err(problem) = args.check() {
        let _ = writeln!(err, "taroc eval: {problem}");
        return Exit::Usage;
    }
    let options = args.options();
    let mut notes = Vec::new();
    let schemes = match args.schemes_on_link(&mut notes) {
        Ok(schemes) => schemes,
        Err(problem) => {
            let _ = writeln!(err, "taroc eval: {problem}");
            return Exit::Usage;
        }
    };
    for note in notes {
        let _ = writeln!(err, "taroc eval: {note}");
    }
    let outputs = args.outputs();
    if outputs.any() && args.pcaps.len() > 1 {
        let _ = writeln!(
            err,
            "taroc eval: --write-frames, --write-delivered and --per-packet take one capture ({} \
             given)",
            args.pcaps.len()
        );
        return Exit::Usage;
    }
    let mut ok = true;
    let mut first_table = true;
    for source in sources(&args.pcaps) {
        let mut reader = match open_capture(source) {
            Ok(reader) => reader,
            Err(error) => {
                let _ = writeln!(err, "taroc eval: {error}");
                ok = false;
                continue;
            }
        };
        let mut files = None;
        if outputs.any() {
            match Outputs::create(&outputs, &schemes) {
                Ok(created) => files = Some(created),
                Err(problem) => {
                    let _ = writeln!(err, "taroc eval: {problem}");
                    return Exit::Failure;
                }
            }
        }
        let mut nothing = ();
        let observer: &mut dyn Observer = match &mut files {
            Some(files) => files,
            None => &mut nothing,
        };
        let mut bar = Progress::new(source, reader.name(), progress);
        let results = eval::evaluate_observed(
            &mut reader,
            &schemes,
            &options,
            |reader| bar.update(reader.bytes_read()),
            observer,
        );
        drop(bar);
        warn_if_cut("eval", reader.name(), reader.warning(), err);
        let results = results.and_then(|results| match args.timing {
            Some(runs) => {
                let timings = timing::measure(runs, |run| {
                    time_each_scheme(source, &schemes, &options, run, runs, progress)
                })?;
                Ok((results, Some(timings)))
            }
            None => Ok((results, None)),
        });
        match results {
            Ok((results, timings)) => {
                let timings = timings.as_deref();
                if args.json {
                    for (i, result) in results.iter().enumerate() {
                        let timing = timings.map(|t| &t[i]);
                        if let Err(e) = writeln!(out, "{}", report::json_line(result, timing)) {
                            return output_failed("taroc eval", &e, err);
                        }
                    }
                } else {
                    if !first_table {
                        if let Err(e) = writeln!(out) {
                            return output_failed("taroc eval", &e, err);
                        }
                    }
                    first_table = false;
                    let link_types = &reader.stats().link_types;
                    let text = report::table(&results, link_types, timings);
                    if let Err(e) = write!(out, "{text}") {
                        return output_failed("taroc eval", &e, err);
                    }
                }
            }
            Err(problem) => {
                let _ = writeln!(err, "taroc eval: {problem}");
                ok = false;
            }
        }
    }
    match out.flush() {
        Ok(()) => Exit::of(ok),
        Err(e) => output_failed("taroc eval", &e, err),
    }
}

#[cfg(test)]
mod tests;
