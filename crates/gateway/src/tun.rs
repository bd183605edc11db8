//! Linux TUN devices: create one or attach to an existing one by name, set its MTU, bring it up,
//! and read or write one IP packet per call (non-blocking).
//!
//! Opened with `IFF_TUN | IFF_NO_PI`: every read returns one bare IPv4 or IPv6 packet, every
//! write takes one. `TUNSETIFF` creates the device if no device has that name in the namespace,
//! and attaches to it if it is a TUN device (e.g. one made by `ip tuntap add mode tun`). A
//! device this process created disappears when its descriptor closes; an attached persistent one
//! stays. The device's IP addresses and routes are the administrator's (or the harness's) job.

use std::ffi::c_void;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::{netns, Error};

/// The longest interface name Linux accepts (IFNAMSIZ - 1).
pub const MAX_NAME_LEN: usize = libc::IFNAMSIZ - 1;

/// How to open a TUN device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunConfig {
    /// The interface name (1 to 15 bytes, no `/`, no whitespace).
    pub name: String,
    /// The MTU to set on the device, in bytes (68 to 65535).
    pub mtu: u32,
    /// The network namespace (a name from `ip netns`) to open the device in; `None` for this
    /// process's namespace.
    pub netns: Option<String>,
}

/// An open TUN device.
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
    mtu: u32,
}

/// Checks an interface name.
pub fn check_name(name: &str) -> Result<(), Error> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(Error::new(format!(
            "interface name `{name}` must be 1 to {MAX_NAME_LEN} bytes long"
        )));
    }
    if name
        .bytes()
        .any(|b| b == b'/' || b == b':' || b.is_ascii_whitespace() || b == 0)
        || name == "."
        || name == ".."
    {
        return Err(Error::new(format!(
            "interface name `{name}` may not contain '/', ':', spaces or NUL"
        )));
    }
    Ok(())
}

/// An `ifreq` naming `name` (checked by [`check_name`]), the rest zeroed.
fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is a plain C struct (a name array and a union of integers, addresses and a
    // pointer) for which all-zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *slot = byte as libc::c_char;
    }
    req
}

/// Runs one `ifreq` ioctl on `fd`.
fn ioctl(fd: RawFd, request: libc::c_ulong, req: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: every request used here (TUNSETIFF, SIOC[GS]IFMTU, SIOC[GS]IFFLAGS) reads and
    // writes one `struct ifreq`, and `req` is a valid, exclusively borrowed ifreq.
    let rc = unsafe { libc::ioctl(fd, request as _, req as *mut libc::ifreq) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Tun {
    /// Creates or attaches to the TUN device `config.name`, sets its MTU, brings it up and makes
    /// its descriptor non-blocking. Errors say what to do (root, /dev/net/tun, a device of the
    /// same name that is not a TUN device, ...).
    pub fn open(config: &TunConfig) -> Result<Tun, Error> {
        check_name(&config.name)?;
        if !(68..=65535).contains(&config.mtu) {
            return Err(Error::new(format!(
                "MTU {} of {} is outside 68..=65535",
                config.mtu, config.name
            )));
        }
        netns::run_in(config.netns.as_deref(), || Tun::open_here(config))
    }

    fn open_here(config: &TunConfig) -> Result<Tun, Error> {
        let name = &config.name;
        let file: File = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => Error::io(
                    "TUN is unavailable: /dev/net/tun does not exist (load the `tun` module, or \
                     give the container the device)",
                    e,
                ),
                io::ErrorKind::PermissionDenied => {
                    Error::io("TUN needs root (CAP_NET_ADMIN): opening /dev/net/tun", e)
                }
                _ => Error::io("opening /dev/net/tun", e),
            })?;
        let fd: OwnedFd = file.into();
        let mut req = ifreq(name);
        req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        ioctl(fd.as_raw_fd(), libc::TUNSETIFF as libc::c_ulong, &mut req).map_err(|e| {
            match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => Error::io(
                    format!("TUN needs root (CAP_NET_ADMIN): creating or attaching {name}"),
                    e,
                ),
                Some(libc::EINVAL) => Error::io(
                    format!(
                        "{name} exists but is not a single-queue TUN device without packet \
                         information (a TAP device, or made with `pi`/`multi_queue`?)"
                    ),
                    e,
                ),
                Some(libc::EBUSY) => Error::io(
                    format!("{name} is a TUN device already attached to another process"),
                    e,
                ),
                _ => Error::io(format!("creating or attaching TUN device {name}"), e),
            }
        })?;
        let tun = Tun {
            fd,
            name: name.clone(),
            mtu: config.mtu,
        };
        // MTU and flags are interface ioctls: any socket of the namespace serves.
        // SAFETY: socket() has no memory preconditions; the result is checked below.
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(Error::io(
                "opening a control socket",
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let control = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = ifreq(name);
        req.ifr_ifru.ifru_mtu = config.mtu as libc::c_int;
        ioctl(control.as_raw_fd(), libc::SIOCSIFMTU, &mut req)
            .map_err(|e| Error::io(format!("setting the MTU of {name} to {}", config.mtu), e))?;
        let mut req = ifreq(name);
        ioctl(control.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req)
            .map_err(|e| Error::io(format!("reading the flags of {name}"), e))?;
        // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
        let flags = unsafe { req.ifr_ifru.ifru_flags };
        req.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
        ioctl(control.as_raw_fd(), libc::SIOCSIFFLAGS, &mut req)
            .map_err(|e| Error::io(format!("bringing {name} up"), e))?;
        Ok(tun)
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The MTU set on the device.
    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// The descriptor, for `poll`.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads one packet into `buf`; `Ok(None)` when none is waiting. A packet longer than `buf`
    /// comes back cut to `buf.len()`, so give a buffer longer than the MTU and treat a full
    /// buffer as oversize.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the duration of the call.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut c_void,
                buf.len(),
            )
        };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Writes one packet (the kernel receives it as if it had arrived on the device).
    pub fn write(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: `packet` is valid for reads of `packet.len()` bytes for the duration of the call.
        let n = unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                packet.as_ptr() as *const c_void,
                packet.len(),
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("tun0").is_ok());
        assert!(check_name("abcdefghijklmno").is_ok());
        assert!(check_name("abcdefghijklmnop").is_err());
        assert!(check_name("").is_err());
        assert!(check_name("a/b").is_err());
        assert!(check_name("a b").is_err());
    }

    #[test]
    fn bad_mtu_is_refused_before_any_system_call() {
        let config = TunConfig {
            name: "t0".into(),
            mtu: 20,
            netns: None,
        };
        assert!(Tun::open(&config).unwrap_err().to_string().contains("MTU"));
    }
}
