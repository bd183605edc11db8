//! The serial transport: link frames on a serial line (a tty: a UART, a USB serial adapter, a
//! radio modem, a pseudo-terminal), framed as RFC 1662's HDLC-like framing or as KISS for
//! packet-radio TNCs ([`taroc_wire::hdlc`], [`taroc_wire::kiss`]).
//!
//! Each link frame (the kind byte and what follows, as [`crate::endpoint`] makes it) goes as
//! one line frame: `kind | frame | FCS`, delimited, escaped. A frame whose FCS fails is
//! dropped, counted (`bad check`) and reported to the decompressor as a link error; runts,
//! overlong frames, bad escapes, line noise between frames and KISS frames of another port are
//! dropped and counted by reason. The deframer resynchronises at the next delimiter.
//!
//! The line is opened in raw mode (8N1, no flow control, no modem control lines) at the baud
//! rate asked for, through the termios of the `nix` crate. A line carries only as many bytes
//! a second as its baud rate allows (ten bits per byte: start, eight data, stop): the
//! transport counts what it wrote and tells the loop when the line will be free
//! ([`Transport::free_at`]), so packets wait in the kernel's queue until their turn (and are
//! compressed then), not in the tty's output buffer, where a frame would wait seconds at 9,600
//! baud behind earlier ones.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::ops::Range;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::sys::termios::{self, BaudRate, ControlFlags, FlushArg, SetArg};
use taroc_wire::fcs::Fcs;
use taroc_wire::framing::{Discard, Event};
use taroc_wire::{hdlc, kiss};

use crate::counters::Rejection;
use crate::transport::{Incoming, Transport};
use crate::Error;

/// Bits a byte takes on an 8N1 line: a start bit, eight data bits, a stop bit.
pub const BITS_PER_BYTE: u64 = 10;

/// The framing of a serial line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// RFC 1662 HDLC-like framing (flag 0x7E, escape 0x7D), FCS-16 by default.
    Hdlc(hdlc::Config),
    /// KISS to a TNC (FEND 0xC0, FESC 0xDB), on a port, with an FCS of ours (FCS-32 by default).
    Kiss(kiss::Config),
}

impl Framing {
    /// HDLC with `fcs` (FCS-16 or FCS-32) and frames of up to `max_frame` bytes, on a line that
    /// is 8-bit clean (raw mode, no software flow control): only the flag and the escape octet
    /// are escaped (an ACCM of 0, what PPP's LCP negotiates on such lines), and control
    /// characters on the line are data. RFC 1662's default before negotiation, escaping every
    /// control character, costs an eighth of the bytes of random data.
    pub fn hdlc(fcs: Fcs, max_frame: usize) -> Framing {
        Framing::Hdlc(hdlc::Config {
            fcs,
            max_frame,
            accm: hdlc::Accm::NONE,
            rx_accm: 0,
        })
    }

    /// HDLC as [`Framing::hdlc`], escaping every control character (0x00-0x1F) and dropping
    /// raw ones as line noise: RFC 1662's default, for lines that are not 8-bit clean (a modem
    /// with XON/XOFF flow control).
    pub fn hdlc_escaping_controls(fcs: Fcs, max_frame: usize) -> Framing {
        Framing::Hdlc(hdlc::Config {
            fcs,
            max_frame,
            ..hdlc::Config::default()
        })
    }

    /// KISS on TNC port `port` with `fcs` and frames of up to `max_frame` bytes.
    pub fn kiss(port: u8, fcs: Fcs, max_frame: usize) -> Framing {
        Framing::Kiss(kiss::Config {
            port,
            fcs,
            max_frame,
        })
    }

    /// The most bytes a link frame of `len` bytes (kind byte included) takes on the line.
    pub fn max_encoded_len(&self, len: usize) -> usize {
        let frame = len.saturating_sub(1);
        match self {
            Framing::Hdlc(c) => hdlc::max_encoded_len(frame, c.fcs),
            Framing::Kiss(c) => kiss::max_encoded_len(frame, c.fcs),
        }
    }

    /// How it is described at start.
    pub fn describe(&self) -> String {
        match self {
            Framing::Hdlc(c) if c.rx_accm == 0 => {
                format!("HDLC (RFC 1662, ACCM 0), {}", fcs_name(c.fcs))
            }
            Framing::Hdlc(c) => format!(
                "HDLC (RFC 1662, control characters escaped), {}",
                fcs_name(c.fcs)
            ),
            Framing::Kiss(c) => format!("KISS port {}, {} of ours", c.port, fcs_name(c.fcs)),
        }
    }
}

fn fcs_name(fcs: Fcs) -> &'static str {
    match fcs {
        Fcs::Fcs16 => "FCS-16",
        Fcs::Fcs32 => "FCS-32",
    }
}

/// A deframer of either framing.
#[derive(Debug)]
enum Deframer {
    Hdlc(hdlc::Deframer<Vec<u8>>),
    Kiss(kiss::Deframer<Vec<u8>>),
}

