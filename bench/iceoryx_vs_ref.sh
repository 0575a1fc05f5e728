#!/usr/bin/env bash
# pubsubperf's iceoryx binding (classic iceoryx 2.0, Debian's 2.0.3, RouDi)
# beside iceoryx used directly, measured in one run, same machine, same
# pinning (publisher/ping on core 0, subscriber/pong on core 1), reliable
# (publisher WAIT_FOR_CONSUMER, subscriber BLOCK_PRODUCER, queue 256),
# zero copy on both sides (loaned chunks written and read in place).
#
# The reference is bench/iceoryx-ref/iox_ref.c (our own minimal C program
# over iceoryx's C binding, after iceoryx's iceperf; compiled here with cc,
# not part of the workspace): ping/pong and publisher/subscriber
# throughput. RouDi is handled the same way for both: every run of ours
# starts its own RouDi (crates/roudi) and stops and reaps it before it
# returns; for every reference run this script does the same
# (bench/lib/roudi.sh: the same mempools, SIGTERM, wait, and a check that
# nothing is left in /dev/shm or /tmp). So no RouDi may run beforehand
# (iceoryx allows one per host): the script stops at once if one does.
# MODES:
#   block   the reference waiting on a waitset (HAS_DATA state; iceperf
#           itself never waits: it polls) vs --zero-copy --wait block
#   busy    the reference polling iox_sub_take_chunk, as iceperf does, vs
#           --zero-copy --wait busy (our default since 2026-12-02)
# 1. latency p50/p99 (one-way = RTT/2, both CLOCK_MONOTONIC: ours with
#    --clock monotonic) at SIZES; 2. throughput (samples/s received; the
#    reference counts over SECONDS after a 1 s warm-up from its first sample).
# ROUNDS rounds, which tool goes first alternating; each round's figures
# and the median ratio per size and mode against the goals (latency
# ours/ref <= 1.05, throughput ours/ref >= 0.95).
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048576 16777216"] [MODES="block busy"]
#        [KINDS="lat tp"] bench/iceoryx_vs_ref.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048576 16777216}
modes=${MODES:-block busy}
kinds=${KINDS:-lat tp}
. bench/lib/common.sh
export BENCH_SUBJECT=iceoryx # the row name in bench/table.sh's table
. bench/lib/roudi.sh
need iox-roudi iceoryx
[ -f /usr/include/iceoryx/v2.0.3/iceoryx_binding_c/runtime.h ] \
    || { echo "iceoryx C binding headers missing: apt-get install libiceoryx-binding-c-dev" >&2; exit 1; }
roudi_none
ref=$tmp/iox_ref
cc -O2 -Wall -Wextra -I/usr/include/iceoryx/v2.0.3 -o "$ref" bench/iceoryx-ref/iox_ref.c -liceoryx_binding_c

# One reference run with its own RouDi: KIND (lat|tp) SIZE WAIT; prints
# "p50 p99" in us or samples/s ("nan" when it failed).
ref_run() {
    local kind=$1 size=$2 wait=$3 tag=r$RANDOM a=ping b=pong ok=1
    [ "$kind" = tp ] && { a=pub; b=sub; }
    roudi_start
    # Standard error keeps its last lines only: iceoryx's mempool prints a
    # line per loan that finds the pool empty (std::cerr, no setting turns
    # it off), and a stalled run once wrote 21 GB of them.
    "$ref" "$b" "$tag" "$size" "$secs" 1 1 "$wait" > "$tmp/ref_b.txt" 2> >(tail -n 5 > "$tmp/ref_b.err") &
    local peer=$!
    peers+=("$peer")
    "$ref" "$a" "$tag" "$size" "$secs" 1 0 "$wait" > "$tmp/ref_a.txt" 2> >(tail -n 5 > "$tmp/ref_a.err") || ok=0
    wait "$peer" || ok=0
    peers=("${peers[@]/$peer/}")
    roudi_stop
    # A failed pair counts as no figure; its last error lines are shown.
    [ $ok = 1 ] || { : > "$tmp/ref_a.txt"; : > "$tmp/ref_b.txt"; sleep 0.2; cat "$tmp"/ref_?.err >&2; }
    if [ "$kind" = lat ]; then ref_lat "$tmp/ref_a.txt"; else ref_tp "$tmp/ref_b.txt"; fi
}
ours_run() { # KIND SIZE WAIT
    local test=latency extra=(--clock monotonic)
    [ "$1" = tp ] && { test=throughput; extra=(); }
    roudi_none
    if "$bin" "$test" -b iceoryx --zero-copy --wait "$3" --size "$2" --duration "${secs}s" --cpu 0,1 \
        "${extra[@]}" -q --no-save --json "$tmp/o.json" > /dev/null 2> >(tail -n 5 > "$tmp/o.err"); then
        if [ "$1" = lat ]; then ours_lat "$tmp/o.json"; else ours_tp "$tmp/o.json"; fi
    else
        sleep 0.2
        cat "$tmp/o.err" >&2
        [ "$1" = lat ] && echo "nan nan" || echo nan
    fi
}

echo "== iceoryx binding vs iox_ref (C binding, zero copy both sides), reliable, ${secs} s per run, ${rounds} alternating rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for kind in $kinds; do
    case $kind in lat | tp) ;; *) echo "KINDS: $kind is not lat or tp" >&2; exit 2 ;; esac
    for wait in $modes; do
        case $wait in block | busy) ;; *) echo "MODES: $wait is not block or busy" >&2; exit 2 ;; esac
        for size in $sizes; do
            wanted "$kind" "$wait" "$size" iox_ref || continue
            alternate ref_run "$kind" "$size" "$wait" -- ours_run "$kind" "$size" "$wait"
            report "$kind" "$wait" "$size" iox_ref
        done
    done
done
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
