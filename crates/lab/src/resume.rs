//! `taroc gateway resume`: for every scheme and disturbance, a kernel TCP transfer through two
//! UDP gateways is disturbed mid-way ([`crate::disturb`]); does it complete, with the right
//! bytes, and how long until it resumes? Each scheme also runs undisturbed, for comparison.
//!
//! A restart also strands what the compressor that did not restart knows: contexts of earlier
//! flows, which a new flow's first packets may be coded against. So for every restart of the
//! matrix, each scheme also runs [`run_new_connections`]: a transfer, the restart between
//! transfers, then NEW TCP connections one after the other, which must complete intact; the
//! time from the restart to the first new connection's last byte is measured.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;
use taroc_core::variant::Variant;

use crate::args::ip_version;
use crate::disturb::{self, Directions, Disturbance, Planned};
use crate::harness::{self, IpVersion, LivePair, Mode, Scenario};
use crate::transfer::{TransferConfig, TransferResult};
use taroc_gateway::args::{byte_count, duration_from_secs, seconds, MAX_SECONDS};
use taroc_gateway::commands::print_out;
use taroc_gateway::link::LinkConfig;
use taroc_gateway::Error;

/// The long help of `taroc gateway resume`.
pub const RESUME_ABOUT: &str = "\
Disturb real kernel TCP transfers through two UDP gateways, and measure how each scheme \
recovers.

Every scheme runs once undisturbed and once per disturbance, each run in two fresh network \
namespaces with a gateway thread per side and a UDP relay between the gateways (on loopback). \
A disturbance strikes once the receiver has read --at of the --bytes:
  restart A / restart B: the gateway's thread stops and, --down seconds later, a fresh one \
(new codec state) starts on the same TUN device and UDP address (as kill -9 and a restart, but \
the TUN device survives);
  lose N frames a->b / both: the relay drops the next --frames datagrams of the data direction \
(or of both); TCP stops sending when nothing comes back, so the burst also ends after --longest \
seconds (the table says how many frames it took);
  forge one frame per context: for each CID the relay saw in use, a frame of the scheme that \
sets up a context for another flow on that CID, and a forged TYPE_IP packet, to each gateway, \
sent from the address it takes for its peer's;
  flood: --per-cid forged frames of every kind on every CID 0..255, to each gateway.

New connections: for each restart, each scheme also carries a transfer of \
--new-connection-bytes, has the gateway restarted between transfers, then opens \
--new-connections NEW TCP connections one after the other (each as large); they must complete \
intact. A second table gives the time from the restart (the fresh gateway started) to the \
first new connection's accept and last byte.

