#!/usr/bin/env bash
# The zenoh binding against a minimal zenoh program of ours, measured in one run
# with release builds, publisher/ping on core 0 and subscriber/pong on core 1:
#
#  1. latency p50 at 64 B (tcp, wait block): bench/zenoh-pingpong (one zenoh
#     session per side, one tcp link, no harness) beside
#     `pubsubperf latency -b zenoh -s 64`, ROUNDS times (default 5),
#     alternating which of the two goes first (odd rounds the reference,
#     even rounds the binding), because single runs on a shared VM swing by
#     a third from one run to the next. Each round prints both p50s and
#     their ratio; the figure is the median of the rounds' ratios against
#     the goal (<= 1.1), with the ratio of the best p50s beside it;
#  2. zenoh latency p50 at 64 B, 1 MiB, 16 MiB over tcp, udp (best effort) and
#     zenoh's shared memory with --zero-copy, beside our own shared-memory
#     binding `shm --zero-copy`, with the ratios zenoh / shm (one run each).
#     A size a transport refuses is printed with the reason.
#
# Latencies are one-way = round trip / 2. Nothing here asserts a figure.
#
# usage: bench/zenoh.sh [SECONDS per measurement] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
rounds=${2:-${ROUNDS:-5}}
case $rounds in
    '' | *[!0-9]* | 0) echo "bench/zenoh.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;;
esac
target=${CARGO_TARGET_DIR:-target}
bin=${PUBSUBPERF:-$target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
# The reference program is its own cargo project with its own target dir.
pp_target=${ZENOH_PINGPONG_TARGET:-bench/zenoh-pingpong/target}
pp=$pp_target/release/zenoh-pingpong
[ -x "$pp" ] || CARGO_TARGET_DIR=$pp_target cargo build --release \
    --manifest-path bench/zenoh-pingpong/Cargo.toml >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. reference and binding at 64 B, ROUNDS rounds, alternating which goes first.
reference() { "$pp" 64 20000 block > "$tmp/pp_$1.txt"; }
binding() {
    "$bin" latency -b zenoh -s 64 --duration "${secs}s" --cpu 0,1 -q --no-save \
        --json "$tmp/z64_$1.json" > /dev/null
}
for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then
        reference "$r"
        binding "$r"
    else
        binding "$r"
        reference "$r"
    fi
done

# 2. sizes over each transport; a refused run leaves its message in *.err.
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
python3 - "$tmp" "$rounds" "$load" <<'PY'
import json, os, statistics, sys
d, rounds, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print(f"load average {load} on {os.cpu_count()} cores (other processes slow every figure below)")
def reference(r):
    ref, detail = None, ""
    for line in open(f"{d}/pp_{r}.txt"):
        if line.startswith("p50_ns="):
            ref = int(line.split("=")[1])
        else:
            detail = line.strip()
    if ref is None:
        raise SystemExit(f"round {r}: zenoh-pingpong printed no p50_ns line")
    return ref, detail
print("zenoh binding vs a minimal zenoh ping-pong (tcp, 64 B, wait block, cores 0,1; one-way = RTT/2)")
refs, ours = [], []
for r in range(1, rounds + 1):
    ref, detail = reference(r)
    p = json.load(open(f"{d}/z64_{r}.json"))["runs"][0]["latency_ns"]["p50"]
    refs.append(ref)
    ours.append(p)
    first = "reference" if r % 2 else "binding"
    print(f"   round {r} ({first} first): reference zenoh-pingpong p50 {ref / 1000:9.3f} us, "
          f"pubsubperf -b zenoh p50 {p / 1000:9.3f} us, ratio {p / ref:.3f}")
print(f"   (last reference run: {detail})")
ratios = [p / ref for p, ref in zip(ours, refs)]
med = statistics.median(ratios)
print(f"   median of the {rounds} rounds' ratios binding / reference = {med:.3f} "
      f"(goal <= 1.1: {'met' if med <= 1.1 else 'NOT met'}); "
      f"best p50s: reference {min(refs) / 1000:.3f} us, binding {min(ours) / 1000:.3f} us, "
      f"ratio {min(ours) / min(refs):.3f}")

def p50(name):
    f = f"{d}/{name}.json"
    if not os.path.exists(f):
        err = open(f"{d}/{name}.err").read().strip().splitlines()
        return None, (err[-1] if err else "failed without a message")
    return json.load(open(f))["runs"][0]["latency_ns"]["p50"], None

print()
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
