#!/usr/bin/env bash
# pubsubperf's iceoryx2 binding beside iceoryx2 used directly, measured in
# one run, same machine, same pinning (publisher/ping on core 0,
# subscriber/pong on core 1), reliable (a blocking publisher, no safe
# overflow: nothing is lost):
#
# The reference is bench/iceoryx2-pingpong (our own minimal program, built
# here; not part of the workspace): iceoryx2 the way its own
# publish-subscribe benchmark uses it (loan a [u8] slice, write it in
# place, send; busy-poll receive), with the same service settings on both
# sides (subscriber buffer 256: ours gets --receive-queue 256, since its
# default buffer is 32 MiB worth of samples, 2 at 16 MiB, to bound the
# shared memory; one publisher, one subscriber), plus a
# throughput test (publisher loaning and sending as fast as the
# subscriber keeps up; the subscriber counts over a window after a
# warm-up) and a blocking wait (an event service beside each topic:
# notify after send, Listener::timed_wait), which iceoryx2's benchmark
# does not have. In each MODE, both sides are set the same way:
#   zc-busy    reference default (zero copy, busy polling)  vs --zero-copy --wait busy
#   zc-block   zero copy, event waits                        vs --zero-copy --wait block
#   copy-busy  reference --copy (all bytes copied in, out)   vs --zero-copy false --wait busy
# 1. latency p50/p99 at SIZES (one-way = RTT/2; both time round trips with
#    CLOCK_MONOTONIC: ours --clock monotonic);
# 2. throughput at SIZES, samples/s received.
# ROUNDS rounds, which tool goes first alternating; each round's figures
# and ratios, and the median ratio per size and mode against the goals
# (latency ours/ref <= 1.05, throughput ours/ref >= 0.95), then the same
# over the rounds in which both tools ran on the same link between the two
# cores (read before and after each run: bench/lib/common.sh says why).
# The reference prints its own percentiles (p50_ns, p99_ns) and rate
# (per_s); ours are read from the results file.
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048576 16777216"]
#        [MODES="zc-busy zc-block copy-busy"] [KINDS="latency throughput"]
#        bench/iceoryx2_vs_ref.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048576 16777216}
modes=${MODES:-zc-busy zc-block copy-busy}
kinds=${KINDS:-latency throughput}
. bench/lib/common.sh
export BENCH_SUBJECT=iceoryx2 # the row name in bench/table.sh's table
pp=$(build_ref iceoryx2-pingpong)

# Reference and our flags of MODE.
mode_flags() {
    case $1 in
        zc-busy) ref=(--wait busy); ours=(--zero-copy --wait busy) ;;
        zc-block) ref=(--wait block); ours=(--zero-copy --wait block) ;;
        copy-busy) ref=(--copy --wait busy); ours=(--zero-copy false --wait busy) ;;
        *) echo "MODES: $1 is not one of zc-busy zc-block copy-busy" >&2; exit 2 ;;
    esac
}
ref_run() { # KIND SIZE
    "$pp" --test "$1" --size "$2" --duration "$secs" --cpu 0,1 "${ref[@]}" > "$tmp/ref.txt" || true
    if [ "$1" = latency ]; then ref_lat "$tmp/ref.txt"; else ref_tp "$tmp/ref.txt"; fi
}
ours_run() { # KIND SIZE -> our figures, "nan" when the run failed
    if "$bin" "$1" -b iceoryx2 --size "$2" --duration "${secs}s" --cpu 0,1 "${ours[@]}" --receive-queue 256 \
        $([ "$1" = latency ] && echo --clock monotonic) -q --no-save --json "$tmp/o.json" > /dev/null; then
        if [ "$1" = latency ]; then ours_lat "$tmp/o.json"; else ours_tp "$tmp/o.json"; fi
    else
        [ "$1" = latency ] && echo "nan nan" || echo nan
    fi
}

for kind in $kinds; do
    echo "== ${kind}, ${secs} s per run, ${rounds} alternating rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    for mode in $modes; do
        mode_flags "$mode"
        for size in $sizes; do
            wanted "$([ $kind = latency ] && echo lat || echo tp)" "$mode" "$size" iceoryx2-pingpong || continue
            alternate ref_run "$kind" "$size" -- ours_run "$kind" "$size"
            report "$([ $kind = latency ] && echo lat || echo tp)" "$mode" "$size" iceoryx2-pingpong
        done
    done
done
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
