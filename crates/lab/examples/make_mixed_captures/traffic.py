#!/usr/bin/env python3
"""Traffic generators of the mixed captures (`captures/mixed/`), run by `make_mixed_captures`
inside its two network namespaces. Every sender uses the kernel's sockets (or the system's
`ping`), so what is captured is real kernel traffic; the payloads, names, sizes and timings are
drawn from `--seed`.

Each process speaks a small protocol with the program that starts it: it sets up (binds its
sockets), prints `ready` on standard output, waits for a `go` line on standard input, then runs.
A client exits when it is done; a server runs until its standard input is closed.

    traffic.py quic-server --local ADDR --port 443 --cert CERT --key KEY --seed N
    traffic.py quic-client --peer ADDR --port 443 --ca CERT --connection 1000,10000 ... --seed N
    traffic.py dns-server  --local ADDR --port 53 --seed N
    traffic.py dns-client  --peer ADDR --port 53 --duration S --rate Q --seed N
    traffic.py rtp         --local ADDR --peer ADDR --side a|b --duration S --calls N ... --seed N
    traffic.py udp-sink    --local ADDR --port 9000
    traffic.py icmp        --local ADDR --peer ADDR --duration S --seed N
    traffic.py tcp-server  --local ADDR --http-port 80 --echo-port 7 --seed N
    traffic.py tcp-client  --peer ADDR --http-port 80 --echo-port 7 --duration S --seed N

Needs Python 3.11, and `aioquic` (QUIC) and `dnslib` (DNS) from PyPI.
"""

import argparse
import asyncio
import heapq
import ipaddress
import random
import select
import socket
import struct
import subprocess
import sys
import threading
import time


def family(addr):
    return socket.AF_INET6 if ipaddress.ip_address(addr).version == 6 else socket.AF_INET


def ready_then_go():
    """Tells the starter that the sockets are bound, then waits for its go."""
    print("ready", flush=True)
    line = sys.stdin.readline()
    if line.strip() != "go":
        sys.exit(0)


def wait_for_eof():
    """A server's life after go: until the starter closes standard input."""
    sys.stdin.read()


# ------------------------------------------------------------------------------------------------
# QUIC: HTTP/3 GETs of files of given sizes (aioquic)


def body_of(seed, size):
    return random.Random(seed * 1_000_003 + size).randbytes(size)


def quic_server(args):
    from aioquic.asyncio import QuicConnectionProtocol, serve
    from aioquic.h3.connection import H3_ALPN, H3Connection
    from aioquic.h3.events import HeadersReceived
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.events import ProtocolNegotiated

    class Server(QuicConnectionProtocol):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.h3 = None

        def quic_event_received(self, event):
            if isinstance(event, ProtocolNegotiated):
                self.h3 = H3Connection(self._quic)
            if self.h3 is None:
                return
            for ev in self.h3.handle_event(event):
                if isinstance(ev, HeadersReceived):
                    headers = dict(ev.headers)
                    path = headers.get(b":path", b"/").decode()
                    try:
                        size = int(path.rsplit("/", 1)[1])
                    except ValueError:
                        size = 0
                    body = body_of(args.seed, size)
                    self.h3.send_headers(
                        ev.stream_id,
                        [
                            (b":status", b"200"),
                            (b"server", b"make_mixed_captures"),
                            (b"content-type", b"application/octet-stream"),
                            (b"content-length", str(size).encode()),
                        ],
                    )
                    self.h3.send_data(ev.stream_id, body, end_stream=True)
                    self.transmit()

    async def main():
        config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
        config.load_cert_chain(args.cert, args.key)
        server = await serve(args.local, args.port, configuration=config, create_protocol=Server)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, ready_then_go)
        await loop.run_in_executor(None, wait_for_eof)
        server.close()

    asyncio.run(main())


