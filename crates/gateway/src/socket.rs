//! Socket options of the UDP and Ethernet links: buffer sizes (SO_RCVBUF, SO_SNDBUF) asked for
//! and granted.

use std::os::fd::AsRawFd;

use crate::Error;

/// The socket buffer size asked for unless `--socket-buffer` says otherwise, bytes: enough for
/// a burst of a few thousand full-size frames, so a busy loop loses none to a full buffer.
pub const DEFAULT_SOCKET_BUFFER: usize = 4 << 20;

/// The buffer sizes of a socket as the kernel reports them (Linux reports twice what was
/// asked, the rest being its bookkeeping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketBuffers {
    /// SO_RCVBUF, bytes.
    pub receive: usize,
    /// SO_SNDBUF, bytes.
    pub send: usize,
}

/// Asks for `bytes` of receive and send buffer on `socket` (past `net.core.rmem_max` and
/// `wmem_max` when the process may: SO_RCVBUFFORCE needs CAP_NET_ADMIN), and returns what the
/// kernel granted.
pub fn size_buffers(socket: &impl AsRawFd, bytes: usize) -> Result<SocketBuffers, Error> {
    let fd = socket.as_raw_fd();
    let value = libc::c_int::try_from(bytes)
        .unwrap_or(libc::c_int::MAX)
        .min(libc::c_int::MAX / 2);
    let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    let set = |option: libc::c_int| {
        // SAFETY: `value` is a valid c_int that outlives the call, and `size` is its size.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                option,
                (&value as *const libc::c_int).cast(),
                size,
            )
        };
        rc == 0
    };
    let get = |option: libc::c_int, name: &str| {
        let mut granted: libc::c_int = 0;
        let mut len = size;
        // SAFETY: `granted` and `len` are valid for writes of their sizes; `len` holds the
        // size of `granted`.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                option,
                (&mut granted as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(Error::io(
                format!("reading the UDP socket's {name}"),
                std::io::Error::last_os_error(),
            ));
        }
        Ok(usize::try_from(granted).unwrap_or(0))
    };
    for (force, plain, name) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, "SO_RCVBUF"),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, "SO_SNDBUF"),
    ] {
        if !set(force) && !set(plain) {
            return Err(Error::io(
                format!("setting the UDP socket's {name} to {bytes} bytes"),
                std::io::Error::last_os_error(),
            ));
        }
    }
    Ok(SocketBuffers {
        receive: get(libc::SO_RCVBUF, "SO_RCVBUF")?,
        send: get(libc::SO_SNDBUF, "SO_SNDBUF")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    #[test]
    fn socket_buffers_are_sized() {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let granted = size_buffers(&socket, 1 << 20).unwrap();
        // Linux grants twice the request (capped by rmem_max unless privileged): at least
        // the kernel's minimum, and what it reports is what getsockopt says.
        assert!(
            granted.receive >= 2048 && granted.send >= 2048,
            "{granted:?}"
        );
        if crate::is_root() {
            assert_eq!(
                granted,
                SocketBuffers {
                    receive: 2 << 20,
                    send: 2 << 20
                }
            );
        }
    }
}
