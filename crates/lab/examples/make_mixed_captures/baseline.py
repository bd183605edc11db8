#!/usr/bin/env python3
"""Header bytes per packet of taroc's schemes and of the C ROHC library on the mixed captures
(`captures/mixed/`), whole and per kind of packet; prints the tables of
`docs/results/mixed-traffic.md` as Markdown.

    baseline.py --taroc TAROC --rohc ROHC_BENCH [--out DIR] CAPTURE...

For each capture it runs

    TAROC eval --json --scheme none,iphc,taroc-plus,taroc-plus-u --per-packet DIR/NAME.taroc.csv \\
        --write-frames DIR/NAME.frames.pcap CAPTURE
    ROHC_BENCH --header --per-packet DIR/NAME.rohc.tsv CAPTURE           (U-mode, UDP profile for UDP)
    ROHC_BENCH --header --rtp --per-packet DIR/NAME.rohc-rtp.tsv CAPTURE (U-mode, RTP detection on)

and reads the capture itself (raw IP, classic pcap) to tell each packet's kind. Both tools count
the same header bytes: IP headers (extension headers and an IPv6 fragment header included) and
the TCP or UDP header; an ICMP header and an RTP header are payload. Our frames carry a one-byte
kind, which is in taroc's figures. Packets are matched by their index in the capture.

With `--rtp` the library also compresses the 12-byte RTP header of packets it takes for RTP
(its RTP profile, 0x0001), which the harness counts as payload: on the "RTP basis" those 12 bytes
count as header for every column (original, ROHC without `--rtp`, ROHC with it, taroc), on the
same packets (those the library compressed with its RTP profile).

Uses the standard library only.
"""

import argparse
import collections
import csv
import json
import os
import struct
import subprocess
import sys

SCHEMES = "none,iphc,taroc-plus,taroc-plus-u"
RTP_PORTS = range(40000, 40200)


def packets(path):
    """The IP packets of a classic pcap of link type raw IP (101)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype != 101:
        raise SystemExit(f"{path}: link type {linktype}, not raw IP (101)")
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def frames_of(path):
    """The records of a pcap of `taroc eval --write-frames` for a taroc scheme (LINKTYPE_USER0: a
    direction octet, the kind octet, the frame)."""
    with open(path, "rb") as f:
        data = f.read()
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack("<I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


# taroc-plus's frames for non-TCP packets (docs/taroc-plus-format.md, sections 1 and 8): IR-N
# (0x0A: the packet whole; or, its first octet below 0x10, a replicated IR-N: | form 0000KFM0 |
# IR-N flags | CID | base CID | n | n x (word index, word) | IP-ID (IPv4) | fragment field (F) |
# sequence number (RTP, echo) | timestamp, stride (RTP) | check (2) | checksum (K) |); CO-S (0x10-0x1C but 0x16, a packed IR of a TCP context: CID and two sequence LSBs in
# the kind byte); CO-N (0x1D, a flags octet |C|S S|I I|F|K|D| follows); CO-I (0x1E, CID 0; 0x1F,
# a CID octet follows).
IR_N, NON_TCP_FIRST, NON_TCP_LAST, PACKED_IR = 0x0A, 0x10, 0x1F, 0x16
CO_N, CO_I, CO_I_CID = 0x1D, 0x1E, 0x1F
RTP_MODE = 0x04
ECHO_MODE = 0x02
REPLICA = "replicated IR-N"
FIELDS = ("kind", "cid", "words", "seq", "ipid", "frag", "rtp", "crc", "checksum")


def form_of(k):
    """The form of a non-TCP compressed frame's kind byte."""
    return "CO-N" if k == CO_N else "CO-I" if k in (CO_I, CO_I_CID) else "CO-S"


def is_replica(frame):
    """Whether an IR-N frame (after its kind byte) is a replicated IR-N: its first octet below
    0x10 (a plain IR-N's is an IP version, 4 or 6)."""
    return len(frame) > 0 and frame[0] < 0x10


def ir_n_context(frame):
    """The CID and IR-N flags of an IR-N frame (after its kind byte): in its first length field,
    or a replicated IR-N's second and third octets."""
    if is_replica(frame):
        return frame[2], frame[1]
    at = 4 if frame[0] >> 4 == 6 else 2
    return frame[at + 1], frame[at]