def quic_client(args):
    from aioquic.asyncio import QuicConnectionProtocol, connect
    from aioquic.h3.connection import H3_ALPN, H3Connection
    from aioquic.h3.events import DataReceived, HeadersReceived
    from aioquic.quic.configuration import QuicConfiguration

    class Client(QuicConnectionProtocol):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.h3 = H3Connection(self._quic)
            self.waiting = {}

        def quic_event_received(self, event):
            for ev in self.h3.handle_event(event):
                if isinstance(ev, (HeadersReceived, DataReceived)) and ev.stream_id in self.waiting:
                    fut, got = self.waiting[ev.stream_id]
                    if isinstance(ev, DataReceived):
                        got.extend(ev.data)
                    if ev.stream_ended and not fut.done():
                        fut.set_result(bytes(got))

        async def get(self, path):
            sid = self._quic.get_next_available_stream_id()
            self.h3.send_headers(
                sid,
                [
                    (b":method", b"GET"),
                    (b":scheme", b"https"),
                    (b":authority", args.server_name.encode()),
                    (b":path", path.encode()),
                    (b"user-agent", b"make_mixed_captures"),
                ],
                end_stream=True,
            )
            fut = asyncio.get_running_loop().create_future()
            self.waiting[sid] = (fut, bytearray())
            self.transmit()
            return await asyncio.wait_for(fut, 60)

    async def main():
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, ready_then_go)
        rng = random.Random(args.seed)
        for i, spec in enumerate(args.connection):
            if i:
                await asyncio.sleep(args.gap)
            config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
            config.server_name = args.server_name
            config.load_verify_locations(args.ca)
            async with connect(args.peer, args.port, configuration=config, create_protocol=Client) as c:
                for size in [int(s) for s in spec.split(",")]:
                    body = await c.get(f"/bytes/{size}")
                    if body != body_of(args.seed, size):
                        raise SystemExit(f"GET /bytes/{size}: wrong body")
                    await asyncio.sleep(0.1 + rng.random() * 0.4)

    asyncio.run(main())


# ------------------------------------------------------------------------------------------------
# DNS: a small authoritative responder and two kinds of clients (dnslib)


def dns_zone(seed):
    """The names the responder knows, and which of them exist."""
    rng = random.Random(seed)
    words = ["www", "api", "cdn", "mail", "img", "static", "login", "shop", "news", "video",
             "chat", "maps", "docs", "push", "auth", "edge", "files", "status", "time", "update"]
    zones = ["mixed.test.", "example.test.", "streaming.test.", "corp.test."]
    names = [f"{w}.{z}" for w in words for z in zones]
    rng.shuffle(names)
    records = {}
    for i, name in enumerate(names):
        rrs = []
        owner = name
        if i % 5 == 0:
            target = f"{name.split('.')[0]}.edge-{i % 7}.cdn.test."
            rrs.append(f"{name} 300 IN CNAME {target}")
            owner = target
        for _ in range(1 + rng.randrange(3)):
            rrs.append(f"{owner} 60 IN A 192.0.2.{rng.randrange(1, 255)}")
        for _ in range(1 + rng.randrange(2)):
            rrs.append(f"{owner} 60 IN AAAA 2001:db8::{rng.randrange(1, 0xffff):x}")
        if i % 3 == 0:
            rrs.append(f"{name} 300 IN HTTPS 1 . alpn=h3,h2")
        if name.startswith("mail."):
            rrs.append(f"{name} 3600 IN MX 10 {name}")
            rrs.append(f'{name} 3600 IN TXT "v=spf1 ip4:192.0.2.0/24 -all"')
        records[name] = rrs
    return names, records


def dns_server(args):
    import dnslib

    _, records = dns_zone(args.seed)
    parsed = {name: [dnslib.RR.fromZone(r)[0] for r in rrs] for name, rrs in records.items()}
    soa = dnslib.RR.fromZone("test. 300 IN SOA ns.test. hostmaster.test. 2026010101 7200 900 1209600 300")[0]
    sock = socket.socket(family(args.local), socket.SOCK_DGRAM)
    sock.bind((args.local, args.port))
    sock.settimeout(0.2)
    ready_then_go()
    done = threading.Event()
    threading.Thread(target=lambda: (wait_for_eof(), done.set()), daemon=True).start()
    while not done.is_set():
        try:
            data, peer = sock.recvfrom(4096)
        except socket.timeout:
            continue
        try:
            query = dnslib.DNSRecord.parse(data)
        except dnslib.DNSError:
            continue
        reply = query.reply()
        reply.header.aa = 1
        qname = str(query.q.qname).lower()
        qtype = query.q.qtype
        if qname in parsed:
            for rr in parsed[qname]:
                if rr.rtype == qtype or rr.rtype == dnslib.QTYPE.CNAME:
                    reply.add_answer(rr)
            for rr in parsed[qname]:
                if rr.rtype == dnslib.QTYPE.CNAME:
                    for target_rr in parsed_targets(parsed, rr):
                        if target_rr.rtype == qtype:
                            reply.add_answer(target_rr)
            if not reply.rr:
                reply.add_auth(soa)
        else:
            reply.header.rcode = dnslib.RCODE.NXDOMAIN
            reply.add_auth(soa)
        for opt in query.ar:
            if opt.rtype == dnslib.QTYPE.OPT:
                cookie = [o for o in opt.rdata if o.code == 10]
                options = [dnslib.EDNSOption(10, cookie[0].data + bytes(16))] if cookie else []
                reply.add_ar(dnslib.EDNS0(udp_len=1232, opts=options))
        sock.sendto(reply.pack(), peer)