impl Deframer {
    fn new(framing: &Framing) -> Deframer {
        match framing {
            Framing::Hdlc(c) => Deframer::Hdlc(hdlc::Deframer::new(c)),
            Framing::Kiss(c) => Deframer::Kiss(kiss::Deframer::new(c)),
        }
    }

    fn push(&mut self, bytes: &[u8], on_event: impl FnMut(Event<'_>)) {
        match self {
            Deframer::Hdlc(d) => d.push(bytes, on_event),
            Deframer::Kiss(d) => d.push(bytes, on_event),
        }
    }
}

/// What a line frame was, for the loop: the kind of [`Incoming`], and a received frame's bytes
/// in the transport's buffer.
#[derive(Debug, Clone)]
struct Received {
    incoming: Incoming,
    bytes: Range<usize>,
}

/// The deframed and what it made of the bytes read so far, in order.
#[derive(Debug, Default)]
struct Inbox {
    items: VecDeque<Received>,
    /// The frames' bytes (kind byte first), back to back; emptied when `items` is.
    bytes: Vec<u8>,
}

impl Inbox {
    fn event(&mut self, event: Event<'_>) {
        let incoming = match event {
            Event::Frame { kind, frame } => {
                let start = self.bytes.len();
                self.bytes.push(kind);
                self.bytes.extend_from_slice(frame);
                let len = self.bytes.len() - start;
                self.items.push_back(Received {
                    incoming: Incoming::Frame {
                        len,
                        from_peer: true,
                    },
                    bytes: start..start + len,
                });
                return;
            }
            Event::Discarded(Discard::BadFcs) => Incoming::Damaged,
            Event::Discarded(reason) => Incoming::Refused(rejection(reason)),
            Event::Garbage(_) => Incoming::Refused(Rejection::Garbage),
        };
        self.items.push_back(Received {
            incoming,
            bytes: 0..0,
        });
    }
}

/// Why the gateway counts a frame the deframer discarded.
fn rejection(reason: Discard) -> Rejection {
    match reason {
        Discard::BadFcs => Rejection::BadCheck,
        Discard::Runt => Rejection::Runt,
        Discard::TooLong => Rejection::Overlong,
        Discard::Abort | Discard::InvalidEscape => Rejection::BadEscape,
        Discard::OtherPort | Discard::NotData => Rejection::NotOurs,
    }
}

/// The settings of a serial line.
#[derive(Debug, Clone)]
pub struct SerialConfig {
    /// The tty's path (`/dev/ttyUSB0`, `/dev/ttyS0`, a pseudo-terminal's `/dev/pts/N`).
    pub path: PathBuf,
    /// Bits per second.
    pub baud: u32,
    /// HDLC or KISS.
    pub framing: Framing,
}

/// The termios speed of `baud`, if the line can be set to it.
pub fn baud_rate(baud: u32) -> Option<BaudRate> {
    Some(match baud {
        300 => BaudRate::B300,
        600 => BaudRate::B600,
        1200 => BaudRate::B1200,
        2400 => BaudRate::B2400,
        4800 => BaudRate::B4800,
        9600 => BaudRate::B9600,
        19200 => BaudRate::B19200,
        38400 => BaudRate::B38400,
        57600 => BaudRate::B57600,
        115200 => BaudRate::B115200,
        230400 => BaudRate::B230400,
        460800 => BaudRate::B460800,
        500000 => BaudRate::B500000,
        576000 => BaudRate::B576000,
        921600 => BaudRate::B921600,
        1000000 => BaudRate::B1000000,
        1152000 => BaudRate::B1152000,
        1500000 => BaudRate::B1500000,
        2000000 => BaudRate::B2000000,
        2500000 => BaudRate::B2500000,
        3000000 => BaudRate::B3000000,
        3500000 => BaudRate::B3500000,
        4000000 => BaudRate::B4000000,
        _ => return None,
    })
}

/// The baud rates [`baud_rate`] knows, for messages.
pub const BAUD_RATES: &str = "300, 600, 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, \
     230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, 2000000, 2500000, \
     3000000, 3500000, 4000000";

/// Opens the tty at `path` non-blocking, without making it our controlling terminal, in raw
/// mode (8N1, no flow control, modem control lines ignored) at `baud`, with what is queued on
/// it discarded.
pub fn open_line(path: &Path, baud: u32) -> Result<File, Error> {
    let speed = baud_rate(baud).ok_or_else(|| {
        Error::usage(format!(
            "--baud {baud} is not a rate a serial line can be set to (one of: {BAUD_RATES})"
        ))
    })?;
    let shown = path.display();
    let metadata =
        std::fs::metadata(path).map_err(|e| Error::io(format!("serial line {shown}"), e))?;
    if !metadata.file_type().is_char_device() {
        return Err(Error::usage(format!(
            "serial line {shown} is not a character device (a tty such as /dev/ttyUSB0)"
        )));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(format!("opening serial line {shown}"), e))?;
    let setup = |e: nix::Error| {
        Error::io(
            format!("setting up serial line {shown} (is it a tty?)"),
            std::io::Error::from(e),
        )
    };
    let mut t = termios::tcgetattr(&file).map_err(setup)?;
    termios::cfmakeraw(&mut t);
    termios::cfsetspeed(&mut t, speed).map_err(setup)?;
    t.control_flags |= ControlFlags::CLOCAL | ControlFlags::CREAD | ControlFlags::CS8;
    t.control_flags &= !(ControlFlags::CRTSCTS | ControlFlags::CSTOPB | ControlFlags::PARENB);
    termios::tcsetattr(&file, SetArg::TCSANOW, &t).map_err(setup)?;
    termios::tcflush(&file, FlushArg::TCIOFLUSH).map_err(setup)?;
    Ok(file)
}

/// Bytes of line frames that may wait to be written: a few frames' worth (the loop takes no
/// packet while the line is busy, so only hellos and feedback come on top).
const PENDING_LIMIT: usize = 16 * 1024;

/// Line frames on a serial line.
#[derive(Debug)]
pub struct SerialTransport {
    line: File,
    framing: Framing,
    deframer: Deframer,
    inbox: Inbox,
    read: Vec<u8>,
    encoded: Vec<u8>,
    /// Encoded bytes the tty did not take yet.
    pending: Vec<u8>,
    /// Nanoseconds a byte takes on the line.
    byte_ns: u64,
    /// When the line has sent what was written (ns, the loop's clock).
    line_free_at: u64,
    medium: [u64; 2],
}

impl SerialTransport {
    /// The transport on `line` (a tty opened by [`open_line`], or any non-blocking byte stream
    /// such as a pipe or socket in tests), whose bytes go at `baud`.
    pub fn new(line: File, baud: u32, framing: Framing) -> SerialTransport {
        SerialTransport {
            line,
            deframer: Deframer::new(&framing),
            framing,
            inbox: Inbox::default(),
            read: vec![0; 4096],
            encoded: Vec::with_capacity(8192),
            pending: Vec::with_capacity(PENDING_LIMIT),
            byte_ns: BITS_PER_BYTE * 1_000_000_000 / u64::from(baud.max(1)),
            line_free_at: 0,
            medium: [0; 2],
        }
    }

