#!/bin/bash
# The WLAN settings sweep of docs/lowloss-interpretations.md: mean goodput (kbit/s, 3 seeds of
# 500 s, BER 2e-7) of none, iphc-plain, ideal-5 and iphc-twice for one setting of the topology's
# open parameters, through `taroc sim --scenario`.
# Usage: scripts/lowloss-sweep.sh TCP WINDOW_SEGMENTS ROUTER_QUEUE MIN_RTO_MS [WIRED_DELAY_MS [BER]]
# e.g.   scripts/lowloss-sweep.sh reno 128 50 1000 107
set -euo pipefail
tcp=$1; win=$2; queue=$3; rto=$4; wired=${5:-107}; ber=${6:-2e-7}
taroc=${TAROC:-target/release/taroc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for scheme in none iphc-plain ideal-5 iphc-twice; do
  total=0
  for seed in 1 2 3; do
    cat > "$dir/s.toml" <<EOT
wireless_bps = 2000000
wireless_delay_ms = 1
wired_bps = 10000000
wired_delay_ms = $wired
router_queue = $queue
host_queue = 200
mtu = 612
scheme = "$scheme"
tcp = "$tcp"
max_window_segments = $win
ipv6 = true
tunnel = true
iphc_twice = true
duration_s = 500.0
seed = $seed
min_rto_ms = $rto
rto_backoff = "rfc6298"
[errors]
kind = "ber"
ber = $ber
EOT
    g=$("$taroc" sim --scenario "$dir/s.toml" | awk '/^goodput/{print $2}')
    total=$(echo "$total + $g" | bc -l)
  done
  printf "%s %.0f  " "$scheme" "$(echo "$total / 3 * 8 / 1000" | bc -l)"
done
echo " <- $*"