def parsed_targets(parsed, cname_rr):
    """The records of a CNAME's target (they sit under the alias's entry)."""
    target = str(cname_rr.rdata.label).lower()
    return [rr for rrs in parsed.values() for rr in rrs if str(rr.rname).lower() == target]


def dns_client(args):
    import dnslib

    names, _ = dns_zone(args.seed)
    rng = random.Random(args.seed ^ 0xD45)
    # Popularity: a few names are asked often (a Zipf-like weight), one query in ten is for a
    # name that does not exist.
    weights = [1.0 / (i + 1) for i in range(len(names))]
    fam = family(args.peer)
    stub = socket.socket(fam, socket.SOCK_DGRAM)
    stub.bind(("0.0.0.0" if fam == socket.AF_INET else "::", 0))
    stub.settimeout(1.0)
    ready_then_go()
    end = time.monotonic() + args.duration
    count = 0
    while time.monotonic() < end:
        if rng.random() < 0.1:
            name = f"{rng.choice(['wpad', 'host', 'printer', 'old'])}{rng.randrange(100)}.mixed.test."
        else:
            name = rng.choices(names, weights)[0]
        if rng.random() < 0.6:
            # A stub resolver (getaddrinfo): A and AAAA back to back from one socket, no EDNS,
            # and for every third lookup an HTTPS record, as browsers ask.
            types = ["A", "AAAA"] + (["HTTPS"] if count % 3 == 0 else [])
            pending = {}
            for t in types:
                q = dnslib.DNSRecord.question(name, t)
                q.header.id = rng.randrange(65536)
                pending[q.header.id] = q
                stub.sendto(q.pack(), (args.peer, args.port))
            for _ in types:
                try:
                    stub.recvfrom(4096)
                except socket.timeout:
                    break
        else:
            # A forwarding resolver: a fresh source port per query, EDNS0 (1232 bytes) with a
            # client cookie.
            q = dnslib.DNSRecord.question(name, rng.choice(["A", "AAAA", "A", "HTTPS", "MX"]))
            q.header.id = rng.randrange(65536)
            cookie = rng.randbytes(8)
            q.add_ar(dnslib.EDNS0(udp_len=1232, opts=[dnslib.EDNSOption(10, cookie)]))
            with socket.socket(fam, socket.SOCK_DGRAM) as s:
                s.settimeout(1.0)
                s.sendto(q.pack(), (args.peer, args.port))
                try:
                    s.recvfrom(4096)
                except socket.timeout:
                    pass
        count += 1
        time.sleep(rng.expovariate(args.rate))


# ------------------------------------------------------------------------------------------------
# RTP-shaped voice and video with RTCP


NTP_OFFSET = 2208988800


class Source:
    """One RTP stream this side sends."""

    def __init__(self, rng, sock, to, clock, pt):
        self.sock, self.to, self.clock, self.pt = sock, to, clock, pt
        self.ssrc = rng.getrandbits(32)
        self.seq = rng.getrandbits(16)
        self.ts0 = rng.getrandbits(32)
        self.packets = 0
        self.octets = 0
        self.last_ts = self.ts0

    def send(self, ts, marker, payload):
        self.last_ts = ts & 0xFFFFFFFF
        header = struct.pack("!BBHII", 0x80, (0x80 if marker else 0) | self.pt,
                             self.seq, self.last_ts, self.ssrc)
        self.sock.sendto(header + payload, self.to)
        self.seq = (self.seq + 1) & 0xFFFF
        self.packets += 1
        self.octets += len(payload)