def replica_parts(frame, v4):
    """The bytes of a replicated IR-N's header part by field (`frame` after its kind byte; `v4`
    whether its packet is IPv4): the kind byte, form octet and flags octet; the CID and base CID;
    the count and the changed template words (3 bytes each); the IP-ID (IPv4); the fragment field
    (F); the sequence number (RTP, echo); the timestamp and stride (RTP); the check; the transport
    checksum (K)."""
    form, flags, n = frame[0], frame[1], frame[4]
    parts = dict.fromkeys(FIELDS, 0)
    parts.update(kind=3, cid=2, words=1 + 3 * n, crc=2)
    parts["ipid"] = 2 if v4 else 0
    parts["frag"] = 2 if form & 0x04 else 0
    parts["seq"] = 2 if flags & (RTP_MODE | ECHO_MODE) else 0
    parts["rtp"] = 6 if flags & RTP_MODE else 0
    parts["checksum"] = 2 if form & 0x08 else 0
    return parts


def non_tcp_parts(k, frame, modes):
    """The bytes of a CO-S, CO-I or CO-N frame's header part by field, from its kind byte and
    frame (after the kind byte); `modes` the IR-N flags of the direction's contexts by CID. CO-S:
    the kind byte (CID and sequence LSBs in it) and the check; CO-I: the kind byte, the CID octet,
    the octet (RTP and echo mode: |S S|I I I I I I|, a quarter sequence, three quarters IP-ID;
    else the IP-ID's 8 LSBs, which are the sequence number's), the check; CO-N: the kind byte
    and flags octet, then the fields as the flags say."""
    parts = dict.fromkeys(FIELDS, 0)
    parts["kind"], parts["crc"] = 1, 2
    if k == CO_I or k == CO_I_CID:
        parts["cid"] = 1 if k == CO_I_CID else 0
        cid = frame[0] if k == CO_I_CID else 0
        if modes.get(cid, 0) & (RTP_MODE | ECHO_MODE):
            parts["seq"], parts["ipid"] = 0.25, 0.75
        else:
            parts["ipid"] = 1
    elif k == CO_N:
        flags = frame[0]
        c = 1 if flags & 0x80 else 0
        cid = frame[1] if c else 0
        s, i, f = (flags >> 5) & 3, (flags >> 3) & 3, 2 if flags & 0x04 else 0
        parts.update(kind=2, cid=c, seq=s, ipid=i, frag=f, checksum=2 if flags & 0x02 else 0)
        if modes.get(cid, 0) & RTP_MODE:
            t = frame[1 + c + s + i + f] >> 6
            parts["rtp"] = 1 + (0, 1, 2, 6)[t]
    return parts


def kind_of(p):
    """A packet's kind, e.g. "QUIC short v4", "RTP v6", "IPv4 fragment (first)"."""
    v = p[0] >> 4
    if v == 4:
        fam = "v4"
        hl = (p[0] & 15) * 4
        proto = p[9]
        frag = struct.unpack("!H", p[6:8])[0]
        if frag & 0x3FFF:
            return "IPv4 fragment (first)" if frag & 0x1FFF == 0 else "IPv4 fragment (rest)"
        l4 = p[hl:]
    else:
        fam = "v6"
        proto = p[6]
        l4 = p[40:]
        if proto == 44:
            offset = struct.unpack("!H", l4[2:4])[0] >> 3
            return "IPv6 fragment (first)" if offset == 0 else "IPv6 fragment (rest)"
    if proto == 6:
        return f"TCP {fam}"
    if proto in (1, 58):
        t = l4[0]
        if (proto, t) in ((1, 8), (1, 0), (58, 128), (58, 129)):
            return f"ICMP echo {fam}"
        return f"ICMP error {fam}"
    if proto == 17:
        sport, dport = struct.unpack("!HH", l4[:4])
        ports = (sport, dport)
        payload = l4[8:]
        if 443 in ports:
            return f"QUIC {'long' if payload[0] & 0x80 else 'short'} {fam}"
        if 53 in ports:
            return f"DNS {fam}"
        if sport in RTP_PORTS and dport in RTP_PORTS:
            if sport % 2:
                return f"RTCP {fam}"
            return f"RTP {'video' if sport >= 40100 else 'voice'} {fam}"
        return f"UDP other {fam}"
    return f"IP proto {proto} {fam}"


def rohc_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return r.stdout


