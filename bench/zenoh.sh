#!/usr/bin/env bash
# The zenoh binding's transports beside our own shared-memory binding, with
# release builds, publisher/ping on core 0 and subscriber/pong on core 1:
#
#  (the comparison with zenoh's own z_ping/z_pong and z_pub_thr/z_sub_thr
#  equivalents is bench/zenoh_vs_ref.sh)
#  zenoh latency p50 at 64 B, 1 MiB, 16 MiB over tcp, udp (best effort) and
#     zenoh's shared memory with --zero-copy, beside our own shared-memory
#     binding `shm --zero-copy`, with the ratios zenoh / shm (one run each).
#     A size a transport refuses is printed with the reason.
#
# Latencies are one-way = round trip / 2. Nothing here asserts a figure.
#
# usage: bench/zenoh.sh [SECONDS per measurement]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
target=${CARGO_TARGET_DIR:-target}
bin=${PUBSUBPERF:-$target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Sizes over each transport; a refused run leaves its message in *.err.
run() { # name, args...
    local name=$1
    shift
    if ! "$bin" latency "$@" --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/$name.json" \
        > /dev/null 2> "$tmp/$name.err"; then
        rm -f "$tmp/$name.json"
    fi
}
for s in 64 1MiB 16MiB; do
    run "tcp-$s" -b zenoh -s "$s"
    run "udp-$s" -b zenoh --transport udp --best-effort -s "$s"
    run "zshm-$s" -b zenoh --transport shm --zero-copy -s "$s"
    run "shm-$s" -b shm --zero-copy -s "$s"
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$load" <<'PY'
import json, os, statistics, sys
d, load = sys.argv[1], sys.argv[2]
print(f"load average {load} on {os.cpu_count()} cores (other processes slow every figure below)")
def p50(name):
    f = f"{d}/{name}.json"
    if not os.path.exists(f):
        err = open(f"{d}/{name}.err").read().strip().splitlines()
        return None, (err[-1] if err else "failed without a message")
    return json.load(open(f))["runs"][0]["latency_ns"]["p50"], None

print("zenoh latency p50 by size beside our shm binding (shm --zero-copy), wait block, cores 0,1")
cols = [("tcp", "zenoh tcp"), ("udp", "zenoh udp b.e."), ("zshm", "zenoh shm zc"), ("shm", "shm zc")]
print(f"   {'size':>6}  " + "  ".join(f"{c[1]:>15}" for c in cols) + "   ratios to shm zc")
notes = []
for s in ["64", "1MiB", "16MiB"]:
    vals = {}
    cells = []
    for key, label in cols:
        v, err = p50(f"{key}-{s}")
        vals[key] = v
        if v is None:
            cells.append(f"{'refused*':>15}")
            notes.append(f"{label} {s}: {err}")
        else:
            cells.append(f"{v / 1000:12.3f} us")
    ratios = []
    for key, label in cols[:3]:
        if vals[key] is not None and vals["shm"]:
            ratios.append(f"{key} {vals[key] / vals['shm']:.1f}x")
    print(f"   {s:>6}  " + "  ".join(cells) + "   " + ", ".join(ratios))
for n in notes:
    print(f"   * {n}")
PY