Reported per run: completed (every byte, unchanged, within --time-limit), total time, time to \
resume (from the end of the disturbance to the first read of a byte the sender's TCP sent for \
the first time after that end: bytes on their way do not count), the longest time the receiver \
read nothing, against the same scheme undisturbed. Needs root. Prints markdown tables, or with \
--json one JSON object per run.";

/// The settings of the disturbance matrix.
#[derive(Debug, Clone)]
pub struct ResumeConfig {
    /// Schemes (both directions use the same).
    pub variants: Vec<Variant>,
    /// Disturbances.
    pub disturbances: Vec<Disturbance>,
    /// Whether each scheme also runs undisturbed ([`Disturbance::Nothing`]), for comparison.
    pub baseline: bool,
    /// Transfer size, bytes.
    pub bytes: u64,
    /// A disturbance strikes once the receiver has read this fraction of the transfer.
    pub at_fraction: f64,
    /// Link rate (each gateway's sending side), bit/s.
    pub rate_bps: u64,
    /// One-way link delay.
    pub delay: Duration,
    /// TUN and link MTU, bytes.
    pub mtu: u32,
    /// IP version.
    pub ip_version: IpVersion,
    /// A transfer stops after this long, finished or not.
    pub time_limit: Duration,
    /// Runs at once.
    pub jobs: usize,
    /// Seed of the transfers and the forgeries.
    pub seed: u64,
    /// Whether the UDP link authenticates frames (the default); without, forged frames reach
    /// the decompressors, which is how their robustness is tested.
    pub authenticated: bool,
    /// New TCP connections opened one after the other after each restart of
    /// [`ResumeConfig::disturbances`], per scheme ([`run_new_connections`]); 0: none.
    pub new_connections: usize,
    /// Bytes each new connection carries, and the transfer before the restart.
    pub new_connection_bytes: u64,
    /// Frame loss of each direction of the link all through the transfer (the average rate
    /// when `burst` is set), besides the disturbance.
    pub loss: f64,
    /// Mean length of the link's loss bursts in frames (Gilbert–Elliott), if losses come in
    /// bursts.
    pub burst: Option<f64>,
}

impl ResumeConfig {
    /// Every disturbance of the matrix: restart A, restart B (down `down`), a loss of `frames`
    /// frames from A to B and in both directions (at most `longest`), one forged frame per
    /// context, and a flood of `per_cid` forged frames per kind and CID.
    pub fn every_disturbance(
        down: Duration,
        frames: u64,
        longest: Duration,
        per_cid: usize,
    ) -> Vec<Disturbance> {
        vec![
            Disturbance::Restart { side: 0, down },
            Disturbance::Restart { side: 1, down },
            Disturbance::Loss {
                directions: Directions::AToB,
                frames,
                longest,
            },
            Disturbance::Loss {
                directions: Directions::Both,
                frames,
                longest,
            },
            Disturbance::ForgeOnePerContext,
            Disturbance::Flood { per_cid },
        ]
    }

    /// The scenario of one run.
    pub fn scenario(&self, variant: &Variant, seed: u64) -> Scenario {
        Scenario {
            variants: [variant.clone(), variant.clone()],
            link: LinkConfig {
                rate_bps: self.rate_bps,
                delay: self.delay,
                queue: 100,
                mtu: self.mtu as usize,
                slots: 1024,
                loss: self.loss,
                burst: self.burst,
                ..LinkConfig::default()
            },
            tun_mtu: self.mtu,
            ip_version: self.ip_version,
            timestamps: true,
            congestion_control: None,
            transfer: TransferConfig {
                bytes: self.bytes,
                seed,
                time_limit: self.time_limit,
            },
            seed,
            mode: Mode::Udp,
            authenticated: self.authenticated,
        }
    }
}

/// One run: the fields of `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct ResumeRecord {
    /// Scheme (variant) name.
    pub scheme: String,
    /// The disturbance ([`Disturbance::label`]; `none` for [`Disturbance::Nothing`]).
    pub disturbance: String,
    /// What the disturbance did (frames dropped, CIDs forged, ...); empty if the transfer
    /// ended before it.
    pub detail: String,
    /// Whether the disturbance was applied (the transfer had not ended before it).
    pub applied: bool,
    /// Whether every byte arrived, unchanged, before the time limit.
    pub intact: bool,
    /// Bytes the receiver read.
    pub bytes_received: u64,
    /// Seconds from accept to the end of the stream (or the time limit).
    pub total_s: f64,
    /// Seconds from the end of the disturbance to the first read of a byte sent after it
    /// ([`disturb::time_to_resume`]); `None` if none came.
    pub resume_s: Option<f64>,
    /// The longest time the receiver read nothing, seconds.
    pub longest_stall_s: f64,
    /// Rebuilt packets the gateways dropped because their checksum failed (both directions).
    pub checksum_dropped: u64,
    /// Intact frames refused for context damage (both directions).
    pub context_damage: u64,
    /// Forged `TYPE_IP` probes that reached a namespace.
    pub probes_delivered: u64,
    /// Datagrams the relay dropped (both directions).
    pub frames_dropped: u64,
    /// Frames the emulated link lost ([`ResumeConfig::loss`], both directions).
    pub link_lost: u64,
    /// Forged datagrams the relay sent (to both gateways).
    pub frames_injected: u64,
}

