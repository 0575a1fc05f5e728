#!/usr/bin/env bash
# The cyclonedds side of bench/soak.sh without pubsubperf: CycloneDDS's own
# ddsperf (Debian's cyclonedds-tools) publishing reliable 64-byte samples
# at RATE (default 10 000/s, `ddsperf pub RHz size 64`) to `ddsperf sub`
# (its default listener mode), publisher on core 0, subscriber on core 1,
# in a domain of its own. Watches each process's VmRSS every 10 s and
# prints the RSS after the first minute (a quarter of the run when
# shorter) and at the end, the growth, and a curve (RSS every tenth of the
# run); PASS when neither side grew more than 1 MiB, as bench/soak.sh
# judges. Run beside `bench/soak.sh SECONDS RATE cyclonedds`, it tells
# whether a growth of `pubsubperf -b cyclonedds` is CycloneDDS's own.
#
# usage: bench/cyclonedds_soak.sh [SECONDS=3600] [RATE=10000]
# CURVES=DIR keeps the full curve (CSV). Exit 1 on FAIL.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-3600}"
rate="${2:-10000}"
warm=$(( secs / 4 )); [ "$warm" -gt 60 ] && warm=60; [ "$warm" -lt 5 ] && warm=5
limit_kib=1024
command -v ddsperf >/dev/null || { echo "ddsperf missing: apt-get install cyclonedds-tools" >&2; exit 1; }
work=$(mktemp -d)
curves="${CURVES:-$work}"
mkdir -p "$curves"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
. bench/lib/rss.sh

dom=${DOMAIN:-93}
echo "cyclonedds-soak: $(date -u '+%F %T') UTC, ddsperf $(dpkg-query -W -f '${Version}' cyclonedds-tools 2>/dev/null || echo '?'), domain $dom, load $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 1 ddsperf -i "$dom" -D $(( secs + 15 )) sub >"$work/sub.out" 2>&1 &
sub=$!; pids+=("$sub")
sleep 1
taskset -c 0 ddsperf -i "$dom" -D "$secs" pub "${rate}Hz" size 64 >"$work/pub.out" 2>&1 &
pub=$!; pids+=("$pub")
t0=$(date +%s)
watch_pair "$pub" "$sub" "$t0" "$secs" "$warm" "$curves/cyclonedds-soak.csv"
tenth=$(( secs / 10 ))
dp=$(( p1 - p0 )); ds=$(( s1 - s0 ))
echo "cyclonedds-soak: ddsperf ${rate}/s reliable for ${secs}s; after ${warm}s RSS publisher ${p0} KiB, subscriber ${s0} KiB"
echo "cyclonedds-soak: at the end RSS publisher ${p1} KiB, subscriber ${s1} KiB"
echo "cyclonedds-soak: curve (KiB, every ${tenth}s) publisher ${pcurve[*]:-}; subscriber ${scurve[*]:-}"
echo "cyclonedds-soak: growth publisher ${dp} KiB, subscriber ${ds} KiB (limit ${limit_kib} KiB)"
echo "cyclonedds-soak: subscriber's last lines: $(tail -2 "$work/sub.out" | tr '\n' ' ')"
echo "cyclonedds-soak: ended $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$dp" -le "$limit_kib" ] && [ "$ds" -le "$limit_kib" ]; then echo "cyclonedds-soak: PASS"; else echo "cyclonedds-soak: FAIL (RSS grew more than ${limit_kib} KiB)"; exit 1; fi