def measure(cap, args):
    name = os.path.basename(cap).rsplit(".", 1)[0]
    tcsv = os.path.join(args.out, f"{name}.taroc.csv")
    rtsv = os.path.join(args.out, f"{name}.rohc.tsv")
    rrtsv = os.path.join(args.out, f"{name}.rohc-rtp.tsv")
    frames = os.path.join(args.out, f"{name}.frames.pcap")
    lines = run([args.taroc, "eval", "--json", "--scheme", SCHEMES, "--per-packet", tcsv,
                 "--write-frames", frames, cap])
    evals = {j["scheme"]: j for j in map(json.loads, lines.splitlines())}
    summary = {}
    for flag, tsv in (([], rtsv), (["--rtp"], rrtsv)):
        out = run([args.rohc, "--header"] + flag + ["--per-packet", tsv, cap])
        head, row = out.splitlines()[:2]
        summary["rtp" if flag else "udp"] = dict(zip(head.split("\t"), row.split("\t")))
    pkts = list(packets(cap))
    kinds = [kind_of(p) for p in pkts]
    v4 = [p[0] >> 4 == 4 for p in pkts]
    taroc = collections.defaultdict(dict)
    feedback = collections.Counter()
    plus_rows = []
    with open(tcsv) as f:
        for r in csv.DictReader(f):
            if r["scheme"] == "taroc-plus":
                plus_rows.append(r)
            if r["index"] == "":
                feedback[r["scheme"]] += int(r["link_header_bytes"])
                continue
            taroc[r["scheme"]][int(r["index"])] = r
    # taroc-plus's frames in link order, as the per-packet lines: each packet's kind byte.
    plus_frames = list(frames_of(os.path.join(args.out, f"{name}.frames.taroc-plus.pcap")))
    assert len(plus_frames) == len(plus_rows), (cap, len(plus_frames), len(plus_rows))
    non_tcp = {}
    replicas = set()  # the packets taroc-plus sent as replicated IR-Ns
    modes = ({}, {})  # per direction, the IR-N flags of each CID
    for frame, row in zip(plus_frames, plus_rows):
        k = frame[1]
        if k == IR_N:
            cid, flags = ir_n_context(frame[2:])
            modes[frame[0]][cid] = flags
        is_co = NON_TCP_FIRST <= k <= NON_TCP_LAST and k != PACKED_IR
        assert is_co == (row["kind"] == "PROFILE_NON_TCP"), (cap, row)
        if is_co:
            non_tcp[int(row["index"])] = (form_of(k), non_tcp_parts(k, frame[2:], modes[frame[0]]))
        elif k == IR_N and is_replica(frame[2:]):
            i = int(row["index"])
            replicas.add(i)
            non_tcp[i] = (REPLICA, replica_parts(frame[2:], v4[i]))
    rohc = {"udp": rohc_rows(rtsv), "rtp": rohc_rows(rrtsv)}
    n = len(kinds)
    for key, rows in rohc.items():
        assert len(rows) == n, (cap, key, len(rows), n)
    for s in taroc:
        assert len(taroc[s]) == n, (cap, s, len(taroc[s]), n)
    return dict(name=name, kinds=kinds, evals=evals, summary=summary, taroc=taroc,
                feedback=feedback, rohc=rohc, n=n, non_tcp=non_tcp, replicas=replicas)


def rohc_hdr(row):
    """A packet's ROHC header bytes: its ROHC packet (feedback piggybacked on it included) minus
    its payload."""
    return int(row["rohc_len"]) - int(row["payload"])


def fmt(x, digits=2):
    return f"{x:.{digits}f}"


def extra_of(r, i):
    """Bytes counted as header on the fair basis beyond the harnesses' accounting: the 12-byte
    RTP header of an RTP packet, the 8-byte ICMP header of an ICMP packet."""
    k = r["kinds"][i]
    if k.startswith("RTP "):
        return 12
    if k.startswith("ICMP "):
        return 8
    return 0


def uses_rtp(r):
    return any(k.startswith("RTP ") for k in r["kinds"])


