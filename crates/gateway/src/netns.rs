//! Network namespaces: enter one (per thread), and create/delete named ones (`ip netns`).
//!
//! Linux moves only the *calling thread* into a network namespace with `setns(CLONE_NEWNET)`;
//! sockets and TUN devices created by that thread belong to the namespace for good, whichever
//! thread uses them later. So the gateway opens a TUN device inside a namespace from a
//! short-lived thread, and the harness runs each end of a TCP transfer in a thread of its own.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

/// The file that names the namespace `name` (made by `ip netns add`).
pub fn path(name: &str) -> PathBuf {
    let run = PathBuf::from("/run/netns").join(name);
    if run.exists() {
        run
    } else {
        PathBuf::from("/var/run/netns").join(name)
    }
}

/// Moves the calling thread into the network namespace `name`. Only call it from a thread that
/// was started for work in that namespace: the thread stays there.
pub fn enter(name: &str) -> Result<(), Error> {
    let path = path(name);
    let file = File::open(&path).map_err(|e| {
        Error::io(
            format!(
                "network namespace `{name}` ({}) cannot be opened",
                path.display()
            ),
            e,
        )
    })?;
    // SAFETY: the descriptor is valid for the duration of the call (`file` lives until the end
    // of the function); setns only changes the calling thread's namespace.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::io(
            format!("entering network namespace `{name}` needs root (CAP_SYS_ADMIN)"),
            e,
        ));
    }
    Ok(())
}

/// Runs `work` in a new thread inside the network namespace `name` (or in this thread's
/// namespace if `name` is `None`) and returns its result.
pub fn run_in<T: Send>(
    name: Option<&str>,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    match name {
        None => work(),
        Some(name) => std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    enter(name)?;
                    work()
                })
                .join()
                .unwrap_or_else(|_| Err(Error::new("a thread inside a namespace panicked")))
        }),
    }
}

/// Runs `ip ARGS...` and waits for it (at most 10 s; then it is killed), returning an error with
/// its standard error output if it fails.
pub fn ip(args: &[&str]) -> Result<(), Error> {
    let mut child = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::io("cannot run `ip` (install iproute2)", e))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut stderr = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
                }
                return if status.success() {
                    Ok(())
                } else {
                    Err(Error::new(format!(
                        "`ip {}` failed: {}",
                        args.join(" "),
                        stderr.trim()
                    )))
                };
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::new(format!(
                    "`ip {}` did not finish in 10 s",
                    args.join(" ")
                )));
            }
            Err(e) => return Err(Error::io("waiting for `ip`", e)),
        }
    }
}

/// A network namespace this process created; deleted on drop.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates the namespace `name` (`ip netns add`) with its loopback up.
    pub fn create(name: &str) -> Result<Netns, Error> {
        ip(&["netns", "add", name])?;
        let ns = Netns {
            name: name.to_owned(),
        };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            eprintln!("taroc gateway: cleanup: {e}");
        }
    }
}
