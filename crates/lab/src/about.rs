//! The long help texts of the lab's subcommands of `taroc gateway`.

/// The long help of `taroc gateway bench`.
pub const BENCH_ABOUT: &str = "\
Measure the gateway with real kernel TCP transfers between two fresh network namespaces.

Goodput grid (default): for every --rates x --bers x --timestamps x --schemes cell, a bulk TCP \
transfer of rate x --duration bytes (a seeded byte stream, checked byte for byte) crosses the \
gateway over the emulated link, with the MTU the TAROC draft pairs with the BER (Appendix B.3: \
576 bytes up to 3e-6, 296 up to 3e-5, 168 at 1e-4, 96 above; at least 1280 for IPv6), \
--delay each way and a --queue packet DropTail queue (the draft: 100 ms, 6 packets). Goodput is \
bytes received per second from accept to end of stream; a transfer still running at \
--time-limit stops there (marked *). `--timestamps on,off` runs with Linux defaults and with \
net.ipv4.tcp_timestamps=0. Also reported: the gateway's CPU time per packet, and its oracle's \
incorrect deliveries. Cells run --jobs at a time, each in its own namespaces.

Forwarding (--forwarding): TCP through the gateway with link emulation off and 1500-byte \
packets, for --forwarding-seconds per measurement, against a plain TUN-to-TUN copy measured in \
the same run (alternating, --rounds times): Mbit/s of IP packets forwarded in the data \
direction, and the ratio to the copy. The gateway is one thread; the TCP ends share the machine. \
`--link udp` carries each scheme over two UDP gateways on this host's loopback (one thread \
each, a relay between them) with authenticated frames and with --insecure-no-auth ones in the \
same round, and reports their ratio, the cost of authentication. `--link ethernet` carries it as raw Ethernet frames between two gateways over a veth pair (authenticated), `--link serial` over an emulated serial line at 4,000,000 baud (HDLC, not authenticated); with udp among the links, each row also gives its speed over the same scheme's over UDP. For example:
  taroc gateway bench --forwarding --link udp,ethernet,serial --schemes none,taroc-plus

Serial lines (--serial): two gateways on an emulated serial line (two ptys bridged at the baud rate, 8N1) for every --bauds x HDLC and KISS x MTU 296 and 1500 x --schemes: a bulk transfer of about eight seconds of line time and 40 one-byte request/echo exchanges (TCP_NODELAY), each against `none`.

Transports (--transports): per scheme, one checked transfer of --bytes over UDP, raw Ethernet and an emulated 115,200-baud serial line (HDLC), and the bytes each transport put on its medium per packet (outer headers, framing, escapes, checks and tags): what compression saves on each.

Needs root. With --json, one JSON object per run on standard output.";

/// The long help of `taroc gateway transfer`.
pub const TRANSFER_ABOUT: &str = "\
Send or receive a checked TCP byte stream with the kernel's sockets: the sender writes --bytes \
of a pseudo-random stream (ChaCha8 from --seed), the receiver regenerates it and compares every \
byte it reads. Run the receiver first (on one host or in one namespace), then the sender (on \
the other side of the gateways). Each prints one JSON object (bytes, first mismatching offset, \
seconds, goodput) and exits with status 0 only if the whole stream arrived unchanged.

Example, across the namespaces of the `taroc gateway` example:
  taroc gateway transfer --netns right --receive 10.9.0.2:5201 --bytes 4M &
  taroc gateway transfer --netns left --send 10.9.0.2:5201 --bytes 4M";
