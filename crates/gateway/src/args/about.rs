//! The long help texts of `taroc gateway` and its subcommands.

/// The long help of `taroc gateway`.
pub const GATEWAY_ABOUT: &str = "\
Run header compression on a live Linux link: packets from TUN devices cross a compressor, a \
link and a decompressor.

Four links:

  Emulated link (one host): --tun-a NAME --tun-b NAME [--netns-a NS --netns-b NS]
    Packets read from TUN A are compressed, cross an emulated link (--rate, --delay, --queue, \
--ber, --loss, --burst, --reorder; each direction its own random streams from --seed), are \
decompressed and written into TUN B; and back. The gateway keeps each original packet beside \
its frame, so it judges every delivery exactly: `incorrect delivered` counts packets that \
differ from the original, `incorrect undetected` those whose TCP/UDP checksum would still pass. \
Every rebuilt TCP/UDP packet's checksum is verified before it is written: one that fails (RFC \
1144 VJ does not verify what it rebuilds, and rebuilds wrong packets after a loss) is dropped \
and counted (`checksum dropped`) unless --deliver-bad-checksums.

  UDP link (two hosts): --tun NAME --listen ADDR:PORT --peer ADDR:PORT --key FILE
    Frames travel to the peer gateway in UDP datagrams. Every frame is authenticated with the \
pre-shared key in FILE (the same file on both gateways; make it with `taroc gateway genkey`): a \
BLAKE3 tag (--tag-len bytes), a sender id and a counter, so a forged, replayed, reflected, \
truncated or oversize datagram is refused and counted before it reaches a decompressor, \
whatever its source address, and so is a frame from before a restart of either gateway (stale: \
long frames echo the peer's sender id, and the gateways exchange hellos at start). When the peer \
restarts, this gateway restarts its codecs too (counted as `peer runs`), so the peer's fresh \
decompressor gets context set-ups at once; frames are not encrypted. --insecure-no-auth sends and accepts \
bare frames (one kind byte, then the frame) from the --peer address, as anyone who can spoof \
that address can. The link options, if given, are applied to what this side sends, to make a \
real link worse on purpose. There is no oracle here; rebuilt packets whose TCP/UDP checksum fails \
are dropped (`checksum dropped`), or delivered and counted (`checksum failed`) with \
--deliver-bad-checksums.

  Serial line (two hosts): --tun NAME --serial PATH --baud RATE [--framing hdlc|kiss] [--key FILE]
    Frames go on a serial line (a UART, a USB serial adapter, a radio modem), one line frame \
each: RFC 1662 HDLC-like framing (flag 0x7E, escapes, FCS-16 or --fcs 32), as PPP puts on such \
lines, or KISS to a packet-radio TNC (--kiss-port, with an FCS of ours, 32 bits by default). The \
line is set to raw mode, 8N1, no flow control, at --baud; the gateway sends only as fast as the \
line carries, so packets wait in the kernel's queue and each is compressed when its turn comes. \
A frame that fails its check is dropped, counted (`bad check`) and reported to the decompressor \
as a link error; line noise, runts and overlong frames are counted by reason. Frames are \
authenticated with --key FILE (4-byte tags unless --tag-len), and not otherwise: the line is \
point to point, as the line at start says.

  Ethernet (two hosts on one segment, or an Ethernet-facing modem): --tun NAME --ethernet IFACE \
--peer-mac MAC --key FILE
    Frames go in raw Ethernet frames of EtherType --ethertype (88b5 by default) to the peer's \
MAC address, with a 2-byte length before each (Ethernet pads short payloads): no IP or UDP \
header. Frames from other MAC addresses are refused and counted. Authenticated as on UDP \
(8-byte tags), or --insecure-no-auth. The interface's MTU must hold the link MTU, the \
authentication's framing and 2 bytes.

TUN devices are created, or attached if a TUN device of that name exists (e.g. from `ip tuntap \
add mode tun`), given the --mtu and brought up; their addresses and routes are yours to set \
(`ip address add ... dev NAME`). Packets longer than the TUN MTU and frames longer than the \
link MTU are dropped, counted and logged (at most once a second). The link MTU must be at \
least the TUN MTU.

Counters (packets, bytes saved, bytes on the medium with framing, drops by reason, context \
damage, frames refused before decompression by reason, feedback) are printed every \
--stats-interval seconds and in full on exit, on SIGINT/SIGTERM or after --duration. Needs root \
(CAP_NET_ADMIN; CAP_NET_RAW for --ethernet; CAP_SYS_ADMIN for --netns-*). To run as a service, \
put the options in a TOML file and give --config FILE.

Example, one host:
  ip netns add left; ip netns add right
  taroc gateway --tun-a tc0 --netns-a left --tun-b tc0 --netns-b right \\
      --scheme taroc --rate 384 --delay 100 --ber 1e-5 &
  ip -n left address add 10.9.0.1/24 dev tc0; ip -n right address add 10.9.0.2/24 dev tc0
  ip netns exec right iperf3 -s -D; ip netns exec left iperf3 -c 10.9.0.2 -n 1M

Example, two hosts (192.0.2.1 and 192.0.2.2):
  (umask 077; taroc gateway genkey > link.key)   # then copy link.key to the other host
  taroc gateway --tun tc0 --listen 0.0.0.0:7000 --peer 192.0.2.2:7000 --key link.key

Example, two hosts joined by a serial cable or radio modems at 9600 baud (on each host):
  taroc gateway --tun tc0 --serial /dev/ttyUSB0 --baud 9600 --mtu 296 &
  ip address add 10.9.0.1/24 dev tc0    # 10.9.0.2/24 on the other host";

/// The long help of `taroc gateway genkey`.
pub const GENKEY_ABOUT: &str = "\
Print a new pre-shared key for the authenticated UDP link: 32 random bytes from the kernel \
(/dev/urandom) as 64 hexadecimal digits and a newline. Both gateways need the same key file \
(--key FILE); keep it readable by its owner only, e.g.:
  (umask 077; taroc gateway genkey > link.key)";
