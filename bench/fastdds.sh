#!/usr/bin/env bash
# The fastdds binding, measured in one run with the release binary
# (publisher on core 0, subscriber on core 1, one-way = round trip / 2):
#
#  1. zero-copy (data sharing + loans, flat type) latency p50 over
#     --transport shm at 64 B, 1 MiB and 16 MiB, and the ratio
#     p50(16 MiB) / p50(64 B): a zero-copy path stays flat (goal <= 1.3);
#  2. throughput at 1 KiB, best effort and reliable, over UDP, beside the
#     raw `udp` binding (best effort, the kernel's floor for the same
#     datagrams), and the ratio fastdds / udp.
#
# Nothing here asserts a figure.
# usage: bench/fastdds.sh [SECONDS per measurement]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
target=${CARGO_TARGET_DIR:-target}
bin=${PUBSUBPERF:-$target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" latency -b fastdds -t shm --data-type flat --zero-copy -s 64,1MiB,16MiB \
    --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/zc.json" > /dev/null
"$bin" throughput -b fastdds -t udp --best-effort -s 1KiB --duration "${secs}s" --cpu 0,1 \
    -q --no-save --json "$tmp/be.json" > /dev/null
"$bin" throughput -b fastdds -t udp --reliable -s 1KiB --duration "${secs}s" --cpu 0,1 \
    -q --no-save --json "$tmp/rel.json" > /dev/null
"$bin" throughput -b udp -s 1KiB --duration "${secs}s" --cpu 0,1 \
    -q --no-save --json "$tmp/udp.json" > /dev/null

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$load" <<'PY'
import json, os, sys
d = sys.argv[1]
print(f"load average {sys.argv[2]} on {os.cpu_count()} cores (other processes slow every figure below)")
def runs(f):
    return json.load(open(f"{d}/{f}"))["runs"]
def p50(f, size):
    for r in runs(f):
        if r["size"] == size:
            return r["latency_ns"]["p50"]
    raise SystemExit(f"no run of {size} B in {f}")
def tput(f):
    t = runs(f)[0]["throughput"]
    return t["samples_per_s"], t["lost_percent"]
print("fastdds zero-copy (data sharing + loans, flat), --transport shm, latency p50 (one-way = RTT/2):")
sizes = [(64, "64 B"), (1 << 20, "1 MiB"), (16 << 20, "16 MiB")]
v = {s: p50("zc.json", s) for s, _ in sizes}
for s, name in sizes:
    print(f"   {name:>7}: {v[s] / 1000:9.3f} us")
r = v[16 << 20] / v[64]
print(f"   p50(16 MiB) / p50(64 B) = {r:.3f} (goal <= 1.3: {'met' if r <= 1.3 else 'NOT met'})")
print("throughput at 1 KiB over UDP (samples/s, loss):")
u, ul = tput("udp.json")
print(f"   udp (raw, best effort)  : {u:12.0f}  lost {ul:.2f} %")
for f, name in [("be.json", "fastdds best effort"), ("rel.json", "fastdds reliable   ")]:
    t, l = tput(f)
    print(f"   {name}     : {t:12.0f}  lost {l:.2f} %   ratio fastdds/udp = {t / u:.3f}")
PY
