//! How a `taroc` command ends and writes: its exit status, a standard output that remembers a
//! failed write, and what the help texts list.

use std::io::Write;

use taroc_core::variant::{EXTRA_NAMES, NAMES};

/// How a `taroc` command ended. Every command's exit status follows this one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done: status 0.
    Success,
    /// The command ran but failed: a file unreadable or invalid, an output not written, a
    /// check that did not hold. Status 1.
    Failure,
    /// The command line is wrong (an option's value, or options that do not go together), so
    /// nothing ran. Status 2, as for the errors clap reports itself.
    Usage,
}

impl Exit {
    /// The process exit status: 0, 1 or 2.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
        }
    }

    /// [`Exit::Success`] if `ok`, else [`Exit::Failure`].
    pub fn of(ok: bool) -> Exit {
        if ok {
            Exit::Success
        } else {
            Exit::Failure
        }
    }
}

/// A writer (standard output) that remembers the first error of any write or flush, so that
/// results lost on the way out are not a success, whichever command wrote them and whether or
/// not it looked.
pub struct CheckedOutput<W: Write> {
    inner: W,
    error: Option<std::io::Error>,
}

impl<W: Write> CheckedOutput<W> {
    /// `inner`, checked.
    pub fn new(inner: W) -> CheckedOutput<W> {
        CheckedOutput { inner, error: None }
    }

    /// Flushes, then settles how `command` ended: `exit`, unless a write or the flush failed
    /// and the command ended with success: then the failure is reported on `err`
    /// ([`output_failed`]) and the command fails. (A command that failed said why itself.)
    pub fn finish(mut self, command: &str, exit: Exit, err: &mut dyn Write) -> Exit {
        let _ = self.flush();
        match self.error.take() {
            Some(error) if exit == Exit::Success => output_failed(command, &error, err),
            _ => exit,
        }
    }

    /// Remembers the first error of `result` (an interrupted call is retried, not an error).
    fn note<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            if e.kind() != std::io::ErrorKind::Interrupted && self.error.is_none() {
                self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
            }
        }
        result
    }
}

impl<W: Write> Write for CheckedOutput<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.note(result)
    }
}

/// Reports on `err` that `command` (e.g. `taroc sim`) could not write to standard output, and
/// returns [`Exit::Failure`]: results that were not written are a failure. A broken pipe (the
/// reader has gone, as `| head` does once it has its lines) fails quietly, as other tools do.
pub fn output_failed(command: &str, error: &std::io::Error, err: &mut dyn Write) -> Exit {
    if error.kind() != std::io::ErrorKind::BrokenPipe {
        let _ = writeln!(err, "{command}: cannot write to standard output: {error}");
    }
    Exit::Failure
}

/// Every codec variant's name, from the code (`taroc_core::variant::NAMES`, then
/// `EXTRA_NAMES`), comma-separated: what help texts list.
pub fn scheme_names() -> String {
    NAMES
        .iter()
        .chain(EXTRA_NAMES.iter())
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

/// PNG pixels per SVG pixel: our plots are 900 SVG pixels wide, so 1800 pixels.
pub const PNG_SCALE: f32 = 2.0;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A standard output that fails every write with the OS error `errno`.
    pub(crate) struct Failing(pub(crate) i32);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(self.0))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// ENOSPC (`/dev/full`) and EPIPE (the reader has gone).
    pub(crate) const FULL: i32 = 28;
    pub(crate) const GONE: i32 = 32;

    #[test]
    fn a_checked_output_turns_a_lost_success_into_a_failure() {
        let settle = |exit: Exit| {
            let mut out = CheckedOutput::new(Failing(FULL));
            let _ = writeln!(out, "results");
            let mut err = Vec::new();
            let exit = out.finish("taroc x", exit, &mut err);
            (exit, String::from_utf8(err).unwrap())
        };
        let (exit, err) = settle(Exit::Success);
        assert_eq!(exit, Exit::Failure);
        assert!(
            err.starts_with("taroc x: cannot write to standard output: "),
            "{err}"
        );
        // A command that failed has said why; a usage error stays one.
        assert_eq!(settle(Exit::Failure), (Exit::Failure, String::new()));
        assert_eq!(settle(Exit::Usage), (Exit::Usage, String::new()));
        // Nothing lost, nothing changed.
        let mut out = CheckedOutput::new(Vec::new());
        let _ = writeln!(out, "results");
        assert_eq!(
            out.finish("taroc x", Exit::Success, &mut Vec::new()),
            Exit::Success
        );
    }
}
