#!/usr/bin/env bash
# pubsubperf's fastdds binding beside bench/fastdds-ref, a minimal Fast DDS
# program of ours (Debian ships no Fast DDS latency/throughput program:
# fastdds-tools has the discovery server and `fastdds` only, and the
# Benchmark example of libfastrtps-doc is sources that count round trips
# per second, no percentiles). The script builds it with g++ and links
# Debian's libfastrtps/libfastcdr. Both sides use the same configuration
# (QOS below): by default the binding's defaults, Fast DDS's shared memory
# beside UDPv4 on 127.0.0.1 and best effort with KEEP_LAST, as Fast DDS's
# LatencyTest and ThroughputTest run; with QOS=udp-reliable UDPv4 only,
# reliable, KEEP_ALL, readers answering heartbeats at once; either way
# unicast discovery, the same type and wire form (bytes: sequence<octet>),
# the same queue sizes, a 4 MiB UDP receive buffer (see the header of
# bench/fastdds-ref/ref.cpp). Publisher/ping on core 0, subscriber/pong on
# core 1, in one run, ROUNDS (default 3) alternating rounds (odd rounds the
# reference goes first), at SIZES (default 64 B, 1 KiB, 64 KiB, 1 MiB):
#
# 1. latency p50 and p99 (one-way = RTT/2, the first second dropped by both)
#    in both of the reference's receive modes: `listener` (its default and
#    fastest: the pong answers inside on_data_available, the ping writes the
#    next ping from its own listener) and `waitset` (a thread waits on a
#    WaitSet for DATA_AVAILABLE and takes), beside `--receive listener` and
#    `--receive thread` (RECV_LISTENER=thread for a binary without the
#    listener mode; RECV_WAITSET likewise); the median of the rounds'
#    ratios ours/ref (goal <= 1.05). Our publisher waits for each echo on
#    its own thread in both modes (the reference's ping answers in its
#    listener in `listener` mode).
# 2. throughput: the reference's pub writes as fast as DataWriter::write
#    returns, its sub counts in its listener (`listener`) or after a WaitSet
#    (`waitset`); its figure is the sub's samples over the seconds kept (the
#    mean of its 1-second counts), the first and last seconds dropped
#    (before 2cb7eed: the median of the counts, which left the reference's
#    slow seconds out while ours counted). Ours: `pubsubperf throughput`
#    received samples/s over the measured window, in the same two receive
#    modes. Median of the rounds' ratios ours/ref (goal >= 0.95).
# 3. zero-copy (data sharing + loans, flat type, --transport shm) latency p50
#    at 64 B, 1 MiB, 16 MiB and p50(16 MiB)/p50(64 B) (goal <= 1.3), and the
#    raw `udp` binding's 1 KiB throughput (the kernel's floor, best effort).
#
# QOS says which configuration both sides of parts 1 and 2 run:
#   default       the binding's defaults, which are Fast DDS LatencyTest's
#                 and ThroughputTest's: shared memory beside UDPv4, best
#                 effort (ours without flags; the reference with
#                 --transport udp+shm --best-effort)
#   udp-reliable  UDPv4 only, reliable, KEEP_ALL (ours with --transport udp
#                 --reliable; the reference without flags)
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048576"] [PARTS="1 2 3"]
#        [MODES="listener waitset"] [QOS=default|udp-reliable]
#        bench/fastdds_vs_ref.sh [SECONDS]
#   (MODES: the reference modes of parts 1 and 2)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048576}
. bench/lib/common.sh
export BENCH_SUBJECT=fastdds # the row name in bench/table.sh's table
parts=${PARTS:-1 2 3}
qos=${QOS:-default}
case $qos in
    default) ours_qos=(); ref_qos=(--transport udp+shm --best-effort) ;;
    udp-reliable) ours_qos=(--transport udp --reliable); ref_qos=() ;;
    *) echo "QOS=$qos: default or udp-reliable" >&2; exit 2 ;;
esac
has_part() { [[ " $parts " == *" $1 "* ]]; }
need g++ g++
[ -e /usr/include/fastdds/dds/domain/DomainParticipant.hpp ] || { echo "Fast DDS headers missing: apt-get install libfastrtps-dev" >&2; exit 1; }
# Debian's Fast DDS ships CMake files, no pkg-config ones.
ref=$tmp/fastdds-ref
g++ -O2 -std=c++17 -o "$ref" bench/fastdds-ref/ref.cpp -lfastrtps -lfastcdr -lpthread
# Our receive mode beside each of the reference's.
recv_listener=${RECV_LISTENER:-listener}
recv_waitset=${RECV_WAITSET:-thread}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) vCPUs (shared: compare figures of one run only)"

