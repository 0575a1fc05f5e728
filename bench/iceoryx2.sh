#!/usr/bin/env bash
# The iceoryx2 binding against iceoryx2 used directly, measured in one run
# with the release binaries, ping/publisher on core 0, pong/subscriber on
# core 1, busy polling on both sides:
#
#  1. latency p50 at 64 B: our minimal ping-pong program
#     (bench/iceoryx2-pingpong, iceoryx2 without pubsubperf) beside
#     `pubsubperf latency -b iceoryx2 --wait busy --clock monotonic -s 64`
#     (both time round trips with CLOCK_MONOTONIC, so that only the
#     binding and the harness differ), and the ratio pubsubperf / minimal
#     (goal <= 1.1). Both run ROUNDS times, alternating,
#     because a VM's vCPUs move between physical cores and the cross-core
#     latency with them (p50 flips between two levels, here about 0.4 and
#     1.0 us, from one run to the next): the figure is the median of the
#     rounds' ratios; the ratio of the best p50s is printed beside it.
#     The copy mode beside the minimal program's --copy (every byte copied
#     in and out), --zero-copy beside its default (written in place).
#     bench/iceoryx2_vs_ref.sh does this at every size, with p99,
#     throughput and blocking waits.
#  2. latency p50 at 64 B, 1 MiB and 16 MiB: iceoryx2 --zero-copy beside
#     the shm binding --zero-copy (alternating, up to 3 rounds), and the
#     ratio iceoryx2 / shm; iceoryx2 without --zero-copy (copy in, copy out)
#     for reference.
#
# Latencies are one-way = round trip / 2. Nothing here asserts a figure.
#
# usage: bench/iceoryx2.sh [SECONDS per measurement] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
rounds=${2:-5}
target=${CARGO_TARGET_DIR:-target}
bin=${PUBSUBPERF:-$target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
pp_target=$target/iceoryx2-pingpong
CARGO_TARGET_DIR=$pp_target cargo build --release -q \
    --manifest-path bench/iceoryx2-pingpong/Cargo.toml >&2
pp=$pp_target/release/iceoryx2-pingpong
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq 1 "$rounds"); do
    "$pp" --size 64 --duration "$secs" --cpu 0,1 --copy > "$tmp/min_$r.txt"
    "$bin" latency -b iceoryx2 --wait busy --clock monotonic --zero-copy false -s 64 --duration "${secs}s" --cpu 0,1 \
        -q --no-save --json "$tmp/pps_$r.json" > /dev/null
    "$pp" --size 64 --duration "$secs" --cpu 0,1 > "$tmp/minz_$r.txt"
    "$bin" latency -b iceoryx2 --wait busy --clock monotonic --zero-copy -s 64 --duration "${secs}s" --cpu 0,1 \
        -q --no-save --json "$tmp/ppsz_$r.json" > /dev/null
done
rounds2=$(( rounds < 3 ? rounds : 3 ))
for r in $(seq 1 "$rounds2"); do
    "$bin" latency -b iceoryx2 --zero-copy --wait busy -s 64,1MiB,16MiB --duration "${secs}s" \
        --cpu 0,1 -q --no-save --json "$tmp/iox_zc_$r.json" > /dev/null
    "$bin" latency -b shm --zero-copy --wait busy -s 64,1MiB,16MiB --duration "${secs}s" \
        --cpu 0,1 -q --no-save --json "$tmp/shm_zc_$r.json" > /dev/null
done
"$bin" latency -b iceoryx2 --wait busy -s 64,1MiB,16MiB --duration "${secs}s" \
    --cpu 0,1 -q --no-save --json "$tmp/iox_copy.json" > /dev/null

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$rounds" "$load" "$rounds2" <<'PY'
import json, os, statistics, sys
d, rounds, load, rounds2 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
print(f"load average {load} on {os.cpu_count()} cores (other processes slow every figure below)")
def p50(f, size):
    for r in json.load(open(f"{d}/{f}"))["runs"]:
        if r["size"] == size:
            return r["latency_ns"]["p50"]
    raise SystemExit(f"no run of {size} B in {f}")
def minimal(f):
    kv = dict(x.split("=") for x in open(f"{d}/{f}").read().split())
    return int(kv["p50_ns"])
print("1. latency p50 at 64 B, busy polling, cores 0,1 (one-way = RTT/2):")
for title, mfile, pfile in [("copy (default)", "min", "pps"), ("--zero-copy", "minz", "ppsz")]:
    m = [minimal(f"{mfile}_{r}.txt") for r in range(1, rounds + 1)]
    p = [p50(f"{pfile}_{r}.json", 64) for r in range(1, rounds + 1)]
    print(f"   pubsubperf -b iceoryx2 {title}:")
    for r in range(rounds):
        print(f"     round {r + 1}: minimal iceoryx2 ping-pong {m[r]:6d} ns, "
              f"pubsubperf {p[r]:6d} ns, ratio {p[r] / m[r]:.3f}")
    ratios = [p[r] / m[r] for r in range(rounds)]
    print(f"     median of the rounds' ratios: {statistics.median(ratios):.3f} (goal <= 1.1); "
          f"best p50s: minimal {min(m)} ns, pubsubperf {min(p)} ns, ratio {min(p) / min(m):.3f}")
print(f"2. latency p50, busy polling: iceoryx2 --zero-copy beside shm --zero-copy, "
      f"{rounds2} alternating rounds (median of p50s, median of the rounds' ratios)")
print(f"   {'size':>7} {'iceoryx2 zc':>12} {'shm zc':>10} {'ratio':>7} {'iceoryx2 copy':>14}")
for size, name in [(64, "64 B"), (1 << 20, "1 MiB"), (16 << 20, "16 MiB")]:
    i = [p50(f"iox_zc_{r}.json", size) for r in range(1, rounds2 + 1)]
    s = [p50(f"shm_zc_{r}.json", size) for r in range(1, rounds2 + 1)]
    ratio = statistics.median(a / b for a, b in zip(i, s))
    c = p50("iox_copy.json", size)
    print(f"   {name:>7} {statistics.median(i) / 1000:9.3f} us {statistics.median(s) / 1000:7.3f} us "
          f"{ratio:7.2f} {c / 1000:11.3f} us   (rounds, ns: iceoryx2 {i}, shm {s})")
PY
