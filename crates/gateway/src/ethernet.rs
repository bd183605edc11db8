//! The Ethernet transport: link frames in raw Ethernet frames of their own EtherType, through
//! an AF_PACKET socket on one interface, to one peer's MAC address: for Ethernet-facing
//! satellite and radio modems, or two hosts on one segment, without IP and UDP headers.
//!
//! ```text
//!  | destination MAC | source MAC | EtherType | length (2) | link frame | padding | FCS |
//!       6 B              6 B          2 B        our payload, at least 46 B        4 B
//! ```
//!
//! The kernel writes the Ethernet header (the socket is of kind `SOCK_DGRAM`); the payload
//! starts with the link frame's length, big-endian, since Ethernet pads payloads shorter than
//! 46 bytes and a receiver could not tell padding from the frame. The socket is bound to the
//! EtherType (default 0x88B5, IEEE 802's "local experimental" one), so frames of other
//! EtherTypes never reach it; frames from another MAC address than the peer's are counted
//! (`foreign`) and dropped, as are payloads whose length field does not fit (`malformed`).
//! Anyone on the segment can send such frames: like the UDP link, this one is authenticated
//! unless `--insecure-no-auth`.

use crate::counters::Rejection;
use crate::transport::{Incoming, Transport};
use crate::Error;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The EtherType unless `--ethertype` says otherwise: 0x88B5, "local experimental" (IEEE
/// 802), for protocols that are not registered.
pub const DEFAULT_ETHERTYPE: u16 = 0x88B5;

/// Bytes of payload an Ethernet frame carries at least (shorter ones are padded).
pub const MIN_PAYLOAD: usize = 46;

/// Bytes an Ethernet frame adds to its payload on the medium: the header (14) and the FCS (4).
pub const FRAME_OVERHEAD: usize = 18;

/// A MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// Parses `aa:bb:cc:dd:ee:ff` (or with dashes).
    pub fn parse(text: &str) -> Result<Mac, String> {
        let parts: Vec<&str> = text.split([':', '-']).collect();
        let mut mac = [0u8; 6];
        if parts.len() != 6 {
            return Err(format!("`{text}` is not a MAC address (aa:bb:cc:dd:ee:ff)"));
        }
        for (byte, part) in mac.iter_mut().zip(parts) {
            *byte = u8::from_str_radix(part, 16)
                .ok()
                .filter(|_| part.len() == 2)
                .ok_or_else(|| format!("`{text}` is not a MAC address (aa:bb:cc:dd:ee:ff)"))?;
        }
        Ok(Mac(mac))
    }
}

impl std::fmt::Display for Mac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// Parses an EtherType written in hexadecimal (`88b5`, `0x88B5`); 0x0600 and above.
pub fn ethertype(text: &str) -> Result<u16, String> {
    let digits = text.trim_start_matches("0x").trim_start_matches("0X");
    match u16::from_str_radix(digits, 16) {
        Ok(t) if t >= 0x0600 => Ok(t),
        _ => Err(format!(
            "`{text}` is not an EtherType (hexadecimal, 0600 or above, e.g. 88b5)"
        )),
    }
}

/// The settings of an Ethernet link.
#[derive(Debug, Clone)]
pub struct EthernetConfig {
    /// The interface (`eth0`, a veth).
    pub interface: String,
    /// The peer gateway's MAC address.
    pub peer: Mac,
    /// The EtherType of our frames.
    pub ethertype: u16,
    /// SO_RCVBUF and SO_SNDBUF to ask the kernel for, bytes.
    pub socket_buffer: usize,
}

/// The `sockaddr_ll` that names `mac` on interface `index` for `ethertype`.
fn link_address(index: i32, ethertype: u16, mac: Mac) -> libc::sockaddr_ll {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = ethertype.to_be();
    addr.sll_ifindex = index;
    addr.sll_halen = 6;
    addr.sll_addr[..6].copy_from_slice(&mac.0);
    addr
}

/// Link frames in Ethernet frames to one peer.
#[derive(Debug)]
pub struct EthernetTransport {
    socket: OwnedFd,
    peer: libc::sockaddr_ll,
    peer_mac: Mac,
    buffer: Vec<u8>,
    medium: [u64; 2],
}