# ping/pong at SIZE in MODE (listener|waitset); prints "p50 p99" in us.
ref_lat() {
    local size=$1 mode=$2 d=$(( 1 + RANDOM % 200 )) ws=()
    [ "$mode" = waitset ] && ws=(--waitset)
    taskset -c 1 "$ref" pong --size "$size" --domain "$d" --seconds $((secs + 40)) "${ws[@]}" "${ref_qos[@]}" > /dev/null &
    peers=($!)
    local out
    out=$(taskset -c 0 "$ref" ping --size "$size" --domain "$d" --seconds "$secs" "${ws[@]}" "${ref_qos[@]}") || out="nan nan 0"
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    echo "$out" | cut -d' ' -f1-2
}

# pub at SIZE as fast as it goes / sub in MODE; prints samples/s.
ref_tp() {
    local size=$1 mode=$2 d=$(( 1 + RANDOM % 200 )) ws=()
    [ "$mode" = waitset ] && ws=(--waitset)
    taskset -c 1 "$ref" sub --size "$size" --domain "$d" --seconds $((secs + 40)) "${ws[@]}" "${ref_qos[@]}" > "$tmp/sub.txt" &
    peers=($!)
    taskset -c 0 "$ref" pub --size "$size" --domain "$d" --seconds $((secs + 1)) "${ref_qos[@]}" > /dev/null || true
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    python3 - "$tmp/sub.txt" <<'PY'
import sys
r = [int(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("rate ")][1:-1]
m = sum(r) / len(r) if r else 0
print(m if m > 0 else float("nan"))  # nothing counted: a failed run
PY
}

ours_mode() { if [ "$1" = listener ]; then echo "$recv_listener"; else echo "$recv_waitset"; fi; }

# ours: KIND (latency|throughput) at SIZE receiving as RECV; prints "p50 p99"
# in us or samples/s, nan when the run failed.
ours_run() {
    local kind=$1 size=$2 recv=$3
    if "$bin" "$kind" --binding fastdds "${ours_qos[@]}" --size "$size" --duration "${secs}s" --cpu 0,1 --receive "$recv" -q --no-save --json "$tmp/o.json" > /dev/null; then
        if [ "$kind" = latency ]; then ours_lat "$tmp/o.json"; else ours_tp "$tmp/o.json"; fi
    else
        [ "$kind" = latency ] && echo "nan nan" || echo nan
    fi
}

if has_part 1; then
echo "== 1. latency p50/p99 (one-way = RTT/2), QOS=$qos, ${secs} s per run, ${rounds} alternating rounds"
for mode in ${MODES:-listener waitset}; do
    recv=$(ours_mode "$mode")
    echo "  reference $mode beside pubsubperf --receive $recv"
    for size in $sizes; do
        wanted lat "$mode" "$size" fastdds-ref || continue
        alternate ref_lat "$size" "$mode" -- ours_run latency "$size" "$recv"
        report lat "$mode" "$size" fastdds-ref
    done
done

fi
if has_part 2; then
echo "== 2. throughput (received samples/s), QOS=$qos, ${secs} s per run, ${rounds} alternating rounds"
for mode in ${MODES:-listener waitset}; do
    recv=$(ours_mode "$mode")
    echo "  reference sub $mode beside pubsubperf --receive $recv"
    for size in $sizes; do
        wanted tp "$mode" "$size" fastdds-ref || continue
        alternate ref_tp "$size" "$mode" -- ours_run throughput "$size" "$recv"
        report tp "$mode" "$size" fastdds-ref
    done
done

fi
if has_part 3; then
echo "== 3. zero-copy (data sharing + loans, flat) over --transport shm: latency p50, ${secs} s per size; udp floor"
"$bin" latency --binding fastdds --transport shm --data-type flat --zero-copy --size 64,1MiB,16MiB \
    --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/zc.json" > /dev/null
python3 - "$tmp/zc.json" <<'PY'
import json, sys
p = {r["size"]: r["latency_ns"]["p50"] / 1000 for r in json.load(open(sys.argv[1]))["runs"]}
for s, v in sorted(p.items()):
    print(f"  {s:>9} B  p50 {v:8.2f} us")
r = p[16 << 20] / p[64]
print(f"  ratio p50(16MiB)/p50(64B) = {r:.3f} (goal <= 1.3: {'met' if r <= 1.3 else 'NOT met'})")
PY
"$bin" throughput --binding udp --size 1KiB --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/tp_udp.json" > /dev/null
echo "  udp binding at 1 KiB (best effort, the kernel's floor): $(json "$tmp/tp_udp.json" "f\"{r[0]['throughput']['samples_per_s']:.0f}/s received, lost {r[0]['throughput']['lost_percent']:.2f} %\"")"
fi
echo "  (load average at end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) vCPUs)"