    /// Opens the line of `config` ([`open_line`]).
    pub fn open(config: &SerialConfig) -> Result<SerialTransport, Error> {
        let line = open_line(&config.path, config.baud)?;
        Ok(SerialTransport::new(line, config.baud, config.framing))
    }

    /// Writes what is pending, as far as the tty takes it.
    fn write_pending(&mut self) -> bool {
        while !self.pending.is_empty() {
            match self.line.write(&self.pending) {
                Ok(0) => return false,
                Ok(n) => {
                    self.pending.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }
}

impl Transport for SerialTransport {
    fn fd(&self) -> RawFd {
        self.line.as_raw_fd()
    }

    fn free_at(&self) -> u64 {
        self.line_free_at
    }

    fn send(&mut self, now: u64, frame: &[u8]) -> bool {
        let Some((&kind, rest)) = frame.split_first() else {
            return false;
        };
        self.encoded.clear();
        match &self.framing {
            Framing::Hdlc(c) => hdlc::encode(kind, rest, c, &mut self.encoded),
            Framing::Kiss(c) => kiss::encode(kind, rest, c, &mut self.encoded),
        }
        if self.pending.len() + self.encoded.len() > PENDING_LIMIT {
            return false;
        }
        self.pending.extend_from_slice(&self.encoded);
        let len = self.encoded.len() as u64;
        self.medium[0] += len;
        self.line_free_at = self.line_free_at.max(now) + len * self.byte_ns;
        self.write_pending()
    }

    fn flush(&mut self, _now: u64) {
        self.write_pending();
    }

    fn receive(&mut self, buffer: &mut [u8]) -> Result<Option<Incoming>, Error> {
        loop {
            if let Some(item) = self.inbox.items.pop_front() {
                if self.inbox.items.is_empty() {
                    // Nothing refers to the bytes once the last item is out.
                    let bytes = &self.inbox.bytes[item.bytes.clone()];
                    let incoming = copy_frame(item.incoming, bytes, buffer);
                    self.inbox.bytes.clear();
                    return Ok(Some(incoming));
                }
                let bytes = &self.inbox.bytes[item.bytes];
                return Ok(Some(copy_frame(item.incoming, bytes, buffer)));
            }
            match self.line.read(&mut self.read) {
                Ok(0) => return Err(Error::new("the serial line was closed (hung up)")),
                Ok(n) => {
                    self.medium[1] += n as u64;
                    let inbox = &mut self.inbox;
                    self.deframer.push(&self.read[..n], |e| inbox.event(e));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("reading the serial line", e)),
            }
        }
    }

    fn medium_bytes(&self) -> [u64; 2] {
        self.medium
    }
}

/// Copies a received frame's bytes into `buffer` (cut to its length, as a datagram too long
/// for it would be).
fn copy_frame(incoming: Incoming, bytes: &[u8], buffer: &mut [u8]) -> Incoming {
    match incoming {
        Incoming::Frame { from_peer, .. } => {
            let len = bytes.len().min(buffer.len());
            buffer[..len].copy_from_slice(&bytes[..len]);
            Incoming::Frame { len, from_peer }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests;
