#!/usr/bin/env bash
# The harness's own cost as subscribers and topics are added (issue 47
# item 5): `pubsubperf throughput -b intra` beside the floor under it,
# crates/harness/examples/harness_floor.rs (our own minimal loop over the
# same binding: a writer thread per topic writing as fast as the binding
# takes, a reader thread per subscriber counting, nothing else: no control
# channel, no sequence books, no intervals), in one run, same pinning
# (writers on core 0, readers on core 1), same binding settings (intra's
# defaults: reliable, 64-slot rings, --wait as WAIT says). Both figures
# are samples received per second, all subscribers together.
#
# Cells: SUBSCRIBERS (default "1 8 64") with one topic, then TOPICS
# (default "2 8") with one subscriber each. ROUNDS alternating rounds (the
# floor first in odd rounds), the median ratio harness/floor per cell
# against the goal (>= 0.95: the harness adds under 5 %), and its 95 %
# interval (bench/lib/ratios.py).
#
# The mock binding's clock is virtual (its rates are in virtual time): it
# is compared by CPU per sample, counted (below), as intra is too.
#
# usage: [ROUNDS=5] [SIZE=64] [WAIT=block] [SUBSCRIBERS="1 8 64"]
#        [TOPICS="2 8"] [CPU_BINDINGS="mock intra"] bench/harness_cost.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
rounds=${ROUNDS:-5}
size=${SIZE:-64}
wait_mode=${WAIT:-block}
subscribers=${SUBSCRIBERS:-1 8 64}
topics=${TOPICS:-2 8}
. bench/lib/common.sh
export BENCH_SUBJECT=harness
cargo build --release -q -p pubsubperf-harness --example harness_floor >&2
floor=${CARGO_TARGET_DIR:-target}/release/examples/harness_floor

floor_run() { # SUBS TOPICS
    "$floor" --binding intra --subscribers "$1" --topics "$2" --size "$size" \
        --duration "$secs" --warmup 1 --wait "$wait_mode" --cpu 0,1 > "$tmp/floor.txt" || true
    ref_tp "$tmp/floor.txt"
}
ours_run() { # SUBS TOPICS
    if "$bin" throughput -b intra --subscribers "$1" --topics "$2" --size "$size" \
        --duration "${secs}s" --warmup 1s --wait "$wait_mode" --cpu 0,1 \
        -q --no-save --json "$tmp/o.json" > /dev/null; then
        ours_tp "$tmp/o.json"
    else
        echo nan
    fi
}

echo "== intra throughput at ${size} B, ${secs} s per run, wait ${wait_mode}, ${rounds} alternating rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for n in $subscribers; do
    wanted tp "subs-$n" "$size" harness_floor || continue
    alternate floor_run "$n" 1 -- ours_run "$n" 1
    report tp "subs-$n" "$size" harness_floor
done
for t in $topics; do
    wanted tp "topics-$t" "$size" harness_floor || continue
    alternate floor_run 1 "$t" -- ours_run 1 "$t"
    report tp "topics-$t" "$size" harness_floor
done

# CPU per sample, counted (the mock's clock is virtual, so its rates mean
# nothing in real time; and counts do not swing with the VM as rates do):
# each side runs SHORT and LONG counts of samples under `perf stat -e
# task-clock` (one process: the mock's and intra's subscribers are threads
# of it), and the figure is the samples delivered per CPU-second of the
# difference, which cancels set-up and teardown. The ratio harness/floor
# >= 0.95: the harness spends under about 5 % more CPU per sample.
cpu_ms() { # CMD... -> CPU ms of its whole process
    perf stat -x, -e task-clock -o "$tmp/perf.csv" -- "$@" > /dev/null 2>&1 || { echo nan; return; }
    awk -F, '$3 == "task-clock" { print $1 }' "$tmp/perf.csv"
}
per_cpu_s() { # WHO BINDING SUBS -> samples delivered per CPU-second, LONG minus SHORT
    local who=$1 b=$2 n=$3 short=$(( 400000 / $3 )) long=$(( 2000000 / $3 )) a z
    for c in $short $long; do
        if [ "$who" = floor ]; then
            z=$(cpu_ms "$floor" --binding "$b" --subscribers "$n" --count "$c" --warmup 0 --wait "$wait_mode" --cpu 0,1)
        else
            z=$(cpu_ms "$bin" throughput -b "$b" --subscribers "$n" -n "$c" --size "$size" --warmup 0s --wait "$wait_mode" --cpu 0,1 -q --no-save)
        fi
        [ "$c" = "$short" ] && a=$z
    done
    python3 -c 'import sys; a, z, s, l, n = map(float, sys.argv[1:]); d = (z - a) / 1000; print("nan" if d <= 0 else round((l - s) * n / d))' "$a" "$z" "$short" "$long" "$n"
}
if command -v perf > /dev/null; then
    for b in ${CPU_BINDINGS:-mock intra}; do
        echo "== ${b}: samples delivered per CPU-second (perf stat task-clock, $(( 2000000 )) minus $(( 400000 )) deliveries), ${rounds} alternating rounds"
        for n in $subscribers; do
            wanted tp "cpu-$b-subs-$n" "$size" harness_floor || continue
            alternate per_cpu_s floor "$b" "$n" -- per_cpu_s ours "$b" "$n"
            report tp "cpu-$b-subs-$n" "$size" harness_floor
        done
    done
else
    echo "perf not found (Debian: linux-perf): the CPU-per-sample cells are not measured" >&2
    exit 1
fi
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