def capture_tables(results):
    print("### Whole captures, as the harnesses count (RTP and ICMP headers are payload)\n")
    print("| capture | packets | original B/pkt | none | iphc | ROHC U | taroc-plus | taroc-plus-u "
          "| taroc-plus / ROHC U | taroc-plus full headers | taroc-plus replicated IR-N | ROHC IR |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in results:
        e, s = r["evals"], r["summary"]["udp"]
        n = r["n"]
        rohc = float(s["avg_rohc_hdr"])
        tp = e["taroc-plus"]["header_bytes_per_packet"]
        # Full headers: IR frames and plain IR-Ns (PROFILE_FULL) and TYPE_IP; a replicated IR-N
        # (kind PROFILE_FULL too) carries its packet's header as changes against another
        # context's and is counted apart.
        replicated = len(r["replicas"])
        full = e["taroc-plus"]["frames_by_kind"].get("PROFILE_FULL", 0) + \
            e["taroc-plus"]["frames_by_kind"].get("TYPE_IP", 0) - replicated
        ir = sum(1 for row in r["rohc"]["udp"] if row["type"] == "IR")
        print(f"| `{r['name']}.pcap` | {n} | {fmt(e['none']['original_header_bytes'] / n)} "
              f"| {fmt(e['none']['header_bytes_per_packet'])} | {fmt(e['iphc']['header_bytes_per_packet'])} "
              f"| {fmt(rohc)} | {fmt(tp)} | {fmt(e['taroc-plus-u']['header_bytes_per_packet'])} "
              f"| {fmt(tp / rohc)} | {full} | {replicated} | {ir} |")
    print()
    print("### Whole captures, fair basis (RTP header 12 B and ICMP header 8 B counted as header "
          "in every column; ROHC with `--rtp` where the capture has RTP)\n")
    print("| capture | packets | RTP | ICMP | original B/pkt | ROHC U, UDP profile | ROHC U `--rtp` "
          "| taroc-plus | taroc-plus-u | taroc-plus / ROHC (RTP profile where RTP) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in results:
        n = r["n"]
        extra = sum(extra_of(r, i) for i in range(n))
        nrtp = sum(1 for k in r["kinds"] if k.startswith("RTP "))
        nicmp = sum(1 for k in r["kinds"] if k.startswith("ICMP "))
        e, s = r["evals"], r["summary"]
        orig = e["none"]["original_header_bytes"] + extra
        udp = int(s["udp"]["rohc_hdr_B"]) + extra
        rtp = int(s["rtp"]["rohc_hdr_B"]) + extra if uses_rtp(r) else None
        tp = e["taroc-plus"]["link_header_bytes"] + extra
        tpu = e["taroc-plus-u"]["link_header_bytes"] + extra
        rohc = rtp if rtp is not None else udp
        print(f"| `{r['name']}.pcap` | {n} | {nrtp} | {nicmp} | {fmt(orig / n)} | {fmt(udp / n)} "
              f"| {fmt(rtp / n) if rtp is not None else '–'} | {fmt(tp / n)} | {fmt(tpu / n)} "
              f"| {fmt(tp / rohc)} |")
    print()
    print("Packets the harness's `--rtp` detection sent to the RTP profile that are not RTP: "
          + ", ".join(f"`{r['name']}` {sum(1 for i in range(r['n']) if r['rohc']['rtp'][i]['profile'] == '1' and not r['kinds'][i].startswith('RTP '))}"
                      for r in results) + ".\n")


def kind_table(results):
    print("### Per kind of packet, fair basis\n")
    print("| capture | kind | packets | original B/pkt | ROHC U | ROHC U `--rtp` | taroc-plus "
          "| taroc-plus / ROHC | taroc-plus full headers (B in each) "
          "| taroc-plus replicated IR-N (B in each, mean) | ROHC IR (B in each, mean) "
          "| taroc-plus compressed: commonest B | ROHC compressed: commonest B |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in results:
        by = collections.defaultdict(list)
        for i, k in enumerate(r["kinds"]):
            by[k].append(i)
        tp_rows = r["taroc"]["taroc-plus"]
        for k in sorted(by):
            idx = by[k]
            cnt = len(idx)
            extra = [extra_of(r, i) for i in idx]
            is_rtp = k.startswith("RTP ")
            orig = sum(int(tp_rows[i]["original_header_bytes"]) + x for i, x in zip(idx, extra))
            udp = sum(rohc_hdr(r["rohc"]["udp"][i]) + x for i, x in zip(idx, extra))
            rtp = sum(rohc_hdr(r["rohc"]["rtp"][i]) + x for i, x in zip(idx, extra))
            tp = sum(int(tp_rows[i]["link_header_bytes"]) + x for i, x in zip(idx, extra))
            reps = [i for i in idx if i in r["replicas"]]
            full = [i for i in idx if tp_rows[i]["kind"] in ("PROFILE_FULL", "TYPE_IP")
                    and i not in r["replicas"]]
            fullset = set(full) | set(reps)
            comp = collections.Counter(int(tp_rows[i]["link_header_bytes"]) + x
                                       for i, x in zip(idx, extra) if i not in fullset)
            key = "rtp" if is_rtp else "udp"
            rohc = rtp if is_rtp else udp
            irs = [i for i in idx if r["rohc"][key][i]["type"] == "IR"]
            rcomp = collections.Counter(rohc_hdr(r["rohc"][key][i]) + x
                                        for i, x in zip(idx, extra)
                                        if r["rohc"][key][i]["type"] != "IR")
            full_b = {int(tp_rows[i]["link_header_bytes"]) + extra_of(r, i) for i in full}
            full_txt = f"{len(full)} ({'/'.join(map(str, sorted(full_b)))})" if full else "0"
            rep_b = sum(int(tp_rows[i]["link_header_bytes"]) + extra_of(r, i) for i in reps)
            rep_txt = f"{len(reps)} ({fmt(rep_b / len(reps), 1)})" if reps else "0"
            ir_b = sum(rohc_hdr(r["rohc"][key][i]) + extra_of(r, i) for i in irs)
            ir_txt = f"{len(irs)} ({fmt(ir_b / len(irs), 1)})" if irs else "0"

            def common(c):
                if not c:
                    return "–"
                size, times = c.most_common(1)[0]
                return f"{size} ({times}x)"

            print(f"| `{r['name']}` | {k} | {cnt} | {fmt(orig / cnt)} | {fmt(udp / cnt)} "
                  f"| {fmt(rtp / cnt) if is_rtp else '–'} | {fmt(tp / cnt)} "
                  f"| {fmt(tp / rohc) if rohc > 0 else '–'} "
                  f"| {full_txt} | {rep_txt} | {ir_txt} | {common(comp)} | {common(rcomp)} |")
    print()


def non_tcp_table(results):
    print("### taroc-plus's compressed frames for non-TCP packets (CO-S, CO-I, CO-N, replicated "
          "IR-N), by field, fair basis\n")
    print("Bytes per frame on average. *kind byte*: CO-S's (which holds the CID and two sequence "
          "LSBs), CO-I's, CO-N's with its flags octet, a replicated IR-N's with its form and flags "
          "octets; *CID*: the CID octet, a replicated IR-N's CID and base CID; *template words*: a "
          "replicated IR-N's count and changed words of the base's template; *sequence* and "
          "*IP-ID*: the LSBs carried (CO-I's octet counts a quarter to the sequence, three "
          "quarters to the IP-ID; a replicated IR-N's fields whole); *RTP*: CO-N's RTP octet and "
          "timestamp field (RTP mode), a replicated IR-N's timestamp and stride; *checksum*: the "
          "transport checksum when carried (flag K); *rest*: header bytes the frame carries in "
          "its payload, as contexts that compress the IP header only leave them: an ICMP header "
          "that is not an echo's, an IPv6 fragment header, an RTP header in a context not in RTP "
          "mode.\n")
    print("| capture | kind | frames | CO-S | CO-I | CO-N | replicated IR-N | kind byte | CID "
          "| template words | sequence | IP-ID | fragment field | RTP | check | checksum | rest "
          "| total |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in results:
        tp_rows = r["taroc"]["taroc-plus"]
        by = collections.defaultdict(list)
        for i in r["non_tcp"]:
            by[r["kinds"][i]].append(i)
        for k in sorted(by):
            idx = by[k]
            cnt = len(idx)
            parts = collections.Counter()
            forms = collections.Counter()
            total = 0
            for i in idx:
                form, p = r["non_tcp"][i]
                forms[form] += 1
                parts.update(p)
                total += int(tp_rows[i]["link_header_bytes"]) + extra_of(r, i)
            rest = total - sum(parts.values())
            cells = [parts[f] for f in FIELDS] + [rest, total]
            print(f"| `{r['name']}` | {k} | {cnt} | {forms['CO-S']} | {forms['CO-I']} | {forms['CO-N']} "
                  f"| {forms[REPLICA]} | "
                  + " | ".join(fmt(c / cnt) for c in cells) + " |")
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--taroc", required=True, help="the taroc binary")
    p.add_argument("--rohc", required=True, help="the harness of the ROHC peer kit, rohc_bench")
    p.add_argument("--out", default="baseline-out", help="folder for the per-packet files")
    p.add_argument("captures", nargs="+")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = [measure(c, args) for c in args.captures]
    capture_tables(results)
    kind_table(results)
    non_tcp_table(results)


if __name__ == "__main__":
    main()
