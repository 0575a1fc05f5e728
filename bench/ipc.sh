#!/usr/bin/env bash
# The three shared-memory middleware bindings beside our own shm binding,
# measured in one run, alternating rounds, publisher on core 0 and
# subscriber on core 1, busy polling (zenoh: its shm transport, wait block,
# as zenoh has no busy mode):
#
#   latency p50 (one-way = RTT/2) at 64 B, 1 MiB, 16 MiB of
#   iceoryx --zero-copy (classic, RouDi started by the tool), iceoryx2 --zero-copy,
#   zenoh --transport shm --zero-copy, and shm --zero-copy;
#   the ratio of each to shm --zero-copy of the same round.
#
# A binding not available in this build or on this machine, or a size it
# refuses, is printed with the reason. Nothing here asserts a figure.
#
# usage: bench/ipc.sh [SECONDS per measurement] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
rounds=${2:-3}
bin=${PUBSUBPERF:-${CARGO_TARGET_DIR:-target}/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # name round args...
    local name=$1 r=$2
    shift 2
    if ! "$bin" latency "$@" -s 64,1MiB,16MiB --duration "${secs}s" --warmup 500ms --cpu 0,1 \
        -q --no-save --json "$tmp/${name}_$r.json" > /dev/null 2> "$tmp/${name}_$r.err"; then
        rm -f "$tmp/${name}_$r.json"
    fi
}
for r in $(seq 1 "$rounds"); do
    run shm "$r" -b shm --zero-copy --wait busy
    run iceoryx "$r" -b iceoryx --zero-copy --wait busy
    run iceoryx2 "$r" -b iceoryx2 --zero-copy --wait busy
    run zenoh "$r" -b zenoh --transport shm --zero-copy
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$rounds" "$load" <<'PY'
import json, os, statistics, sys
d, rounds, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print(f"load average {load} on {os.cpu_count()} cores; {rounds} alternating rounds; "
      "median of the rounds' p50s and of the rounds' ratios to shm --zero-copy")
def p50(name, r, size):
    f = f"{d}/{name}_{r}.json"
    if not os.path.exists(f):
        return None
    for run in json.load(open(f))["runs"]:
        if run["size"] == size and run.get("latency_ns"):
            return run["latency_ns"]["p50"]
    return None
names = ["shm", "iceoryx", "iceoryx2", "zenoh"]
for n in names[1:]:
    errs = {open(f"{d}/{n}_{r}.err").read().strip() for r in range(1, rounds + 1)
            if os.path.exists(f"{d}/{n}_{r}.err") and not os.path.exists(f"{d}/{n}_{r}.json")}
    for e in errs:
        print(f"  {n}: {e.splitlines()[-1] if e else 'failed'}")
print(f"  {'size':>7} " + " ".join(f"{n + ' p50':>14}" for n in names) + "   ratios to shm zc")
for size, label in [(64, "64 B"), (1 << 20, "1 MiB"), (16 << 20, "16 MiB")]:
    cells, ratios = [], []
    for n in names:
        v = [p50(n, r, size) for r in range(1, rounds + 1)]
        ok = [x for x in v if x is not None]
        cells.append(f"{statistics.median(ok) / 1000:11.3f} us" if ok else f"{'-':>14}")
        if n != "shm":
            rs = [a / b for a, b in zip(v, [p50("shm", r, size) for r in range(1, rounds + 1)])
                  if a is not None and b]
            ratios.append(f"{n} {statistics.median(rs):.2f}" if rs else f"{n} -")
    print(f"  {label:>7} " + " ".join(cells) + "   " + ", ".join(ratios))
PY
