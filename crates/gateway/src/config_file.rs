//! `taroc gateway --config FILE`: a gateway's options in a TOML file, for running it as a
//! service. Each key is a long option's name (`tun`, `serial`, `baud`, `scheme`, `key`, ...;
//! `_` or `-` alike), each value its argument: a string or number, `true` for a flag (`false`
//! leaves it out), an array for a comma-separated list. An option given on the command line
//! too is taken from the command line.
//!
//! ```toml
//! tun = "tc0"
//! serial = "/dev/ttyUSB0"
//! baud = 9600
//! mtu = 296
//! key = "/etc/taroc/link.key"
//! ```

use std::ffi::OsString;
use std::path::Path;

use clap::{Args, Command};

use crate::args::RunArgs;
use crate::Error;

/// The largest configuration file read, bytes.
const MAX_LEN: u64 = 64 * 1024;

/// `args` (a whole command line, the program's name first) with a `taroc gateway --config FILE`
/// replaced by the options of FILE; any other command line as it is.
pub fn expand(args: Vec<OsString>) -> Result<Vec<OsString>, Error> {
    if args.get(1).and_then(|a| a.to_str()) != Some("gateway") {
        return Ok(args);
    }
    let Some((at, path, taken)) = find_config(&args) else {
        return Ok(args);
    };
    let options = read(Path::new(&path), &args)?;
    let mut expanded: Vec<OsString> = args[..at].to_vec();
    expanded.extend(options);
    expanded.extend_from_slice(&args[at + taken..]);
    Ok(expanded)
}

/// Where `--config FILE` (or `--config=FILE`) is in `args`: its index, the file, and how many
/// arguments it takes.
fn find_config(args: &[OsString]) -> Option<(usize, OsString, usize)> {
    for (i, arg) in args.iter().enumerate().skip(2) {
        let Some(text) = arg.to_str() else { continue };
        if text == "--" {
            return None;
        }
        if text == "--config" {
            return Some((i, args.get(i + 1)?.clone(), 2));
        }
        if let Some(path) = text.strip_prefix("--config=") {
            return Some((i, OsString::from(path), 1));
        }
    }
    None
}

/// The long option names `taroc gateway` takes.
fn long_options() -> Vec<String> {
    let command = RunArgs::augment_args(Command::new("gateway"));
    command
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect()
}

/// The options in the file at `path`, leaving out those `args` gives.
fn read(path: &Path, args: &[OsString]) -> Result<Vec<OsString>, Error> {
    let shown = path.display();
    let metadata =
        std::fs::metadata(path).map_err(|e| Error::io(format!("configuration {shown}"), e))?;
    if !metadata.is_file() {
        return Err(Error::usage(format!(
            "configuration {shown} is not a regular file"
        )));
    }
    if metadata.len() > MAX_LEN {
        return Err(Error::usage(format!(
            "configuration {shown} is longer than {MAX_LEN} bytes"
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("reading configuration {shown}"), e))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| Error::usage(format!("configuration {shown}: {e}")))?;
    let known = long_options();
    let given = |name: &str| {
        let flag = format!("--{name}");
        let with_value = format!("--{name}=");
        args.iter()
            .filter_map(|a| a.to_str())
            .any(|a| a == flag || a.starts_with(&with_value))
    };
    let mut options = Vec::new();
    for (key, value) in &table {
        let name = key.replace('_', "-");
        if name == "config" || !known.contains(&name) {
            return Err(Error::usage(format!(
                "configuration {shown}: `{key}` is not an option of taroc gateway (see \
                 `taroc gateway --help`)"
            )));
        }
        if given(&name) {
            continue;
        }
        let flag = OsString::from(format!("--{name}"));
        let scalar = |v: &toml::Value| match v {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Integer(i) => Some(i.to_string()),
            toml::Value::Float(f) => Some(f.to_string()),
            _ => None,
        };
        match value {
            toml::Value::Boolean(true) => options.push(flag),
            toml::Value::Boolean(false) => {}
            toml::Value::Array(items) => {
                let items: Option<Vec<String>> = items.iter().map(scalar).collect();
                let items = items.ok_or_else(|| {
                    Error::usage(format!(
                        "configuration {shown}: `{key}` holds something that is not a string \
                         or a number"
                    ))
                })?;
                options.extend([flag, OsString::from(items.join(","))]);
            }
            other => {
                let value = scalar(other).ok_or_else(|| {
                    Error::usage(format!(
                        "configuration {shown}: `{key}` is not a string, number, true or false"
                    ))
                })?;
                options.extend([flag, OsString::from(value)]);
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("taroc-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_file_becomes_options_and_the_command_line_wins() {
        let path = file(
            "a.toml",
            "tun = \"tc0\"\nserial = \"/dev/ttyUSB0\"\nbaud = 9600\ndeliver_bad_checksums = true\n\
             insecure-no-auth = false\nscheme = \"taroc\"\n",
        );
        let p = path.to_str().unwrap();
        let out = expand(argv(&["taroc", "gateway", "--config", p, "--scheme", "vj"])).unwrap();
        assert_eq!(
            out,
            argv(&[
                "taroc",
                "gateway",
                "--baud",
                "9600",
                "--deliver-bad-checksums",
                "--serial",
                "/dev/ttyUSB0",
                "--tun",
                "tc0",
                "--scheme",
                "vj"
            ])
        );
        let eq = format!("--config={p}");
        assert_eq!(
            expand(argv(&["taroc", "gateway", &eq])).unwrap().len(),
            2 + 9
        );
        // Other commands, and a gateway without --config, are left alone.
        let other = argv(&["taroc", "eval", "--config", p]);
        assert_eq!(expand(other.clone()).unwrap(), other);
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let unknown = file("b.toml", "tun = \"tc0\"\nspeed = 9600\n");
        let e = expand(argv(&[
            "taroc",
            "gateway",
            "--config",
            unknown.to_str().unwrap(),
        ]))
        .unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("`speed`"), "{e}");
        let broken = file("c.toml", "tun = \n");
        let e = expand(argv(&[
            "taroc",
            "gateway",
            "--config",
            broken.to_str().unwrap(),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("c.toml"), "{e}");
        let nested = file("d.toml", "[link]\nrate = 64\n");
        assert!(expand(argv(&[
            "taroc",
            "gateway",
            "--config",
            nested.to_str().unwrap()
        ]))
        .is_err());
        let dir = std::env::temp_dir();
        let e = expand(argv(&[
            "taroc",
            "gateway",
            "--config",
            dir.to_str().unwrap(),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = expand(argv(&[
            "taroc",
            "gateway",
            "--config",
            "/nonexistent/g.toml",
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/g.toml"), "{e}");
    }
}
