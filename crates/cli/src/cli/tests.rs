//! Tests of the `taroc` command line: parsing, errors and exit codes.

use super::*;
use clap::CommandFactory;

#[test]
fn command_line_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
#[allow(irrefutable_let_patterns)] // while `eval` is the only command
fn arguments_parse() {
    let cli = Cli::try_parse_from([
        "taroc",
        "eval",
        "--scheme",
        "none,iphc-twice,taroc",
        "--ber",
        "1e-5",
        "--loss",
        "0.01",
        "--burst",
        "3",
        "--seed",
        "9",
        "--reset-at",
        "50",
        "--json",
        "a.pcap",
    ])
    .unwrap();
    let Command::Eval(args) = cli.command else {
        panic!("not eval")
    };
    let names: Vec<&str> = args.schemes.iter().map(|v| v.name).collect();
    assert_eq!(names, ["none", "iphc-twice", "taroc"]);
    assert_eq!((args.ber, args.loss, args.burst), (1e-5, 0.01, Some(3.0)));
    assert_eq!(args.seed, 9);
    assert_eq!(args.options().reset_at, Some(50));
    assert!(args.json);
    assert_eq!(args.pcaps, vec![PathBuf::from("a.pcap")]);
    for bad in [
        &["taroc", "eval", "--scheme", "nope"][..],
        &["taroc", "eval", "--loss", "2"],
        &["taroc", "eval", "--burst", "0.5"],
        &["taroc", "eval", "--ber", "x"],
        &["taroc", "eval", "--reset-at", "-1"],
    ] {
        assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
    }
}

#[test]
#[allow(irrefutable_let_patterns)] // while `eval` is the only command
fn default_schemes_are_all() {
    let cli = Cli::try_parse_from(["taroc", "eval"]).unwrap();
    let Command::Eval(args) = cli.command else {
        panic!("not eval")
    };
    assert_eq!(args.schemes(), Variant::all());
}

fn eval_args(args: &[&str]) -> EvalArgs {
    let mut all = vec!["taroc", "eval"];
    all.extend_from_slice(args);
    match Cli::try_parse_from(all).unwrap().command {
        Command::Eval(args) => args,
        _ => panic!("not eval"),
    }
}

#[test]
fn burst_without_loss_and_duplicate_schemes_are_usage_errors() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let args = eval_args(&["--burst", "3"]);
    assert_eq!(run_eval(&args, &mut out, &mut err, false), Exit::Usage);
    let text = String::from_utf8(err).unwrap();
    assert_eq!(
        text,
        "taroc eval: --burst needs --loss: the bursts make up the loss rate --loss\n"
    );
    assert!(out.is_empty());
    let args = eval_args(&["--scheme", "taroc,vj,taroc"]);
    assert_eq!(args.check().unwrap_err(), "--scheme lists taroc twice");
    let args = eval_args(&["--timing", "-"]);
    assert!(args
        .check()
        .unwrap_err()
        .starts_with("--timing reads the capture again"));
    assert!(eval_args(&["--loss", "0.1", "--burst", "3"])
        .check()
        .is_ok());
    assert!(eval_args(&["--loss", "0.9", "--burst", "2"])
        .check()
        .is_err());
}

#[test]
fn timing_is_optional_and_counts_runs() {
    assert_eq!(eval_args(&[]).timing, None);
    assert_eq!(eval_args(&["--timing"]).timing, Some(5));
    assert_eq!(eval_args(&["--timing=9"]).timing, Some(9));
    // `--timing FILE` keeps FILE a capture.
    let args = eval_args(&["--timing", "a.pcap"]);
    assert_eq!((args.timing, args.pcaps.len()), (Some(5), 1));
    assert!(Cli::try_parse_from(["taroc", "eval", "--timing=0"]).is_err());
}

/// Every help text that lists schemes lists every one of the code's.
#[test]
fn every_help_lists_every_scheme() {
    let mut command = Cli::command();
    command.build();
    let mut pending = vec![command];
    let mut checked = 0;
    while let Some(mut c) = pending.pop() {
        let help = c.render_long_help().to_string();
        if help.contains("taroc-plus") || help.contains("--scheme") {
            checked += 1;
            for name in variant::NAMES.iter().chain(variant::EXTRA_NAMES.iter()) {
                assert!(
                    help.contains(name),
                    "{} --help lacks {name}:\n{help}",
                    c.get_name()
                );
            }
        }
        pending.extend(c.get_subcommands().cloned());
    }
    // eval, sim, reproduce, gateway, gateway bench.
    assert!(checked >= 5, "{checked}");
}

/// The help's bound on the flows followed for outages is the code's.
#[test]
fn help_states_the_flow_bound() {
    let bound = format!("at most {} flows", taroc_sim::outage::MAX_FLOWS);
    assert!(EVAL_ABOUT.contains(&bound), "{EVAL_ABOUT}");
}

/// A standard output that fails every write, or only its flush, with the OS error `errno`.
struct Failing {
    errno: i32,
    on_flush_only: bool,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.on_flush_only {
            Ok(buf.len())
        } else {
            Err(std::io::Error::from_raw_os_error(self.errno))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::from_raw_os_error(self.errno))
    }
}

/// Results that cannot be written make `eval` and `twice` fail with one line (quietly for a
/// broken pipe), whether the write or the final flush fails; they once exited 0.
#[test]
fn results_not_written_are_a_failure() {
    let twice = |json: bool| {
        move |out: &mut dyn Write, err: &mut dyn Write| {
            run_twice(
                &TwiceArgs {
                    pcaps: Vec::new(),
                    json,
                },
                out,
                err,
            )
        }
    };
    type Run = Box<dyn Fn(&mut dyn Write, &mut dyn Write) -> Exit>;
    let runs: [(&str, Run); 4] = [
        (
            "eval",
            Box::new(|out, err| run_eval(&eval_args(&["--scheme", "vj"]), out, err, false)),
        ),
        (
            "eval",
            Box::new(|out, err| run_eval(&eval_args(&["--json"]), out, err, false)),
        ),
        ("twice", Box::new(twice(false))),
        ("twice", Box::new(twice(true))),
    ];
    for (command, run) in &runs {
        for on_flush_only in [false, true] {
            let mut err = Vec::new();
            let mut out = Failing {
                errno: 28,
                on_flush_only,
            };
            assert_eq!(run(&mut out, &mut err), Exit::Failure, "{command}");
            assert_eq!(
                String::from_utf8(err).unwrap(),
                format!(
                    "taroc {command}: cannot write to standard output: No space left on device \
                     (os error 28)\n"
                )
            );
            let mut err = Vec::new();
            let mut out = Failing {
                errno: 32,
                on_flush_only,
            };
            assert_eq!(run(&mut out, &mut err), Exit::Failure, "{command}");
            assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
        }
    }
}
