//! What the end-to-end tests of the `taroc` binary share.

use std::process::Command;

/// Runs `taroc ARGS`: (exit code, stdout, stderr).
pub fn taroc(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_taroc"))
        .args(args)
        .output()
        .expect("the taroc binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