/// Runs one cell.
fn run_cell(
    config: &ResumeConfig,
    variant: &Variant,
    disturbance: &Disturbance,
    seed: u64,
) -> Result<ResumeRecord, Error> {
    let scenario = config.scenario(variant, seed);
    let plan = [Planned {
        at_bytes: (config.bytes as f64 * config.at_fraction) as u64,
        disturbance: disturbance.clone(),
    }];
    let outcome = harness::run_disturbed(&scenario, &plan)?;
    let t = &outcome.transfer;
    let [a, b] = &outcome.report.counters;
    let applied = outcome.applied.first();
    let seconds = |ns: u64| ns as f64 / 1e9;
    let relay = outcome.relay.unwrap_or_default();
    Ok(ResumeRecord {
        scheme: variant.name.to_owned(),
        disturbance: disturbance.label(),
        detail: applied.map(|a| a.detail.clone()).unwrap_or_default(),
        applied: applied.is_some(),
        intact: t.is_intact(),
        bytes_received: t.bytes_received,
        total_s: seconds(t.elapsed_ns),
        resume_s: applied
            .and_then(|a| disturb::time_to_resume(&t.progress, a))
            .map(seconds),
        longest_stall_s: seconds(disturb::longest_stall(&t.progress, t.elapsed_ns)),
        checksum_dropped: a.checksum_dropped + b.checksum_dropped,
        context_damage: a.context_damage + b.context_damage,
        probes_delivered: outcome.probes_delivered.iter().sum(),
        frames_dropped: relay.dropped.iter().sum(),
        link_lost: a.link_lost + b.link_lost,
        frames_injected: relay.injected.iter().sum(),
    })
}

/// Runs every scheme under every disturbance (and undisturbed, with `config.baseline`),
/// `config.jobs` at a time (each in its own namespaces), calling `on_record` as each finishes;
/// returns the records in order (per scheme: undisturbed first, then the disturbances), or the
/// first error.
pub fn run_matrix(
    config: &ResumeConfig,
    mut on_record: impl FnMut(&ResumeRecord),
) -> Result<Vec<ResumeRecord>, Error> {
    let mut cells = Vec::new();
    for variant in &config.variants {
        if config.baseline {
            cells.push((variant, &Disturbance::Nothing));
        }
        cells.extend(config.disturbances.iter().map(|d| (variant, d)));
    }
    crate::jobs::run_cells(
        &cells,
        config.jobs,
        |i, &(variant, disturbance)| {
            run_cell(
                config,
                variant,
                disturbance,
                config.seed.wrapping_add(i as u64),
            )
        },
        |r| on_record(r),
    )
}