impl EthernetTransport {
    /// Opens an AF_PACKET socket on the interface of `config` for its EtherType (needs
    /// CAP_NET_RAW).
    pub fn open(config: &EthernetConfig) -> Result<EthernetTransport, Error> {
        let name = CString::new(config.interface.as_str())
            .map_err(|_| Error::usage("an interface name cannot hold a NUL byte"))?;
        // SAFETY: `name` is a valid NUL-terminated string.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(Error::io(
                format!("Ethernet interface {}", config.interface),
                io::Error::last_os_error(),
            ));
        }
        let protocol = i32::from(config.ethertype.to_be());
        // SAFETY: socket() takes no pointers; the descriptor it returns is ours.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if fd < 0 {
            return Err(Error::io(
                "opening an AF_PACKET socket (needs CAP_NET_RAW)",
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        let local = link_address(index as i32, config.ethertype, Mac([0; 6]));
        // SAFETY: `local` is a valid sockaddr_ll and its size is given.
        let rc = unsafe {
            libc::bind(
                socket.as_raw_fd(),
                (&local as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(Error::io(
                format!("binding to {}", config.interface),
                io::Error::last_os_error(),
            ));
        }
        crate::socket::size_buffers(&socket, config.socket_buffer)?;
        Ok(EthernetTransport {
            socket,
            peer: link_address(index as i32, config.ethertype, config.peer),
            peer_mac: config.peer,
            buffer: vec![0; 65536],
            medium: [0; 2],
        })
    }
}

/// Bytes an Ethernet frame of `payload` bytes takes on the medium (header, padding, FCS).
fn on_medium(payload: usize) -> u64 {
    (payload.max(MIN_PAYLOAD) + FRAME_OVERHEAD) as u64
}

impl Transport for EthernetTransport {
    fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    fn send(&mut self, _now: u64, frame: &[u8]) -> bool {
        let Ok(len) = u16::try_from(frame.len()) else {
            return false;
        };
        let payload = &mut self.buffer[..frame.len() + 2];
        payload[..2].copy_from_slice(&len.to_be_bytes());
        payload[2..].copy_from_slice(frame);
        self.medium[0] += on_medium(payload.len());
        // SAFETY: `payload` is valid for its length; `peer` is a valid sockaddr_ll.
        let rc = unsafe {
            libc::sendto(
                self.socket.as_raw_fd(),
                payload.as_ptr().cast(),
                payload.len(),
                0,
                (&self.peer as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        rc >= 0
    }

    fn receive(&mut self, buffer: &mut [u8]) -> Result<Option<Incoming>, Error> {
        loop {
            // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut from_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: the buffer and the address are valid for the lengths given.
            let n = unsafe {
                libc::recvfrom(
                    self.socket.as_raw_fd(),
                    self.buffer.as_mut_ptr().cast(),
                    self.buffer.len(),
                    0,
                    (&mut from as *mut libc::sockaddr_ll).cast(),
                    &mut from_len,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => Err(Error::io("receiving from the Ethernet interface", e)),
                };
            }
            // Our own frames, as the kernel shows them to packet sockets: not for us.
            if from.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let n = n as usize;
            self.medium[1] += on_medium(n);
            if from.sll_halen != 6 || from.sll_addr[..6] != self.peer_mac.0 {
                return Ok(Some(Incoming::Refused(Rejection::Foreign)));
            }
            let payload = &self.buffer[..n];
            let Some(len) = payload
                .get(..2)
                .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])))
                .filter(|&len| len + 2 <= n)
            else {
                return Ok(Some(Incoming::Refused(Rejection::Malformed)));
            };
            let len = len.min(buffer.len());
            buffer[..len].copy_from_slice(&payload[2..2 + len]);
            return Ok(Some(Incoming::Frame {
                len,
                from_peer: true,
            }));
        }
    }

    fn medium_bytes(&self) -> [u64; 2] {
        self.medium
    }
}

/// Checks that interface `name`'s MTU holds a link frame of a `link_mtu`-byte packet with
/// `overhead` bytes of framing (its kind byte and the authentication's) and the 2-byte length;
/// the error says which MTU would fit.
pub fn check_interface_mtu(name: &str, link_mtu: usize, overhead: usize) -> Result<(), Error> {
    let path = format!("/sys/class/net/{name}/mtu");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(path.clone(), e))?;
    let mtu: usize = text
        .trim()
        .parse()
        .map_err(|_| Error::new(format!("{path} holds no MTU")))?;
    let needed = link_mtu + overhead + 2;
    if mtu < needed {
        return Err(Error::usage(format!(
            "interface {name} has MTU {mtu}, but a link frame takes up to {needed} bytes (the \
             link MTU {link_mtu}, {overhead} bytes of framing and a 2-byte length): give --mtu \
             (or --link-mtu) {} or less, or raise the interface's MTU",
            mtu.saturating_sub(overhead + 2)
        )));
    }
    Ok(())
}

/// The MAC address of interface `name`, from sysfs.
pub fn interface_mac(name: &str) -> Result<Mac, Error> {
    let path = format!("/sys/class/net/{name}/address");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(path.clone(), e))?;
    Mac::parse(text.trim()).map_err(Error::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_and_ethertypes_parse_and_bad_ones_are_named() {
        let mac = Mac::parse("02:00:5e:10:00:0a").unwrap();
        assert_eq!(mac.0, [2, 0, 0x5e, 0x10, 0, 0x0a]);
        assert_eq!(mac.to_string(), "02:00:5e:10:00:0a");
        assert_eq!(Mac::parse("02-00-5E-10-00-0A"), Ok(mac));
        for bad in [
            "",
            "02:00:5e:10:00",
            "02:00:5e:10:00:0g",
            "2:0:5e:10:0:a",
            "02:00:5e:10:00:0a:01",
        ] {
            assert!(Mac::parse(bad).unwrap_err().contains("MAC"), "{bad}");
        }
        assert_eq!(ethertype("88b5"), Ok(0x88B5));
        assert_eq!(ethertype("0x88B6"), Ok(0x88B6));
        assert!(ethertype("05ff").is_err());
        assert!(ethertype("zz").is_err());
        assert_eq!(on_medium(3), 64);
        assert_eq!(on_medium(1502), 1520);
    }
}