class Reception:
    """What this side received from one remote RTP source (for RTCP report blocks)."""

    def __init__(self, seq, index):
        self.index = index
        self.base = seq
        self.max = seq
        self.cycles = 0
        self.received = 0
        self.expected_prior = 0
        self.received_prior = 0
        self.last_sr = 0
        self.last_sr_at = 0.0
        self.jitter = 0.0
        self.transit = None


class Receiver:
    """Reads every socket of this side; keeps per-source counts for the report blocks."""

    def __init__(self, rtp_socks, rtcp_socks, clocks):
        self.rtp, self.rtcp, self.clocks = rtp_socks, rtcp_socks, clocks
        self.sources = {}
        self.lock = threading.Lock()
        self.stop = False

    def run(self):
        socks = self.rtp + self.rtcp
        while not self.stop:
            readable, _, _ = select.select(socks, [], [], 0.1)
            now = time.time()
            for s in readable:
                data = s.recv(65536)
                with self.lock:
                    if s in self.rtp and len(data) >= 12:
                        self.on_rtp(s, data, now)
                    elif s in self.rtcp and len(data) >= 8:
                        self.on_rtcp(data, now)

    def on_rtp(self, s, data, now):
        seq, ts, ssrc = struct.unpack("!HII", data[2:12])
        src = self.sources.get(ssrc)
        if src is None:
            src = self.sources[ssrc] = Reception(seq, self.rtp.index(s))
        if seq < src.max and src.max - seq > 0x8000:
            src.cycles += 1 << 16
        if ((seq - src.max) & 0xFFFF) < 0x8000:
            src.max = seq
        src.received += 1
        clock = self.clocks[self.rtp.index(s)]
        transit = now * clock - ts
        if src.transit is not None:
            d = abs(transit - src.transit)
            src.jitter += (d - src.jitter) / 16
        src.transit = transit

    def on_rtcp(self, data, now):
        if data[1] == 200:
            ssrc = struct.unpack("!I", data[4:8])[0]
            ntp_mid = struct.unpack("!I", data[10:14])[0]
            for src_ssrc, src in self.sources.items():
                if src_ssrc == ssrc:
                    src.last_sr, src.last_sr_at = ntp_mid, now

    def blocks(self, ssrcs, now):
        """RFC 3550 report blocks for the remote sources in `ssrcs` heard so far."""
        out = []
        with self.lock:
            for ssrc in ssrcs:
                src = self.sources.get(ssrc)
                if src is None:
                    continue
                ext_max = src.cycles + src.max
                expected = ext_max - src.base + 1
                lost = max(0, expected - src.received)
                exp_int = expected - src.expected_prior
                rec_int = src.received - src.received_prior
                src.expected_prior, src.received_prior = expected, src.received
                lost_int = exp_int - rec_int
                fraction = 0 if exp_int <= 0 or lost_int <= 0 else (lost_int << 8) // exp_int
                dlsr = int((now - src.last_sr_at) * 65536) if src.last_sr else 0
                out.append(struct.pack("!IB3sIIII", ssrc, fraction & 0xFF,
                                       min(lost, 0x7FFFFF).to_bytes(3, "big"), ext_max & 0xFFFFFFFF,
                                       int(src.jitter) & 0xFFFFFFFF, src.last_sr, dlsr))
        return out