/// The records as a markdown table: per scheme and disturbance, whether the transfer
/// completed intact, its time, the time to resume and the longest stall, against the same
/// scheme undisturbed (its time to resume is that of the bytes on their way).
pub fn resume_table(records: &[ResumeRecord]) -> String {
    let none = Disturbance::Nothing.label();
    let seconds = |s: Option<f64>| s.map_or_else(|| "never".to_owned(), |s| format!("{s:.3}"));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| scheme | disturbance | completed | total s | resume s | longest stall s | \
         undisturbed: total s | resume s | longest stall s | what happened |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---|");
    for r in records.iter().filter(|r| r.disturbance != none) {
        let base = records
            .iter()
            .find(|b| b.scheme == r.scheme && b.disturbance == none);
        let completed = match (r.applied, r.intact) {
            (false, _) => "not applied",
            (true, true) => "yes",
            (true, false) => "**NO**",
        };
        let (base_total, base_resume, base_stall) = match base {
            Some(b) => (
                format!("{:.2}", b.total_s),
                seconds(b.resume_s),
                format!("{:.3}", b.longest_stall_s),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {completed} | {:.2} | {} | {:.3} | {base_total} | {base_resume} | \
             {base_stall} | {} |",
            r.scheme,
            r.disturbance,
            r.total_s,
            seconds(r.resume_s),
            r.longest_stall_s,
            r.detail
        );
    }
    out
}

/// One new TCP connection after a restart ([`run_new_connections`]); times are from the
/// restart (the fresh gateway started).
#[derive(Debug, Clone, Serialize)]
pub struct NewConnection {
    /// Whether every byte arrived, unchanged, before the time limit.
    pub intact: bool,
    /// Bytes the receiver read.
    pub bytes_received: u64,
    /// Seconds to the receiver's accept; `None` if it never accepted.
    pub connected_s: Option<f64>,
    /// Seconds to the end of the transfer: the stream's end, the time limit or a failure.
    pub ended_s: f64,
    /// Why the transfer failed, if it did (it could not connect, say).
    pub error: Option<String>,
}

/// New TCP connections after a restart, one scheme: the fields of `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct NewConnectionsRecord {
    /// Scheme (variant) name.
    pub scheme: String,
    /// The restart, and that new connections followed it.
    pub disturbance: String,
    /// Whether the link authenticated frames.
    pub authenticated: bool,
    /// The transfer before the restart (its times from its own start).
    pub before: NewConnection,
    /// The new connections, in order.
    pub connections: Vec<NewConnection>,
    /// Whether the transfer before and every new connection arrived intact.
    pub intact: bool,
    /// Seconds from the restart to the end of the first new connection to complete intact;
    /// `None` if none did.
    pub first_completed_s: Option<f64>,
    /// Rebuilt packets the gateways dropped because their checksum failed (every run, both
    /// directions).
    pub checksum_dropped: u64,
    /// Intact frames refused for context damage (every run, both directions).
    pub context_damage: u64,
    /// Datagrams refused before decompression (every run, both directions): on an
    /// authenticated link, frames of the peer sent before it heard the restarted gateway
    /// (stale, unsynced) among them.
    pub rejected: u64,
}

/// A transfer through `live` of `bytes` of the stream of `seed` within `time_limit`; times from
/// `since`. A failed transfer (it could not connect, say) is reported, not returned as an error.
fn new_connection(
    live: &LivePair,
    bytes: u64,
    seed: u64,
    time_limit: Duration,
    since: Instant,
) -> NewConnection {
    let result = live.transfer(&TransferConfig {
        bytes,
        seed,
        time_limit,
    });
    let ended = since.elapsed();
    let seconds = |d: Duration| d.as_secs_f64();
    match result {
        Ok(t) => NewConnection {
            intact: t.is_intact(),
            bytes_received: t.bytes_received,
            connected_s: accepted(&t, ended).map(seconds),
            ended_s: seconds(ended),
            error: None,
        },
        Err(e) => NewConnection {
            intact: false,
            bytes_received: 0,
            connected_s: None,
            ended_s: seconds(ended),
            error: Some(e.to_string()),
        },
    }
}

/// When a transfer that ended `ended` after some instant was accepted, after that instant (the
/// receiver counts its time from the accept); `None` if it read nothing.
fn accepted(t: &TransferResult, ended: Duration) -> Option<Duration> {
    (t.bytes_received > 0 || t.completed)
        .then(|| ended.saturating_sub(Duration::from_nanos(t.elapsed_ns)))
}

