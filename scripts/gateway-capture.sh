#!/usr/bin/env bash
# One kernel-TCP transfer through `taroc gateway` between two fresh network namespaces, captured
# on both TUN devices (what each side's compressor was offered, and what each decompressor
# delivered): the input of `cargo run --release -p taroc-cli --example loss_pairs`.
#
# usage (root): scripts/gateway-capture.sh OUTDIR [--scheme S] [--timestamps 0|1] [--seed N]
#               [--bytes SIZE] [--rate KBPS] [--ber BER] [--mtu BYTES]
# Writes OUTDIR/left.pcap (sender side, 10.9.0.1), OUTDIR/right.pcap (receiver side, 10.9.0.2)
# and OUTDIR/gateway.log (the gateway's counters). Needs dumpcap (Debian: wireshark-common / tshark).
set -euo pipefail
out=${1:?usage: gateway-capture.sh OUTDIR [options]}
shift
scheme=taroc ts=1 seed=1 bytes=2M rate=384 ber=1e-5 mtu=296
while (($#)); do
    case $1 in
    --scheme) scheme=$2 ;;
    --timestamps) ts=$2 ;;
    --seed) seed=$2 ;;
    --bytes) bytes=$2 ;;
    --rate) rate=$2 ;;
    --ber) ber=$2 ;;
    --mtu) mtu=$2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
taroc=${TAROC:-$(dirname "$0")/../target/release/taroc}
[[ -x $taroc ]] || { echo "build first: cargo build --release -p taroc-cli (or set TAROC)" >&2; exit 1; }
mkdir -p "$out"
left=tcl$$ right=tcr$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$left" 2>/dev/null || true
    ip netns del "$right" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$left"
ip netns add "$right"
for ns in "$left" "$right"; do ip netns exec "$ns" sysctl -q net.ipv4.tcp_timestamps="$ts"; done
"$taroc" gateway --tun-a tc0 --netns-a "$left" --tun-b tc0 --netns-b "$right" --scheme "$scheme" \
    --rate "$rate" --delay 100 --queue 6 --ber "$ber" --mtu "$mtu" --seed "$seed" \
    >"$out/gateway.log" 2>&1 &
gateway=$!
for _ in $(seq 50); do ip -n "$right" link show tc0 >/dev/null 2>&1 && break; sleep 0.1; done
ip -n "$left" address add 10.9.0.1/24 dev tc0
ip -n "$right" address add 10.9.0.2/24 dev tc0
ip -n "$left" link set tc0 up
ip -n "$right" link set tc0 up
ip netns exec "$left" dumpcap -q -P -i tc0 -w "$out/left.pcap" >/dev/null 2>&1 &
pids+=($!)
ip netns exec "$right" dumpcap -q -P -i tc0 -w "$out/right.pcap" >/dev/null 2>&1 &
pids+=($!)
sleep 1
"$taroc" gateway transfer --netns "$right" --receive 10.9.0.2:5201 --bytes "$bytes" &
receiver=$!
sleep 0.5
"$taroc" gateway transfer --netns "$left" --send 10.9.0.2:5201 --bytes "$bytes"
wait "$receiver"
sleep 1
kill -INT "$gateway"
wait "$gateway" || true
grep -E "context damage|incorrect delivered|link bit error" "$out/gateway.log"