def rtcp_packet(sender, ssrc, cname, blocks, now):
    """A compound RTCP packet: SR (or RR when `sender` is None) with report blocks, then SDES
    with the CNAME."""
    body = b"".join(blocks)
    if sender is not None:
        ntp = now + NTP_OFFSET
        secs = int(ntp)
        frac = int((ntp - secs) * (1 << 32)) & 0xFFFFFFFF
        elapsed = now - sender.started
        rtp_ts = (sender.ts0 + int(elapsed * sender.clock)) & 0xFFFFFFFF
        info = struct.pack("!IIIII", ssrc, secs & 0xFFFFFFFF, frac, rtp_ts, sender.packets) + \
            struct.pack("!I", sender.octets & 0xFFFFFFFF)
        first = struct.pack("!BBH", 0x80 | len(blocks), 200, (len(info) + len(body)) // 4) + info + body
    else:
        first = struct.pack("!BBHI", 0x80 | len(blocks), 201, (4 + len(body)) // 4, ssrc) + body
    item = bytes([1, len(cname)]) + cname.encode()
    chunk = struct.pack("!I", ssrc) + item + b"\x00"
    chunk += b"\x00" * (-len(chunk) % 4)
    sdes = struct.pack("!BBH", 0x81, 202, len(chunk) // 4) + chunk
    return first + sdes


def rtp(args):
    rng = random.Random(args.seed * 2 + (args.side == "b"))
    fam = family(args.local)
    schedule = []  # (time offset, order, what)
    order = 0
    rtp_socks, rtcp_socks, clocks = [], [], []
    streams = []  # (kind, source or None, rtcp socket, rtcp destination, remote ssrcs)

    def pair(port):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((args.local, port))
        c = socket.socket(fam, socket.SOCK_DGRAM)
        c.bind((args.local, port + 1))
        return s, c

    for call in range(args.calls):
        port = args.base_port + 4 * call
        s, c = pair(port)
        rtp_socks.append(s), rtcp_socks.append(c), clocks.append(8000)
        src = Source(rng, s, (args.peer, port), 8000, 0)
        streams.append(("voice", call, src, c, (args.peer, port + 1)))
    if args.video:
        port = args.base_port + 100
        s, c = pair(port)
        rtp_socks.append(s), rtcp_socks.append(c), clocks.append(90000)
        src = Source(rng, s, (args.peer, port), 90000, 96) if args.side == "a" else None
        streams.append(("video", None, src, c, (args.peer, port + 1)))

    # Voice: 20 ms packets of 160 bytes (G.711 at 8000 Hz, timestamp +160). Call 0 sends without
    # pause; the others with silence suppression: talkspurts of 1-4 s and pauses of 0.4-2 s with
    # nothing sent (the timestamp goes on, the sequence number does not), the marker on each
    # talkspurt's first packet.
    for kind, call, src, _, _ in streams:
        if kind != "voice":
            continue
        frames = int(args.duration / 0.02)
        frame, marker = 0, True
        spurt_end = frame + int(rng.uniform(1.0, 4.0) / 0.02) if call else frames
        while frame < frames:
            if frame >= spurt_end:
                frame += int(rng.uniform(0.4, 2.0) / 0.02)
                spurt_end = frame + int(rng.uniform(1.0, 4.0) / 0.02)
                marker = True
                continue
            heapq.heappush(schedule, (frame * 0.02, order, ("voice", src, frame, marker)))
            order += 1
            marker = False
            frame += 1
    # Video (side a): 25 frames/s at 90 kHz (timestamp +3600 a frame), a key frame every 50
    # frames (12,000-20,000 bytes) and others of 800-5,000 bytes, each cut into RTP payloads of at
    # most 1,200 bytes sent back to back with the frame's timestamp, the marker on its last.
    for kind, _, src, _, _ in streams:
        if kind != "video" or src is None:
            continue
        frame = 0
        while frame * 0.04 < args.duration:
            size = rng.randint(12000, 20000) if frame % 50 == 0 else rng.randint(800, 5000)
            heapq.heappush(schedule, (frame * 0.04, order, ("video", src, frame, size)))
            order += 1
            frame += 1
    # RTCP: every stream's socket pair sends a compound SR (a sender) or RR (video's receiving
    # side) with SDES CNAME, first after 2.5 s x U(0.5, 1.5), then every 5 s x U(0.5, 1.5).
    for i, (kind, call, src, rtcp_sock, to) in enumerate(streams):
        t = 2.5 * rng.uniform(0.5, 1.5)
        while t < args.duration:
            heapq.heappush(schedule, (t, order, ("rtcp", i)))
            order += 1
            t += 5.0 * rng.uniform(0.5, 1.5)
    rtcp_ssrc = {i: (s[2].ssrc if s[2] else rng.getrandbits(32)) for i, s in enumerate(streams)}
    payload_rng = random.Random(args.seed ^ 0x711)

    receiver = Receiver(rtp_socks, rtcp_socks, clocks)
    ready_then_go()
    thread = threading.Thread(target=receiver.run, daemon=True)
    thread.start()
    start = time.time()
    for _, _, src, _, _ in streams:
        if src is not None:
            src.started = start
    while schedule:
        at, _, what = heapq.heappop(schedule)
        delay = start + at - time.time()
        if delay > 0:
            time.sleep(delay)
        if what[0] == "voice":
            _, src, frame, marker = what
            payload = bytes(0xFF ^ (payload_rng.getrandbits(8) & 0x1F) for _ in range(160))
            src.send(src.ts0 + 160 * frame, marker, payload)
        elif what[0] == "video":
            _, src, frame, size = what
            data = payload_rng.randbytes(size)
            chunks = [data[i:i + 1200] for i in range(0, size, 1200)]
            for k, chunk in enumerate(chunks):
                src.send(src.ts0 + 3600 * frame, k == len(chunks) - 1, chunk)
        else:
            i = what[1]
            kind, call, src, rtcp_sock, to = streams[i]
            now = time.time()
            with receiver.lock:
                remote = [ssrc for ssrc, r in receiver.sources.items() if r.index == i]
            blocks = receiver.blocks(remote, now)
            cname = f"{args.side}{call if call is not None else 'v'}@{args.local}"
            rtcp_sock.sendto(rtcp_packet(src, rtcp_ssrc[i], cname, blocks, now), to)
    time.sleep(0.5)
    receiver.stop = True
    thread.join()


# ------------------------------------------------------------------------------------------------
# ICMP and IPv4/IPv6 fragments


def udp_sink(args):
    sock = socket.socket(family(args.local), socket.SOCK_DGRAM)
    sock.bind((args.local, args.port))
    sock.settimeout(0.2)
    ready_then_go()
    done = threading.Event()
    threading.Thread(target=lambda: (wait_for_eof(), done.set()), daemon=True).start()
    while not done.is_set():
        try:
            sock.recvfrom(65536)
        except socket.timeout:
            pass


def icmp(args):
    """Pings of several sizes at once (`ping`, the kernel's echo replies), large UDP datagrams to
    a sink (fragments) and UDP to a closed port (ICMP port unreachable)."""
    fam = family(args.peer)
    ready_then_go()
    pings = []
    for size, interval in zip(args.ping_sizes, args.ping_intervals):
        count = max(1, int(args.duration / interval))
        pings.append(subprocess.Popen(
            ["ping", "-n", "-q", "-c", str(count), "-i", str(interval), "-s", str(size), args.peer],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    rng = random.Random(args.seed ^ 0x1C)
    sock = socket.socket(fam, socket.SOCK_DGRAM)
    sock.bind((args.local, 0))
    events = []
    for first, every, what in [(0.5, args.large_every, "large"), (0.8, args.closed_every, "closed")]:
        t = first
        while every > 0 and t < args.duration:
            events.append((t, what))
            t += every
    events.sort()
    start = time.monotonic()
    for at, what in events:
        delay = start + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if what == "large":
            size = rng.choice(args.large_sizes)
            sock.sendto(rng.randbytes(size), (args.peer, args.sink_port))
        else:
            sock.sendto(b"anyone there? " + bytes([rng.randrange(256)]), (args.peer, args.closed_port))
    for p in pings:
        p.wait()


# ------------------------------------------------------------------------------------------------
# TCP: a paced download and an interactive echo connection


def cubic(sock):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")


def tcp_server(args):
    fam = family(args.local)
    http = socket.socket(fam, socket.SOCK_STREAM)
    http.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    http.bind((args.local, args.http_port))
    http.listen(8)
    echo = socket.socket(fam, socket.SOCK_STREAM)
    echo.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    echo.bind((args.local, args.echo_port))
    echo.listen(8)
    ready_then_go()

    def serve_http():
        while True:
            conn, _ = http.accept()
            cubic(conn)
            request = conn.recv(4096).decode(errors="replace")
            # GET /stream/SECONDS: 4,000 bytes every 80 ms for that long, then close.
            try:
                seconds = float(request.split()[1].rsplit("/", 1)[1])
            except (IndexError, ValueError):
                seconds = 1.0
            rng = random.Random(args.seed)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"Connection: close\r\n\r\n")
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                conn.sendall(rng.randbytes(4000))
                time.sleep(0.08)
            conn.close()

    def serve_echo():
        while True:
            conn, _ = echo.accept()
            cubic(conn)
            while True:
                data = conn.recv(4096)
                if not data:
                    break
                conn.sendall(data)
            conn.close()

    threading.Thread(target=serve_http, daemon=True).start()
    threading.Thread(target=serve_echo, daemon=True).start()
    wait_for_eof()


def tcp_client(args):
    fam = family(args.peer)
    ready_then_go()

    def download():
        s = socket.socket(fam, socket.SOCK_STREAM)
        cubic(s)
        s.connect((args.peer, args.http_port))
        s.sendall(f"GET /stream/{args.duration - 1:.1f} HTTP/1.1\r\nHost: mixed.test\r\n"
                  "User-Agent: make_mixed_captures\r\n\r\n".encode())
        while s.recv(65536):
            pass
        s.close()

    def interactive():
        rng = random.Random(args.seed + 7)
        s = socket.socket(fam, socket.SOCK_STREAM)
        cubic(s)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.connect((args.peer, args.echo_port))
        end = time.monotonic() + args.duration - 1
        while time.monotonic() < end:
            n = 1 if rng.random() < 2 / 3 else rng.randint(2, 100)
            text = bytes(rng.randrange(97, 123) for _ in range(n))
            s.sendall(text)
            got = b""
            while len(got) < n:
                got += s.recv(4096)
            time.sleep(rng.uniform(0.06, 0.43))
        s.close()

    threads = [threading.Thread(target=download), threading.Thread(target=interactive)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# ------------------------------------------------------------------------------------------------


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)

    q = sub.add_parser("quic-server")
    q.add_argument("--local", required=True)
    q.add_argument("--port", type=int, default=443)
    q.add_argument("--cert", required=True)
    q.add_argument("--key", required=True)
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("quic-client")
    q.add_argument("--peer", required=True)
    q.add_argument("--port", type=int, default=443)
    q.add_argument("--ca", required=True)
    q.add_argument("--server-name", default="mixed.test")
    q.add_argument("--connection", action="append", required=True,
                   help="comma-separated sizes fetched one after another on one connection")
    q.add_argument("--gap", type=float, default=1.0, help="seconds between connections")
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("dns-server")
    q.add_argument("--local", required=True)
    q.add_argument("--port", type=int, default=53)
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("dns-client")
    q.add_argument("--peer", required=True)
    q.add_argument("--port", type=int, default=53)
    q.add_argument("--duration", type=float, default=20)
    q.add_argument("--rate", type=float, default=8, help="lookups per second (Poisson)")
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("rtp")
    q.add_argument("--local", required=True)
    q.add_argument("--peer", required=True)
    q.add_argument("--side", choices=["a", "b"], required=True)
    q.add_argument("--duration", type=float, default=20)
    q.add_argument("--calls", type=int, default=3)
    q.add_argument("--video", action="store_true")
    q.add_argument("--base-port", type=int, default=40000)
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("udp-sink")
    q.add_argument("--local", required=True)
    q.add_argument("--port", type=int, default=9000)

    q = sub.add_parser("icmp")
    q.add_argument("--local", required=True)
    q.add_argument("--peer", required=True)
    q.add_argument("--duration", type=float, default=12)
    q.add_argument("--ping-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[56, 120, 1000, 3000])
    q.add_argument("--ping-intervals", type=lambda s: [float(x) for x in s.split(",")],
                   default=[0.1, 0.25, 0.5, 1.0])
    q.add_argument("--large-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[2000, 4000])
    q.add_argument("--large-every", type=float, default=1.0, help="seconds; 0: none")
    q.add_argument("--closed-every", type=float, default=1.5, help="seconds; 0: none")
    q.add_argument("--sink-port", type=int, default=9000)
    q.add_argument("--closed-port", type=int, default=9)
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("tcp-server")
    q.add_argument("--local", required=True)
    q.add_argument("--http-port", type=int, default=80)
    q.add_argument("--echo-port", type=int, default=7)
    q.add_argument("--seed", type=int, default=1)

    q = sub.add_parser("tcp-client")
    q.add_argument("--peer", required=True)
    q.add_argument("--http-port", type=int, default=80)
    q.add_argument("--echo-port", type=int, default=7)
    q.add_argument("--duration", type=float, default=12)
    q.add_argument("--seed", type=int, default=1)

    args = p.parse_args()
    {
        "quic-server": quic_server, "quic-client": quic_client, "dns-server": dns_server,
        "dns-client": dns_client, "rtp": rtp, "udp-sink": udp_sink, "icmp": icmp,
        "tcp-server": tcp_server, "tcp-client": tcp_client,
    }[args.what](args)


if __name__ == "__main__":
    main()