/// Runs one cell of [`run_new_connections`].
fn run_new_connections_cell(
    config: &ResumeConfig,
    variant: &Variant,
    side: usize,
    down: Duration,
    seed: u64,
) -> Result<NewConnectionsRecord, Error> {
    let scenario = config.scenario(variant, seed);
    let bytes = config.new_connection_bytes;
    let mut live = LivePair::start(&scenario, Duration::ZERO)?;
    let before = new_connection(&live, bytes, seed, config.time_limit, Instant::now());
    live.restart(side, down)?;
    let restarted = Instant::now();
    let connections: Vec<NewConnection> = (1..=config.new_connections as u64)
        .map(|i| new_connection(&live, bytes, seed ^ (i << 32), config.time_limit, restarted))
        .collect();
    let report = live.finish()?;
    let counters = report.runs.iter().flatten().flat_map(|run| &run.counters);
    let (checksum_dropped, context_damage, rejected) =
        counters.fold((0, 0, 0), |(c, d, r), counters| {
            (
                c + counters.checksum_dropped,
                d + counters.context_damage,
                r + counters.rejected.total(),
            )
        });
    Ok(NewConnectionsRecord {
        scheme: variant.name.to_owned(),
        disturbance: format!(
            "{}, then {} new connections",
            Disturbance::Restart { side, down }.label(),
            connections.len()
        ),
        authenticated: config.authenticated,
        intact: before.intact && connections.iter().all(|c| c.intact),
        first_completed_s: connections.iter().find(|c| c.intact).map(|c| c.ended_s),
        before,
        connections,
        checksum_dropped,
        context_damage,
        rejected,
    })
}

/// For every scheme and every restart among `config.disturbances`: two gateways carry a
/// transfer of `config.new_connection_bytes`, the gateway is restarted, then
/// `config.new_connections` NEW TCP connections (as large) go one after the other, each within
/// `config.time_limit`. `config.jobs` at a time, calling `on_record` as each finishes; returns
/// the records in order (per scheme, the restarts in order), or the first error of the harness
/// (a transfer that fails is recorded, not an error).
pub fn run_new_connections(
    config: &ResumeConfig,
    mut on_record: impl FnMut(&NewConnectionsRecord),
) -> Result<Vec<NewConnectionsRecord>, Error> {
    let restarts: Vec<(usize, Duration)> = config
        .disturbances
        .iter()
        .filter_map(|d| match d {
            Disturbance::Restart { side, down } => Some((*side, *down)),
            _ => None,
        })
        .collect();
    if config.new_connections == 0 || restarts.is_empty() {
        return Ok(Vec::new());
    }
    let cells: Vec<(&Variant, (usize, Duration))> = config
        .variants
        .iter()
        .flat_map(|v| restarts.iter().map(move |&r| (v, r)))
        .collect();
    crate::jobs::run_cells(
        &cells,
        config.jobs,
        |i, &(variant, (side, down))| {
            run_new_connections_cell(
                config,
                variant,
                side,
                down,
                config.seed.wrapping_add(i as u64),
            )
        },
        |r| on_record(r),
    )
}

/// The records of [`run_new_connections`] as a markdown table: per scheme and restart, whether
/// every new connection completed intact, and the time from the restart to the first one's
/// accept and last byte.
pub fn new_connections_table(records: &[NewConnectionsRecord]) -> String {
    let seconds = |s: Option<f64>| s.map_or_else(|| "never".to_owned(), |s| format!("{s:.3}"));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| scheme | link | restart | completed | before: took s | first connected s | first \
         completed s | each ended s | context damage | rejected | checksum dropped |"
    );
    let _ = writeln!(out, "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|");
    for r in records {
        let intact = r.connections.iter().filter(|c| c.intact).count();
        let completed = match (r.before.intact, r.intact) {
            (false, _) => "**NO** (before the restart)".to_owned(),
            (true, true) => "yes".to_owned(),
            (true, false) => format!("**NO** ({intact} of {})", r.connections.len()),
        };
        let each: Vec<String> = r
            .connections
            .iter()
            .map(|c| format!("{:.3}{}", c.ended_s, if c.intact { "" } else { "!" }))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {completed} | {:.3} | {} | {} | {} | {} | {} | {} |",
            r.scheme,
            if r.authenticated {
                "authenticated"
            } else {
                "no auth"
            },
            r.disturbance,
            r.before.ended_s,
            seconds(r.connections.first().and_then(|c| c.connected_s)),
            seconds(r.first_completed_s),
            each.join(", "),
            r.context_damage,
            r.rejected,
            r.checksum_dropped
        );
    }
    out
}

