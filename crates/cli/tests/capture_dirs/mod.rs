//! Where the tests that run whole capture sets find them.

use std::path::{Path, PathBuf};

/// The shared captures: `$TAROC_SHARED_CAPTURES` if set (the skip test points it at a missing
/// directory), else `shared/captures` beside the checkout.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("TAROC_SHARED_CAPTURES").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/captures"
            ))
        },
        PathBuf::from,
    )
}

/// Every `*.pcap` / `*.pcapng` under `dir`, at any depth, sorted.
pub fn capture_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("pcap" | "pcapng")
            ) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
