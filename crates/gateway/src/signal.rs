//! SIGINT and SIGTERM ask the gateway to stop: the handler only sets a flag, which the event
//! loop (waking at least every 100 ms) reads; it then prints its counters and returns.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT or SIGTERM once [`install`] has run.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: one atomic store.
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (without SA_RESTART, so blocking calls return
/// early with EINTR).
pub fn install() -> Result<(), crate::Error> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; we set a handler that is async-signal-safe (one
        // atomic store), an empty mask, and pass valid pointers to sigaction.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0;
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(crate::Error::io(
                "installing the SIGINT/SIGTERM handler",
                std::io::Error::last_os_error(),
            ));
        }
    }
    Ok(())
}