/// The longest `--delay`, ms: [`MAX_SECONDS`].
const MAX_DELAY_MS: u64 = 1_000_000_000_000;

/// The arguments of `taroc gateway resume`.
#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// Schemes, comma-separated [default: every scheme]: none, vj, iphc-twice, iphc, taroc,
    /// taroc-plus; also taroc-repair, taroc-plus-u, taroc-plus-u-lossy, iphc-plain.
    #[arg(long = "schemes", value_name = "LIST", value_delimiter = ',', value_parser = Variant::parse)]
    pub schemes: Vec<Variant>,
    /// Transfer size, bytes (suffixes K, M, G: powers of 1024).
    #[arg(long, value_name = "N", default_value = "4M", value_parser = byte_count)]
    pub bytes: u64,
    /// Disturb once the receiver has read this fraction of the transfer.
    #[arg(long, value_name = "F", default_value_t = 0.33)]
    pub at: f64,
    /// Link rate of each gateway's sending side, kbit/s.
    #[arg(long, value_name = "KBIT", default_value_t = 8000)]
    pub rate: u64,
    /// One-way link delay, ms.
    #[arg(long, value_name = "MS", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(0..=MAX_DELAY_MS))]
    pub delay: u64,
    /// TUN and link MTU, bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1280)]
    pub mtu: u32,
    /// IP version of the transfers.
    #[arg(long, value_name = "4|6", default_value = "4", value_parser = ip_version)]
    pub ip: IpVersion,
    /// Restarts: seconds a gateway stays down.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = seconds)]
    pub down: f64,
    /// Losses: frames to drop per direction.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub frames: u64,
    /// Losses: the burst ends after this many seconds, even if fewer frames came.
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = seconds)]
    pub longest: f64,
    /// Flood: forged frames per kind and CID.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub per_cid: usize,
    /// Stop a transfer after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds)]
    pub time_limit: f64,
    /// Runs at once.
    #[arg(long, value_name = "N", default_value_t = 7)]
    pub jobs: usize,
    /// Seed of the transfers and forgeries.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// One JSON object per run on standard output instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Run the UDP link without authentication, so forged frames reach the decompressors (the
    /// codecs' own robustness); by default it is authenticated, as users run it.
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// New connections: how many, one after the other, after each restart (0: none).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub new_connections: usize,
    /// New connections: bytes each carries, and the transfer before the restart (suffixes K,
    /// M, G: powers of 1024).
    #[arg(long, value_name = "N", default_value = "256K", value_parser = byte_count)]
    pub new_connection_bytes: u64,
    /// Frame loss of each direction of the link all through every run, besides the
    /// disturbance (the average rate with --burst).
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub loss: f64,
    /// Make --loss come in bursts of this mean length in frames (Gilbert-Elliott).
    #[arg(long, value_name = "L", value_parser = taroc_gateway::args::burst_length)]
    pub burst: Option<f64>,
}

