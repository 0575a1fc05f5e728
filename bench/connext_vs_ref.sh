#!/usr/bin/env bash
# pubsubperf's connext binding (RTI Connext 6.1.2 through RTI Connector's
# libraries) beside a minimal C program of ours on the same native path,
# measured in one run, same machine, same pinning (publisher/ping on core 0,
# subscriber/pong on core 1).
#
# The reference is bench/connext-ref/connext_ref.c (compiled here with cc
# against the libraries scripts/setup.sh --with-connext installed, or
# PUBSUBPERF_CONNEXT_LIB's; not part of the workspace): Connector creates
# the endpoints, Connext's public C API writes DynamicData samples and takes
# them. It runs the very XML applications the binding gave Connector for
# the same test (PUBSUBPERF_CONNEXT_XML_DIR, written by one unmeasured run
# of ours per cell), so both sides run Connext with the same QoS,
# transports and discovery; what differs is the code around Connext's
# calls.
# MODES:
#   listener  Connext's receive thread takes each sample in
#             on_data_available (and ping and pong write the next sample
#             there), vs --receive listener (the binding's default, as
#             Perftest's)
#   waitset   the program's thread waits in a DDS_WaitSet and takes, vs
#             --receive thread (Perftest's -useReadThread)
# 1. latency p50/p99 (one-way = RTT/2, both CLOCK_MONOTONIC: ours with
#    --clock monotonic) at SIZES; 2. throughput (samples/s received; the
#    reference counts over SECONDS after a 1 s warm-up from its first sample).
# ROUNDS rounds, which tool goes first alternating; each round's figures
# and the median ratio per size and mode against the goals (latency
# ours/ref <= 1.05, throughput ours/ref >= 0.95).
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048576"] [MODES="listener waitset"]
#        [KINDS="lat tp"] bench/connext_vs_ref.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048576}
modes=${MODES:-listener waitset}
kinds=${KINDS:-lat tp}
. bench/lib/common.sh
export BENCH_SUBJECT=connext # the row name in bench/table.sh's table
ref=$tmp/connext_ref
connext_ref_build "$ref"

# One reference run: KIND (lat|tp) SIZE MODE; prints "p50 p99" in us or
# samples/s ("nan" when it failed).
ref_run() {
    local kind=$1 size=$2 mode=$3 a=ping b=pong aw ar bw br ok=1
    [ "$kind" = tp ] && { a=pub; b=sub; }
    read -r aw ar bw br <<<"$(connext_xml "$kind" "$size" "$mode")"
    "$ref" "$b" "$size" "$secs" 1 1 "$mode" "$bw" "$br" > "$tmp/ref_b.txt" 2> >(tail -n 5 > "$tmp/ref_b.err") &
    local peer=$!
    peers+=("$peer")
    "$ref" "$a" "$size" "$secs" 1 0 "$mode" "$aw" "$ar" > "$tmp/ref_a.txt" 2> >(tail -n 5 > "$tmp/ref_a.err") || ok=0
    wait_peer "$peer" 20 || ok=0
    peers=("${peers[@]/$peer/}")
    [ $ok = 1 ] || { : > "$tmp/ref_a.txt"; : > "$tmp/ref_b.txt"; sleep 0.2; cat "$tmp"/ref_?.err >&2; }
    if [ "$kind" = lat ]; then ref_lat "$tmp/ref_a.txt"; else ref_tp "$tmp/ref_b.txt"; fi
}
ours_run() { # KIND SIZE MODE
    local test=latency extra=(--clock monotonic) receive=listener
    [ "$1" = tp ] && { test=throughput; extra=(); }
    [ "$3" = waitset ] && receive=thread
    if "$bin" "$test" -b connext --receive "$receive" --size "$2" --duration "${secs}s" --warmup 1s --cpu 0,1 \
        "${extra[@]}" -q --no-save --json "$tmp/o.json" > /dev/null 2> >(tail -n 5 > "$tmp/o.err"); then
        if [ "$1" = lat ]; then ours_lat "$tmp/o.json"; else ours_tp "$tmp/o.json"; fi
    else
        sleep 0.2
        cat "$tmp/o.err" >&2
        [ "$1" = lat ] && echo "nan nan" || echo nan
    fi
}

echo "== connext binding vs connext_ref (Connector's native path, the binding's XML), ${secs} s per run, ${rounds} alternating rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for kind in $kinds; do
    case $kind in lat | tp) ;; *) echo "KINDS: $kind is not lat or tp" >&2; exit 2 ;; esac
    for mode in $modes; do
        case $mode in listener | waitset) ;; *) echo "MODES: $mode is not listener or waitset" >&2; exit 2 ;; esac
        for size in $sizes; do
            wanted "$kind" "$mode" "$size" connext_ref || continue
            alternate ref_run "$kind" "$size" "$mode" -- ours_run "$kind" "$size" "$mode"
            report "$kind" "$mode" "$size" connext_ref
        done
    done
done
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
