#!/usr/bin/env bash
# The Fast DDS side of bench/soak.sh without pubsubperf: a minimal Fast DDS
# publisher and subscriber of our own (bench/fastdds-soak/soak.cpp, built
# here with g++ against libfastrtps-dev), reliable 64-byte samples at RATE
# (default 10 000/s), publisher on core 0, subscriber on core 1, in two QoS
# variants side by side: `ours` (the QoS the fastdds binding sets for such a
# run: KEEP_ALL, max_samples 5000, pools grown on demand) and `default`
# (Fast DDS's defaults, reliable, KEEP_LAST 1). Watches each process's VmRSS
# every 10 s and prints, per variant, the RSS after the first minute (a
# quarter of the run when shorter) and at the end, the growth, a curve (RSS
# every tenth of the run) and the samples written and received; PASS when
# neither side grew more than 1 MiB, as bench/soak.sh judges. It tells
# whether a growth of `pubsubperf -b fastdds` is Fast DDS's own.
#
# usage: bench/fastdds_soak.sh [SECONDS=3600] [RATE=10000] [VARIANTS="ours default"]
# CURVES=DIR keeps the full curves (CSV per variant). Exit 1 if any fails.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-3600}"
rate="${2:-10000}"
variants="${3:-ours default}"
warm=$(( secs / 4 )); [ "$warm" -gt 60 ] && warm=60; [ "$warm" -lt 5 ] && warm=5
limit_kib=1024
command -v g++ >/dev/null || { echo "g++ missing: apt-get install g++" >&2; exit 1; }
[ -e /usr/include/fastdds/dds/domain/DomainParticipant.hpp ] || { echo "Fast DDS headers missing: apt-get install libfastrtps-dev" >&2; exit 1; }
work=$(mktemp -d)
curves="${CURVES:-$work}"
mkdir -p "$curves"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
prog="$work/fastdds-soak"
g++ -O2 -std=c++17 -o "$prog" bench/fastdds-soak/soak.cpp -lfastrtps -lfastcdr -lpthread

. bench/lib/rss.sh

# soak_variant QOS DOMAIN: one pair and its report lines.
soak_variant() {
  local q=$1 dom=$2 sub pub t0 p0 s0 p1 s1 tenth dp ds
  local -a pcurve=() scurve=()
  FASTDDS_SOAK_DOMAIN=$dom taskset -c 1 "$prog" sub $(( secs + 15 )) "$q" >"$work/sub-$q.out" 2>&1 &
  sub=$!
  sleep 1
  FASTDDS_SOAK_DOMAIN=$dom taskset -c 0 "$prog" pub "$secs" "$rate" "$q" >"$work/pub-$q.out" 2>&1 &
  pub=$!
  echo "$pub $sub" >"$work/$q.pids"
  t0=$(date +%s)
  watch_pair "$pub" "$sub" "$t0" "$secs" "$warm" "$curves/fastdds-soak-$q.csv"
  tenth=$(( secs / 10 ))
  local ok=1
  wait "$pub" || ok=0
  kill "$sub" 2>/dev/null || true; wait "$sub" 2>/dev/null || true
  dp=$(( p1 - p0 )); ds=$(( s1 - s0 ))
  echo "fastdds-soak $q: ${rate}/s reliable for ${secs}s; after ${warm}s RSS publisher ${p0} KiB, subscriber ${s0} KiB"
  echo "fastdds-soak $q: at the end RSS publisher ${p1} KiB, subscriber ${s1} KiB"
  echo "fastdds-soak $q: curve (KiB, every ${tenth}s) publisher ${pcurve[*]:-}; subscriber ${scurve[*]:-}"
  echo "fastdds-soak $q: growth publisher ${dp} KiB, subscriber ${ds} KiB (limit ${limit_kib} KiB)"
  echo "fastdds-soak $q: $(cat "$work/pub-$q.out" | tr '\n' ' ')/ $(grep received "$work/sub-$q.out" || echo 'subscriber ended without its count')"
  if [ "$ok" = 0 ]; then echo "fastdds-soak $q: FAIL, the publisher failed"; return 1; fi
  if [ "$dp" -le "$limit_kib" ] && [ "$ds" -le "$limit_kib" ]; then echo "fastdds-soak $q: PASS"; else echo "fastdds-soak $q: FAIL (RSS grew more than ${limit_kib} KiB)"; return 1; fi
}

echo "fastdds-soak: $(date -u '+%F %T') UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), Fast DDS $(dpkg-query -W -f '${Version}' "libfastrtps2.9:$(dpkg --print-architecture)" 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
dom=77
for q in $variants; do
  soak_variant "$q" "$dom" >"$work/$q.report" 2>&1 &
  pids+=("$!")
  dom=$(( dom + 1 ))
  sleep 2
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
pids=()
for q in $variants; do cat "$work/$q.report"; done
echo "fastdds-soak: ended $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$fail"