impl ResumeArgs {
    /// The matrix these arguments ask for, or what is wrong with them.
    pub fn config(&self) -> Result<ResumeConfig, Error> {
        if !(self.at > 0.0 && self.at < 1.0) {
            return Err(Error::new(format!(
                "--at {}: expected a fraction in (0, 1)",
                self.at
            )));
        }
        let mut times = [Duration::ZERO; 3];
        for (time, (name, value)) in times.iter_mut().zip([
            ("--down", self.down),
            ("--longest", self.longest),
            ("--time-limit", self.time_limit),
        ]) {
            *time = duration_from_secs(value)
                .ok()
                .filter(|t| !t.is_zero())
                .ok_or_else(|| {
                    Error::new(format!(
                        "{name} {value}: expected seconds above 0, at most {MAX_SECONDS}"
                    ))
                })?;
        }
        let [down, longest, time_limit] = times;
        if self.delay > MAX_DELAY_MS {
            return Err(Error::new(format!(
                "--delay {}: at most {MAX_DELAY_MS} ms",
                self.delay
            )));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(Error::new(format!(
                "--loss {}: expected a probability in [0, 1)",
                self.loss
            )));
        }
        if self.burst.is_some() && self.loss == 0.0 {
            return Err(Error::new("--burst needs --loss above 0"));
        }
        if self.rate == 0 || self.bytes == 0 || self.new_connection_bytes == 0 {
            return Err(Error::new(
                "--rate, --bytes and --new-connection-bytes must be above 0",
            ));
        }
        Ok(ResumeConfig {
            variants: if self.schemes.is_empty() {
                Variant::all()
            } else {
                self.schemes.clone()
            },
            baseline: true,
            disturbances: ResumeConfig::every_disturbance(down, self.frames, longest, self.per_cid),
            bytes: self.bytes,
            at_fraction: self.at,
            rate_bps: self.rate * 1000,
            delay: Duration::from_millis(self.delay),
            mtu: self.mtu,
            ip_version: self.ip,
            time_limit,
            jobs: self.jobs.max(1),
            seed: self.seed,
            authenticated: !self.insecure_no_auth,
            new_connections: self.new_connections,
            new_connection_bytes: self.new_connection_bytes,
            loss: self.loss,
            burst: self.burst,
        })
    }
}

