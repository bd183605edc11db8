//! What both capture-making examples share: the two hosts' addresses, and `dumpcap` on a
//! namespace's TUN device, started and stopped so that it writes its last records.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use taroc_gateway::Error;

/// The address of host `side` (0 or 1) on the link between the two namespaces.
pub fn address(v6: bool, side: usize) -> IpAddr {
    let host = side as u8 + 1;
    if v6 {
        IpAddr::V6(Ipv6Addr::new(0xfd00, 0x77, 0, 0, 0, 0, 0, host.into()))
    } else {
        IpAddr::V4(Ipv4Addr::new(10, 77, 0, host))
    }
}

/// A `dumpcap` of `filter` (none if empty) on namespace `ns`'s TUN device into `file`, running
/// once the file exists.
pub fn dumpcap(ns: &str, filter: &str, file: &Path) -> Result<Child, Error> {
    let mut args = vec![
        "netns", "exec", ns, "dumpcap", "-q", "-P", "-s", "0", "-i", "taroc0",
    ];
    if !filter.is_empty() {
        args.extend(["-f", filter]);
    }
    let file = file.to_string_lossy();
    args.extend(["-w", &file]);
    let child = Command::new("ip")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io("running dumpcap", e))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !Path::new(file.as_ref()).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    Ok(child)
}

/// Stops a process this program started with SIGINT (so a dumpcap writes its last records) and
/// waits for it.
pub fn interrupt(mut child: Child) -> Result<(), Error> {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .map_err(|e| Error::io("running kill", e))?;
    if !status.success() {
        let _ = child.kill();
    }
    child
        .wait()
        .map_err(|e| Error::io("waiting for dumpcap", e))?;
    Ok(())
}
