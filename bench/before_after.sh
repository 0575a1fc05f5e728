#!/usr/bin/env bash
# Two builds of pubsubperf side by side: did a change of ours make any
# binding slower? Runs the same latency and throughput cells with OLD and
# NEW in alternating rounds (which binary goes first alternates too), same
# pinning (publisher core 0, subscriber core 1), and prints per cell the
# median over rounds of each binary's figure and the median of the rounds'
# ratios NEW/OLD:
#
#   latency at 64 B: p50 and p99 one-way (RTT/2); ratio > 1 = NEW slower;
#   throughput at 1 KiB, unpaced, each binding's default reliability:
#   samples/s received; ratio < 1 =
#   NEW slower.
#
# A cell a binary refuses or fails is printed with its error. Nothing here
# asserts a figure; the machine's noise is in the spread of the rounds.
#
# usage: [ROUNDS=3] [SECS=3] [CELLS="udp tcp ..."] bench/before_after.sh OLD_BIN NEW_BIN
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/before_after.sh OLD_BIN NEW_BIN}
new=${2:?usage: bench/before_after.sh OLD_BIN NEW_BIN}
rounds=${ROUNDS:-3}
secs=${SECS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name|binding arguments (one cell per line; the name keys the output)
all_cells='udp|-b udp
tcp|-b tcp
uds|-b uds
intra|-b intra
shm|-b shm
shm-zc-busy|-b shm --zero-copy --wait busy
iceoryx2-zc-busy|-b iceoryx2 --zero-copy --wait busy
iceoryx-zc|-b iceoryx --zero-copy
cyclonedds|-b cyclonedds
fastdds|-b fastdds
zenoh|-b zenoh'
cells=$(printf '%s\n' "$all_cells" | { if [ -n "${CELLS:-}" ]; then grep -E "^($(echo "$CELLS" | tr ' ' '|'))\|"; else cat; fi; })

one() { # which(old|new) round name test size args...
    local which=$1 r=$2 name=$3 test=$4 size=$5
    shift 5
    local bin=$old
    [ "$which" = new ] && bin=$new
    local out="$tmp/${which}_${name}_${test}_$r"
    if ! "$bin" "$test" "$@" -s "$size" --duration "${secs}s" --warmup 500ms --cpu 0,1 \
        -q --no-save --json "$out.json" > /dev/null 2> "$out.err"; then
        rm -f "$out.json"
    fi
}

for r in $(seq 1 "$rounds"); do
    order="old new"
    [ $((r % 2)) -eq 0 ] && order="new old"
    while IFS='|' read -r name args; do
        for which in $order; do
            # shellcheck disable=SC2086
            one "$which" "$r" "$name" latency 64 $args
            # shellcheck disable=SC2086
            one "$which" "$r" "$name" throughput 1KiB $args
        done
    done <<< "$cells"
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$rounds" "$load" "$old" "$new" <<'PY'
import json, os, statistics, sys
d, rounds, load, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
print(f"OLD {old}\nNEW {new}")
print(f"load average {load} on {os.cpu_count()} cores; {rounds} alternating rounds; "
      "medians over rounds; ratio = median of the rounds' NEW/OLD")
def fig(which, name, test, r, key):
    f = f"{d}/{which}_{name}_{test}_{r}.json"
    if not os.path.exists(f):
        return None
    run = json.load(open(f))["runs"][0]
    if test == "latency":
        return run["latency_ns"][key] / 1000.0
    return run["throughput"]["samples_per_s"]
def err(which, name, test):
    for r in range(1, rounds + 1):
        e = f"{d}/{which}_{name}_{test}_{r}.err"
        if not os.path.exists(f"{d}/{which}_{name}_{test}_{r}.json") and os.path.exists(e):
            lines = open(e).read().strip().splitlines()
            return lines[-1] if lines else "failed"
    return None
names = sorted({f.split("_")[1] for f in os.listdir(d)}, key=lambda n: n)
print(f"{'cell':<18} {'figure':<16} {'OLD':>12} {'NEW':>12} {'NEW/OLD':>8}")
for name in names:
    for test, key, label in [("latency", "p50", "p50 64 B us"), ("latency", "p99", "p99 64 B us"),
                             ("throughput", None, "1 KiB samples/s")]:
        e = err("old", name, test) or err("new", name, test)
        if e:
            print(f"{name:<18} {label:<16} {e}")
            continue
        o = [fig("old", name, test, r, key) for r in range(1, rounds + 1)]
        n = [fig("new", name, test, r, key) for r in range(1, rounds + 1)]
        ratios = [b / a for a, b in zip(o, n) if a and b]
        fmt = (lambda v: f"{v:12.3f}") if test == "latency" else (lambda v: f"{v:12.0f}")
        print(f"{name:<18} {label:<16} {fmt(statistics.median(o))} {fmt(statistics.median(n))} "
              f"{statistics.median(ratios):8.3f}")
PY