/// Runs `taroc gateway resume`.
pub fn run(args: &ResumeArgs) -> Result<(), Error> {
    let config = args.config()?;
    harness::check_environment()?;
    taroc_gateway::signal::install()?;
    let total = config.variants.len() * (config.disturbances.len() + usize::from(config.baseline));
    let mut done = 0;
    // The first failure to print a record: the runs go on (their table would fail too), and
    // the command fails at the end.
    let mut unwritten = None;
    let records = run_matrix(&config, |r| {
        done += 1;
        if args.json && unwritten.is_none() {
            if let Ok(line) = serde_json::to_string(r) {
                unwritten = print_out(&format!("{line}\n")).err();
            }
        }
        eprintln!(
            "[{done}/{total}] {} / {}: {} in {:.2} s, resume {}, longest stall {:.3} s",
            r.scheme,
            r.disturbance,
            if r.intact { "intact" } else { "NOT COMPLETED" },
            r.total_s,
            r.resume_s
                .map_or_else(|| "never".to_owned(), |s| format!("{s:.3} s")),
            r.longest_stall_s
        );
    })?;
    if !args.json {
        print_out(&resume_table(&records))?;
    }
    let mut done = 0;
    let total = config.variants.len()
        * config
            .disturbances
            .iter()
            .filter(|d| matches!(d, Disturbance::Restart { .. }))
            .count()
        * usize::from(config.new_connections > 0);
    let records = run_new_connections(&config, |r| {
        done += 1;
        if args.json && unwritten.is_none() {
            if let Ok(line) = serde_json::to_string(r) {
                unwritten = print_out(&format!("{line}\n")).err();
            }
        }
        let seconds =
            |s: Option<f64>| s.map_or_else(|| "never".to_owned(), |s| format!("{s:.3} s"));
        eprintln!(
            "[{done}/{total}] {} / {}: {}, first completed after {}",
            r.scheme,
            r.disturbance,
            if r.intact { "intact" } else { "NOT COMPLETED" },
            seconds(r.first_completed_s),
        );
    })?;
    if let Some(e) = unwritten {
        return Err(e);
    }
    if !args.json && !records.is_empty() {
        print_out(&format!(
            "\nNew connections after a restart (times from the restart):\n\n{}",
            new_connections_table(&records)
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        scheme: &str,
        disturbance: &str,
        intact: bool,
        resume_s: Option<f64>,
    ) -> ResumeRecord {
        ResumeRecord {
            scheme: scheme.into(),
            disturbance: disturbance.into(),
            detail: "d".into(),
            applied: true,
            intact,
            bytes_received: 1,
            total_s: 4.0,
            resume_s,
            longest_stall_s: 0.5,
            checksum_dropped: 0,
            context_damage: 0,
            probes_delivered: 0,
            frames_dropped: 0,
            frames_injected: 0,
            link_lost: 0,
        }
    }

    #[test]
    fn table_compares_with_the_undisturbed_run() {
        let table = resume_table(&[
            record("vj", "none", true, Some(0.125)),
            record("vj", "restart A (1 s down)", true, Some(0.25)),
            record("taroc", "restart A (1 s down)", false, None),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert_eq!(
            lines[2],
            "| vj | restart A (1 s down) | yes | 4.00 | 0.250 | 0.500 | 4.00 | 0.125 | 0.500 | d |"
        );
        assert!(lines[3].contains("| **NO** |") && lines[3].contains("| never |"));
        assert!(lines[3].contains("| - | - | - |"), "{}", lines[3]);
    }

    #[test]
    fn command_line_parses() {
        use clap::Parser;
        #[derive(Debug, Parser)]
        struct Top {
            #[command(flatten)]
            resume: ResumeArgs,
        }
        let top =
            Top::try_parse_from(["resume", "--schemes", "vj,taroc", "--bytes", "2M"]).unwrap();
        let config = top.resume.config().unwrap();
        let names: Vec<&str> = config.variants.iter().map(|v| v.name).collect();
        assert_eq!(names, ["vj", "taroc"]);
        assert_eq!((config.bytes, config.ip_version), (2 << 20, IpVersion::V4));
        assert!(config.baseline);
        assert!(Top::try_parse_from(["resume", "--schemes", "nope"]).is_err());
        assert!(Top::try_parse_from(["resume", "--ip", "5"]).is_err());
        let lossy = ["resume", "--loss", "0.05", "--burst", "4"];
        let config = Top::try_parse_from(lossy).unwrap().resume.config().unwrap();
        assert_eq!((config.loss, config.burst), (0.05, Some(4.0)));
        let link = config.scenario(&config.variants[0], 1).link;
        assert_eq!((link.loss, link.burst), (0.05, Some(4.0)));
        assert!(Top::try_parse_from(["resume", "--burst", "0.5"]).is_err());
    }

    #[test]
    fn arguments_are_checked() {
        let args = ResumeArgs {
            schemes: Vec::new(),
            bytes: 1 << 20,
            at: 0.5,
            rate: 8000,
            delay: 2,
            mtu: 1280,
            ip: IpVersion::V4,
            down: 1.0,
            frames: 5000,
            longest: 3.0,
            per_cid: 3,
            time_limit: 60.0,
            jobs: 2,
            seed: 1,
            json: false,
            insecure_no_auth: false,
            new_connections: 2,
            new_connection_bytes: 256 << 10,
            loss: 0.0,
            burst: None,
        };
        let config = args.config().unwrap();
        assert!(config.authenticated);
        assert_eq!(config.variants.len(), Variant::all().len());
        assert_eq!(config.disturbances.len(), 6);
        assert_eq!(config.rate_bps, 8_000_000);
        for bad in [
            ResumeArgs {
                at: 1.0,
                ..args.clone()
            },
            ResumeArgs {
                down: 0.0,
                ..args.clone()
            },
            ResumeArgs {
                rate: 0,
                ..args.clone()
            },
            ResumeArgs {
                new_connection_bytes: 0,
                ..args.clone()
            },
            ResumeArgs {
                loss: 1.0,
                ..args.clone()
            },
            ResumeArgs {
                burst: Some(4.0),
                ..args.clone()
            },
        ] {
            assert!(bad.config().is_err());
        }
    }
}
