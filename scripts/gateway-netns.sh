#!/usr/bin/env bash
# The gateway harness as a script: for each scheme, IP version and link setting, two fresh
# network namespaces with `taroc gateway` between them (one TUN device in each, an emulated
# link in the middle), and a kernel TCP transfer from one to the other with
# `taroc gateway transfer` (a seeded byte stream the receiver checks byte for byte). Checks
# that the whole stream arrived unchanged, and that the gateway's oracle counted no incorrect
# delivery (VJ on a lossy link excepted: RFC 1144 cannot tell, the receiving TCP's checksum
# rejects them; the count is printed). With iperf3 installed, IPERF=1 adds an iperf3 run per
# setting as a throughput report (iperf3 stops counting at its test end, so its byte counts are
# not compared).
#
# The Rust integration test (crates/lab/tests/netns.rs) does the same in-process; this
# script drives the real CLI as separate processes, and the gateway's SIGINT handling.
#
# Usage (as root): scripts/gateway-netns.sh
# Environment: TAROC (the taroc binary, default target/debug/taroc), SCHEMES (default: every
# scheme), IPS ("4 6"), BERS ("0 1e-5"), BYTES (default 2M), RATE (kbit/s, 8000), DELAY (ms, 2),
# MTU (1280), IPERF (0).
# Needs: iproute2 (and iperf3 for IPERF=1). Cleans up its namespaces and processes on exit,
# error or signal; names are unique per run (taroc-sh-<pid>-<n>), so runs can go in parallel.
set -euo pipefail

TAROC=${TAROC:-target/debug/taroc}
SCHEMES=${SCHEMES:-none vj iphc-twice iphc taroc}
IPS=${IPS:-4 6}
BERS=${BERS:-0 1e-5}
BYTES=${BYTES:-2M}
RATE=${RATE:-8000}
DELAY=${DELAY:-2}
MTU=${MTU:-1280}
IPERF=${IPERF:-0}

die() { echo "gateway-netns: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, TUN)"
[ -x "$TAROC" ] || die "no taroc binary at $TAROC (cargo build -p taroc-cli, or set TAROC)"
[ "$IPERF" = 0 ] || command -v iperf3 >/dev/null || die "IPERF=1 needs iperf3 (apt-get install -y iperf3)"
command -v ip >/dev/null || die "needs iproute2 (apt-get install -y iproute2)"

work=$(mktemp -d)
gateway_pid=
server_pid=
namespaces=()
run=0

stop_pid() { # pid: SIGTERM, wait up to 5 s, then SIGKILL
  local pid=$1
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  stop_pid "$server_pid"; server_pid=
  stop_pid "$gateway_pid"; gateway_pid=
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  namespaces=()
}
trap 'cleanup; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Field $2 (a number) of the one-line JSON object in file $1.
field() { grep -o "\"$2\":[0-9.e+-]*" "$1" | head -1 | cut -d: -f2; }
# The sum of every "incorrect_delivered" in the gateway's JSON line.
incorrect() { grep -o '"incorrect_delivered":[0-9]*' "$1" | awk -F: '{ s += $2 } END { print s + 0 }'; }

failures=0
for ipv in $IPS; do
  for ber in $BERS; do
    for scheme in $SCHEMES; do
      run=$((run + 1))
      a="taroc-sh-$$-${run}a" b="taroc-sh-$$-${run}b"
      namespaces=("$a" "$b")
      ip netns add "$a"; ip netns add "$b"
      ip -n "$a" link set lo up; ip -n "$b" link set lo up
      "$TAROC" gateway --tun-a tc0 --netns-a "$a" --tun-b tc0 --netns-b "$b" \
        --scheme "$scheme" --rate "$RATE" --delay "$DELAY" --queue 100 --ber "$ber" \
        --mtu "$MTU" --seed "$run" --stats-interval 0 --duration 300 --json \
        >"$work/gateway.json" 2>"$work/gateway.log" &
      gateway_pid=$!
      for _ in $(seq 100); do
        ip -n "$a" link show tc0 >/dev/null 2>&1 && ip -n "$b" link show tc0 >/dev/null 2>&1 && break
        kill -0 "$gateway_pid" 2>/dev/null || { cat "$work/gateway.log" >&2; die "the gateway did not start"; }
        sleep 0.05
      done
      if [ "$ipv" = 6 ]; then
        addr_a=fd00:7b::1 addr_b=fd00:7b::2
        ip -n "$a" address add $addr_a/64 dev tc0 nodad; ip -n "$b" address add $addr_b/64 dev tc0 nodad
      else
        addr_a=10.202.0.1 addr_b=10.202.0.2
        ip -n "$a" address add $addr_a/24 dev tc0; ip -n "$b" address add $addr_b/24 dev tc0
      fi
      [ "$ipv" = 6 ] && target="[$addr_b]:5201" || target="$addr_b:5201"
      "$TAROC" gateway transfer --netns "$b" --receive "$target" --bytes "$BYTES" --seed "$run" \
        --time-limit 120 >"$work/receive.json" 2>"$work/receive.log" &
      server_pid=$!
      for _ in $(seq 100); do
        grep -q listening "$work/receive.log" 2>/dev/null && break
        sleep 0.05
      done
      status=ok
      "$TAROC" gateway transfer --netns "$a" --send "$target" --bytes "$BYTES" --seed "$run" \
        --time-limit 120 >"$work/send.json" 2>>"$work/receive.log" || status="sender failed"
      wait "$server_pid" || status="receiver: $(tail -1 "$work/receive.log")"
      server_pid=
      if [ "$IPERF" != 0 ]; then
        ip netns exec "$b" iperf3 -s -1 -B "$addr_b" >/dev/null 2>&1 &
        server_pid=$!
        sleep 0.3
        ip netns exec "$a" timeout 60 iperf3 -c "$addr_b" -n "$BYTES" -f k 2>&1 | grep -E "sender|receiver" | sed 's/^/  iperf3: /' || true
        stop_pid "$server_pid"; server_pid=
      fi
      kill -INT "$gateway_pid"  # the gateway prints its counters and exits on SIGINT
      for _ in $(seq 100); do kill -0 "$gateway_pid" 2>/dev/null || break; sleep 0.05; done
      wait "$gateway_pid" || status="gateway exited with an error"
      gateway_pid=
      sent=$(field "$work/send.json" bytes_sent)
      received=$(field "$work/receive.json" bytes_received)
      seconds=$(field "$work/receive.json" elapsed_s)
      wrong=$(incorrect "$work/gateway.json")
      if [ "$status" = ok ] && [ "${sent:-0}" != "${received:-x}" ]; then
        status="bytes sent $sent, received $received"
      fi
      if [ "$status" = ok ] && [ "$wrong" != 0 ] && ! [ "$scheme" = vj -a "$ber" != 0 ]; then
        status="$wrong incorrect deliveries"
      fi
      printf 'IPv%s BER %-5s %-10s sent %9s received %9s in %6.2f s, incorrect %4s  %s\n' \
        "$ipv" "$ber" "$scheme" "${sent:-?}" "${received:-?}" "${seconds:-0}" "$wrong" "$status"
      if [ "$status" != ok ]; then
        failures=$((failures + 1))
        { grep 'incorrect delivery' "$work/gateway.log" | head -3; tail -3 "$work/gateway.log"; } |
          sed 's/^/  gateway: /' >&2
      fi
      cleanup
    done
  done
done
[ "$failures" = 0 ] || die "$failures run(s) failed"
echo "gateway-netns: all $run runs passed"
