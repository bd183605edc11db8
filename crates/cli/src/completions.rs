//! `taroc completions SHELL` and `taroc man`: shell completions and manual pages, generated from
//! the command line's clap definitions (so they never drift from `--help`).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cli::Cli;

/// The arguments of `taroc completions`.
#[derive(Debug, Clone, Args)]
#[command(long_about = COMPLETIONS_ABOUT)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

const COMPLETIONS_ABOUT: &str = "\
Print a completion script for SHELL on standard output: every subcommand, option and value \
list of `taroc`. Install it where your shell looks, for instance:
  bash  taroc completions bash > ~/.local/share/bash-completion/completions/taroc
  zsh   taroc completions zsh > ~/.zfunc/_taroc   (with fpath+=~/.zfunc before compinit)
  fish  taroc completions fish > ~/.config/fish/completions/taroc.fish";

/// The arguments of `taroc man`.
#[derive(Debug, Clone, Args)]
#[command(long_about = MAN_ABOUT)]
pub struct ManArgs {
    /// Write one page per command into this directory (created if missing) instead of the page of
    /// `taroc` to standard output.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const MAN_ABOUT: &str = "\
Print the manual page of `taroc` (roff, section 1) on standard output, or with --dir write one \
page per command and subcommand (taroc.1, taroc-eval.1, taroc-gateway-bench.1, ...) into a \
directory. Read one with `taroc man | man -l -`; install them with, for instance, \
`taroc man --dir ~/.local/share/man/man1`.";

/// Runs `taroc completions`: the script goes to `out`, a failure to write it to `err`. Returns
/// whether the script was written.
pub fn run_completions(args: &CompletionsArgs, out: &mut dyn Write, err: &mut dyn Write) -> bool {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "taroc", &mut script);
    report(
        "completions",
        out.write_all(&script).and_then(|()| out.flush()),
        err,
    )
}

/// Runs `taroc man`: the page goes to `out` (or the pages to `--dir`), a failure to `err`.
/// Returns whether every page was written.
pub fn run_man(args: &ManArgs, out: &mut dyn Write, err: &mut dyn Write) -> bool {
    match &args.dir {
        None => {
            let mut page = Vec::new();
            let rendered = clap_mangen::Man::new(Cli::command()).render(&mut page);
            report(
                "man",
                rendered.and_then(|()| out.write_all(&page).and_then(|()| out.flush())),
                err,
            )
        }
        Some(dir) => match write_pages(dir) {
            Ok(()) => true,
            Err(problem) => {
                let _ = writeln!(err, "taroc man: {}: {problem}", dir.display());
                false
            }
        },
    }
}

/// Writes every command's page into `dir`, creating it if missing.
fn write_pages(dir: &Path) -> std::io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        ));
    }
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(Cli::command(), dir)
}

fn report(command: &str, result: std::io::Result<()>, err: &mut dyn Write) -> bool {
    match result {
        Ok(()) => true,
        Err(problem) => {
            taroc_sim::cli::output_failed(&format!("taroc {command}"), &problem, err);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;
    use std::process::Command;

    /// Every command's name and its subcommands' names, depth first (`taroc` itself excluded).
    fn subcommand_names(command: &clap::Command, names: &mut Vec<String>) {
        for sub in command.get_subcommands() {
            names.push(sub.get_name().to_string());
            subcommand_names(sub, names);
        }
    }

    /// Every page `--dir` should write: `taroc.1`, `taroc-eval.1`, `taroc-gateway-bench.1`, ...
    fn page_names(prefix: &str, command: &clap::Command, names: &mut Vec<String>) {
        names.push(format!("{prefix}.1"));
        for sub in command.get_subcommands() {
            page_names(&format!("{prefix}-{}", sub.get_name()), sub, names);
        }
    }

    fn completions(shell: Shell) -> String {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert!(run_completions(
            &CompletionsArgs { shell },
            &mut out,
            &mut err
        ));
        assert!(err.is_empty());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn completions_name_every_subcommand_in_every_shell() {
        let mut names = Vec::new();
        subcommand_names(&Cli::command(), &mut names);
        for expected in [
            "eval",
            "twice",
            "sim",
            "reproduce",
            "mat",
            "gateway",
            "completions",
            "man",
        ] {
            assert!(names.iter().any(|name| name == expected), "{expected}");
        }
        for &shell in Shell::value_variants() {
            let script = completions(shell);
            for name in &names {
                assert!(script.contains(name.as_str()), "{shell}: no {name}");
            }
        }
        // Options too, down to nested subcommands' (spot checks).
        let bash = completions(Shell::Bash);
        for option in ["--scheme", "--quick", "--dir"] {
            assert!(bash.contains(option), "bash: no {option}");
        }
    }

    #[test]
    fn completions_parse_in_bash() {
        // `bash -n` parses the script without running it.
        let Ok(status) = Command::new("bash")
            .args(["-n", "-c", &completions(Shell::Bash)])
            .status()
        else {
            println!("notice: bash is not installed; skipping the syntax check");
            return;
        };
        assert!(status.success());
    }

    fn man_page() -> String {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert!(run_man(&ManArgs { dir: None }, &mut out, &mut err));
        assert!(err.is_empty());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn man_page_has_a_title_and_every_subcommand() {
        let page = man_page();
        assert!(page.contains(".TH taroc 1"), "{page}");
        for sub in Cli::command().get_subcommands() {
            assert!(
                page.contains(&format!("taroc\\-{}", sub.get_name())),
                "no {}",
                sub.get_name()
            );
        }
    }

    /// groff's warnings about a page, or `None` (with a notice) if groff is not installed.
    fn groff_warnings(page: &Path) -> Option<String> {
        let run = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(page)
            .output();
        match run {
            Ok(output) => {
                assert!(
                    output.status.success(),
                    "groff failed on {}",
                    page.display()
                );
                Some(String::from_utf8_lossy(&output.stderr).into_owned())
            }
            Err(_) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "groff is missing in CI (.ci/run installs groff-base)"
                );
                println!("notice: groff is not installed; skipping the man page syntax check");
                None
            }
        }
    }

    #[test]
    fn man_pages_for_every_command_are_written_and_parse() {
        let dir = std::env::temp_dir().join(format!("taroc-man-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let pages_dir = dir.join("man1");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = ManArgs {
            dir: Some(pages_dir.clone()),
        };
        assert!(run_man(&args, &mut out, &mut err), "{err:?}");
        assert!(out.is_empty() && err.is_empty());

        let mut expected = Vec::new();
        page_names("taroc", &Cli::command(), &mut expected);
        expected.sort();
        let mut written: Vec<String> = std::fs::read_dir(&pages_dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        written.sort();
        assert_eq!(written, expected);

        for name in &written {
            let path = pages_dir.join(name);
            let page = std::fs::read_to_string(&path).unwrap();
            let title = name.trim_end_matches(".1");
            assert!(page.contains(&format!(".TH {title} 1")), "{name}");
            if let Some(warnings) = groff_warnings(&path) {
                assert!(warnings.is_empty(), "{name}: {warnings}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_man_directory_is_one_line() {
        let file = std::env::temp_dir().join(format!("taroc-man-file-{}", std::process::id()));
        std::fs::write(&file, b"not a directory").unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = ManArgs {
            dir: Some(file.clone()),
        };
        assert!(!run_man(&args, &mut out, &mut err));
        let message = String::from_utf8(err).unwrap();
        assert_eq!(
            message,
            format!("taroc man: {}: not a directory\n", file.display())
        );
        std::fs::remove_file(&file).unwrap();
    }
}
