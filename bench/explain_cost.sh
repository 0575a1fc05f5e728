#!/usr/bin/env bash
# The cost of looking (issue 67 item 4): the same latency cell without and
# with --explain, in alternating rounds (without first in odd rounds),
# sides pinned to cores 0 and 1; the median ratio with/without of p50 and
# p99 and its 95 % interval (bench/lib/ratios.py) against the goal (<= 1.05:
# the probes add under 5 % to the p50). Needs root (the probes).
#
# TEST=throughput measures samples/s of a throughput run with
# --latency-every 100 (whose echoes --explain accounts for) instead (goal
# >= 0.95).
#
# usage: [ROUNDS=5] [SIZE=64] [TEST=latency|throughput] bench/explain_cost.sh [BINDING] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
binding=${1:-udp}
secs=${2:-3}
rounds=${ROUNDS:-5}
size=${SIZE:-64}
test_kind=${TEST:-latency}
. bench/lib/common.sh
export BENCH_SUBJECT=explain
[ "$(id -u)" = 0 ] || { echo "bench/explain_cost.sh: --explain loads the kernel's probes: run as root" >&2; exit 2; }

cell() { # EXTRA_FLAGS...
    local extra=()
    [ "$test_kind" = throughput ] && extra=(--latency-every 100)
    if "$bin" "$test_kind" -b "$binding" --size "$size" --duration "${secs}s" --cpu 0,1 "${extra[@]}" "$@" \
        -q --no-save --json "$tmp/o.json" > /dev/null; then
        if [ "$test_kind" = throughput ]; then ours_tp "$tmp/o.json"; else ours_lat "$tmp/o.json"; fi
    elif [ "$test_kind" = throughput ]; then
        echo nan
    else
        echo nan nan
    fi
}
plain() { cell; }
explained() { cell --explain; }

kind=lat
[ "$test_kind" = throughput ] && kind=tp
echo "== $binding $test_kind at ${size} B, ${secs} s per run, with --explain / without, ${rounds} alternating rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
wanted "$kind" "$binding" "$size" without-explain || exit 0
alternate plain -- explained
report "$kind" "$binding" "$size" without-explain
