#!/usr/bin/env bash
# Cross-checks taroc's simulated TCP (scheme NONE) against NS-2's TCP agents on the TAROC draft's
# Appendix B topology: every row of the draft's four tables (384 kbit/s Tahoe, 114 kbit/s Sack,
# 64 kbit/s Reno, 9.6 kbit/s Sack; nine BERs, the draft's MTUs), several seeds each, in NS-2
# (scripts/ns2/appendix-b.tcl) and in ours (`taroc reproduce --schemes none --json`). Prints
# one line per row: mean goodput (bytes/s) in NS-2, ours, ours/NS-2, and the draft's NONE.
# Then, unless --no-timing, times one 1000-s cell (384 kbit/s, BER 1e-7, MTU 576, Tahoe) in both
# (hyperfine if installed, else repeated runs under bash's `time`).
#
# Installs nothing: needs NS-2's `ns` (Debian package ns2), cargo and python3.
#
# usage: scripts/ns2-crosscheck.sh [--seeds N] [--duration SECONDS] [--ns2-set NAME=VALUE]...
#                                  [--no-timing]
# --ns2-set sets a variable of NS-2's TCP agent after the script's own (e.g. rfc2988_=false).
set -euo pipefail
cd "$(dirname "$0")/.."

seeds=10
duration=1000
timing=1
ns2_set=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --ns2-set) ns2_set+=("$2"); shift 2 ;;
    --no-timing) timing=0; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v ns >/dev/null 2>&1 || {
  echo "ns (NS-2) not found: install Debian's ns2 package (apt-get install ns2)" >&2
  exit 1
}
command -v python3 >/dev/null 2>&1 || { echo "python3 not found" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release -q -p taroc-cli
taroc="$CARGO_TARGET_DIR/release/taroc"
tcl=scripts/ns2/appendix-b.tcl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Ours: one JSON line per row of the draft's tables, scheme none (per-seed goodputs included).
"$taroc" reproduce --schemes none --seeds "$seeds" --duration "$duration" --json \
  --no-png --out "$work/ours" >"$work/ours.jsonl"

# NS-2: the same rows and seeds, two runs at a time.
python3 - "$work/ours.jsonl" "$seeds" "$duration" ${ns2_set[@]+"${ns2_set[@]}"} >"$work/ns2-jobs" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    for seed in range(1, int(sys.argv[2]) + 1):
        print(c["bandwidth_kbps"], c["ber"], c["mtu"], c["tcp"], seed, sys.argv[3], *sys.argv[4:])
PY
xargs -P 2 -L 1 sh -c 'r=$(ns '"$tcl"' "$0" "$@") && echo "$0 $1 $2 $3 $4 $r"' \
  <"$work/ns2-jobs" >"$work/ns2.txt"

python3 - "$work/ours.jsonl" "$work/ns2.txt" <<'PY'
import json, sys
ns2 = {}
for line in open(sys.argv[2]):
    f = line.split()
    key = (float(f[0]), float(f[1]), f[3])
    ns2.setdefault(key, []).append(float(f[5].split("=")[1]))
print(f"{'kbit/s':>6} {'TCP':>5} {'BER':>6} {'MTU':>4} {'ns-2':>9} {'ours':>9} {'ours/ns-2':>9} {'draft':>7}")
for line in open(sys.argv[1]):
    c = json.loads(line)
    runs = ns2.get((c["bandwidth_kbps"], c["ber"], c["tcp"]), [])
    theirs = sum(runs) / len(runs) if runs else float("nan")
    ours = c["goodput_bytes_per_s"]
    ratio = ours / theirs if theirs > 0 else float("nan")
    print(f"{c['bandwidth_kbps']:>6g} {c['tcp']:>5} {c['ber']:>6.0e} {c['mtu']:>4} "
          f"{theirs:>9.1f} {ours:>9.1f} {ratio:>9.3f} {c['draft_bytes_per_s']:>7g}")
PY
echo "($seeds seeds x $duration s per row in each simulator${ns2_set[*]+; ns-2 also ${ns2_set[*]}})"

[ "$timing" = 1 ] || exit 0
echo
echo "Wall time of one 1000-s cell: 384 kbit/s, BER 1e-7, MTU 576, Tahoe, scheme NONE"
ns_cmd="ns $tcl 384 1e-7 576 tahoe 1 1000"
ours_cmd="$taroc sim --scheme none --bandwidth-kbps 384 --ber 1e-7 --mtu 576 --tcp tahoe --duration 1000 --seed 1"
if command -v hyperfine >/dev/null 2>&1; then
  hyperfine -N --warmup 2 --runs 20 -n ns-2 "$ns_cmd" -n ours "$ours_cmd"
else
  for name in ns-2 ours; do
    cmd=$ns_cmd; [ "$name" = ours ] && cmd=$ours_cmd
    echo "$name, 10 runs:"
    time (for _ in 1 2 3 4 5 6 7 8 9 10; do $cmd >/dev/null; done)
  done
fi
