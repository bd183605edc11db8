#!/usr/bin/env python3
"""Writes fuzz inputs made from the real Linux captures (raw-IP classic pcap).

    python3 fuzz/make_seeds.py            # the small committed seed set, fuzz/seeds/<target>/
    python3 fuzz/make_seeds.py --corpus   # also a larger starting corpus, fuzz/corpus/<target>/

Input formats are described in fuzz/src/lib.rs.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "..", "..", "shared", "captures", "linux")


def packets(name):
    data = open(os.path.join(CAPTURES, name), "rb").read()
    assert data[:4] == b"\xd4\xc3\xb2\xa1" and struct.unpack("<I", data[20:24])[0] == 101
    at, out = 24, []
    while at + 16 <= len(data):
        caplen = struct.unpack("<I", data[at + 8:at + 12])[0]
        at += 16
        out.append(data[at:at + caplen])
        at += caplen
    return out


def cut(p, payload):
    """The packet with its payload cut to `payload` bytes (lengths and checksums then need the
    harness's fix-up bit)."""
    v6 = p[0] >> 4 == 6
    ip_len = 40 if v6 else (p[0] & 15) * 4
    tcp_len = (p[ip_len + 12] >> 4) * 4 if p[9 if not v6 else 6] == 6 else 8
    return p[:ip_len + tcp_len + payload]


def in_v6_tunnel(p):
    """The packet in an IPv6 tunnel (2001:db8:7::1 to 2001:db8:7::2; no checksum to fill)."""
    outer = bytes([0x60, 0, 0, 0]) + struct.pack(">H", len(p)) + bytes([41 if p[0] >> 4 == 6 else 4, 64])
    outer += bytes.fromhex("20010db8000700000000000000000001") + bytes.fromhex("20010db8000700000000000000000002")
    return outer + p


def roundtrip_input(selector, pkts, fix):
    out = bytearray([selector])
    for p in pkts:
        out += struct.pack(">H", len(p) | (0x8000 if fix else 0)) + p
    return bytes(out)


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def main():
    corpus = "--corpus" in sys.argv
    v4 = packets("a_bulk_v4_default.pcap")
    v6 = packets("d_bulk_v6_default.pcap")
    seeds = os.path.join(HERE, "seeds")

    # taroc_roundtrip: real packets, payloads cut to 16 bytes (fix-up bit set), in capture order.
    write(f"{seeds}/taroc_roundtrip", "v4_bulk_start", roundtrip_input(0, [cut(p, 16) for p in v4[:24]], True))
    write(f"{seeds}/taroc_roundtrip", "v6_bulk_start", roundtrip_input(0, [cut(p, 16) for p in v6[:24]], True))
    write(f"{seeds}/taroc_roundtrip", "v4_exact", roundtrip_input(0, [p for p in v4[:40] if len(p) < 100], False))
    # taroc-plus (selector 0xF0; 0xFC with its repairs) on whole small packets in an IPv6 tunnel.
    for selector in [0xF0, 0xFC]:
        write(f"{seeds}/taroc_roundtrip", f"v6_in_v6_exact_{selector:x}",
              roundtrip_input(selector, [in_v6_tunnel(p) for p in v6[:200] if len(p) < 100][:40], False))
    # wire_parse: single real packets, cut to 120 bytes.
    for name, p in [("v4_syn", v4[0]), ("v4_data", v4[3]), ("v4_ack", v4[11]), ("v6_syn", v6[0]), ("v6_ack", v6[11])]:
        write(f"{seeds}/wire_parse", name, p[:120])
    # taroc_decompress: replay every primed frame, then one flipped byte of a compressed one.
    replay = bytes(b for i in range(24) for b in (0x80 | i, 0, 0))
    write(f"{seeds}/taroc_decompress", "replay_primed", replay)
    write(f"{seeds}/taroc_decompress", "flip", replay + bytes([0x80 | 7, 4, 1, 0x10]))
    write(f"{seeds}/taroc_decompress", "raw_v4", bytes([1]) + struct.pack("<H", 60) + v4[11][:60])
    # taroc_plus_decompress: the same, and a damaged frame refused again and again (context
    # requests), then the undamaged frames again.
    write(f"{seeds}/taroc_plus_decompress", "replay_primed", replay)
    write(f"{seeds}/taroc_plus_decompress", "flip", replay + bytes([0x80 | 7, 4, 1, 0x10]))
    write(f"{seeds}/taroc_plus_decompress", "refused_repeatedly",
          replay + bytes([0x80 | 9, 6, 2, 0x55, 0xAA]) * 8 + replay)
    write(f"{seeds}/taroc_plus_decompress", "raw_v4", bytes([1]) + struct.pack("<H", 60) + v4[11][:60])

    # vj_/iphc_roundtrip: the same real packets; IPHC also with its clock ticking (bit 7).
    for target, selectors in [("vj_roundtrip", [0, 4]), ("iphc_roundtrip", [0, 0x80])]:
        for selector in selectors:
            write(f"{seeds}/{target}", f"v4_bulk_start_{selector}", roundtrip_input(selector, [cut(p, 16) for p in v4[:24]], True))
            write(f"{seeds}/{target}", f"v6_bulk_start_{selector}", roundtrip_input(selector, [cut(p, 16) for p in v6[:24]], True))
    # vj_/iphc_decompress: replay the primed frames (36: three flows of 12), then a flipped byte;
    # raw frames of every kind.
    replay = bytes(b for i in range(36) for b in (0x80 | i, 0, 0))
    for target in ["vj_decompress", "iphc_decompress"]:
        write(f"{seeds}/{target}", "replay_primed", replay)
        write(f"{seeds}/{target}", "flip", replay + bytes([0x80 | 9, 4, 1, 0x10]))
        write(f"{seeds}/{target}", "raw_kinds", b"".join(bytes([k]) + struct.pack("<H", 40) + v4[11][:40] for k in range(7)))

    if corpus:
        root = os.path.join(HERE, "corpus")
        for i in range(0, 600, 20):
            write(f"{root}/taroc_roundtrip", f"v4_{i}", roundtrip_input(0, [cut(p, 16) for p in v4[i:i + 30]], True))
            write(f"{root}/taroc_roundtrip", f"v6_{i}", roundtrip_input(0, [cut(p, 16) for p in v6[i:i + 30]], True))
            for target in ["vj_roundtrip", "iphc_roundtrip"]:
                write(f"{root}/{target}", f"v4_{i}", roundtrip_input(0, [cut(p, 16) for p in v4[i:i + 30]], True))
                write(f"{root}/{target}", f"v6_{i}", roundtrip_input(0, [cut(p, 16) for p in v6[i:i + 30]], True))
        for i in range(0, 400, 10):
            write(f"{root}/wire_parse", f"v4_{i}", v4[i][:200])
            write(f"{root}/wire_parse", f"v6_{i}", v6[i][:200])


if __name__ == "__main__":
    main()
